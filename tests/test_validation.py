"""rules §1: bad input is rejected with a message naming the field (and, in a
table, the row and participant_id); every bad field of a row at once; nothing
is silently rounded, defaulted or dropped."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

import polars as pl
import pytest

import diferida

from .conftest import AS_OF, participant
from .worked_examples import ONE


def problems(**changes) -> list[tuple[str, str]]:
    """(field, code) of every problem, or [] when the input is accepted."""
    try:
        diferida.evaluate(participant(**changes), as_of=AS_OF)
    except diferida.InputError as exc:
        for p in exc.problems:
            assert p.field in p.message, "the message names the field"
        return [(p.field, p.code) for p in exc.problems]
    return []


@pytest.mark.parametrize(
    "field, value, code",
    [
        ("birth_date", "1970-02-30", "not_a_date"),
        ("birth_date", "10/05/1970", "not_a_date"),
        ("entry_date", "1988-7-1", "not_a_date"),
        ("separation_date", "2010-06-31", "not_a_date"),
        ("requested_start_date", "tomorrow", "not_a_date"),
        ("as_of", "2026-13-01", "not_a_date"),
        ("creditable_service_years", "22 years", "not_a_number"),
        ("creditable_service_years", "1,5", "not_a_number"),
        ("creditable_service_years", "1e1", "not_a_number"),
        ("average_compensation", "$30,000", "not_a_number"),
        ("refund_requested", "yes", "not_a_boolean"),
        ("refund_requested", "1", "not_a_boolean"),
        ("deferred_right_1960", "no", "not_a_boolean"),
        ("creditable_service_years", "-1", "negative"),
        ("creditable_service_years", "-0.0001", "negative"),
        ("creditable_service_years", "10.00001", "too_many_decimals"),
        ("average_compensation", "0", "not_positive"),
        ("average_compensation", "0.00", "not_positive"),
        ("average_compensation", "-30000", "not_positive"),
        ("average_compensation", "30000.005", "too_many_decimals"),
        ("group", "sheriff", "unknown_group"),
        ("group", "police officer", "unknown_group"),
    ],
)
def test_bad_value_is_rejected_naming_the_field(field, value, code):
    assert problems(**{field: value}) == [(field, code)]


@pytest.mark.parametrize("field", ["birth_date", "entry_date", "creditable_service_years",
                                   "average_compensation", "group", "refund_requested"])
@pytest.mark.parametrize("missing", [None, "", "   "], ids=["absent", "empty", "blank"])
def test_required_field_missing_is_rejected(field, missing):
    assert problems(**{field: missing}) == [(field, "missing")]


@pytest.mark.parametrize(
    "field, value",
    [
        ("average_compensation", "30000.000"),  # trailing zeros are not decimals
        ("average_compensation", "30000.10"),
        ("creditable_service_years", "22.00000"),
        ("creditable_service_years", "22.5000"),
        ("creditable_service_years", "0"),
        ("refund_requested", "FALSE"),
        ("refund_requested", "False"),
        ("deferred_right_1960", "False"),
        ("separation_date", None),
        ("separation_date", ""),
        ("requested_start_date", ""),
    ],
)
def test_valid_value_is_accepted(field, value):
    assert problems(**{field: value}) == []


def test_compensation_with_trailing_zeros_is_read_exactly():
    d = diferida.evaluate(participant(average_compensation="30000.000",
                                      creditable_service_years="22.00000"), as_of=AS_OF)
    assert d.annual_amount == ONE.annual


def test_every_bad_field_of_a_participant_is_reported_at_once():
    got = problems(birth_date="1970-02-30", creditable_service_years="-2",
                   average_compensation="30000.001", group="sheriff", refund_requested="maybe",
                   requested_start_date="soon")
    assert sorted(got) == sorted([
        ("birth_date", "not_a_date"), ("creditable_service_years", "negative"),
        ("average_compensation", "too_many_decimals"), ("group", "unknown_group"),
        ("refund_requested", "not_a_boolean"), ("requested_start_date", "not_a_date"),
    ])


def test_birth_after_entry_is_rejected():
    assert ("birth_date", "birth_after_entry") in problems(
        birth_date="1988-07-02", creditable_service_years="20")


def test_entry_after_separation_is_rejected():
    assert problems(entry_date="2010-07-01", creditable_service_years="22") == [
        ("entry_date", "entry_after_separation")]


def test_entry_on_the_separation_date_is_accepted():
    assert problems(entry_date="2010-06-30", creditable_service_years="22") == []


def test_service_longer_than_the_age_at_separation_is_rejected():
    # born 1970-01-01, separated 2010-01-01: exactly 40 years old
    base = {"birth_date": "1970-01-01", "entry_date": "1988-07-01",
            "separation_date": "2010-01-01"}
    assert problems(**base, creditable_service_years="40") == []
    assert problems(**base, creditable_service_years="40.0001") == [
        ("creditable_service_years", "service_exceeds_age")]


def test_service_longer_than_the_age_at_the_determination_date_is_rejected_when_not_separated():
    # born 1970-01-01, on 2026-11-29 aged 56 years and 332/365 = 56.9096
    base = {"birth_date": "1970-01-01", "entry_date": "1990-01-01", "separation_date": None}
    assert problems(**base, creditable_service_years="56.9") == []
    assert problems(**base, creditable_service_years="56.91") == [
        ("creditable_service_years", "service_exceeds_age")]


def test_deferred_right_1960_with_entry_after_30_june_1960_is_rejected():
    assert problems(deferred_right_1960="true") == [
        ("deferred_right_1960", "deferred_right_after_1960")]
    assert problems(birth_date="1930-01-01", entry_date="1960-07-01",
                    separation_date="1990-12-31", creditable_service_years="20",
                    deferred_right_1960="true") == [
        ("deferred_right_1960", "deferred_right_after_1960")]


def test_deferred_right_1960_with_entry_on_30_june_1960_is_accepted():
    assert problems(birth_date="1930-01-01", entry_date="1960-06-30",
                    separation_date="1990-12-31", creditable_service_years="20",
                    deferred_right_1960="true") == []


def test_unknown_field_in_the_mapping_is_rejected():
    assert problems(service_years="22") == [("service_years", "unknown_field")]


def test_unknown_field_is_reported_together_with_bad_values():
    assert sorted(problems(colour="blue", group="sheriff")) == [
        ("colour", "unknown_field"), ("group", "unknown_group")]


def test_messages_are_given_in_english_when_asked():
    with pytest.raises(diferida.InputError) as err:
        diferida.evaluate(participant(group="sheriff"), as_of=AS_OF, lang="en")
    (p,) = err.value.problems
    assert p.field == "group" and p.value == "sheriff"
    assert "sheriff" in p.message and "not a valid group" in p.message


def test_participant_with_typed_values_is_accepted():
    p = diferida.Participant(
        birth_date=date(1970, 5, 10), entry_date=date(1988, 7, 1),
        separation_date=date(2010, 6, 30), creditable_service_years=Decimal("22"),
        average_compensation=Decimal("30000.00"), group="general", refund_requested=False)
    d = diferida.evaluate(p, as_of=AS_OF)
    assert d.annual_amount == ONE.annual


# ---- warnings: the determination stands, the user is told -----------------

SPAN = {"birth_date": "1960-01-01", "entry_date": "1990-04-01"}


def warnings(**changes) -> list[str]:
    """The data-check warnings (the later-law warnings are tested elsewhere)."""
    d = diferida.evaluate(participant(**SPAN, **changes), as_of=AS_OF)
    return [w for w in d.warnings if w in ("service_exceeds_span", "implausible_entry_age")]


def test_service_equal_to_entry_to_separation_counting_the_separation_day_has_no_warning():
    # 1990-04-01 .. 2000-03-31, the separation day included, is exactly 10 years
    assert warnings(separation_date="2000-03-31", creditable_service_years="10") == []


def test_service_longer_than_entry_to_separation_is_a_warning_not_an_error():
    assert warnings(separation_date="2000-03-31", creditable_service_years="10.0001") == [
        "service_exceeds_span"]
    assert warnings(separation_date="2000-03-30", creditable_service_years="10") == [
        "service_exceeds_span"]


# ---- tables: row, participant_id, duplicates, accounting -------------------

def test_duplicate_participant_id_the_first_row_is_evaluated_and_later_ones_rejected():
    frame = pl.DataFrame([
        participant(participant_id="A"),
        participant(participant_id="B"),
        participant(participant_id="A", creditable_service_years="30"),
        participant(participant_id="A", creditable_service_years="12"),
    ])
    result = diferida.evaluate_frame(frame, as_of=AS_OF)
    assert result.determinations["participant_id"].to_list() == ["A", "B"]
    assert result.determinations["route"].to_list() == ["19.1(a)", "19.1(a)"]
    rej = result.rejected
    assert rej.select("row", "participant_id", "field", "code").rows() == [
        (2, "A", "participant_id", "duplicate_id"), (3, "A", "participant_id", "duplicate_id")]
    assert result.rows_in == 4 and result.rows_rejected == 2


def test_rejected_rows_in_a_table_name_row_participant_and_every_bad_field():
    frame = pl.DataFrame([
        participant(participant_id="ok-1"),
        participant(participant_id="bad-1", birth_date="1970-02-30", group="sheriff"),
        participant(participant_id="ok-2", creditable_service_years="12.5"),
        participant(participant_id="bad-2", average_compensation="0"),
    ])
    result = diferida.evaluate_frame(frame, as_of=AS_OF)
    assert result.determinations["participant_id"].to_list() == ["ok-1", "ok-2"]
    assert result.rejected.select("row", "participant_id", "field", "code", "value").rows() == [
        (1, "bad-1", "birth_date", "not_a_date", "1970-02-30"),
        (1, "bad-1", "group", "unknown_group", "sheriff"),
        (3, "bad-2", "average_compensation", "not_positive", "0"),
    ]
    for field, message in result.rejected.select("field", "message").rows():
        assert field in message
    result.check_accounting()
    assert result.rows_in == result.determinations.height + result.rows_rejected


def test_table_without_participant_id_column_is_rejected_row_by_row():
    frame = pl.DataFrame([participant(), participant()])
    result = diferida.evaluate_frame(frame, as_of=AS_OF)
    assert result.determinations.height == 0
    assert result.rejected.select("row", "field", "code").rows() == [
        (0, "participant_id", "missing"), (1, "participant_id", "missing")]


def test_table_with_typed_columns_is_validated_like_text():
    frame = pl.DataFrame({
        "participant_id": ["t-1", "t-2"],
        "birth_date": [date(1970, 5, 10), date(1970, 5, 10)],
        "entry_date": [date(1988, 7, 1), date(1988, 7, 1)],
        "separation_date": [date(2010, 6, 30), None],
        "creditable_service_years": [22, -1],
        "average_compensation": [30000, 30000],
        "group": ["general", "general"],
        "refund_requested": [False, None],
    })
    result = diferida.evaluate_frame(frame, as_of=AS_OF)
    assert result.determinations["annual_amount"].cast(pl.String).to_list() == [ONE.annual_text]
    assert result.rejected.select("row", "field", "code").rows() == [
        (1, "creditable_service_years", "negative"), (1, "refund_requested", "missing")]


def test_spreadsheet_datetime_with_a_time_of_day_is_not_a_date():
    frame = pl.DataFrame([participant(participant_id="x")]).with_columns(
        pl.lit(datetime(1970, 5, 10, 12, 30)).alias("birth_date"))
    result = diferida.evaluate_frame(frame, as_of=AS_OF)
    assert result.rejected.select("field", "code").rows() == [("birth_date", "not_a_date")]


def test_spreadsheet_datetime_at_midnight_is_a_date():
    frame = pl.DataFrame([participant(participant_id="x")]).with_columns(
        pl.lit(datetime(1970, 5, 10)).alias("birth_date"))
    result = diferida.evaluate_frame(frame, as_of=AS_OF)
    assert result.rejected.height == 0
    assert result.determinations["eligibility_date"].to_list() == [date(2028, 5, 10)]


def test_extra_columns_of_a_table_are_carried_through_not_rejected():
    frame = pl.DataFrame([participant(participant_id="x", office="San Juan")])
    out = diferida.evaluate_frame(frame, as_of=AS_OF).determinations
    assert out["office"].to_list() == ["San Juan"]


def test_extra_columns_named_like_the_engines_working_columns_come_back_unchanged():
    frame = pl.DataFrame([participant(participant_id="x", covered="c", service_units="u")])
    out = diferida.evaluate_frame(frame, as_of=AS_OF).determinations
    assert out.select("covered", "service_units", "route").rows() == [("c", "u", "19.1(a)")]


def test_an_extra_column_named_like_a_result_column_is_refused_by_name():
    frame = pl.DataFrame([participant(participant_id="x", status="mine")])
    with pytest.raises(diferida.InputError) as err:
        diferida.evaluate_frame(frame, as_of=AS_OF)
    assert [(p.field, p.code) for p in err.value.problems] == [("status", "reserved_column")]


def test_as_of_given_in_a_row_is_the_date_that_row_speaks_for():
    # example 1 reaches 58 on 2028-05-10
    frame = pl.DataFrame([
        participant(participant_id="before", as_of="2028-05-09"),
        participant(participant_id="on", as_of="2028-05-10"),
        participant(participant_id="default"),
    ])
    out = diferida.evaluate_frame(frame, as_of=AS_OF).determinations
    assert out["status"].to_list() == ["not_yet_eligible", "eligible", "not_yet_eligible"]


def test_empty_deferred_right_1960_is_derived_from_the_entry_date_and_a_declared_value_stands():
    minimum_case = participant(birth_date="1930-01-01", entry_date="1955-01-01",
                               separation_date="1985-12-31", creditable_service_years="10",
                               average_compensation="20000.00")
    # rules §6: empty and an entry before 1960-06-30 -> true; 30% × 20,000 = 6,000
    # is higher than the formula 1.5% × 20,000 × 10 = 3,000
    d = diferida.evaluate(minimum_case, as_of=AS_OF)
    assert (d.deferred_right_1960, d.deferred_right_1960_source) == (True, "derived")
    assert d.minimum_applied is True and d.annual_amount == Decimal("6000.00")
    # a declared false stands (a refund before 1960 and a later re-entry)
    d = diferida.evaluate({**minimum_case, "deferred_right_1960": "false"}, as_of=AS_OF)
    assert (d.deferred_right_1960, d.deferred_right_1960_source) == (False, "declared")
    assert d.minimum_applied is False and d.annual_amount == Decimal("3000.00")
    # an entry after the cut-off: derived false
    d = diferida.evaluate(participant(), as_of=AS_OF)
    assert (d.deferred_right_1960, d.deferred_right_1960_source) == (False, "derived")


@pytest.mark.parametrize("field", ["creditable_service_years", "average_compensation"])
@pytest.mark.parametrize("digits", range(13, 46))
def test_a_number_of_any_length_is_refused_as_too_large_never_an_overflow(field, digits):
    """Every length of whole digits up to 45, plain, with decimals, signed or
    padded with zeros, is a field error: 33 and 34 digits of years, 35 and
    36 of dollars, once overflowed the exact decimal's parse and failed the
    whole run (a file of many members with them) instead of refusing one."""
    for value in ("9" * digits, "1" * digits + ".5", "+" + "1" * digits, "00" + "7" * digits,
                  "-" + "1" * digits):
        with pytest.raises(diferida.InputError) as exc:
            diferida.evaluate(participant(**{field: value}), as_of=AS_OF)
        assert [(p.field, p.code) for p in exc.value.problems] == [(field, "too_large")], value


def test_the_largest_values_a_field_allows_give_an_exact_amount_and_one_more_digit_is_refused():
    """12 whole digits of dollars and a service as long as a life from the
    year 0001 to 9000 compute exactly in 64-bit cents; a 13th digit is a
    named field error, never an overflow."""
    person = participant(birth_date="0001-01-01", entry_date="0020-01-01",
                         separation_date="9000-01-01", creditable_service_years="8900",
                         average_compensation="999999999999.99")
    d = diferida.evaluate(person, as_of=AS_OF)
    # 999,999,999,999.99 × (1.5% × 20 + 2% × 8,880) = 177,899,999,999,998.2209 -> .22
    assert d.annual_amount == Decimal("177899999999998.22")
    for field, value in (("average_compensation", "1000000000000"),
                         ("average_compensation", "0001000000000000.00"),
                         ("creditable_service_years", "100000")):
        with pytest.raises(diferida.InputError) as exc:
            diferida.evaluate({**person, field: value}, as_of=AS_OF)
        assert [(p.field, p.code) for p in exc.value.problems] == [(field, "too_large")]
    typed = pl.DataFrame([{**person, "participant_id": "big"}]).with_columns(
        pl.lit(10**12, dtype=pl.Int64).alias("average_compensation"))
    result = diferida.evaluate_frame(typed, as_of=AS_OF)
    assert result.rejected.select("field", "code").rows() == [("average_compensation",
                                                               "too_large")]
