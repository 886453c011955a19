"""Regla 19.2: new participants (entry after 1990-04-01) qualify at 65 with at
least 10 years of creditable service; 19.1 is not open to them (rules §2)."""

from __future__ import annotations

from datetime import date

import pytest

import diferida

from .conftest import AS_OF, participant

# Born 1965-03-01, entered 1990-05-01, left 2016-06-30: 65 on 2030-03-01.
NEW = {"birth_date": "1965-03-01", "entry_date": "1990-05-01", "separation_date": "2016-06-30"}


def determine(**changes):
    return diferida.evaluate(participant(**{**NEW, **changes}), as_of=AS_OF)


@pytest.mark.parametrize("service", ["10", "12.25", "24.9999", "25", "26"])
def test_new_participant_with_10_years_or_more_qualifies_at_65_under_19_2(service):
    d = determine(creditable_service_years=service)
    assert d.regime == "new"
    assert d.route == "19.2"
    assert d.routes_met == ["19.2"]
    assert d.eligibility_date == date(2030, 3, 1)
    assert d.status == "not_yet_eligible"


def test_new_participant_with_9_9999_years_is_not_entitled_for_insufficient_service():
    d = determine(creditable_service_years="9.9999")
    assert d.status == "not_entitled"
    assert d.reasons == ["insufficient_service"]
    assert d.routes_met == []


def test_new_participant_with_26_years_does_not_also_qualify_at_55_under_19_1_b():
    d = determine(creditable_service_years="26")
    assert "19.1(b)" not in d.routes_met and "19.1(a)" not in d.routes_met
    assert d.eligibility_date == date(2030, 3, 1)  # not 2020-03-01, the 55th birthday


def test_new_participant_who_turned_65_before_the_determination_date_is_eligible():
    d = determine(birth_date="1960-01-01", creditable_service_years="15")
    assert d.eligibility_date == date(2025, 1, 1)
    assert d.status == "eligible"


def test_new_participant_reaching_65_on_the_determination_date_is_eligible_that_day():
    d = determine(birth_date="1961-11-29", creditable_service_years="15")
    assert d.eligibility_date == AS_OF
    assert d.status == "eligible"


def test_new_participant_reaching_65_the_day_after_the_determination_date_is_not_yet_eligible():
    d = determine(birth_date="1961-11-30", creditable_service_years="15")
    assert d.eligibility_date == date(2026, 11, 30)
    assert d.status == "not_yet_eligible"


def test_new_participant_who_separated_after_65_is_eligible_from_the_separation_date():
    d = determine(birth_date="1950-01-01", creditable_service_years="15")
    assert d.eligibility_date == date(2016, 6, 30)
    # separated and eligible after 2013-06-30: Act 3-2013 may touch the case (rules §7)
    assert d.warnings == ["retirement_annuity_may_apply", "act_3_2013_accruals_frozen",
                          "act_3_2013_ages_may_apply"]


def test_new_participant_planning_a_future_separation_is_not_yet_eligible():
    d = determine(birth_date="1955-01-01", separation_date="2027-03-31",
                  creditable_service_years="30")
    # 65 on 2020-01-01, already passed: the route opens on the separation day
    assert d.status == "not_yet_eligible"
    assert d.eligibility_date == date(2027, 3, 31)
    # separated and eligible after 2013-06-30: Act 3-2013 may touch the case (rules §7)
    assert d.warnings == ["retirement_annuity_may_apply", "act_3_2013_accruals_frozen",
                          "act_3_2013_ages_may_apply"]
