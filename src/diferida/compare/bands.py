"""A relief's cost by monthly pension band and by payer, with headcounts
(`diferida compare` with the projection).

**The band** of a member is read from its monthly amount under A (the base)
at its first projected payment, before any relief of A: for a member in
pay, the census's amount raised by the COLA assumption as the projection
raises it up to that payment (projection.runner.member_arrays); for a
deferred member, the determination's amount under A. A member with no
pension under A (not entitled under A) is in a band of its own, `no_pension_a`.
The bands are given as increasing amounts a month (`--bands`; by default
those the relief's rules file names, `bands_monthly` of its [post_start],
else the bounds of the amounts its adjustments reach, B's relief before
A's: `rules_bands`): under the first, from each to a cent under the next,
the last and more; with none, one band of every amount.

**The payer** of a member is the census's `employer` code (read as the
valuation reads it: liability.employer.with_employer).

**Money.** Both sides are projected once, by the engine's groups (a group
per band and payer, engine.Members.group): the expected payments and
present values of each group and fiscal year come from the same runs'
arithmetic as the fiscal-year table. Each fiscal year's total under A (in
whole cents, as the fiscal-year table shows it) is shared among the bands
(and, separately, among the payers) in whole cents by the largest remainder
(liability.measure.apportion); so is the year's B - A (signed_apportion: a
band whose payments do not change gets exactly 0); B is A plus B - A. Each
table adds up to the fiscal-year table to the cent, for A, for B and for
B - A.

**Headcounts.** Per band and per payer: the members (in pay, deferred); how
many gain (B's expected payments over the horizon, in whole cents, above
A's for the member) and how many lose (below); the average monthly gain of those who gain; how many
are paid under UNDER_CENTS a month (a fixed reporting threshold, stated)
under A and under B. The monthly amounts are read at the **reference
date**: the later of the valuation date and the earliest date of the
reliefs' adjustments (of A or B), or the member's first projected payment
on that side when it is later still. The amount at a date is the amount of
its fiscal year (amounts change only on 1 July), with the COLA assumption
and the relief's adjustments up to it, as the engine pays it (a member
alive then; no survival). A member with no pension on a side has 0 there
(and is not counted under the threshold on that side). The monthly gain of a member
is its amount under B at the reference date minus its amount under A; the
average is the sum over those who gain divided by their number, rounded
half up to the cent. With claim rates (--claim-rates), the amounts are
those of the start by the start rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import polars as pl

from ..bounded import shown
from ..errors import DiferidaError
from ..i18n import catalog
from ..projection.options import RELIEF_MAX_BAND, RELIEF_MAX_BANDS, RELIEF_UNDER_MONTHLY

# reporting choices, in projection/assumptions.toml (the bands themselves
# come from the relief's rules file: rules_bands)
UNDER_CENTS = int(RELIEF_UNDER_MONTHLY * 100)  # members paid under this a month
MAX_BANDS = RELIEF_MAX_BANDS
MAX_BAND_CENTS = int(RELIEF_MAX_BAND * 100)
NO_PENSION_A = "no_pension_a"
COUNT_COLUMNS = ("members", "in_pay", "deferred", "gain", "lose", "average_monthly_gain",
                 "under_threshold_a", "under_threshold_b")
_MONEY_RE = re.compile(r"[0-9]{1,9}(\.[0-9]{1,2})?")  # the digits 0-9 only (not \d)


class BandsError(DiferidaError, ValueError):
    """A --bands value that cannot be used (the message names each bad value)."""


def text(lang: str) -> dict[str, Any]:
    """The band tables' texts, the reporting threshold written into them
    ("{threshold}" in the catalog)."""
    return _filled(catalog(lang)["compare_relief"],
                   "$" + _dollars(UNDER_CENTS).removesuffix(".00"))


def _filled(node: Any, threshold: str) -> Any:
    if isinstance(node, dict):
        return {k: _filled(v, threshold) for k, v in node.items()}
    return node.replace("{threshold}", threshold) if isinstance(node, str) else node


def rules_bands(a: Any, b: Any) -> list[int]:
    """The bands of a comparison without --bands, in cents: those of B's
    relief (relief.Relief.report_bands), else A's; none without a relief."""
    for side in (b, a):
        if side.relief is not None:
            return [int(x * 100) for x in side.relief.report_bands()]
    return []


def parse_bands(value: str, lang: str = "en") -> list[int]:
    """`--bands` (amounts a month, increasing, positive, in dollars with at
    most two decimals, separated by commas) as whole cents; every bad value
    named in one message."""
    m = text(lang)
    items = value.split(",")
    problems: list[str] = []
    out: list[int] = []
    last: int | None = None
    if len(items) > MAX_BANDS:
        raise BandsError(f"--bands: {m['too_many'].format(n=len(items), max=MAX_BANDS)}")
    for i, raw in enumerate(items, start=1):
        s = raw.strip()
        if not s:
            problems.append(m["empty"].format(n=i))
            continue
        if not _MONEY_RE.fullmatch(s):
            problems.append(m["not_money"].format(n=i, value=shown(s)))
            continue
        c = int(Decimal(s) * 100)
        if c <= 0:
            problems.append(m["not_positive"].format(n=i, value=s))
            continue
        if c > MAX_BAND_CENTS:
            problems.append(m["too_large"].format(n=i, value=s, max="999,999.99"))
            continue
        if last is not None and c <= last:
            problems.append(m["not_increasing"].format(n=i, value=s,
                                                       previous=_dollars(last)))
            continue
        out.append(c)
        last = c
    if problems:
        raise BandsError("--bands: " + "; ".join(problems))
    return out


def _dollars(c: int) -> str:
    return f"{c // 100:,}.{c % 100:02d}"


def band_codes(bands: list[int]) -> list[str]:
    """The bands' codes in the files: 0.00-499.99, 500.00-999.99, ...,
    2000.00+, then no_pension_a."""
    edges = [0, *bands]
    out = []
    for i, lo in enumerate(edges):
        if i + 1 < len(edges):
            hi = edges[i + 1] - 1
            out.append(f"{lo // 100}.{lo % 100:02d}-{hi // 100}.{hi % 100:02d}")
        else:
            out.append(f"{lo // 100}.{lo % 100:02d}+")
    return [*out, NO_PENSION_A]


def band_of(cents: np.ndarray, bands: list[int]) -> np.ndarray:
    """The band index of each monthly amount (cents): 0 under the first edge."""
    return np.searchsorted(np.asarray(bands, dtype=np.int64), cents.astype(np.int64),
                           side="right").astype(np.int64)


def reference_date(valuation: date, reliefs: list[Any]) -> date:
    """The later of the valuation date and the earliest adjustment's date."""
    days = [a.date for r in reliefs if r is not None for a in r.adjustments]
    return max(valuation, min(days)) if days else valuation


def amounts_at(arrays: Any, relief: Any, v: date, ref: date, cola: Fraction) -> np.ndarray:
    """The monthly amount (cents) of each entry of `arrays` (unexpanded: one
    per member) in the fiscal year of the later of `ref` and its first
    projected payment, with the COLA assumption and the relief's
    adjustments as the engine applies them (projection/adjust.py)."""
    from ..projection import adjust, engine

    n = len(arrays)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    start = arrays.start.astype(np.int64)
    first = engine.month_day(engine.month_number(np.maximum(start, engine.day_number(v))))
    fy0 = engine.fiscal_year(first).astype(np.int64)
    at = np.maximum(first, engine.day_number(ref))
    k = engine.fiscal_year(at).astype(np.int64) - fy0
    width = int(k.max()) + 1
    if relief is None:
        path = engine.cola_amounts(arrays.monthly_cents.astype(np.int64), width, cola)
    else:
        adj = adjust.Adjustments(relief)
        m = adj.at_first(arrays, v)
        path = adj.paths(fy0, start, cola).path(m.monthly_cents, np.arange(n), width)
    return path[np.arange(n), k]


@dataclass
class Side:
    """One side's members, in the order of its engine arrays (one per member)."""

    rows: np.ndarray  # the census row of each member
    in_pay: np.ndarray
    payer: np.ndarray  # payer code index per member
    amount: np.ndarray  # monthly cents at the reference date
    member_payments: np.ndarray  # expected payments over the horizon, cents (float)
    fiscal_years: np.ndarray
    payments: np.ndarray  # whole cents per fiscal year (the fiscal-year table's)
    pv: np.ndarray  # [rates, fiscal years] whole cents
    group_payments: np.ndarray  # [groups, fiscal years] float cents
    group_pv: np.ndarray  # [groups, rates, fiscal years]


def group_codes(band: np.ndarray, payer: np.ndarray, n_payers: int) -> np.ndarray:
    return band * n_payers + payer


def money_table(a: Side, b: Side, key: str, labels_of_key: list[str], axis: str,
                n_bands: int, n_payers: int, rate_labels: list[str]) -> pl.DataFrame:
    """Per fiscal year and per key (band or payer): payments and present
    values under A, B and B - A, each fiscal year's total shared by the
    largest remainder; TOTAL per key last."""
    from ..liability.measure import apportion
    from ..projection.output import money

    years = sorted(set(a.fiscal_years.tolist()) | set(b.fiscal_years.tolist()))
    k = len(labels_of_key)

    def on_years(s: Side, vals: np.ndarray, totals: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
        # vals [groups, fy] -> the keys' parts [keys, years] and the totals [years]
        g = vals.reshape(n_bands, n_payers, -1)
        parts = g.sum(axis=1) if axis == "band" else g.sum(axis=0)
        p = np.zeros((k, len(years)))
        t = np.zeros(len(years), dtype=np.int64)
        if k == 0:  # no payer: nobody projected, every total 0
            return p, t
        for j, y in enumerate(s.fiscal_years.tolist()):
            p[:, years.index(y)] = parts[:, j]
            t[years.index(y)] = int(totals[j])
        return p, t

    def shares(va: np.ndarray, ta: np.ndarray, vb: np.ndarray, tb: np.ndarray, rate=None
               ) -> tuple[np.ndarray, np.ndarray]:
        # A's shares of A's totals; B - A's shares of B - A's totals; B = A + (B - A)
        pa, sa = on_years(a, va, ta)
        pb, sb = on_years(b, vb, tb)
        out_a = np.zeros((k, len(years)), dtype=np.int64)
        out_d = np.zeros((k, len(years)), dtype=np.int64)
        for j in range(len(years)):
            out_a[:, j] = apportion(np.clip(pa[:, j], 0, None), int(sa[j]))
            out_d[:, j] = signed_apportion(pb[:, j] - pa[:, j], int(sb[j] - sa[j]))
        return out_a, out_a + out_d

    values: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    values["payments"] = shares(a.group_payments, a.payments, b.group_payments, b.payments)
    for i, label in enumerate(rate_labels):
        values[f"pv_{label}"] = shares(a.group_pv[:, i, :], a.pv[i], b.group_pv[:, i, :],
                                       b.pv[i])
    fy_col = [f"FY{y}" for y in years for _ in range(k)] + ["TOTAL"] * k
    key_col = labels_of_key * len(years) + labels_of_key
    cols: list[pl.Series] = [pl.Series("fiscal_year", fy_col, dtype=pl.String),
                             pl.Series(key, key_col, dtype=pl.String)]
    for name, (va, vb) in values.items():
        for suffix, v in (("a", va), ("b", vb), ("difference", vb - va)):
            flat = np.concatenate([v.T.reshape(-1), v.sum(axis=1)])
            cols.append(money(f"{name}_{suffix}", flat))
    return pl.DataFrame(cols)


def signed_apportion(parts: np.ndarray, total: int) -> np.ndarray:
    """Whole cents for each part (of any sign), adding up to `total`, by the
    largest remainder (liability.measure.apportion when the parts and the
    total share a sign; a part of exactly nothing gets nothing)."""
    from ..liability.measure import apportion

    parts = np.where(np.abs(parts) < 1e-6, 0.0, np.asarray(parts, dtype=np.float64))
    if (parts >= 0).all() and total >= 0 and (total == 0 or parts.sum() > 0):
        return apportion(parts, total)
    if (parts <= 0).all() and total <= 0 and (total == 0 or parts.sum() < 0):
        return -apportion(-parts, -total)
    # mixed signs: each part moved by its share (by size) of what the parts
    # miss of the total, floored, the cents left to the largest remainders
    size = np.abs(parts)
    quota = parts + (total - parts.sum()) * (size / size.sum() if size.sum() > 0
                                             else np.full(len(parts), 1 / len(parts)))
    base = np.floor(quota).astype(np.int64)
    left = int(total - base.sum())
    order = np.lexsort((np.arange(len(parts)), -(quota - base)))
    base[order[:left]] += 1
    return base


def counts_table(a: Side, b: Side, key: str, labels_of_key: list[str],
                 key_a: np.ndarray, key_b: np.ndarray) -> pl.DataFrame:
    """Headcounts per key (band or payer), then TOTAL: the members are the
    union of both sides' (matched by census row)."""
    from ..projection.output import money

    rows = np.union1d(a.rows, b.rows)
    n = len(rows)
    ia = np.searchsorted(rows, a.rows)
    ib = np.searchsorted(rows, b.rows)
    k_of = np.full(n, -1, dtype=np.int64)
    k_of[ib] = key_b
    k_of[ia] = key_a  # A's key first (the band is A's)
    in_pay = np.zeros(n, dtype=bool)
    in_pay[ib] = b.in_pay
    in_pay[ia] = a.in_pay
    pay_a = np.zeros(n, dtype=np.int64)
    pay_b = np.zeros(n, dtype=np.int64)
    pay_a[ia] = np.floor(a.member_payments + 0.5).astype(np.int64)
    pay_b[ib] = np.floor(b.member_payments + 0.5).astype(np.int64)
    amt_a = np.zeros(n, dtype=np.int64)
    amt_b = np.zeros(n, dtype=np.int64)
    amt_a[ia] = a.amount
    amt_b[ib] = b.amount
    has_a = np.zeros(n, dtype=bool)
    has_b = np.zeros(n, dtype=bool)
    has_a[ia] = True
    has_b[ib] = True
    gain = pay_b > pay_a
    under_a = has_a & (amt_a < UNDER_CENTS)
    under_b = has_b & (amt_b < UNDER_CENTS)
    k = len(labels_of_key)

    def per(mask: np.ndarray) -> list[int]:
        c = np.bincount(k_of[mask], minlength=k)[:k].tolist()
        return [*c, int(mask.sum())]

    members = per(np.ones(n, dtype=bool))
    gains = per(gain)
    diff = np.where(gain, amt_b - amt_a, 0)
    sums = [int(diff[k_of == i].sum()) for i in range(k)] + [int(diff.sum())]
    avg = [_avg(s, g) for s, g in zip(sums, gains, strict=True)]
    return pl.DataFrame([
        pl.Series(key, [*labels_of_key, "TOTAL"], dtype=pl.String),
        pl.Series("members", members, dtype=pl.Int64),
        pl.Series("in_pay", per(in_pay), dtype=pl.Int64),
        pl.Series("deferred", per(~in_pay), dtype=pl.Int64),
        pl.Series("gain", gains, dtype=pl.Int64),
        pl.Series("lose", per(pay_b < pay_a), dtype=pl.Int64),
        money("average_monthly_gain", avg),
        pl.Series("under_threshold_a", per(under_a), dtype=pl.Int64),
        pl.Series("under_threshold_b", per(under_b), dtype=pl.Int64),
    ])


def _avg(total: int, n: int) -> int:
    """total / n rounded half up to the cent (0 when n is 0)."""
    if n == 0:
        return 0
    q, r = divmod(2 * total + n, 2 * n)
    return q


def check_sums(table: pl.DataFrame, fiscal: pl.DataFrame, key: str) -> None:
    """Each fiscal year's rows add up to the fiscal-year table's, to the cent
    (a failure is a bug: AccountingError)."""
    from ..batch.population import AccountingError

    value_cols = [c for c in table.columns if c not in ("fiscal_year", key)]
    sums = table.group_by("fiscal_year").agg([pl.col(c).sum() for c in value_cols])
    joined = fiscal.select("fiscal_year", *value_cols).join(
        sums, on="fiscal_year", how="full", suffix="_sum", coalesce=True)
    for c in value_cols:
        bad = joined.filter(pl.col(c).fill_null(0) != pl.col(f"{c}_sum").fill_null(0))
        if bad.height:
            raise AccountingError(f"the {key} table does not add up to the fiscal years "
                                  f"({c}, {bad['fiscal_year'][0]})")


def band_text(code: str, lang: str) -> str:
    """A band's code (band_codes) in words: "lo-hi" -> "$lo to $hi";
    "0.00-hi" -> "Under" the next band's start; "lo+" -> "$lo and more"."""
    m = text(lang)
    if code == NO_PENSION_A:
        return m["band_none"]
    if code == "TOTAL":
        return catalog(lang)["compare_report"]["total"]
    if code.endswith("+"):
        lo = int(Decimal(code[:-1]) * 100)
        return m["band_over"].format(lo=_dollars(lo)) if lo else m["band_all"]
    lo_s, _, hi_s = code.partition("-")
    lo, hi = int(Decimal(lo_s) * 100), int(Decimal(hi_s) * 100)
    if lo == 0:
        return m["band_under"].format(hi=_dollars(hi + 1))
    return m["band_between"].format(lo=_dollars(lo), hi=_dollars(hi))


def assumption_rows(info: dict[str, Any], lang: str) -> list[tuple[str, str]]:
    """The band and payer tables' rules in words (the report, the workbook)."""
    from ..i18n import fmt_date

    m = text(lang)["assumptions"]
    bands = [band_text(c, lang) for c in info["bands"] if c != NO_PENSION_A]
    out = [(m["bands"], m["bands_value"].format(bands="; ".join(bands))),
           (m["band_rule"], m["band_rule_value"]),
           (m["reference"], m["reference_value"].format(
               date=fmt_date(date.fromisoformat(info["reference_date"]), lang))),
           (m["gain"], m["gain_value"]),
           (m["under"], m["under_value"]),
           (m["payers"], m["payers_value"] if info.get("payers") else m["payers_none"]),
           (m["rounding"], m["rounding_value"])]
    return out
