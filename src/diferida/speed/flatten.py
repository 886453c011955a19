"""Flattening a recorded plan for a few rows (`plan.Stages.replay`).

Polars plans each node of an expression with a copy of the expression below
it (kept for its messages), and checks each node's length when it runs, so
the cost of a deep expression grows faster than its number of nodes. On one
row that planning is most of the cost. Flattening splits each stage into
shallow sub-stages, mechanically and exactly:

* an element-wise sub-expression deeper than `MAX_HEIGHT` levels, or one
  that the stage repeats, is computed once into a hidden column of a
  sub-stage just before the stage, and read from there;
* only element-wise nodes move (a row's value depends on that row alone:
  arithmetic, comparisons, when/then, casts, the string, date and boolean
  functions listed below); anything else (ranges, uniqueness, hashing,
  aggregations) stays where it is, with everything above it;
* the stage's own outputs are all written together, last, so no
  sub-expression ever reads a column the stage replaces; the hidden columns
  are dropped at the end.

The expressions are taken apart and put together again through Polars' own
JSON form of an expression (`Expr.meta.serialize`, `Expr.deserialize`). A
stage that cannot be read that way is replayed whole. Large tables are
planned as recorded (`tests/test_prepared_plans.py` holds a few rows,
flattened, equal to the same rows planned as a large table).
"""

from __future__ import annotations

import io
import json
from typing import Any

import polars as pl

MAX_HEIGHT = 4  # levels of one expression kept together (3 to 5 cost about the same)
HIDDEN = "\x00flat"  # prefix of the hidden columns

# Element-wise functions, by Polars' JSON name of the function.
_ELEMENTWISE_FUNCTIONS = {
    "Boolean": {"IsNull", "IsNotNull", "Not", "IsIn", "IsBetween", "AllHorizontal",
                "AnyHorizontal"},
    "StringExpr": {"Contains", "StripChars", "Strptime", "Lowercase", "ConcatHorizontal"},
    "TemporalExpr": {"Year", "Month", "Day", "OffsetBy", "IsLeapYear"},
}
_ELEMENTWISE_PLAIN = {"Coalesce", "MaxHorizontal", "MinHorizontal", "SumHorizontal",
                      "FillNull", "Abs", "Clip"}

Op = tuple[str, tuple[Any, ...], dict[str, Any]]


def flatten(ops: list[Op], max_height: int = MAX_HEIGHT) -> list[Op]:
    """The recorded calls with each `with_columns` split into sub-stages
    (`with_columns_seq`: a few rows are evaluated on the calling thread)."""
    out: list[Op] = []
    hidden: list[str] = []
    for name, args, kwargs in ops:
        if name != "with_columns":
            out.append((name, args, kwargs))
            continue
        exprs = [e for a in args for e in (a if isinstance(a, (list, tuple)) else [a])]
        try:
            if kwargs or not all(isinstance(e, pl.Expr) for e in exprs):
                raise TypeError("not a list of expressions")
            subs, final = _Flattener(max_height, len(hidden)).stage(exprs)
        except Exception:  # noqa: BLE001 - a stage that cannot be taken apart stays whole
            out.append(("with_columns_seq", args, kwargs))
            continue
        for sub in subs:
            out.append(("with_columns_seq", (sub,), {}))
            hidden += [e.meta.output_name() for e in sub]
        out.append(("with_columns_seq", (final,), {}))
    if hidden:
        out.append(("drop", (hidden,), {}))
    return out


def _children(node: dict) -> list[tuple[Any, Any]] | None:
    """(container, key) of each input of an element-wise node, or None when
    the node is not one (it and every node above it stay where they are)."""
    ((kind, body),) = node.items()
    if kind == "BinaryExpr":
        return [(body, "left"), (body, "right")]
    if kind == "Ternary":
        return [(body, "predicate"), (body, "truthy"), (body, "falsy")]
    if kind == "Cast":
        return [(body, "expr")]
    if kind == "Function":
        fn = body["function"]
        if isinstance(fn, str):
            ok = fn in _ELEMENTWISE_PLAIN
        elif isinstance(fn, dict) and len(fn) == 1:
            ((group, detail),) = fn.items()
            sub = detail if isinstance(detail, str) else next(iter(detail), None)
            ok = group in _ELEMENTWISE_FUNCTIONS and sub in _ELEMENTWISE_FUNCTIONS[group]
        else:
            ok = False
        return [(body["input"], i) for i in range(len(body["input"]))] if ok else None
    return None


class _Flattener:
    def __init__(self, max_height: int, first: int) -> None:
        self.max_height = max_height
        self.next = first
        self.memo: dict[str, str] = {}  # rewritten subtree -> its hidden column
        self.level_of: dict[str, int] = {}  # hidden column -> its sub-stage
        self.levels: list[list[dict]] = []
        self.counts: dict[Any, int] = {}  # subtree (as `_count` keys it) -> occurrences
        self.original: dict[int, Any] = {}  # id of a node -> its subtree's key

    def stage(self, exprs: list[pl.Expr]) -> tuple[list[list[pl.Expr]], list[pl.Expr]]:
        trees = [json.loads(e.meta.serialize(format="json")) for e in exprs]
        for t in trees:
            self._count(t)
        for t in trees:
            self._cut(t)
        return [[_expr(n) for n in level] for level in self.levels], [_expr(t) for t in trees]

    def _count(self, node: Any) -> tuple[bool, int, Any]:
        """(every node element-wise, size, key) of a subtree; counts repeats.
        The key is built from the inputs' keys, so equal subtrees have equal
        keys and each node is read once."""
        if not isinstance(node, dict) or len(node) != 1:
            return False, 1, None
        ((kind, body),) = node.items()
        if kind in ("Column", "Literal"):
            return kind == "Column" or _scalar_literal(node), 1, (kind, json.dumps(body))
        kids = _children(node)
        if kids is None:
            for value in _nested(node):
                self._count(value)
            return False, 1, None
        results = [self._count(c[k]) for c, k in kids]
        ok = all(r[0] for r in results)
        size = 1 + sum(r[1] for r in results)
        inputs = {k for c, k in kids if c is body}
        rest = {k: v for k, v in body.items() if k not in inputs and k != "input"}
        key = (kind, json.dumps(rest, sort_keys=True), tuple(r[2] for r in results))
        self.original[id(node)] = key
        if ok and size >= 3:
            self.counts[key] = self.counts.get(key, 0) + 1
        return ok, size, key

    def _cut(self, node: Any) -> tuple[int, int, bool]:
        """Rewrite `node` in place; (height, level, movable). `level`: the
        first sub-stage in which it can be computed; `movable`: it may be
        computed in a sub-stage (element-wise all the way down)."""
        if not isinstance(node, dict) or len(node) != 1:
            return 1, 0, False
        kind = next(iter(node))
        if kind == "Column":
            level = self.level_of.get(node["Column"])
            return 1, 0 if level is None else level + 1, True
        if kind == "Literal":
            return 1, 0, _scalar_literal(node)
        kids = _children(node)
        if kids is None:  # stays in the stage; its inputs may still be flattened
            level = max((self._cut(v)[1] for v in _nested(node)), default=0)
            return self.max_height + 1, level, False
        original = self.original.get(id(node))
        parts = [[c, k, *self._cut(c[k])] for c, k in kids]
        height = 1 + max(p[2] for p in parts)
        # too deep: move the deepest inputs to sub-stages until it is not
        for part in sorted(parts, key=lambda p: -p[2]):
            if height <= self.max_height:
                break
            c, k, h, lv, mov = part
            if mov and h > 1:
                part[2:] = [1, self._hoist(c[k], lv) + 1, True]
                height = 1 + max(p[2] for p in parts)
        level = max(p[3] for p in parts)
        movable = all(p[4] for p in parts)
        if movable and self.counts.get(original, 0) > 1:  # repeated: computed once
            return 1, self._hoist(node, level) + 1, True
        return height, level, movable

    def _hoist(self, node: dict, level: int) -> int:
        """Compute `node` (rewritten) into a hidden column of sub-stage
        `level`, or find the one that already holds it; `node` becomes a
        reference to that column. Returns the column's sub-stage."""
        key = json.dumps(node, sort_keys=True)
        col = self.memo.get(key)
        if col is None:
            col = self.memo[key] = f"{HIDDEN}{self.next}"
            self.next += 1
            self.level_of[col] = level
            while len(self.levels) <= level:
                self.levels.append([])
            self.levels[level].append({"Alias": [json.loads(key), col]})
        node.clear()
        node["Column"] = col
        return self.level_of[col]


def _scalar_literal(node: dict) -> bool:
    body = node["Literal"]
    return isinstance(body, dict) and ("Scalar" in body or "Dyn" in body)


def _nested(node: dict) -> list[dict]:
    """The expression nodes directly inside a node that is not element-wise
    (its inputs may still be flattened; the node stays in the stage)."""
    found: list[dict] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if len(value) == 1 and next(iter(value)) in _EXPR_KINDS:
                found.append(value)
                return
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    ((_, body),) = node.items()
    walk(body)
    return found


_EXPR_KINDS = {"Column", "Literal", "Alias", "BinaryExpr", "Ternary", "Cast", "Function"}


def _expr(tree: dict) -> pl.Expr:
    return pl.Expr.deserialize(io.StringIO(json.dumps(tree)), format="json")
