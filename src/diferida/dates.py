"""Calendar arithmetic the article needs, written once as column expressions.

SPEC §4: a person reaches age N on the N-th anniversary of the birth date.
Decision: someone born on 29 February reaches it on 28 February in a common
year (a period ending on a day the month lacks ends on the month's last day).
The same anniversary rule measures every span of years in this project
(age at separation, entry-to-separation span), so the two can never disagree.
"""

from __future__ import annotations

import polars as pl


def _is_leap(year: pl.Expr) -> pl.Expr:
    return ((year % 4 == 0) & (year % 100 != 0)) | (year % 400 == 0)


def anniversary(start: pl.Expr, years: pl.Expr | int) -> pl.Expr:
    """The date `years` years after `start`; 29 February maps to 28 February
    in a common year (SPEC §4 Decision)."""
    years_expr = years if isinstance(years, pl.Expr) else pl.lit(years, dtype=pl.Int32)
    year = start.dt.year().cast(pl.Int32) + years_expr.cast(pl.Int32)
    month = start.dt.month()
    day = start.dt.day()
    feb29_in_common_year = (month == 2) & (day == 29) & ~_is_leap(year)
    day = pl.when(feb29_in_common_year).then(pl.lit(28, dtype=pl.Int8)).otherwise(day)
    return pl.date(year, month, day)


def date_reaching_age(birth: pl.Expr, age: int) -> pl.Expr:
    """The day a person born on `birth` reaches `age` (SPEC §4)."""
    return anniversary(birth, age)


def completed_years(start: pl.Expr, end: pl.Expr) -> pl.Expr:
    """Whole years from `start` to `end` (anniversaries reached on or before `end`)."""
    diff = (end.dt.year() - start.dt.year()).cast(pl.Int32)
    return pl.when(anniversary(start, diff) > end).then(diff - 1).otherwise(diff)


def exceeds_exact_years(
    years_units: pl.Expr, units_per_year: int, start: pl.Expr, end: pl.Expr
) -> pl.Expr:
    """True when a number of years (given in 1/units_per_year) is strictly
    longer than the exact time from `start` to `end`: completed years plus the
    elapsed fraction of the current year, days over the days of that year of
    life (SPEC §1). Integer arithmetic only: no rounding anywhere."""
    y = completed_years(start, end)
    last = anniversary(start, y)
    nxt = anniversary(start, y + 1)
    span_days = (nxt - last).dt.total_days().cast(pl.Int64)
    elapsed_days = (end - last).dt.total_days().cast(pl.Int64)
    lhs = years_units.cast(pl.Int64) * span_days
    rhs = (y.cast(pl.Int64) * span_days + elapsed_days) * units_per_year
    return lhs > rhs


def years_months_days(start, end) -> tuple[int, int, int]:
    """Whole years, months and days from `start` to `end` (end >= start), for
    telling a person how long until a date. Month ends clamp as in SPEC §4."""
    import calendar
    from datetime import date

    def add_months(d: date, n: int) -> date:
        y, m = divmod(d.month - 1 + n, 12)
        y, m = d.year + y, m + 1
        return date(y, m, min(d.day, calendar.monthrange(y, m)[1]))

    months = (end.year - start.year) * 12 + (end.month - start.month)
    if add_months(start, months) > end:
        months -= 1
    days = (end - add_months(start, months)).days
    return months // 12, months % 12, days
