"""The finding that explains a change: its definition, and the same finding
found column-wise where it can be.

`explaining_finding` is the definition, the one rule behind `diferida
compare`, `diferida evaluate … --rules A --rules B` and the web
calculator's "Comparar con" (both through `compare.person`). A change of a
member's answer is explained by the route that decided it: the route of A
(or of B, when A has none). The finding says why that route no longer
decides under B (it does not apply, its service condition fails, it opens
another day), or, when it is unchanged, which route decides instead under B
and why. A route that decides neither answer never explains it, even when
its own findings differ (a 19.4(a) that fails under both readings).

Done member by member, building both explanations costs about a
millisecond each, and a reform that moves an age changes a large share of
a population. Most changes are explained by a route (Reglas 19.1, 19.2,
19.4): whether it applies to the member's group or regime, its service
condition, or its age. Everything those findings compare is a column of
the determination (the route's `_applies`, `_holds`, `_age_date`,
`_opens`) or a constant of each rules set, so whether the deciding route's
findings differ, and at which finding, is found here with column
expressions. Their sentences come from the same writer as every
explanation (`explain.route_findings`), called once per distinct set of
the values a sentence reads, not once per member. Members whose change
comes from anywhere else (the regime, a member entitled under neither
side, a warning…), and rule sets whose routes are not the same list, go
the member-by-member way. `tests/test_compare_why.py` holds this path
equal to the definition on generated populations and on every shipped
reform.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import polars as pl

from ..article19 import route_key
from ..determination import Finding, plain
from ..explain import (
    Writer,
    age_sentence,
    cite,
    feb29_sentence,
    listing,
    opens_sentence,
    pct,
    regime_text,
    regulation,
    route_findings,
    years_phrase,
    years_text,
)
from ..fields import SERVICE_UNITS
from ..money import format_cents
from ..rules import Route, Rules

OUT_COLUMNS = ("finding_rule", "finding_condition", "finding_under_a", "finding_under_b")

# ---- the definition ---------------------------------------------------------

# the findings about a route: whether it applies, its service, its age
ROUTE_CONDITIONS = ("route_applies", "service", "age")
# the findings an explanation gives before the routes, in its order
BEFORE_ROUTES = ("covered", "regime", "separated", "no_refund")
# findings after the routes that restate them (which route decides, which
# others hold or tie; the date the other reading of 19.4 would give): a
# difference there comes from a route, which is looked at as a route
RESTATING = ("eligibility", "reading_19_4")
# the scope note is the same sentence for every member: it never explains
NEVER = ("scope",)


def subject(f: Finding) -> tuple[str, str]:
    """What a finding is about: a route (whether it applies, its service,
    its age), or its own condition."""
    route = f.values.get("route") if f.condition in ROUTE_CONDITIONS else None
    return ("route", str(route)) if route is not None else ("condition", f.condition)


def deciding_route(findings: list[Finding]) -> str | None:
    """The route that decides a determination (its eligibility finding's), or
    None for a participant not entitled."""
    for f in findings:
        if f.condition == "eligibility":
            return str(f.values["route"])
    return None


def explaining_finding(fa: list[Finding], fb: list[Finding]) -> tuple[Finding | None,
                                                                      Finding | None]:
    """The finding that explains why the determinations under A and B differ,
    as (its form under A, its form under B); either is None when the finding
    is on one side only.

    Findings are matched by what they are about (a route, or their own
    condition); within one subject, position by position, a pair differs
    when it has another condition, other values or another result, or is on
    one side only. The first pair that differs is taken, looking at:

    1. the findings before the routes (who is covered, the regime, the
       separation, the refund), in the explanation's order;
    2. the route that decided A: why it no longer decides under B, or
       decides another day; then the route that decides B (the only one,
       when A had none): which route decides instead, and why;
    3. the findings after the routes (the start, the amount, the 19.6
       minimum, the warnings), except those that restate the routes.

    For a member entitled under neither side, no route decides: the findings
    after the routes (what is missing) come before the routes, in their
    order. No other route is looked at when one decides."""
    by_a: dict[tuple[str, str], list[Finding]] = {}
    by_b: dict[tuple[str, str], list[Finding]] = {}
    for f in fa:
        by_a.setdefault(subject(f), []).append(f)
    for f in fb:
        by_b.setdefault(subject(f), []).append(f)
    subjects = [s for s in dict.fromkeys([*by_a, *by_b])
                if not (s[0] == "condition" and s[1] in NEVER)]
    before = [s for s in subjects if s[0] == "condition" and s[1] in BEFORE_ROUTES]
    after = [s for s in subjects if s[0] == "condition" and s[1] not in BEFORE_ROUTES]
    deciding = [("route", r) for r in dict.fromkeys([deciding_route(fa), deciding_route(fb)])
                if r is not None]
    if deciding:
        order = [*before, *deciding, *(s for s in after if s[1] not in RESTATING)]
    else:
        order = [*before, *after, *(s for s in subjects if s[0] == "route")]
    for s in order:
        xs, ys = by_a.get(s, []), by_b.get(s, [])
        for i in range(max(len(xs), len(ys))):
            x = xs[i] if i < len(xs) else None
            y = ys[i] if i < len(ys) else None
            if x is None or y is None or (x.condition, x.held, x.values) != (
                    y.condition, y.held, y.values):
                return x, y
    return None, None


# ---- the same finding, column-wise -------------------------------------------

# what a route's findings read of a determination row
_ROW = ("regime", "group", "service_units", "as_of", "birth_date", "status", "covered")
_ROUTE = ("applies", "holds", "age_date", "opens")


def comparable(ra: Rules, rb: Rules) -> bool:
    """The column-wise path needs the same routes, in the same order, and the
    same findings before the routes (who is covered, the regime)."""
    return ([r.id for r in ra.routes] == [r.id for r in rb.routes]
            and ra.not_covered_from == rb.not_covered_from
            and ra.new_participant_after == rb.new_participant_after)


def _kind(r: Route) -> pl.Expr:
    """Which 'does not apply' finding a route gives (when it does not apply)."""
    other = "regime" if r.regimes_source is None else f"reading:{r.regimes_source}"
    return (pl.when(pl.col("group").is_in(list(r.groups))).then(pl.lit(other))
            .otherwise(pl.lit("group")))


def locate(full_a: pl.DataFrame, full_b: pl.DataFrame, ra: Rules,
           rb: Rules) -> pl.DataFrame:
    """Per member (in order): `_route` (the index of the route whose findings
    explain the change: the route of A when its findings differ, else the
    route of B when they do; AMOUNT when the amount does; null when none of
    these, or when the change comes before the routes) and `_pos` (0:
    whether it applies / its service; 1: its age)."""
    a = {c: full_a.get_column(c) for c in _ROW}
    b = {c: full_b.get_column(c) for c in ("regime", "covered")}
    cols: dict[str, pl.Series] = {**a, "regime_b": b["regime"], "covered_b": b["covered"]}
    for r in ra.routes:
        k = route_key(r)
        for c in _ROUTE:
            cols[f"{k}_{c}_a"] = full_a.get_column(f"{k}_{c}")
            cols[f"{k}_{c}_b"] = full_b.get_column(f"{k}_{c}")
    for c in _TAIL:
        cols[f"{c}_a"], cols[f"{c}_b"] = full_a.get_column(c), full_b.get_column(c)
    for i in range(_brackets(ra, rb)):
        for side, full in (("a", full_a), ("b", full_b)):
            name = f"part{i}_cents"
            cols[f"{name}_{side}"] = full.get_column(name) if name in full.columns \
                else pl.Series(name, [None] * full.height, dtype=pl.Int64)
    frame = pl.DataFrame(cols)
    # before the routes: who is covered and the regime must be the same
    same_before = (pl.col("covered") & pl.col("covered_b")
                   & (pl.col("regime") == pl.col("regime_b")))
    # the deciding route of each side, when its findings differ (A's first)
    none = pl.lit(None, dtype=pl.Int32)
    route_of = {"a": none, "b": none}
    pos_of = {"a": none, "b": none}
    for i in range(len(ra.routes)):
        x, y = ra.routes[i], rb.routes[i]
        k = route_key(x)
        app_a, app_b = pl.col(f"{k}_applies_a"), pl.col(f"{k}_applies_b")
        hold_a, hold_b = pl.col(f"{k}_holds_a"), pl.col(f"{k}_holds_b")
        bounds_differ = (x.min_service, x.max_service) != (y.min_service, y.max_service)
        pos0 = ((app_a != app_b)
                | (~app_a & ~app_b & (_kind(x) != _kind(y)))
                | (app_a & app_b & (pl.lit(bounds_differ) | (hold_a != hold_b))))
        pos1 = (app_a & app_b & hold_a & hold_b
                & (pl.lit(x.age != y.age)
                   | pl.col(f"{k}_age_date_a").ne_missing(pl.col(f"{k}_age_date_b"))
                   | pl.col(f"{k}_opens_a").ne_missing(pl.col(f"{k}_opens_b"))))
        pos = pl.when(pos0).then(pl.lit(0, dtype=pl.Int32)).when(pos1).then(
            pl.lit(1, dtype=pl.Int32))
        for side in ("a", "b"):
            decides = (pl.col(f"route_{side}") == x.id) & (pos0 | pos1)
            route_of[side] = pl.when(decides).then(pl.lit(i, dtype=pl.Int32)).otherwise(
                route_of[side])
            pos_of[side] = pl.when(decides).then(pos).otherwise(pos_of[side])
    route_expr = pl.coalesce(route_of["a"], route_of["b"])
    pos_expr = pl.coalesce(pos_of["a"], pos_of["b"])
    # no deciding route differs: the amount (Regla 19.5), when all that comes
    # before it in an explanation is the same on both sides
    route_expr = pl.when(route_expr.is_null() & _amount_first(ra, rb)).then(
        pl.lit(AMOUNT, dtype=pl.Int32)).otherwise(route_expr)
    return frame.with_columns(
        pl.when(same_before).then(route_expr).alias("_route"),
        pl.when(same_before).then(pos_expr).alias("_pos"),
    )


AMOUNT = -1  # `_route` of a change the amount finding explains
# what the findings between the routes and the amount, and the amount's own, read
_TAIL = ("reasons", "status", "eligibility_date", "route", "premature_request",
         "deferred_right_1960", "formula_cents", "minimum_cents",
         "minimum_applied", "compensation_cents")


def _brackets(ra: Rules, rb: Rules) -> int:
    return max(len(s.brackets) for r in (ra, rb) for s in r.amount.values())


def _amount_first(ra: Rules, rb: Rules) -> pl.Expr:
    """The amount finding is the first that differs: both sides are entitled
    by the same route on the same day (whose findings are the same: see
    `locate`), the start finding is the same, and the formula's values
    differ. (The findings that restate the routes are not looked at.)"""
    col = lambda c, side: pl.col(f"{c}_{side}")  # noqa: E731
    same = pl.lit(True)
    for c in ("reasons", "eligibility_date", "route", "premature_request"):
        same = same & col(c, "a").eq_missing(col(c, "b"))
    entitled = (col("status", "a") != "not_entitled") & (col("status", "b") != "not_entitled")
    scale_differs = pl.lit(False)
    for regime in ra.amount:
        scale_differs = pl.when(pl.col("regime") == regime).then(
            pl.lit(ra.amount[regime] != rb.amount.get(regime))).otherwise(scale_differs)
    right = col("deferred_right_1960", "a")
    differs = (scale_differs
               | pl.any_horizontal([col(f"part{i}_cents", "a").ne_missing(
                   col(f"part{i}_cents", "b")) for i in range(_brackets(ra, rb))])
               | col("formula_cents", "a").ne_missing(col("formula_cents", "b"))
               | right.ne_missing(col("deferred_right_1960", "b"))
               | (right & (col("minimum_cents", "a").ne_missing(col("minimum_cents", "b"))
                           | pl.lit(ra.minimum_citation != rb.minimum_citation)))
               | col("minimum_applied", "a").ne_missing(col("minimum_applied", "b")))
    return same & entitled & differs


def _texts(frame: pl.DataFrame, side: str, rules: Rules, index: int, pos: int,
           lang: str) -> pl.DataFrame:
    """The finding at `pos` of route `index` under one side, for each member
    of `frame` (columns `_i`, `rule_<side>`, `condition_<side>`, `text_<side>`),
    each distinct sentence written once."""
    r = rules.routes[index]
    k = route_key(r)
    regime = pl.col("regime") if side == "a" else pl.col("regime_b")
    status = pl.col("status") if side == "a" else pl.col("status_b")
    # whether the route applies under one side only: then its first finding
    # (whether it applies, by which reading) explains; else its service
    differs = pl.col(f"{k}_applies_a") != pl.col(f"{k}_applies_b")
    view = frame.select(
        "_i", regime.alias("regime"), differs.alias("_app_differs"), "group",
        "service_units", "as_of", "birth_date",
        (status != "not_entitled").alias("_entitled"),
        *(pl.col(f"{k}_{c}_{side}").alias(f"{k}_{c}") for c in _ROUTE))
    names = [f"rule_{side}", f"condition_{side}", f"text_{side}"]
    w = Writer(lang, rules)
    if pos == 0:
        # whether the route applies, or its service condition: a few distinct
        # values (regime, group, service), each written by the explanation's writer
        key = ["regime", "_app_differs", "group", "service_units", f"{k}_applies",
               f"{k}_holds"]
        distinct = view.group_by(key).agg(pl.all().exclude(key).first())
        rows = []
        for row in distinct.iter_rows(named=True):
            findings = _one(row, rules, r, lang)
            if not row["_app_differs"] and len(findings) > 1 and \
                    findings[0].condition == "route_applies" and findings[0].held is True:
                findings = findings[1:]  # the same reading on both sides: not the change
            found = findings[0]
            rows.append((found.rule, found.condition, found.text))
        written = distinct.select(key).hstack(
            pl.DataFrame(rows, schema=dict.fromkeys(names, pl.String), orient="row"))
        return view.join(written, on=key, how="left", nulls_equal=True).select("_i", *names)
    # the age finding: its three sentences, each from the one or two values it reads
    age_date = pl.col(f"{k}_age_date")
    moved = ((pl.col("birth_date").dt.month() == 2) & (pl.col("birth_date").dt.day() == 29)
             & (age_date.dt.month() == 2) & (age_date.dt.day() == 28))
    view = view.with_columns(moved.alias("_moved"))
    ages = _written(view, [f"{k}_age_date", "as_of"],
                    lambda d, a: age_sentence(w, r, d, a), "_age")
    opened = _written(view, [f"{k}_opens", "_entitled", "as_of"],
                      lambda o, e, a: opens_sentence(w, o, e, a), "_opens")
    return (view.join(ages, on=[f"{k}_age_date", "as_of"], how="left", nulls_equal=True)
            .join(opened, on=[f"{k}_opens", "_entitled", "as_of"], how="left",
                  nulls_equal=True)
            .select("_i",
                    pl.lit(cite(r.citation, lang)).alias(names[0]),
                    pl.lit("age").alias(names[1]),
                    pl.concat_str(
                        "_age", "_opens",
                        pl.when("_moved").then(pl.lit(feb29_sentence(w, True)))
                        .otherwise(pl.lit(feb29_sentence(w, False)))).alias(names[2])))


def _amount_texts(frame: pl.DataFrame, side: str, rules: Rules, lang: str) -> pl.DataFrame:
    """The amount finding (Regla 19.5) under one side for each member of
    `frame`. Its sentence is the catalog's, written by the explanation's
    writer with a marker in place of each member's value; the values (money,
    years) are written once per distinct value and put in column-wise."""
    w = Writer(lang, rules)
    names = [f"rule_{side}", f"condition_{side}", f"text_{side}"]
    money = lambda c: format_cents(pl.col(c))  # noqa: E731
    out = []
    for regime, part in frame.group_by("regime"):
        scale = rules.amount[regime[0]]
        n = len(scale.brackets)
        pieces = [w.text("findings", "bracket", rate=pct(b.rate), compensation=_mark("comp"),
                         years=_mark(f"y{i}"), amount=_mark(f"a{i}"))
                  for i, b in enumerate(scale.brackets)]
        template = w.text("findings", "amount", citation=cite(scale.citation, lang),
                          parts=" + ".join(pieces), formula=_mark("formula"))
        units = pl.col("service_units")
        values = {"comp": money(f"compensation_cents_{side}"),
                  "formula": money(f"formula_cents_{side}")}
        for i, b in enumerate(scale.brackets):
            low = int(b.threshold * SERVICE_UNITS)
            years = pl.max_horizontal(units - low, pl.lit(0))
            if i + 1 < n:
                years = pl.min_horizontal(
                    years, pl.lit(int(scale.brackets[i + 1].threshold * SERVICE_UNITS) - low))
            values[f"y{i}"] = _each(years, lambda u: years_phrase(
                plain(Decimal(u) / SERVICE_UNITS), lang))
            values[f"a{i}"] = money(f"part{i}_cents_{side}")
        # rules §6 Decision: a route that serves both regimes, the formula of the regime
        follows = {r.id: w.text("findings", "amount_follows_regime",
                                route=cite(r.citation, lang),
                                regime=regime_text(regime[0], rules, lang),
                                citation=cite(scale.citation, lang))
                   for r in rules.routes if len(r.regimes) > 1}
        # a rules set whose scale is not the Regulation's names it as its own
        base = regulation(rules)
        theirs = base.amount[regime[0]].brackets if base is not None else scale.brackets
        own = "" if theirs == scale.brackets else w.text(
            "findings", "changed_rates", rules=rules.name, citation=cite(scale.citation, lang),
            base=listing([pct(b.rate) for b in theirs], lang))
        out.append(part.select(
            "_i",
            pl.lit(cite(scale.citation, lang)).alias(names[0]),
            pl.lit("amount").alias(names[1]),
            pl.concat_str(_fill(template, values),
                          pl.col(f"route_{side}").replace_strict(
                              follows, default="", return_dtype=pl.String),
                          pl.lit(own)).alias(names[2])))
    return pl.concat(out)


def _mark(name: str) -> str:
    return f"\x00{name}\x00"


def _fill(template: str, values: dict[str, pl.Expr]) -> pl.Expr:
    """`template` with each marker replaced by its column."""
    pieces = re.split("\x00(\\w+)\x00", template)
    return pl.concat_str([values[p] if i % 2 else pl.lit(p) for i, p in enumerate(pieces)])


def _each(expr: pl.Expr, write) -> pl.Expr:
    """`write(value)` for each value of `expr`, called once per distinct value."""
    return expr.map_batches(
        lambda s: s.replace_strict(
            (u := s.unique().drop_nulls()), [write(v) for v in u.to_list()],
            return_dtype=pl.String),
        return_dtype=pl.String)


def _written(view: pl.DataFrame, key: list[str], write, name: str) -> pl.DataFrame:
    """Each distinct value of `key` in `view`, with its sentence `write(*key)`."""
    distinct = view.select(key).unique()
    return distinct.with_columns(pl.Series(
        name, [write(*values) for values in distinct.iter_rows()], dtype=pl.String))


def _one(row: dict[str, Any], rules: Rules, r: Route, lang: str) -> list:
    """A route's findings for one row, by the explanation's own writer."""
    w = Writer(lang, rules)
    service = years_text(row["service_units"])
    route_findings(w, row, r, [], bool(row["_entitled"]), service,
                    years_phrase(service, lang))
    return w.out


def explain_by_route(full_a: pl.DataFrame, full_b: pl.DataFrame, ra: Rules, rb: Rules,
                     lang: str) -> tuple[pl.DataFrame, pl.Series]:
    """The explaining finding of every member whose change a route explains
    (columns `_i` and OUT_COLUMNS), and the positions of the others."""
    located = locate(full_a, full_b, ra, rb).with_columns(
        pl.int_range(pl.len(), dtype=pl.UInt32).alias("_i"),
        full_b.get_column("status").alias("status_b"))
    found = located.filter(pl.col("_route").is_not_null())
    parts = []
    for (index, pos), group in found.group_by("_route", "_pos"):
        if index == AMOUNT:
            a, b = (_amount_texts(group, side, r, lang) for side, r in (("a", ra), ("b", rb)))
        else:
            a = _texts(group, "a", ra, int(index), int(pos), lang)
            b = _texts(group, "b", rb, int(index), int(pos), lang)
        parts.append(a.join(b, on="_i").select(
            "_i",
            pl.col("rule_b").alias("finding_rule"),  # the rule B applies differently
            pl.col("condition_b").alias("finding_condition"),
            pl.col("text_a").alias("finding_under_a"),
            pl.col("text_b").alias("finding_under_b")))
    schema = {"_i": pl.UInt32, **dict.fromkeys(OUT_COLUMNS, pl.String)}
    done = pl.concat(parts) if parts else pl.DataFrame(schema=schema)
    rest = located.filter(pl.col("_route").is_null()).get_column("_i")
    return done, rest
