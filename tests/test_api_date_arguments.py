"""The Python API's date arguments: `as_of` given as ISO text is read as that
date; anything else is refused with an error naming the argument, in the
caller's language (never a Polars traceback, never a guessed day)."""

from __future__ import annotations

from datetime import date, datetime

import polars as pl
import pytest

import diferida
from diferida.core import evaluate_pair

from .conftest import participant


def test_evaluate_reads_an_iso_text_as_of_as_that_date():
    # the attack: as_of="2026-12-03" ended in polars InvalidOperationError
    by_text = diferida.evaluate(participant(), as_of="2026-12-03")
    by_date = diferida.evaluate(participant(), as_of=date(2026, 12, 3))
    assert by_text.as_of == date(2026, 12, 3)
    assert by_text == by_date


def test_evaluate_frame_and_pair_read_an_iso_text_as_of():
    frame = pl.DataFrame({k: [str(v)] for k, v in participant(participant_id="p1").items()})
    result = diferida.evaluate_frame(frame, as_of="2026-12-03", inputs=("as_of",))
    assert result.determinations["as_of"].to_list() == [date(2026, 12, 3)]
    a, b = evaluate_pair(frame, as_of="2026-12-03", rules_b="article19-strict-19_4",
                         inputs=("as_of",))
    assert a.determinations["as_of"].to_list() == b.determinations["as_of"].to_list() \
        == [date(2026, 12, 3)]


@pytest.mark.parametrize("text", ["03/12/2026", "3 de diciembre de 2026", "2026-02-30",
                                  "2026-12-3", ""])
def test_a_text_that_is_not_an_iso_date_is_refused_naming_as_of(text):
    with pytest.raises(ValueError) as es:
        diferida.evaluate(participant(), as_of=text)
    assert str(es.value).startswith("as_of: ")
    assert f"«{text}»" in str(es.value) and "AAAA-MM-DD" in str(es.value)
    assert not isinstance(es.value, diferida.InputError)
    with pytest.raises(ValueError, match=r'^as_of: ".*" is not a valid date written YYYY-MM-DD'):
        diferida.evaluate(participant(), as_of=text, lang="en")


@pytest.mark.parametrize("value", [20261203, 2026.12, datetime(2026, 12, 3, 9, 30), ["2026-12-03"]])
def test_a_value_that_is_not_a_date_is_refused_naming_as_of_and_its_type(value):
    with pytest.raises(TypeError) as es:
        diferida.evaluate(participant(), as_of=value, lang="en")
    assert str(es.value).startswith("as_of: expected a date (datetime.date)")
    assert type(value).__name__ in str(es.value)
    frame = pl.DataFrame({k: [str(v)] for k, v in participant(participant_id="p1").items()})
    with pytest.raises(TypeError, match="^as_of: se esperaba una fecha"):
        diferida.evaluate_frame(frame, as_of=value)


def test_evaluate_file_reads_an_iso_text_as_of_and_refuses_another(tmp_path):
    src = tmp_path / "in.csv"
    pl.DataFrame({k: [str(v)] for k, v in participant(participant_id="p1").items()}).write_csv(src)
    out = tmp_path / "out.csv"
    diferida.evaluate_file(src, out, as_of="2026-12-03")
    diferida.evaluate_file(src, tmp_path / "by_date.csv", as_of=date(2026, 12, 3))
    assert out.read_bytes() == (tmp_path / "by_date.csv").read_bytes()
    with pytest.raises(ValueError, match="^as_of: «12/03/2026»"):
        diferida.evaluate_file(src, tmp_path / "other.csv", as_of="12/03/2026")
    assert not (tmp_path / "other.csv").exists()


def test_participant_dates_as_text_or_date_agree():
    # the participant's own dates were already read from text; kept so
    as_text = diferida.evaluate(participant(birth_date="1960-03-10"), as_of="2026-12-03")
    as_date = diferida.evaluate(participant(birth_date=date(1960, 3, 10)), as_of=date(2026, 12, 3))
    assert as_text == as_date
