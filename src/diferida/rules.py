"""The rules file: every number and date of Article 19, with its citation.

A rules file is TOML (see `rules/article19.toml`). A variant names a `base`
and overrides only what differs (`route_overrides`, `meta`), so SPEC §2's
stricter reading of 19.4 is a one-line change. `Rules.version` is a hash of
the resolved content: two files that say the same thing have the same
version, and any change to a number changes it.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import tomllib
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from .fields import SERVICE_PLACES

DEFAULT_RULES = "article19"
REGIMES = ("pre1990", "new")
GROUPS = ("general", "police", "firefighter")
CITATION_KEYS = ("conditions_pre1990", "conditions_new", "start", "retirement_annuity")
# Sections added to the rules file after the first release. A rules table
# stored with an older determination lacks them; it is read with these
# sections of the current built-in base, so that it can still be reproduced
# (its version, the hash of what was stored, is unchanged).
LATER_SECTIONS = (("regime", "laws"), ("citations", "retirement_annuity"),
                  ("decisions",), ("later_laws",), ("data_checks",))


class RulesError(ValueError):
    """A rules file that cannot be used; the message names the file and key.

    `section`, `route` and `key` say where in the rules table the problem is,
    so that the loader can add the line of the file that holds it."""

    def __init__(self, message: str, *, section: str | None = None, route: str | None = None,
                 key: str | None = None):
        super().__init__(message)
        self.section, self.route, self.key = section, route, key


@dataclass(frozen=True)
class Route:
    id: str
    citation: str
    regimes: tuple[str, ...]
    groups: tuple[str, ...]
    age: int
    min_service: Decimal
    max_service: Decimal | None  # exclusive upper bound, when the rule has one
    # where a limit to some regimes comes from when it is not the article's own
    # text (a variant's reading of the statute); None: the route's own rule
    regimes_source: str | None = None


@dataclass(frozen=True)
class Bracket:
    threshold: Decimal
    rate: Decimal


@dataclass(frozen=True)
class Scale:
    citation: str
    brackets: tuple[Bracket, ...]


@dataclass(frozen=True)
class RegimeReading:
    """SPEC §2 Decision: which regimes Regla 19.4 serves, and the doubt."""

    citation: str
    routes: tuple[str, ...]
    reading: str  # both_regimes | pre1990_only
    statute_pre1990: str
    statute_new: str
    other_reading: str  # the rules set with the other reading


@dataclass(frozen=True)
class LaterLaw:
    """Act 3-2013, which this project does not apply (SPEC §9), and the
    points at which a determination warns that it may touch a case (§7)."""

    name: str
    citation: str
    accruals_frozen_after: date
    ages_changed_after: date
    minimum_monthly: Decimal  # dollars a month


@dataclass(frozen=True)
class Rules:
    name: str
    title: str
    description: str
    new_participant_after: date
    new_participant_citation: str
    not_covered_from: date
    not_covered_citation: str
    deferred_right_cutoff: date
    deferred_right_citation: str
    routes: tuple[Route, ...]
    amount: dict[str, Scale]  # by regime
    minimum_rate: Decimal
    minimum_citation: str
    citations: dict[str, str]  # conditions_pre1990, conditions_new, start, retirement_annuity
    laws: dict[str, str]  # the law of each regime (pre1990, new) and of not_covered
    reading_19_4: RegimeReading
    act_3_2013: LaterLaw
    act_106_2017: str
    min_entry_age: int  # data check: a first entry before this birthday is implausible
    resolved: dict[str, Any]  # the resolved content, as stored with a determination
    version: str
    # an example reform that no law says ([meta] illustrative = true): never
    # offered where determinations are made for people (the web page)
    illustrative: bool = False

    @property
    def rate_scale(self) -> int:
        """10**k, k the most decimal places of any rate: rates × rate_scale are
        integers, so amounts are exact integer fractions."""
        rates = [b.rate for s in self.amount.values() for b in s.brackets] + [self.minimum_rate]
        places = max(max(-r.normalize().as_tuple().exponent, 0) for r in rates)
        return 10**places

    def route(self, route_id: str) -> Route:
        for r in self.routes:
            if r.id == route_id:
                return r
        raise KeyError(route_id)


def _dec(value: Any, where: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise RulesError(f"{where}: write numbers as strings or integers, got {value!r}")
    try:
        d = Decimal(str(value))
    except InvalidOperation as exc:
        raise RulesError(f"{where}: not a number: {value!r}") from exc
    if d < 0:
        raise RulesError(f"{where}: must not be negative: {value!r}")
    return d


def _years(value: Any, where: str) -> Decimal:
    """Years of service in a rules file: at most the precision service is
    read with (SPEC §1), so every comparison with it is exact."""
    d = _dec(value, where)
    if -d.normalize().as_tuple().exponent > SERVICE_PLACES:
        raise RulesError(f"{where}: {value!r} has more than {SERVICE_PLACES} decimal places, "
                         "finer than service is measured")
    return d


def _date(value: Any, where: str) -> date:
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError as exc:
        raise RulesError(f"{where}: not a YYYY-MM-DD date: {value!r}") from exc


def _need(table: dict, key: str, where: str) -> Any:
    if key not in table:
        raise RulesError(f"{where}: missing '{key}'")
    return table[key]


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError as exc:
        raise RulesError(f"rules file not found: {path}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise RulesError(f"{path}: not valid TOML: {exc}") from exc


def builtin_names() -> list[str]:
    folder = resources.files("diferida") / "rules"
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def illustrative(name: str) -> bool:
    """Whether a built-in rules set is an illustrative reform, not law."""
    try:
        return load_rules(name).illustrative
    except RulesError:
        return False


def _builtin_path(name: str) -> Path:
    return Path(str(resources.files("diferida") / "rules" / f"{name}.toml"))


def _deep_merge(into: dict[str, Any], changes: dict[str, Any]) -> None:
    """A variant changes only the keys it names, at any depth (lists, such as
    a scale's brackets, are replaced whole)."""
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _deep_merge(into[key], value)
        else:
            into[key] = copy.deepcopy(value)


ROUTE_KEYS = ("citation", "regimes", "groups", "age", "min_service", "max_service",
              "regimes_source")


def _unknown_keys(changes: dict[str, Any], base: dict[str, Any], path: tuple[str, ...],
                  origin: str) -> None:
    """A reform changes what its base has: a key the base lacks (a typo such
    as `[amout.new]`) would change nothing and is refused. `meta` is free."""
    for key, value in changes.items():
        where = (*path, key)
        if where[0] == "meta":
            continue
        if not isinstance(base, dict) or key not in base:
            dotted = ".".join(where)
            table = isinstance(value, dict)
            raise RulesError(f"{origin}: '{dotted}' is not in the base rules, so changing it "
                             "would change nothing (is it misspelt?)",
                             section=dotted if table else (".".join(path) or None),
                             key=None if table else key)
        if isinstance(value, dict) and isinstance(base[key], dict):
            _unknown_keys(value, base[key], where, origin)


def _resolve(raw: dict[str, Any], origin: str, seen: tuple[str, ...] = ()) -> dict[str, Any]:
    """Apply `base` and `route_overrides` so the result is a complete rules table."""
    if "base" not in raw:
        if "routes" not in raw:
            raise RulesError(
                f"{origin}: names no base: a reform file starts with base = \"{DEFAULT_RULES}\" "
                "(the built-in rules it changes), or is a complete rules file with its routes",
                key="base")
        return raw
    base_name = raw["base"]
    if base_name in seen:
        raise RulesError(f"{origin}: circular base {base_name!r}", key="base")
    if base_name not in builtin_names():
        raise RulesError(f"{origin}: unknown base rules {base_name!r}", key="base")
    base = _resolve(_read_toml(_builtin_path(base_name)), base_name, seen + (base_name,))
    merged = copy.deepcopy(base)
    changes = {k: v for k, v in raw.items() if k not in ("base", "route_overrides")}
    _unknown_keys(changes, base, (), origin)
    _deep_merge(merged, changes)
    overrides = raw.get("route_overrides", {})
    ids = [r.get("id") for r in merged.get("routes", [])]
    for route_id, changes in overrides.items():
        if route_id not in ids:
            raise RulesError(f"{origin}: route_overrides names unknown route {route_id!r}",
                             route=route_id)
        if not isinstance(changes, dict):
            raise RulesError(f"{origin}: route_overrides.{route_id!r} must be a table",
                             route=route_id)
        for key in changes:
            if key not in ROUTE_KEYS:
                raise RulesError(
                    f"{origin}: route_overrides.\"{route_id}\".{key}: a route has no "
                    f"'{key}'; a reform may change {', '.join(ROUTE_KEYS)}",
                    route=route_id, key=key)
        merged["routes"][ids.index(route_id)].update(changes)
    return merged


def _canonical(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _canonical(v) for k, v in sorted(obj.items())}
    if isinstance(obj, list):
        return [_canonical(v) for v in obj]
    if isinstance(obj, date):
        return obj.isoformat()
    return obj


def _with_later_sections(resolved: dict[str, Any]) -> dict[str, Any]:
    """`resolved`, with each of LATER_SECTIONS it lacks taken from the built-in base."""
    # a section inside another is filled only where that one exists, so a
    # table without it is still refused for what it lacks
    missing = [path for path in LATER_SECTIONS
               if not _has(resolved, path) and _has(resolved, path[:-1])]
    if not missing:
        return resolved
    base = _canonical(_resolve(_read_toml(_builtin_path(DEFAULT_RULES)), DEFAULT_RULES))
    out = copy.deepcopy(resolved)
    for path in missing:
        into, src = out, base
        for key in path[:-1]:
            into, src = into.setdefault(key, {}), src[key]
        into[path[-1]] = copy.deepcopy(src[path[-1]])
    return out


def _has(table: dict[str, Any], path: tuple[str, ...]) -> bool:
    for key in path:
        if not isinstance(table, dict) or key not in table:
            return False
        table = table[key]
    return True


def _int(value: Any, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise RulesError(f"{where}: must be a whole number, got {value!r}")
    return value


KNOWN_KEYS = ("min_service", "max_service", "regimes_source", "threshold", "rate", "age",
              "regimes", "groups", "citation", "new_participant_after", "not_covered_from",
              "deferred_right_cutoff", "brackets", "value", "id", "name", "reading",
              "routes", "min_entry_age")


def _tagged(exc: RulesError, route: str | None = None) -> RulesError:
    """The error, with where it is in the rules table guessed from its message
    when the raiser did not say (the loader turns that into a line)."""
    text = str(exc)
    if exc.route is None:
        exc.route = route
    if exc.section is None:
        m = re.search(r"\[([a-z0-9_.]+)\]", text)
        if m:
            exc.section = m.group(1)
    if exc.key is None:
        m = re.search(r"missing '(\w+)'", text)
        if m:
            exc.key = m.group(1)
        else:
            for k in KNOWN_KEYS:
                if re.search(rf"\b{k}\b", text):
                    exc.key = k
                    break
    if exc.section and exc.key in ("new_participant_after", "not_covered_from",
                                   "deferred_right_cutoff"):
        exc.section, exc.key = f"{exc.section}.{exc.key}", "value"
    return exc


def rules_from_resolved(resolved: dict[str, Any], origin: str = "rules") -> Rules:
    """Build Rules from a resolved table (a rules file's content, or the copy
    stored with a determination)."""
    resolved = _canonical(resolved)
    digest = hashlib.sha256(
        json.dumps(resolved, sort_keys=True, ensure_ascii=False).encode()
    ).hexdigest()
    stored = resolved
    resolved = _with_later_sections(resolved)
    meta = _need(resolved, "meta", origin)
    regime = _need(resolved, "regime", origin)
    w = f"{origin} [regime]"
    after = _need(regime, "new_participant_after", w)
    notcov = _need(regime, "not_covered_from", w)
    cutoff = _need(regime, "deferred_right_cutoff", w)

    routes = []
    for i, r in enumerate(_need(resolved, "routes", origin)):
        rw = f"{origin} routes[{i}]"
        try:
            routes.append(_route(r, rw))
        except RulesError as exc:
            raise _tagged(exc, route=str(r.get("id", "")) or None) from None
    if not routes:
        raise RulesError(f"{origin}: no routes")
    try:
        return _rest(resolved, stored, digest, origin, meta, regime, w, after, notcov, cutoff,
                     tuple(routes))
    except RulesError as exc:
        raise _tagged(exc) from None


def _route(r: dict[str, Any], rw: str) -> Route:
    regimes = tuple(_need(r, "regimes", rw))
    groups = tuple(_need(r, "groups", rw))
    if not set(regimes) <= set(REGIMES) or not regimes:
        raise RulesError(f"{rw}: regimes must be among {REGIMES}")
    if not set(groups) <= set(GROUPS) or not groups:
        raise RulesError(f"{rw}: groups must be among {GROUPS}")
    age = _need(r, "age", rw)
    if not isinstance(age, int) or isinstance(age, bool) or age < 0:
        raise RulesError(f"{rw}: age must be a whole number of years")
    return Route(
        id=str(_need(r, "id", rw)),
        citation=str(_need(r, "citation", rw)),
        regimes=regimes,
        groups=groups,
        age=age,
        min_service=_years(_need(r, "min_service", rw), f"{rw}.min_service"),
        max_service=(
            _years(r["max_service"], f"{rw}.max_service") if "max_service" in r else None
        ),
        regimes_source=str(r["regimes_source"]) if "regimes_source" in r else None,
    )


def _rest(resolved: dict[str, Any], stored: dict[str, Any], digest: str, origin: str,
          meta: dict[str, Any], regime: dict[str, Any], w: str, after: dict[str, Any],
          notcov: dict[str, Any], cutoff: dict[str, Any], routes: tuple[Route, ...]) -> Rules:
    amount = {}
    for reg in REGIMES:
        s = _need(_need(resolved, "amount", origin), reg, f"{origin} [amount]")
        sw = f"{origin} [amount.{reg}]"
        brackets = tuple(
            Bracket(
                threshold=_years(_need(b, "threshold", sw), f"{sw}.threshold"),
                rate=_dec(_need(b, "rate", sw), f"{sw}.rate"),
            )
            for b in _need(s, "brackets", sw)
        )
        for b in brackets:
            if b.rate > 1:
                raise RulesError(f"{sw}.rate: '{b.rate}' is above 1 (the whole compensation a "
                                 "year): not a pension rate")
        if not brackets or brackets[0].threshold != 0:
            raise RulesError(f"{sw}: the first bracket must start at threshold 0")
        if any(a.threshold >= b.threshold for a, b in zip(brackets, brackets[1:])):
            raise RulesError(f"{sw}: thresholds must increase")
        amount[reg] = Scale(citation=str(_need(s, "citation", sw)), brackets=brackets)

    cw = f"{origin} [citations]"
    cites = _need(resolved, "citations", origin)
    citations = {k: str(_need(cites, k, cw)) for k in CITATION_KEYS}
    minimum = _need(resolved, "minimum", origin)
    if _dec(_need(minimum, "rate", f"{origin} [minimum]"), "minimum.rate") > 1:
        raise RulesError(f"{origin} [minimum].rate: above 1 (the whole compensation)")
    laws_w = f"{origin} [regime.laws]"
    laws_t = _need(regime, "laws", w)
    laws = {k: str(_need(laws_t, k, laws_w)) for k in (*REGIMES, "not_covered")}
    dw = f"{origin} [decisions.route_19_4_regimes]"
    d194 = _need(_need(resolved, "decisions", origin), "route_19_4_regimes", dw)
    reading = RegimeReading(
        citation=str(_need(d194, "citation", dw)),
        routes=tuple(str(x) for x in _need(d194, "routes", dw)),
        reading=str(_need(d194, "reading", dw)),
        statute_pre1990=str(_need(d194, "statute_pre1990", dw)),
        statute_new=str(_need(d194, "statute_new", dw)),
        other_reading=str(_need(d194, "other_reading", dw)),
    )
    if reading.reading not in ("both_regimes", "pre1990_only"):
        raise RulesError(f"{dw}.reading: must be both_regimes or pre1990_only")
    ids = {r.id for r in routes}
    if not set(reading.routes) <= ids:
        raise RulesError(f"{dw}.routes: unknown routes {sorted(set(reading.routes) - ids)}")
    later = _need(resolved, "later_laws", origin)
    lw = f"{origin} [later_laws.act_3_2013]"
    a3 = _need(later, "act_3_2013", lw)
    act_3_2013 = LaterLaw(
        name=str(_need(a3, "name", lw)),
        citation=str(_need(a3, "citation", lw)),
        accruals_frozen_after=_date(_need(a3, "accruals_frozen_after", lw),
                                    f"{lw}.accruals_frozen_after"),
        ages_changed_after=_date(_need(a3, "ages_changed_after", lw), f"{lw}.ages_changed_after"),
        minimum_monthly=_dec(_need(a3, "minimum_monthly", lw), f"{lw}.minimum_monthly"),
    )
    a106 = _need(later, "act_106_2017", f"{origin} [later_laws]")
    checks = _need(resolved, "data_checks", origin)
    name = str(_need(meta, "name", f"{origin} [meta]"))
    return Rules(
        name=name,
        title=str(meta.get("title", "")),
        description=str(meta.get("description", "")),
        new_participant_after=_date(_need(after, "value", w), f"{w}.new_participant_after"),
        new_participant_citation=str(_need(after, "citation", w)),
        not_covered_from=_date(_need(notcov, "value", w), f"{w}.not_covered_from"),
        not_covered_citation=str(_need(notcov, "citation", w)),
        deferred_right_cutoff=_date(_need(cutoff, "value", w), f"{w}.deferred_right_cutoff"),
        deferred_right_citation=str(_need(cutoff, "citation", w)),
        routes=routes,
        amount=amount,
        minimum_rate=_dec(_need(minimum, "rate", f"{origin} [minimum]"), "minimum.rate"),
        minimum_citation=str(_need(minimum, "citation", f"{origin} [minimum]")),
        citations=citations,
        laws=laws,
        reading_19_4=reading,
        act_3_2013=act_3_2013,
        act_106_2017=str(_need(a106, "name", f"{origin} [later_laws.act_106_2017]")),
        min_entry_age=_int(_need(checks, "min_entry_age", f"{origin} [data_checks]"),
                           f"{origin} [data_checks].min_entry_age"),
        resolved=stored,
        version=f"{name}@{digest[:12]}",
        illustrative=meta.get("illustrative", False) is True,
    )


@lru_cache(maxsize=32)
def _load_cached(key: str) -> Rules:
    path = Path(key)
    if key in builtin_names():
        path, origin = _builtin_path(key), key
    elif path.suffix == ".toml" or path.exists():
        origin = str(path)
    else:
        raise RulesError(
            f"unknown rules {key!r}: give a file path or one of {', '.join(builtin_names())}"
        )
    raw = _read_toml(path)
    try:
        return rules_from_resolved(_resolve(raw, origin), origin)
    except RulesError as exc:
        raise _placed(exc, path, origin) from None


_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def line_of(text: str, *, section: str | None = None, route: str | None = None,
            key: str | None = None, value: str | None = None) -> int | None:
    """The line (1-based) of a rules file's text that holds `key` of `route`
    (a `[[routes]]` block with that id, or `[route_overrides."id"]`) or of
    `section` (a table header such as `amount.new`); the table's header
    when the key is missing from it; None when the file does not say it."""
    lines = text.splitlines()
    blocks: list[tuple[int, str, int]] = []  # (first line index, header, end index)
    start, header = 0, ""
    for i, line in enumerate(lines):
        m = _HEADER.match(line)
        if m:
            blocks.append((start, header, i))
            start, header = i, m.group(1).replace(" ", "")
    blocks.append((start, header, len(lines)))

    def find_key(lo: int, hi: int) -> int | None:
        if key is None:
            return None
        pattern = re.compile(rf"(^|[\s{{,]){re.escape(key)}\s*=")
        hits = [i for i in range(lo, hi) if pattern.search(lines[i].split("#")[0])]
        if value is not None:
            exact = [i for i in hits if value in lines[i]]
            hits = exact or hits
        return hits[0] if hits else None

    def quoted(h: str) -> str:
        return h.replace('"', "").replace("'", "")

    chosen: list[tuple[int, int]] = []
    if route is not None:
        for lo, h, hi in blocks:
            body = "\n".join(lines[lo:hi])
            if (h.startswith("route_overrides") and quoted(h) == f"route_overrides.{route}") or (
                    h == "routes" and re.search(rf'^\s*id\s*=\s*"{re.escape(route)}"', body,
                                                re.M)):
                chosen.append((lo, hi))
    elif section is not None:
        chosen = [(lo, hi) for lo, h, hi in blocks if quoted(h) == section] or [
            (lo, hi) for lo, h, hi in blocks if quoted(h).startswith(section + ".")]
        if not chosen and key is not None:  # a dotted key under a parent table
            chosen = [(lo, hi) for lo, h, hi in blocks if section.startswith(quoted(h))]
    elif key is not None:
        chosen = [(0, blocks[0][2])] if blocks else []  # top-level keys: before any table
    for lo, hi in chosen:
        hit = find_key(lo, hi)
        if hit is not None:
            return hit + 1
    if chosen and (route is not None or section is not None):
        return chosen[0][0] + 1
    return None


def _placed(exc: RulesError, path: Path, origin: str) -> RulesError:
    """The error with the line of the file that holds the problem, when it is
    in that file ("rules.toml, line 4: ...")."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return exc
    m = re.search(r"'([^']*)'", str(exc).split(":", 1)[-1])
    line = line_of(text, section=exc.section, route=exc.route, key=exc.key,
                   value=m.group(1) if m else None)
    if line is None and exc.key == "base":
        line = 1
    if line is None:
        return exc
    reason = str(exc)
    if reason.startswith(origin):
        reason = reason[len(origin):].lstrip(" :")
    out = RulesError(f"{path}, line {line}: {reason}", section=exc.section, route=exc.route,
                     key=exc.key)
    out.line = line  # type: ignore[attr-defined]
    return out


def load_rules(rules: str | Path | Rules | None = None) -> Rules:
    """Rules by built-in name ("article19", "article19-strict-19_4"), by path
    to a TOML file, or the default when None."""
    if isinstance(rules, Rules):
        return rules
    key = DEFAULT_RULES if rules is None else str(rules)
    if isinstance(rules, Path):
        key = str(rules.resolve())
    return _load_cached(key)
