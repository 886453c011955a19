"""Regla 19.5 (the amount) and Regla 19.6 (the 30% minimum).

19.5(a), pre-1990: AC × (1.5% × min(S, 20) + 2% × max(S − 20, 0));
19.5(b), new participants: AC × 1.5% × S. Rounded once, half up, to the cent:
annual = round(exact), monthly = round(exact / 12) (rules §6). Each expected
amount below is worked out by hand in its comment.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

import diferida

from .conftest import AS_OF, participant

# pre-1990 member, 19.1(a)/(b); 32 years of span so any service up to 32 is plain
PRE1990 = {"birth_date": "1960-01-01", "entry_date": "1980-01-01",
           "separation_date": "2011-12-31"}
# new participant, 26 years of span
NEW = {"birth_date": "1965-03-01", "entry_date": "1990-05-01", "separation_date": "2016-06-30"}
# in the System with a right to a deferred pension on 1960-06-30
VETERAN = {"birth_date": "1930-01-01", "entry_date": "1955-01-01",
           "separation_date": "1985-12-31", "deferred_right_1960": "true"}


def amounts(base, service, compensation, **changes):
    d = diferida.evaluate(
        participant(**{**base, "creditable_service_years": service,
                       "average_compensation": compensation, **changes}),
        as_of=AS_OF,
    )
    return d


@pytest.mark.parametrize(
    "service, compensation, annual, monthly",
    [
        # 30000 × 0.015 × 10 = 4,500.00; /12 = 375.00
        ("10", "30000.00", "4500.00", "375.00"),
        # 30000 × 0.015 × 20 = 9,000.00 (the whole first bracket)
        ("20", "30000.00", "9000.00", "750.00"),
        # 30000 × (0.30 + 0.02 × 0.0001) = 9,000.06; /12 = 750.005 -> 750.01
        ("20.0001", "30000.00", "9000.06", "750.01"),
        # 50000 × (0.30 + 0.02 × 10) = 25,000.00
        ("30", "50000.00", "25000.00", "2083.33"),
    ],
)
def test_pre1990_amount_is_1_5_percent_up_to_20_years_and_2_percent_above_19_5_a(
    service, compensation, annual, monthly
):
    d = amounts(PRE1990, service, compensation)
    assert d.regime == "pre1990"
    assert d.annual_amount == Decimal(annual)
    assert d.monthly_amount == Decimal(monthly)


@pytest.mark.parametrize(
    "service, compensation, annual, monthly",
    [
        # 30000 × 0.015 × 10 = 4,500.00
        ("10", "30000.00", "4500.00", "375.00"),
        # no second bracket for new participants: 30000 × 0.015 × 26 = 11,700.00
        ("26", "30000.00", "11700.00", "975.00"),
        # 28500 × 0.015 × 12.25 = 5,236.875 -> 5,236.88; 436.40625 -> 436.41
        ("12.25", "28500.00", "5236.88", "436.41"),
    ],
)
def test_new_participant_amount_is_1_5_percent_per_year_19_5_b(
    service, compensation, annual, monthly
):
    d = amounts(NEW, service, compensation)
    assert d.regime == "new"
    assert d.annual_amount == Decimal(annual)
    assert d.monthly_amount == Decimal(monthly)


def test_annual_amount_with_a_half_cent_rounds_up_not_to_even():
    # 30000.30 × 0.015 × 10 = 4,500.045 exactly -> 4,500.05 (to-even would give .04)
    d = amounts(NEW, "10", "30000.30")
    assert d.annual_amount == Decimal("4500.05")
    # 4,500.045 / 12 = 375.00375 -> 375.00
    assert d.monthly_amount == Decimal("375.00")


def test_pre1990_annual_amount_with_a_half_cent_rounds_up():
    # 30000.25 × (0.30 + 0.04) = 10,200.085 exactly -> 10,200.09; /12 = 850.00708 -> 850.01
    d = amounts(PRE1990, "22", "30000.25")
    assert d.annual_amount == Decimal("10200.09")
    assert d.monthly_amount == Decimal("850.01")


def test_monthly_amount_with_a_half_cent_rounds_up_not_to_even():
    # 30000.40 × 0.015 × 10 = 4,500.06; /12 = 375.005 exactly -> 375.01
    d = amounts(NEW, "10", "30000.40")
    assert d.annual_amount == Decimal("4500.06")
    assert d.monthly_amount == Decimal("375.01")


def test_pre1990_monthly_amount_with_a_half_cent_rounds_up():
    # 25000.20 × 0.30 = 7,500.06; /12 = 625.005 exactly -> 625.01
    d = amounts(PRE1990, "20", "25000.20")
    assert d.annual_amount == Decimal("7500.06")
    assert d.monthly_amount == Decimal("625.01")


def test_monthly_amount_is_rounded_from_the_exact_annual_not_from_the_rounded_one():
    # 30000.19 × 0.015 × 20 = 9,000.057 -> 9,000.06. Monthly: 9,000.057 / 12 =
    # 750.00475 -> 750.00, whereas 9,000.06 / 12 = 750.005 would give 750.01.
    d = amounts(NEW, "20", "30000.19")
    assert d.annual_amount == Decimal("9000.06")
    assert d.monthly_amount == Decimal("750.00")


def test_police_new_participant_is_paid_under_19_5_b_whatever_the_route():
    # rules §8 example 4: 36000 × 0.015 × 25.1667 = 13,590.018 -> 13,590.02
    d = amounts({"birth_date": "1975-06-20", "entry_date": "1996-02-01",
                 "separation_date": "2021-03-31"}, "25.1667", "36000.00", group="police")
    assert d.route == "19.4(a)"
    assert d.formula is not None and d.formula.citation == "Regla 19.5(b)"
    assert d.annual_amount == Decimal("13590.02")
    assert d.monthly_amount == Decimal("1132.50")


def test_formula_parts_show_each_bracket_of_19_5_a():
    d = amounts(PRE1990, "22", "30000.00")
    f = d.formula
    assert f is not None and f.citation == "Regla 19.5(a)"
    assert [(b.years, b.rate, b.amount) for b in f.brackets] == [
        (Decimal(20), Decimal("0.015"), Decimal("9000.00")),
        (Decimal(2), Decimal("0.02"), Decimal("1200.00")),
    ]
    assert [(b["years"], b["amount"]) for b in f.to_dict()["brackets"]] == [
        ("20", "9000.00"), ("2", "1200.00")]
    assert f.formula_amount == Decimal("10200.00")


# ---- Regla 19.6: the 30% minimum --------------------------------------------

def test_member_with_a_1960_deferred_right_receives_30_percent_when_higher_19_6():
    # formula 20000 × 0.015 × 10 = 3,000.00; minimum 30% × 20000 = 6,000.00
    d = amounts(VETERAN, "10", "20000.00")
    assert d.minimum_applied is True
    assert d.annual_amount == Decimal("6000.00")
    assert d.monthly_amount == Decimal("500.00")
    assert d.formula is not None and d.formula.minimum_citation == "Regla 19.6"
    assert d.formula.formula_amount == Decimal("3000.00")
    assert d.formula.minimum_amount == Decimal("6000.00")


def test_minimum_equal_to_the_formula_is_not_applied_19_6():
    # 20 years: formula 20000 × 0.30 = 6,000.00 = the minimum, not strictly higher
    d = amounts(VETERAN, "20", "20000.00")
    assert d.minimum_applied is False
    assert d.annual_amount == Decimal("6000.00")


def test_formula_higher_than_the_minimum_is_paid_19_6():
    # 25 years: 20000 × (0.30 + 0.10) = 8,000.00 > 6,000.00
    d = amounts(VETERAN, "25", "20000.00")
    assert d.minimum_applied is False
    assert d.annual_amount == Decimal("8000.00")
    assert d.monthly_amount == Decimal("666.67")


def test_minimum_rounds_half_up_too():
    # 30% × 20000.05 = 6,000.015 -> 6,000.02; /12 = 500.00125 -> 500.00
    d = amounts(VETERAN, "10", "20000.05")
    assert d.minimum_applied is True
    assert d.annual_amount == Decimal("6000.02")
    assert d.monthly_amount == Decimal("500.00")


def test_minimum_does_not_replace_the_service_condition_19_6():
    d = amounts(VETERAN, "9.5", "20000.00")
    assert d.status == "not_entitled"
    assert d.reasons == ["insufficient_service"]
    assert d.annual_amount is None and d.minimum_applied is False


def test_member_who_entered_on_1960_06_30_may_have_the_1960_right():
    d = amounts({**VETERAN, "entry_date": "1960-06-30"}, "10", "20000.00")
    assert d.minimum_applied is True


def test_without_the_1960_right_no_minimum_is_considered():
    d = amounts({**VETERAN, "deferred_right_1960": "false"}, "10", "20000.00")
    assert d.minimum_applied is False
    assert d.annual_amount == Decimal("3000.00")
    assert d.formula is not None and d.formula.minimum_amount is None


def test_amount_is_reported_for_not_yet_eligible_members():
    d = amounts({**NEW, "birth_date": "1970-01-01"}, "20", "30000.00")
    assert d.status == "not_yet_eligible"
    assert d.annual_amount == Decimal("9000.00")
