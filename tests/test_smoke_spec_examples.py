"""SPEC §8 example 1 end to end through the Python API (the full suite of
examples lives in test_spec_examples.py)."""

from decimal import Decimal

import diferida

from .conftest import AS_OF


def test_example_1_pre1990_member_with_22_years_qualifies_at_58_under_19_1_a():
    d = diferida.evaluate(
        {"birth_date": "1970-05-10", "entry_date": "1988-07-01",
         "separation_date": "2010-06-30", "creditable_service_years": "22",
         "average_compensation": "30000.00", "group": "general", "refund_requested": "false"},
        as_of=AS_OF,
    )
    assert d.route == "19.1(a)"
    assert str(d.eligibility_date) == "2028-05-10"
    assert d.annual_amount == Decimal("10200.00")
    assert d.monthly_amount == Decimal("850.00")
