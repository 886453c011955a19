"""Calendar arithmetic the article needs, as column expressions.

SPEC §4: a person reaches age N on the N-th anniversary of the birth date.
Decision: someone born on 29 February reaches it on 28 February in a common
year (a period ending on a day the month lacks ends on the month's last day).
The same anniversary rule measures every span of years in this project
(age at separation, entry-to-separation span), so the two never disagree.

Spans are computed in stages (intermediate columns), because a nested
expression that repeats a sub-expression is evaluated once per repetition.
"""

from __future__ import annotations

import calendar
from datetime import date

import polars as pl


def is_leap(year: pl.Expr) -> pl.Expr:
    return ((year % 4 == 0) & (year % 100 != 0)) | (year % 400 == 0)


def date_reaching_age(birth: pl.Expr, age: int) -> pl.Expr:
    """The day a person born on `birth` reaches `age`. Polars' calendar offset
    clamps 29 February to 28 February in a common year, which is exactly the
    SPEC §4 Decision (tests/test_dates.py holds it to a reference)."""
    return birth.dt.offset_by(f"{age}y")


def _civil_days(y: pl.Expr, m: pl.Expr, d: pl.Expr) -> pl.Expr:
    """Days since 1970-01-01 of the civil date (y, m, d): integer arithmetic
    only (H. Hinnant's days_from_civil), far faster than building dates."""
    y = y - (m <= 2).cast(pl.Int32)
    era = y // 400
    yoe = y - era * 400
    mp = pl.when(m > 2).then(m - 3).otherwise(m + 9)
    doy = (153 * mp + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _anniversary_days(y: pl.Expr, m: pl.Expr, d: pl.Expr, years: pl.Expr) -> pl.Expr:
    yy = y + years
    dd = pl.when((m == 2) & (d == 29) & ~is_leap(yy)).then(28).otherwise(d)
    return _civil_days(yy, m, dd)


def with_years_exceed(
    lf: pl.LazyFrame, years_units: str, units_per_year: int, start: str, end: pl.Expr, out: str
) -> pl.LazyFrame:
    """Add boolean column `out`: a number of years (column `years_units`, in
    1/units_per_year) is strictly longer than the exact time from `start` to
    `end` — completed years plus the elapsed days of the current year of life
    over that year's length (SPEC §1). Integer arithmetic only."""
    i32 = pl.Int32
    s = pl.col(start)
    p = f"_{out}_"
    lf = lf.with_columns(
        s.dt.year().cast(i32).alias(p + "y"),
        s.dt.month().cast(i32).alias(p + "m"),
        s.dt.day().cast(i32).alias(p + "d"),
        end.alias(p + "end"),
    ).with_columns(
        pl.col(p + "end").dt.year().cast(i32).alias(p + "ey"),
        (pl.col(p + "end").dt.month().cast(i32) * 100 + pl.col(p + "end").dt.day().cast(i32))
        .alias(p + "emd"),
        (pl.col(p + "m") * 100 + pl.col(p + "d")).alias(p + "smd"),
    )
    # anniversary of 29 Feb falls on 28 Feb in a common end year
    smd_eff = (
        pl.when((pl.col(p + "smd") == 229) & ~is_leap(pl.col(p + "ey")))
        .then(228)
        .otherwise(pl.col(p + "smd"))
    )
    lf = lf.with_columns(
        (pl.col(p + "ey") - pl.col(p + "y") - (pl.col(p + "emd") < smd_eff).cast(i32))
        .alias(p + "Y")
    )
    ymd = (pl.col(p + "y"), pl.col(p + "m"), pl.col(p + "d"))
    lf = lf.with_columns(
        _anniversary_days(*ymd, pl.col(p + "Y")).alias(p + "last"),
        _anniversary_days(*ymd, pl.col(p + "Y") + 1).alias(p + "next"),
    )
    span = (pl.col(p + "next") - pl.col(p + "last")).cast(pl.Int64)
    elapsed = (pl.col(p + "end").cast(i32) - pl.col(p + "last")).cast(pl.Int64)
    lhs = pl.col(years_units).cast(pl.Int64) * span
    rhs = (pl.col(p + "Y").cast(pl.Int64) * span + elapsed) * units_per_year
    exceeded = pl.when(pl.col(p + "end") < s).then(pl.col(years_units) > 0).otherwise(lhs > rhs)
    lf = lf.with_columns(exceeded.alias(out))
    return lf.drop([p + k for k in ("y", "m", "d", "end", "ey", "emd", "smd", "Y", "last",
                                    "next")])


def years_months_days(start: date, end: date) -> tuple[int, int, int]:
    """Whole years, months and days from `start` to `end` (end >= start), for
    telling a person how long until a date. Month ends clamp as in SPEC §4."""

    def add_months(d: date, n: int) -> date:
        y, m = divmod(d.month - 1 + n, 12)
        y, m = d.year + y, m + 1
        return date(y, m, min(d.day, calendar.monthrange(y, m)[1]))

    months = (end.year - start.year) * 12 + (end.month - start.month)
    if add_months(start, months) > end:
        months -= 1
    days = (end - add_months(start, months)).days
    return months // 12, months % 12, days
