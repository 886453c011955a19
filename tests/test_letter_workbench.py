"""The letter's requirements and its pages through the real application
(TestClient) on SQLite and PostgreSQL: a case without its addressee's name
and address is not sent for approval (the page and the API say which field),
the draft letter's page fits a phone and leads back to the case, and an
issued letter asked for in another language is answered in words (the page
and the API), never with the other language's bytes."""

from __future__ import annotations

import re
from html import unescape

import pytest
from fastapi.testclient import TestClient

from diferida.service import workflow as wf
from diferida.service.store import Store

from .workbench_helpers import APPLICATION, csrf_of, sign_in, workbench_app

W = "/api/v1/workbench"
BARE = {k: v for k, v in APPLICATION.items() if k not in ("name", "address")}


@pytest.fixture(params=["sqlite", "postgresql"])
def site(request, tmp_path):
    with workbench_app(request.param, tmp_path) as (app, c):
        yield app, c


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def _user(store: Store, name: str):
    return next(u for u in store.users() if u.name == name)


def _signed_in(app, name: str, lang: str = "es") -> tuple[TestClient, str]:
    c = TestClient(app)
    sign_in(c, name, lang=lang)
    return c, csrf_of(c.get("/analista").text)


def test_the_page_refuses_to_submit_a_case_without_its_addressee_naming_the_fields(site):
    app, _ = site
    store = app.state.store
    case = wf.open_draft(store, _user(store, "ana"), BARE, lang="es", as_of=None).case_id
    c, token = _signed_in(app, "ana")
    r = c.post(f"/analista/casos/{case}/enviar", data={"csrf_token": token},
               follow_redirects=False)
    assert r.status_code == 422
    said = _text(r.text)
    assert "Falta el nombre del destinatario («Nombre del solicitante»)" in said
    assert "Falta la dirección postal del destinatario («Dirección postal»)" in said
    assert wf.view(store, _user(store, "ana"), case).state == "draft"


def test_the_api_refuses_to_submit_a_case_without_its_addressee_naming_the_fields(site):
    app, c = site
    store = app.state.store
    token = store.add_user("api", "analyst", full_name="Ana Programa",
                           title="Analista de Beneficios")[1]
    h = {"Authorization": f"Bearer {token}"}
    r = c.post(f"{W}/cases", json={**BARE, "participant_id": "API-1"}, headers=h)
    assert r.status_code == 201, r.text
    case = r.json()["case_id"]
    r = c.post(f"{W}/cases/{case}/submit?lang=en", headers=h)
    assert r.status_code == 422
    problems = r.json()["errors"]
    assert [(p["field"], p["code"]) for p in problems] == [
        ("name", "required"), ("address", "required")]
    assert problems[1]["message"].startswith("The addressee's postal address is missing")


def test_the_draft_letters_page_fits_a_phone_and_leads_back_to_the_case(site):
    app, _ = site
    store = app.state.store
    case = wf.open_draft(store, _user(store, "ana"), APPLICATION, lang="es",
                         as_of=None).case_id
    for lang, back in (("es", f"Volver al caso {case}"), ("en", f"Back to case {case}")):
        c, _ = _signed_in(app, "ana", lang)
        r = c.get(f"/analista/casos/{case}/carta" + ("?lang=en" if lang == "en" else ""))
        assert r.status_code == 200
        assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in r.text
        link = re.search(r'<a href="([^"]+)">([^<]+)</a>', r.text)
        assert link is not None and link.group(2) == back
        assert link.group(1) == f"/analista/casos/{case}" + ("?lang=en" if lang == "en" else "")
        assert c.get(link.group(1)).status_code == 200
        # on screen only: the print style hides it, so no printed letter has it
        assert "@media print { .screen-only { display: none; } }" in r.text


def test_an_issued_letter_asked_for_in_another_language_is_answered_in_words(site):
    app, c = site
    store = app.state.store
    ana, sol = _user(store, "ana"), _user(store, "sol")
    case = wf.open_draft(store, ana, APPLICATION, lang="es", as_of=None).case_id
    wf.submit(store, ana, case)
    wf.approve(store, sol, case)
    issued = wf.letter(store, sol, case)
    # the page: asked in English, said in English; without a language, the letter
    reader, _ = _signed_in(app, "sam", "en")
    r = reader.get(f"/analista/casos/{case}/carta?lang=en")
    assert r.status_code == 422
    assert (f"The letter of case {case} (version 1) was issued in Spanish and exists only "
            "in that language") in _text(r.text)
    r = reader.get(f"/analista/casos/{case}/carta")
    assert r.status_code == 200 and '<html lang="es">' in r.text
    # the API: 422 with the words, in the language asked; the bytes in their own
    token = store.add_user("lectora", "auditor")[1]
    h = {"Authorization": f"Bearer {token}"}
    r = c.get(f"{W}/cases/{case}/letter?lang=en", headers=h)
    assert r.status_code == 422 and r.headers["content-type"].startswith("application/json")
    [p] = r.json()["errors"]
    assert (p["field"], p["code"]) == ("lang", "letter_issued_in_other_language")
    assert "issued in Spanish" in p["message"]
    r = c.get(f"{W}/cases/{case}/letter?lang=es", headers=h)
    assert r.status_code == 200 and r.content == issued
    assert c.get(f"{W}/cases/{case}/letter", headers=h).content == issued
    # the older API's print route says the same
    r = c.get(f"/api/v1/cases/{case}/print?lang=en", headers=h)
    assert r.status_code == 422
    [p] = r.json()["errors"]
    assert (p["field"], p["code"]) == ("lang", "letter_issued_in_other_language")
    assert "issued in Spanish" in p["message"]
    assert c.get(f"/api/v1/cases/{case}/print", headers=h).content == issued
    assert c.get(f"/api/v1/cases/{case}/print?lang=es", headers=h).content == issued
