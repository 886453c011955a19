"""Explanations: the findings of one determination, as data, then as text.

The engine (article19.py) computes every condition as a column; this module
only reads those columns for one row and says, in es or en, which rule was
checked, with which values, and whether it held. It decides nothing.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from .article19 import route_key
from .dates import years_months_days
from .determination import Bracket, Finding, Formula, plain
from .fields import SERVICE_UNITS
from .i18n import catalog, fmt_date, fmt_wait, msg
from .money import cents_to_decimal, format_money
from .rules import Rules


def years_text(units: int | None) -> str:
    """Service units as plain decimal years ("22", "12.25")."""
    if units is None:
        return ""
    d = (Decimal(units) / SERVICE_UNITS).normalize()
    return f"{d:f}"


_dec_text = plain


def pct(rate: Decimal) -> str:
    return f"{(rate * 100).normalize():f}%"


def formula_of(row: dict[str, Any], rules: Rules) -> Formula:
    scale = rules.amount[row["regime"]]
    brackets = []
    service = Decimal(row["service_units"]) / SERVICE_UNITS
    for i, b in enumerate(scale.brackets):
        upper = scale.brackets[i + 1].threshold if i + 1 < len(scale.brackets) else None
        years = max(service - b.threshold, Decimal(0))
        if upper is not None:
            years = min(years, upper - b.threshold)
        brackets.append(Bracket(scale.citation, b.threshold, upper, years.normalize(), b.rate,
                                cents_to_decimal(row[f"part{i}_cents"])))
    has_min = bool(row["deferred_right_1960"])
    return Formula(
        citation=scale.citation,
        average_compensation=cents_to_decimal(row["compensation_cents"]),
        brackets=tuple(brackets),
        formula_amount=cents_to_decimal(row["formula_cents"]),
        minimum_citation=rules.minimum_citation if has_min else None,
        minimum_amount=cents_to_decimal(row["minimum_cents"]) if has_min else None,
        minimum_applied=bool(row["minimum_applied"]),
    )


def explain(row: dict[str, Any], rules: Rules, lang: str,
            formula: Formula | None = None) -> list[Finding]:
    """The findings for one result row of `article19.determine`, in order
    (`formula`: the row's `formula_of`, when the caller has it already)."""
    out: list[Finding] = []
    d = lambda v: fmt_date(v, lang)  # noqa: E731
    iso = lambda v: None if v is None else v.isoformat()  # noqa: E731

    def add(rule: str, condition: str, values: dict, held: bool | None, key: str,
            section: str = "findings", **fmt: Any) -> None:
        out.append(Finding(rule, condition, values, held, msg(lang, section, key, **fmt)))

    entry, sep = row["entry_date"], row["separation_date"]
    service = years_text(row["service_units"])
    covered = bool(row["covered"])
    add(rules.not_covered_citation, "covered",
        {"entry_date": iso(entry), "not_covered_from": iso(rules.not_covered_from)}, covered,
        f"covered_{str(covered).lower()}", entry_date=d(entry),
        not_covered_from=d(rules.not_covered_from))
    regime = row["regime"]
    # the regime classifies the participant; it is not a condition to meet
    add(rules.new_participant_citation, "regime",
        {"entry_date": iso(entry), "cutoff": iso(rules.new_participant_after), "regime": regime},
        None, f"regime_{regime}", entry_date=d(entry),
        cutoff=d(rules.new_participant_after))

    # Regla 19.1 / 19.2: separated without a refund of contributions
    common_rule = rules.citations[f"conditions_{regime}"]
    add(common_rule, "separated", {"separation_date": iso(sep)}, sep is not None,
        f"separated_{str(sep is not None).lower()}", separation_date=d(sep))
    no_refund = not row["refund_requested"]
    add(common_rule, "no_refund", {"refund_requested": bool(row["refund_requested"])}, no_refund,
        f"no_refund_{str(no_refund).lower()}")

    # The routes, in the order of the rules file (SPEC §4)
    applicable_mins = []
    for r in rules.routes:
        k = route_key(r)
        if not row[f"{k}_applies"]:
            if regime not in r.regimes:
                names = " / ".join(catalog(lang)["regime"][x] for x in r.regimes)
                add(r.citation, "route_applies", {"route": r.id, "regime": regime}, False,
                    "route_not_for_regime", citation=r.citation, regimes=names)
            else:
                add(r.citation, "route_applies", {"route": r.id, "group": row["group"]}, False,
                    "route_not_for_group", citation=r.citation)
            continue
        applicable_mins.append(r.min_service)
        holds = bool(row[f"{k}_holds"])
        values = {"route": r.id, "service": service, "min_service": _dec_text(r.min_service),
                  "max_service": None if r.max_service is None else _dec_text(r.max_service)}
        key = "service_range" if r.max_service is not None else "service_min"
        add(r.citation, "service", values, holds, f"{key}_{str(holds).lower()}",
            citation=r.citation, min=_dec_text(r.min_service),
            max="" if r.max_service is None else _dec_text(r.max_service), service=service)
        if holds:
            age_date, opens = row[f"{k}_age_date"], row[f"{k}_opens"]
            vals = {"route": r.id, "age": r.age, "age_date": iso(age_date), "opens": iso(opens),
                    "as_of": iso(row["as_of"])}
            if opens is None:
                add(r.citation, "age", vals, None, "age_not_separated", citation=r.citation,
                    age=r.age, age_date=d(age_date))
            else:
                add(r.citation, "age", vals, opens <= row["as_of"], "age_opens",
                    citation=r.citation, age=r.age, age_date=d(age_date), opens=d(opens))

    reasons = list(row["reasons"])
    if "insufficient_service" in reasons and applicable_mins:
        needed = min(applicable_mins)
        add(common_rule, "insufficient_service", {"needed": _dec_text(needed), "service": service},
            False, "insufficient_service", needed=_dec_text(needed), service=service)

    if row["status"] != "not_entitled":
        r = rules.route(row["route"])
        elig, as_of = row["eligibility_date"], row["as_of"]
        vals = {"eligibility_date": iso(elig), "route": r.id, "as_of": iso(as_of),
                "routes_met": list(row["routes_met"])}
        met = ", ".join(row["routes_met"])
        if row["status"] == "eligible":
            add(r.citation, "eligibility", vals, True, "eligibility_eligible",
                eligibility_date=d(elig), citation=r.citation, routes_met=met)
        else:
            y, m, dd = years_months_days(as_of, elig)
            add(r.citation, "eligibility", vals, False, "eligibility_future",
                eligibility_date=d(elig), citation=r.citation, routes_met=met,
                wait=fmt_wait(y, m, dd, lang), as_of=d(as_of))
        req = row["requested_start_date"]
        svals = {"requested_start_date": iso(req), "eligibility_date": iso(elig)}
        start_rule = rules.citations["start"]
        if req is None:
            add(start_rule, "start", svals, None, "start_open", eligibility_date=d(elig))
        elif row["premature_request"]:
            add(start_rule, "start", svals, False, "start_premature", requested=d(req),
                eligibility_date=d(elig))
        else:
            add(start_rule, "start", svals, True, "start_requested", requested=d(req))

        f = formula or formula_of(row, rules)
        comp = cents_to_decimal(row["compensation_cents"])
        parts = [
            msg(lang, "findings", "bracket", rate=pct(b.rate), compensation=format_money(comp),
                years=_dec_text(b.years), amount=format_money(b.amount))
            for b in f.brackets
        ]
        add(f.citation, "amount", f.to_dict(), None, "amount", citation=f.citation,
            parts=" + ".join(parts), formula=format_money(f.formula_amount))
        if f.minimum_amount is not None:
            key = "minimum_applied" if f.minimum_applied else "minimum_not_applied"
            add(rules.minimum_citation, "minimum",
                {"minimum": f"{f.minimum_amount:.2f}", "formula": f"{f.formula_amount:.2f}"},
                f.minimum_applied, key, citation=rules.minimum_citation,
                rate=pct(rules.minimum_rate), minimum=format_money(f.minimum_amount),
                formula=format_money(f.formula_amount))
        annual = cents_to_decimal(row["annual_cents"])
        monthly = cents_to_decimal(row["monthly_cents"])
        add(f.citation, "totals", {"annual": f"{annual:.2f}", "monthly": f"{monthly:.2f}"}, None,
            "totals", annual=format_money(annual), monthly=format_money(monthly))

    for w in row["warnings"]:
        if w == "service_exceeds_span":
            # the separation day is the last day of service (see article19.py)
            span = years_months_days(entry, date.fromordinal(sep.toordinal() + 1))
            add(rules.citations["service_span"], "service_exceeds_span", {"service": service,
                "entry_date": iso(entry), "separation_date": iso(sep)}, False, w, "warnings",
                service=service, span=fmt_wait(*span, lang))
        elif w == "retirement_annuity_may_apply":
            r = rules.route(row["route"])
            add(r.citation, w, {"separation_date": iso(sep),
                "age_date": iso(row["route_age_date"])}, None, w, "warnings",
                separation_date=d(sep), citation=r.citation)
    add(rules.citations["scope"], "scope", {}, None, "scope")
    return out


def headline(row: dict[str, Any], lang: str) -> str:
    status = row["status"]
    return msg(lang, "headline", status, date=fmt_date(row["eligibility_date"], lang))


def reason_texts(reasons: list[str], lang: str) -> list[str]:
    return [catalog(lang)["reasons"][r] for r in reasons]


__all__ = ["explain", "formula_of", "headline", "years_text"]
