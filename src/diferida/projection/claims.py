"""When the eligible claim: the assumption for members who could be paid at
the valuation date (their start date, by the start rule, is on or before it)
and have not claimed.

* default (`valuation`): they start at the valuation date;
* `--claim-rates FILE`: a CSV of yearly claim rates, `age,rate` (by the
  member's completed age) or `years_since_eligibility,rate` (by completed
  years since the eligibility date). Claims are made on the valuation date
  and on each of its anniversaries (29 February: 28 February in a common
  year, rules §4): on claim date j the member, alive and not yet claimed,
  claims with the rate of the age (or years) reached that day. A member is
  then several entries of the projection, one per claim date j, each with
  the probability r_j x prod_{l<j} (1 - r_l) and starting on that date
  (survival to it by the before-start rates, as for any later start).

The file is checked line by line like a mortality table: whole ages
0..120 (years 0..120), consecutive, no repeats, 0 <= rate <= 1, the last
rate 1 (everyone has claimed by then); by years since eligibility it starts
at 0; by age, ages below its first have rate 0 (stated in the assumptions).
"""

from __future__ import annotations

import csv
import hashlib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..bounded import Refused, read_bounded
from ..i18n import catalog
from .engine import Members, anniversary, civil_from_days, exact_age
from .mortality import MAX_AGE, TableError

BASES = ("age", "years_since_eligibility")
MAX_CLAIM_BYTES = 1 << 20
MAX_FIELD_CHARS = 64
_WHOLE = re.compile(r"[0-9]{1,3}")
_RATE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?")


@dataclass
class ClaimRates:
    """rate[k] for k = 0..MAX_AGE of the basis (age, or years since eligibility)."""

    basis: str
    rate: np.ndarray
    first: int
    source: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _fail(path: str, line: int | None, text: str, lang: str = "en") -> TableError:
    m = catalog(lang)["claim_table"]
    where = m["where_line"].format(file=path, line=line) if line is not None else path
    return TableError(f"--claim-rates {where}: {text}")


def read_small_file(path: str | Path, limit: int, fail: Callable[..., Exception],
                    lang: str = "en") -> tuple[bytes, str]:
    """A small table file's bytes and its UTF-8 text (a BOM dropped), at most
    `limit` bytes; `fail(line, key, **values)` makes the error of each way it
    cannot be read: no_file, unreadable (reason), too_big (bytes), not_utf8
    (the line, and the byte)."""
    try:
        data = read_bounded(path, limit)
    except Refused as exc:
        if exc.reason in ("no_file", "too_big"):
            raise fail(None, exc.reason, **({"bytes": f"{limit:,}"} if exc.reason == "too_big"
                                            else {})) from None
        raise fail(None, "unreadable", reason=exc.text(lang)) from None
    try:
        return data, data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise fail(data.count(b"\n", 0, exc.start) + 1, "not_utf8", byte=exc.start) from None


def load_claim_rates(path: str | Path, lang: str = "en") -> ClaimRates:
    """The table of `path`, checked line by line; TableError names the line
    and what is wrong, in `lang` (i18n/<lang>/valuation.toml)."""
    name = str(path)
    m = catalog(lang)["claim_table"]

    def fail(line: int | None, key: str, **kw) -> TableError:
        return _fail(name, line, m[key].format(**kw), lang)

    data, text = read_small_file(path, MAX_CLAIM_BYTES, fail, lang)
    if not text.strip():
        raise fail(None, "empty")
    lines = text.replace("\r\n", "\n").split("\n")
    for n, line in enumerate(lines, start=1):
        if "\r" in line:
            raise fail(n, "bare_cr")
        if len(line) > 200:
            raise fail(n, "long_line", chars=f"{len(line):,}")
        if line.count('"') % 2:
            raise fail(n, "open_quote")
    rows = list(csv.reader(lines))
    header = [h.strip().lower() for h in rows[0]]
    if len(header) != 2 or header[0] not in BASES or header[1] != "rate":
        raise fail(1, "header", found=",".join(header) or "—")
    basis = header[0]
    seen: dict[int, tuple[float, int]] = {}
    for n, row in enumerate(rows[1:], start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != 2:
            raise fail(n, "values", n=len(row))
        key_t, rate_t = row[0].strip(), row[1].strip()
        if len(key_t) > MAX_FIELD_CHARS or len(rate_t) > MAX_FIELD_CHARS:
            raise fail(n, "long_value")
        if not _WHOLE.fullmatch(key_t) or int(key_t) > MAX_AGE:
            raise fail(n, "not_whole", basis=basis, value=key_t, max=MAX_AGE)
        if not _RATE.fullmatch(rate_t):
            raise fail(n, "not_number", value=rate_t)
        rate = float(rate_t)
        if not (math.isfinite(rate) and 0.0 <= rate <= 1.0):
            raise fail(n, "not_probability", value=rate_t)
        k = int(key_t)
        if k in seen:
            raise fail(n, "repeated", basis=basis, value=k, first=seen[k][1])
        seen[k] = (rate, n)
    if not seen:
        raise fail(None, "no_rates")
    lo, hi = min(seen), max(seen)
    missing = [k for k in range(lo, hi + 1) if k not in seen]
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
        raise fail(None, "gaps", basis=basis, missing=shown)
    if seen[hi][0] != 1.0:
        raise fail(seen[hi][1], "last_not_one", basis=basis, value=hi, rate=f"{seen[hi][0]:g}")
    if basis == "years_since_eligibility" and lo != 0:
        raise fail(None, "years_not_from_zero", first=lo)
    rates = np.ones(MAX_AGE + 1)
    rates[:lo] = 0.0
    for k, (r, _) in seen.items():
        rates[k] = r
    notes = [f"ages below {lo} have rate 0 (no claim before age {lo})"] if (
        basis == "age" and lo > 0) else []
    return ClaimRates(basis, rates, lo, {"file": name, "sha256": hashlib.sha256(data)
                                        .hexdigest()}, notes)


def expand(members: Members, eligibility: np.ndarray, claims: ClaimRates, v_day: int
           ) -> Members:
    """`members` with each one whose start is on or before the valuation day
    (and not in pay) replaced by one entry per claim date (see the module)."""
    n = len(members)
    base_w = members.weight if members.weight is not None else np.ones(n)
    base_owner = members.owner if members.owner is not None else np.arange(n)
    in_pay = members.in_pay if members.in_pay is not None else np.zeros(n, dtype=bool)
    waiting = (members.start <= v_day) & ~in_pay
    idx = np.flatnonzero(waiting)
    vy, vm, vd = civil_from_days(np.array([v_day]))
    by, bm, bd = civil_from_days(members.birth[idx])
    if claims.basis == "years_since_eligibility":
        oy, om, od = civil_from_days(eligibility[idx])
    else:
        oy, om, od = by, bm, bd
    remaining = np.ones(len(idx))
    parts_idx, parts_start, parts_w = [], [], []
    for j in range(MAX_AGE + 2):
        if not (remaining > 0).any():
            break
        day = anniversary(vy, vm, vd, j)[0] if j else v_day
        k, _ = exact_age(oy, om, od, np.full(len(idx), day))
        r = claims.rate[np.clip(k, 0, MAX_AGE)]
        r = np.where(k > MAX_AGE, 1.0, r)
        p = remaining * r
        remaining = remaining - p
        take = p > 0
        parts_idx.append(idx[take])
        parts_start.append(np.full(int(take.sum()), day, dtype=np.int64))
        parts_w.append(p[take])
    keep = np.flatnonzero(~waiting)
    sel = np.concatenate([keep, *parts_idx]).astype(np.int64)
    start = np.concatenate([members.start[keep].astype(np.int64), *parts_start])
    weight = np.concatenate([base_w[keep].astype(np.float64),
                             *[base_w[i] * w for i, w in zip(parts_idx, parts_w, strict=True)]])
    return Members(members.birth[sel], start, members.monthly_cents[sel], members.sex[sel],
                   members.kind[sel], weight=weight, owner=base_owner[sel],
                   in_pay=in_pay[sel], owners=members.n_owners)

