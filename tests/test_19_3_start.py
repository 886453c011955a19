"""Regla 19.3: the pension starts on the eligibility date or any later date
the participant asks for. A request before the eligibility date is not an
input error: it is premature, and the earliest date is given (rules §5)."""

from __future__ import annotations

from datetime import date

import diferida

from .conftest import AS_OF, participant

# rules §8 example 1: eligible under 19.1(a) from 2028-05-10
ELIGIBILITY = date(2028, 5, 10)


def determine(**changes):
    return diferida.evaluate(participant(**changes), as_of=AS_OF)


def test_no_requested_start_leaves_the_start_date_open():
    d = determine()
    assert d.start_date is None
    assert d.premature_request is False


def test_request_before_the_eligibility_date_is_premature_and_gives_no_start_date():
    d = determine(requested_start_date="2028-05-09")
    assert d.premature_request is True
    assert d.start_date is None
    assert d.eligibility_date == ELIGIBILITY
    assert d.status == "not_yet_eligible"  # the determination itself stands
    assert d.annual_amount is not None


def test_request_on_the_eligibility_date_starts_that_day():
    d = determine(requested_start_date="2028-05-10")
    assert d.premature_request is False
    assert d.start_date == ELIGIBILITY


def test_request_after_the_eligibility_date_starts_on_the_requested_day():
    d = determine(requested_start_date="2031-01-01")
    assert d.premature_request is False
    assert d.start_date == date(2031, 1, 1)


def test_requested_start_in_the_past_for_an_eligible_member_is_honoured():
    # rules §8 example 2: eligible from 2020-03-15
    d = determine(birth_date="1965-03-15", entry_date="1985-01-15",
                  separation_date="2012-12-31", creditable_service_years="27.5",
                  average_compensation="42000.00", requested_start_date="2021-01-01")
    assert d.status == "eligible"
    assert d.start_date == date(2021, 1, 1)
    assert d.premature_request is False


def test_requested_start_for_a_member_not_entitled_gives_no_start_date():
    d = determine(refund_requested="true", requested_start_date="2030-01-01")
    assert d.status == "not_entitled"
    assert d.start_date is None
    assert d.premature_request is False


def test_premature_request_in_a_table_is_flagged_per_row():
    import polars as pl

    frame = pl.DataFrame([
        participant(participant_id="early", requested_start_date="2028-05-09"),
        participant(participant_id="on-time", requested_start_date="2028-05-10"),
        participant(participant_id="open"),
    ])
    out = diferida.evaluate_frame(frame, as_of=AS_OF).determinations
    assert out["premature_request"].to_list() == [True, False, False]
    assert out["start_date"].to_list() == [None, ELIGIBILITY, None]
