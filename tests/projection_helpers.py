"""Helpers of the projection tests: a Gompertz table built from its formula
(no third-party table), and an independent month-by-month reference."""

from __future__ import annotations

import calendar
import math
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

import numpy as np

from diferida.projection.mortality import AGES, KINDS, PHASES, SEXES, MortalityTable

# Gompertz: mu(x) = B c^x; q(x) = 1 - exp(-B c^x (c - 1) / ln c)
GOMPERTZ = {"F": (0.00003, 1.105), "M": (0.00005, 1.105)}


def gompertz_q(sex: str, scale: float = 1.0) -> np.ndarray:
    b, c = GOMPERTZ[sex]
    x = np.arange(AGES, dtype=np.float64)
    q = 1.0 - np.exp(-scale * b * c**x * (c - 1.0) / math.log(c))
    q[-1] = 1.0
    return np.minimum(q, 1.0)


def gompertz_table(scale: float = 1.0, before_scale: float | None = None) -> MortalityTable:
    q = {}
    for k in KINDS:
        for s in SEXES:
            for p in PHASES:
                f = scale if p == "after" or before_scale is None else before_scale
                q[(k, s, p)] = gompertz_q(s, f)
    return MortalityTable("gompertz", q, "Gompertz (test)")


def constant_table(qx: float) -> MortalityTable:
    arr = np.full(AGES, qx)
    return MortalityTable("constant", {(k, s, p): arr for k in KINDS for s in SEXES
                                       for p in PHASES}, f"constant q={qx}")


def table_csv(path, table: MortalityTable, phased: bool = False) -> None:
    lines = ["age,sex,qx" + (",phase" if phased else "")]
    for s in SEXES:
        for p in (PHASES if phased else ("after",)):
            for a in range(AGES):
                q = float(table.q[("general", s, p)][a])
                lines.append(f"{a},{s},{q!r}" + (f",{p}" if phased else ""))
    path.write_text("\n".join(lines) + "\n")


# ------------------------------------------------------- reference, by loop


def add_months(d: date, n: int) -> date:
    y, m = divmod(d.month - 1 + n, 12)
    return date(d.year + y, m + 1, 1)


def first_first(d: date) -> date:
    return d if d.day == 1 else add_months(d, 1)


def birthday(b: date, year: int) -> date:
    if b.month == 2 and b.day == 29 and not calendar.isleap(year):
        return date(year, 2, 28)
    return date(year, b.month, b.day)


def age(b: date, d: date) -> tuple[int, float]:
    x = d.year - b.year - (d < birthday(b, d.year))
    last = birthday(b, b.year + x)
    nxt = birthday(b, b.year + x + 1)
    return x, (d - last).days / (nxt - last).days


def survival(q: np.ndarray, b: date, d: date) -> float:
    x, f = age(b, d)
    s = 1.0
    for k in range(min(x, 120)):
        s *= 1.0 - q[k]
    return s * (1.0 - f * q[min(x, 120)]) if x < 120 else s


def fy(d: date) -> int:
    return d.year + (d.month >= 7)


def reference(birth: date, start: date, monthly_cents: int, as_of: date, q_before, q_after,
              rate: float = 0.0, cola: float = 0.0, horizon: int | None = None):
    """{fiscal year: (payments, present value)} in cents, payment by payment."""
    switch = max(as_of, start)
    d = first_first(switch)
    last_month = birthday(birth, birth.year + 120).replace(day=1)
    if horizon is not None:
        last_month = min(last_month, date(fy(as_of) + horizon - 1, 6, 1))
    c_factor = (survival(q_before, birth, switch) / survival(q_before, birth, as_of)
                / survival(q_after, birth, switch))
    out: dict[int, list[float]] = {}
    amount = monthly_cents
    first_fy = fy(d)
    current = first_fy
    while d <= last_month:
        while fy(d) > current:
            current += 1
            amount = int((Decimal(amount) * (1 + Decimal(str(cola)))).quantize(
                Decimal(1), ROUND_HALF_UP))
        p = c_factor * survival(q_after, birth, d)
        v = (1 + rate) ** (-(d - as_of).days / 365.25)
        acc = out.setdefault(fy(d), [0.0, 0.0])
        acc[0] += amount * p
        acc[1] += amount * p * v
        d = add_months(d, 1)
    return out
