"""The measurement's arithmetic: runs of the projection engine on tables of
members (projection/runner.py `read_census`), combined into the total
pension liability, its sensitivity, the schedule of changes and the
employers' shares.

Every figure is a *run*: the engine's expected payments and present values
by fiscal year of a set of members under a basis (rules set, mortality,
claim rates, COLA, sex blend, discount), each fiscal year rounded half up
to the cent, then added (as `diferida project` writes its TOTAL). A run on
a union of sets adds the sets' unrounded fiscal years before rounding, so
it equals the same run made on the union as one file. Each line of the
schedule of changes is the difference of two such runs (docs/valuation.md
names them), so the lines add up to the change to the cent by
construction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import polars as pl

from ..projection import adjust, engine
from ..projection.claims import ClaimRates, expand
from ..projection.engine import Assumptions
from ..projection.mortality import MortalityTable
from ..projection.runner import member_arrays
from ..relief import Relief
from .curve import YieldCurve, durations, single_equivalent_rate


@dataclass
class Basis:
    """The assumptions of one measurement. `discount`: a rate or a curve."""

    discount: Decimal | YieldCurve
    table: MortalityTable
    claims: ClaimRates | None = None
    cola: Fraction = Fraction(0)
    blend: float = 0.5

    def rate(self, shift: Decimal = Decimal(0)) -> float | YieldCurve:
        if isinstance(self.discount, YieldCurve):
            return self.discount.shifted(float(shift)) if shift else self.discount
        return float(self.discount + shift)

    # what each assumption is, for telling whether two bases differ in it
    def mortality_key(self) -> tuple:
        t = self.table
        return (t.name, t.improvement.name if t.improvement else None, t.scale,
                (t.source or {}).get("sha256"))

    def claims_key(self) -> Any:
        return None if self.claims is None else self.claims.source.get("sha256")

    def discount_key(self) -> Any:
        d = self.discount
        return (d.spot, d.shift) if isinstance(d, YieldCurve) else d


@dataclass
class Run:
    """Unrounded expected payments and present values (cents) by fiscal year."""

    fiscal_years: np.ndarray
    payments: np.ndarray
    pv: np.ndarray  # [rates, fiscal years]
    month_days: np.ndarray | None = None
    month_payments: np.ndarray | None = None
    group_payments: np.ndarray | None = None
    group_pv: np.ndarray | None = None

    def total(self, i: int = 0) -> int:
        """The present value at rate i, in whole cents: the sum of the rounded years."""
        return rounded_sum(self.pv[i])

    @property
    def paid(self) -> int:
        return rounded_sum(self.payments)


def rounded_sum(x: np.ndarray) -> int:
    return int(np.floor(np.asarray(x, dtype=np.float64) + 0.5).astype(np.int64).sum())


def _pad(x: np.ndarray, n: int) -> np.ndarray:
    return np.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, n - x.shape[-1])])


def add(*runs: Run) -> Run:
    """The run of the union of the runs' members (the same date and rates)."""
    n = max(len(r.fiscal_years) for r in runs)
    years = next(r.fiscal_years for r in runs if len(r.fiscal_years) == n)
    payments = np.zeros(n)
    pv = np.zeros((runs[0].pv.shape[0], n))
    for r in runs:
        payments += _pad(r.payments, n)
        pv += _pad(r.pv, n)
    month_days = month_pay = None
    flows = [(r.month_days, r.month_payments) for r in runs
             if r.month_days is not None and r.month_payments is not None]
    if flows and len(flows) == len(runs):
        m = max(len(p) for _, p in flows)
        month_pay = np.zeros(m)
        for d, p in flows:
            month_pay += _pad(p, m)
            if len(p) == m:
                month_days = d
    return Run(years, payments, pv, month_days, month_pay)


def flows(r: Run, v: date) -> tuple[np.ndarray, np.ndarray]:
    """(each payment date in years from `v`, its expected payment): empty
    when the run gave no monthly payments."""
    if r.month_days is None or r.month_payments is None or not len(r.month_payments):
        return np.zeros(0), np.zeros(0)
    return (r.month_days - engine.day_number(v)) / engine.DAYS_PER_YEAR, r.month_payments


def rolled(r: Run, d: date, v: date, i: float) -> tuple[int, int]:
    """A run valued at `d` (monthly flows kept), rolled forward to `v`:
    (its expected payments up to `v`, the present value at `v` of its
    payments after `v` at the rate `i`), each fiscal year rounded."""
    fy_end = engine.fiscal_year(np.array([engine.day_number(v)]))[0]
    tau = (engine.day_number(v) - engine.day_number(d)) / engine.DAYS_PER_YEAR
    t_r, cash_r = flows(r, d)
    in_year = r.fiscal_years <= fy_end
    fy_of_month = engine.fiscal_year(r.month_days) if len(t_r) else np.zeros(0, np.int64)
    after = fy_of_month > fy_end
    later = np.bincount(fy_of_month[after] - fy_end - 1,
                        weights=cash_r[after] * (1.0 + i) ** (-(t_r[after] - tau))) \
        if after.any() else np.zeros(0)
    return rounded_sum(r.payments[in_year]), rounded_sum(later)


def run_rate(r: Run, d: date, discount: Decimal | YieldCurve | float) -> float:
    """The one rate of a run's flows valued at `d`: the rate itself, or a
    curve's single equivalent rate."""
    if isinstance(discount, YieldCurve):
        t, cash = flows(r, d)
        return single_equivalent_rate(t, cash, float((cash * discount.factor(t)).sum()))
    return float(discount)


@dataclass
class RollForward:
    """An actuarial valuation at `valued_at`, rolled forward to the
    measurement date: the liability then, interest, the expected payments
    between, the stated adjustments, the liability rolled forward (cents);
    at the rate and one point lower and higher."""

    valued_at: date
    start: list[int | None]  # [rate, lower, higher]
    paid: list[int | None]
    interest: list[int | None]
    adjustments: list[tuple[str, int]]
    end: list[int | None]
    rates: list[float | None]
    direct: int  # the same members valued at the measurement date itself
    # a census at the measurement date, when given: its liability (cents),
    # its counts of rows and its file's name
    later: int | None = None
    later_counts: dict[str, int] | None = None
    later_file: str | None = None


def roll_forward(deferred: pl.DataFrame, in_pay: pl.DataFrame, basis: Basis, d: date,
                 v: date, as_of: date, step: Decimal, adjustments: list[tuple[str, int]],
                 relief: Relief | None, direct: int) -> RollForward:
    """The liability of the members valued at `d` (a 30 June before the
    measurement date `v`), rolled forward to `v` at each rate: interest at
    the rate (a curve's single equivalent rate), less the expected payments
    between, plus the adjustments stated (added to the liability at each
    rate alike). `direct`: the liability of the same members at `v`."""
    lower_ok = isinstance(basis.discount, YieldCurve) and min(basis.discount.spot) >= step \
        or not isinstance(basis.discount, YieldCurve) and basis.discount >= step
    shifts = (Decimal(0), -step, step)
    out: dict[str, list] = {k: [] for k in ("start", "paid", "interest", "end", "rates")}
    extra = sum(c for _, c in adjustments)
    for k, shift in enumerate(shifts):
        if k == 1 and not lower_ok:
            for key in out:
                out[key].append(None)
            continue
        b = replace(basis, discount=basis.discount.shifted(float(shift))
                    if isinstance(basis.discount, YieldCurve) and shift else
                    basis.discount + shift if not isinstance(basis.discount, YieldCurve)
                    else basis.discount)
        r = add(run(deferred, b, d, as_of, [b.rate()], monthly=True, relief=relief),
                run(in_pay, b, d, as_of, [b.rate()], monthly=True, relief=relief))
        start = r.total(0)
        i = run_rate(r, d, b.discount)
        paid, later = rolled(r, d, v, i)
        out["start"].append(start)
        out["paid"].append(paid)
        out["interest"].append(later + paid - start)
        out["end"].append(later + extra)
        out["rates"].append(i)
    return RollForward(d, out["start"], out["paid"], out["interest"], list(adjustments),
                       out["end"], out["rates"], direct)


def empty_run(n_rates: int) -> Run:
    return Run(np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros((n_rates, 0)),
               np.zeros(0, dtype=np.int64), np.zeros(0))


def run(members: pl.DataFrame, basis: Basis, v: date, as_of: date,
        rates: Sequence[float | YieldCurve], *, monthly: bool = False,
        groups: tuple[np.ndarray, int] | None = None, relief: Relief | None = None) -> Run:
    """The engine on `members` (a frame of read_census) valued at `v`;
    `as_of`: the date the census's amounts in pay are stated for."""
    if members.height == 0:
        return empty_run(len(rates))
    arrays = member_arrays(members, v, as_of, basis.cola)
    if groups is not None:
        arrays.group, arrays.groups = groups
    if basis.claims is not None:
        if groups is not None:
            raise ValueError("claim rates and groups: expand the groups too")
        arrays = expand(arrays, members["eligibility_date"].cast(pl.Int32).to_numpy()
                        .astype(np.int64), basis.claims, engine.day_number(v))
    a = Assumptions(v, list(rates), basis.table, basis.cola, None, basis.blend)
    p = adjust.project(arrays, a, relief, monthly=monthly)
    return Run(p.fiscal_years, p.payments, p.pv, p.month_days, p.month_payments,
               p.group_payments, p.group_pv)


# ---------------------------------------------------------------- liability


@dataclass
class Liability:
    """The total pension liability at the measurement date, in cents."""

    total: int
    deferred: int
    in_pay: int
    lower: int | None  # at the rate one point lower (None: below 0, not a run)
    higher: int | None
    next_year_payments: int
    equivalent_rate: float  # the single equivalent rate (the rate itself when flat)
    macaulay: float
    modified: float
    fiscal_years: np.ndarray = field(repr=False)
    payments: np.ndarray = field(repr=False)  # rounded cents per fiscal year
    pv: np.ndarray = field(repr=False)  # rounded cents per fiscal year
    flows: Run | None = field(default=None, repr=False)


def apportion(parts: np.ndarray, total: int) -> np.ndarray:
    """Whole cents for each part, adding up to `total`: each part's exact
    share floored, the cents left given one each to the largest remainders
    (ties: the first part), the largest-remainder rule."""
    parts = np.asarray(parts, dtype=np.float64)
    s = parts.sum()
    if total == 0 or s <= 0:
        out = np.zeros(len(parts), dtype=np.int64)
        if total:
            raise ValueError("a total to share among parts worth nothing")
        return out
    quota = parts / s * total
    base = np.floor(quota).astype(np.int64)
    left = int(total - base.sum())
    order = np.lexsort((np.arange(len(parts)), -(quota - base)))
    base[order[:left]] += 1
    return base


def measure(deferred: pl.DataFrame, in_pay: pl.DataFrame, basis: Basis, v: date,
            as_of: date, step: Decimal, relief: Relief | None = None) -> Liability:
    """The liability of the members (deferred, in pay) at `v`, with the
    rates one `step` lower and higher, the next fiscal year's expected
    payments, the single equivalent rate and the duration."""
    lower_ok = isinstance(basis.discount, YieldCurve) and min(basis.discount.spot) >= step \
        or not isinstance(basis.discount, YieldCurve) and basis.discount >= step
    rates = [basis.rate(), basis.rate(-step) if lower_ok else basis.rate(), basis.rate(step)]
    d = run(deferred, basis, v, as_of, rates, monthly=True, relief=relief)
    p = run(in_pay, basis, v, as_of, rates, monthly=True, relief=relief)
    both = add(d, p)
    total = both.total(0)
    years = np.floor(both.pv[0] + 0.5).astype(np.int64)
    split = apportion(np.array([d.pv[0].sum(), p.pv[0].sum()]), total)
    t, cash = flows(both, v)
    if isinstance(basis.discount, YieldCurve):
        pv_exact = float((cash * basis.discount.factor(t)).sum())
        ser = single_equivalent_rate(t, cash, pv_exact)
    else:
        ser = float(basis.discount)
    mac, mod = durations(t, cash, ser)
    pay = np.floor(both.payments + 0.5).astype(np.int64)
    return Liability(total, int(split[0]), int(split[1]),
                     both.total(1) if lower_ok else None, both.total(2),
                     int(pay[0]) if len(pay) else 0, ser, mac, mod, both.fiscal_years, pay,
                     years, both)


# ------------------------------------------------------------ the employers


def employers(members: pl.DataFrame, basis: Basis, v: date, as_of: date,
              liability: Liability, column: str = "employer", relief: Relief | None = None
              ) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """(codes, payments [employer, fiscal year] in cents, liability share in
    cents, proportion in millionths): each fiscal year's expected payments
    and the total liability shared among the employers by the largest
    remainder, so that every column adds up to the totals to the cent."""
    codes = sorted(members[column].unique().to_list())
    if not codes:
        n = len(liability.fiscal_years)
        return [], np.zeros((0, n), dtype=np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    index = {c: i for i, c in enumerate(codes)}
    code = members[column].replace_strict(index, return_dtype=pl.Int64).to_numpy()
    if basis.claims is None:
        r = run(members, basis, v, as_of, [basis.rate()], groups=(code, len(codes)),
                relief=relief)
        assert r.group_payments is not None and r.group_pv is not None
        g_pay, g_pv = r.group_payments, r.group_pv[:, 0, :]
    else:  # claim entries are a member's several starts: one run per employer
        g_pay = np.zeros((len(codes), len(liability.fiscal_years)))
        g_pv = np.zeros_like(g_pay)
        for i in range(len(codes)):
            r = run(members.filter(pl.Series(code == i)), basis, v, as_of, [basis.rate()],
                    relief=relief)
            g_pay[i, :len(r.payments)] = r.payments[:g_pay.shape[1]]
            g_pv[i, :len(r.payments)] = r.pv[0][:g_pay.shape[1]]
    n = len(liability.fiscal_years)
    g_pay, g_pv = _pad(g_pay, n)[:, :n], _pad(g_pv, n)[:, :n]
    pay = np.zeros((len(codes), n), dtype=np.int64)
    for k in range(n):
        pay[:, k] = apportion(g_pay[:, k], int(liability.payments[k]))
    share = apportion(g_pv.sum(axis=1), liability.total)
    proportion = apportion(g_pv.sum(axis=1), 1_000_000)
    return codes, pay, share, proportion


def proportions(members: pl.DataFrame, basis: Basis, v: date, as_of: date,
                column: str = "employer", relief: Relief | None = None) -> dict[str, int]:
    """Each employer's proportion (millionths) of the members' liability at
    `v`: its share of the present value, by the largest remainder, as
    `employers` gives it for the measurement itself."""
    codes = sorted(members[column].unique().to_list())
    if not codes:
        return {}
    index = {c: i for i, c in enumerate(codes)}
    code = members[column].replace_strict(index, return_dtype=pl.Int64).to_numpy()
    if basis.claims is None:
        r = run(members, basis, v, as_of, [basis.rate()], groups=(code, len(codes)),
                relief=relief)
        assert r.group_pv is not None
        pv = r.group_pv[:, 0, :].sum(axis=1)
    else:
        pv = np.array([run(members.filter(pl.Series(code == i)), basis, v, as_of,
                           [basis.rate()], relief=relief).pv[0].sum()
                       for i in range(len(codes))])
    return dict(zip(codes, apportion(pv, 1_000_000).tolist(), strict=True))


# ------------------------------------------------------ the schedule of changes


@dataclass
class Line:
    key: str  # the line's name (words in i18n/<lang>/liability.toml [changes])
    cents: int
    runs: tuple[str, str] | None = None  # (from, to): the runs whose difference it is
    how: str | None = None  # its explanation's key when not how_<key>


@dataclass
class Census:
    """A census as read: the members projected (deferred, in pay) and the
    members not projected (deceased, refunded, not entitled)."""

    members: pl.DataFrame
    gone: pl.DataFrame
    as_of: date
    relief: Relief | None = None  # the rules' post-start adjustments
    actual_paid: int | None = None  # cents: the year's payments, where the census gives them
    rows_rejected: int = 0
    # the ids of the rejected rows that no row kept carries (a row rejected
    # without a readable id cannot be matched, and is not here)
    rejected_ids: frozenset[str] = frozenset()


def categories(prior: Census, current: Census) -> dict[str, set]:
    """Each member by what happened between the two censuses (by
    participant_id): joined (only in the current file), left (only in the
    prior), died (deceased now, not before), refunded (likewise), started
    (in pay now, not before), changed (every other member in both, whether
    or not a value changed): the ids of each. A member of one census whose
    row of the other was rejected neither left nor joined: it is
    rejected_current (in the prior census, its row of this one rejected)
    or rejected_prior (in this census, its row of the prior one rejected)."""
    from ..projection.status import DECEASED, IN_PAY, REFUNDED

    def status(c: Census) -> dict[str, int]:
        out = dict(zip(c.gone["participant_id"].to_list(), c.gone["_bstatus"].to_list(),
                       strict=True))
        m = c.members
        out.update(zip(m["participant_id"].to_list(),
                       np.where(m["_in_pay"].to_numpy(), IN_PAY, 0).tolist(), strict=True))
        return out

    ps, cs = status(prior), status(current)
    cat: dict[str, str] = {}
    for pid in ps.keys() | cs.keys():
        if pid not in ps:
            cat[pid] = "rejected_prior" if pid in prior.rejected_ids else "joined"
        elif pid not in cs:
            cat[pid] = "rejected_current" if pid in current.rejected_ids else "left"
        elif cs[pid] == DECEASED and ps[pid] != DECEASED:
            cat[pid] = "died"
        elif cs[pid] == REFUNDED and ps[pid] != REFUNDED:
            cat[pid] = "refunded"
        elif cs[pid] == IN_PAY and ps[pid] != IN_PAY:
            cat[pid] = "started"
        else:
            cat[pid] = "changed"
    by: dict[str, set] = {k: set() for k in (*EXPERIENCE, *REJECTED)}
    for pid, k in cat.items():
        by[k].add(pid)
    return by


EXPERIENCE = ("left", "died", "refunded", "started", "changed", "joined")
# members matched to a rejected row of the other census: never experience
REJECTED = ("rejected_current", "rejected_prior")


def _paid_of(c: Census, ids: set) -> int:
    """The census's actual payments of the year (cents) of the members `ids`."""
    return int(sum(_subset(f, ids)["_paid_cents"].cast(pl.Int64).sum() or 0
                   for f in (c.members, c.gone) if "_paid_cents" in f.columns))


def _subset(members: pl.DataFrame, ids: set) -> pl.DataFrame:
    return members.filter(pl.col("participant_id").is_in(list(ids)))


def schedule(prior: Census, prior_basis: Basis, prior_date: date,
             current_prior_rules: Census, current: Census, basis: Basis, v: date,
             final: Liability, rules_changed: bool) -> tuple[list[Line], dict[str, Any]]:
    """The schedule of changes from the liability at `prior_date` (prior
    census, prior basis, prior rules) to `final` (the liability at `v`).
    Returns the lines (they add up to final.total - the prior total) and
    what the lines rest on (rates, counts by category)."""
    # last year's liability, and the roll-forward expected at v
    a_run = run(prior.members, prior_basis, prior_date, prior.as_of, [prior_basis.rate()],
                monthly=True, relief=prior.relief)
    start = a_run.total(0)
    i = _prior_rate(a_run, prior_basis, prior_date)
    tau = (engine.day_number(v) - engine.day_number(prior_date)) / engine.DAYS_PER_YEAR
    paid, expected = rolled(a_run, prior_date, v, i)
    lines = [Line("start", start), Line("interest", expected + paid - start)]
    # members matched to a rejected row of the other census (REJECTED): what
    # is attributed to them is on lines of their own, never experience
    ids = categories(prior, current)
    out_now, out_then = ids["rejected_current"], ids["rejected_prior"]
    paid_out = expected_out = 0
    if out_now:
        paid_out, expected_out = rolled(run(
            _subset(prior.members, out_now), prior_basis, prior_date, prior.as_of,
            [prior_basis.rate()], monthly=True, relief=prior.relief), prior_date, v, i)
    actual = current.actual_paid
    actual_then = _paid_of(current, out_then) if actual is not None else 0
    if actual is None:
        lines.append(Line("payments", -paid))
    else:  # the actual payments, and their difference from the expected as experience
        lines += [Line("payments_actual", -actual),
                  Line("experience_payments", (actual - actual_then) - (paid - paid_out))]
    paid_key = "_paid" if actual is not None else ""
    show_now = current.rows_rejected > 0 or bool(out_now)
    show_then = prior.rows_rejected > 0 or bool(out_then)
    if show_now:  # their part of E (and of the expected payments) taken out
        lines.append(Line("rejected_current",
                          -expected_out - (paid_out if actual is not None else 0),
                          ("E", "E′"), f"how_rejected_current{paid_key}"))
    before, lines_from, new = _experience(lines, ids, prior, current_prior_rules, prior_basis,
                                          v, expected - expected_out, show_now)
    if show_then:  # their rows of this census added (and their actual payments)
        value = add(new["started"], new["changed"], new["joined"], new["rejected_prior"]) \
            .total(0)
        lines.append(Line("rejected_prior", value - before + actual_then,
                          (lines_from, "T7"), f"how_rejected_prior{paid_key}"))
        before, lines_from = value, "T7"
    lines += _terms_and_assumptions(current, basis, prior_basis, v, rules_changed, final,
                                    before, lines_from, show_then)
    counts = {k: len(v) for k, v in ids.items()}
    # the line's members: those whose row changed in what the valuation uses
    # (the others, in both files alike, add 0 to it)
    counts["changed"] = changed_rows(
        _subset(prior.members, ids["changed"]), prior.as_of,
        _subset(current_prior_rules.members, ids["changed"]), current_prior_rules.as_of,
        v, prior_basis)
    info = {"interest_rate": i, "expected_roll_forward": expected, "years": tau,
            "expected_payments": paid, "actual_payments": current.actual_paid,
            "counts": counts, "matched": len(ids["changed"])}
    return lines, info


def _experience(lines: list[Line], ids: dict[str, Any], prior: Census,
                current_prior_rules: Census, prior_basis: Basis, v: date, before: int,
                show_now: bool) -> tuple[int, str, dict[str, Run]]:
    """The experience lines: the prior basis and rules at v, member set by
    member set (T0 … T6), each the change from the step before. Returns the
    last step's total and name, and this census's runs by member set."""
    rate = [prior_basis.rate()]

    def at_v(members: pl.DataFrame, c: Census) -> Run:
        return run(members, prior_basis, v, c.as_of, rate, relief=c.relief)

    old = {k: at_v(_subset(prior.members, ids[k]), prior) for k in EXPERIENCE[:-1]}
    new = {k: at_v(_subset(current_prior_rules.members, ids[k]), current_prior_rules)
           for k in ("started", "changed", "joined", "rejected_prior")}
    steps = [("expected", add(*old.values()))]
    steps.append(("left", add(old["died"], old["refunded"], old["started"], old["changed"])))
    steps.append(("died", add(old["refunded"], old["started"], old["changed"])))
    steps.append(("refunded", add(old["started"], old["changed"])))
    steps.append(("started", add(new["started"], old["changed"])))
    steps.append(("changed", add(new["started"], new["changed"])))
    steps.append(("joined", add(new["started"], new["changed"], new["joined"])))
    lines_from = "E′" if show_now else "E"
    for n, (k, r) in enumerate(steps):
        value = r.total(0)
        how = "how_experience_expected_rejected" if k == "expected" and show_now else None
        lines.append(Line(f"experience_{k}", value - before, (lines_from, f"T{n}"), how))
        before, lines_from = value, f"T{n}"
    return before, lines_from, new


def _terms_and_assumptions(current: Census, basis: Basis, prior_basis: Basis, v: date,
                           rules_changed: bool, final: Liability, before: int,
                           lines_from: str, show_then: bool) -> list[Line]:
    """Benefit terms and assumptions, in this order, on the current census
    (Y1 … Y4), then what is left (other) and the ending liability."""
    members = current.members
    deferred = members.filter(~pl.col("_in_pay"))
    paying = members.filter(pl.col("_in_pay"))

    def whole(b: Basis, rates: Sequence[Any]) -> Run:
        return add(run(deferred, b, v, current.as_of, rates, relief=current.relief),
                   run(paying, b, v, current.as_of, rates, relief=current.relief))

    b1 = prior_basis
    y = whole(b1, [b1.rate(), basis.rate()]) if rules_changed or \
        basis.discount_key() != b1.discount_key() else None
    terms = y.total(0) if y is not None and rules_changed else before
    lines = [Line("benefit_terms", terms - before, (lines_from, "Y1"),
                  "how_benefit_terms_rejected" if show_then else None)]
    disc = y.total(1) if y is not None and basis.discount_key() != b1.discount_key() \
        else terms
    lines.append(Line("discount", disc - terms, ("Y1", "Y2")))
    b2 = replace(b1, discount=basis.discount)
    b3 = replace(b2, table=basis.table)
    mort = whole(b3, [b3.rate()]).total(0) if basis.mortality_key() != b2.mortality_key() \
        else disc
    lines.append(Line("mortality", mort - disc, ("Y2", "Y3")))
    b4 = replace(b3, claims=basis.claims)
    claims = whole(b4, [b4.rate()]).total(0) if basis.claims_key() != b3.claims_key() \
        else mort
    lines.append(Line("claims", claims - mort, ("Y3", "Y4")))
    lines.append(Line("other", final.total - claims, ("Y4", "L")))
    lines.append(Line("end", final.total))
    return lines


def _prior_rate(a_run: Run, prior_basis: Basis, prior_date: date) -> float:
    """Last year's rate: the rate, or the curve's single equivalent rate."""
    if not isinstance(prior_basis.discount, YieldCurve):
        return float(prior_basis.discount)
    t, cash = flows(a_run, prior_date)
    return single_equivalent_rate(t, cash, float((cash * prior_basis.discount.factor(t))
                                                 .sum()))


def changed_rows(old: pl.DataFrame, old_as_of: date, new: pl.DataFrame, new_as_of: date,
                 v: date, basis: Basis) -> int:
    """How many members of both censuses have a row that differs in what the
    valuation at `v` reads: projected in one census only (a correction of
    status), or a birth date, start, amount (each census's amount in pay
    brought to its first payment by the COLA, so that the year's raise is
    no change), sex, table or eligibility date of its own."""
    def inputs(f: pl.DataFrame, as_of: date) -> pl.DataFrame:
        a = member_arrays(f, v, as_of, basis.cola)
        return pl.DataFrame({"participant_id": f["participant_id"], "birth": a.birth,
                             "start": a.start, "cents": a.monthly_cents, "sex": a.sex,
                             "kind": a.kind, "in_pay": f["_in_pay"],
                             "eligible": f["eligibility_date"].cast(pl.Int32)})

    a, b = inputs(old, old_as_of), inputs(new, new_as_of)
    both = a.join(b, on="participant_id", suffix="_new")
    cols = [c for c in a.columns if c != "participant_id"]
    differ = both.select(pl.any_horizontal(
        pl.col(c).ne_missing(pl.col(f"{c}_new")) for c in cols).sum()).item()
    return int(differ or 0) + (a.height - both.height) + (b.height - both.height)
