"""Two rule sets over the same members: who changes, how, and why.

Everything here works on the determinations of both sides, row by row in
the same order (the same valid rows: the rejects do not depend on the
rules). The counts are vectorised; the explanation of a change (the first
finding whose outcome differs) is computed only for changed members.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

import polars as pl

from ..core import codes, run_pair
from ..determination import Finding
from ..explain import explain, formula_of
from ..fields import FIELD_NAMES
from ..rules import Rules
from . import why

# the fields of a determination compared between the two sides, in the order
# a reader looks at them
COMPARED = ("status", "regime", "route", "eligibility_date", "start_date", "annual_amount",
            "monthly_amount", "minimum_applied", "reasons")
MONEY = pl.Decimal(20, 2)

# bins of the change of the annual amount, in dollars (upper bounds, inclusive)
AMOUNT_BINS = (-10_000, -5_000, -1_000, -100, -0.01, 0, 100, 1_000, 5_000, 10_000)


def changed_mask(a: pl.DataFrame, b: pl.DataFrame) -> pl.Series:
    """True for the rows whose determination differs in any COMPARED field."""
    out = pl.Series("changed", [False] * a.height, dtype=pl.Boolean)
    for c in COMPARED:
        out = out | a[c].ne_missing(b[c])
    return out


def side_by_side(a: pl.DataFrame, b: pl.DataFrame) -> pl.DataFrame:
    """One row per member: id, each compared field under A and under B."""
    cols: list[pl.Series] = [a["participant_id"]]
    for c in COMPARED:
        cols += [a[c].alias(f"{c}_a"), b[c].alias(f"{c}_b")]
    frame = pl.DataFrame(cols)
    return frame.with_columns(
        (pl.col("eligibility_date_b") - pl.col("eligibility_date_a")).dt.total_days()
        .alias("eligibility_shift_days"),
        _months(pl.col("eligibility_date_a"), pl.col("eligibility_date_b"))
        .alias("eligibility_shift_months"),
        (pl.col("annual_amount_b") - pl.col("annual_amount_a")).cast(MONEY)
        .alias("annual_change"),
    )


def _months(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    """Whole calendar months from a to b (a day of the month not yet reached
    does not count: 2037-02-28 -> 2039-02-28 is 24, -> 2039-02-27 is 23)."""
    raw = (b.dt.year() - a.dt.year()) * 12 + (b.dt.month() - a.dt.month())
    forward = pl.when(b.dt.day() < a.dt.day()).then(raw - 1).otherwise(raw)
    backward = pl.when(b.dt.day() > a.dt.day()).then(raw + 1).otherwise(raw)
    return pl.when(b >= a).then(forward).otherwise(backward).cast(pl.Int32)


def transitions(a: pl.DataFrame, b: pl.DataFrame) -> pl.DataFrame:
    """Members by (status, route) under A and under B; unchanged pairs
    included, so the members column adds up to the members determined."""
    frame = pl.DataFrame([a["status"].alias("status_a"), b["status"].alias("status_b"),
                          a["route"].alias("route_a"), b["route"].alias("route_b")])
    return (frame.group_by("status_a", "route_a", "status_b", "route_b").len("members")
            .with_columns((pl.col("status_a").ne_missing(pl.col("status_b"))
                           | pl.col("route_a").ne_missing(pl.col("route_b"))).alias("changes"))
            .sort(["changes", "members", "status_a", "route_a", "status_b", "route_b"],
                  descending=[True, True, False, False, False, False], nulls_last=True))


def eligibility_shifts(sbs: pl.DataFrame) -> pl.DataFrame:
    """The distribution of the move of the eligibility date: members by whole
    months moved (positive: later under B), and those who gain or lose a date."""
    a, b = pl.col("eligibility_date_a"), pl.col("eligibility_date_b")
    kind = (pl.when(a.is_null() & b.is_not_null()).then(pl.lit("gains a date under B"))
            .when(a.is_not_null() & b.is_null()).then(pl.lit("loses its date under B"))
            .when(pl.col("eligibility_shift_days") > 0).then(pl.lit("later under B"))
            .otherwise(pl.lit("earlier under B")))
    moved = sbs.filter(a.ne_missing(b))
    return (moved.with_columns(kind.alias("shift"))
            .group_by("shift", "eligibility_shift_months")
            .agg(pl.len().alias("members"),
                 pl.col("eligibility_shift_days").min().alias("min_days"),
                 pl.col("eligibility_shift_days").max().alias("max_days"))
            .sort(["shift", "eligibility_shift_months"], nulls_last=True)
            .rename({"eligibility_shift_months": "months"}))


def amount_changes(sbs: pl.DataFrame) -> pl.DataFrame:
    """Members whose annual amount changes, by size of the change (dollars a
    year, B - A; a member entitled on one side only counts 0 on the other)."""
    a = pl.col("annual_amount_a").fill_null(0)
    b = pl.col("annual_amount_b").fill_null(0)
    diff = (b - a).cast(MONEY)
    frame = sbs.select(diff.alias("d")).filter(pl.col("d") != 0)
    edges = list(AMOUNT_BINS)
    labels = []
    lo = None
    for hi in [*edges, None]:
        if lo is None:
            labels.append(f"≤ {hi:,}")
        elif hi is None:
            labels.append(f"> {lo:,}")
        elif lo == -0.01 and hi == 0:
            labels.append("0")
        else:
            labels.append(f"{lo:,} to {hi:,}".replace("-0.01", "-0.01"))
        lo = hi
    if frame.height == 0:
        return pl.DataFrame(schema={"change": pl.String, "members": pl.UInt32,
                                    "total_change": MONEY})
    # bins closed on the right, (lo, hi]: a change's bin is the first edge at or
    # above it, found among the edges as exact amounts (no binary float)
    bounds = pl.Series([str(e) for e in edges]).cast(MONEY)
    bin_of = bounds.search_sorted(frame["d"], side="left")
    out = (pl.DataFrame({"change": pl.Series(labels).gather(bin_of), "d": frame["d"]})
           .group_by("change", maintain_order=True)
           .agg(pl.len().alias("members"), pl.col("d").sum().cast(MONEY).alias("total_change")))
    order = {label: i for i, label in enumerate(labels)}
    return out.sort(pl.col("change").replace_strict(order, return_dtype=pl.Int32))


@dataclass
class Totals:
    """Members determined under each side, entitled, and the exact sum of the
    annual amounts of the entitled (dollars, two places)."""

    entitled_a: int = 0
    entitled_b: int = 0
    annual_a: Decimal = Decimal("0.00")
    annual_b: Decimal = Decimal("0.00")
    monthly_a: Decimal = Decimal("0.00")
    monthly_b: Decimal = Decimal("0.00")

    def add(self, a: pl.DataFrame, b: pl.DataFrame) -> None:
        self.entitled_a += int((a["status"] != "not_entitled").sum())
        self.entitled_b += int((b["status"] != "not_entitled").sum())
        self.annual_a += _sum(a["annual_amount"])
        self.annual_b += _sum(b["annual_amount"])
        self.monthly_a += _sum(a["monthly_amount"])
        self.monthly_b += _sum(b["monthly_amount"])


def _sum(s: pl.Series) -> Decimal:
    v = s.sum()
    return Decimal("0.00") if v is None else Decimal(v).quantize(Decimal("0.01"))


# ---- the finding that explains a change -------------------------------------


# the definition lives in why.py, with its column-wise form
ROUTE_CONDITIONS = why.ROUTE_CONDITIONS
explaining_finding = why.explaining_finding


def _findings(row: dict[str, Any], rules: Rules, lang: str) -> list[Finding]:
    row = {**row, **{k: codes(row[k]) for k in ("reasons", "routes_met", "warnings")}}
    formula = formula_of(row, rules) if row["status"] != "not_entitled" else None
    return explain(row, rules, lang, formula)


def explain_changes(inputs: pl.DataFrame, ra: Rules, rb: Rules, as_of: date,
                    lang: str, *, by_route: bool = True) -> pl.DataFrame:
    """For the input rows of changed members (rules §1 fields), the finding
    that explains each change: rule, condition, and its text under A and B
    (`explaining_finding` of both explanations). A change that a route
    explains is found column-wise (`why`, the same finding, written by the
    same writer); the others member by member (`by_route=False`: all of them,
    the definition the column-wise path is tested against)."""
    frame = inputs.select([c for c in inputs.columns if c in FIELD_NAMES])
    full_a, full_b, errors, _, _ = run_pair(frame, as_of=as_of, rules_a=ra, rules_b=rb,
                                            require_id=False)
    if errors.height or full_a.height != frame.height:
        raise AssertionError("a changed member failed validation when explained")
    schema = {"_i": pl.UInt32, **dict.fromkeys(why.OUT_COLUMNS, pl.String)}
    if by_route and why.comparable(ra, rb):
        done, rest = why.explain_by_route(full_a, full_b, ra, rb, lang)
    else:
        done = pl.DataFrame(schema=schema)
        rest = pl.Series("_i", range(frame.height), dtype=pl.UInt32)
    rule, cond, text_a, text_b = [], [], [], []
    for i in rest:
        row_a, row_b = full_a.row(i, named=True), full_b.row(i, named=True)
        fa, fb = explaining_finding(_findings(row_a, ra, lang), _findings(row_b, rb, lang))
        one = fb or fa  # the rule that B applies differently, when B states it
        rule.append(one.rule if one else None)
        cond.append(one.condition if one else None)
        text_a.append(fa.text if fa else None)
        text_b.append(fb.text if fb else None)
    slow = pl.DataFrame({"_i": rest, "finding_rule": rule, "finding_condition": cond,
                         "finding_under_a": text_a, "finding_under_b": text_b}, schema=schema)
    return pl.concat([done, slow]).sort("_i").drop("_i")


def differences(da: dict[str, Any], db: dict[str, Any],
                fields: Iterable[str] = COMPARED) -> dict[str, tuple[Any, Any]]:
    """The compared fields of two determinations (as dicts) that differ."""
    return {f: (da.get(f), db.get(f)) for f in fields if da.get(f) != db.get(f)}
