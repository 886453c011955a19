"""A relief's adjustments (relief.py) applied to the projected payments, in
whole cents.

Each entry of the engine (engine.Members) has a start b (the day payments
began, or begin by the start rule), a first projected payment f (the first
1st on or after the later of b and the valuation date) and its amount then,
A0 (the determination's amount, or the census's amount in pay raised by the
COLA assumption up to f). With a relief:

* **at f**, every adjustment dated on or before f that applies to the entry
  (a COLA only where b is before its 1 July) is applied to A0, in date
  order (on one date: the COLA, the raises in the file's order, the
  floor) — a relief in force before the valuation date is
  taken as if paid from then, without arrears for earlier months;
* **on each 1 July after f**, first the projection's COLA assumption
  (`--cola`), then the relief's adjustments of that date, in that order.

An adjustment applies to an entry when `who` allows it (in_pay: b on or
before the date; later: b after it; all) and the amount just before it is
in its band (from_monthly <= amount < below_monthly). A relief COLA goes each
year to the entries in pay before its 1 July (b before it), as the
projection's COLA assumption does: a pension that starts on that 1 July or
later does not take it (nor the COLAs before its start). Steps, each rounded
half up to the cent in exact integer arithmetic:

* raise: amount + min(amount x rate, cap), the product rounded first;
* floor: max(amount, minimum);
* COLA: amount x (1 + rate).

A one-time payment (dated the 1st of a month D on or after the valuation
date) goes to each entry in pay on D (b and f on or before D) whose monthly
amount on D, after the relief's adjustments up to D, is in its band: an
entry of the engine paid once, on D, with the survival to D (`one_time`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from fractions import Fraction

import numpy as np

from ..bounded import shown
from ..relief import Relief
from . import engine
from .engine import (
    MAX_AMOUNT_CENTS,
    AmountTooLarge,
    Assumptions,
    Members,
    Projection,
    day_number,
    fiscal_year,
    held,
    month_day,
    month_number,
)

WHO = {"in_pay": 0, "later": 1, "all": 2}
NO_BAND = np.iinfo(np.int64).max


@dataclass(frozen=True)
class _Step:
    kind: str
    day: int  # the day number of the date
    who: int
    lo: int  # band, cents
    hi: int
    rate: Fraction = Fraction(0)
    cap: int = -1  # cents; -1: no cap
    floor: int = 0
    amount: int = 0  # one_time, cents


def _cents(d) -> int:
    return int(round(d * 100))


def _times(amount: np.ndarray, f: Fraction) -> np.ndarray:
    """amount x f rounded half up to the cent (amounts and f not negative)."""
    num, den = f.numerator, f.denominator
    top = int(amount.max(initial=0))
    if top * 2 * num + den < 2**62:
        return held((2 * amount.astype(np.int64) * num + den) // (2 * den))
    return held((2 * amount.astype(object) * num + den) // (2 * den))


def _plus_cents(amount: np.ndarray, add: np.ndarray) -> np.ndarray:
    """amount + add (neither negative), refused rather than wrapped."""
    return held(amount.astype(object) + add.astype(object)) \
        if int(amount.max(initial=0)) + int(add.max(initial=0)) > MAX_AMOUNT_CENTS \
        else amount + add


class Adjustments:
    """A relief compiled for the engine (`engine.Assumptions.adjust`)."""

    def __init__(self, relief: Relief):
        self.relief = relief
        self.steps: list[_Step] = []
        self.cola = None
        for a in relief.ordered():
            band = (_cents(a.from_monthly) if a.from_monthly is not None else 0,
                    _cents(a.below_monthly) if a.below_monthly is not None else NO_BAND)
            if a.kind == "cola":
                self.cola = a
                continue
            self.steps.append(_Step(
                a.kind, day_number(a.date), WHO[a.who], *band,
                rate=Fraction(a.rate) if a.rate is not None else Fraction(0),
                cap=_cents(a.cap_monthly) if a.cap_monthly is not None else -1,
                floor=_cents(a.minimum_monthly) if a.minimum_monthly is not None else 0,
                amount=_cents(a.amount) if a.amount is not None else 0))
        self.one_time = [s for s in self.steps if s.kind == "one_time"]
        self.steps = [s for s in self.steps if s.kind != "one_time"]

    # ---- one date ----------------------------------------------------------

    def _cola_rate(self, fy: int) -> Fraction | None:
        if self.cola is None:
            return None
        r = self.cola.cola_rate(fy)
        return Fraction(r) if r is not None and r != 0 else None

    def _on(self, amount: np.ndarray, start: np.ndarray, day: int, fy: int,
            rows: np.ndarray | None = None) -> np.ndarray:
        """The relief's steps of the 1 July `day` (which begins fiscal year
        `fy`) applied to `amount` (the entries' amounts; `start` their b);
        only to `rows` (a mask) when given."""
        out = amount.copy()
        live = np.ones(len(out), dtype=bool) if rows is None else rows.copy()
        r = self._cola_rate(fy)
        if r is not None:
            # a COLA goes to the pensions in pay before its 1 July: one whose
            # payments begin that day is paid its amount, raised from the next
            # (as the projection's --cola assumption, docs/relief.md)
            sel = live & (start < day)
            out[sel] = _times(out[sel], 1 + r)
        for s in self.steps:
            if s.day != day:
                continue
            sel = live & _who(s.who, start, day) & (out >= s.lo) & (out < s.hi)
            if s.kind == "raise":
                add = _times(out[sel], s.rate)
                if s.cap >= 0:
                    add = np.minimum(add, s.cap)
                out[sel] = _plus_cents(out[sel], add)
            elif s.kind == "floor":
                out[sel] = np.maximum(out[sel], s.floor)
        return out

    def dates(self, upto: int) -> list[tuple[int, int]]:
        """(day, fiscal year) of every 1 July on which a step may fall, up
        to the day `upto`, in order."""
        days = {s.day for s in self.steps if s.day <= upto}
        if self.cola is not None:
            y = self.cola.date.year
            while day_number(date(y, 7, 1)) <= upto:
                days.add(day_number(date(y, 7, 1)))
                y += 1
        out = []
        for d in sorted(days):
            out.append((d, int(fiscal_year(np.array([d]))[0])))
        return out

    # ---- at the first payment, and after ----------------------------------

    def at_first(self, members: Members, v: date) -> Members:
        """`members` with each entry's amount at its first projected payment
        raised by the steps dated on or before it."""
        start = members.start.astype(np.int64)
        first = month_day(month_number(np.maximum(start, day_number(v))))
        amount = members.monthly_cents.astype(np.int64)
        for day, fy in self.dates(int(first.max(initial=0))):
            amount = self._on(amount, start, day, fy, rows=first >= day)
        return _replace(members, monthly_cents=amount)

    def paths(self, fy0: np.ndarray, start: np.ndarray, cola: Fraction) -> Paths:
        return Paths(self, fy0, start, cola)

    # ---- one-time payments ---------------------------------------------------

    def one_time_entries(self, members: Members, v: date, cola: Fraction
                         ) -> list[tuple[int, Members]]:
        """The one-time payments due on or after `v`, each (its day, the
        entries it is paid to, each paid once on that day)."""
        v_day = day_number(v)
        steps = [s for s in self.one_time if s.day >= v_day]
        if not steps or not len(members):
            return []
        start = members.start.astype(np.int64)
        first = month_day(month_number(np.maximum(start, v_day)))
        fy0 = fiscal_year(first)
        parts: list[tuple[int, Members]] = []
        for s in steps:
            fy_d = int(fiscal_year(np.array([s.day]))[0])
            paid = (start <= s.day) & (first <= s.day)
            if not paid.any():
                continue
            idx = np.flatnonzero(paid)
            width = int((fy_d - fy0[idx]).max()) + 1
            path = Paths(self, fy0, start, cola).path(members.monthly_cents, idx, width)
            on_d = path[np.arange(len(idx)), fy_d - fy0[idx]]
            ok = (on_d >= s.lo) & (on_d < s.hi)
            idx = idx[ok]
            if not len(idx):
                continue
            day = np.full(len(idx), s.day, dtype=np.int64)
            parts.append((s.day, Members(
                members.birth[idx], members.start[idx],
                np.full(len(idx), s.amount, dtype=np.int64), members.sex[idx],
                members.kind[idx],
                weight=members.weight[idx] if members.weight is not None else None,
                owner=(members.owner[idx] if members.owner is not None else idx),
                in_pay=np.ones(len(idx), dtype=bool), owners=members.n_owners,
                group=members.group[idx] if members.group is not None else None,
                groups=members.groups, pay_from=day, pay_to=day)))
        return parts


def project(members: Members, a: Assumptions, relief: Relief | None, *,
            per_member: bool = False, monthly: bool = False, progress=None) -> Projection:
    """engine.project with a relief's adjustments (None: the engine as it is):
    the amounts at the first payment and after adjusted, and each one-time
    payment an entry paid once, its values added to the fiscal years (and
    to the members', the groups' and the payment dates' when asked)."""
    if relief is None:
        return engine.project(members, a, per_member=per_member, progress=progress,
                              monthly=monthly)
    try:
        return _project(members, a, relief, per_member, monthly, progress)
    except AmountTooLarge as exc:  # say which relief, and what holds it
        raise AmountTooLarge(too_large(relief, str(exc))) from None


def too_large(relief: Relief, what: str) -> str:
    """The refusal of a relief whose adjustments compound beyond what the
    engine holds: the adjustments that raise amounts, by kind, date and
    citation, and what to change."""
    raising = [a for a in relief.ordered() if a.kind in ("cola", "raise")]
    named = "; ".join(f"{a.kind} of {a.date:%Y-%m-%d} ({shown(a.citation, 40)})"
                      for a in raising[:3])
    more = f" and {len(raising) - 3} more" if len(raising) > 3 else ""
    return shown(f"under the relief's adjustments ({named}{more}) {what}; lower their "
                 "rates", 300)


def _project(members: Members, a: Assumptions, relief: Relief, per_member: bool,
             monthly: bool, progress) -> Projection:
    adj = Adjustments(relief)
    m = adj.at_first(members, a.as_of)
    p = engine.project(m, replace(a, adjust=adj), per_member=per_member, progress=progress,
                       monthly=monthly)
    for day, entries in adj.one_time_entries(m, a.as_of, a.cola):
        q = engine.project(entries, a, per_member=per_member)
        p = _plus(p, q, day, monthly)
    return p


def _plus(p: Projection, q: Projection, day: int, monthly: bool) -> Projection:
    """p with a one-time payment's run q added (q's entries are never starts)."""
    n = max(len(p.fiscal_years), len(q.fiscal_years))

    def pad(x: np.ndarray) -> np.ndarray:
        return np.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, n - x.shape[-1])])

    years = p.fiscal_years if len(p.fiscal_years) == n else q.fiscal_years
    out = replace(p, fiscal_years=years, starts=pad(p.starts), in_pay=pad(p.in_pay),
                  payments=pad(p.payments) + pad(q.payments), pv=pad(p.pv) + pad(q.pv),
                  member_payments=p.member_payments + q.member_payments,
                  member_pv=p.member_pv + q.member_pv)
    if p.group_payments is not None and q.group_payments is not None \
            and p.group_pv is not None and q.group_pv is not None:
        out = replace(out, group_payments=pad(p.group_payments) + pad(q.group_payments),
                      group_pv=pad(p.group_pv) + pad(q.group_pv))
    if monthly and p.month_days is not None and p.month_payments is not None:
        # every entry of q is paid on `day`: its payments are that date's
        at = int(np.searchsorted(p.month_days, day))
        days, pay = p.month_days, p.month_payments.copy()
        if at >= len(days) or days[at] != day:
            raise ValueError("a one-time payment after the last projected payment date")
        pay[at] += q.payments.sum()
        out = replace(out, month_days=days, month_payments=pay)
    return out


class Paths:
    """The amounts of the engine's entries by fiscal year from their first
    (engine._amounts): the COLA assumption and the relief's steps on each
    1 July after the first payment."""

    def __init__(self, adjust: Adjustments, fy0: np.ndarray, start: np.ndarray,
                 cola: Fraction):
        self.adjust, self.fy0, self.start, self.cola = adjust, fy0, start, cola

    def path(self, monthly: np.ndarray, rec: np.ndarray, steps: int) -> np.ndarray:
        n = len(rec)
        out = np.empty((n, max(steps, 1)), dtype=np.int64)
        cur = monthly[rec].astype(np.int64)
        out[:, 0] = cur
        if steps <= 1 or n == 0:
            return out
        fy0 = self.fy0[rec].astype(np.int64)
        start = self.start[rec]
        lo, hi = int(fy0.min()) + 1, int(fy0.max()) + steps - 1
        for y in range(lo, hi + 1):
            rows = (y > fy0) & (y <= fy0 + steps - 1)
            if not rows.any():
                continue
            if self.cola != 0:
                cur[rows] = _times(cur[rows], 1 + self.cola)
            day = day_number(date(y - 1, 7, 1))
            cur = self.adjust._on(cur, start, day, y, rows=rows)
            out[rows, y - fy0[rows]] = cur[rows]
        return out


def _who(code: int, start: np.ndarray, day: int) -> np.ndarray:
    if code == WHO["in_pay"]:
        return start <= day
    if code == WHO["later"]:
        return start > day
    return np.ones(len(start), dtype=bool)


def _replace(m: Members, **changes) -> Members:
    return replace(m, **changes)
