"""One rule for dates everywhere: a date outside the years 0001-9999, or a
birth date whose birthdays counted by the rules would fall after
9999-12-31, is a field error naming the field — in the core, in files, on
the command line, in the API and on the web pages; never a crash, never
silently accepted."""

from __future__ import annotations

import subprocess
from datetime import date

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import diferida
from diferida.core import evaluate_frame
from diferida.rules import builtin_names, load_rules
from diferida.validation import MAX_DATE

from .conftest import AS_OF, cli_command, examples, participant

OLDEST_AGE = max(r.age for r in load_rules(None).routes)
LAST_BIRTH = date(9999 - OLDEST_AGE, 12, 31)


def _codes(exc: diferida.InputError) -> dict[str, str]:
    return {p.field: p.code for p in exc.problems}


@pytest.mark.parametrize("field", ["birth_date", "entry_date", "separation_date",
                                   "requested_start_date", "as_of"])
def test_year_zero_is_refused_in_every_date_field(field):
    with pytest.raises(diferida.InputError) as exc:
        diferida.evaluate(participant(**{field: "0000-01-01"}), as_of=AS_OF)
    assert _codes(exc.value)[field] == "date_out_of_range"
    assert "0000-01-01" in exc.value.problems[0].message


def test_a_birth_whose_ages_overflow_the_calendar_is_refused_and_named():
    person = participant(birth_date="9950-01-01", entry_date="9970-01-01",
                         separation_date="9999-12-31")
    with pytest.raises(diferida.InputError) as exc:
        diferida.evaluate(person, as_of=AS_OF)
    assert _codes(exc.value) == {"birth_date": "date_out_of_range"}


def test_the_last_birth_date_the_rules_can_count_from_is_accepted():
    # every birthday the rules count falls on or before 9999-12-31
    person = participant(birth_date=LAST_BIRTH.isoformat(), entry_date="9990-01-01",
                         separation_date="9999-12-31", creditable_service_years="5")
    d = diferida.evaluate(person, as_of=MAX_DATE)
    assert d.status == "not_entitled"  # entered after the article's cut-off
    later = LAST_BIRTH.replace(year=LAST_BIRTH.year + 1, month=1, day=1)
    with pytest.raises(diferida.InputError) as exc:
        diferida.evaluate({**person, "birth_date": later.isoformat()}, as_of=MAX_DATE)
    assert _codes(exc.value)["birth_date"] == "date_out_of_range"


@pytest.mark.parametrize("rules", builtin_names())
@settings(max_examples=examples(60), deadline=None)
@given(birth=st.dates(min_value=date(1, 1, 1), max_value=MAX_DATE),
       entry_days=st.integers(0, 80 * 366), sep_days=st.integers(0, 60 * 366))
def test_any_calendar_date_gives_an_answer_or_a_named_field_error(rules, birth, entry_days,
                                                                  sep_days):
    def plus(d: date, days: int) -> str:
        return date.fromordinal(min(d.toordinal() + days, MAX_DATE.toordinal())).isoformat()

    entry = plus(birth, entry_days)
    person = participant(birth_date=birth.isoformat(), entry_date=entry,
                         separation_date=plus(date.fromisoformat(entry), sep_days),
                         creditable_service_years="1")
    try:
        d = diferida.evaluate(person, as_of=MAX_DATE, rules=rules)
    except diferida.InputError as exc:
        assert all(p.field and p.code for p in exc.problems)
        if birth > LAST_BIRTH:
            assert _codes(exc)["birth_date"] == "date_out_of_range"
    else:
        assert birth <= LAST_BIRTH
        assert d.status in ("eligible", "not_yet_eligible", "not_entitled")


def test_a_file_rejects_out_of_range_dates_as_text_and_as_typed_dates():
    text = pl.DataFrame([participant(participant_id="A", birth_date="0000-01-01"),
                         participant(participant_id="B", birth_date="9950-01-01",
                                     entry_date="9970-01-01", separation_date="9999-12-31"),
                         participant(participant_id="C")])
    result = evaluate_frame(text, as_of=AS_OF)
    assert result.rows_in == 3 and result.determinations.height == 1
    rejected = result.rejected.select("participant_id", "field", "code").rows()
    assert sorted(rejected) == [("A", "birth_date", "date_out_of_range"),
                                ("B", "birth_date", "date_out_of_range")]

    # Parquet and spreadsheets give typed dates: the same rule applies
    typed = pl.DataFrame({**{k: [v] * 2 for k, v in participant().items()},
                          "participant_id": ["T0", "T1"]}).with_columns(
        pl.Series("birth_date", [date(1970, 5, 10), date(1970, 5, 10)]),
        pl.Series("separation_date", [date(2010, 6, 30), date(2010, 6, 30)]),
    ).with_columns(pl.when(pl.col("participant_id") == "T0")
                   .then(pl.col("birth_date").dt.offset_by("-1971y"))
                   .otherwise(pl.col("birth_date")).alias("birth_date"))
    result = evaluate_frame(typed, as_of=AS_OF)
    assert result.rows_in == 2 and result.determinations.height == 1
    assert result.rejected.select("participant_id", "code").rows() == [
        ("T0", "date_out_of_range")]


def test_the_batch_command_rejects_year_zero(tmp_path):
    src = tmp_path / "in.csv"
    pl.DataFrame([participant(participant_id="Z", birth_date="0000-01-01"),
                  participant(participant_id="OK")]).write_csv(src)
    out, rej = tmp_path / "out.csv", tmp_path / "rej.csv"
    r = subprocess.run([*cli_command(), "batch", str(src), "-o", str(out), "--rejects",
                        str(rej), "--as-of", AS_OF.isoformat(), "--lang", "en"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert pl.read_csv(out)["participant_id"].to_list() == ["OK"]
    rejects = pl.read_csv(rej)
    assert rejects.select("participant_id", "field", "code").rows() == [
        ("Z", "birth_date", "date_out_of_range")]


@pytest.mark.parametrize("birth, entry, sep", [("0000-01-01", "1988-07-01", "2010-06-30"),
                                               ("9950-01-01", "9970-01-01", "9999-12-31")])
def test_the_evaluate_command_names_the_field_without_a_traceback(birth, entry, sep):
    r = subprocess.run([*cli_command(), "evaluate", "--birth-date", birth, "--entry-date", entry,
                        "--separation-date", sep, "--service", "22", "--compensation", "30000",
                        "--no-refund", "--lang", "en"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and "--birth-date" in r.stderr
    assert "out of range" in r.stderr
