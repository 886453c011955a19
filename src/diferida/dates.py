"""Calendar arithmetic the article needs, as column expressions.

rules §4: a person reaches age N on the N-th anniversary of the birth date.
Decision: someone born on 29 February reaches it on 28 February in a common
year (a period ending on a day the month lacks ends on the month's last day).
The same anniversary rule measures a person's age in years (age at
separation). The entry-to-separation span of the service_exceeds_span
warning is measured as service is, in calendar months (rules §7 Decision,
`span_units` and `with_span_exceeds`).

Spans are computed in stages (intermediate columns), because a nested
expression that repeats a sub-expression is evaluated once per repetition.
"""

from __future__ import annotations

import calendar
from datetime import date
from typing import TYPE_CHECKING, TypeVar

import polars as pl

if TYPE_CHECKING:
    from .speed.plan import Stages

# a LazyFrame, or the stages of one being recorded (validation.py)
Frame = TypeVar("Frame", pl.LazyFrame, "Stages")


def is_leap(year: pl.Expr) -> pl.Expr:
    return ((year % 4 == 0) & (year % 100 != 0)) | (year % 400 == 0)


def date_reaching_age(birth: pl.Expr, age: int) -> pl.Expr:
    """The day a person born on `birth` reaches `age`. Polars' calendar offset
    clamps 29 February to 28 February in a common year, which is exactly the
    rules §4 Decision (tests/test_dates.py holds it to a reference)."""
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
    lf: Frame,
    years_units: str,
    units_per_year: int,
    spans: dict[str, tuple[str, pl.Expr]],
) -> Frame:
    """For each `out: (start, end)` of `spans`, add boolean column `out`: a
    number of years (column `years_units`, in 1/units_per_year) is strictly
    longer than the exact time from column `start` to `end` — completed years
    plus the elapsed days of the current year of life over that year's length
    (rules §1). Integer arithmetic only; all spans share the same six stages,
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
    telling a person how long until a date. Month ends clamp as in rules §4."""

    def add_months(d: date, n: int) -> date:
        y, m = divmod(d.month - 1 + n, 12)
        y, m = d.year + y, m + 1
        return date(y, m, min(d.day, calendar.monthrange(y, m)[1]))

    months = (end.year - start.year) * 12 + (end.month - start.month)
    if add_months(start, months) > end:
        months -= 1
    days = (end - add_months(start, months)).days
    return months // 12, months % 12, days


# ---- rules §7: the span of the service_exceeds_span warning ------------------

SPAN_PLACES = 4  # the span is rounded half up to the places of service (rules §1)


def days_in_month(year: int, month: int) -> int:
    return calendar.monthrange(year, month)[1]


def span_units(start: date, end: date, units_per_year: int = 10**SPAN_PLACES
               ) -> tuple[int, int, int, int]:
    """rules §7 Decision: the span from `start` to `end` (exclusive) counted as
    service is: completed years and months, plus the remaining days as a
    fraction of a month (days / the days of the month they start in), a
    month being 1/12 of a year; in 1/units_per_year years, rounded half up.
    Returns (years, months, days, units)."""
    y, m, d = years_months_days(start, end)
    months = 12 * y + m
    anchor_y, anchor_m = divmod(start.month - 1 + months, 12)
    length = days_in_month(start.year + anchor_y, anchor_m + 1)
    # units = round(units_per_year * (months + d / length) / 12), half up
    num = units_per_year * (months * length + d)
    return y, m, d, (2 * num + 12 * length) // (24 * length)


def _month_days(year: pl.Expr, month: pl.Expr) -> pl.Expr:
    return (pl.when(month == 2).then(28 + is_leap(year).cast(pl.Int32))
            .when(month.is_in([4, 6, 9, 11])).then(30).otherwise(31))


def with_span_exceeds(lf: Frame, years_units: str, units_per_year: int,
                      out: str, start: str, end: pl.Expr) -> Frame:
    """Add boolean column `out`: the years of column `years_units` (in
    1/units_per_year) are more than the span from column `start` to `end`
    (exclusive) as `span_units` counts it. Integer arithmetic in stages."""
    i32, i64 = pl.Int32, pl.Int64
    p = f"_{out}_"
    c = lambda k: pl.col(p + k)  # noqa: E731
    s = pl.col(start)
    temps = [p + k for k in ("sy", "sm", "sd", "end", "ey", "em", "ed", "ad", "py", "pm",
                             "back", "months", "len", "days")]
    lf = lf.with_columns(
        s.dt.year().cast(i32).alias(p + "sy"), s.dt.month().cast(i32).alias(p + "sm"),
        s.dt.day().cast(i32).alias(p + "sd"), end.alias(p + "end"),
        end.dt.year().cast(i32).alias(p + "ey"), end.dt.month().cast(i32).alias(p + "em"),
        end.dt.day().cast(i32).alias(p + "ed"),
    )
    # the start's day in the end's month (clamped to its last day) and the month before
    lf = lf.with_columns(
        pl.min_horizontal(c("sd"), _month_days(c("ey"), c("em"))).alias(p + "ad"),
        (c("ey") - (c("em") == 1).cast(i32)).alias(p + "py"),
        ((c("em") + 10) % 12 + 1).alias(p + "pm"),
    )
    # back: the last whole month ends in the month before the end's
    lf = lf.with_columns((c("ad") > c("ed")).alias(p + "back"))
    lf = lf.with_columns(
        ((c("ey") - c("sy")) * 12 + (c("em") - c("sm")) - c("back").cast(i32)).alias(
            p + "months"),
        pl.when(c("back")).then(_month_days(c("py"), c("pm"))).otherwise(
            _month_days(c("ey"), c("em"))).alias(p + "len"),
    )
    lf = lf.with_columns(
        pl.when(c("back"))
        .then(c("len") - pl.min_horizontal(c("sd"), c("len")) + c("ed"))
        .otherwise(c("ed") - c("ad")).alias(p + "days"))
    length = c("len").cast(i64)
    num = (c("months").cast(i64) * length + c("days").cast(i64)) * units_per_year
    span = (2 * num + 12 * length) // (24 * length)
    lf = lf.with_columns(
        pl.when(c("end") <= s).then(pl.col(years_units) > 0)
        .otherwise(pl.col(years_units).cast(i64) > span).alias(out))
    return lf.drop(temps)
