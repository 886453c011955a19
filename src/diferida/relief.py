"""A relief: what a rules set does to a pension after it starts (rules
files' `[post_start]`, rules_schema.PostStart). Article 19 itself has none:
the determination's amount is the amount at the start, and a relief never
changes a determination; the projection, `compare` and the valuation apply
it to the payments (projection/adjust.py). docs/relief.md."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

KIND_ORDER = {"cola": 0, "raise": 1, "floor": 2, "one_time": 3}  # on one date, in this order


@dataclass(frozen=True)
class Adjustment:
    kind: str  # raise | floor | one_time | cola
    date: date  # raise, floor, cola: a 1 July; one_time: the 1st of a month
    citation: str
    who: str = "all"  # in_pay (on the date) | later (starting after it) | all
    rate: Decimal | None = None  # raise: the share added; cola: every year's rate
    cap_monthly: Decimal | None = None  # raise: at most this many dollars a month more
    minimum_monthly: Decimal | None = None  # floor
    amount: Decimal | None = None  # one_time: dollars
    from_monthly: Decimal | None = None  # band: the amount just before, at least this
    below_monthly: Decimal | None = None  # ... and below this
    series: tuple[tuple[int, Decimal], ...] = ()  # cola: (fiscal year, rate) from date's year
    after_series: Decimal | None = None  # cola: the rate after the series (None: no COLA)
    description: str = ""

    def cola_rate(self, fiscal_year: int) -> Decimal | None:
        """A COLA's rate for the 1 July that begins `fiscal_year` (None: none)."""
        if fiscal_year < self.date.year + 1:
            return None
        if self.rate is not None:
            return self.rate
        for year, rate in self.series:
            if year == fiscal_year:
                return rate
        return self.after_series


@dataclass(frozen=True)
class Relief:
    citation: str
    adjustments: tuple[Adjustment, ...]
    description: str = ""
    # the monthly amounts its cost is reported by ([post_start] bands_monthly)
    bands_monthly: tuple[Decimal, ...] = ()

    def report_bands(self) -> tuple[Decimal, ...]:
        """The monthly amounts the relief is reported by: those its file
        names, else the bounds of the amounts its adjustments reach
        (from_monthly, below_monthly), else none (one band)."""
        if self.bands_monthly:
            return self.bands_monthly
        bounds = {x for a in self.adjustments for x in (a.from_monthly, a.below_monthly)
                  if x is not None and x > 0}
        return tuple(sorted(bounds))

    def ordered(self) -> list[Adjustment]:
        """By date, and on one date the COLA, the raises (in the file's order),
        the floor, then a one-time payment."""
        return sorted(self.adjustments, key=lambda a: (a.date, KIND_ORDER[a.kind]))
