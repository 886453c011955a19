"""The differences between two rule sets, line by line, with the citation of
each changed line (`diferida rules diff A B`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..rules import Rules

# fields of a rule set that say nothing about the law (names, titles, comments)
SKIP = {("meta",)}


@dataclass(frozen=True)
class Change:
    key: str  # where, as a dotted path: routes.19.2.age, amount.new.brackets
    a: Any
    b: Any
    citation: str  # of the changed line, as the rules file gives it (B's, else A's)


def _flat(resolved: dict[str, Any]) -> dict[str, tuple[Any, str]]:
    """Every value of a resolved rules table by dotted key, with its citation:
    routes by id, each scale's brackets as one value."""
    out: dict[str, tuple[Any, str]] = {}
    for r in resolved.get("routes", []):
        rid = str(r.get("id"))
        for k, v in r.items():
            if k != "id":
                out[f"routes.{rid}.{k}"] = (v, str(r.get("citation", "")))

    def walk(prefix: str, table: Any, citation: str) -> None:
        if isinstance(table, dict):
            cite = str(table.get("citation", citation)) if "citation" in table else citation
            for k, v in table.items():
                walk(f"{prefix}.{k}" if prefix else k, v, cite)
        else:
            out[prefix] = (table, citation)

    post = resolved.get("post_start")
    if isinstance(post, dict):
        # a relief's adjustments one by one, named by kind and date (the
        # second of a kind on one date "#2"; an adjustment moved to another
        # date is one gone and one new), each line with its own citation; a
        # COLA's series as one value, fiscal year by fiscal year
        seen: dict[str, int] = {}
        for a in post.get("adjustments", []):
            name = f"{a.get('kind')} {a.get('date')}"
            seen[name] = seen.get(name, 0) + 1
            if seen[name] > 1:
                name += f" #{seen[name]}"
            for k, v in a.items():
                if k in ("kind", "date"):
                    continue
                if k == "series" and isinstance(v, list):
                    v = ", ".join(f"FY{y.get('year')} {y.get('rate')}" for y in v)
                out[f"post_start.{name}.{k}"] = (v, str(a.get("citation", "")))
        for k in ("citation", "description"):
            if k in post:
                out[f"post_start.{k}"] = (post[k], str(post.get("citation", "")))
    for key, table in resolved.items():
        if key in ("routes", "post_start") or (key,) in SKIP:
            continue
        walk(key, table, "")
    return out


def _show(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, list):
        if v and isinstance(v[0], dict):
            return "; ".join(", ".join(f"{k} {x}" for k, x in item.items()) for item in v)
        return ", ".join(str(x) for x in v)
    return str(v)


def rules_diff(a: Rules, b: Rules) -> list[Change]:
    fa, fb = _flat(a.resolved), _flat(b.resolved)
    changes = []
    for key in list(dict.fromkeys([*fa, *fb])):
        va, ca = fa.get(key, (None, ""))
        vb, cb = fb.get(key, (None, ""))
        if va != vb:
            changes.append(Change(key, va, vb, cb or ca))
    return changes


def diff_rows(a: Rules, b: Rules) -> list[tuple[str, str, str, str]]:
    return [(c.key, _show(c.a), _show(c.b), c.citation) for c in rules_diff(a, b)]
