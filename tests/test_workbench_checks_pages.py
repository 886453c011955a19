"""The workbench's pages for the checks a case's warnings ask for, through the
real application (TestClient, SQLite): a version whose own facts contradict
a check (rules §8 example 4) offers no send button and says why in the
determination's words; a version with two warnings asking for a check has a
box per warning, each note required, and the letter quotes each under its
own warning."""

from __future__ import annotations

import re
from html import unescape

import pytest
from fastapi.testclient import TestClient

from .workbench_helpers import APPLICATION, csrf_of, sign_in, workbench_app

EX4 = {**APPLICATION, "participant_id": "W-0404", "birth_date": "1975-06-20",
       "entry_date": "1996-02-01", "separation_date": "2021-03-31",
       "creditable_service_years": "25.1667", "average_compensation": "36000.00",
       "group": "police"}
# entered at 13 and separated in 2020 with 25 years served to 30 June 2013
TWO = {**APPLICATION, "participant_id": "W-0202", "birth_date": "1975-01-01",
       "separation_date": "2020-06-30", "creditable_service_years": "25"}
AGE, FROZEN = "implausible_entry_age", "act_3_2013_accruals_frozen"
NOTE_AGE = "Acta de nacimiento revisada: ingresó a los 13 años, consta en el expediente"
NOTE_FROZEN = "Certificación de servicios al 30/06/2013 revisada: 25 años hasta ese día"


@pytest.fixture
def site(tmp_path):
    with workbench_app("sqlite", tmp_path) as (app, _c):
        yield app


def _client(app, name: str) -> tuple[TestClient, str]:
    c = TestClient(app)
    sign_in(c, name, lang="es")
    return c, csrf_of(c.get("/analista").text)


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def _open(client, token, application) -> int:
    r = client.post("/analista/nuevo", data={**application, "action": "save",
                                             "csrf_token": token}, follow_redirects=False)
    assert r.status_code == 303, _text(r.text)[:800]
    return int(re.match(r"^/analista/casos/(\d+)", r.headers["location"]).group(1))


def test_a_check_the_facts_contradict_offers_no_send_and_says_why(site):
    ana, token = _client(site, "ana")
    case = _open(ana, token, EX4)
    page = ana.get(f"/analista/casos/{case}").text
    notice = _text(page[page.index('id="contradicted"'):].split("</div>", 1)[0])
    assert "No se puede enviar ni aprobar con estos datos" in notice
    assert "25.1667 años" in notice and "17 años y 5 meses" in notice
    assert 'id="submit"' not in page and 'id="f-acknowledgement"' not in page
    # a post all the same (an old page's form) is refused in the same words
    r = ana.post(f"/analista/casos/{case}/enviar", data={
        "csrf_token": token, "acknowledgement": NOTE_FROZEN}, follow_redirects=False)
    assert r.status_code == 422
    assert "incluyen servicios posteriores" in _text(r.text)
    assert 'data-state="draft"' in ana.get(f"/analista/casos/{case}").text


def test_two_warnings_take_a_note_each_and_the_letter_quotes_each(site):
    ana, token = _client(site, "ana")
    case = _open(ana, token, TWO)
    page = ana.get(f"/analista/casos/{case}").text
    for code in (AGE, FROZEN):
        assert f'name="acknowledgement.{code}"' in page
        assert f'id="f-acknowledgement-{code}"' in page
        assert f'for="f-acknowledgement-{code}"' in page
    # one note only: refused, the other box named, the typed note given back
    r = ana.post(f"/analista/casos/{case}/enviar", data={
        "csrf_token": token, f"acknowledgement.{AGE}": NOTE_AGE}, follow_redirects=False)
    assert r.status_code == 422
    assert f'id="e-acknowledgement-{FROZEN}"' in r.text and NOTE_AGE in unescape(r.text)
    r = ana.post(f"/analista/casos/{case}/enviar", data={
        "csrf_token": token, f"acknowledgement.{AGE}": NOTE_AGE,
        f"acknowledgement.{FROZEN}": NOTE_FROZEN}, follow_redirects=False)
    assert r.status_code == 303, _text(r.text)[:600]
    sol, t_sol = _client(site, "sol")
    confirm = sol.get(f"/analista/casos/{case}/aprobar").text
    assert f'name="acknowledgement.{AGE}"' in confirm
    r = sol.post(f"/analista/casos/{case}/aprobar", data={
        "csrf_token": t_sol, "confirmado": "1",
        f"acknowledgement.{AGE}": "Vi el acta y el expediente: las fechas constan así",
        f"acknowledgement.{FROZEN}": "Certificación vista: 25 años al 30 de junio de 2013"},
        follow_redirects=False)
    assert r.status_code == 303, _text(r.text)[:600]
    letter = _text(sol.get(f"/analista/casos/{case}/carta").text)
    age_part = letter[letter.index("14 años"):letter.index("La separación")]
    assert NOTE_AGE in age_part and NOTE_FROZEN not in age_part
    frozen_part = letter[letter.index("La separación"):]
    assert NOTE_FROZEN in frozen_part and NOTE_AGE not in frozen_part
