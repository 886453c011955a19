"""Explanations: the findings of one determination, as data, then as text.

The engine (article19.py) computes every condition as a column; this module
only reads those columns for one row and says, in es or en, which rule was
checked, with which values, and whether it held. It decides nothing.

What a finding may say (rules §7):
* every finding's text names its own source once (its `rule`), so a reader
  who sees one line alone knows where it comes from; renderers never repeat it;
* dates after `as_of` are spoken of in the future, dates on or before it in
  the past, and a route of a participant who is not entitled in the
  conditional (it "would open"); a separation after `as_of` is a plan;
* a **Decision** of the rules is stated only where it shapes this answer;
* the law's words (names of laws, rates, amounts, cut-off dates) come from the
  rules, so a variant that changes a number changes its sentence too.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

from .article19 import earliest_route, route_key, service_holds
from .dates import span_units, years_months_days
from .determination import Bracket, Finding, Formula, plain
from .fields import SERVICE_UNITS
from .i18n import catalog, fmt_date, fmt_wait, msg
from .money import cents_to_decimal, format_money
from .rules import DEFAULT_RULES, Route, Rules, load_rules
from .words import cite, law_words, pct

# ---- words that depend on the language ------------------------------------


def years_text(units: int | None) -> str:
    """Service units as plain decimal years ("22", "12.25")."""
    if units is None:
        return ""
    d = (Decimal(units) / SERVICE_UNITS).normalize()
    return f"{d:f}"


def years_phrase(years: str, lang: str) -> str:
    """"22 años", "1 año", "12.25 años" ("25.1666… años" for a cut number)."""
    forms = catalog(lang)["wait"]["years"]
    return forms[0 if years == "1" else 1].format(n=years)


_dec_text = plain


def listing(items: list[str], lang: str) -> str:
    """"a", "a y b", "a, b y c"."""
    join = catalog(lang)["wait"]["join"]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + join + items[-1]


def regime_text(regime: str, rules: Rules, lang: str, plural: bool = False) -> str:
    section = "regime_plural" if plural else "regime"
    return msg(lang, section, regime, law=cite(rules.laws[regime], lang))


def scope_text(rules: Rules, lang: str) -> str:
    """rules §9: what this project does not apply, in one sentence."""
    return msg(lang, "findings", "scope", citation=catalog(lang)["citations"]["scope"],
               **law_words(rules, lang))


def tense(day: date, as_of: date) -> str:
    """"past" for a day on or before the determination's date, else "future"."""
    return "past" if day <= as_of else "future"


def feb29_moved(birth: date, age_date: date | None) -> bool:
    """rules §4 Decision: a 29 February birthday falls on 28 February in a
    common year; True when that moved this date."""
    return (age_date is not None and (birth.month, birth.day) == (2, 29)
            and (age_date.month, age_date.day) == (2, 28))


# ---- the formula, as data ---------------------------------------------------


def _dollars(cents: int | None) -> Decimal:
    """An amount of an entitled member's formula: never missing."""
    amount = cents_to_decimal(cents)
    assert amount is not None
    return amount


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
                                _dollars(row[f"part{i}_cents"])))
    has_min = bool(row["deferred_right_1960"])
    return Formula(
        citation=scale.citation,
        average_compensation=_dollars(row["compensation_cents"]),
        brackets=tuple(brackets),
        formula_amount=_dollars(row["formula_cents"]),
        minimum_citation=rules.minimum_citation if has_min else None,
        minimum_amount=cents_to_decimal(row["minimum_cents"]) if has_min else None,
        minimum_applied=bool(row["minimum_applied"]),
    )


# ---- the findings -----------------------------------------------------------


class Writer:
    """Collects findings for one row; every text gets its citation."""

    def __init__(self, lang: str, rules: Rules):
        self.lang, self.rules = lang, rules
        self.out: list[Finding] = []
        self.words = law_words(rules, lang)
        self.catalog = catalog(lang)

    def text(self, section: str, key: str, **fmt: Any) -> str:
        # the given values over the law's words, without copying the words
        return self.catalog[section][key].format_map(ChainMap(fmt, self.words))

    def add(self, rule: str, condition: str, values: dict, held: bool | None, text: str) -> None:
        rule = cite(rule, self.lang)
        assert rule in text, (rule, text)  # every finding names its source once
        self.out.append(Finding(rule, condition, values, held, text))


def _iso(v: date | None) -> str | None:
    return None if v is None else v.isoformat()


def _routes_phrase(ids: list[str], rules: Rules, lang: str) -> str:
    return listing([cite(rules.route(i).citation, lang) for i in ids], lang)


def _coverage_findings(w: Writer, row: dict[str, Any], rules: Rules) -> bool:
    """Who Article 19 covers (Act 305-1999, rules §2) and, for a covered
    member, the regime that classifies them; whether they are covered."""
    lang = w.lang
    d = lambda v: fmt_date(v, lang)  # noqa: E731
    ct = lambda c: cite(c, lang)  # noqa: E731
    entry, regime, covered = row["entry_date"], row["regime"], bool(row["covered"])
    # Act 305-1999: who Article 19 covers at all (rules §2)
    rule = rules.not_covered_citation
    key = f"covered_{str(covered).lower()}"
    if entry == rules.not_covered_from:
        key += "_same"
    elif not covered and entry >= rules.hybrid_program_from:
        # rules §2 Decision (the wording): from that date new members joined
        # Act 3-2013's hybrid program, not Act 305-1999's savings accounts;
        # an entry on that very day is said as that day, not "on or after" it
        key += "_hybrid" + ("_same" if entry == rules.hybrid_program_from else "")
    w.add(rule, "covered",
          {"entry_date": _iso(entry), "not_covered_from": _iso(rules.not_covered_from)}, covered,
          w.text("findings", key, citation=ct(rule), entry_date=d(entry)))
    if not covered:
        return False

    # The regime classifies a covered participant; it is not a condition to meet.
    if covered:
        rule = rules.new_participant_citation
        same = "_same" if regime == "pre1990" and entry == rules.new_participant_after else ""
        text = w.text("findings", f"regime_{regime}{same}", citation=ct(rule),
                      entry_date=d(entry),
                      conditions=ct(rules.citations[f"conditions_{regime}"]),
                      amount=ct(rules.amount[regime].citation))
        if entry == rules.new_participant_after:
            # rules §2 Decision, stated only for an entry on that very day
            text += w.text("findings", "regime_cutoff_day", citation=ct(rule))
        w.add(rule, "regime", {"entry_date": _iso(entry),
              "cutoff": _iso(rules.new_participant_after), "regime": regime}, None, text)
    return True


def explain(row: dict[str, Any], rules: Rules, lang: str,
            formula: Formula | None = None) -> list[Finding]:
    """The findings for one result row of `article19.determine`, in order
    (`formula`: the row's `formula_of`, when the caller has it already)."""
    w = Writer(lang, rules)
    d = lambda v: fmt_date(v, lang)  # noqa: E731
    as_of, sep = row["as_of"], row["separation_date"]
    service = years_text(row["service_units"])
    service_words = years_phrase(service, lang)
    entitled = row["status"] != "not_entitled"
    planned = sep is not None and sep > as_of
    regime = row["regime"]
    ct = lambda c: cite(c, lang)  # noqa: E731

    if not _coverage_findings(w, row, rules):
        # Article 19 does not cover this member: nothing it would require is said
        w.add(catalog(lang)["citations"]["scope"], "scope", {}, None, scope_text(rules, lang))
        return w.out

    # Regla 19.1 / 19.2: separated without a refund of contributions
    rule = rules.citations[f"conditions_{regime}"]
    key = "separated_false" if sep is None else (
        "separated_planned" if planned else "separated_past")
    w.add(rule, "separated", {"separation_date": _iso(sep), "as_of": _iso(as_of)},
          None if planned else sep is not None,
          w.text("findings", key, citation=ct(rule), separation_date=d(sep)))
    no_refund = not row["refund_requested"]
    w.add(rule, "no_refund", {"refund_requested": bool(row["refund_requested"])}, no_refund,
          w.text("findings", f"no_refund_{str(no_refund).lower()}", citation=ct(rule)))

    # The routes, in the order of the rules file (rules §4)
    applicable: list[Route] = []
    for r in rules.routes:
        route_findings(w, row, r, applicable, entitled, service, service_words)

    reasons = list(row["reasons"])
    if "insufficient_service" in reasons and applicable:
        needed = min(applicable, key=lambda r: r.min_service)
        key = "insufficient_service_frozen" if sep is not None and not planned else (
            "insufficient_service_open")
        text = w.text("findings", key, citation=ct(needed.citation),
                      needed=years_phrase(_dec_text(needed.min_service), lang),
                      service=service_words)
        if row["deferred_right_1960"]:
            text += w.text("findings", "minimum_no_substitute")
        w.add(needed.citation, "insufficient_service",
              {"needed": _dec_text(needed.min_service), "service": service}, False, text)

    if entitled:
        _entitled_findings(w, row, rules, formula or formula_of(row, rules))

    for code in row["warnings"]:
        _warning(w, row, code, service)

    w.add(catalog(lang)["citations"]["scope"], "scope", {}, None, scope_text(rules, lang))
    return w.out


def route_findings(w: Writer, row: dict[str, Any], r: Route, applicable: list[Route],
                    entitled: bool, service: str, service_words: str) -> None:
    lang, rules = w.lang, w.rules
    k = route_key(r)
    regime, group = row["regime"], row["group"]
    route = cite(r.citation, lang)
    if not row[f"{k}_applies"]:
        if group not in r.groups:
            # the article's own condition: members of the Police or Fire Corps
            w.add(r.citation, "route_applies", {"route": r.id, "group": group}, False,
                  w.text("findings", "route_not_for_group", citation=route))
        elif r.regimes_source is None and regime == "new":
            # rules §2 Decision: 19.1 governs pre-1990 participants and 19.2 new
            # ones; the article does not say so of 19.1, so it is marked
            again = any(f.values.get("decision") == "regimes_split" for f in w.out)
            w.add(r.citation, "route_applies",
                  {"route": r.id, "regime": regime, "decision": "regimes_split"}, False,
                  w.text("findings", "route_not_for_regime_decision" + ("_again" if again else ""),
                         citation=route,
                         conditions_pre1990=cite(rules.citations["conditions_pre1990"], lang),
                         conditions_new=cite(rules.citations["conditions_new"], lang)))
        elif r.regimes_source is None:
            regimes = listing([regime_text(x, rules, lang, plural=True) for x in r.regimes], lang)
            w.add(r.citation, "route_applies", {"route": r.id, "regime": regime}, False,
                  w.text("findings", "route_not_for_regime", citation=route, regimes=regimes))
        else:
            # a limit that comes from this rules set's reading of the statute
            source = f"{rules.name} ({r.regimes_source})"
            regimes = listing([regime_text(x, rules, lang, plural=True) for x in r.regimes], lang)
            w.add(source, "route_applies",
                  {"route": r.id, "regime": regime, "source": r.regimes_source}, False,
                  w.text("findings", "route_not_for_regime_reading", citation=cite(source, lang),
                         route=route, regime_plural=regime_text(regime, rules, lang, True),
                         regimes=regimes, source=r.regimes_source))
        return
    reading = rules.reading_19_4
    if regime == "new" and r.id in reading.routes:
        # rules §2 Decision: this rules set reads 19.4's "también" as opening
        # the route to new participants too; said as the route's first
        # finding, so that a comparison with the other reading pairs it with
        # that reading's "does not apply" (compare/why.py)
        w.add(r.citation, "route_applies",
              {"route": r.id, "regime": regime, "reading": reading.reading}, True,
              w.text("findings", "route_for_regime_reading", citation=route, rules=rules.name,
                     regime_plural=regime_text(regime, rules, lang, True)))
    applicable.append(r)
    holds = bool(row[f"{k}_holds"])
    values = {"route": r.id, "service": service, "min_service": _dec_text(r.min_service),
              "max_service": None if r.max_service is None else _dec_text(r.max_service)}
    key = "service_range" if r.max_service is not None else "service_min"
    text = w.text("findings", f"{key}_{str(holds).lower()}", citation=route,
                  min=_dec_text(r.min_service),
                  max="" if r.max_service is None else _dec_text(r.max_service),
                  service=service_words)
    base = regulation_route(rules, r.id)
    if base is not None and (base.min_service, base.max_service) != (r.min_service,
                                                                     r.max_service):
        asked = (_dec_text(base.min_service) if base.max_service is None
                 else f"{_dec_text(base.min_service)}–{_dec_text(base.max_service)}")
        text = (w.text("findings", "changed_service", rules=rules.name, citation=route,
                       base=years_phrase(asked, lang)) + text[0].lower() + text[1:])
    w.add(r.citation, "service", values, holds, text)
    if not holds:
        return
    as_of = row["as_of"]
    age_date, opens = row[f"{k}_age_date"], row[f"{k}_opens"]
    vals = {"route": r.id, "age": r.age, "age_date": _iso(age_date), "opens": _iso(opens),
            "as_of": _iso(as_of)}
    text = (age_sentence(w, r, age_date, as_of) + opens_sentence(w, opens, entitled, as_of)
            + feb29_sentence(w, feb29_moved(row["birth_date"], age_date)))
    w.add(r.citation, "age", vals, None if opens is None else opens <= as_of, text)


# The three parts of a route's age finding, each from the values it reads
# (also written one distinct value at a time by compare.why).


def age_sentence(w: Writer, r: Route, age_date: date, as_of: date) -> str:
    base = regulation_route(w.rules, r.id)
    if base is not None and base.age != r.age:
        # a number the rules set changes is the rules set's, not the Regulation's
        return (w.text("findings", "changed_age", rules=w.rules.name, base=base.age, age=r.age,
                       citation=cite(r.citation, w.lang))
                + w.text("findings", f"age_reached_{tense(age_date, as_of)}",
                         age_date=fmt_date(age_date, w.lang)))
    return w.text("findings", f"age_{tense(age_date, as_of)}", citation=cite(r.citation, w.lang),
                  age=r.age, age_date=fmt_date(age_date, w.lang))


def regulation(rules: Rules) -> Rules | None:
    """The Regulation as written (the built-in rules) when `rules` is another
    rules set, to tell which numbers it changes."""
    return None if rules.name == DEFAULT_RULES else load_rules(DEFAULT_RULES)


def regulation_route(rules: Rules, route_id: str) -> Route | None:
    base = regulation(rules)
    if base is None:
        return None
    try:
        return base.route(route_id)
    except KeyError:
        return None


def opens_sentence(w: Writer, opens: date | None, entitled: bool, as_of: date) -> str:
    if opens is None:
        return w.text("findings", "opens_not_separated")
    if not entitled:
        key = "opens_would_past" if opens <= as_of else "opens_would"
        return w.text("findings", key, opens=fmt_date(opens, w.lang))
    return w.text("findings", f"opens_{tense(opens, as_of)}", opens=fmt_date(opens, w.lang))


def feb29_sentence(w: Writer, moved: bool) -> str:
    return w.text("findings", "feb29") if moved else ""


def _start_finding(w: Writer, row: dict[str, Any], rules: Rules) -> None:
    """From when the pension may start (Regla 19.3): open, requested, or
    requested before eligibility (premature)."""
    lang = w.lang
    d = lambda v: fmt_date(v, lang)  # noqa: E731
    ct = lambda c: cite(c, lang)  # noqa: E731
    elig, as_of = row["eligibility_date"], row["as_of"]
    req = row["requested_start_date"]
    svals = {"requested_start_date": _iso(req), "eligibility_date": _iso(elig)}
    start_rule = rules.citations["start"]
    # rules §5 Decision: Regla 19.3 says from when the pension may be requested,
    # never that it may start on a date before the determination's
    now = "" if elig > as_of else "_past"
    if req is None:
        w.add(start_rule, "start", svals, None,
              w.text("findings", "start_open" if now else "start_open_future",
                     citation=ct(start_rule), eligibility_date=d(elig)))
    elif row["premature_request"]:
        w.add(start_rule, "start", svals, False,
              w.text("findings", f"start_premature{now}", citation=ct(start_rule),
                     requested=d(req), eligibility_date=d(elig)))
    else:
        key = "start_requested_past" if req < as_of else "start_requested"
        w.add(start_rule, "start", svals, True,
              w.text("findings", key, citation=ct(start_rule), requested=d(req),
                     eligibility_date=d(elig), as_of=d(as_of)))


def _entitled_findings(w: Writer, row: dict[str, Any], rules: Rules, f: Formula) -> None:
    lang = w.lang
    d = lambda v: fmt_date(v, lang)  # noqa: E731
    ct = lambda c: cite(c, lang)  # noqa: E731
    r = rules.route(row["route"])
    elig, as_of = row["eligibility_date"], row["as_of"]
    met = list(row["routes_met"])
    vals = {"eligibility_date": _iso(elig), "route": r.id, "as_of": _iso(as_of),
            "routes_met": met}
    others = [x for x in met if x != r.id]
    tied = [x.id for x in rules.routes if row[f"{route_key(x)}_opens"] == elig]
    key = f"eligibility_{tense(elig, as_of)}" + (
        "_only" if not others else "_tie" if len(tied) > 1 else "")
    text = w.text("findings", key, eligibility_date=d(elig), citation=ct(r.citation),
                  others=_routes_phrase(others, rules, lang))
    if elig > as_of:
        y, m, dd = years_months_days(as_of, elig)
        one = sum(1 for n in (y, m, dd) if n) == 1 and 1 in (y, m, dd)
        text += w.text("findings", "wait_one" if one else "wait_many",
                       wait=fmt_wait(y, m, dd, lang), as_of=d(as_of))
    if len(tied) > 1:
        # rules §4 Decision: ties go to the first route in the table
        vals["tied_routes"] = tied
        the = catalog(lang)["the_rule"]
        tied_text = listing([the.format(citation=cite(rules.route(i).citation, lang))
                             for i in tied if i != r.id], lang)
        key = ("tie_one" if len(tied) == 2 else "tie_many") + (
            "_future" if elig > as_of else "")
        text += w.text("findings", key, tied=tied_text)
    w.add(r.citation, "eligibility", vals, elig <= as_of, text)

    _reading_19_4(w, row, rules, r)

    _start_finding(w, row, rules)

    comp = format_money(f.average_compensation)
    parts = [w.text("findings", "bracket", rate=pct(b.rate), compensation=comp,
                    years=years_phrase(_dec_text(b.years), lang), amount=format_money(b.amount))
             for b in f.brackets]
    text = w.text("findings", "amount", citation=ct(f.citation), parts=" + ".join(parts),
                  formula=format_money(f.formula_amount))
    regime = row["regime"]
    if r.id in rules.reading_19_4.routes:
        # rules §6 Decision: the formula follows the regime, whatever the route
        # (said where the route is not the regime's own: 19.4, under either reading)
        text += w.text("findings", "amount_follows_regime", route=ct(r.citation),
                       regime=regime_text(regime, rules, lang), citation=ct(f.citation))
    base = regulation(rules)
    if base is not None:
        ours, theirs = rules.amount[regime].brackets, base.amount[regime].brackets
        if ours != theirs:  # the rules set's scale, not the Regulation's
            text += w.text("findings", "changed_rates", rules=rules.name,
                           citation=ct(f.citation),
                           base=listing([pct(b.rate) for b in theirs], lang))
    w.add(f.citation, "amount", f.to_dict(), None, text)

    _minimum_19_6(w, row, rules, f)

    annual = cents_to_decimal(row["annual_cents"])
    monthly = cents_to_decimal(row["monthly_cents"])
    rule = rules.minimum_citation if f.minimum_applied else f.citation
    key = "totals_minimum" if f.minimum_applied else "totals_formula"
    w.add(rule, "totals", {"annual": f"{annual:.2f}", "monthly": f"{monthly:.2f}"}, None,
          w.text("findings", key, citation=ct(rule), annual=format_money(annual),
                 monthly=format_money(monthly)))


def _reading_19_4(w: Writer, row: dict[str, Any], rules: Rules, r: Route) -> None:
    """rules §2 Decision, stated under either reading where it shapes this
    answer (a new participant of the Police or Fire Corps whom a route of
    19.4 serves under one reading and not the other): the doubt, the name of
    the rules set with the other reading and the date it would give."""
    reading = rules.reading_19_4
    regime = row["regime"]
    if regime == "pre1990":
        return
    if reading.reading == "both_regimes":
        if r.id not in reading.routes:
            return
    else:
        other_routes = load_rules(reading.other_reading)
        served = [x for x in other_routes.routes if x.id in reading.routes
                  and regime in x.regimes and row["group"] in x.groups
                  and service_holds(rules.route(x.id), row["service_units"])]
        if not served:
            return
    lang = w.lang
    other = load_rules(reading.other_reading)
    found = _earliest_opening(row, rules, other)
    vals: dict[str, Any] = {"reading": reading.reading, "other_reading": other.name,
                            "other_eligibility_date": None, "other_route": None}
    if found is not None:
        when, first = found
        vals |= {"other_eligibility_date": _iso(when), "other_route": first.id}
        alternative = w.text("findings", "reading_alternative", date=fmt_date(when, lang),
                             route=cite(first.citation, lang))
    else:
        alternative = w.text("findings", "reading_no_alternative")
    key = "reading_19_4_both" if reading.reading == "both_regimes" else "reading_19_4_strict"
    w.add(reading.citation, "reading_19_4", vals, None,
          w.text("findings", key, citation=cite(reading.citation, lang),
                 other=other.name, alternative=alternative))


def _earliest_opening(row: dict[str, Any], rules: Rules,
                      other: Rules) -> tuple[date, Route] | None:
    """The eligibility date and route this row would have under `other`, a
    reading that differs from `rules` only in which regimes a route serves:
    the routes `other` opens to the row's regime and group, with the service
    thresholds and the ages of `rules` (so a reform's numbers hold under
    either reading), and the engine's hit policy (`earliest_route`)."""
    sep = row["separation_date"]
    if sep is None:
        return None
    units = row["service_units"]
    openings = []
    for x in other.routes:
        here = rules.route(x.id)
        if (row["regime"] not in x.regimes or row["group"] not in x.groups
                or not service_holds(here, units)):
            continue
        openings.append((x, max(sep, row[f"{route_key(here)}_age_date"])))
    return earliest_route(openings)


def _minimum_19_6(w: Writer, row: dict[str, Any], rules: Rules, f: Formula) -> None:
    """Regla 19.6, always one finding for an entitled participant: whether
    its condition holds (declared or derived, rules §6), and if so, whether
    the minimum is higher than the formula."""
    lang = w.lang
    rule = rules.minimum_citation
    ct = cite(rule, lang)
    has_right = bool(row["deferred_right_1960"])
    declared = bool(row["deferred_right_1960_declared"])
    source = "declared" if declared else "derived"
    vals: dict[str, Any] = {"deferred_right_1960": has_right, "source": source,
                            "entry_date": _iso(row["entry_date"]),
                            "cutoff": _iso(rules.deferred_right_cutoff)}
    entry = fmt_date(row["entry_date"], lang)
    if not has_right:
        w.add(rule, "minimum", vals, None,
              w.text("findings", f"minimum_{source}_false", citation=ct, entry_date=entry))
        return
    text = w.text("findings", "minimum_condition", citation=ct)
    base = regulation(rules)
    if base is not None and base.minimum_rate != rules.minimum_rate:
        text += w.text("findings", "changed_minimum", rules=rules.name, citation=ct,
                       base=pct(base.minimum_rate))
    text += w.text("findings", f"minimum_{source}_true", entry_date=entry)
    key = "minimum_applied" if f.minimum_applied else "minimum_not_applied"
    text += w.text("findings", key, compensation=format_money(f.average_compensation),
                   minimum=format_money(f.minimum_amount), formula=format_money(f.formula_amount))
    vals |= {"minimum": f"{f.minimum_amount:.2f}", "formula": f"{f.formula_amount:.2f}"}
    w.add(rule, "minimum", vals, f.minimum_applied, text)


def _warning(w: Writer, row: dict[str, Any], code: str, service: str) -> None:
    """The finding of a warning, by its code (outcomes.WARNINGS): each
    written by the function of its own below."""
    _WARNING_FINDINGS[code](_Facts(w, row, service), code)


@dataclass(frozen=True)
class _Facts:
    """What every warning's finding is written from: the writer, the row, the
    service in words, and the dates of the row in the run's language."""

    w: Writer
    row: dict[str, Any]
    service: str

    def d(self, v: date) -> str:
        return fmt_date(v, self.w.lang)


def _finding_service_exceeds_span(f: _Facts, code: str) -> None:
    w, row = f.w, f.row
    service = f.service
    lang = w.lang
    entry = row["entry_date"]
    sep = row["separation_date"]
    data_check = catalog(lang)["citations"]["data_check"]
    # the separation day is the last day of service (see validation.py);
    # the span is measured as service is and compared to 4 places (rules §7)
    end = date.fromordinal(sep.toordinal() + 1)
    y, m, days, units = span_units(entry, end, SERVICE_UNITS)
    span = years_text(units)
    w.add(data_check, code, {"service": service, "entry_date": _iso(entry),
          "separation_date": _iso(sep), "span_years": span}, False,
          w.text("warnings", code, citation=data_check, service=years_phrase(service, lang),
                 span=fmt_wait(y, m, days, lang), span_years=years_phrase(span, lang)))


def _finding_start_before_determination(f: _Facts, code: str) -> None:
    w, row, d = f.w, f.row, f.d
    lang, rules = w.lang, w.rules
    as_of = row["as_of"]
    rule = rules.citations["start"]
    req = row["requested_start_date"]
    key = code + ("_premature" if row["premature_request"] else "")
    w.add(rule, code, {"requested_start_date": _iso(req), "start_date": _iso(row["start_date"]),
          "as_of": _iso(as_of)}, None,
          w.text("warnings", key, citation=cite(rule, lang), requested=d(req),
                 as_of=d(as_of)))


def _finding_implausible_entry_age(f: _Facts, code: str) -> None:
    w, row, d = f.w, f.row, f.d
    lang, rules = w.lang, w.rules
    birth = row["birth_date"]
    entry = row["entry_date"]
    data_check = catalog(lang)["citations"]["data_check"]
    w.add(data_check, code, {"birth_date": _iso(birth), "entry_date": _iso(entry),
          "min_entry_age": rules.min_entry_age}, False,
          w.text("warnings", code, citation=data_check, entry_date=d(entry),
                 birth_date=d(birth), age=rules.min_entry_age))


def _finding_retirement_annuity_may_apply(f: _Facts, code: str) -> None:
    w, row, d = f.w, f.row, f.d
    lang, rules = w.lang, w.rules
    sep = row["separation_date"]
    as_of = row["as_of"]
    r = rules.route(row["route"])
    when = "planned" if sep > as_of else "today" if sep == as_of else "past"
    lead = w.text("warnings", f"retirement_annuity_may_apply_{when}", separation_date=d(sep),
                  age=r.age, route=cite(r.citation, lang))
    if row["regime"] == "new" and r.id in rules.reading_19_4.routes:
        # rules §2: the 19.4 ages are granted in the pre-1990 section of the
        # statute; the new participants' section has no such option, so it
        # says nothing of this age (the doubt of the reading finding)
        rule = rules.reading_19_4.statute_pre1990
        body = w.text("warnings", "retirement_annuity_may_apply_body_19_4_new",
                      citation=cite(rule, lang), route=cite(r.citation, lang))
    else:
        rule = rules.citations["retirement_annuity" if row["regime"] == "pre1990"
                               else "retirement_annuity_new"]
        body = w.text("warnings", "retirement_annuity_may_apply_body",
                      citation=cite(rule, lang))
    w.add(rule, code, {"separation_date": _iso(sep), "age_date": _iso(row["route_age_date"]),
          "route": r.id}, None, lead + body)


def _finding_act_3_2013_accruals_frozen(f: _Facts, code: str) -> None:
    w, row, d = f.w, f.row, f.d
    service = f.service
    lang, rules = w.lang, w.rules
    entry = row["entry_date"]
    sep = row["separation_date"]
    act3 = rules.act_3_2013
    frozen = act3.accruals_frozen_after
    text = w.text("warnings", code, citation=cite(act3.citation, lang),
                  separation_date=d(sep), date=d(frozen))
    # rules §7 Decision (docs/rules.md): the check this warning asks for
    # (service only up to that day) is contradicted by the facts when the
    # service is longer than the span from entry through that day and no
    # longer than the span to separation (no sign of credited prior
    # service, which service_exceeds_span asks to check instead): the
    # service given then includes time after that day
    y, m, days, units = span_units(entry, date.fromordinal(frozen.toordinal() + 1),
                                   SERVICE_UNITS)
    contradicted = (row["service_units"] > units
                    and "service_exceeds_span" not in row["warnings"])
    values: dict[str, Any] = {"separation_date": _iso(sep), "date": _iso(frozen),
                              "span_years": years_text(units),
                              "contradicted": contradicted}
    if contradicted:
        text = w.text("warnings", code + "_contradicted", service=years_phrase(service, lang),
                      span=fmt_wait(y, m, days, lang),
                      span_years=years_phrase(years_text(units), lang),
                      entry_date=d(entry), date=d(frozen), separation_date=d(sep),
                      citation=cite(act3.citation, lang))
    w.add(act3.citation, code, values, False if contradicted else None, text)


def _finding_act_3_2013_ages_may_apply(f: _Facts, code: str) -> None:
    w, row, d = f.w, f.row, f.d
    lang, rules = w.lang, w.rules
    act3 = rules.act_3_2013
    w.add(act3.citation, code, {"eligibility_date": _iso(row["eligibility_date"]),
          "date": _iso(act3.ages_changed_after)}, None,
          w.text("warnings", code, citation=cite(act3.citation, lang),
                 eligibility_date=d(row["eligibility_date"]),
                 date=d(act3.ages_changed_after)))


def _finding_act_3_2013_minimum_may_apply(f: _Facts, code: str) -> None:
    w, row = f.w, f.row
    lang, rules = w.lang, w.rules
    act3 = rules.act_3_2013
    monthly = cents_to_decimal(row["monthly_cents"])
    w.add(act3.citation, code, {"monthly": f"{monthly:.2f}",
          "minimum_monthly": f"{act3.minimum_monthly:.2f}"}, None,
          w.text("warnings", code, citation=cite(act3.citation, lang),
                 monthly=format_money(monthly), minimum=format_money(act3.minimum_monthly)))


_WARNING_FINDINGS = {
    "service_exceeds_span": _finding_service_exceeds_span,
    "start_before_determination": _finding_start_before_determination,
    "implausible_entry_age": _finding_implausible_entry_age,
    "retirement_annuity_may_apply": _finding_retirement_annuity_may_apply,
    "act_3_2013_accruals_frozen": _finding_act_3_2013_accruals_frozen,
    "act_3_2013_ages_may_apply": _finding_act_3_2013_ages_may_apply,
    "act_3_2013_minimum_may_apply": _finding_act_3_2013_minimum_may_apply,
}


def headline(row: dict[str, Any], rules: Rules, lang: str) -> str:
    status = row["status"]
    key = status
    sep = row["separation_date"]
    if status == "not_yet_eligible" and sep is not None and sep > row["as_of"]:
        key = "not_yet_eligible_planned"
    if status == "not_entitled" and "not_covered" in row["reasons"]:
        key = "not_entitled_not_covered"
    return msg(lang, "headline", key, date=fmt_date(row["eligibility_date"], lang),
               separation_date=fmt_date(sep, lang), **law_words(rules, lang))


def reason_texts(reasons: list[str], rules: Rules, lang: str) -> list[str]:
    words = law_words(rules, lang)
    return [catalog(lang)["reasons"][r].format(**words) for r in reasons]


__all__ = ["cite", "explain", "formula_of", "headline", "law_words", "readings", "reason_texts",
           "regime_text", "scope_text", "years_text"]


# ---- the readings of the article an answer depends on ------------------------

def _found(d: Mapping[str, Any], condition: str) -> Mapping[str, Any] | None:
    return next((f for f in d["explanation"] if f["condition"] == condition), None)


def _day(value: Any) -> date | None:
    return None if value in (None, "") else date.fromisoformat(str(value)[:10])


def _route_cited(d: Mapping[str, Any], route: str, rules: Rules, lang: str) -> str:
    """A route's citation as the findings cite it (the rules set's own)."""
    for f in d["explanation"]:
        if f["condition"] == "service" and f["values"].get("route") == route:
            return str(f["rule"])
    return cite(rules.route(route).citation, lang)


def readings(d: Mapping[str, Any], rules: Rules, lang: str,
             birth_date: date | None = None) -> list[str]:
    """The readings of the article (rules' **Decisions** on its ambiguities)
    this determination depends on, and only those, one sentence each, read
    from its findings (`d`: a determination's JSON form): the regimes of
    19.1 and 19.2, the cut-off day, the 19.4 doubt under either reading
    with the other reading's date, a 29 February birthday, a tie, what 19.3
    says of the start, the amount following the regime, and how 19.6's
    condition is read. The project's own conventions (rounding, how the
    span is counted, what a premature request is) and the later laws are
    not readings of the article: they are said where they apply, not here."""
    t = catalog(lang)["readings"]
    words = law_words(rules, lang)
    out: list[str] = []
    entitled = d["status"] != "not_entitled"
    covered = "not_covered" not in d["reasons"]
    regime = _found(d, "regime")
    if regime is not None and regime["values"].get("entry_date") == regime["values"].get(
            "cutoff"):
        out.append(t["regime_cutoff"].format(citation=regime["rule"], **words))
    if covered and d["regime"] == "new":
        # the regimes' own routes (those open to the general group)
        the = catalog(lang)["the_rule"]
        own = [r for r in rules.routes if "general" in r.groups]
        pre = [the.format(citation=cite(r.citation, lang)) for r in own
               if tuple(r.regimes) == ("pre1990",)]
        new = [the.format(citation=cite(r.citation, lang)) for r in own
               if tuple(r.regimes) == ("new",)]
        if pre and new:
            out.append(_upper(t["regimes_split"].format(routes_pre1990=listing(pre, lang),
                                                        routes_new=listing(new, lang))))
    reading = _found(d, "reading_19_4")
    if reading is not None:
        v = reading["values"]
        key = "doubt_19_4_both" if v.get("reading") == "both_regimes" else "doubt_19_4_strict"
        other = _day(v.get("other_eligibility_date"))
        na = catalog(lang)["letter"]["not_applicable"]
        out.append(_upper(t[key].format(
            **words, other_date=fmt_date(other, lang) if other else na,
            other_route=cite(rules.route(v["other_route"]).citation, lang)
            if v.get("other_route") else na)))
    if birth_date is not None and (birth_date.month, birth_date.day) == (2, 29) and any(
            f["condition"] == "age" and (a := _day(f["values"].get("age_date"))) is not None
            and (a.month, a.day) == (2, 28) for f in d["explanation"]):
        out.append(t["feb29"])
    elig = _found(d, "eligibility")
    if elig is not None and elig["values"].get("tied_routes"):
        out.append(t["tie"].format(routes=", ".join(cite(r.citation, lang)
                                                    for r in rules.routes)))
    if entitled and (d["status"] == "eligible"
                     or "start_before_determination" in d["warnings"]):
        out.append(t["start_request"].format_map(words))
    if entitled and d.get("route") in rules.reading_19_4.routes:
        formula = d.get("formula") or {}
        out.append(t["amount_follows_regime"].format(
            route=_route_cited(d, d["route"], rules, lang),
            regime=regime_text(d["regime"], rules, lang),
            amount=cite(formula.get("citation") or rules.amount[d["regime"]].citation, lang)))
    if d.get("deferred_right_1960"):
        out.append(t["minimum_reading"].format_map(words))
    return out


def _upper(text: str) -> str:
    return text[:1].upper() + text[1:]
