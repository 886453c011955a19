"""Article 19 ("Pensiones diferidas"), written once as column expressions.

`determine(typed, rules)` adds the determination's columns to a table of
valid, typed participants (see `validation.validate`). One participant is a
table of one row: the CLI, the API, the web page and the batch run all come
through here. Every number is read from `rules`; the sections below follow
the article.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from functools import cache

import polars as pl

from .dates import date_reaching_age
from .fields import SERVICE_UNITS
from .money import EXACT, cents, round_half_up
from .rules import REGIMES, Route, Rules
from .speed.plan import Stages

S = pl.col("service_units")
AC = pl.col("compensation_cents")
AC_EXACT = pl.col("_compensation_exact")  # AC in the exact type, made once (first stage)


def route_key(route: Route) -> str:
    """Column-name form of a route id: "19.1(a)" -> "r19_1_a"."""
    return _route_key(route.id)


@cache
def _route_key(route_id: str) -> str:
    return "r" + "".join(c if c.isalnum() else "_" for c in route_id).strip("_").replace("__", "_")


def _service_units(years) -> int:
    units = years * SERVICE_UNITS
    if units != int(units):
        raise ValueError(f"rules threshold {years} has more than 4 decimal places")
    return int(units)


# ---- rules §2: who the participant is --------------------------------------

def regime(rules: Rules) -> pl.Expr:
    # Regla 19.2: "después del" the rules' new_participant_after date — that day
    # itself still belongs to the earlier regime.
    return (
        pl.when(pl.col("entry_date") > pl.lit(rules.new_participant_after))
        .then(pl.lit("new"))
        .otherwise(pl.lit("pre1990"))
    )


def covered(rules: Rules) -> pl.Expr:
    # Act 305-1999: entry on or after 2000-01-01 is the savings-account program.
    return pl.col("entry_date") < pl.lit(rules.not_covered_from)


# ---- rules §4: the routes (Reglas 19.1, 19.2, 19.4) -------------------------

def route_applies(route: Route) -> pl.Expr:
    """The route is open to this participant's regime and group (rules §2)."""
    return pl.col("regime").is_in(list(route.regimes)) & pl.col("group").is_in(list(route.groups))


def service_bounds(route: Route) -> tuple[int, int | None]:
    """The route's service thresholds in service units: at least the first,
    less than the second (None: no upper bound)."""
    high = None if route.max_service is None else _service_units(route.max_service)
    return _service_units(route.min_service), high


def route_service_holds(route: Route) -> pl.Expr:
    low, high = service_bounds(route)
    cond = S >= low
    if high is not None:
        cond = cond & (S < high)
    return cond


def service_holds(route: Route, units: int) -> bool:
    """`route_service_holds` for one participant's service units (the
    explanation's reading of another rules set uses it)."""
    low, high = service_bounds(route)
    return units >= low and (high is None or units < high)


def earliest_route(openings: Iterable[tuple[Route, date | None]]) -> tuple[date, Route] | None:
    """The hit policy of the routes, for one participant: the earliest
    opening wins; a tie goes to the route first in the rules file (the order
    of `openings`). `_determine_stages` applies the same policy to columns;
    tests/test_one_home.py holds the two equal."""
    best: tuple[date, Route] | None = None
    for route, opens in openings:
        if opens is not None and (best is None or opens < best[0]):
            best = (opens, route)
    return best


# ---- rules §6: the amount (Reglas 19.5, 19.6) -------------------------------

def _scale_parts(rules: Rules, reg: str) -> list[pl.Expr]:
    """Exact numerators (over cents × rate_scale × SERVICE_UNITS) per bracket."""
    brackets = rules.amount[reg].brackets
    parts = []
    for i, b in enumerate(brackets):
        lo = _service_units(b.threshold)
        years = (S - lo).clip(lower_bound=0)
        if i + 1 < len(brackets):
            years = years.clip(upper_bound=_service_units(brackets[i + 1].threshold) - lo)
        rate = int(b.rate * rules.rate_scale)
        parts.append(AC_EXACT * pl.lit(rate, dtype=EXACT) * years.cast(EXACT))
    return parts


def max_brackets(rules: Rules) -> int:
    return max(len(s.brackets) for s in rules.amount.values())


def amount_denominator(rules: Rules) -> int:
    return rules.rate_scale * SERVICE_UNITS


def amount_columns(rules: Rules) -> tuple[list[pl.Expr], list[pl.Expr], list[pl.Expr]]:
    """The amount's columns in three stages: each bracket's exact part; the
    formula's total and the minimum; the rounded amounts."""
    den = amount_denominator(rules)
    cols = []
    for i in range(max_brackets(rules)):
        expr = pl.lit(None, dtype=EXACT)
        for reg in REGIMES:
            parts = _scale_parts(rules, reg)
            if i < len(parts):
                expr = pl.when(pl.col("regime") == reg).then(parts[i]).otherwise(expr)
        cols.append(expr.alias(f"_part{i}_exact"))
    formula = pl.sum_horizontal([pl.col(f"_part{i}_exact") for i in range(max_brackets(rules))])
    minimum = (
        pl.when(pl.col("deferred_right_1960"))
        .then(AC_EXACT * pl.lit(int(rules.minimum_rate * rules.rate_scale) * SERVICE_UNITS,
                                dtype=EXACT))
    )
    return cols, [
        formula.alias("_formula_exact"),
        minimum.alias("_minimum_exact"),
    ], [
        # 19.6: the minimum counts only when strictly higher than the formula
        (pl.col("_minimum_exact").fill_null(-1) > pl.col("_formula_exact")).alias(
            "_minimum_higher"
        ),
        *[round_half_up(pl.col(f"_part{i}_exact"), den).alias(f"part{i}_cents")
          for i in range(max_brackets(rules))],
        round_half_up(pl.col("_formula_exact"), den).alias("formula_cents"),
        round_half_up(pl.col("_minimum_exact"), den).alias("minimum_cents"),
    ]


# ---- the determination (rules §3, §5, §7) -----------------------------------

def _joined(items: list[pl.Expr]) -> pl.Expr:
    """Codes that apply, in order, as one ';'-joined text ("" when none)."""
    return pl.concat_str(items, separator=";", ignore_nulls=True).fill_null("")


def determine(typed: pl.DataFrame | pl.LazyFrame, rules: Rules, *,
              sequential: bool = False) -> pl.LazyFrame:
    """Add the determination's columns to a table of typed participants.
    `sequential`: see `Stages.replay`."""
    stages = _STAGES.get(rules.version)
    if stages is None:
        stages = _STAGES[rules.version] = _determine_stages(Stages(), rules)
    return stages.replay(typed.lazy(), sequential=sequential)


_STAGES: dict[str, Stages] = {}


def _determine_stages(lf: Stages, rules: Rules) -> Stages:
    """The rules as stages: each stage reads columns of the ones before, so
    no sub-expression is evaluated twice."""
    keys = [route_key(r) for r in rules.routes]
    birth, sep = pl.col("birth_date"), pl.col("separation_date")
    separated = sep.is_not_null()

    # rules §2 regime; rules §4 the date each route's age is reached
    lf = lf.with_columns(
        regime(rules).alias("regime"),
        covered(rules).alias("covered"),
        AC.cast(EXACT).alias("_compensation_exact"),
        *[date_reaching_age(birth, r.age).alias(f"{k}_age_date")
          for r, k in zip(rules.routes, keys)],
    )
    # rules §4: which routes hold (regime, group, service) and when each opens
    lf = lf.with_columns(
        *[route_applies(r).alias(f"{k}_applies") for r, k in zip(rules.routes, keys)])
    lf = lf.with_columns(
        *[(pl.col(f"{k}_applies") & route_service_holds(r)).alias(f"{k}_holds")
          for r, k in zip(rules.routes, keys)],
    )
    lf = lf.with_columns(
        # opens on max(separation_date, date age N is reached)
        *[pl.when(pl.col(f"{k}_holds") & separated)
          .then(pl.max_horizontal(sep, pl.col(f"{k}_age_date"))).alias(f"{k}_opens")
          for k in keys],
        pl.any_horizontal([pl.col(f"{k}_holds") for k in keys]).alias("_any_route"),
    )
    # rules §6 amount (computed for every row; emptied below when not entitled)
    parts, totals, rounded = amount_columns(rules)
    lf = lf.with_columns(parts).with_columns(totals)

    # rules §3 and §7: reasons, in the order of outcomes.REASONS
    lf = lf.with_columns(
        *rounded,
        _joined([
            pl.when(~pl.col("covered")).then(pl.lit("not_covered")),
            pl.when(~separated).then(pl.lit("not_separated")),
            pl.when(pl.col("refund_requested")).then(pl.lit("refund_requested")),
            pl.when(~pl.col("_any_route")).then(pl.lit("insufficient_service")),
        ]).alias("reasons"),
    ).with_columns((pl.col("reasons") == "").alias("_entitled"))
    entitled = pl.col("_entitled")

    # Eligibility: earliest opening among the routes that hold; ties go to the
    # first route in the rules file (rules §4; `earliest_route` for one row).
    lf = lf.with_columns(
        pl.when(entitled).then(pl.min_horizontal([pl.col(f"{k}_opens") for k in keys]))
        .alias("eligibility_date")
    )
    winner = pl.lit(None, dtype=pl.String)
    winner_age = pl.lit(None, dtype=pl.Date)
    for r, k in reversed(list(zip(rules.routes, keys))):
        hit = pl.col(f"{k}_opens") == pl.col("eligibility_date")
        winner = pl.when(hit).then(pl.lit(r.id)).otherwise(winner)
        winner_age = pl.when(hit).then(pl.col(f"{k}_age_date")).otherwise(winner_age)

    req, elig_d = pl.col("requested_start_date"), pl.col("eligibility_date")
    lf = lf.with_columns(
        winner.alias("route"),
        winner_age.alias("route_age_date"),
        pl.when(entitled).then(
            _joined([pl.when(pl.col(f"{k}_holds")).then(pl.lit(r.id))
                     for r, k in zip(rules.routes, keys)])
        ).otherwise(pl.lit("")).alias("routes_met"),
        pl.when(~entitled)
        .then(pl.lit("not_entitled"))
        .when(elig_d <= pl.col("as_of"))
        .then(pl.lit("eligible"))
        .otherwise(pl.lit("not_yet_eligible"))
        .alias("status"),
        # Regla 19.3: the start may be asked for on the eligibility date or later.
        pl.when(req >= elig_d).then(req).alias("start_date"),
        (req < elig_d).fill_null(False).alias("premature_request"),
        pl.when(entitled)
        .then(pl.max_horizontal(pl.col("_formula_exact"), pl.col("_minimum_exact")))
        .alias("_annual_exact"),
        (entitled & pl.col("_minimum_higher")).alias("minimum_applied"),
    )
    den = amount_denominator(rules)
    lf = lf.with_columns(
        round_half_up(pl.col("_annual_exact"), den).alias("annual_cents"),
        round_half_up(pl.col("_annual_exact"), 12 * den).alias("monthly_cents"),
    )
    # rules §7 warnings, in the order of outcomes.WARNINGS: the determination stands.
    act3 = rules.act_3_2013
    lf = lf.with_columns(
        _joined([
            # data checks: service_exceeds_span is computed with the rules §1
            # checks (validation.py); a first entry before the minimum age
            pl.when(pl.col("service_exceeds_span") & separated)
            .then(pl.lit("service_exceeds_span")),
            # rules §5: a start asked for before the determination's date,
            # premature or not (Regla 19.3 says when the pension may be
            # requested, not that it is paid for months before the request);
            # a participant not entitled has no start to warn about
            pl.when(entitled & (req < pl.col("as_of")))
            .then(pl.lit("start_before_determination")),
            pl.when(pl.col("entry_date") < date_reaching_age(birth, rules.min_entry_age))
            .then(pl.lit("implausible_entry_age")),
            # the statute of rules.citations["retirement_annuity"]: separated
            # on or after the day the winning route's age was reached
            pl.when(sep >= pl.col("route_age_date")).then(pl.lit("retirement_annuity_may_apply")),
            # rules §9 later laws, for entitled participants only
            pl.when(entitled & (sep > pl.lit(act3.accruals_frozen_after)))
            .then(pl.lit("act_3_2013_accruals_frozen")),
            pl.when(entitled & (elig_d > pl.lit(act3.ages_changed_after)))
            .then(pl.lit("act_3_2013_ages_may_apply")),
            pl.when(entitled & (pl.col("monthly_cents") < cents(act3.minimum_monthly)))
            .then(pl.lit("act_3_2013_minimum_may_apply")),
        ]).alias("warnings"),
        pl.lit(rules.version).alias("rules_version"),
    )
    return lf


RESULT_COLUMNS = (
    "participant_id",
    "status",
    "reasons",
    "regime",
    "eligibility_date",
    "route",
    "routes_met",
    "start_date",
    "premature_request",
    "annual_cents",
    "monthly_cents",
    "minimum_applied",
    "warnings",
    "rules_version",
)
