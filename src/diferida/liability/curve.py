"""The discount basis of a measurement: a single rate, or a yield curve.

A yield curve is a CSV `year,rate`: the annual spot rate for payments due
in each year after the measurement date, years 1, 2, ... consecutive. A
payment t years after the measurement date (t = days / 365.25) is
discounted by (1 + s_k)^(-t) with k the year it falls in (k = ceil(t): a
payment in the first 12 months takes year 1's rate; t = 0 too); payments
after the last year take the last rate. The file is checked line by line
(each bad line named); its SHA-256 is recorded.

The *single equivalent rate* of a curve on a stream of expected payments
is the one rate i with sum cf_m (1 + i)^(-t_m) equal to the present value
at the curve: solved by bisection on the stream's payments to 1e-12 (the
present value falls as i rises, so the root is unique).
"""

from __future__ import annotations

import csv
import hashlib
import math
import re
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np

from ..i18n import catalog
from ..projection.claims import read_small_file
from ..projection.mortality import TableError
from ..projection.options import MAX_DISCOUNT
from ..words import pct

MAX_CURVE_BYTES = 1 << 20
MAX_CURVE_YEARS = 200
_WHOLE = re.compile(r"[0-9]{1,3}")
_RATE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?")


@dataclass(frozen=True)
class YieldCurve:
    """spot[k - 1]: the annual rate for payments in year k after the date."""

    spot: tuple[float, ...]
    source: dict = field(default_factory=dict, compare=False)
    shift: float = 0.0  # every rate + shift (the sensitivity's -/+ one point)

    def factor(self, t: np.ndarray) -> np.ndarray:
        t = np.asarray(t, dtype=np.float64)
        k = np.clip(np.ceil(t).astype(np.int64), 1, len(self.spot)) - 1
        rate = np.asarray(self.spot)[k] + self.shift
        return (1.0 + rate) ** (-t)

    def shifted(self, by: float) -> YieldCurve:
        return replace(self, shift=self.shift + by)

    @property
    def label(self) -> str:
        name = Path(self.source.get("file", "curve")).name
        return name if self.shift == 0 else f"{name}{self.shift:+g}"


def single_equivalent_rate(t: np.ndarray, cash: np.ndarray, pv: float) -> float:
    """The flat rate at which the stream `cash` (paid at times `t`, years)
    is worth `pv` (bisection; NaN when the stream is empty)."""
    if not len(cash) or cash.sum() <= 0:
        return math.nan
    lo, hi = -0.99, 1.0

    def value(i: float) -> float:
        return float((cash * (1.0 + i) ** (-t)).sum())

    for _ in range(200):
        mid = (lo + hi) / 2
        if value(mid) > pv:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12:
            break
    return (lo + hi) / 2


def durations(t: np.ndarray, cash: np.ndarray, rate: float) -> tuple[float, float]:
    """(Macaulay duration, modified duration) in years of the stream at a
    flat rate: sum t v^t cf / sum v^t cf, and that / (1 + rate)."""
    v = cash * (1.0 + rate) ** (-t)
    total = float(v.sum())
    if total <= 0:
        return math.nan, math.nan
    mac = float((t * v).sum()) / total
    return mac, mac / (1.0 + rate)


def load_curve(path: str | Path, lang: str = "en") -> YieldCurve:
    """The curve of `path`, checked line by line; TableError names the file,
    the line and what is wrong, in `lang` (i18n/<lang>/liability.toml)."""
    name = str(path)
    m = catalog(lang)["yield_curve"]

    def fail(line: int | None, key: str, **kw) -> TableError:
        where = m["where_line"].format(file=name, line=line) if line is not None else name
        return TableError(f"--yield-curve {where}: {m[key].format(**kw)}")

    data, text = read_small_file(path, MAX_CURVE_BYTES, fail, lang)
    lines = text.replace("\r\n", "\n").split("\n")
    if not text.strip():
        raise fail(None, "empty")
    for n, line in enumerate(lines, start=1):
        if "\r" in line or len(line) > 200 or line.count('"') % 2:
            raise fail(n, "bad_line")
    rows = list(csv.reader(lines))
    header = [h.strip().lower() for h in rows[0]]
    if header != ["year", "rate"]:
        raise fail(1, "header", found=",".join(header) or "—")
    rates: list[float] = []
    for n, row in enumerate(rows[1:], start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != 2:
            raise fail(n, "values", n=len(row))
        year_t, rate_t = row[0].strip(), row[1].strip()
        if not _WHOLE.fullmatch(year_t) or not 1 <= int(year_t) <= MAX_CURVE_YEARS:
            raise fail(n, "not_year", value=year_t[:24], max=MAX_CURVE_YEARS)
        if int(year_t) != len(rates) + 1:
            raise fail(n, "not_next", value=year_t, expected=len(rates) + 1)
        if not _RATE.fullmatch(rate_t):
            raise fail(n, "not_number", value=rate_t[:24])
        rate = float(rate_t)
        if not (math.isfinite(rate) and 0.0 <= rate <= float(MAX_DISCOUNT)):
            raise fail(n, "out_of_range", value=rate_t, max=MAX_DISCOUNT,
                       fraction=f"{(Decimal(rate_t) / 100).normalize():f}")
        rates.append(rate)
    if not rates:
        raise fail(None, "no_rates")
    return YieldCurve(tuple(rates), {"file": name, "sha256": hashlib.sha256(data).hexdigest(),
                                     "years": len(rates)})


def rate_words(basis: Any, lang: str, shift: Decimal = Decimal(0)) -> str:
    """The discount in words: the rate (shifted), or the curve by its file."""
    t = catalog(lang)["liability"]
    d = basis.discount
    if isinstance(d, YieldCurve):
        name = d.source.get("file", "")
        if shift:
            return t["curve_shifted"].format(file=name, shift=pct(shift))
        return t["curve"].format(file=name, years=len(d.spot))
    return pct(d + shift)
