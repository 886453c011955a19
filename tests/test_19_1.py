"""Regla 19.1: pre-1990 participants (entry on or before 1990-04-01).

19.1(a): at 58 with at least 10 and less than 25 years of creditable service;
19.1(b): at 55 with 25 years or more. Also the conditions common to every
route (rules §3) and the reasons of a not_entitled answer, in rules §7 order.
"""

from __future__ import annotations

from datetime import date

import pytest

import diferida

from .conftest import AS_OF, participant


def determine(**changes):
    return diferida.evaluate(participant(**changes), as_of=AS_OF)


# A pre-1990 member born 1960-01-01, entered 1985-01-01, left 2012-12-31
# (28 years of span, so no service warning): 55 on 2015-01-01, 58 on 2018-01-01.
PRE1990 = {"birth_date": "1960-01-01", "entry_date": "1985-01-01",
           "separation_date": "2012-12-31", "average_compensation": "40000.00"}


def test_pre1990_member_with_22_years_qualifies_at_58_under_19_1_a():
    d = determine()
    assert d.regime == "pre1990"
    assert d.route == "19.1(a)"
    assert d.routes_met == ["19.1(a)"]
    assert d.eligibility_date == date(2028, 5, 10)
    assert d.status == "not_yet_eligible"


@pytest.mark.parametrize("service", ["10", "10.0000", "15.5", "24.9999"])
def test_pre1990_member_with_10_to_just_under_25_years_qualifies_at_58_under_19_1_a(service):
    d = determine(**PRE1990, creditable_service_years=service)
    assert d.route == "19.1(a)"
    assert d.routes_met == ["19.1(a)"]
    assert d.eligibility_date == date(2018, 1, 1)
    assert d.status == "eligible"


@pytest.mark.parametrize("service", ["25", "25.0001", "28"])
def test_pre1990_member_with_25_years_or_more_qualifies_at_55_under_19_1_b(service):
    d = determine(**PRE1990, creditable_service_years=service)
    assert d.route == "19.1(b)"
    assert d.routes_met == ["19.1(b)"]
    assert d.eligibility_date == date(2015, 1, 1)


def test_pre1990_member_with_9_9999_years_is_not_entitled_for_insufficient_service():
    d = determine(**PRE1990, creditable_service_years="9.9999")
    assert d.status == "not_entitled"
    assert d.reasons == ["insufficient_service"]
    assert d.eligibility_date is None and d.route is None and d.routes_met == []
    assert d.annual_amount is None and d.monthly_amount is None


def test_member_who_reaches_58_exactly_on_the_determination_date_is_eligible_that_day():
    d = determine(birth_date="1968-11-29", entry_date="1988-07-01")
    assert d.eligibility_date == AS_OF
    assert d.status == "eligible"


def test_member_who_reaches_58_the_day_after_the_determination_date_is_not_yet_eligible():
    d = determine(birth_date="1968-11-30")
    assert d.eligibility_date == date(2026, 11, 30)
    assert d.status == "not_yet_eligible"
    assert d.annual_amount is not None  # the amount is reported for not_yet_eligible too


def test_member_who_separated_after_reaching_58_is_eligible_from_the_separation_date():
    # 58 on 2008-01-01, separated 2010-06-30 with 15 years
    d = determine(birth_date="1950-01-01", entry_date="1980-01-01",
                  separation_date="2010-06-30", creditable_service_years="15")
    assert d.route == "19.1(a)"
    assert d.eligibility_date == date(2010, 6, 30)
    assert d.warnings == ["retirement_annuity_may_apply"]


def test_member_who_separated_on_the_day_of_reaching_58_gets_the_retirement_annuity_warning():
    d = determine(birth_date="1950-01-01", entry_date="1980-01-01",
                  separation_date="2008-01-01", creditable_service_years="15")
    assert d.eligibility_date == date(2008, 1, 1)
    assert d.warnings == ["retirement_annuity_may_apply"]


def test_member_who_separated_the_day_before_reaching_58_gets_no_warning():
    d = determine(birth_date="1950-01-01", entry_date="1980-01-01",
                  separation_date="2007-12-31", creditable_service_years="15")
    assert d.eligibility_date == date(2008, 1, 1)
    assert d.warnings == []


def test_future_separation_date_is_planning_and_the_route_opens_at_58():
    d = determine(birth_date="1975-01-01", entry_date="1989-01-01",
                  separation_date="2027-06-30", creditable_service_years="15")
    assert d.status == "not_yet_eligible"
    assert d.eligibility_date == date(2033, 1, 1)
    assert d.route == "19.1(a)"


def test_future_separation_after_reaching_58_opens_on_the_separation_date():
    d = determine(birth_date="1960-01-01", entry_date="1985-01-01",
                  separation_date="2027-12-31", creditable_service_years="20")
    assert d.status == "not_yet_eligible"
    assert d.eligibility_date == date(2027, 12, 31)
    # separated and eligible after 2013-06-30: Act 3-2013 may touch the case (rules §7)
    assert d.warnings == ["retirement_annuity_may_apply", "act_3_2013_accruals_frozen",
                          "act_3_2013_ages_may_apply"]


def test_member_still_in_service_is_not_entitled_because_not_separated():
    d = determine(separation_date=None)
    assert d.status == "not_entitled"
    assert d.reasons == ["not_separated"]
    assert d.eligibility_date is None and d.annual_amount is None


def test_member_who_requested_a_refund_is_not_entitled():
    d = determine(refund_requested="true")
    assert d.status == "not_entitled"
    assert d.reasons == ["refund_requested"]


def test_every_reason_that_applies_is_given_in_spec_order():
    d = determine(birth_date="1980-01-01", entry_date="2001-01-01", separation_date=None,
                  creditable_service_years="5", refund_requested="true")
    assert d.status == "not_entitled"
    assert d.reasons == ["not_covered", "not_separated", "refund_requested",
                         "insufficient_service"]


def test_not_separated_and_refund_are_both_reported_in_order():
    d = determine(separation_date=None, refund_requested="TRUE")
    assert d.reasons == ["not_separated", "refund_requested"]


def test_refund_and_insufficient_service_are_both_reported_in_order():
    d = determine(creditable_service_years="8", refund_requested="true")
    assert d.reasons == ["refund_requested", "insufficient_service"]
