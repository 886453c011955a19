"""The letter says what the determination says, in the determination's own
words (issue: one writer): the regime row is the command line's regime line
(a 2014 entrant is named by Act 3-2013's hybrid program, rules §2), the
amount's sentence cites the rule that set the amount (rules §6), and the
reference line carries no reading code or ISO date."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

import diferida
from diferida.i18n import catalog
from diferida.letter import letter_html
from diferida.render import regime_line

from .letter_helpers import AS_OF, Letter, facts, stored, text_of

ENTRANT_2014 = {"participant_id": "H-2014", "birth_date": "1985-03-01",
                "entry_date": "2014-02-01", "separation_date": "2024-01-31",
                "creditable_service_years": "10", "average_compensation": "30000.00",
                "group": "general", "refund_requested": "false"}
POLICE_NEW = {"participant_id": "P-new", "birth_date": "1975-06-20",
              "entry_date": "1996-02-01", "separation_date": "2021-03-31",
              "creditable_service_years": "25.1667", "average_compensation": "36000.00",
              "group": "police", "refund_requested": "false"}


def letter(inputs: dict[str, str], lang: str, rules: str | None = None) -> Letter:
    result = stored(inputs, lang, rules)
    return Letter(letter_html(facts(inputs, result, lang, approved_by="Sofía Supervisora",
                                    approved_at=datetime(2026, 12, 3, 15, tzinfo=UTC))))


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_2014_entrant_is_named_by_the_hybrid_program_as_the_command_line_does(lang):
    d = diferida.evaluate(ENTRANT_2014, as_of=AS_OF, lang=lang)
    said = regime_line(d)
    assert "3-2013" in said and "305-1999" not in said
    row = letter(ENTRANT_2014, lang).rows("decision-block")[catalog(lang)["letter"]["regime"]]
    assert row == said


@pytest.mark.parametrize("lang", ["es", "en"])
@pytest.mark.parametrize("rules", [None, "article19-strict-19_4"])
def test_the_reference_line_has_no_reading_code_or_iso_date(lang, rules):
    text = letter(POLICE_NEW, lang, rules).text
    line = text[text.index(catalog(lang)["letter"]["reference"].split("{")[0]):]
    assert "both_regimes" not in line and "pre1990_only" not in line
    assert not re.search(r"\b\d{4}-\d{2}-\d{2}\b", line)


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_new_police_officer_on_19_4_is_paid_under_19_5_b_in_the_opening(lang):
    opening = text_of(letter(POLICE_NEW, lang).one("p", "opening"))
    rule = {"es": "Regla", "en": "Rule"}[lang]
    assert f"{rule} 19.5(b)." in opening
    assert f"{rule} 19.4(a)." not in opening
