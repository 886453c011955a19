"""Regla 19.4: members of the Police and the Firefighters also qualify at 50
with 25 years (19.4(a)) or at 58 with 10 years (19.4(b)).

rules §2 Decision: "también" opens 19.4 to both regimes. The stricter reading
(3 L.P.R.A. § 766, pre-1990 members only) is the variant rules
`article19-strict-19_4`.
"""

from __future__ import annotations

from datetime import date

import pytest

import diferida

from .conftest import AS_OF, participant

STRICT = "article19-strict-19_4"

# pre-1990: born 1965-01-01, entered 1985-01-01, left 2011-12-31 (27 years of span)
PRE1990 = {"birth_date": "1965-01-01", "entry_date": "1985-01-01",
           "separation_date": "2011-12-31", "average_compensation": "40000.00"}
# new participant: rules §8 example 4
NEW = {"birth_date": "1975-06-20", "entry_date": "1996-02-01", "separation_date": "2021-03-31",
       "average_compensation": "36000.00"}


def determine(base, rules=None, **changes):
    return diferida.evaluate(participant(**{**base, **changes}), as_of=AS_OF, rules=rules)


@pytest.mark.parametrize("group", ["police", "firefighter"])
def test_pre1990_police_or_firefighter_with_26_years_qualifies_at_50_under_19_4_a(group):
    d = determine(PRE1990, group=group, creditable_service_years="26")
    assert d.routes_met == ["19.1(b)", "19.4(a)", "19.4(b)"]
    assert d.route == "19.4(a)"
    assert d.eligibility_date == date(2015, 1, 1)
    # the formula follows the regime: 40000 × (0.015×20 + 0.02×6) = 16,800.00
    assert str(d.annual_amount) == "16800.00"
    assert str(d.monthly_amount) == "1400.00"


@pytest.mark.parametrize("group", ["police", "firefighter"])
def test_new_participant_police_or_firefighter_with_25_years_qualifies_at_50_under_19_4_a(group):
    d = determine(NEW, group=group, creditable_service_years="25")
    assert d.regime == "new"
    assert d.routes_met == ["19.2", "19.4(a)", "19.4(b)"]
    assert d.route == "19.4(a)"
    assert d.eligibility_date == date(2025, 6, 20)
    # 19.5(b) because the regime is new: 36000 × 0.015 × 25 = 13,500.00
    assert str(d.annual_amount) == "13500.00"
    assert str(d.monthly_amount) == "1125.00"


def test_new_participant_police_with_24_9999_years_qualifies_at_58_under_19_4_b():
    d = determine(NEW, group="police", creditable_service_years="24.9999")
    assert d.routes_met == ["19.2", "19.4(b)"]
    assert d.route == "19.4(b)"
    assert d.eligibility_date == date(2033, 6, 20)
    assert d.status == "not_yet_eligible"


def test_new_participant_firefighter_with_12_years_qualifies_at_58_under_19_4_b():
    d = determine(NEW, group="firefighter", creditable_service_years="12")
    assert d.route == "19.4(b)"
    assert d.eligibility_date == date(2033, 6, 20)


def test_pre1990_police_with_15_years_ties_19_1_a_and_19_4_b_and_the_first_route_wins():
    d = determine(PRE1990, group="police", creditable_service_years="15")
    assert d.routes_met == ["19.1(a)", "19.4(b)"]
    assert d.route == "19.1(a)"
    assert d.eligibility_date == date(2023, 1, 1)


def test_police_with_9_9999_years_is_not_entitled():
    d = determine(NEW, group="police", creditable_service_years="9.9999")
    assert d.status == "not_entitled"
    assert d.reasons == ["insufficient_service"]


@pytest.mark.parametrize("base", [PRE1990, NEW], ids=["pre1990", "new"])
def test_general_employee_with_26_years_has_no_19_4_route(base):
    d = determine(base, group="general", creditable_service_years="26")
    assert "19.4(a)" not in d.routes_met and "19.4(b)" not in d.routes_met


def test_police_who_separated_after_50_is_eligible_from_separation_with_warning():
    # born 1960: 50 on 2010-01-01, separated 2012-12-31 with 27 years
    d = determine({**PRE1990, "birth_date": "1960-01-01"}, group="police",
                  creditable_service_years="27", separation_date="2012-12-31")
    assert d.route == "19.4(a)"
    assert d.eligibility_date == date(2012, 12, 31)
    assert d.warnings == ["retirement_annuity_may_apply"]


# ---- the stricter reading: 19.4 for pre-1990 members only -----------------

def test_strict_reading_gives_a_new_participant_police_officer_only_19_2():
    d = determine(NEW, rules=STRICT, group="police", creditable_service_years="25.1667")
    assert d.routes_met == ["19.2"]
    assert d.route == "19.2"
    assert d.eligibility_date == date(2040, 6, 20)
    assert d.status == "not_yet_eligible"
    assert str(d.annual_amount) == "13590.02"  # the amount does not depend on the route


def test_strict_reading_keeps_19_4_for_a_pre1990_firefighter():
    d = determine(PRE1990, rules=STRICT, group="firefighter", creditable_service_years="26")
    assert d.routes_met == ["19.1(b)", "19.4(a)", "19.4(b)"]
    assert d.route == "19.4(a)"
    assert d.eligibility_date == date(2015, 1, 1)


def test_strict_reading_has_its_own_rules_version():
    default = determine(NEW, group="police", creditable_service_years="25")
    strict = determine(NEW, rules=STRICT, group="police", creditable_service_years="25")
    assert strict.rules_version != default.rules_version
    assert strict.rules_version.startswith(STRICT + "@")
    assert default.rules_version.startswith("article19@")
