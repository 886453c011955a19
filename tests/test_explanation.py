"""rules §7: the explanation lists each condition checked, with its rule
citation, the values compared and whether it held, in Spanish and English;
a not_entitled answer says what is missing, a not_yet_eligible answer says
when; every explanation states what is not applied (rules §9)."""

from __future__ import annotations

import re

import pytest

import diferida
from diferida.explain import cite
from diferida.i18n import catalog

from .conftest import AS_OF, participant
from .worked_examples import ONE

CITATION = re.compile(
    r"(Regla|Rule) 19\.[1-6](\([ab]\))?|(Ley|Act) 305-1999, 3 L\.P\.R\.A\. § 786-1"
    r"|(Ley|Act) 3-2013|3 L\.P\.R\.A\. § 766|Nota de alcance|Scope note"
    r"|Verificación de datos|Data check")

# one participant of each kind (rules §8 examples and a few more)
CASES = {
    "eligible_19_1_b": participant(birth_date="1965-03-15", entry_date="1985-01-15",
                                   separation_date="2012-12-31",
                                   creditable_service_years="27.5",
                                   average_compensation="42000.00"),
    "not_yet_eligible_19_1_a": participant(),
    "police_19_4_a_with_warning": participant(
        birth_date="1975-06-20", entry_date="1996-02-01", separation_date="2021-03-31",
        # one ten-thousandth of a year more than the span (25 years 2 months = 25.1667)
        creditable_service_years="25.1668", average_compensation="36000.00", group="police"),
    "premature_start": participant(requested_start_date="2027-01-01"),
    "minimum_19_6": participant(birth_date="1930-01-01", entry_date="1955-01-01",
                                separation_date="1985-12-31", creditable_service_years="10",
                                average_compensation="20000.00", deferred_right_1960="true"),
    "insufficient_service": participant(birth_date="1976-01-01", entry_date="1998-01-01",
                                        separation_date="2006-01-01",
                                        creditable_service_years="8"),
    "refund": participant(refund_requested="true"),
    "not_covered": participant(birth_date="1975-01-01", entry_date="2000-01-01",
                               separation_date="2010-01-01", creditable_service_years="10"),
    "not_separated": participant(separation_date=None),
}


def explain(case: str, lang: str = "es") -> diferida.Determination:
    return diferida.evaluate(CASES[case], as_of=AS_OF, lang=lang)


def finding(d: diferida.Determination, condition: str, route: str | None = None):
    hits = [f for f in d.explanation if f.condition == condition
            and (route is None or f.values.get("route") == route)]
    assert len(hits) == 1, [(f.rule, f.condition) for f in d.explanation]
    return hits[0]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("lang", ["es", "en"])
def test_every_finding_cites_a_rule_and_says_whether_it_held(case, lang):
    d = explain(case, lang)
    # Article 19 does not cover a member of Act 305-1999: that is said, and nothing more
    assert len(d.explanation) >= (2 if case == "not_covered" else 5)
    for f in d.explanation:
        assert CITATION.fullmatch(f.rule), f.rule
        assert f.text.count(f.rule) == 1, (f.rule, f.text)  # named once, in its own text
        assert f.held in (True, False, None)
        assert f.text.strip()
        assert isinstance(f.values, dict)


@pytest.mark.parametrize("case", CASES)
def test_spanish_and_english_explanations_differ_but_check_the_same_conditions(case):
    es, en = explain(case, "es"), explain(case, "en")
    assert [(f.condition, f.values, f.held) for f in es.explanation] == [
        (f.condition, f.values, f.held) for f in en.explanation]
    # the same sources, each as its language writes it
    own = {catalog("es")["citations"][k]: catalog("en")["citations"][k]
           for k in ("scope", "data_check")}
    assert [own.get(f.rule, cite(f.rule, "en")) for f in es.explanation] == [
        f.rule for f in en.explanation]
    for a, b in zip(es.explanation, en.explanation):
        assert a.text != b.text, a.text
    assert es.headline != en.headline
    assert (es.lang, en.lang) == ("es", "en")


@pytest.mark.parametrize("case", CASES)
def test_scope_sentence_of_spec_9_is_in_every_explanation(case):
    es, en = explain(case, "es"), explain(case, "en")
    for d, words in ((es, ["Ley 3-2013", "Ley 106-2017", "Seguro Social"]),
                     (en, ["Act 3-2013", "Act 106-2017", "Social Security"])):
        scope = d.explanation[-1]
        assert scope.condition == "scope"
        for w in words:
            assert w in scope.text


def test_not_entitled_for_insufficient_service_says_10_years_needed_and_8_credited():
    for lang in ("es", "en"):
        f = finding(explain("insufficient_service", lang), "insufficient_service")
        assert f.held is False
        assert f.values == {"needed": "10", "service": "8"}
        assert re.search(r"\b10\b", f.text) and re.search(r"\b8\b", f.text)
    assert "at least 10 years" in finding(explain("insufficient_service", "en"),
                                          "insufficient_service").text


def test_not_entitled_explanation_names_each_failed_condition():
    assert finding(explain("refund"), "no_refund").held is False
    assert finding(explain("not_covered"), "covered").held is False
    assert finding(explain("not_separated"), "separated").held is False
    assert "refund" in finding(explain("refund", "en"), "no_refund").text


def test_not_yet_eligible_says_when_and_how_long_until_then():
    d = explain("not_yet_eligible_19_1_a", "en")
    f = finding(d, "eligibility")
    assert f.held is False
    assert f.values["eligibility_date"] == "2028-05-10"
    # 2026-11-29 to 2028-05-10: 1 year, 5 months and 11 days
    assert "May 10, 2028" in f.text
    assert "1 year, 5 months and 11 days" in f.text
    assert "10 de mayo de 2028" in finding(explain("not_yet_eligible_19_1_a"), "eligibility").text


def test_eligible_explanation_names_the_route_and_every_route_met():
    d = explain("police_19_4_a_with_warning", "en")
    f = finding(d, "eligibility")
    assert f.held is True and f.rule == "Rule 19.4(a)"
    assert f.values["routes_met"] == ["19.2", "19.4(a)", "19.4(b)"]
    assert "the others: Rule 19.2 and Rule 19.4(b)" in f.text


def test_routes_that_do_not_apply_are_explained_as_not_applying():
    d = explain("not_yet_eligible_19_1_a", "en")
    assert finding(d, "route_applies", "19.2").held is False
    assert "only for" in finding(d, "route_applies", "19.4(a)").text
    assert finding(d, "service", "19.1(b)").held is False
    assert finding(d, "service", "19.1(a)").held is True


def test_the_1990_decision_is_stated_only_for_an_entry_on_that_day():
    on_the_day = diferida.evaluate(participant(entry_date="1990-04-01"), as_of=AS_OF, lang="en")
    f = finding(on_the_day, "regime")
    assert "Decision" in f.text and "April 1, 1990" in f.text
    assert f.values["regime"] == "pre1990" and f.held is None
    assert "Decision" not in finding(explain("not_yet_eligible_19_1_a", "en"), "regime").text


def test_amount_explanation_shows_each_bracket_and_the_totals():
    d = explain("not_yet_eligible_19_1_a", "en")
    amount = finding(d, "amount")
    assert amount.rule == "Rule 19.5(a)"
    assert "1.5% × $30,000.00 × 20 years = $9,000.00" in amount.text
    assert "2% × $30,000.00 × 2 years = $1,200.00" in amount.text
    totals = finding(d, "totals")
    assert totals.values == {"annual": ONE.annual_text, "monthly": ONE.monthly_text}
    assert ONE.annual_shown in totals.text and ONE.monthly_shown in totals.text


def test_minimum_19_6_is_explained_when_applied():
    f = finding(explain("minimum_19_6", "en"), "minimum")
    assert f.rule == "Rule 19.6" and f.held is True
    assert f.values["minimum"] == "6000.00" and f.values["formula"] == "3000.00"
    assert f.values["source"] == "declared"


def test_premature_start_is_explained_with_the_earliest_date():
    f = finding(explain("premature_start", "en"), "start")
    assert f.rule == "Rule 19.3" and f.held is False
    assert "premature" in f.text and "May 10, 2028" in f.text


def test_warnings_are_explained():
    d = explain("police_19_4_a_with_warning", "en")
    f = finding(d, "service_exceeds_span")
    assert "(25 years and 2 months, that is 25.1667 years)" in f.text


def test_retirement_annuity_warning_is_explained():
    d = diferida.evaluate(participant(birth_date="1950-01-01", entry_date="1980-01-01",
                                      separation_date="2010-06-30",
                                      creditable_service_years="15"), as_of=AS_OF, lang="en")
    f = finding(d, "retirement_annuity_may_apply")
    assert f.rule == "3 L.P.R.A. § 766"
    assert "retirement annuity" in f.text and "Rule 19.1(a)" in f.text
