"""The projection's arithmetic, on numpy arrays of members.

Payments are monthly, on the 1st. Month index m counts payment dates from
the first 1st on or after the valuation date V (m = 0). A member's payments
run from month `s` (the first 1st on or after the later of V and the start
date) to month `e` (the month in which age MAX_AGE is reached, or the last
June of the horizon).

Expected value of a member's payments: for each month m in [s, e],
amount(FY of m) x p(m) x v(m), where

* p(m) = S_b(a_w)/S_b(a_V) x S_a(a_m)/S_a(a_w) is the probability of being
  alive at the payment date given alive at V, with S_b and S_a the
  before-start and after-start survival functions of the member's cohort
  and sex, a_V, a_w, a_m the exact ages at V, at the switch (the later of V
  and the start) and at the payment date. The factor S_b(a_w)/(S_b(a_V)
  S_a(a_w)) is the member's own constant C; S_a(a_m) depends only on the
  birth date, sex and table kind (the "key"), so it is computed once per key
  and month, with its cumulative sums, and each member's sum over a fiscal
  year is a difference of two cumulative sums;
* S(x + f) = prod_{k<x} (1 - q_k) x (1 - f q_x): uniform distribution of
  deaths within each year of age; exact age = completed years + days since
  the last birthday / days in that year of age (rules §4: a 29 February
  birthday falls on 28 February in a common year);
* v(m) = (1 + i)^(-t), t = days from V to the payment date / 365.25;
* amount: the monthly amount, raised on each 1 July strictly after the first
  payment: new = previous x (1 + cola), rounded half up to the cent, in
  exact integer arithmetic (1 July starts a fiscal year, so the amount is
  constant within a fiscal year).

Money is handled in cents as float64 products of exact integers; with no
mortality, no discount and no COLA every term is an integer (or a half, for
an even sex blend) and every sum is exact below 2**53 cents.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from fractions import Fraction
from typing import Any

import numpy as np

from ..errors import DiferidaError
from .mortality import AGES, KINDS, MAX_AGE, SEXES, MortalityTable

DAYS_PER_YEAR = 365.25  # the discount's year: t = days / 365.25
FEMALE, MALE, UNKNOWN = 0, 1, -1
KEY_BLOCK_CELLS = 4_000_000  # keys x months held at once (x 2 (rates + 2) float64 arrays)
RECORD_BLOCK_CELLS = 2_000_000  # member records x fiscal years held at once
_EPOCH = date(1970, 1, 1)


def day_number(d: date) -> int:
    return (d - _EPOCH).days


def day_date(n: int) -> date:
    return date.fromordinal(_EPOCH.toordinal() + int(n))


# ------------------------------------------------------------ calendar arrays


def _leap(y: np.ndarray) -> np.ndarray:
    return ((y % 4 == 0) & (y % 100 != 0)) | (y % 400 == 0)


def days_from_civil(y, m, d) -> np.ndarray:
    """Days since 1970-01-01 (H. Hinnant's algorithm, integer arithmetic)."""
    y = np.asarray(y, dtype=np.int64)
    m = np.asarray(m, dtype=np.int64)
    d = np.asarray(d, dtype=np.int64)
    mp = (m + 9) % 12
    y = y - mp // 10
    return 365 * y + y // 4 - y // 100 + y // 400 + (153 * mp + 2) // 5 + d - 719469


def civil_from_days(z) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    z = np.asarray(z, dtype=np.int64) + 719468
    era = np.floor_divide(z, 146097)
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = np.where(mp < 10, mp + 3, mp - 9)
    return y + (m <= 2), m, d


def anniversary(by, bm, bd, n) -> np.ndarray:
    """Day number of the n-th birthday (29 February: 28 February in a common year)."""
    yy = np.asarray(by, dtype=np.int64) + n
    feb29_common = (bm == 2) & (bd == 29) & ~_leap(yy)
    return days_from_civil(yy, bm, bd - feb29_common)


def exact_age(by, bm, bd, day) -> tuple[np.ndarray, np.ndarray]:
    """(completed years, fraction) of the age on `day` (a day number; arrays
    broadcast): fraction = days since the last birthday / days to the next."""
    y, m, d = civil_from_days(day)
    bmd = bm * 100 + bd - ((bm == 2) & (bd == 29) & ~_leap(y))
    x = y - by - ((m * 100 + d) < bmd)
    last = anniversary(by, bm, bd, x)
    nxt = anniversary(by, bm, bd, x + 1)
    return x, (np.asarray(day) - last) / (nxt - last)


def grid_age(by, bm, bd, days: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """exact_age of each person (1-D by, bm, bd) on each day of `days` (1-D,
    sorted): [persons, days]. The birthdays of each calendar year are
    computed once per person and year, then looked up (the same values as
    exact_age, far fewer operations on a large grid)."""
    y, _, _ = civil_from_days(days)
    y0, y1 = int(y.min()) - 1, int(y.max()) + 1
    years = np.arange(y0, y1 + 1)
    bdays = anniversary(by[:, None], bm[:, None], bd[:, None], years[None, :] - by[:, None])
    col = y - y0
    this = bdays[:, col]
    passed = days[None, :] >= this
    last = np.where(passed, this, bdays[:, col - 1])
    nxt = np.where(passed, bdays[:, col + 1], this)
    x = y[None, :] - by[:, None] - (~passed)
    return x, (days[None, :] - last) / (nxt - last)


def month_number(day) -> np.ndarray:
    """year*12 + month-1 of the first 1st on or after `day`."""
    y, m, d = civil_from_days(day)
    return y * 12 + (m - 1) + (d > 1)


def month_day(month_no) -> np.ndarray:
    month_no = np.asarray(month_no, dtype=np.int64)
    return days_from_civil(month_no // 12, month_no % 12 + 1, 1)


def fiscal_year(day) -> np.ndarray:
    """The Government of Puerto Rico's fiscal year (1 July - 30 June), named
    by the calendar year in which it ends."""
    y, m, _ = civil_from_days(day)
    return y + (m >= 7)


def first_fiscal_year(v: date) -> int:
    """The projection's first fiscal year: the one that holds the valuation
    date, except that a valuation on 30 June (a fiscal year's end) projects
    from the next fiscal year, which begins the next day: the fiscal year of
    the day after V."""
    return int(fiscal_year(np.array([day_number(v) + 1]))[0])


def discount_rows(rates: Sequence[float | Any], t: np.ndarray) -> list[np.ndarray]:
    """The discount factors at the times `t` (years) for each rate or curve."""
    return [r.factor(t) if hasattr(r, "factor") else (1.0 + float(r)) ** (-t) for r in rates]


# ------------------------------------------------------------------- inputs


@dataclass
class Members:
    """One entry per member to project: day numbers of birth and of the start
    (already chosen by the start rule), monthly amount in cents, sex (0 F,
    1 M, -1 unknown) and table kind (0 general, 1 safety)."""

    birth: np.ndarray
    start: np.ndarray
    monthly_cents: np.ndarray
    sex: np.ndarray
    kind: np.ndarray
    # optional: the probability of each entry (a member whose start is
    # uncertain is several entries, one per possible start: claims.py), the
    # member each entry belongs to (per-member results are by member), and
    # whether the entry is already in pay (never counted as a start)
    weight: np.ndarray | None = None
    owner: np.ndarray | None = None
    in_pay: np.ndarray | None = None
    owners: int | None = None  # the number of members (default: one per entry)
    # optional: a group code 0..groups-1 per entry (an employer): the totals
    # of each fiscal year are also given per group
    group: np.ndarray | None = None
    groups: int = 0
    # optional: the payment dates of each entry bounded to [pay_from, pay_to]
    # (day numbers): a one-time payment is an entry paid on one date
    pay_from: np.ndarray | None = None
    pay_to: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.birth)

    @property
    def n_owners(self) -> int:
        return self.owners if self.owners is not None else len(self.birth)


@dataclass
class Assumptions:
    as_of: date
    # a rate, or a curve (an object with factor(t) -> discount factors, t in
    # years of 365.25 days from the valuation date): liability/curve.py
    rates: Sequence[float | Any]
    table: MortalityTable
    cola: Fraction = Fraction(0)
    horizon: int | None = None  # fiscal years from V's (None: to age MAX_AGE)
    female_weight: float = 0.5  # share of F where the sex is unknown
    # a relief's adjustments after the start (adjust.py: `paths(fy0, start)`
    # gives the object the amounts are read from), None for none
    adjust: Any = None


@dataclass
class Projection:
    """Per fiscal year (`fiscal_years[k]`): `starts` (members whose first
    payment falls in it), `in_pay` (expected members paid on its last payment
    date, 1 June), `payments` (expected, cents) and `pv[i]` (present value at
    V of those payments at rate i, cents). Per member: `first_payment` (day
    number, -1 when no payment falls within the horizon), `member_payments`,
    `member_pv` (cents)."""

    fiscal_years: np.ndarray
    starts: np.ndarray
    in_pay: np.ndarray
    payments: np.ndarray
    pv: np.ndarray
    first_payment: np.ndarray
    member_payments: np.ndarray
    member_pv: np.ndarray
    # with project(monthly=True): the expected payments (cents) of each
    # payment date from the first 1st on or after V (`month_days`, day numbers)
    month_days: np.ndarray | None = None
    month_payments: np.ndarray | None = None
    # with Members.group: [groups, fiscal years] and [groups, rates, fiscal years]
    group_payments: np.ndarray | None = None
    group_pv: np.ndarray | None = None


# --------------------------------------------------------------- amounts


# the largest monthly amount the engine holds to the cent: a fiscal year of
# it (12 payments) is still an exact float64 sum (below 2**53 cents)
MONTHS_A_YEAR = 12
MAX_AMOUNT_CENTS = 2**53 // MONTHS_A_YEAR


class AmountTooLarge(DiferidaError, ValueError):
    """A monthly amount that grows (by the COLA assumption, or a relief's
    adjustments) beyond MAX_AMOUNT_CENTS: the run is refused, never wrapped."""


def held(amounts: Any) -> np.ndarray:
    """Exact amounts (int64, or Python integers where they may outgrow it)
    as the engine's int64 cents, or AmountTooLarge when one is beyond
    MAX_AMOUNT_CENTS."""
    if not len(amounts):
        return np.asarray(amounts, dtype=np.int64)
    top = int(amounts.max()) if getattr(amounts, "dtype", None) == np.int64 else \
        max(int(v) for v in np.ravel(amounts))
    if top > MAX_AMOUNT_CENTS:
        raise AmountTooLarge(f"monthly amounts grow beyond "
                             f"${MAX_AMOUNT_CENTS // 100:,}.{MAX_AMOUNT_CENTS % 100:02d}, more "
                             "than the projection holds to the cent")
    return np.asarray(amounts, dtype=np.int64)


def cola_amounts(monthly: np.ndarray, steps: int, cola: Fraction) -> np.ndarray:
    """[n, steps]: the monthly amount in cents in each fiscal year from the
    first payment's, raised each year by cola and rounded half up."""
    n = len(monthly)
    out = np.empty((n, max(steps, 1)), dtype=np.int64)
    out[:, 0] = monthly
    held(monthly)
    if steps <= 1:
        return out
    if cola == 0:
        out[:, 1:] = monthly[:, None]
        return out
    num, den = cola.numerator, cola.denominator
    mult = den + num
    top = int(monthly.max(initial=0))
    # the largest amount reached, bounded by the growth over `steps` years
    bound = top * (float(mult) / den) ** steps + 1
    if bound * 2 * mult < 2**62:
        for j in range(1, steps):
            out[:, j] = (2 * out[:, j - 1] * mult + den) // (2 * den)
        held(out[:, -1])  # a COLA never lowers an amount: the last year's are the largest
        return out
    obj = out.astype(object)  # amounts too large for int64 arithmetic: Python integers
    for j in range(1, steps):
        obj[:, j] = (2 * obj[:, j - 1] * mult + den) // (2 * den)
    held(obj[:, -1])  # the last year's are the largest
    return obj.astype(np.int64)


def _amounts(monthly: np.ndarray, rec: np.ndarray, steps: int, cola: Any) -> np.ndarray:
    """The amounts of the entries `rec` by fiscal year from their first:
    `cola` is the COLA (a Fraction), or a relief's paths (adjust.Paths),
    which carry the COLA too."""
    if isinstance(cola, Fraction):
        return cola_amounts(monthly[rec], steps, cola)
    return cola.path(monthly, rec, steps)


# ------------------------------------------------------------------ the run


def project(members: Members, a: Assumptions, per_member: bool = True,
            progress=None, monthly: bool = False) -> Projection:
    """The projection of `members` under `a`; `progress(done, total)` after
    each block. `monthly`: the expected payments of each payment date too
    (not with per_member or groups)."""
    n = len(members)
    rates = list(a.rates)
    n_rates = len(rates)
    groups = members.group is not None
    if monthly and (per_member or groups or members.pay_from is not None):
        raise ValueError("monthly payments are given for the whole population only")
    v_day = day_number(a.as_of)
    m0 = int(month_number(np.array([v_day]))[0])  # month number of payment 0
    fy_v = first_fiscal_year(a.as_of)

    birth = members.birth.astype(np.int64)
    by, bm, bd = civil_from_days(birth)
    switch = np.maximum(members.start.astype(np.int64), v_day)
    s = month_number(switch) - m0
    day120 = anniversary(by, bm, bd, MAX_AGE)
    y120, mo120, _ = civil_from_days(day120)
    e = y120 * 12 + (mo120 - 1) - m0  # the month in which age 120 is reached
    if a.horizon is not None:
        last_june = (fy_v + a.horizon - 1) * 12 + 5 - m0
        e = np.minimum(e, last_june)
    windowed = members.pay_from is not None
    if windowed:
        assert members.pay_from is not None and members.pay_to is not None
        s = np.maximum(s, month_number(members.pay_from) - m0)
        e = np.minimum(e, month_number(members.pay_to) - m0)
    paid = s <= e
    n_months = int(e[paid].max()) + 1 if paid.any() else 0

    month_days = month_day(m0 + np.arange(n_months + 1))
    fy_of_month = fiscal_year(month_days)
    n_fy = int(fy_of_month[n_months - 1] - fy_v + 1) if n_months else 0
    fys = fy_v + np.arange(n_fy)
    # first and last payment month of each fiscal year (the first one may hold fewer)
    fy_first = np.maximum(fys * 12 - 6 - m0, 0)  # 1 July of the year before
    fy_last = fys * 12 + 5 - m0  # 1 June
    ks = np.where(paid, fy_of_month[np.clip(s, 0, n_months)] - fy_v, 0)
    ke = np.where(paid, fy_of_month[np.clip(e, 0, n_months)] - fy_v, -1)

    entry_weight = (members.weight.astype(np.float64) if members.weight is not None
                    else np.ones(n))
    owner = members.owner.astype(np.int64) if members.owner is not None else np.arange(n)
    n_owner = members.n_owners
    new = paid & (entry_weight > 0)
    if members.in_pay is not None:
        new &= ~members.in_pay.astype(bool)
    counted = np.bincount(ks[new], weights=entry_weight[new], minlength=n_fy)[:n_fy]
    whole = np.round(counted)
    # expected starts (claim rates) to the hundredth of a member
    starts = whole.astype(np.int64) if np.array_equal(whole, counted) else np.round(counted, 2)
    in_pay = np.zeros(n_fy)
    payments = np.zeros(n_fy)
    pv = np.zeros((n_rates, n_fy))
    member_pay = np.zeros(n_owner)
    member_pv = np.zeros((n_rates, n_owner))
    first_entry = np.where(paid & (entry_weight > 0), month_day(m0 + np.maximum(s, 0)),
                           np.iinfo(np.int64).max)
    first_payment = np.full(n_owner, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first_payment, owner, first_entry)
    first_payment[first_payment == np.iinfo(np.int64).max] = -1
    n_groups = members.groups if groups else 0
    group_pay = np.zeros((n_groups, n_fy)) if groups else None
    group_pv = np.zeros((n_groups, n_rates, n_fy)) if groups else None
    month_pay = np.zeros(n_months) if monthly else None

    if n_months == 0:
        return Projection(fys, starts, in_pay, payments, pv, first_payment, member_pay,
                          member_pv, month_days[:0] if monthly else None, month_pay,
                          group_pay, group_pv)

    t = (month_days[:n_months] - v_day) / DAYS_PER_YEAR
    discount = np.vstack([np.ones(n_months), *discount_rows(rates, t)])
    cola: Any = a.cola if a.adjust is None else a.adjust.paths(
        fy_v + ks, members.start.astype(np.int64), a.cola)

    # member records: a member of unknown sex is two records, F and M, weighted
    idx = np.flatnonzero(paid)
    if a.table.none:
        rec_member = idx
        rec_weight = entry_weight[idx]
        rec_sex = np.zeros(len(idx), dtype=np.int64)
    else:
        sex = members.sex[idx].astype(np.int64)
        unknown = sex == UNKNOWN
        rec_member = np.concatenate([idx[~unknown], idx[unknown], idx[unknown]])
        rec_sex = np.concatenate([sex[~unknown], np.full(unknown.sum(), FEMALE),
                                  np.full(unknown.sum(), MALE)])
        w = entry_weight[idx]
        rec_weight = np.concatenate([w[~unknown], w[unknown] * a.female_weight,
                                     w[unknown] * (1.0 - a.female_weight)])
        keep = rec_weight > 0
        rec_member, rec_sex, rec_weight = rec_member[keep], rec_sex[keep], rec_weight[keep]

    # the survival of a key (birth month, sex, table kind) is computed once;
    # a member born on day d of the month differs from the one born on the
    # 1st by (d - 1) x B (see _survival); a 29 February birth is a key of its own
    if a.table.none:  # everyone survives: a key is a last payment month
        key_values, keys = np.unique(e[rec_member], return_inverse=True)
        offset = np.zeros(len(rec_member))
    else:
        rec_kind = members.kind[rec_member].astype(np.int64)
        rm, rd = bm[rec_member], bd[rec_member]
        feb29 = (rm == 2) & (rd == 29)
        anchor = np.where(feb29, birth[rec_member], birth[rec_member] - (rd - 1))
        offset = np.where(feb29, 0, rd - 1).astype(np.float64)
        composite = anchor * 4 + rec_sex * 2 + rec_kind
        key_values, keys = np.unique(composite, return_inverse=True)
    order = np.argsort(keys, kind="stable")
    rec_member, rec_sex, rec_weight, keys, offset = (
        rec_member[order], rec_sex[order], rec_weight[order], keys[order], offset[order])

    per_key = max(1, KEY_BLOCK_CELLS // (n_months + 1))
    bounds = np.searchsorted(keys, np.arange(0, len(key_values) + per_key, per_key))
    for b in range(len(bounds) - 1):
        r0, r1 = int(bounds[b]), int(bounds[b + 1])
        if r0 == r1:
            continue
        k0 = b * per_key
        block_keys = key_values[k0:min(k0 + per_key, len(key_values))]
        local = keys[r0:r1] - k0
        members_here = rec_member[r0:r1]
        if a.table.none:
            surv = np.ones((len(block_keys), n_months))
            slope = np.zeros((len(block_keys), n_months))
            factor = np.ones(r1 - r0)
        else:
            surv, slope, factor = _survival(a.table, block_keys, members_here, local, by, bm,
                                            bd, switch, v_day, month_days[:n_months])
        cum = np.zeros((2, n_rates + 1, len(block_keys), n_months + 1))
        for j, series in enumerate((surv, slope)):
            np.cumsum(series[None, :, :] * discount[:, None, :], axis=2, out=cum[j, :, :, 1:])
        weight = factor * rec_weight[r0:r1]
        if groups or windowed:  # a key's entries end in different months
            _accumulate(cum, surv, slope, local, offset[r0:r1], members_here, weight, s, e,
                        ks, ke, fy_first, fy_last, members.monthly_cents, cola, in_pay,
                        payments, pv, member_pay, member_pv, per_member, owner,
                        (members.group, group_pay, group_pv) if groups else None)
        else:
            _accumulate_by_key(cum, surv, slope, local, offset[r0:r1], members_here, weight,
                               s, e, ks, ke, fy_first, fy_last, members.monthly_cents, cola,
                               in_pay, payments, pv, month_pay,
                               (member_pay, member_pv, owner) if per_member else None)
        if progress is not None:
            progress(r1, len(keys))
    return Projection(fys, starts, in_pay, payments, pv, first_payment, member_pay, member_pv,
                      month_days[:n_months] if monthly else None, month_pay, group_pay,
                      group_pv)


def anchor_age(kby: np.ndarray, kbm: np.ndarray, days: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For a person born on the 1st of month kbm of year kby, at each payment
    date (a 1st): (x, f, D) with the birthday of that day not yet counted
    (f in (0, 1]: at the birthday x - 1 and f = 1, the same survival under
    UDD), D the days from the last birthday before the day to the next. A
    person born on day d >= 2 of the same month has, on a 1st, the same x
    and D and f - (d - 1) / D (for any month but 29 February, D does not
    depend on the day: each year's 29 February falls on the same side of
    the birthdays of one month)."""
    y, m, _ = civil_from_days(days)
    x = y[None, :] - kby[:, None] - (m[None, :] <= kbm[:, None])
    last = days_from_civil(kby[:, None] + x, kbm[:, None], 1)
    nxt = days_from_civil(kby[:, None] + x + 1, kbm[:, None], 1)
    span = nxt - last
    return x, (days[None, :] - last) / span, span


def _survival(table: MortalityTable, block_keys: np.ndarray, rec_member: np.ndarray,
              local: np.ndarray, by, bm, bd, switch: np.ndarray, v_day: int,
              month_days: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A, B, C): the after-start survival of a member of each key (born on
    the key's day, or on day 1 + k of its month) at each payment date is
    A + k B [keys, months]: S(x + f) = S(x) (1 - f q_x), linear in f, and f
    linear in the birth day (anchor_age); C is each record's constant."""
    k_birth = block_keys // 4
    k_sex = (block_keys // 2) % 2
    k_kind = block_keys % 2
    kby, kbm, kbd = civil_from_days(k_birth)
    q = {}
    for phase in ("before", "after"):
        arr = np.empty((len(block_keys), AGES))
        for si, sex in enumerate(SEXES):
            for ki, kind in enumerate(KINDS):
                sel = (k_sex == si) & (k_kind == ki)
                if sel.any():
                    arr[sel] = table.cohort_rates(kind, sex, phase, kby[sel])
        q[phase] = arr
    surv_int = {ph: np.concatenate([np.ones((len(block_keys), 1)),
                                    np.cumprod(1.0 - q[ph], axis=1)], axis=1) for ph in q}

    def at(phase: str, rows: np.ndarray, x: np.ndarray, f: np.ndarray) -> np.ndarray:
        x = np.clip(x, 0, MAX_AGE)
        return surv_int[phase][rows, x] * (1.0 - f * q[phase][rows, x])

    # the after-start survival of each key at each payment date
    feb29 = (kbm == 2) & (kbd == 29)
    x, f, span = anchor_age(kby, kbm, month_days)
    if feb29.any():  # a key of its own, computed at its own exact ages
        x[feb29], f[feb29] = grid_age(kby[feb29], kbm[feb29], kbd[feb29], month_days)
    rows = np.broadcast_to(np.arange(len(block_keys))[:, None], x.shape)
    over = x > MAX_AGE
    x = np.where(over, MAX_AGE, x)
    f = np.where(over, 0.0, f)
    x = np.maximum(x, 0)
    surv = at("after", rows, x, f)
    slope = np.where(over | feb29[:, None], 0.0,
                     surv_int["after"][rows, x] * q["after"][rows, x] / span)
    # each record's constant: S_b(a_w) / S_b(a_V) / S_a(a_w)
    rb, rm, rd = by[rec_member], bm[rec_member], bd[rec_member]
    xv, fv = exact_age(rb, rm, rd, np.full(len(rec_member), v_day))
    xw, fw = exact_age(rb, rm, rd, switch[rec_member])
    sb_v, sb_w, sa_w = at("before", local, xv, fv), at("before", local, xw, fw), \
        at("after", local, xw, fw)
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where((sb_v > 0) & (sa_w > 0), sb_w / sb_v / sa_w, 0.0)
    return surv, slope, factor


def _accumulate_by_key(cum, surv, slope, local, offset, rec_member, weight, s, e, ks, ke,
                       fy_first, fy_last, monthly, cola, in_pay, payments, pv,
                       month_pay=None, members=None) -> None:
    """The fiscal-year totals alone (no member's own values): the same sums
    as `_accumulate`, arranged so that the work per member does not grow
    with the number of rates. A key's last payment month `e` is the same
    for all its members (the month of age MAX_AGE, or the horizon's last
    June), so for every fiscal year after a member's first the months paid
    are the key's: the year's sums of (A, B) x discount are computed once
    per key (G), and the members' amounts are added up per key and year
    (W) before they are multiplied. The first year, which starts at the
    member's own month, is added member by member. `members`: (member_pay,
    member_pv, owner), each member's own totals too (`_member_totals`)."""
    n_keys, n_fy = cum.shape[2], len(payments)
    n_rates = cum.shape[1] - 1
    rs, re_, rks, rke = s[rec_member], e[rec_member], ks[rec_member], ke[rec_member]
    # the key's last month and year (any member's: they are equal)
    key_e = np.zeros(n_keys, dtype=np.int64)
    key_e[local] = re_
    key_ke = np.zeros(n_keys, dtype=np.int64)
    key_ke[local] = rke
    k_all = np.arange(n_fy)
    lo_k = np.broadcast_to(fy_first[None, :], (n_keys, n_fy))
    hi_k = np.minimum(key_e[:, None], fy_last[None, :]) + 1
    hi_k = np.maximum(hi_k, lo_k)
    rows = np.arange(n_keys)[:, None]
    # G[j, i, key, k]: sum over the key's months of year k of series j x discount i
    g = cum[:, :, rows, hi_k] - cum[:, :, rows, lo_k]
    # W[j, key, k]: sum over the key's members paid in year k (after their
    # first) of weight x (1, offset) x the year's amount
    w_sum = np.zeros((2, n_keys * n_fy))
    for sl, amounts, j, valid in _later_years(rec_member, rks, rke, monthly, cola):
        cell = (local[sl, None] * n_fy + rks[sl, None] + j)[valid]  # key x year
        base = (weight[sl, None] * amounts)[valid]
        w_sum[0] += np.bincount(cell, weights=base, minlength=n_keys * n_fy)
        w_sum[1] += np.bincount(cell, weights=(base.reshape(-1) * np.broadcast_to(
            offset[sl, None], valid.shape)[valid]), minlength=n_keys * n_fy)
    w_sum = w_sum.reshape(2, n_keys, n_fy)
    for i in range(n_rates + 1):
        year = (g[0, i] * w_sum[0] + g[1, i] * w_sum[1]).sum(axis=0)
        # the first year of each member, from its own first month
        hi = np.minimum(re_, fy_last[rks]) + 1
        first = ((cum[0, i, local, hi] - cum[0, i, local, rs])
                 + offset * (cum[1, i, local, hi] - cum[1, i, local, rs])) * weight \
            * monthly[rec_member]
        year += np.bincount(rks, weights=first, minlength=n_fy)[:n_fy]
        if i == 0:
            payments += year
        else:
            pv[i - 1] += year
        if members is not None:
            member_pay, member_pv, owner = members
            own = first + _member_totals(g[:, i], local, offset, rec_member, weight, rks, rke,
                                         monthly, cola)
            target = member_pay if i == 0 else member_pv[i - 1]
            target += np.bincount(owner[rec_member], weights=own, minlength=len(target))
    if month_pay is not None:
        _months_by_key(surv, slope, local, offset, rec_member, weight, rs, rks, fy_last,
                       key_e, w_sum, monthly, month_pay)
    # expected members paid on each 1 June: a member counts from its first
    # year to the key's last, in that last year only when it ends in June
    count = np.zeros((2, n_keys * n_fy))
    count[0] = np.bincount(local * n_fy + rks, weights=weight, minlength=n_keys * n_fy)
    count[1] = np.bincount(local * n_fy + rks, weights=weight * offset,
                           minlength=n_keys * n_fy)
    count = np.cumsum(count.reshape(2, n_keys, n_fy), axis=2)
    june = np.minimum(fy_last, surv.shape[1] - 1)
    paid_june = (k_all[None, :] <= key_ke[:, None]) & (fy_last[None, :] <= key_e[:, None])
    alive = surv[:, june] * count[0] + slope[:, june] * count[1]
    in_pay += np.where(paid_june, alive, 0.0).sum(axis=0)


def _later_years(rec_member, rks, rke, monthly, cola):
    """The records' fiscal years after their first, a block of records at a
    time: (the block's slice, amounts [records, years], year offsets j =
    1 .. width [1, years], which cells are a year of the record)."""
    spans = rke - rks
    width_max = int(spans.max(initial=0))
    if width_max == 0:
        return
    step = max(1, RECORD_BLOCK_CELLS // (width_max + 1))
    for lo_r in range(0, len(rec_member), step):
        sl = slice(lo_r, lo_r + step)
        width = int(spans[sl].max(initial=0))
        if width == 0:
            continue
        amounts = _amounts(monthly, rec_member[sl], width + 1, cola)[:, 1:]
        j = np.arange(1, width + 1)[None, :]
        yield sl, amounts, j, j <= spans[sl, None]


def _member_totals(g, local, offset, rec_member, weight, rks, rke, monthly, cola
                   ) -> np.ndarray:
    """Each record's value over the fiscal years after its first: the sum over
    those years k of (G0 + offset G1)[key, k] x weight x the year's amount.
    Without a COLA the amount is constant, so it is a difference of the
    key's cumulative sums over the years; with one, year by year."""
    if cola == 0:
        cg = np.concatenate([np.zeros((2, g.shape[1], 1)), np.cumsum(g, axis=2)], axis=2)
        span = [cg[j, local, rke + 1] - cg[j, local, rks + 1] for j in (0, 1)]
        return (span[0] + offset * span[1]) * weight * monthly[rec_member]
    out = np.zeros(len(rec_member))
    for sl, amounts, j, valid in _later_years(rec_member, rks, rke, monthly, cola):
        k = np.where(valid, rks[sl, None] + j, 0)
        rows = local[sl, None]
        per_year = (g[0][rows, k] + offset[sl, None] * g[1][rows, k]) * amounts
        out[sl] = np.where(valid, per_year, 0.0).sum(axis=1) * weight[sl]
    return out


def _months_by_key(surv, slope, local, offset, rec_member, weight, rs, rks, fy_last, key_e,
                   w_sum, monthly, month_pay) -> None:
    """The expected payments of each payment date (undiscounted): for each
    key and month, the weights x amounts of its members paid that month —
    the years after each member's first from W (as `_accumulate_by_key`),
    the first year from a running sum started at the member's own first
    month and stopped after that year's June — times (A, B)."""
    n_keys, n_months = surv.shape
    n_fy = w_sum.shape[2]
    first = np.zeros((2, n_keys, n_months + 1))
    base = weight * monthly[rec_member]
    stop = np.minimum(fy_last[rks] + 1, n_months)
    for j, v in enumerate((base, base * offset)):
        np.add.at(first[j], (local, rs), v)
        np.add.at(first[j], (local, stop), -v)
    run = np.cumsum(first[:, :, :n_months], axis=2)
    fy_of = np.searchsorted(fy_last, np.arange(n_months))  # the year index of each month
    fy_of = np.minimum(fy_of, n_fy - 1)
    total = run + w_sum[:, :, fy_of]
    paid = np.arange(n_months)[None, :] <= key_e[:, None]
    month_pay += np.where(paid, surv * total[0] + slope * total[1], 0.0).sum(axis=0)


def _accumulate(cum, surv, slope, local, offset, rec_member, weight, s, e, ks, ke, fy_first,
                fy_last, monthly, cola, in_pay, payments, pv, member_pay, member_pv,
                per_member, owner, by_group=None) -> None:
    """Add the records' expected payments to the fiscal-year totals (and the
    members'): for each, sums over its months of (A + offset B) x discount,
    as differences of the key's cumulative sums."""
    n_rates = cum.shape[1] - 1
    rs, re_, rks, rke = s[rec_member], e[rec_member], ks[rec_member], ke[rec_member]
    spans = rke - rks + 1
    width_max = int(spans.max())
    step = max(1, RECORD_BLOCK_CELLS // width_max)
    for lo_r in range(0, len(rec_member), step):
        sl = slice(lo_r, lo_r + step)
        width = int(spans[sl].max())
        j = np.arange(width)[None, :]
        k = rks[sl, None] + j
        valid = j < spans[sl, None]
        kk = np.where(valid, k, 0)
        lo = np.maximum(rs[sl, None], fy_first[kk])
        hi = np.minimum(re_[sl, None], fy_last[kk]) + 1
        hi = np.where(valid, hi, lo)
        rows = local[sl, None]
        amounts = _amounts(monthly, rec_member[sl], width, cola).astype(np.float64)
        w = weight[sl, None] * amounts
        k_flat = kk[valid]
        june = fy_last[kk]
        paid_june = valid & (june >= rs[sl, None]) & (june <= re_[sl, None])
        at_june = np.minimum(june, surv.shape[1] - 1)
        alive = np.where(paid_june, surv[rows, at_june]
                         + offset[sl, None] * slope[rows, at_june], 0.0)
        in_pay += np.bincount(k_flat, weights=(alive * weight[sl, None])[valid],
                              minlength=len(in_pay))[:len(in_pay)]
        off = offset[sl, None]
        for i in range(n_rates + 1):
            ca, cb = cum[0, i], cum[1, i]
            value = np.where(valid, ((ca[rows, hi] - ca[rows, lo])
                                     + off * (cb[rows, hi] - cb[rows, lo])) * w, 0.0)
            totals = np.bincount(k_flat, weights=value[valid], minlength=len(payments))
            if i == 0:
                payments += totals[:len(payments)]
            else:
                pv[i - 1] += totals[:len(payments)]
            if by_group is not None:
                code, g_pay, g_pv = by_group
                n_fy = g_pay.shape[1]
                cell = (code[rec_member[sl], None] * n_fy + kk)[valid]
                sums = np.bincount(cell, weights=value[valid],
                                   minlength=g_pay.size).reshape(g_pay.shape)
                if i == 0:
                    g_pay += sums
                else:
                    g_pv[:, i - 1] += sums
            if per_member:
                target = member_pay if i == 0 else member_pv[i - 1]
                target += np.bincount(owner[rec_member[sl]], weights=value.sum(axis=1),
                                      minlength=len(target))
