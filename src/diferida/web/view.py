"""A determination laid out for the page: the same facts the core returns,
grouped the way a reader looks for them (answer, amounts, why, the rules
checked). Texts come from the core catalog; only the page's headings and
the short "what would have been needed" lines come from the web labels."""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal
from functools import cache
from typing import Any

from diferida.dates import years_months_days
from diferida.determination import Determination, Finding, plain
from diferida.explain import cite, pct, reason_texts
from diferida.i18n import catalog, fmt_date, fmt_wait
from diferida.money import format_money
from diferida.render import regime_line, relief_note, rules_line, rules_of
from diferida.rules import DEFAULT_RULES

from .forms import FormState, participant, typed_inputs
from .labels import labels, plural

# Which finding carries the values behind each reason (rules §7 reason codes).
REASON_FINDING = {"not_covered": "covered", "not_separated": "separated",
                  "refund_requested": "no_refund", "insufficient_service": "insufficient_service"}
MONTHS_A_YEAR = 12
DATE_FIELDS = ("birth_date", "entry_date", "separation_date", "requested_start_date")


@cache
def _estimate_words(lang: str) -> tuple[re.Pattern[str], dict[str, str]]:
    pairs = {said.lower(): shown for said, shown in labels(lang)["estimate"]["words"]}
    alternatives = "|".join(re.escape(said) for said in pairs)  # in the file's order
    return re.compile(rf"\b(?:{alternatives})\b", re.IGNORECASE), pairs


def estimate_words(text: str, lang: str) -> str:
    """A sentence of the core as the public page says it: the core speaks of
    "the determination" (as `diferida evaluate` does); the page is an
    estimate, and says "estimate" or "calculation" (labels [estimate])."""
    pattern, pairs = _estimate_words(lang)

    def shown(m: re.Match[str]) -> str:
        word = pairs[m.group(0).lower()]
        return word[:1].upper() + word[1:] if m.group(0)[:1].isupper() else word

    return pattern.sub(shown, text)


def _finding(d: Determination, condition: str) -> Finding | None:
    return next((f for f in d.explanation if f.condition == condition), None)


def _mark(f: Finding, d: Determination, t: dict[str, Any]) -> dict[str, str]:
    """A symbol and a word for each finding, so colour is never the only
    signal. The word reads the finding as a person would: a route that opens
    later is "not yet", not "not met"; belonging to a regime is neither."""
    if f.condition in d.warnings:
        return {"symbol": "!", "word": t["held_warning"], "kind": "warn"}
    if f.condition == "regime":
        return {"symbol": "i", "word": t["held_regime"], "kind": "info"}
    if f.held is True:
        return {"symbol": "✓", "word": t["held_true"], "kind": "held"}
    if f.held is False and f.condition in ("route_applies", "minimum"):
        return {"symbol": "–", "word": t["not_applicable"], "kind": "na"}
    if f.held is False and f.condition in ("age", "eligibility"):
        return {"symbol": "…", "word": t["held_wait"], "kind": "later"}
    if f.held is False:
        return {"symbol": "✗", "word": t["held_false"], "kind": "not-held"}
    return {"symbol": "i", "word": t["held_none"], "kind": "info"}


def _iso(value: str | None) -> date | None:
    return None if value is None else date.fromisoformat(value)


def _service_words(years: Decimal, lang: str) -> str:
    """Service as read, in words: "21.25 años (21 años y 3 meses)", "22 años"."""
    c = labels(lang)["converter"]
    text = c["year"][0 if years == 1 else 1].format(n=plain(years))
    months = years * MONTHS_A_YEAR
    if months != months.to_integral_value() or years == years.to_integral_value():
        return text
    whole, rest = divmod(int(months), MONTHS_A_YEAR)
    parts = ([plural(c["year"], whole)] if whole else []) + [plural(c["month"], rest)]
    return f"{text} ({c['join'].join(parts)})"


def _data_rows(state: FormState) -> list[dict[str, str]]:
    """The participant's details as the determination read them."""
    lang, t, c = state.lang, labels(state.lang, state.rules_name), catalog(state.lang)
    d = state.determination
    v = state.core if state.core is not None else participant(state.values)
    empty = t["result"]["empty"]
    rows = []
    for name in ("participant_id", "birth_date", "entry_date", "separation_date",
                 "creditable_service_years", "average_compensation", "group",
                 "refund_requested", "deferred_right_1960", "requested_start_date"):
        raw = v.get(name)
        if name == "participant_id" and raw is None:
            continue
        if raw is None:
            shown = empty
            if name == "deferred_right_1960" and d is not None:
                # rules §6: derived from the entry date, and said so
                shown = t["result"]["derived"].format(
                    value=c["yes"] if d.deferred_right_1960 else c["no"])
        elif name in DATE_FIELDS:
            shown = fmt_date(date.fromisoformat(raw.strip()), lang)
        elif name == "average_compensation":
            shown = format_money(Decimal(raw.strip()))
        elif name == "creditable_service_years":
            shown = _service_words(Decimal(raw.strip()), lang)
        elif name == "group":
            shown = t["fields"]["group"]["options"][raw.strip()]
        elif name == "refund_requested":
            shown = t["result"]["refund_yes" if raw.strip().lower() == "true" else "refund_no"]
        elif name == "deferred_right_1960":
            shown = c["yes"] if raw.strip().lower() == "true" else c["no"]
        else:
            shown = raw
        rows.append({"label": t["fields"][name]["label"], "value": shown})
    return rows


def _formula(d: Determination, lang: str, rules: str) -> dict[str, Any] | None:
    f = d.formula
    if f is None:
        return None
    t = labels(lang, rules)["result"]
    comp = format_money(f.average_compensation)
    rows = []
    for b in f.brackets:
        if b.to_years is not None and b.from_years == 0:
            title = t["formula_bracket_first"]
        elif b.to_years is not None:
            title = t["formula_bracket"]
        elif b.from_years == 0:
            title = t["formula_bracket_all"]
        else:
            title = t["formula_bracket_open"]
        rows.append({
            "title": title.format(from_years=plain(b.from_years),
                                  to_years="" if b.to_years is None else plain(b.to_years)),
            "line": t["formula_line"].format(years=plain(b.years), rate=pct(b.rate),
                                             compensation=comp),
            "amount": format_money(b.amount),
        })
    minimum = None
    if f.minimum_amount is not None:
        minimum = {"title": t["minimum"].format(citation=cite(f.minimum_citation, lang)),
                   "amount": format_money(f.minimum_amount),
                   "note": t["minimum_applied" if f.minimum_applied else "minimum_not_applied"]}
    return {"citation": cite(f.citation, lang), "rows": rows,
            "total": format_money(f.formula_amount), "minimum": minimum}


def carried(state: FormState, lang: str | None = None) -> dict[str, str]:
    """The participant's details as the hidden fields of a posted form: the
    printable page of exactly what was evaluated, or the calculator with it.
    Posted, never put in a link: a URL ends up in logs and browser history."""
    q = {"lang": lang or state.lang, "rules": state.rules}
    if state.compare:
        q["compare"] = state.compare
    # each date as its three boxes, as typed (forms.typed_inputs)
    return {**q, **typed_inputs(state.values)}


def _in_service_headline(d: Determination, leaving: Determination,
                         t: dict[str, Any]) -> str:
    """"Todavía no se ha separado: si se separa el …, …": the core's answer
    for a separation on the determination's date, in one sentence."""
    lang = d.lang
    day = fmt_date(d.as_of, lang)
    if leaving.status != "not_entitled":
        return t["in_service_entitled"].format(
            date=day, eligibility_date=fmt_date(leaving.eligibility_date, lang),
            annual=format_money(leaving.annual_amount),
            monthly=format_money(leaving.monthly_amount))
    reasons = "; ".join(reason_texts(leaving.reasons, rules_of(leaving), lang))
    return t["in_service_not_entitled"].format(date=day,
                                               reasons=estimate_words(reasons, lang))


def _planned_note(d: Determination, t: dict[str, Any], leave_table: str) -> str | None:
    """A separation date after the determination's: say which service the
    answer counted (the one typed, nothing added until that date)."""
    sep = _finding(d, "separated")
    day = None if sep is None else sep.values.get("separation_date")
    service = _finding(d, "service")
    if day is None or day <= d.as_of.isoformat() or service is None:
        return None
    frozen = rules_of(d).act_3_2013.accruals_frozen_after
    key = "planned" if d.as_of >= frozen else "planned_before_freeze"
    return t[key].format(separation_date=fmt_date(date.fromisoformat(day), d.lang),
                         service=plain(Decimal(service.values["service"])),
                         leave_table=leave_table)


def _reading_plain(d: Determination, t: dict[str, Any]) -> str | None:
    """The doubt about 19.4, as one plain sentence: the date under each
    reading (the citations follow it on the page)."""
    f = _finding(d, "reading_19_4")
    if f is None or d.eligibility_date is None:
        return None
    other = f.values.get("other_eligibility_date")
    if other is None:
        return t["reading_plain_none"].format(date=fmt_date(d.eligibility_date, d.lang))
    return t["reading_plain"].format(date=fmt_date(d.eligibility_date, d.lang),
                                     other_date=fmt_date(date.fromisoformat(other), d.lang))


def _start_words(d: Determination, t: dict[str, Any], lang: str) -> str:
    """From when an entitled member's pension may start, in words."""
    # Regla 19.3 fixes when the pension may be requested, never that it
    # may begin on a date before the determination's (rules §5): someone
    # already eligible is told they may ask for it now.
    now = d.status == "eligible"
    start = _finding(d, "start")
    if d.premature_request and start is not None:
        return t["premature_now" if now else "premature"].format(
            requested=fmt_date(_iso(start.values["requested_start_date"]), lang),
            earliest=fmt_date(d.eligibility_date, lang))
    elif d.start_date is not None and d.start_date < d.as_of:
        return t["start_past"].format(requested=fmt_date(d.start_date, lang),
                                      as_of=fmt_date(d.as_of, lang))
    elif d.start_date is not None:
        return fmt_date(d.start_date, lang)
    else:
        return t["start_open_now" if now else "start_open"]


def _why_and_needed(d: Determination, t: dict[str, Any], lang: str, in_service: bool
                    ) -> tuple[list[str], list[str]]:
    """Why the member is not entitled (each reason in words) and what would
    be needed (none for what nothing can undo)."""
    why: list[str] = []
    needed_all: list[str] = []
    # Article 19 does not cover a member of the savings-account program: the
    # page says so and stops (no other reason, nothing "would be needed").
    reasons = ["not_covered"] if "not_covered" in d.reasons else list(d.reasons)
    for reason, text in zip(reasons, reason_texts(reasons, rules_of(d), lang)):
        text = estimate_words(text, lang)
        if not (in_service and reason == "not_separated"):
            # someone still in service is not told "✗ not separated" under
            # the headline that says what leaving would give
            why.append(text[:1].upper() + text[1:])
        if reason in ("not_covered", "refund_requested"):
            # a refund asked for cannot be undone by anything "needed": what a
            # person can do (confirm with the System whether it was asked for
            # and paid) is said under "Qué hacer ahora"
            continue
        f = _finding(d, REASON_FINDING[reason])
        values = f.values if f is not None else {}
        if reason == "insufficient_service" and values:
            sep = _finding(d, "separated") if d.explanation else None
            frozen = sep is not None and sep.values.get("separation_date") is not None and (
                sep.values["separation_date"] <= sep.values["as_of"])
            key = "needed_insufficient_service" if frozen else "needed_insufficient_service_open"
            needed = t[key].format(**values)
        elif reason == "insufficient_service":
            # No route is open to this participant at all: the finding that
            # says so is the one of each route.
            continue
        else:
            needed = t[f"needed_{reason}"]
            if reason == "not_separated" and "refund_requested" not in d.reasons:
                needed += " " + t["needed_not_separated_try"]
        needed_all.append(needed)
    return why, needed_all


def result_view(state: FormState, today: date, leaving: Determination | None = None,
                leave_table: str = "") -> dict[str, Any]:
    """The answer laid out. `leaving`: for someone still in service, the
    core's answer if they left on the determination's date (web/guidance.py
    `leaving_now`), which the headline states instead of "not entitled"."""
    d = state.determination
    assert d is not None
    lang = state.lang
    t, c = labels(lang, state.rules_name)["result"], catalog(lang)
    out: dict[str, Any] = {
        "status": d.status,
        "status_text": c["status"][d.status],
        "symbol": "✗" if d.status == "not_entitled" else "✓",
        "headline": estimate_words(d.headline, lang),
        "regime": regime_line(d),
        "rules_name": d.rules_name,
        "rules_title": d.rules_title,
        "rules_line": rules_line(d),
        # a rules set with a relief says, once, that the amount is the start's
        "relief_note": relief_note(rules_of(d), lang),
        "default_rules": d.rules_name == DEFAULT_RULES,
        "annual": format_money(d.annual_amount) if d.annual_amount is not None else None,
        "monthly": format_money(d.monthly_amount) if d.monthly_amount is not None else None,
        "eligibility_date": fmt_date(d.eligibility_date, lang) if d.eligibility_date else None,
        "route": cite(rules_of(d).route(d.route).citation, lang) if d.route else None,
        "routes_met": ", ".join(cite(rules_of(d).route(x).citation, lang) for x in d.routes_met),
        # for the public: the routes open now, not those that open years later
        "routes_open": ", ".join(
            cite(rules_of(d).route(f.values["route"]).citation, lang)
            for f in d.explanation if f.condition == "age" and f.values.get("opens")
            and f.values["opens"] <= d.as_of.isoformat() and f.values["route"] in d.routes_met),
        "wait": None,
        "start": None,
        "why": [],
        "needed": [],
        "formula": _formula(d, lang, state.rules_name),
        # each finding's text names its own source: it is not repeated beside it
        # (the warnings are listed once, in their own box above)
        # a route a reading opens (route_applies, held) is said by the
        # reading's own note, in this list too: not twice
        "explanation": [{**_mark(f, d, t), "rule": f.rule, "text": estimate_words(f.text, lang)}
                        for f in d.explanation if f.condition not in d.warnings
                        and not (f.condition == "route_applies" and f.held is True)],
        "reading": next((estimate_words(f.text, lang) for f in d.explanation
                         if f.condition == "reading_19_4"), None),
        "reading_plain": _reading_plain(d, t),
        "in_service": leaving is not None,
        "warnings": [estimate_words(f.text, lang)
                     for w in d.warnings if (f := _finding(d, w)) is not None],
        "data": _data_rows(state),
        "rules_version": d.rules_version,
        "as_of": fmt_date(d.as_of, lang),
        "issued": fmt_date(today, lang),
        "carry": carried(state),
        "notes": list(state.notes.values()),
    }
    if leaving is not None:
        # not a red "not entitled": someone who has simply not left yet; the
        # page then says one thing (no "why not" list under a neutral headline)
        out.update(status="in_service", status_text=t["in_service_status"], symbol="…",
                   headline=_in_service_headline(d, leaving, t))
    planned = _planned_note(d, t, leave_table)
    if planned is not None:
        out["notes"].append(planned)
    if d.status == "not_yet_eligible":
        assert d.eligibility_date is not None  # a date to wait for
        y, m, dd = years_months_days(d.as_of, d.eligibility_date)
        out["wait"] = t["wait"].format(wait=fmt_wait(y, m, dd, lang), as_of=fmt_date(d.as_of, lang))
    if d.status != "not_entitled":
        out["start"] = _start_words(d, t, lang)
    out["why"], out["needed"] = _why_and_needed(d, t, lang, leaving is not None)
    return out


# The fields of the comparison's table, in the order of the table (the
# compared fields of diferida.compare.engine, as the page names them).
COMPARISON_ROWS = ("status", "regime", "route", "eligibility_date", "start_date",
                   "annual_amount", "monthly_amount", "minimum_applied", "reasons")


def _compared_value(d: Determination, name: str, t: dict[str, Any]) -> str:
    """One compared field of a determination, as the page writes it: words,
    dates and amounts, never a code or an ISO date."""
    lang, c = d.lang, catalog(d.lang)
    none = t["none"]
    if name == "status":
        return c["status"][d.status]
    if name == "regime":
        return regime_line(d)
    if name == "route":
        return cite(rules_of(d).route(d.route).citation, lang) if d.route else none
    if name == "eligibility_date":
        return fmt_date(d.eligibility_date, lang) if d.eligibility_date else none
    if name == "start_date":
        start = _finding(d, "start")
        if d.premature_request and start is not None:
            # a premature request said as premature, as the start row says it
            # (rules §5 Decision), never "sin fecha indicada"
            r = labels(lang, d.rules_name)["result"]
            return r["premature_now" if d.status == "eligible" else "premature"].format(
                requested=fmt_date(_iso(start.values["requested_start_date"]), lang),
                earliest=fmt_date(d.eligibility_date, lang))
        if d.start_date is not None and d.start_date < d.as_of:
            # rules §5 Decision: a past date asked for is said as asked for
            return t["start_past"].format(requested=fmt_date(d.start_date, lang))
        if d.start_date is not None:
            return fmt_date(d.start_date, lang)
        return none if d.status == "not_entitled" else t["start_open"]
    if name in ("annual_amount", "monthly_amount"):
        value = getattr(d, name)
        return format_money(value) if value is not None else none
    if name == "minimum_applied":
        if d.status == "not_entitled":
            return none
        return t["yes"] if d.minimum_applied else t["no"]
    if name == "reasons":
        texts = reason_texts(d.reasons, rules_of(d), lang)
        return "; ".join(x[:1].upper() + x[1:] for x in texts) if texts else none
    raise ValueError(f"no wording for the compared field {name!r}")


def _side(d: Determination, t_rules: dict[str, Any]) -> dict[str, str]:
    return {"name": d.rules_name, "reading": t_rules["options"].get(d.rules_name, d.rules_name),
            "title": d.rules_title, "version": d.rules_version}


def comparison_view(state: FormState) -> dict[str, Any]:
    """The same case under the second rules set: both rule sets, the fields
    that differ under each, and the finding that explains the difference
    (all chosen by diferida.compare.person; only the words are the page's)."""
    cmp = state.comparison
    assert cmp is not None
    t_all = labels(state.lang, state.rules_name)
    t = t_all["comparison"]
    a, b = cmp.a, cmp.b
    rows = [{"field": name, "label": t["fields"][name],
             "a": _compared_value(a, name, t), "b": _compared_value(b, name, t)}
            for name in COMPARISON_ROWS if name in cmp.fields]
    finding = None
    if cmp.finding is not None:
        f = cmp.finding
        # what the finding is about, as a citation: the route it concerns
        # (under the rules that have it), or the finding's own rule
        route = cmp.route
        owner = a if route is not None and any(r.id == route for r in rules_of(a).routes) else b
        citation = (cite(rules_of(owner).route(route).citation, state.lang) if route is not None
                    else cite(f.rule, state.lang))
        finding = {"rule": catalog(state.lang)["the_rule"].format(citation=citation),
                   "under_a": cmp.under_a.text if cmp.under_a else t["not_checked"],
                   "under_b": cmp.under_b.text if cmp.under_b else t["not_checked"]}
    return {"a": _side(a, t_all["fields"]["rules"]), "b": _side(b, t_all["fields"]["rules"]),
            "same": cmp.same, "rows": rows, "finding": finding}
