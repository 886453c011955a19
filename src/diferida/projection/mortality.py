"""Mortality tables: annual rates q(x) by age, sex and phase (before and
after the pension starts), and generational improvement.

Three sources, all read from files on this machine (never downloaded):

* `none`: everyone survives (q = 0 at every age);
* a CSV file of the user's own table (`age,sex,qx`, optionally `phase`):
  `load_csv_table`, checked line by line;
* `pub2010`: the SOA Pub-2010 amount-weighted tables (General for the group
  `general`, Safety for `police` and `firefighter`; employee rates before
  the start, healthy-retiree rates from it), with the improvement scales
  MP-2014 ... MP-2020, read from the `pymort` package (optional extra
  `diferida[soa]`).

Every table is held as arrays of MAX_AGE + 1 rates (ages 0..120) per
(table kind, sex, phase); ages a published table does not cover take the
rate of the nearest age it does (documented in docs/project.md).
"""

from __future__ import annotations

import csv
import functools
import hashlib
import math
import re
import warnings
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path

import numpy as np

from ..bounded import Refused, read_bounded
from ..errors import DiferidaError
from .options import IMPROVEMENTS, MP_IDS, TABLE_LAST_AGE

MAX_AGE = TABLE_LAST_AGE  # the tables' last age (assumptions.toml): payments stop after it
AGES = MAX_AGE + 1
SEXES = ("F", "M")
PHASES = ("before", "after")
KINDS = ("general", "safety")  # Pub-2010 General; Safety for police and firefighter
KIND_OF_GROUP = {"general": 0, "police": 1, "firefighter": 1}

PUB2010_BASE_YEAR = 2010  # the tables' central year (July 2010 - June 2011)
# pymort table ids: SOA mort.soa.org identities of the amount-weighted tables
PUB2010_IDS = {
    ("general", "F", "before"): 3397, ("general", "M", "before"): 3398,
    ("general", "F", "after"): 3399, ("general", "M", "after"): 3400,
    ("safety", "F", "before"): 3391, ("safety", "M", "before"): 3392,
    ("safety", "F", "after"): 3393, ("safety", "M", "after"): 3394,
}
MAX_CSV_BYTES = 10 << 20  # a table of 121 ages x 2 sexes x 2 phases is a few kB


class TableError(DiferidaError, ValueError):
    """A mortality option or table that cannot be used; the message names
    the option, and the file and line where it applies."""


@dataclass
class Improvement:
    """Annual improvement rates by sex, age (0..120) and calendar year
    (`first`..`first + years - 1`; the first and last years' rates apply
    before and after the scale's span)."""

    name: str
    first: int
    rates: dict[str, np.ndarray]  # sex -> [AGES, years]
    source: str = ""
    _cum: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    def log_factor(self, sex: str, ages: np.ndarray, years: np.ndarray, base: int) -> np.ndarray:
        """log of prod_{y=base+1}^{Y} (1 - MP(x, y)) for each (age x, year Y);
        for Y < base the inverse product over Y+1..base (negated sum)."""
        r = self.rates[sex]
        n = r.shape[1]
        if sex not in self._cum:
            logs = np.log1p(-r)
            self._cum[sex] = np.concatenate([np.zeros((AGES, 1)), np.cumsum(logs, axis=1)],
                                            axis=1)
        cum = self._cum[sex]
        logs_first, logs_last = np.log1p(-r[:, 0]), np.log1p(-r[:, -1])

        def upto(y: np.ndarray) -> np.ndarray:
            # sum of log(1 - MP(x, t)) for t = first .. y (empty when y < first)
            k = y - self.first + 1  # number of years of the scale's span up to y
            inside = cum[ages, np.clip(k, 0, n)]
            after = np.maximum(k - n, 0) * logs_last[ages]
            before = np.minimum(k, 0) * logs_first[ages]  # negative: years before the span
            return inside + after + before

        return upto(years) - upto(np.full_like(years, base))


@dataclass
class MortalityTable:
    """q[(kind, sex, phase)] = rates for ages 0..120. `base_year` is the
    calendar year of the rates when an improvement scale is applied."""

    name: str
    q: dict[tuple[str, str, str], np.ndarray]
    description: str
    base_year: int | None = None
    improvement: Improvement | None = None
    notes: list[str] = field(default_factory=list)
    source: dict = field(default_factory=dict)
    scale: float = 1.0  # --mortality-scale: every rate x scale, capped at 1

    @property
    def none(self) -> bool:
        return self.name == "none"

    @property
    def phased(self) -> bool:
        return any(not np.array_equal(self.q[(k, s, "before")], self.q[(k, s, "after")])
                   for k in KINDS for s in SEXES)

    def cohort_rates(self, kind: str, sex: str, phase: str, birth_years: np.ndarray
                     ) -> np.ndarray:
        """[len(birth_years), AGES]: the rate at each age for each birth year
        (with improvement, age x's rate is that of calendar year birth + x)."""
        base = self.q[(kind, sex, phase)]
        out = np.broadcast_to(base, (len(birth_years), AGES)).copy()
        if self.improvement is not None:
            assert self.base_year is not None  # improvement needs one (resolve)
            ages = np.arange(AGES)[None, :]
            years = birth_years[:, None].astype(np.int64) + ages
            out *= np.exp(self.improvement.log_factor(
                sex, np.broadcast_to(ages, years.shape), years, self.base_year))
            np.minimum(out, 1.0, out=out)
        if self.scale != 1.0:
            out *= self.scale
            np.minimum(out, 1.0, out=out)
        return out


def scaled(table: MortalityTable, factor: float | Decimal) -> MortalityTable:
    """The same table with every rate (after improvement) x `factor`, capped at 1.
    The factors multiply as decimals (1.1 x 0.9 is 0.99, where the binary
    product is 0.9900000000000001): the scale reads as a reader would write
    it, and is the scale a run with --mortality-scale 0.99 uses."""
    product = Decimal(repr(float(table.scale))) * Decimal(str(factor))
    return replace(table, scale=float(product))


def without_improvement(table: MortalityTable) -> MortalityTable:
    return replace(table, improvement=None)


def no_mortality() -> MortalityTable:
    zero = np.zeros(AGES)
    return MortalityTable("none", {(k, s, p): zero for k in KINDS for s in SEXES for p in PHASES},
                          "no mortality: everyone survives")


# ------------------------------------------------------------------ CSV tables


def _fail(path: str, line: int | None, text: str) -> TableError:
    where = f"{path}, line {line}" if line is not None else path
    return TableError(f"--mortality {where}: {text}")


# What a table's values may be, in ASCII only (str.isdigit and float() also
# take "²", Arabic-Indic and fullwidth digits, and "0.0_1"): an age of whole
# years; a rate as a decimal number, with an exponent as spreadsheets write it.
_AGE = re.compile(r"[0-9]{1,3}")
_RATE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?")
MAX_FIELD_CHARS = 64  # an age, a sex, a rate, a phase: a few characters each
MAX_LINE_CHARS = 1_000


def _shown(value: str) -> str:
    """A value as a message may quote it: a long one cut, with its length."""
    if len(value) <= 24:
        return f"'{value}'"
    return f"'{value[:20]}…' ({len(value):,} characters)"


def _bare_cr_line(text: str) -> int | None:
    """The line of the first CR that is not part of a CR-LF, or None."""
    at = text.find("\r")
    while at >= 0:
        if text[at + 1:at + 2] != "\n":
            return text.count("\n", 0, at) + 1
        at = text.find("\r", at + 1)
    return None


def _label(header: list[str] | None, i: int) -> str:
    return header[i] if header is not None and i < len(header) else f"column {i + 1}"


def _check_lines(name: str, lines: list[str], header: list[str] | None) -> None:
    """Refuse a line too long for a table, or a quoted value that runs over
    several lines, naming the line and the field (before the CSV reader,
    which raises on a field over 128 KiB without saying where it began)."""
    for n, line in enumerate(lines, start=1):
        if len(line) > MAX_LINE_CHARS:
            values = line.split(",")
            i = max(range(len(values)), key=lambda k: len(values[k]))
            if n == 1:
                raise _fail(name, 1, f"the header's column {i + 1} has {len(values[i]):,} "
                                     f"characters; a header names the columns age, sex, qx "
                                     f"(and optionally phase)")
            raise _fail(name, n, f"{_label(header, i)} has {len(values[i]):,} characters, "
                                 f"not a value of a mortality table (at most "
                                 f"{MAX_FIELD_CHARS})")
        if line.count('"') % 2:
            inside, column = False, 0
            for ch in line:
                if ch == '"':
                    inside = not inside
                elif ch == "," and not inside:
                    column += 1
            raise _fail(name, n, f"a quoted value of {_label(header, column)} is not closed "
                                 f"on its line (a value of a mortality table is on one line)")


def load_csv_table(path: str | Path) -> MortalityTable:
    """A table from a CSV file with columns `age,sex,qx` and optionally
    `phase` (`before` | `after` the start date). Ages are whole years, each
    sex (and phase) a run of consecutive ages ending at 120, no gaps, no
    repeats; 0 <= qx <= 1; every value in ASCII. Ages below a sex's first age
    take its rate."""
    name = str(path)
    data = _table_bytes(Path(path), name)
    seen, has_phase = _table_rows(name, _table_lines(name, data))
    q_of, notes = _table_rates(name, seen, has_phase)
    table = {}
    for k in KINDS:
        for s in SEXES:
            for ph in PHASES:
                table[(k, s, ph)] = q_of[(s, ph if has_phase else "both")]
    digest = hashlib.sha256(data).hexdigest()
    return MortalityTable(
        "csv", table, f"user table {name}" + (" (before/after start)" if has_phase else
                                              " (one table before and after the start)"),
        notes=notes, source={"file": name, "sha256": digest})


def _table_bytes(p: Path, name: str) -> bytes:
    try:
        return read_bounded(p, MAX_CSV_BYTES)
    except Refused as exc:
        if exc.reason == "too_big":
            raise _fail(name, None, f"more than {MAX_CSV_BYTES:,} bytes is not a mortality "
                                    f"table (at most {MAX_CSV_BYTES:,})") from None
        raise _fail(name, None, exc.text()) from None


def _table_lines(name: str, data: bytes) -> list[list[str]]:
    """The file's records: UTF-8 text, LF or CRLF line ends, one record a
    line, each value within its limit (checked as text first)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise _fail(name, line, f"the text is not UTF-8 (byte {exc.start})") from None
    if not text.strip():
        raise _fail(name, None, "the file is empty")
    cr = _bare_cr_line(text)
    if cr is not None:
        raise _fail(name, cr, "holds a bare CR (the line end of old Mac files, or a stray "
                              "one); save it with LF or CRLF line ends")
    lines = text.replace("\r\n", "\n").split("\n")
    _check_lines(name, lines[:1], None)
    header = [h.strip().lower() for h in next(csv.reader(lines[:1]), [])]
    _check_lines(name, lines, header)
    reader = csv.reader(lines)  # one record a line: no value runs over lines (above)
    try:
        rows = list(reader)
    except csv.Error as exc:
        raise _fail(name, reader.line_num, f"cannot be read: {exc}") from None
    return rows


def _table_rows(name: str, rows: list[list[str]]
                ) -> tuple[dict[tuple[str, str], dict[int, tuple[float, int]]], bool]:
    """Each sex's (and phase's) rates by age, every value checked, naming
    its line; (them, whether the table has phases)."""
    header = [h.strip().lower() for h in rows[0]]
    for need in ("age", "sex", "qx"):
        if need not in header:
            raise _fail(name, 1, f"the header needs the columns age, sex, qx (and optionally "
                                 f"phase); found {', '.join(map(_shown, header)) or 'none'}")
    extra = [h for h in header if h not in ("age", "sex", "qx", "phase")]
    if extra or len(set(header)) != len(header):
        raise _fail(name, 1, "unexpected or repeated columns: "
                             f"{', '.join(map(_shown, extra or header))}")
    col = {h: i for i, h in enumerate(header)}
    has_phase = "phase" in col
    seen: dict[tuple[str, str], dict[int, tuple[float, int]]] = {}
    for n, row in enumerate(rows[1:], start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise _fail(name, n, f"has {len(row)} values; the header has {len(header)}")
        for h, value in zip(header, row, strict=True):
            if len(value) > MAX_FIELD_CHARS:
                raise _fail(name, n, f"{h} has {len(value):,} characters, not a value of a "
                                     f"mortality table (at most {MAX_FIELD_CHARS})")
        age_t, sex = row[col["age"]].strip(), row[col["sex"]].strip()
        q_t = row[col["qx"]].strip()
        phase = row[col["phase"]].strip() if has_phase else "both"
        if not _AGE.fullmatch(age_t) or int(age_t) > MAX_AGE:
            raise _fail(name, n, f"age {_shown(age_t)} is not a whole number of years "
                                 f"0..{MAX_AGE} (in the digits 0-9)")
        if sex not in SEXES:
            raise _fail(name, n, f"sex {_shown(sex)} is not F or M")
        if has_phase and phase not in PHASES:
            raise _fail(name, n, f"phase {_shown(phase)} is not 'before' or 'after'")
        if not _RATE.fullmatch(q_t):
            raise _fail(name, n, f"qx {_shown(q_t)} is not a number (in the digits 0-9, "
                                 f"with a decimal point)")
        q = float(q_t)
        if not (math.isfinite(q) and 0.0 <= q <= 1.0):
            raise _fail(name, n, f"qx {q_t} is not a probability between 0 and 1")
        ages = seen.setdefault((sex, phase), {})
        age = int(age_t)
        if age in ages:
            raise _fail(name, n, f"age {age} ({sex}{'' if not has_phase else ', ' + phase}) "
                                 f"is repeated (first on line {ages[age][1]})")
        ages[age] = (q, n)
    return seen, has_phase


def _table_rates(name: str, seen: dict[tuple[str, str], dict[int, tuple[float, int]]],
                 has_phase: bool) -> tuple[dict[tuple[str, str], np.ndarray], list[str]]:
    """Each sex's (and phase's) rates as an array by age, to MAX_AGE with no
    gap; ages below the first take its rate (said in the notes)."""
    wanted = [(s, p) for s in SEXES for p in (PHASES if has_phase else ("both",))]
    q_of: dict[tuple[str, str], np.ndarray] = {}
    notes = []
    for key in wanted:
        label = key[0] + ("" if not has_phase else f", {key[1]}")
        rates = seen.get(key)
        if not rates:
            raise _fail(name, None, f"no rates for {label}")
        lo, hi = min(rates), max(rates)
        if hi != MAX_AGE:
            raise _fail(name, None, f"the rates for {label} end at age {hi}; a table runs "
                                    f"to age {MAX_AGE}")
        missing = [a for a in range(lo, hi + 1) if a not in rates]
        if missing:
            shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
            raise _fail(name, None, f"the rates for {label} have gaps: no age {shown}")
        arr = np.empty(AGES)
        for a in range(lo, AGES):
            arr[a] = rates[a][0]
        arr[:lo] = arr[lo]
        if lo > 0:
            notes.append(f"{label}: ages below {lo} take the rate of age {lo}")
        q_of[key] = arr
    return q_of, notes


# ------------------------------------------------------------- SOA (pymort)


def _pymort():
    try:
        import pymort
    except ImportError:
        raise TableError(
            "--mortality pub2010 / --improvement: the SOA tables come from the optional "
            "package pymort; install it with: pip install 'diferida[soa]' (or use a CSV "
            "table of your own)") from None
    return pymort


def _pymort_version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("pymort")
    except PackageNotFoundError:  # pragma: no cover
        return "unknown"


@functools.lru_cache(maxsize=32)
def _pymort_table(table_id: int):
    """pymort's table `table_id` (parsed once per process; its own
    deprecation warnings, about APIs of its dependencies, are not ours)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _pymort().MortXML.from_id(table_id).Tables[0]


def _one_dimensional(table_id: int) -> tuple[np.ndarray, int, int]:
    t = _pymort_table(table_id)
    vals = t.Values["vals"]
    ages = np.asarray(vals.index, dtype=np.int64)
    return np.asarray(vals, dtype=np.float64), int(ages.min()), int(ages.max())


def load_pub2010() -> MortalityTable:
    """The Pub-2010 amount-weighted tables. Employee tables cover ages
    18..80 and retiree tables 50 (45 for Safety)..120: beyond a table's ages
    the other phase's rate of the same age is used, and below 18 the rate of
    18 (the published tables' own convention for joining them)."""
    raw = {}
    for key, tid in PUB2010_IDS.items():
        vals, lo, hi = _one_dimensional(tid)
        arr = np.full(AGES, np.nan)
        arr[lo:hi + 1] = vals
        raw[key] = arr
    q = {}
    for k in KINDS:
        for s in SEXES:
            emp, ret = raw[(k, s, "before")], raw[(k, s, "after")]
            for phase, own, other in (("before", emp, ret), ("after", ret, emp)):
                arr = np.where(np.isnan(own), other, own)
                first = int(np.flatnonzero(~np.isnan(arr))[0])
                arr[:first] = arr[first]
                q[(k, s, phase)] = arr
    return MortalityTable(
        "pub2010", q,
        "SOA Pub-2010 amount-weighted: General (general), Safety (police, firefighter); "
        "employee rates before the start, healthy-retiree rates from it",
        base_year=PUB2010_BASE_YEAR,
        notes=["employee rates above 80 are the retiree rates; retiree rates below 50 "
               "(Safety: 45) are the employee rates; ages below 18 take the rate of 18"],
        source={"package": "pymort", "version": _pymort_version(),
                "table_ids": {"/".join(k): v for k, v in PUB2010_IDS.items()}})


def load_improvement(name: str) -> Improvement:
    """An MP scale: rates by age (20..120 published; below 20 the rate of
    20) and year (the first and last years' rates continue outside the span)."""
    rates = {}
    first = None
    for sex, tid in MP_IDS[name].items():
        vals = _pymort_table(tid).Values["vals"]
        ages = np.asarray(vals.index.get_level_values(0), dtype=np.int64)
        years = np.asarray(vals.index.get_level_values(1), dtype=np.int64)
        y0, y1 = int(years.min()), int(years.max())
        grid = np.full((AGES, y1 - y0 + 1), np.nan)
        grid[ages, years - y0] = np.asarray(vals, dtype=np.float64)
        lo = int(ages.min())
        grid[:lo] = grid[lo]
        if np.isnan(grid).any():
            raise TableError(f"--improvement {name}: the scale in pymort has gaps")
        rates[sex] = grid
        first = y0
    assert first is not None
    return Improvement(name, first, rates, source=f"pymort {_pymort_version()} tables "
                       + ", ".join(str(v) for v in MP_IDS[name].values()))


def resolve(mortality: str, improvement: str | None) -> MortalityTable:
    """The table `--mortality` names (none | pub2010 | a CSV path), with
    `--improvement` (default: mp2020 with pub2010, none otherwise)."""
    if mortality == "none":
        table = no_mortality()
    elif mortality == "pub2010":
        table = load_pub2010()
    elif mortality.lower().endswith(".csv"):
        table = load_csv_table(mortality)
    else:
        raise TableError(f"--mortality: unknown table '{mortality}'; use none, pub2010, "
                         f"or the path of a .csv table (age,sex,qx[,phase])")
    imp = improvement if improvement is not None else (
        "mp2020" if table.name == "pub2010" else "none")
    if imp not in IMPROVEMENTS:
        raise TableError(f"--improvement: unknown scale '{imp}'; use "
                         f"{', '.join(IMPROVEMENTS)}")
    if imp != "none":
        if table.base_year is None:
            raise TableError(f"--improvement {imp}: generational improvement needs a table "
                             f"with a base year (pub2010); '{mortality}' has none: use "
                             f"--improvement none")
        table.improvement = load_improvement(imp)
    return table
