"""Each fact of the law has one home (docs/architecture.md, "Where a rule is
restated"): the places that restate a rule read it from the engine and the
rules file, and these tests hold each equal to the engine, for the shipped
rules and for a reform that changes the fact."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import polars as pl
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from diferida.rules import load_rules
from diferida.validation import asks_deferred_right, validate
from diferida.web.forms import FormState

RULES = load_rules("article19")
CUTOFF = RULES.deferred_right_cutoff  # 1960-06-30 in the shipped rules
ROW = {"participant_id": "P-1", "birth_date": "1900-01-01", "entry_date": None,
       "separation_date": "2000-06-30", "creditable_service_years": "10",
       "average_compensation": "30000", "group": "general", "refund_requested": "false",
       "deferred_right_1960": None, "requested_start_date": None}

REFORM = """base = "article19"

[meta]
name = "reform-one-home"
title = "Reforma de prueba (no es ley)"
description = "ILLUSTRATIVE, NOT LAW: another 19.6 cut-off and another 19.1(a) threshold."
illustrative = true

[regime.deferred_right_cutoff]
value = "1962-03-15"

[route_overrides."19.1(a)"]
min_service = "12"
"""


@pytest.fixture(scope="module")
def reform(tmp_path_factory) -> object:
    path = Path(tmp_path_factory.mktemp("reform")) / "reform-one-home.toml"
    path.write_text(REFORM, encoding="utf-8")
    return load_rules(path)


def _engine_derives(entry: date, rules) -> bool:
    """The engine's own answer: the derived `deferred_right_1960` of a row
    that leaves it empty."""
    frame = pl.DataFrame([{**ROW, "entry_date": entry.isoformat()}],
                         schema={k: pl.String for k in ROW})
    done = validate(frame, rules, date(2026, 1, 1))
    assert done.errors.is_empty(), done.errors
    return bool(done.typed["deferred_right_1960"][0])


def _form_asks(entry: date) -> bool:
    return FormState(lang="es", values={"entry_date": entry.isoformat()}).asks_1960


dates_near = st.integers(-800, 800).map(lambda d: CUTOFF + timedelta(days=d))


@given(entry=dates_near)
@example(entry=CUTOFF)
@example(entry=CUTOFF + timedelta(days=1))
@example(entry=CUTOFF - timedelta(days=1))
def test_the_form_asks_19_6_exactly_where_the_engine_derives_it(entry):
    engine = _engine_derives(entry, RULES)
    assert _form_asks(entry) == engine == asks_deferred_right(entry, RULES)


@pytest.mark.parametrize("days", [-1, 0, 1])
def test_a_reform_moving_the_cutoff_moves_the_engine_and_the_question(reform, days):
    entry = reform.deferred_right_cutoff + timedelta(days=days)
    assert _engine_derives(entry, reform) == asks_deferred_right(entry, reform) == (days <= 0)
    # between the two cut-offs the shipped rules and the reform answer differently
    assert asks_deferred_right(date(1961, 1, 1), reform)
    assert not asks_deferred_right(date(1961, 1, 1), RULES)


def test_the_question_is_not_asked_without_an_entry_date():
    assert not asks_deferred_right(None, RULES)
    assert not FormState(lang="es", values={}).asks_1960
