"""rules §2: who the participant is. Pre-1990 (Act 447) when entry is on or
before 1990-04-01; new participant (Act 1-1990) strictly after; not covered
by Article 19 when entry is on or after 2000-01-01 (Act 305-1999)."""

from __future__ import annotations

import pytest

import diferida

from .conftest import AS_OF, participant


def determine(**changes):
    return diferida.evaluate(participant(**changes), as_of=AS_OF)


# born 1960-01-01, separated 2009-12-31 with 10 years: no warnings whatever the entry
BASE = {"birth_date": "1960-01-01", "separation_date": "2009-12-31",
        "creditable_service_years": "10"}


@pytest.mark.parametrize("entry", ["1970-01-01", "1990-03-31", "1990-04-01"])
def test_member_who_entered_on_or_before_1_april_1990_is_a_pre1990_participant(entry):
    d = determine(**BASE, entry_date=entry)
    assert d.regime == "pre1990"
    assert d.route == "19.1(a)"


@pytest.mark.parametrize("entry", ["1990-04-02", "1995-01-01", "1999-12-31"])
def test_member_who_entered_after_1_april_1990_is_a_new_participant(entry):
    d = determine(**BASE, entry_date=entry)
    assert d.regime == "new"
    assert d.route == "19.2"


def test_member_who_entered_on_31_december_1999_is_still_covered():
    d = determine(**BASE, entry_date="1999-12-31")
    assert d.status != "not_entitled"
    assert "not_covered" not in d.reasons


@pytest.mark.parametrize("entry", ["2000-01-01", "2005-06-15"])
def test_member_who_entered_on_or_after_1_january_2000_is_not_covered_by_article_19(entry):
    d = determine(birth_date="1975-01-01", entry_date=entry, separation_date="2020-12-31",
                  creditable_service_years="10")
    assert d.status == "not_entitled"
    assert d.reasons[0] == "not_covered"
    assert d.regime == "new"
    assert d.eligibility_date is None and d.annual_amount is None


def test_not_covered_is_listed_first_among_several_reasons():
    d = determine(birth_date="1975-01-01", entry_date="2000-01-01", separation_date="2005-01-01",
                  creditable_service_years="5", refund_requested="true")
    assert d.reasons == ["not_covered", "refund_requested", "insufficient_service"]


def test_regime_decides_the_formula_not_the_route():
    pre = determine(**BASE, entry_date="1990-04-01")
    new = determine(**BASE, entry_date="1990-04-02")
    assert pre.formula is not None and pre.formula.citation == "Regla 19.5(a)"
    assert new.formula is not None and new.formula.citation == "Regla 19.5(b)"
