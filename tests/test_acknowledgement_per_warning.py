"""The notes saying what was checked, one per warning that asks for a check,
quoted by the letter under their warning; and a check the facts themselves
contradict (rules §8 example 4: 25.1667 years of service, entry on
1 February 1996, and a warning asking that service run only to 30 June 2013)
stops submission and approval with the reason in words, until corrected."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

import pytest

import diferida
from diferida.service import workflow as wf
from diferida.service.store import Store
from diferida.service.testing import database_for_tests

from .letter_helpers import Letter, spec_examples
from .workbench_helpers import SIGNERS, signer

AS_OF = date(2026, 11, 29)
PERSON = {"name": "Luis Méndez Ortiz", "letter_lang": "es",
          "address": "Calle Sol 3\nPonce, PR 00730", "application_date": "2026-10-01"}
EX4 = {**{k: v for k, v in spec_examples()[4].items() if k != "participant_id"},
       "participant_id": "K-4", **PERSON}
# example 1 separated in 2020 with the 25 years of 1 July 1988 to 30 June 2013:
# the check holds up (25 ≤ 25) and is acknowledged
FROZEN = {**{k: v for k, v in spec_examples()[1].items() if k != "participant_id"},
          "participant_id": "K-1", "separation_date": "2020-06-30",
          "creditable_service_years": "25", **PERSON}
# entered before age 14 and separated after 2013: two warnings asking for a check
TWO = {**FROZEN, "participant_id": "K-2", "birth_date": "1975-01-01",
       "entry_date": "1988-07-01"}
NOTE_FROZEN = "Certificación de servicios al 30/06/2013 revisada: 25 años exactos hasta ese día"
NOTE_AGE = "Acta de nacimiento y expediente de ingreso revisados: las fechas son correctas"


class Office:
    def __init__(self, store: Store):
        self.store = store
        self.ana = store.add_user("ana", "analyst", **signer("ana"))[0]
        self.sofia = store.add_user("sofia", "supervisor", **signer("sofia"))[0]


@pytest.fixture
def office(tmp_path) -> Iterator[Office]:
    with database_for_tests("sqlite", tmp_path) as url:
        store = Store(url)
        store.upgrade()
        yield Office(store)
        store.dispose()


def refusal(fn, *args, **kwargs) -> wf.Refused:
    with pytest.raises(wf.Refused) as info:
        fn(*args, **kwargs)
    return info.value


def words(html: str) -> str:
    return Letter(html).text


def test_example_4_is_contradicted_by_its_own_facts_and_cannot_be_sent(office):
    s, o = office.store, office
    v = wf.open_draft(s, o.ana, EX4, lang="es", as_of=AS_OF)
    assert v.checks == ("act_3_2013_accruals_frozen",)
    assert v.contradicted == ("act_3_2013_accruals_frozen",)
    for note in (None, NOTE_FROZEN, {"act_3_2013_accruals_frozen": NOTE_FROZEN}):
        r = refusal(wf.submit, s, o.ana, v.case_id, acknowledgement=note, lang="es")
        assert r.code == "invalid"
        (p,) = r.problems
        assert (p["field"], p["code"]) == ("creditable_service_years", "check_contradicted")
        # the determination's own sentence: what the facts say and what to correct
        assert "25.1667 años" in p["message"] and "17 años y 5 meses" in p["message"]
        assert "30 de junio de 2013" in p["message"] and "deben corregirse" in p["message"]
        assert "incluyen servicios posteriores" in p["message"]
    # asked in English, the same facts are said in English
    r = refusal(wf.submit, s, o.ana, v.case_id, lang="en")
    assert "17 years and 5 months" in r.problems[0]["message"]
    assert "cannot be sent or approved" in r.problems[0]["message"]
    assert wf.view(s, o.ana, v.case_id).state == "draft"
    # corrected to the service up to 30 June 2013, it is sent with a note
    v2 = wf.correct(s, o.ana, v.case_id, {**EX4, "creditable_service_years": "17.4167"},
                    reason="Servicios corregidos al 30 de junio de 2013", lang="es",
                    as_of=AS_OF)
    assert v2.contradicted == () and v2.checks == ("act_3_2013_accruals_frozen",)
    assert wf.submit(s, o.ana, v2.case_id, acknowledgement=NOTE_FROZEN,
                     lang="es").state == "submitted"


def test_the_determination_says_the_contradiction_in_both_languages():
    inputs = {k: v for k, v in spec_examples()[4].items()}
    for lang, needle in (("es", "deben corregirse a esa fecha"),
                         ("en", "must be corrected to that date")):
        d = diferida.evaluate(inputs, as_of=AS_OF, lang=lang)
        (f,) = [f for f in d.explanation if f.condition == "act_3_2013_accruals_frozen"]
        assert f.values["contradicted"] is True and f.held is False
        assert f.values["span_years"] == "17.4167" and needle in f.text
    # 17.4167 years fit: the warning stands, with nothing contradicted
    d = diferida.evaluate({**inputs, "creditable_service_years": "17.4167"}, as_of=AS_OF)
    (f,) = [f for f in d.explanation if f.condition == "act_3_2013_accruals_frozen"]
    assert f.values["contradicted"] is False and f.held is None


def test_service_longer_than_the_whole_span_is_asked_about_not_stopped(office):
    # longer than entry to separation: credited prior service may explain it
    # (service_exceeds_span asks to check that), so the 2013 check is not
    # contradicted by the facts alone
    s, o = office.store, office
    app = {**FROZEN, "participant_id": "K-5", "creditable_service_years": "33"}
    v = wf.open_draft(s, o.ana, app, lang="es", as_of=AS_OF)
    assert v.checks == ("service_exceeds_span", "act_3_2013_accruals_frozen")
    assert v.contradicted == ()


def test_each_note_is_quoted_under_its_own_warning_in_the_letter(office):
    s, o = office.store, office
    v = wf.open_draft(s, o.ana, FROZEN, lang="es", as_of=AS_OF)
    assert v.checks == ("act_3_2013_accruals_frozen",) and v.contradicted == ()
    wf.submit(s, o.ana, v.case_id, acknowledgement=NOTE_FROZEN, lang="es")
    done = wf.approve(s, o.sofia, v.case_id,
                      acknowledgement={"act_3_2013_accruals_frozen": "Revisé la certificación "
                                       "de la agencia: coincide, 25 años"})
    assert done.state == "approved"
    assert [a.warnings for a in done.acknowledgements] == [("act_3_2013_accruals_frozen",)] * 2
    letter = Letter(wf.letter_html(s, o.sofia, v.case_id))
    (item,) = [li for li in letter.items("warnings") if li.startswith("La separación")]
    assert f"Verificado por {SIGNERS['ana'][0]} el" in item
    assert f"«{NOTE_FROZEN}»" in item
    assert f"Verificado por {SIGNERS['sofia'][0]} el" in item
    # the note stands under that warning only, never as a blanket certificate
    assert "Verificaron los datos" not in letter.text
    ages = [li for li in letter.items("warnings") if "nuevas edades" in li]
    assert ages and all("Verificado" not in li for li in ages)


def test_two_warnings_take_one_note_each(office):
    s, o = office.store, office
    v = wf.open_draft(s, o.ana, TWO, lang="es", as_of=AS_OF)
    assert v.checks == ("implausible_entry_age", "act_3_2013_accruals_frozen")
    r = refusal(wf.submit, s, o.ana, v.case_id, acknowledgement=NOTE_AGE, lang="es")
    assert r.problems[0]["code"] == "acknowledgement_each"
    assert "una nota para cada una" in r.problems[0]["message"]
    r = refusal(wf.submit, s, o.ana, v.case_id,
                acknowledgement={"implausible_entry_age": NOTE_AGE}, lang="es")
    assert r.problems[0]["field"] == "acknowledgement.act_3_2013_accruals_frozen"
    r = refusal(wf.submit, s, o.ana, v.case_id, lang="en", acknowledgement={
        "implausible_entry_age": NOTE_AGE, "act_3_2013_accruals_frozen": NOTE_FROZEN,
        "service_exceeds_span": NOTE_AGE})
    assert r.problems[0]["field"] == "acknowledgement.service_exceeds_span"
    assert r.problems[0]["code"] == "acknowledgement_not_asked"
    notes = {"implausible_entry_age": NOTE_AGE, "act_3_2013_accruals_frozen": NOTE_FROZEN}
    assert wf.submit(s, o.ana, v.case_id, acknowledgement=notes, lang="es").state == "submitted"
    done = wf.approve(s, o.sofia, v.case_id, acknowledgement={
        "implausible_entry_age": "Vi el acta: ingresó a los 13 años, consta así",
        "act_3_2013_accruals_frozen": "Certificación al 30/06/2013 vista: 25 años"})
    by_warning = {a.warnings[0]: a.note for a in done.acknowledgements if a.by ==
                  SIGNERS["ana"][0]}
    assert by_warning == notes
    letter = Letter(wf.letter_html(s, o.sofia, v.case_id))
    items = letter.items("warnings")
    age = next(i for i in items if "13 años" in i or "14 años" in i)
    assert NOTE_AGE in age and NOTE_FROZEN not in age
    frozen = next(i for i in items if i.startswith("La separación"))
    assert NOTE_FROZEN in frozen and NOTE_AGE not in frozen
