"""The rules file: every number and date of Article 19, with its citation.

A rules file is TOML (see `rules/article19.toml`). A variant names a `base`
and overrides only what differs (`route_overrides`, `meta`), so rules §2's
stricter reading of 19.4 is a one-line change. `Rules.version` is a hash of
the resolved content: two files that say the same thing have the same
version, and any change to a number changes it.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .bounded import BadToml, Refused, load_toml, read_bounded, shown
from .errors import DiferidaError
from .fields import GROUPS, REGIMES  # noqa: F401  (re-exported)
from .relief import Adjustment, Relief

if TYPE_CHECKING:
    from . import rules_schema as schema

DEFAULT_RULES = "article19"
MAX_FILE_BYTES = 1 << 20  # a rules file is a page or two of TOML
CITATION_KEYS = ("conditions_pre1990", "conditions_new", "start", "retirement_annuity",
                 "retirement_annuity_new")
# Sections added to the rules file after the first release. A rules table
# stored with an older determination lacks them; it is read with these
# sections of the current built-in base, so that it can still be reproduced
# (its version, the hash of what was stored, is unchanged).
LATER_SECTIONS = (("regime", "laws"), ("regime", "hybrid_program_from"),
                  ("citations", "retirement_annuity"),
                  ("citations", "retirement_annuity_new"),
                  ("decisions",), ("later_laws",), ("data_checks",))


class RulesError(DiferidaError, ValueError):
    """A rules file that cannot be used; the message names the file and key.

    `section`, `route` and `key` say where in the rules table the problem is,
    so that the loader can add the line of the file that holds it; `item`,
    a table of an array of tables (`("post_start.adjustments", 2)`: the
    third `[[post_start.adjustments]]`)."""

    def __init__(self, message: str, *, section: str | None = None, route: str | None = None,
                 key: str | None = None, item: tuple[str, int] | None = None):
        super().__init__(message)
        self.section, self.route, self.key, self.item = section, route, key, item
        self.option = "--rules"  # the option that named the file (--prior-rules: the runner's)


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
    """rules §2 Decision: which regimes Regla 19.4 serves, and the doubt."""

    citation: str
    routes: tuple[str, ...]
    reading: str  # both_regimes | pre1990_only
    statute_pre1990: str
    statute_new: str
    other_reading: str  # the rules set with the other reading


@dataclass(frozen=True)
class LaterLaw:
    """Act 3-2013, which this project does not apply (rules §9), and the
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
    hybrid_program_from: date  # rules §2: said in words only (Act 3-2013's program)
    hybrid_program_citation: str
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
    # post-start adjustments ([post_start]: a relief), applied by the
    # projection, never by a determination (relief.py)
    relief: Relief | None = None

    @property
    def rate_scale(self) -> int:
        """10**k, k the most decimal places of any rate: rates × rate_scale are
        integers, so amounts are exact integer fractions."""
        from .rules_schema import decimal_places  # loaded with the table it checked

        rates = [b.rate for s in self.amount.values() for b in s.brackets] + [self.minimum_rate]
        return 10 ** max(decimal_places(r) for r in rates)

    def route(self, route_id: str) -> Route:
        for r in self.routes:
            if r.id == route_id:
                return r
        raise KeyError(route_id)


def _read_toml(path: Path) -> dict[str, Any]:
    """A rules file's TOML; every way it cannot be read is a RulesError."""
    try:
        data = read_bounded(path, MAX_FILE_BYTES)
    except Refused as exc:
        if exc.reason == "no_file":
            raise RulesError(f"rules file not found: {path}") from None
        if exc.reason == "directory":
            raise RulesError(f"{path}: a folder, not a rules file") from None
        if exc.reason == "too_big":
            raise RulesError(f"{path}: larger than {MAX_FILE_BYTES // 1024} KiB: not a rules "
                             "file") from None
        raise RulesError(f"{path}: {exc.text()}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise RulesError(f"{path}, line {line}: not UTF-8 text (save the file as UTF-8)"
                         ) from exc
    try:
        return load_toml(text)
    except BadToml as exc:
        where = f"{path}, line {exc.line}" if exc.line else str(path)
        if exc.reason == "nested":
            raise RulesError(f"{where}: nested too deeply to be a rules file") from None
        raise RulesError(f"{where}: not valid TOML: {exc.text().split(': ', 1)[-1]}") from None


def builtin_names() -> list[str]:
    """The built-in rules sets: the package's rules/*.toml, listed once."""
    return list(_builtin_names())


@lru_cache(maxsize=1)
def _builtin_names() -> tuple[str, ...]:
    # every rules lookup asks; the package's files do not change while it runs
    folder = resources.files("diferida") / "rules"
    return tuple(sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml")))


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
        if where[0] == "meta" or where == ("post_start",) and "post_start" not in base:
            continue  # a relief is added whole to a base that has none
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
    if not isinstance(overrides, dict):
        raise RulesError(f"{origin}: route_overrides must be tables, one per route "
                         '([route_overrides."19.2"]), not a list or a value',
                         key="route_overrides")
    ids = [r.get("id") if isinstance(r, dict) else None for r in merged.get("routes", [])]
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


def _location(loc: tuple[Any, ...], table: Any) -> tuple[str, dict[str, Any]]:
    """An error's place in the rules table: its words ("route "19.2", age") and
    where the loader looks for its line (section, route, key)."""
    node, nodes = table, []
    for part in loc:  # the values along the location, where they exist
        node = (node.get(part) if isinstance(node, dict) else
                node[part] if isinstance(node, list) and isinstance(part, int)
                and 0 <= part < len(node) else None)
        nodes.append(node)
    where: dict[str, Any] = {"section": None, "route": None, "key": None, "item": None}
    if len(loc) >= 2 and loc[0] == "routes" and isinstance(loc[1], int):
        route = nodes[1].get("id") if isinstance(nodes[1], dict) else None
        route = route if isinstance(route, str) else None
        rest = [str(p) for p in loc[2:]]
        where["route"] = route
        where["key"] = rest[0] if rest else None
        name = f'route "{route}"' if route else f"routes[{loc[1]}]"
        return ", ".join([name, *rest[:1]]) + "".join(f".{p}" for p in rest[1:]), where
    words = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    ints = [i for i, p in enumerate(loc) if isinstance(p, int)]
    if ints:  # inside a list of tables (a scale's brackets): the table holding the list
        first = ints[0]
        where["section"] = ".".join(map(str, loc[:first - 1])) or None
        after = [p for p in loc[first:] if isinstance(p, str)]
        where["key"] = after[0] if after else str(loc[first - 1])
        where["item"] = (".".join(map(str, loc[:first])), loc[first])
    elif loc and isinstance(nodes[-1], dict):  # a whole table
        where["section"] = ".".join(map(str, loc))
    elif loc:
        where["section"] = ".".join(map(str, loc[:-1])) or None
        where["key"] = str(loc[-1])
    return words, where


def _validated(table: dict[str, Any], origin: str) -> schema.RulesTable:
    """The table checked against the schema; the first problem as a RulesError
    that says where it is. The schema (and pydantic) is loaded here, the first
    time a rules table is read: `diferida --help` and the like never load it."""
    from pydantic import ValidationError

    from . import rules_schema as schema

    try:
        return schema.RulesTable.model_validate(table)
    except ValidationError as exc:
        # a key that is not in the schema first: a misspelt key is also a missing one
        errors = sorted(exc.errors(include_url=False),
                        key=lambda e: e["type"] != "extra_forbidden")
        first = errors[0]
        loc = tuple(first["loc"])
        ctx = first.get("ctx") or {}
        if first["type"] == "rules" and isinstance(ctx.get("adjustment"), int):
            # a check across a relief's adjustments: the adjustment it is about
            loc = ("post_start", "adjustments", ctx["adjustment"])
        if first["type"] == "rules" and isinstance(ctx.get("key"), str):
            loc = (*loc, ctx["key"])  # the key of the table that the check is about
        words, where = _location(loc, table)
        if first["type"] in ("missing", "extra_forbidden"):  # the message names the key
            words, _ = _location(loc[:-1], table)
        message = schema.message_of(first)
        rest = errors[1:]
        if first["type"] == "extra_forbidden":  # and the key it may stand for
            parent = tuple(first["loc"])[:-1]
            missing = [e for e in rest if e["type"] == "missing"
                       and tuple(e["loc"])[:-1] == parent]
            if missing:
                message += f"; {schema.message_of(missing[0])}"
                rest.remove(missing[0])
        more = f" (and {len(rest)} more)" if rest else ""
        value = first.get("input")
        err = RulesError(f"{origin}: {words + ': ' if words else ''}{message}{more}", **where)
        err.value = value if isinstance(value, str) else None  # type: ignore[attr-defined]
        raise err from None


def rules_from_resolved(resolved: dict[str, Any], origin: str = "rules") -> Rules:
    """Build Rules from a resolved table (a rules file's content, or the copy
    stored with a determination), checked against `rules_schema`."""
    if not isinstance(resolved, dict):
        raise RulesError(f"{origin}: not a rules table")
    try:
        resolved = _canonical(resolved)
        stored = resolved
        table = _validated(_with_later_sections(resolved), origin)
        digest = hashlib.sha256(
            json.dumps(stored, sort_keys=True, ensure_ascii=False).encode()
        ).hexdigest()
    except RecursionError:
        raise RulesError(f"{origin}: nested too deeply to be a rules table") from None
    return _rules(table, stored, digest)


def _rules(t: schema.RulesTable, stored: dict[str, Any], digest: str) -> Rules:
    r = t.regime
    d = t.decisions.route_19_4_regimes
    a3 = t.later_laws.act_3_2013
    return Rules(
        name=t.meta.name,
        title=t.meta.title,
        description=t.meta.description,
        new_participant_after=r.new_participant_after.value,
        new_participant_citation=r.new_participant_after.citation,
        not_covered_from=r.not_covered_from.value,
        not_covered_citation=r.not_covered_from.citation,
        hybrid_program_from=r.hybrid_program_from.value,
        hybrid_program_citation=r.hybrid_program_from.citation,
        deferred_right_cutoff=r.deferred_right_cutoff.value,
        deferred_right_citation=r.deferred_right_cutoff.citation,
        routes=tuple(
            Route(id=x.id, citation=x.citation, regimes=tuple(x.regimes),
                  groups=tuple(x.groups), age=x.age, min_service=x.min_service,
                  max_service=x.max_service, regimes_source=x.regimes_source)
            for x in t.routes),
        amount={reg: Scale(citation=s.citation,
                           brackets=tuple(Bracket(b.threshold, b.rate) for b in s.brackets))
                for reg, s in (("pre1990", t.amount.pre1990), ("new", t.amount.new))},
        minimum_rate=t.minimum.rate,
        minimum_citation=t.minimum.citation,
        citations={k: getattr(t.citations, k) for k in CITATION_KEYS},
        laws={"pre1990": r.laws.pre1990, "new": r.laws.new, "not_covered": r.laws.not_covered},
        reading_19_4=RegimeReading(citation=d.citation, routes=tuple(d.routes),
                                   reading=d.reading, statute_pre1990=d.statute_pre1990,
                                   statute_new=d.statute_new, other_reading=d.other_reading),
        act_3_2013=LaterLaw(name=a3.name, citation=a3.citation,
                            accruals_frozen_after=a3.accruals_frozen_after,
                            ages_changed_after=a3.ages_changed_after,
                            minimum_monthly=a3.minimum_monthly),
        act_106_2017=t.later_laws.act_106_2017.name,
        min_entry_age=t.data_checks.min_entry_age,
        resolved=stored,
        version=f"{t.meta.name}@{digest[:12]}",
        illustrative=t.meta.illustrative,
        relief=_relief(t.post_start) if t.post_start is not None else None,
    )


def _relief(p: schema.PostStart) -> Relief:
    return Relief(p.citation, tuple(
        Adjustment(kind=a.kind, date=a.date, citation=a.citation,
                   who=a.who or ("in_pay" if a.kind in ("cola", "one_time") else "all"),
                   rate=a.rate, cap_monthly=a.cap_monthly, minimum_monthly=a.minimum_monthly,
                   amount=a.amount, from_monthly=a.from_monthly,
                   below_monthly=a.below_monthly,
                   series=tuple((y.year, y.rate) for y in a.series or ()),
                   after_series=a.after_series, description=a.description)
        for a in p.adjustments), p.description, tuple(p.bands_monthly or ()))


SERIES_MAX_BYTES = 1 << 16


def _inline_series(raw: dict[str, Any], path: Path) -> dict[str, Any]:
    """A COLA's `series_file = "rates.csv"` (a CSV `year,rate`, read from the
    rules file's folder, checked line by line) written into the table as its
    `series`: the rules' content, and so its version, holds the rates."""
    post = raw.get("post_start")
    adjustments = post.get("adjustments") if isinstance(post, dict) else None
    if not isinstance(adjustments, list):
        return raw
    for i, a in enumerate(adjustments):
        if not isinstance(a, dict) or "series_file" not in a:
            continue
        name = a.pop("series_file")

        def fail(what: str, i: int = i) -> RulesError:  # at the series_file line
            return RulesError(f"{path}: post_start.adjustments[{i}]{what}", section="post_start",
                              key="series_file", item=("post_start.adjustments", i))

        if "series" in a:
            raise fail(": a cola has a series or a series_file, not both")
        if not isinstance(name, str) or not name:
            raise fail(".series_file: must name a CSV file")
        try:
            a["series"] = _read_series(path.parent / name)
        except RulesError as exc:  # the CSV's own line, and the rules file's
            raise fail(f".series_file: {exc}") from None
    return raw


def _read_series(path: Path) -> list[dict[str, Any]]:
    def fail(line: int | None, what: str) -> RulesError:
        return RulesError(f"{shown(path, 120)}{f', line {line}' if line else ''}: {what}")

    try:
        data = read_bounded(path, SERIES_MAX_BYTES)
    except Refused as exc:
        if exc.reason == "too_big":
            raise fail(None, "too large to be a COLA series") from None
        raise fail(None, f"the COLA series cannot be read: {exc.text()}") from None
    try:
        lines = data.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError:
        raise fail(None, "not UTF-8 text") from None
    if not lines or [c.strip().lower() for c in lines[0].split(",")] != ["year", "rate"]:
        raise fail(1, "the header must be year,rate (a fiscal year and its COLA)")
    out: list[dict[str, Any]] = []
    for n, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        parts = [c.strip() for c in line.split(",")]
        if len(parts) != 2 or not re.fullmatch(r"[0-9]{4}", parts[0]):
            raise fail(n, "a line is a fiscal year (four digits) and its rate")
        if not re.fullmatch(r"[0-9]*\.?[0-9]+", parts[1]):
            raise fail(n, f"the rate '{parts[1][:20]}' is not a number (a rate is written "
                          "as a fraction of 1, not as a percentage)")
        year = int(parts[0])
        if out and year != out[-1]["year"] + 1:
            raise fail(n, f"FY{year} follows FY{out[-1]['year']}: the years run without gaps "
                          "or repeats")
        out.append({"year": year, "rate": parts[1]})
    if not out:
        raise fail(None, "no rates")
    return out


@lru_cache(maxsize=32)
def _load_cached(key: str, stamp: tuple[int, int] | None = None) -> Rules:
    """`stamp`: a file's modification time and size, so that a file changed
    since it was loaded is read again."""
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
        return rules_from_resolved(_resolve(_inline_series(raw, path), origin), origin)
    except RecursionError:
        raise RulesError(f"{path}: nested too deeply to be a rules file") from None
    except RulesError as exc:
        raise _placed(exc, path, origin) from None


_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def line_of(text: str, *, section: str | None = None, route: str | None = None,
            key: str | None = None, value: str | None = None,
            item: tuple[str, int] | None = None) -> int | None:
    """The line (1-based) of a rules file's text that holds `key` of `route`
    (a `[[routes]]` block with that id, or `[route_overrides."id"]`), of
    `item` (the n-th table of an array of tables, `[[post_start.adjustments]]`)
    or of `section` (a table header such as `amount.new`); the table's header
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

    def find_key(lo: int, hi: int, key: str | None = key) -> int | None:
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
    if item is not None:
        tables = [(lo, hi) for lo, h, hi in blocks if quoted(h) == item[0]]
        if 0 <= item[1] < len(tables):
            lo, hi = tables[item[1]]
            hit = find_key(lo, hi)
            if hit is None and key == "series":  # a COLA's series read from its series_file
                hit = find_key(lo, hi, "series_file")
            return (hit if hit is not None else lo) + 1
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
        text = read_bounded(path, MAX_FILE_BYTES).decode("utf-8")
    except (Refused, UnicodeDecodeError):
        return exc
    value = getattr(exc, "value", None)
    if value is None:
        m = re.search(r"'([^']*)'", str(exc).split(":", 1)[-1])
        value = m.group(1) if m else None
    line = line_of(text, section=exc.section, route=exc.route, key=exc.key, value=value,
                   item=exc.item)
    if line is None and exc.key == "base":
        line = 1
    if line is None:
        return exc
    reason = str(exc)
    if reason.startswith(origin):
        reason = reason[len(origin):].lstrip(" :")
    out = RulesError(f"{path}, line {line}: {reason}", section=exc.section, route=exc.route,
                     key=exc.key, item=exc.item)
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
    stamp = None
    if key not in builtin_names():
        try:
            st = Path(key).stat()
            stamp = (st.st_mtime_ns, st.st_size)
        except (OSError, ValueError):
            pass  # _load_cached says why it cannot be read
    return _load_cached(key, stamp)
