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
    """Days since 1970-01-01 of the civil date (y, m, d), for years >= 1:
    integer arithmetic only (H. Hinnant's days_from_civil, with the year
    starting in March so that 29 February is the year's last day)."""
    mp = (m + 9) % 12  # March = 0 ... February = 11
    y = y - mp // 10  # January and February belong to the previous year
    return 365 * y + y // 4 - y // 100 + y // 400 + (153 * mp + 2) // 5 + d - 719469


def _anniversary_days(y: pl.Expr, m: pl.Expr, d: pl.Expr, years: pl.Expr) -> pl.Expr:
    yy = y + years
    # 29 February falls on 28 February in a common year (SPEC §4)
    feb29_common = ((m == 2) & (d == 29) & ~is_leap(yy)).cast(pl.Int32)
    return _civil_days(yy, m, d - feb29_common)


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
    (SPEC §1). Integer arithmetic only; all spans share the same four stages."""
    i32 = pl.Int32
    stage1, stage2, stage3, stage4, temps = [], [], [], [], []
    for out, (start, end) in spans.items():
        p = f"_{out}_"
        s = pl.col(start)
        temps += [p + k for k in ("y", "m", "d", "end", "ey", "emd", "Y", "last")]
        stage1 += [
            s.dt.year().cast(i32).alias(p + "y"),
            s.dt.month().cast(i32).alias(p + "m"),
            s.dt.day().cast(i32).alias(p + "d"),
            end.alias(p + "end"),
            end.dt.year().cast(i32).alias(p + "ey"),
            (end.dt.month().cast(i32) * 100 + end.dt.day().cast(i32)).alias(p + "emd"),
        ]
        smd = pl.col(p + "m") * 100 + pl.col(p + "d")
        # the anniversary of 29 February falls on 28 February in a common year
        smd_eff = smd - ((smd == 229) & ~is_leap(pl.col(p + "ey"))).cast(i32)
        stage2.append(
            (pl.col(p + "ey") - pl.col(p + "y") - (pl.col(p + "emd") < smd_eff).cast(i32))
            .alias(p + "Y")
        )
        ymd = (pl.col(p + "y"), pl.col(p + "m"), pl.col(p + "d"))
        stage3.append(_anniversary_days(*ymd, pl.col(p + "Y")).alias(p + "last"))
        # The current year of life has 366 days when it holds a 29 February:
        # that of the anniversary's own year if the anniversary falls before
        # March (1 Jan..28 Feb), else that of the next year (a 29 February
        # birthday counts as falling after February: its year of life runs
        # from 28/29 February to 28/29 February of the next year).
        m, d = pl.col(p + "m"), pl.col(p + "d")
        after_feb = ((m > 2) | ((m == 2) & (d == 29))).cast(i32)
        span = 365 + is_leap(pl.col(p + "y") + pl.col(p + "Y") + after_feb).cast(pl.Int64)
        elapsed = (pl.col(p + "end").cast(i32) - pl.col(p + "last")).cast(pl.Int64)
        lhs = pl.col(years_units).cast(pl.Int64) * span
        rhs = (pl.col(p + "Y").cast(pl.Int64) * span + elapsed) * units_per_year
        stage4.append(
            pl.when(pl.col(p + "end") < s).then(pl.col(years_units) > 0)
            .otherwise(lhs > rhs).alias(out)
        )
    return (
        lf.with_columns(stage1).with_columns(stage2).with_columns(stage3)
        .with_columns(stage4).drop(temps)
    )


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
