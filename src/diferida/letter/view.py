"""The letter's content, as data for its template: each part from the stored
determination (its findings, their sentences and citations, as recorded),
the stored inputs, the case's facts, and the catalogs. Nothing here applies a
rule: which Decisions of the rules are listed is read from the findings' values.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from ..determination import plain
from ..errors import DiferidaError
from ..explain import cite, readings, reason_texts, years_phrase
from ..fields import SERVICE_UNITS
from ..i18n import catalog, check_lang, fmt_date, fmt_wait
from ..money import format_money
from ..render import regime_words, relief_note
from ..rules import DEFAULT_RULES, Rules, builtin_names, load_rules
from ..words import law_words
from .texts import editable, missing_texts

if TYPE_CHECKING:
    from . import LetterFacts

# Puerto Rico keeps Atlantic Standard Time all year (no daylight saving).
AST = timezone(timedelta(hours=-4), "AST")
# Texts that may be reworded between releases without changing the decision.
TEXT_KEYS = ("headline", "explanation", "rules_title", "lang")
# Which finding carries the values behind each reason (rules §7 reason codes).
REASON_FINDING = {"not_covered": "covered", "not_separated": "separated",
                  "refund_requested": "no_refund", "insufficient_service": "insufficient_service"}
FACT_FIELDS = ("participant_id", "birth_date", "entry_date", "separation_date",
               "creditable_service_years", "average_compensation", "group",
               "refund_requested", "deferred_right_1960", "requested_start_date")
DATE_FIELDS = ("birth_date", "entry_date", "separation_date", "requested_start_date")
# Findings the letter shows in a part of their own, not among the grounds.
OWN_PART = ("reading_19_4", "scope")


class LetterError(DiferidaError, ValueError):
    """Facts a letter cannot be written from; the message names the field."""


# ---------------------------------------------------------------- checks

def in_puerto_rico(value: datetime, field: str) -> datetime:
    if not isinstance(value, datetime):
        raise LetterError(f"{field}: must be a date and time, not {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise LetterError(f"{field}: must be timezone-aware (UTC), got {value.isoformat()}")
    return value.astimezone(AST)


def check(facts: LetterFacts) -> None:
    check_lang(facts.lang, LetterError, "lang")
    for name in ("case_id", "version"):
        v = getattr(facts, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise LetterError(f"{name}: must be a whole number from 1, got {v!r}")
    if not isinstance(facts.as_of, date) or isinstance(facts.as_of, datetime):
        raise LetterError(f"as_of: must be a date, got {facts.as_of!r}")
    if not isinstance(facts.prepared_by, str) or not facts.prepared_by.strip():
        raise LetterError("prepared_by: the name of who prepared the case is required")
    in_puerto_rico(facts.prepared_at, "prepared_at")
    if (facts.approved_by is None) != (facts.approved_at is None):
        raise LetterError("approved_by and approved_at: give both (an approved letter) "
                          "or neither (a draft)")
    if facts.approved_by is not None and not str(facts.approved_by).strip():
        raise LetterError("approved_by: empty name")
    if facts.approved_at is not None:
        in_puerto_rico(facts.approved_at, "approved_at")
    if facts.approved_by is not None:
        # an issued letter is addressed and signed with names and titles
        for name in ("addressee_name", "addressee_address", "prepared_title",
                     "approved_title"):
            v = getattr(facts, name)
            if not isinstance(v, str) or not v.strip():
                raise LetterError(f"{name}: required in an approved letter")
        missing = missing_texts(facts.lang)
        if missing:
            raise LetterError("the administrator's letter texts are empty: "
                              + ", ".join(missing))
    if facts.corrects_version is None and facts.correction_reason is not None:
        raise LetterError("correction_reason: given without corrects_version, the version "
                          "it corrects")
    if facts.corrects_version is not None and (
            isinstance(facts.corrects_version, bool) or not isinstance(facts.corrects_version, int)
            or not 1 <= facts.corrects_version < facts.version):
        raise LetterError(f"corrects_version: {facts.corrects_version!r} is not an earlier "
                          f"version than {facts.version}")
    for name in ("status", "regime", "warnings", "reasons", "explanation", "headline"):
        if name not in facts.result:
            raise LetterError(f"result.{name}: missing from the stored determination")
    stored = facts.result.get("rules_version")
    if stored not in (None, facts.rules_version):
        raise LetterError(f"rules_version: {facts.rules_version!r} is not the determination's "
                          f"{stored!r}")
    if facts.result.get("as_of") not in (None, facts.as_of.isoformat()):
        raise LetterError(f"as_of: {facts.as_of.isoformat()} is not the determination's "
                          f"{facts.result.get('as_of')}")


# ---------------------------------------------------- the determination

def rules_named(name: str | None) -> Rules:
    """The built-in rules set of that name (the default when none is named)."""
    if name and name in builtin_names():
        return load_rules(name)
    return load_rules(DEFAULT_RULES)


def determination(facts: LetterFacts) -> tuple[dict[str, Any], Rules]:
    """The stored determination, as recorded, when it was recorded in the
    letter's language. In the other language its sentences are written again
    from the stored inputs with the same rules set (its version must be the
    stored one) and the decision must come out identical; otherwise no
    letter is written in that language."""
    d = dict(facts.result)
    rules = rules_named(d.get("rules_name"))
    if d.get("lang", facts.lang) == facts.lang:
        return d, rules
    if rules.version != facts.rules_version:
        raise LetterError(
            f"lang: the determination was recorded in {d.get('lang')!r} under rules version "
            f"{facts.rules_version}, which is no longer a built-in rules set; its letter can "
            f"only be written in {d.get('lang')!r}")
    from ..core import InputError, evaluate

    try:
        again = evaluate(dict(facts.inputs), as_of=facts.as_of, rules=rules,
                         lang=facts.lang).to_dict()
    except InputError as exc:
        raise LetterError("inputs: " + "; ".join(p.message for p in exc.problems)) from None
    differ = sorted(k for k in again if k not in TEXT_KEYS and again[k] != d.get(k))
    if differ:
        raise LetterError(f"lang: written again in {facts.lang!r}, the determination differs "
                          f"from the stored one in {', '.join(differ)}")
    return again, rules


def _finding(d: Mapping[str, Any], condition: str) -> Mapping[str, Any] | None:
    return next((f for f in d["explanation"] if f["condition"] == condition), None)


def _iso(value: Any) -> date | None:
    return None if value in (None, "") else date.fromisoformat(str(value)[:10])


def _money(value: Any) -> str:
    return format_money(Decimal(str(value)))


# ----------------------------------------------------------- the parts

def _input(inputs: Mapping[str, Any], name: str) -> Any:
    v = inputs.get(name)
    if isinstance(v, str):
        v = v.strip()
        return v or None
    return v


def _bool(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise LetterError(f"inputs.{name}: {value!r} is not true or false")


def facts_rows(facts: LetterFacts, d: Mapping[str, Any], rules: Rules) -> list[dict[str, str]]:
    """Every input, in words, as the determination read it."""
    lang = facts.lang
    c, L = catalog(lang), catalog(lang)["letter"]
    words = law_words(rules, lang)
    rows = []
    for name in FACT_FIELDS:
        raw = _input(facts.inputs, name)
        if name == "participant_id" and raw is None:
            continue
        label = c["fields"][name].format_map(words)
        try:
            if raw is None:
                shown = {"separation_date": L["not_separated"],
                         "requested_start_date": L["no_start"]}.get(name, L["empty"])
                if name == "deferred_right_1960":
                    # rules §6: derived from the entry date, and said so
                    shown = L["derived"].format(
                        value=c["yes"] if d.get("deferred_right_1960") else c["no"],
                        citation=words["minimum_citation"])
            elif name in DATE_FIELDS:
                shown = fmt_date(_iso(raw), lang)
            elif name == "average_compensation":
                shown = L["compensation_year"].format(amount=_money(raw))
            elif name == "creditable_service_years":
                years = Decimal(str(raw))
                shown = _service_words(years, lang)
            elif name == "group":
                shown = c["groups"][str(raw)]
            elif name == "refund_requested":
                shown = L["refund_yes" if _bool(raw, name) else "refund_no"]
            elif name == "deferred_right_1960":
                shown = L["declared"].format(value=c["yes"] if _bool(raw, name) else c["no"])
            else:
                shown = str(raw)
        except (ValueError, KeyError, InvalidOperation):
            raise LetterError(f"inputs.{name}: {raw!r} cannot be read") from None
        rows.append({"label": label[:1].upper() + label[1:], "value": shown})
    rows.append({"label": L["as_of"], "value": fmt_date(facts.as_of, lang)})
    title = d.get("rules_title") or rules.title
    note = relief_note(rules, lang)  # a relief, said once: the amount is the start's
    rows.append({"label": L["rules_set"], "value": title if note is None else f"{title}. {note}"})
    return rows


def _service_words(years: Decimal, lang: str) -> str:
    """"22 años", "25.1667 años (25 años y 2 meses)" where whole months make it up."""
    text = years_phrase(plain(years), lang)
    units = years * SERVICE_UNITS
    if units != units.to_integral_value():
        return text
    months = years * 12
    if years == years.to_integral_value() or months != months.to_integral_value():
        return text
    y, m = divmod(int(months), 12)
    return f"{text} ({fmt_wait(y, m, 0, lang)})"


def decision_rows(facts: LetterFacts, d: Mapping[str, Any],
                  rules: Rules) -> list[dict[str, str]]:
    """The decision block: status, regime, route, dates, amounts."""
    lang = facts.lang
    c, L = catalog(lang), catalog(lang)["letter"]
    words = law_words(rules, lang)
    status = d["status"]
    covered = _finding(d, "covered")
    # a denial's reasons are the letter's denial part, each with its finding:
    # not said again here
    rows = [{"label": L["status"], "value": c["status"][status]}]
    rows.append({"label": L["regime"], "value": regime_words(
        d["regime"], d["reasons"], covered["values"] if covered else {}, rules, lang)})
    if status == "not_entitled":  # no route, date or amount to state
        return rows
    route = _route_citation(d, d["route"], rules, lang)
    others = [_route_citation(d, r, rules, lang) for r in d["routes_met"] if r != d["route"]]
    rows.append({"label": L["route"], "value": route})
    if others:
        rows.append({"label": L["routes_met"], "value": _listing(others, lang)})
    rows += [
        {"label": L["eligibility_date"], "value": fmt_date(_iso(d["eligibility_date"]), lang)},
        {"label": L["start_date"], "value": _start(facts, d, words)},
        {"label": L["annual"], "value": _money(d["annual_amount"])},
        {"label": L["monthly"], "value": _money(d["monthly_amount"])},
    ]
    formula = d.get("formula") or {}
    if formula.get("minimum_amount") is not None:
        key = "minimum_paid" if d.get("minimum_applied") else "minimum_not_paid"
        rows.append({"label": L["minimum"].format(citation=cite(formula["minimum_citation"], lang)),
                     "value": L[key].format(amount=_money(formula["minimum_amount"]))})
    return rows


def _route_citation(d: Mapping[str, Any], route: str, rules: Rules, lang: str) -> str:
    """A route's citation as the findings cite it (the rules set's own)."""
    for f in d["explanation"]:
        if f["condition"] == "service" and f["values"].get("route") == route:
            return f["rule"]
    return cite(rules.route(route).citation, lang)


def amount_citation(d: Mapping[str, Any], rules: Rules, lang: str) -> str:
    """The rule that set the amount, as the determination's `totals` finding
    cites it (19.6 when the minimum applies, else the regime's 19.5(a) or
    19.5(b)); never the route."""
    totals = _finding(d, "totals")
    if totals is not None and totals.get("rule"):
        return str(totals["rule"])
    formula = d.get("formula") or {}
    key = "minimum_citation" if d.get("minimum_applied") else "citation"
    return cite(formula.get(key) or rules.amount[d["regime"]].citation, lang)


def _start(facts: LetterFacts, d: Mapping[str, Any], words: Mapping[str, str]) -> str:
    lang, L = facts.lang, catalog(facts.lang)["letter"]
    elig = _iso(d["eligibility_date"])
    start = _finding(d, "start")
    if d.get("premature_request") and start is not None:
        # rules §5 Decision: an earliest date before the determination's is
        # never offered; an eligible member may request it now
        key = "start_premature_now" if d["status"] == "eligible" else "start_premature"
        return L[key].format(
            requested=fmt_date(_iso(start["values"].get("requested_start_date")), lang),
            eligibility_date=fmt_date(elig, lang), start_citation=words["start_citation"])
    day = _iso(d.get("start_date"))
    if day is not None and day < facts.as_of:
        return L["start_past"].format(requested=fmt_date(day, lang),
                                      as_of=fmt_date(facts.as_of, lang))
    if day is not None:
        return fmt_date(day, lang)
    key = "start_open_now" if d["status"] == "eligible" else "start_open"
    return L[key].format(start_citation=words["start_citation"])


def denial(facts: LetterFacts, d: Mapping[str, Any], rules: Rules
           ) -> list[dict[str, str | None]]:
    """For a denial, each reason with the finding that shows it, first."""
    if d["status"] != "not_entitled":
        return []
    reasons = ["not_covered"] if "not_covered" in d["reasons"] else list(d["reasons"])
    out = []
    for reason, text in zip(reasons, reason_texts(reasons, rules, facts.lang)):
        # the finding that shows it says it (with its rule); a member the
        # article does not cover has been told so by the headline already
        f = _finding(d, REASON_FINDING[reason])
        said = f is not None and reason == "not_covered"
        out.append({"reason": None if said else text[:1].upper() + text[1:],
                    "finding": f["text"] if f is not None else None})
    return out


def mark(f: Mapping[str, Any], lang: str) -> dict[str, str]:
    """A symbol and a word for each ground, so a symbol is never the only
    signal; a date still to come is pending ("…"), never "not met" (✗)."""
    L = catalog(lang)["letter"]
    held, condition = f["held"], f["condition"]
    if condition == "regime" or held is None:
        return {"symbol": "·", "word": L["mark_info"], "kind": "info"}
    if held is True:
        return {"symbol": "✓", "word": L["mark_held"], "kind": "held"}
    if condition in ("route_applies", "minimum"):
        return {"symbol": "–", "word": L["mark_not_applicable"], "kind": "na"}
    if condition in ("age", "eligibility", "start"):
        return {"symbol": "…", "word": L["mark_pending"], "kind": "pending"}
    return {"symbol": "✗", "word": L["mark_not_held"], "kind": "not-held"}


# findings about one route (their values name it) and about the amount
ROUTE_CONDITIONS = ("service", "age", "route_applies")
AMOUNT_CONDITIONS = ("amount", "minimum", "totals")
GROUPS = ("held", "pending", "not-held", "na", "amount", "info")
# said in the decision block and the next steps already: the start (Regla
# 19.3) and the amounts once rounded
SAID_ABOVE = ("start", "totals")


def grounds(d: Mapping[str, Any], lang: str) -> list[dict[str, Any]]:
    """The conditions examined, in groups, each with its heading: met,
    pending (a date still to come), not met, not applicable, how the amount
    is reckoned, other facts. A letter that grants a pension (or will) states
    the conditions of the route that grants it and the common ones: another
    route's conditions, met or not, are not its grounds (rules §4: one route
    is enough), so no route it did not need shows as not met. Each finding's
    own sentence cites its rule."""
    L = catalog(lang)["letter"]
    warned = set(d["warnings"])
    entitled = d["status"] != "not_entitled"
    # a denial's findings are stated in the denial part, first
    denied = {REASON_FINDING[r] for r in d["reasons"]} if not entitled else set()
    formula = d.get("formula") or {}
    found: dict[str, list[str]] = {g: [] for g in GROUPS}
    for f in d["explanation"]:
        c = f["condition"]
        if c in warned or c in OWN_PART or c in denied:
            continue
        if c in SAID_ABOVE:
            continue
        if c == "route_applies" and f["held"] is True:
            continue  # a route opened by a reading: the readings part says it
        route = f["values"].get("route") if c in ROUTE_CONDITIONS else None
        if entitled and route is not None and route != d["route"]:
            continue
        if c in AMOUNT_CONDITIONS:
            if c == "minimum" and formula.get("minimum_amount") is None:
                continue  # rules §6: not this member's; the decisions say why when it matters
            found["amount"].append(f["text"])
            continue
        found[mark(f, lang)["kind"]].append(f["text"])
    return [{"kind": g, "title": L[f"grounds_{g.replace('-', '_')}"], "items": found[g]}
            for g in GROUPS if found[g]]


def warnings(d: Mapping[str, Any], rules: Rules, lang: str,
             acknowledgements: tuple[Mapping[str, Any], ...] = ()
             ) -> list[dict[str, Any]]:
    """Every warning code, in order: its finding's sentence with its rule, or
    (where the explanation stops early, for a member Article 19 does not
    cover) the letter's short sentence for that code; under a warning that
    asks for a check, what each person checked and found, in their own
    note (the workflow's acknowledgements of that warning)."""
    out: list[dict[str, Any]] = []
    for code in d["warnings"]:
        f = _finding(d, code)
        checked = [checked_line(a, lang) for a in acknowledgements
                   if code in (a.get("warnings") or ())]
        if f is not None:
            # a finding's text names its own source: not said twice
            out.append({"rule": None if f["rule"] in f["text"] else f["rule"], "text": f["text"],
                        "checked": checked})
        else:
            text = catalog(lang)["letter_warnings"][code].format_map(law_words(rules, lang))
            out.append({"rule": None, "text": text, "checked": checked})
    return out


def checked_line(a: Mapping[str, Any], lang: str) -> str:
    """"Verificado por Ana Rivera, el 1 de diciembre de 2026: «…»" (the
    person's note, as written: what was checked and what was found)."""
    L = catalog(lang)["letter"]
    return L["checked_note"].format(
        name=a["by"], date=fmt_date(in_puerto_rico(a["at"], "acknowledgements").date(), lang),
        note=" ".join(str(a["note"]).split()))


def decisions(facts: LetterFacts, d: Mapping[str, Any], rules: Rules) -> list[str]:
    """The readings of the article this answer depends on, as the
    explanation's writer states them (`explain.readings`)."""
    return readings(d, rules, facts.lang, _iso(_input(facts.inputs, "birth_date")))


def opening(facts: LetterFacts, d: Mapping[str, Any], rules: Rules) -> dict[str, str]:
    """The salutation and the one plain paragraph that says the decision:
    what was asked, the determination's headline and, when a pension is
    granted (or will be), its amount and the rule that grants it."""
    lang = facts.lang
    L = catalog(lang)["letter"]
    name = (facts.addressee_name or "").strip()
    parts = [L["opening"], d["headline"].rstrip(".") + "."]
    if d["status"] != "not_entitled" and d.get("annual_amount") is not None:
        # the amount and the rule that set it (rules §6 Decision: 19.5(a),
        # 19.5(b) or 19.6, never the route), as the determination says it
        parts.append(L["opening_amount"].format(
            monthly=_money(d["monthly_amount"]), annual=_money(d["annual_amount"]),
            citation=amount_citation(d, rules, lang)))
    parts.append(L["opening_close"])
    return {"salutation": (L["salutation"].format(name=name) if name
                           else L["salutation_plain"]),
            "paragraph": " ".join(parts)}


def reference(facts: LetterFacts, d: Mapping[str, Any]) -> str:
    """The short line at the end for the System's records: the rules
    version the determination was made with (and, where Regla 19.4 was
    read, which reading), the case and version, the date it refers to."""
    L = catalog(facts.lang)["letter"]
    reading = _finding(d, "reading_19_4")
    line = L["reference"].format(case_id=facts.case_id, version=facts.version,
                                 # the version's fingerprint; the rules set is named
                                 # in words among the facts
                                 rules_version=facts.rules_version.rpartition("@")[2],
                                 as_of=fmt_date(facts.as_of, facts.lang))
    if reading is not None:  # the reading in words, not its code
        line += " " + L["reference_reading"].format(
            reading=L[f"reading_{reading['values'].get('reading')}"])
    return line


def signature(name: str | None, title: str | None, when: datetime | None, field: str,
              lang: str) -> dict[str, str] | None:
    """A signature: the full name, the title, the date (Puerto Rico time)."""
    if name is None or when is None:
        return None
    L = catalog(lang)["letter"]
    local = in_puerto_rico(when, field)
    return {"name": name, "title": (title or "").strip(),
            "date": L["signed_date"].format(date=fmt_date(local.date(), lang),
                                            time=f"{local:%H:%M} {L['time_zone']}")}


def _listing(items: list[str], lang: str) -> str:
    join = catalog(lang)["wait"]["join"]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + join + items[-1]


def next_steps(facts: LetterFacts, d: Mapping[str, Any], rules: Rules) -> dict[str, Any]:
    """What the person may do now and their right to ask for review: the
    administrator's texts (or the shipped ones), filled."""
    lang = facts.lang
    t = editable("letter_next", lang)
    words = {**law_words(rules, lang),
             "eligibility_date": fmt_date(_iso(d.get("eligibility_date")), lang),
             "case_id": str(facts.case_id), "version": str(facts.version)}
    fill = lambda items: [x.format_map(words) for x in items]  # noqa: E731
    return {"title": t["title"], "steps": fill(t[d["status"]]),
            "review_title": t["review_title"], "review": fill(t["review"]),
            "deadline": str(t.get("reconsideration") or "").strip() or None}


def office(lang: str) -> dict[str, Any]:
    """The letterhead and the contact block: the administrator's texts (or
    the shipped ones); the office's address also on one line."""
    out = dict(editable("letter_office", lang))
    address = [x.strip() for x in out.get("address") or [] if x.strip()]
    out["address"] = address
    out["address_line"] = ", ".join(address)
    out["telephone"] = str(out.get("telephone") or "").strip()
    out["hours"] = str(out.get("hours") or "").strip()
    return out


def view(facts: LetterFacts) -> dict[str, Any]:
    """Everything the template shows, in the letter's language."""
    check(facts)
    lang = facts.lang
    d, rules = determination(facts)
    L = catalog(lang)["letter"]
    draft = facts.approved_by is None
    dated = facts.prepared_at if draft else facts.approved_at
    assert dated is not None
    address = [x for x in (facts.addressee_address or "").split("\n") if x.strip()]
    scope = _finding(d, "scope")
    return {
        "lang": lang, "L": L, "draft": draft, "office": office(lang),
        "case_id": facts.case_id, "version": facts.version,
        "date": fmt_date(in_puerto_rico(dated, "approved_at" if not draft
                                        else "prepared_at").date(), lang),
        "application_date": (fmt_date(facts.application_date, lang)
                             if facts.application_date else None),
        "participant_id": _input(facts.inputs, "participant_id"),
        "corrects": (L["corrects"].format(version=facts.corrects_version)
                     if facts.corrects_version is not None else None),
        "correction_reason": (L["correction_reason"].format(reason=facts.correction_reason)
                              if facts.correction_reason else None),
        "addressee_name": (facts.addressee_name or "").strip() or None,
        "addressee_address": address,
        "opening": opening(facts, d, rules),
        "headline": d["headline"],
        "denial": denial(facts, d, rules),
        "decision": decision_rows(facts, d, rules),
        "facts": facts_rows(facts, d, rules),
        "grounds": grounds(d, lang),
        "warnings": warnings(d, rules, lang, facts.acknowledgements),
        "decisions": decisions(facts, d, rules),
        "scope": scope["text"] if scope is not None else None,
        "next": next_steps(facts, d, rules),
        "prepared": signature(facts.prepared_by, facts.prepared_title, facts.prepared_at,
                              "prepared_at", lang),
        "approved": (signature(facts.approved_by, facts.approved_title, facts.approved_at,
                               "approved_at", lang) if not draft else None),
        "reference": reference(facts, d),
        "back": None,
        "footer": L["footer"].format(case_id=facts.case_id, version=facts.version),
    }
