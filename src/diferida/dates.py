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


def _civil_days(y: pl.Expr, mp: pl.Expr, d: pl.Expr) -> pl.Expr:
    """Days since 1970-01-01 of a civil date, for years >= 1: integer
    arithmetic only (H. Hinnant's days_from_civil, with the year starting in
    March so that 29 February is the year's last day). `mp` is the month
    counted from March (March = 0 ... February = 11: (month + 9) % 12) and
    `y` the year that month belongs to (year - mp // 10: January and
    February belong to the previous one)."""
    return 365 * y + y // 4 - y // 100 + y // 400 + (153 * mp + 2) // 5 + d - 719469


def with_years_exceed(
    lf: pl.LazyFrame,
    years_units: str,
    units_per_year: int,
    spans: dict[str, tuple[str, pl.Expr]],
) -> pl.LazyFrame:
    """For each `out: (start, end)` of `spans`, add boolean column `out`: a
    number of years (column `years_units`, in 1/units_per_year) is strictly
    longer than the exact time from column `start` to `end` — completed years
    plus the elapsed days of the current year of life over that year's length
    (SPEC §1). Integer arithmetic only; all spans share the same six stages,
    and each stage reads the columns of the ones before rather than repeating
    their expressions."""
    i32 = pl.Int32
    stages: list[list[pl.Expr]] = [[], [], [], [], [], []]
    temps: list[str] = []
    for out, (start, end) in spans.items():
        p = f"_{out}_"
        s = pl.col(start)
        temps += [p + k for k in ("y", "m", "d", "smd", "mp", "after_feb", "end", "ey", "emd",
                                  "eleap", "Y", "yy", "y2", "d2", "span")]
        y, m, d, Y = pl.col(p + "y"), pl.col(p + "m"), pl.col(p + "d"), pl.col(p + "Y")
        stages[0] += [
            s.dt.year().cast(i32).alias(p + "y"),
            s.dt.month().cast(i32).alias(p + "m"),
            s.dt.day().cast(i32).alias(p + "d"),
            end.alias(p + "end"),
            end.dt.year().cast(i32).alias(p + "ey"),
            (end.dt.month().cast(i32) * 100 + end.dt.day().cast(i32)).alias(p + "emd"),
            end.dt.is_leap_year().alias(p + "eleap"),
        ]
        stages[1] += [
            (m * 100 + d).alias(p + "smd"),
            ((m + 9) % 12).alias(p + "mp"),  # the month counted from March (_civil_days)
            # The current year of life has 366 days when it holds a 29 February:
            # that of the anniversary's own year if the anniversary falls before
            # March (1 Jan..28 Feb), else that of the next year (a 29 February
            # birthday counts as falling after February: its year of life runs
            # from 28/29 February to 28/29 February of the next year).
            ((m > 2) | ((m == 2) & (d == 29))).cast(i32).alias(p + "after_feb"),
        ]
        # the anniversary of 29 February falls on 28 February in a common year
        smd = pl.col(p + "smd")
        smd_eff = smd - ((smd == 229) & ~pl.col(p + "eleap")).cast(i32)
        stages[2].append(
            (pl.col(p + "ey") - y - (pl.col(p + "emd") < smd_eff).cast(i32)).alias(p + "Y"))
        # the last anniversary (year yy), as days since 1970-01-01
        stages[3].append((y + Y).alias(p + "yy"))
        yy = pl.col(p + "yy")
        feb29_common = ((m == 2) & (d == 29) & ~is_leap(yy)).cast(i32)
        stages[4] += [
            (yy - pl.col(p + "mp") // 10).alias(p + "y2"),
            (d - feb29_common).alias(p + "d2"),
            (365 + is_leap(yy + pl.col(p + "after_feb")).cast(pl.Int64)).alias(p + "span"),
        ]
        last = _civil_days(pl.col(p + "y2"), pl.col(p + "mp"), pl.col(p + "d2"))
        span = pl.col(p + "span")
        elapsed = (pl.col(p + "end").cast(i32) - last).cast(pl.Int64)
        lhs = pl.col(years_units).cast(pl.Int64) * span
        rhs = (Y.cast(pl.Int64) * span + elapsed) * units_per_year
        stages[5].append(
            pl.when(pl.col(p + "end") < s).then(pl.col(years_units) > 0)
            .otherwise(lhs > rhs).alias(out)
        )
    for stage in stages:
        lf = lf.with_columns(stage)
    return lf.drop(temps)


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
