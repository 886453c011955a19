"""What GASB Statement No. 73 asks of a plan without assets in a trust, built
on the measurement (measure.py) and the measurements kept before it
(history.py): the schedule of changes in its layout, the pension expense,
the deferred outflows and inflows of resources by source with their
recognition, the employers' proportions and their change, and the ten
years of required supplementary information. docs/valuation.md "GASB 73".

Every amount is whole cents (int): a recognition is shared over its years
by cumulative rounding (half up), so that its years add up to it exactly.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from importlib import resources
from math import ceil
from typing import Any

import numpy as np

from .measure import Line, apportion

_NUMBERS = tomllib.loads(
    (resources.files("diferida.projection") / "assumptions.toml").read_text("utf-8"))
RSI_YEARS = int(_NUMBERS["gasb73_rsi_years"])
RECOGNITION_SHOWN = int(_NUMBERS["gasb73_recognition_shown"])
MAX_SERVICE_LIFE = Decimal(_NUMBERS["gasb73_max_service_life"])

# the schedule of changes in GASB 73's layout, in its order
LAYOUT = ("service_cost", "interest", "benefit_terms", "experience", "assumptions",
          "benefit_payments", "other", "net_change", "start", "end")
CHANGES = LAYOUT[:7]  # the lines that add up to the net change
# the deferred sources of the collective amounts (GASB 73: differences
# between expected and actual experience; changes of assumptions or other
# inputs); changes in an employer's proportion are each employer's own
SOURCES = ("experience", "assumptions")
PROPORTION = "proportion"


def layout_key(key: str) -> str:
    """The GASB line a line of the project's schedule (measure.schedule) goes to."""
    if key.startswith("experience_"):
        return "experience"
    return {"start": "start", "end": "end", "interest": "interest",
            "payments": "benefit_payments", "payments_actual": "benefit_payments",
            "benefit_terms": "benefit_terms", "discount": "assumptions",
            "mortality": "assumptions", "claims": "assumptions", "other": "assumptions",
            "rejected_current": "other", "rejected_prior": "other"}[key]


def layout(lines: list[Line]) -> dict[str, int]:
    """The schedule of changes in GASB's layout, from the project's lines:
    each GASB line the sum of the project's lines under it (layout_key);
    service cost 0 (no member of the census is active)."""
    out = dict.fromkeys(LAYOUT, 0)
    for ln in lines:
        out[layout_key(ln.key)] += ln.cents
    out["net_change"] = sum(out[k] for k in CHANGES)
    assert out["start"] + out["net_change"] == out["end"], out
    return out


def _half_up(x: Decimal) -> int:
    return int(x.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def installments(cents: int, period: Decimal) -> list[int]:
    """What is recognised of `cents` in each year from the year it arose,
    over `period` years (a closed period: a whole part of a year's amount
    each full year, the fraction in the last): cumulative amounts rounded
    half up, so that the years add up to `cents`. A period of at most one
    year recognises it all at once."""
    if period <= 1:
        return [cents]
    n = ceil(period)
    cum = [_half_up(Decimal(cents) * min(Decimal(k), period) / period) for k in range(n + 1)]
    return [cum[k + 1] - cum[k] for k in range(n)]


@dataclass(frozen=True)
class Base:
    """An amount to be recognised in pension expense over a closed period:
    the year's experience, its changes of assumptions, or a change in an
    employer's proportion, from the measurement of fiscal year `year`."""

    year: int  # the fiscal year whose measurement it arose in (its 30 June's year)
    source: str  # SOURCES or PROPORTION
    cents: int
    period: Decimal
    employer: str | None = None

    def in_year(self, fy: int) -> int:
        """What is recognised of it in fiscal year `fy`."""
        k = fy - self.year
        parts = installments(self.cents, self.period)
        return parts[k] if 0 <= k < len(parts) else 0

    def left_after(self, fy: int) -> int:
        """What remains to recognise after fiscal year `fy` (deferred)."""
        k = fy - self.year
        if k < 0:
            return self.cents
        return sum(installments(self.cents, self.period)[k + 1:])

    def as_dict(self) -> dict[str, Any]:
        return {"fiscal_year": self.year, "source": self.source, "amount": dollars(self.cents),
                "period": str(self.period), "employer": self.employer}

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Base:
        return Base(int(d["fiscal_year"]), str(d["source"]), cents(d["amount"]),
                    Decimal(str(d["period"])), d.get("employer"))


def dollars(c: int | None) -> str | None:
    return None if c is None else str(Decimal(int(c)).scaleb(-2).quantize(Decimal("0.01")))


def cents(d: str | None) -> int:
    return int(Decimal(str(d)).scaleb(2))


@dataclass
class Deferred:
    """Deferred outflows (positive amounts left) and inflows (negative, shown
    as positive amounts) of one source at the measurement date."""

    outflows: int = 0
    inflows: int = 0


@dataclass
class Report:
    """The GASB 73 figures of the measurement of fiscal year `fy`."""

    measurement_date: date
    period: Decimal  # the recognition period of this year's amounts
    period_given: bool  # False: the census's own (inactive members only: 0)
    layout: dict[str, int] | None  # None: no schedule of changes (no prior measurement)
    bases: list[Base]  # every base up to this year (the history's and this year's)
    expense: dict[str, int] | None
    deferred: dict[str, Deferred] = field(default_factory=dict)
    future: list[tuple[str, int]] = field(default_factory=list)  # (fiscal year or "later", net)
    employers: list[dict[str, Any]] | None = None
    history: list[dict[str, Any]] = field(default_factory=list)  # the records before this one
    # where the employers' prior proportions come from: "history",
    # "prior_census" or None (not available)
    proportions_from: str | None = None

    @property
    def fy(self) -> int:
        return self.measurement_date.year


def build(v: date, lines: list[Line] | None, period: Decimal, period_given: bool,
          earlier: list[dict[str, Any]], total: int,
          employers: tuple[list[str], Any, Any, Any] | None,
          prior_census_proportions: dict[str, int] | None = None) -> Report:
    """The report of the measurement at `v` (a 30 June): `lines` the
    project's schedule of changes (None without a prior measurement),
    `earlier` the history's records before it (history.read), `total` the
    total pension liability, `employers` measure.employers's result. The
    employers' prior proportions are the prior measurement's kept in the
    history or, when it is not there, `prior_census_proportions` (the prior
    census measured on its own basis, as last year's report measured it)."""
    fy = v.year
    bases = [Base.from_dict(b) for r in earlier for b in r.get("bases", [])]
    lay = layout(lines) if lines is not None else None
    if lay is not None:
        bases += [Base(fy, s, lay[s], period) for s in SOURCES if lay[s]]
    emp_rows: list[dict[str, Any]] | None = None
    source = None
    if employers is not None:
        codes, _, share, prop = employers
        prior = _prior_proportions(earlier, v)
        source = "history" if prior is not None else None
        if prior is None and prior_census_proportions is not None:
            prior, source = prior_census_proportions, "prior_census"
        emp_rows = []
        for code, s, q in zip(codes, share, prop, strict=True):
            q0 = None if prior is None else prior.get(code, 0)
            emp_rows.append({"employer": code, "liability": int(s), "proportion": int(q),
                             "prior_proportion": q0})
        if prior is not None:  # employers gone since: proportion 0 now
            for code in sorted(set(prior) - set(codes)):
                emp_rows.append({"employer": code, "liability": 0, "proportion": 0,
                                 "prior_proportion": prior[code]})
            for row in emp_rows:
                change = row["proportion"] - row["prior_proportion"]
                amount = _half_up(Decimal(change) * total / 1_000_000)
                if amount:
                    bases.append(Base(fy, PROPORTION, amount, period, row["employer"]))
    collective = [b for b in bases if b.source in SOURCES]
    expense = None
    if lay is not None:
        expense = {"service_cost": lay["service_cost"], "interest": lay["interest"],
                   "benefit_terms": lay["benefit_terms"], "other": lay["other"]}
        for s in SOURCES:
            expense[f"recognised_{s}"] = sum(b.in_year(fy) for b in collective
                                             if b.source == s)
        expense["total"] = sum(expense.values())
    deferred = {s: Deferred() for s in SOURCES}
    for b in collective:
        left = b.left_after(fy)
        if left > 0:
            deferred[b.source].outflows += left
        elif left < 0:
            deferred[b.source].inflows -= left
    future = [(str(fy + k), sum(b.in_year(fy + k) for b in collective))
              for k in range(1, RECOGNITION_SHOWN + 1)]
    future.append(("later", sum(b.left_after(fy + RECOGNITION_SHOWN) for b in collective)))
    report = Report(v, period, period_given, lay, bases, expense, deferred, future,
                    emp_rows, earlier, proportions_from=source if employers is not None
                    else None)
    if emp_rows is not None:
        _employer_amounts(report)
    return report


def _prior_proportions(earlier: list[dict[str, Any]], v: date) -> dict[str, int] | None:
    """The employers' proportions (millionths) of the last measurement kept
    before `v`, one year earlier; None when there is none."""
    last = [r for r in earlier if r["measurement_date"] == date(v.year - 1, 6, 30).isoformat()]
    if not last or last[-1].get("proportions") is None:
        return None
    return {k: int(q) for k, q in last[-1]["proportions"].items()}


def _employer_amounts(report: Report) -> None:
    """Each employer's part of the collective expense and deferred amounts
    (shared by its proportion, to the cent, by the largest remainder) and
    its own change-in-proportion amounts: their recognition this year and
    what remains deferred."""
    rows = report.employers or []
    fy = report.fy
    weights = [r["proportion"] for r in rows]

    def share(amount: int) -> list[int]:
        if not any(weights) or amount == 0:
            return [0] * len(rows)
        w = np.array(weights, dtype=np.float64)
        if amount < 0:
            return [-int(x) for x in apportion(w, -amount)]
        return [int(x) for x in apportion(w, amount)]

    exp: list[int | None] = list(share(report.expense["total"])) \
        if report.expense is not None else [None] * len(rows)
    out_ = share(sum(d.outflows for d in report.deferred.values()))
    in_ = share(sum(d.inflows for d in report.deferred.values()))
    for i, row in enumerate(rows):
        own = [b for b in report.bases if b.source == PROPORTION and b.employer == row["employer"]]
        recognised = sum(b.in_year(fy) for b in own)
        left = [b.left_after(fy) for b in own]
        row["change_amount"] = sum(b.cents for b in own if b.year == fy)
        row["collective_expense"] = exp[i]
        row["proportion_recognised"] = recognised
        e = exp[i]
        row["expense"] = None if e is None else e + recognised
        row["deferred_outflows"] = out_[i] + sum(x for x in left if x > 0)
        row["deferred_inflows"] = in_[i] - sum(x for x in left if x < 0)


def remaining_service_life(text: str | None) -> tuple[Decimal, bool]:
    """The recognition period: `--remaining-service-life` (years, 0 up to
    MAX_SERVICE_LIFE) or, not given, the census's own: its members are all
    inactive (deferred or in pay), whose remaining service is 0, so 0 —
    immediate recognition. Raises ValueError naming what is wrong."""
    if text is None:
        return Decimal(0), False
    try:
        d = Decimal(text.strip())
    except ArithmeticError:
        raise ValueError(text) from None
    if not d.is_finite() or d < 0 or d > MAX_SERVICE_LIFE:
        raise ValueError(text)
    # one spelling of one period (2.50 → 2.5, 1e1 → 10, -0 → 0): the history
    # compares its bases' periods as written
    return d.normalize() + 0, True
