"""The determination letter (diferida.letter), for each of rules §8's worked
examples in Spanish and English, read back part by part and checked against
the determination `diferida evaluate --json` gives for the same inputs, and
against the figures rules §8 writes by hand."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diferida.i18n import catalog
from diferida.letter import LetterError, LetterFacts, letter_html
from diferida.letter.texts import LetterTextsError, check_letter_texts
from diferida.letter.view import REASON_FINDING

from .conftest import examples
from .letter_helpers import (
    APPROVED_AT,
    Letter,
    facts,
    run_cli,
    spec_examples,
    stored,
    text_of,
    words,
)
from .test_properties import participants
from .worked_examples import example

EXAMPLES = spec_examples()
LANGS = ("es", "en")
STRICT = "article19-strict-19_4"

# rules §8, read from the page (tests/worked_examples.py): status on the
# tests' date, route, eligibility date, annual, monthly, reasons
NOT_YET = {1, 3}  # rules §8: not yet eligible on 2026-11-29
REASONS_OF = {8: ["insufficient_service"], 9: ["refund_requested"], 10: ["not_covered"]}


def _spec(n: int) -> tuple:
    e = example(n)
    if not e.entitled:
        return ("not_entitled", None, None, None, None, REASONS_OF[n])
    return ("not_yet_eligible" if n in NOT_YET else "eligible", e.route,
            e.eligibility.isoformat(), e.annual_text, e.monthly_text, [])


SPEC = {n: _spec(n) for n in range(1, 12)}
# (month names of each language, for the dates rules §8 writes as ISO)
MONTHS = {lang: catalog(lang)["months"] for lang in LANGS}


def written(iso: str, lang: str) -> str:
    y, m, d = (int(x) for x in iso.split("-"))
    return f"{d} de {MONTHS[lang][m - 1]} de {y}" if lang == "es" else (
        f"{MONTHS[lang][m - 1]} {d}, {y}")


def dollars(amount: str) -> str:
    return f"${Decimal(amount):,.2f}"


@pytest.fixture(scope="module")
def cli():
    jobs = [((n, lang, None), EXAMPLES[n], lang, None) for n in EXAMPLES for lang in LANGS]
    jobs += [((4, lang, STRICT), EXAMPLES[4], lang, STRICT) for lang in LANGS]
    return run_cli(jobs)


def letter_of(n: int, lang: str, rules: str | None = None, **more) -> Letter:
    result = stored(EXAMPLES[n], lang, rules)
    return Letter(letter_html(facts(EXAMPLES[n], result, lang, **more)))


# which findings a letter lists among its grounds, and under which heading
# (docs/letter.md): a letter that grants a pension (or will) lists the
# conditions of the route that grants it and the common ones, never another
# route's; the start and the rounded totals are said in the decision block
OWN = ("reading_19_4", "scope")
SAID_ABOVE = ("start", "totals")


def expected_grounds(d: dict) -> dict[str, list[str]]:
    entitled = d["status"] != "not_entitled"
    minimum = (d.get("formula") or {}).get("minimum_amount")
    out: dict[str, list[str]] = {}
    # a denial's findings are its denial part, stated first: not again here
    denied = {REASON_FINDING[r] for r in d["reasons"]} if not entitled else set()
    for f in d["explanation"]:
        c = f["condition"]
        if c in d["warnings"] or c in OWN or c in SAID_ABOVE or c in denied:
            continue
        if c == "route_applies" and f["held"] is True:
            continue  # a route a reading opens: the letter's readings part says it
        route = f["values"].get("route") if c in ("service", "age", "route_applies") else None
        if entitled and route not in (None, d["route"]):
            continue
        if c in ("amount", "minimum", "totals"):
            if c == "minimum" and minimum is None:
                continue
            kind = "amount"
        elif f["held"] is True:
            kind = "held"
        elif f["held"] is None or c == "regime":
            kind = "info"
        elif c in ("route_applies", "minimum"):
            kind = "na"
        elif c in ("age", "eligibility", "start"):
            kind = "pending"
        else:
            kind = "not-held"
        out.setdefault(kind, []).append(words(f["text"]))
    return out


def grouped(letter: Letter) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for g in letter.grounds():
        out.setdefault(g["kind"], []).append(g["text"])
    return out


def body_of(letter: Letter) -> str:
    """The letter's text without its reference line (where the rules
    version, an identifier, is written for the System's records)."""
    return letter.text.replace(text_of(letter.one("p", "reference-line")), "")


def rule_of(d: dict, route: str) -> str:
    """A route's citation as the command's findings cite it."""
    return next(f["rule"] for f in d["explanation"]
                if f["condition"] == "service" and f["values"]["route"] == route)


# ---- each worked example, against the command's determination -------------

@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("n", sorted(EXAMPLES))
def test_the_letter_says_what_diferida_evaluate_says_sentence_by_sentence(cli, n, lang):
    d = cli[(n, lang, None)]
    status, route, elig, annual, monthly, reasons = SPEC[n]
    assert (d["status"], d["route"], d["eligibility_date"], d["annual_amount"],
            d["monthly_amount"], d["reasons"]) == (status, route, elig, annual, monthly, reasons)
    letter = letter_of(n, lang)
    L, c = catalog(lang)["letter"], catalog(lang)

    # the salutation, then one plain paragraph saying the decision
    assert text_of(letter.one("p", "salutation")) == L["salutation"].format(
        name="María del Carmen Rivera Ortiz")
    opening = text_of(letter.one("p", "opening"))
    assert words(d["headline"]) in opening
    if status != "not_entitled":
        assert dollars(monthly) in opening and dollars(annual) in opening
        # the amount's sentence cites the rule that set the amount (rules §6
        # Decision: 19.5(a), 19.5(b) or 19.6 when the minimum applies), as
        # the determination's own totals finding does, never the route
        totals = next(f for f in d["explanation"] if f["condition"] == "totals")
        amount_rule = ("19.6" if d["minimum_applied"]
                       else {"pre1990": "19.5(a)", "new": "19.5(b)"}[d["regime"]])
        assert totals["rule"].endswith(amount_rule)
        said = L["opening_amount"].format(monthly=dollars(monthly), annual=dollars(annual),
                                          citation=totals["rule"])
        assert said in opening
        if rule_of(d, route) != totals["rule"]:
            assert f"{rule_of(d, route)}." not in said
    # then the decision block
    block = letter.rows("decision-block")
    assert block[L["status"]] == c["status"][status]
    if status == "not_entitled":  # no route, date or amount to state
        for key in ("route", "routes_met", "eligibility_date", "start_date", "annual",
                    "monthly"):
            assert L[key] not in block
    else:
        assert block[L["route"]] == rule_of(d, route)
        others = [rule_of(d, r) for r in d["routes_met"] if r != route]
        assert block.get(L["routes_met"], "") == (
            others[0] if len(others) == 1 else
            ", ".join(others[:-1]) + c["wait"]["join"] + others[-1] if others else "")
        assert block[L["eligibility_date"]] == written(elig, lang)
        assert block[L["annual"]] == dollars(annual)
        assert block[L["monthly"]] == dollars(monthly)

    # every warning of the command, word for word, under its heading
    warned = [f for f in d["explanation"] if f["condition"] in d["warnings"]]
    assert [f["condition"] for f in warned] == d["warnings"]
    assert letter.items("warnings") == [words(f["text"]) for f in warned]
    # the grounds: each finding word for word, under the heading of its group
    assert grouped(letter) == expected_grounds(d)
    scope = next(f for f in d["explanation"] if f["condition"] == "scope")
    assert words(scope["text"]) in text_of_section(letter, "scope")
    # the doubt about Regla 19.4 in one plain sentence of its own (below),
    # not the finding's paragraph
    reading = [f["text"] for f in d["explanation"] if f["condition"] == "reading_19_4"]
    for text in reading:
        assert words(text) not in letter.text

    # every other sentence of the command is carried, once (a denial's
    # reasons are shown first with their findings, which the grounds do not
    # list again)
    denial = {"not_covered": "covered", "not_separated": "separated",
              "refund_requested": "no_refund", "insufficient_service": "insufficient_service"}
    first = {denial[r] for r in (["not_covered"] if "not_covered" in reasons else reasons)}
    listed = {t for texts in expected_grounds(d).values() for t in texts}
    for f in d["explanation"]:
        text = words(f["text"])
        if f["condition"] in d["warnings"] or f["condition"] == "scope" or \
                f["condition"] in first:
            times = 1
        elif text not in listed:
            times = 0  # another route's, the start, the totals: said otherwise or not needed
        else:
            times = 1
        assert letter.text.count(text) == times, f["condition"]
    # no internal identifier in the body (the reference line has them)
    body = body_of(letter)
    for needle in ("article19@", "article19-strict", "both_regimes", " Vía ", "· Dato"):
        assert needle not in body, needle
    assert d["rules_version"].rpartition("@")[2] in text_of(letter.one("p", "reference-line"))


def text_of_headline(letter: Letter) -> str:
    return words("".join(letter.one("p", "headline").itertext()))


def text_of_section(letter: Letter, cls: str) -> str:
    return words("".join(letter.section(cls).itertext()))


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("n", sorted(EXAMPLES))
def test_every_input_is_among_the_facts_relied_on_in_words(n, lang):
    inputs = EXAMPLES[n]
    letter = letter_of(n, lang)
    rows = letter.rows("facts-table")
    c = catalog(lang)
    shown = list(rows.values())
    for name in ("birth_date", "entry_date", "separation_date"):
        assert written(inputs[name], lang) in shown, name
    assert any(v.startswith(dollars(inputs["average_compensation"])) for v in shown)
    years = c["wait"]["years"][1].format(n=inputs["creditable_service_years"])
    assert any(v.startswith(years) for v in shown), years
    assert c["groups"][inputs["group"]] in shown
    refund = catalog(lang)["letter"]["refund_yes" if inputs["refund_requested"] == "true"
                                     else "refund_no"]
    assert refund in shown
    assert inputs["participant_id"] in shown
    assert written("2026-11-29", lang) in shown  # the date it speaks for
    # rules §6: an empty deferred_right_1960 is derived, and the letter says so
    derived = [v for v in shown if v.endswith("Regla 19.6)") or v.endswith("Rule 19.6)")]
    assert len(derived) == 1
    assert derived[0].startswith(c["yes"] if n == 11 else c["no"])
    # the rules set by its title, in words; its version only in the reference line
    assert rows[catalog(lang)["letter"]["rules_set"]] == stored(inputs, lang)["rules_title"]
    assert not any("article19@" in v for v in shown)
    assert len(rows) == 12  # the ten rules §1 fields (id included), as_of, the rules


# ---- what a careful reader looks for ----------------------------------------

@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("n", [8, 9, 10])
def test_a_denial_gives_its_reason_first(cli, n, lang):
    d = cli[(n, lang, None)]
    letter = letter_of(n, lang)
    L = catalog(lang)["letter"]
    from diferida.explain import reason_texts
    from diferida.rules import load_rules

    reason = reason_texts([d["reasons"][0]], load_rules(), lang)[0]  # in the law's words
    finding = next(f for f in d["explanation"]
                   if f["condition"] == REASON_FINDING[d["reasons"][0]])
    first = [text_of(li) for li in letter.one("ol", "denial")][0]
    if d["reasons"] == ["not_covered"]:
        # the headline says it; the denial part gives the fact that shows it
        assert first == words(finding["text"])
    else:
        assert first.lower().startswith(reason.split("(")[0].split("{")[0].lower().strip())
        assert first.endswith(words(finding["text"]))
    # the reason comes before the decision block and the facts, and is said
    # once: no second list of reasons in the decision block, and its finding
    # is not listed again among the grounds
    pos = letter.order(L["denial_title"], first, L["status"], L["facts_title"])
    assert pos == sorted(pos)
    assert L["reasons"] not in letter.rows("decision-block")
    assert letter.text.count(words(finding["text"])) == 1
    if d["reasons"] == ["not_covered"]:
        said = reason.split("{")[0].split(",")[0]
        assert body_of(letter).count(said) <= 1


@pytest.mark.parametrize("lang", LANGS)
def test_an_entitled_letter_has_no_denial(lang):
    letter = letter_of(1, lang)
    assert not letter.all("ol", "denial")


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("n", [1, 3, 4])
def test_a_condition_still_pending_shows_an_ellipsis_never_a_cross(cli, n, lang):
    d = cli[(n, lang, None)]
    pending = [f for f in d["explanation"] if f["held"] is False
               and f["condition"] in ("age", "eligibility")]
    assert pending, "these examples open a route after the determination's date"
    L = catalog(lang)["letter"]
    by_text = {g["text"]: g for g in letter_of(n, lang).grounds()}
    for f in pending:
        if f["values"].get("route") not in (None, d["route"]):
            # another route's date: not a ground of this letter at all
            assert words(f["text"]) not in by_text
            continue
        g = by_text[words(f["text"])]
        assert (g["kind"], g["heading"]) == ("pending", L["grounds_pending"])
    assert "✗" not in letter_of(n, lang).text


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("n", sorted(n for n in EXAMPLES if SPEC[n][0] != "not_entitled"))
def test_a_granting_letter_states_the_granting_rule_and_never_fails_a_route_it_did_not_need(
        cli, n, lang):
    """Example 4 grants by 19.4(a): 19.1(a) and 19.1(b) (pre-1990 only), 19.2's
    age and 19.4(b)'s are not its grounds, and nothing in it is 'not met'."""
    d = cli[(n, lang, None)]
    letter = letter_of(n, lang)
    L = catalog(lang)["letter"]
    kinds = {g["kind"] for g in letter.grounds()}
    assert not kinds & {"not-held", "na"}, kinds
    for f in d["explanation"]:
        route = f["values"].get("route")
        if route is not None and route != d["route"] and f["condition"] in (
                "service", "age", "route_applies"):
            assert words(f["text"]) not in letter.text, f["text"]
    assert letter.rows("decision-block")[L["route"]] == rule_of(d, d["route"])
    assert "✗" not in letter.text and f"· {L['mark_info']}" not in letter.text


@pytest.mark.parametrize("lang", LANGS)
def test_a_condition_that_fails_says_so_in_words_beside_its_cross(cli, lang):
    d = cli[(8, lang, None)]
    L = catalog(lang)["letter"]
    letter = letter_of(8, lang)
    # the reason's own finding heads the denial part; a route's condition
    # that fails is listed under "not met", in words beside its cross
    failed = next(f for f in d["explanation"] if f["condition"] == "insufficient_service")
    assert [text_of(li) for li in letter.one("ol", "denial")][0].endswith(words(failed["text"]))
    service = next(f for f in d["explanation"] if f["condition"] == "service"
                   and f["held"] is False)
    g = next(g for g in letter.grounds() if g["text"] == words(service["text"]))
    assert (g["kind"], g["heading"]) == ("not-held", L["grounds_not_held"])


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("rules, other, other_date", [
    (None, STRICT, "2040-06-20"),          # 19.2 at 65, were 19.4 only for pre-1990 members
    (STRICT, "article19", "2025-06-20"),   # 19.4(a) at 50, were it open to both regimes
])
def test_the_19_4_doubt_and_the_other_readings_date_under_either_reading(
        cli, lang, rules, other, other_date):
    d = cli[(4, lang, rules)]
    reading = [f for f in d["explanation"] if f["condition"] == "reading_19_4"]
    assert len(reading) == 1
    assert reading[0]["values"]["other_eligibility_date"] == other_date
    letter = letter_of(4, lang, rules)
    decisions = letter.items("decisions")
    # one plain sentence: the doubt, the reading applied, the other's date
    t = catalog(lang)["readings"]
    key = "doubt_19_4_both" if rules is None else "doubt_19_4_strict"
    doubt = [x for x in decisions if x.startswith(t[key][:25])]
    assert len(doubt) == 1 and doubt[0].count(". ") == 0 and doubt[0].endswith(".")
    assert written(other_date, lang) in doubt[0]
    assert f"{reading[0]['values']['other_route']}." in doubt[0]  # 19.2 or 19.4(a), cited
    # the rules' names are identifiers: not in the body, only in the reference line
    assert other not in body_of(letter) and "766d" not in letter.text
    for word in ("Hay una duda", "There is a doubt"):
        assert word not in letter.text
    # the amount follows the regime (19.5(b)), whatever the route: said where
    # the route is 19.4(a), not under the strict reading (the route is 19.2)
    follows = [t for t in decisions if "19.5(b)" in t and "19.4(a)" in t]
    assert len(follows) == (1 if rules is None else 0)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("n, needle", [
    (5, {"es": "28 de febrero", "en": "28 February"}),
    (6, {"es": "ese mismo día", "en": "on that very day"}),
    (7, {"es": "no puede acogerse también", "en": "cannot also qualify"}),
    (11, {"es": "«acogidos al Sistema o con derecho", "en": "\"members of the System or"}),
])
def test_the_decisions_of_spec_that_shape_the_answer_are_listed(n, needle, lang):
    decisions = letter_of(n, lang).items("decisions")
    assert any(needle[lang] in t for t in decisions), decisions


@pytest.mark.parametrize("lang", LANGS)
def test_only_the_decisions_that_shape_the_answer_are_listed(lang):
    t = catalog(lang)["readings"]
    one = letter_of(1, lang)
    # example 1 depends on no reading of the article: no such part at all
    assert not one.all("section", "decisions")
    decisions = " ".join(one.items("decisions")) if one.all("section", "decisions") else ""
    # example 1: pre-1990, born 10 May, no tie, no 19.6 right, no 19.4
    for key in ("feb29", "regime_cutoff", "regimes_split", "minimum_reading", "tie"):
        assert t[key][:30] not in decisions, key
    assert "766d" not in decisions
    # only readings of the article: the project's rounding, the 2000 cut-off
    # of Act 305-1999 and "the minimum only when higher" are not
    for key in ("rounding", "not_covered", "minimum_not_substitute", "span", "premature"):
        assert key not in t
    for n in (10, 11):
        listed = letter_of(n, lang).items("decisions") if letter_of(n, lang).all(
            "section", "decisions") else []
        assert not any("2000" in x for x in listed), n


@pytest.mark.parametrize("lang", LANGS)
def test_times_are_in_puerto_rico_and_the_date_is_the_approval_day(lang):
    letter = letter_of(2, lang, approved_by="Sara Supervisora", approved_at=APPROVED_AT)
    sig = text_of_section(letter, "signatures")
    assert "Ana Analista" in sig and "Sara Supervisora" in sig
    assert "23:30" in sig and "22:05" in sig and "03:30" not in sig and "02:05" not in sig
    assert "AST, UTC−4" in sig
    day = {"es": ("1 de diciembre de 2026", "30 de junio de 2026"),
           "en": ("December 1, 2026", "June 30, 2026")}[lang]
    assert day[0] in sig and day[1] in sig
    assert letter.rows("reference")[catalog(lang)["letter"]["date"]] == day[1]


@pytest.mark.parametrize("lang", LANGS)
def test_a_draft_says_so_and_an_approved_letter_does_not(lang):
    L = catalog(lang)["letter"]
    draft = letter_of(2, lang)
    assert L["draft_mark"] in draft.html and "@top-center" in draft.html
    assert L["pending_approval"] in text_of_section(draft, "signatures")
    approved = letter_of(2, lang, approved_by="Sara Supervisora", approved_at=APPROVED_AT)
    assert L["draft_mark"] not in approved.html and L["draft_mark"] not in approved.text
    assert "@top-center" not in approved.html


@pytest.mark.parametrize("lang", LANGS)
def test_letterhead_addressee_case_and_review_rights(lang):
    letter = letter_of(3, lang, corrects_version=1,
                       correction_reason="retribución promedio corregida")
    text = letter.text
    office = catalog(lang)["letter_office"]
    assert office["name"] in text
    assert "https://www.retiro.pr.gov/participantes/" in text
    assert "María del Carmen Rivera Ortiz" in text and "Calle Luna 12" in text
    ref = letter.rows("reference")
    L = catalog(lang)["letter"]
    assert ref[L["case"]] == f"4711 ({L['version'].lower()} 2)"
    assert ref[L["application_date"]] == written("2026-10-15", lang)
    assert L["corrects"].format(version=1) in text and "retribución promedio corregida" in text
    nxt = catalog(lang)["letter_next"]
    assert nxt["review_title"] in text
    assert "4711" in text_of_section(letter, "next")
    # the administrator's texts (tests/admin_texts.py): the office, its
    # telephone and hours, the time limit to ask for reconsideration
    from .admin_texts import ADMIN

    contact = text_of(letter.one("div", "contact"))
    for needle in (ADMIN[lang]["telephone"], ADMIN[lang]["hours"], ADMIN[lang]["address"][1]):
        assert needle in contact, needle
    assert text_of(letter.one("p", "deadline")) == ADMIN[lang]["reconsideration"]
    assert "/api/" not in letter.html


def test_a_letter_in_the_other_language_says_the_same_decision():
    """A case decided in Spanish, its letter in English: the sentences are
    written again with the same rules and must give the same decision."""
    result = stored(EXAMPLES[4], "es")
    letter = Letter(letter_html(facts(EXAMPLES[4], result, "en")))
    english = stored(EXAMPLES[4], "en")
    assert words(english["headline"]) in text_of(letter.one("p", "opening"))
    assert [g["text"] for g in letter.grounds()][0] == words(english["explanation"][0]["text"])


def test_a_letter_in_the_other_language_under_rules_no_longer_shipped_is_refused():
    result = {**stored(EXAMPLES[1], "es"), "rules_version": "article19@000000000000"}
    with pytest.raises(LetterError, match="lang"):
        letter_html(facts(EXAMPLES[1], result, "en"))
    # in its own language it is written as recorded
    assert "Determinación" in letter_html(facts(EXAMPLES[1], result, "es"))


@pytest.mark.parametrize("change, field", [
    ({"prepared_at": datetime(2026, 12, 2, 3, 30)}, "prepared_at"),
    ({"approved_by": "Sara"}, "approved_by"),
    ({"approved_at": APPROVED_AT}, "approved_by"),
    ({"lang": "fr"}, "lang"),
    ({"version": 0}, "version"),
    ({"prepared_by": " "}, "prepared_by"),
    ({"correction_reason": "x"}, "correction_reason"),
    ({"corrects_version": 2}, "corrects_version"),
    ({"rules_version": "other@1"}, "rules_version"),
    ({"inputs": {**EXAMPLES[1], "refund_requested": "maybe"}}, "inputs.refund_requested"),
    # an issued letter is addressed, and signed with names and titles
    ({"approved_by": "Sara", "approved_at": APPROVED_AT, "addressee_name": None},
     "addressee_name"),
    ({"approved_by": "Sara", "approved_at": APPROVED_AT, "addressee_address": " "},
     "addressee_address"),
    ({"approved_by": "Sara", "approved_at": APPROVED_AT, "prepared_title": None},
     "prepared_title"),
    ({"approved_by": "Sara", "approved_at": APPROVED_AT, "approved_title": ""},
     "approved_title"),
])
def test_facts_a_letter_cannot_be_written_from_are_named(change, field):
    base = facts(EXAMPLES[1], stored(EXAMPLES[1], "es"), "es")
    bad = LetterFacts(**{**base.__dict__, **change})
    with pytest.raises(LetterError, match=field):
        letter_html(bad)


# ---- the administrator's texts ----------------------------------------------

def test_an_administrator_replaces_the_letterhead_and_review_texts(tmp_path, monkeypatch):
    (tmp_path / "letter_es.toml").write_text('''
[letter_office]
name = "Administración de Prueba"
lines = ["Oficina de Pensiones"]
contact_title = "Contacto"
contact = ["Ventanilla 3"]
address = ["Calle Prueba 1"]
telephone = "787-000-0000"
hours = "lunes a viernes"
''', "utf-8")
    monkeypatch.setenv("DIFERIDA_WEB_TEXTS_DIR", str(tmp_path))
    assert check_letter_texts() == [tmp_path / "letter_es.toml"]
    text = letter_of(1, "es").text
    assert "Administración de Prueba" in text and "Ventanilla 3" in text
    head = text_of(letter_of(1, "es").one("header", "letterhead"))
    assert head.startswith("Administración de Prueba Oficina de Pensiones")
    assert catalog("es")["letter_office"]["name"] not in head
    # the section not in the file stays as shipped; English is untouched
    assert catalog("es")["letter_next"]["review_title"] in text
    assert catalog("en")["letter_office"]["name"] in letter_of(1, "en").text


@pytest.mark.parametrize("content, problem", [
    ('[letter_office]\nname = "x"\n', "letter_office.lines: missing"),
    ('[letter_next]\ntitle = "x"\neligible = ["{telefono}"]\nnot_yet_eligible = []\n'
     'not_entitled = []\nreview_title = "x"\nreview = []\n',
     "letter_next.eligible[0]: unknown placeholder {telefono}"),
    ('[letter]\ntitle = "x"\n', "letter: not an editable section"),
    ('[letter_office\n', "cannot be read as TOML"),
])
def test_a_bad_administrators_file_is_refused_naming_the_key(tmp_path, monkeypatch,
                                                             content, problem):
    (tmp_path / "letter_en.toml").write_text(content, "utf-8")
    monkeypatch.setenv("DIFERIDA_WEB_TEXTS_DIR", str(tmp_path))
    with pytest.raises(LetterTextsError, match="letter_en.toml") as exc:
        check_letter_texts()
    assert problem in str(exc.value)


@pytest.mark.parametrize("lang", LANGS)
def test_a_warning_the_explanation_does_not_detail_is_still_under_its_heading(lang):
    """Article 19 does not cover this member, so the explanation stops there;
    the warning about the service is still on the letter."""
    inputs = {**EXAMPLES[10], "separation_date": "2005-01-01"}  # 10 years in 5
    result = stored(inputs, lang)
    assert result["reasons"] == ["not_covered"]
    assert result["warnings"] == ["service_exceeds_span"]
    assert not [f for f in result["explanation"] if f["condition"] == "service_exceeds_span"]
    letter = Letter(letter_html(facts(inputs, result, lang)))
    assert letter.items("warnings") == [
        catalog(lang)["letter_warnings"]["service_exceeds_span"]]


def test_every_warning_code_has_the_letters_short_sentence():
    from diferida.outcomes import WARNINGS

    for lang in LANGS:
        assert set(catalog(lang)["letter_warnings"]) == set(WARNINGS)


@pytest.mark.parametrize("lang", LANGS)
def test_a_start_asked_before_the_determination_is_a_request_never_a_past_start(lang):
    """rules §5: Regla 19.3 fixes when the pension may be requested; no text
    says that it starts on a date before the determination's."""
    inputs = {**EXAMPLES[2], "requested_start_date": "2021-01-01"}
    result = stored(inputs, lang)
    assert result["start_date"] == "2021-01-01"
    assert result["warnings"][0] == "start_before_determination"
    letter = Letter(letter_html(facts(inputs, result, lang)))
    L = catalog(lang)["letter"]
    start = letter.rows("decision-block")[L["start_date"]]
    assert start.startswith({"es": "pedido para el 1 de enero de 2021",
                             "en": "requested for January 1, 2021"}[lang])
    assert catalog(lang)["readings"]["start_request"].format(
        start_citation=rule_of(result, "19.1(b)").replace("19.1(b)", "19.3")) in (
        letter.items("decisions"))


# ---- any participant ----------------------------------------------------------

@settings(max_examples=examples(40), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(participants, st.sampled_from(LANGS))
def test_any_participants_letter_carries_every_sentence_and_never_crosses_a_pending_one(
        p, lang):
    inputs = {k: v for k, v in p.items() if v is not None}
    result = stored(inputs, lang)
    letter = Letter(letter_html(facts(inputs, result, lang)))
    L, c = catalog(lang)["letter"], catalog(lang)
    assert letter.rows("decision-block")[L["status"]] == c["status"][result["status"]]
    assert grouped(letter) == expected_grounds(result)
    if result["status"] != "not_entitled":
        assert not {g["kind"] for g in letter.grounds()} & {"not-held", "na"}
    for f in result["explanation"]:
        if f["condition"] in result["warnings"] or f["condition"] == "scope":
            assert words(f["text"]) in letter.text, f["condition"]
    assert len(letter.items("warnings")) == len(result["warnings"])
    if result["status"] == "not_entitled":
        denial = [text_of(li) for li in letter.one("ol", "denial")]
        assert denial and letter.text.index(denial[0]) < letter.text.index(L["facts_title"])
