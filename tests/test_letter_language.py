"""The letter is issued in the addressee's language (`letter_lang`, es or
en), as the application gives it, whatever the language of the page it was
typed on or approved from: an office in Puerto Rico writes to a member in
Spanish or in English, as the member prefers. Through the real application
(TestClient) on SQLite and PostgreSQL: the form, the case and confirmation
pages, the import file's column, the API (where a `?lang=` naming another
language for the approval is refused in words), a correction; the issued
PDF read back with pdftotext, with no sentence of the other language."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from html import unescape

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from diferida.service import workflow as wf
from diferida.service.store import Letter, Store

from .conftest import need_part
from .workbench_helpers import APPLICATION, csrf_of, sign_in, workbench_app

W = "/api/v1/workbench"

# words only a letter in that language has (the other language's letter
# must have none of them): its salutation, its headings and common words,
# each a whole word
SPANISH = ("Estimado", "Atentamente", "usted", "pensión", "solicitud", "Regla", "años",
           "Fecha", "Determinación", "derecho")
ENGLISH = ("Dear", "Sincerely", "you", "pension", "application", "Rule", "years",
           "Date", "Determination", "right")
# the regulation's official title, cited by its name (in Spanish) in either
# language, as the rules file gives it
TITLE = re.compile(r"Reglamento del Sistema de Retiro de los Empleados del Gobierno de "
                   r"Puerto Rico, Art\. 19 \(Pensiones diferidas\)")


def _found(words: tuple[str, ...], text: str) -> list[str]:
    text = TITLE.sub("", text)
    return [w for w in words if re.search(rf"(?<!\w){w}(?!\w)", text)]


@pytest.fixture(params=["sqlite", "postgresql"])
def site(request, tmp_path):
    with workbench_app(request.param, tmp_path) as (app, c):
        yield app


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def _user(store: Store, name: str):
    return next(u for u in store.users() if u.name == name)


def _client(app, name: str, lang: str = "es") -> tuple[TestClient, str]:
    c = TestClient(app)
    sign_in(c, name, lang=lang)
    return c, csrf_of(c.get("/analista").text)


def _open(client, token, application, lang: str = "es") -> int:
    r = client.post(f"/analista/nuevo?lang={lang}",
                    data={**application, "action": "save", "csrf_token": token, "lang": lang},
                    follow_redirects=False)
    assert r.status_code == 303, _text(r.text)[:800]
    return int(re.match(r"^/analista/casos/(\d+)", r.headers["location"]).group(1))


def _pdf_text(pdf: bytes, tmp_path) -> str:
    exe = shutil.which("pdftotext")
    need_part(exe is not None, "pdftotext (Debian's poppler-utils)",
              "install Debian's package: apt-get install poppler-utils")
    path = tmp_path / "letter.pdf"
    path.write_bytes(pdf)
    out = subprocess.run([exe, "-enc", "UTF-8", str(path), "-"], capture_output=True,
                         check=True, timeout=120).stdout.decode("utf-8")
    return re.sub(r"\s+", " ", out)


def _issued_lang(store: Store, case_id: int) -> str:
    with store.reading() as session:
        return session.scalar(select(Letter.lang).where(Letter.case_id == case_id))


def _through_the_pages(app, *, page: str, letter_lang: str, pid: str) -> tuple[int, str]:
    """Typed by ana and approved by sol, both on `page`'s language, for an
    addressee who reads `letter_lang`: (the case, the confirmation page)."""
    ana, t = _client(app, "ana", page)
    case_id = _open(ana, t, {**APPLICATION, "participant_id": pid,
                             "letter_lang": letter_lang}, page)
    shown = _text(ana.get(f"/analista/casos/{case_id}?lang={page}").text)
    label = {"es": "Idioma de la carta", "en": "Language of the letter"}[page]
    assert f"{label} {({'es': 'Español', 'en': 'English'})[letter_lang]}" in shown
    r = ana.post(f"/analista/casos/{case_id}/enviar?lang={page}",
                 data={"csrf_token": t, "lang": page}, follow_redirects=False)
    assert r.status_code == 303, _text(r.text)[:600]
    sol, t2 = _client(app, "sol", page)
    confirm = _text(sol.get(f"/analista/casos/{case_id}/aprobar?lang={page}").text)
    r = sol.post(f"/analista/casos/{case_id}/aprobar?lang={page}",
                 data={"csrf_token": t2, "confirmado": "1", "lang": page},
                 follow_redirects=False)
    assert r.status_code == 303, _text(r.text)[:600]
    return case_id, confirm


@pytest.mark.pdf
def test_typed_and_approved_on_the_spanish_page_for_an_english_reader_the_letter_is_english(
        site, tmp_path):
    store = site.state.store
    case_id, confirm = _through_the_pages(site, page="es", letter_lang="en", pid="L-EN")
    assert "La carta se emitirá en inglés, el idioma del destinatario" in confirm
    assert _issued_lang(store, case_id) == "en"
    text = _pdf_text(wf.letter(store, _user(store, "aud"), case_id), tmp_path)
    assert "Dear Carmen Rivera Ortiz" in text and "Carmen Rivera Ortiz" in text
    assert _found(SPANISH, text) == [], text
    assert len(_found(ENGLISH, text)) >= 8


@pytest.mark.pdf
def test_typed_and_approved_on_the_english_page_for_a_spanish_reader_the_letter_is_spanish(
        site, tmp_path):
    store = site.state.store
    case_id, confirm = _through_the_pages(site, page="en", letter_lang="es", pid="L-ES")
    assert "The letter will be issued in Spanish, the addressee's language" in confirm
    assert _issued_lang(store, case_id) == "es"
    text = _pdf_text(wf.letter(store, _user(store, "aud"), case_id), tmp_path)
    assert "Estimad" in text and "Carmen Rivera Ortiz" in text
    assert _found(ENGLISH, text) == [], text
    assert len(_found(SPANISH, text)) >= 8


def test_the_form_offers_spanish_and_english_with_spanish_chosen(site):
    ana, _ = _client(site, "ana")
    page = ana.get("/analista/nuevo").text
    select_ = page[page.index('id="f-letter_lang"'):]
    select_ = select_[:select_.index("</select>")]
    assert re.findall(r'<option value="(\w+)"( selected)?>([^<]+)<', select_) == [
        ("es", "", "Español"), ("en", "", "English")]  # the first shown, and posted
    assert "Idioma de la carta" in _text(page)


def test_a_correction_keeps_the_addressees_language(site):
    store = site.state.store
    ana, t = _client(site, "ana")
    case_id = _open(ana, t, {**APPLICATION, "participant_id": "L-CORR", "letter_lang": "en"})
    form = ana.get(f"/analista/casos/{case_id}/corregir").text
    assert re.search(r'<option value="en" selected>English<', form)
    typed = {**APPLICATION, "participant_id": "L-CORR", "letter_lang": "en",
             "creditable_service_years": "23"}
    r = ana.post(f"/analista/casos/{case_id}/corregir",
                 data={**typed, "action": "save", "reason": "Años revisados",
                       "csrf_token": t}, follow_redirects=False)
    assert r.status_code == 303, _text(r.text)[:600]
    new = int(re.match(r"^/analista/casos/(\d+)", r.headers["location"]).group(1))
    assert new != case_id
    assert wf.view(store, _user(store, "ana"), new).letter_lang == "en"


def test_the_import_files_letter_lang_column(site):
    store = site.state.store
    ana = _user(store, "ana")
    cols = [k for k in APPLICATION if k not in ("as_of", "note", "letter_lang")]
    rows = [{**APPLICATION, "participant_id": pid, "letter_lang": lang}
            for pid, lang in (("I-1", "en"), ("I-2", " ES "), ("I-3", ""), ("I-4", "fr"))]
    head = [*cols, "letter_lang"]
    out = io.StringIO()
    out.write(",".join(head) + "\n")
    for row in rows:
        out.write(",".join('"' + str(row[c]).replace('"', '""') + '"' for c in head) + "\n")
    for lang, said in (("es", "«fr» no es un idioma de la carta"),
                       ("en", "'fr' is not a language of the letter")):
        result = wf.import_applications(store, ana, out.getvalue().encode(), f"{lang}.csv",
                                        lang=lang)
        if lang == "es":
            assert (result.rows_in, len(result.created), result.rows_rejected) == (4, 3, 1)
            made = {c.participant_id: wf.view(store, ana, c.case_id).letter_lang
                    for c in result.created}
            assert made == {"I-1": "en", "I-2": "es", "I-3": None}
            ids = {c.participant_id: c.case_id for c in result.created}
        (bad,) = [r for r in result.rejected if r.participant_id == "I-4"]
        assert (bad.field, bad.code) == ("letter_lang", "not_a_language")
        assert said in bad.message
    # a draft without the language is not sent for approval, and says why
    with pytest.raises(wf.Refused) as refused:
        wf.submit(store, ana, ids["I-3"])
    assert [p["field"] for p in refused.value.problems] == ["letter_lang"]
    assert "Falta el idioma de la carta" in refused.value.problems[0]["message"]
    wf.submit(store, ana, ids["I-1"])  # given: sent


def test_the_api_takes_the_language_and_refuses_another_at_approval_in_words(site):
    store = site.state.store
    c = TestClient(site)
    ana = store.add_user("api-ana", "analyst", full_name="Ana Programa",
                         title="Analista de Beneficios")[1]
    sup = store.add_user("api-sup", "supervisor", full_name="Sofía Programa",
                         title="Supervisora de Beneficios")[1]
    ha, hs = ({"Authorization": f"Bearer {t}"} for t in (ana, sup))
    body = {k: v for k, v in APPLICATION.items() if k != "as_of"}
    # a language that is none of the letter's: named
    r = c.post(f"{W}/cases", json={**body, "participant_id": "A-0", "letter_lang": "fr"},
               headers=ha)
    assert r.status_code == 422
    assert [p["field"] for p in r.json()["errors"]] == ["letter_lang"]
    # none given: stored without it, and not submitted until it is given
    r = c.post(f"{W}/cases", json={**{k: v for k, v in body.items() if k != "letter_lang"},
                                   "participant_id": "A-1"}, headers=ha)
    assert r.status_code == 201, r.text
    r = c.post(f"{W}/cases/{r.json()['case_id']}/submit?lang=en", headers=ha)
    assert r.status_code == 422
    (problem,) = r.json()["errors"]
    assert (problem["field"], problem["code"]) == ("letter_lang", "required")
    assert problem["message"].startswith("The language of the letter is missing")
    # English: approved in English whatever the approver's Accept-Language
    r = c.post(f"{W}/cases", json={**body, "participant_id": "A-2", "letter_lang": "en"},
               headers=ha)
    assert r.status_code == 201 and r.json()["letter_lang"] == "en", r.text
    case = r.json()["case_id"]
    assert c.post(f"{W}/cases/{case}/submit", headers=ha).status_code == 200
    for asked, words in (("es", "se emite en inglés"), ("fr", "no se puede emitir en fr")):
        r = c.post(f"{W}/cases/{case}/approve?lang={asked}", headers=hs)
        assert r.status_code == 422, r.text
        (problem,) = r.json()["errors"]
        assert (problem["field"], problem["code"]) == ("lang", "letter_lang_differs")
        assert words in problem["message"]
    assert wf.view(store, _user(store, "api-sup"), case).state == "submitted"
    r = c.post(f"{W}/cases/{case}/approve", headers={**hs, "Accept-Language": "es"})
    assert r.status_code == 200, r.text
    assert _issued_lang(store, case) == "en"
    # asked for in the language it was issued in: the same
    r = c.post(f"{W}/cases", json={**body, "participant_id": "A-3", "letter_lang": "en"},
               headers=ha)
    case = r.json()["case_id"]
    c.post(f"{W}/cases/{case}/submit", headers=ha)
    assert c.post(f"{W}/cases/{case}/approve?lang=en", headers=hs).status_code == 200
    assert _issued_lang(store, case) == "en"


def test_the_versions_list_says_a_change_of_language_in_words(site):
    store = site.state.store
    ana = _user(store, "ana")
    first = wf.open_draft(store, ana, {**APPLICATION, "participant_id": "L-H"}, lang="es")
    wf.correct(store, ana, first.case_id, {**APPLICATION, "participant_id": "L-H",
                                           "letter_lang": "en"},
               reason="El destinatario prefiere inglés", lang="es")
    for lang, said in (("es", "Idioma de la carta: «español» → «inglés»"),
                       ("en", "Language of the letter: 'Spanish' → 'English'")):
        (change,) = wf.history(store, ana, first.case_id, lang=lang).changes
        assert said in change.lines, change.lines
