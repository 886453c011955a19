"""What the workbench's pages say, through the real application (TestClient)
on a real SQLite store: the engine's answer for an application (the same
as `diferida.evaluate`), reproduction, the timeline in Puerto Rico time, the
draft letter, refusals in words, a return and a correction with their
reasons, the changes between versions, the stored PDF, an import with a
rejected row named, search, and a queue of more than one page."""

from __future__ import annotations

import re
import tomllib
from datetime import timedelta
from html import unescape
from importlib import resources

import pytest
from fastapi.testclient import TestClient

import diferida
from diferida.service import workflow

from .workbench_helpers import APPLICATION, csrf_of, sign_in, workbench_app


def _keys(d, prefix=""):
    out = set()
    for k, v in d.items():
        out |= _keys(v, f"{prefix}{k}.") if isinstance(v, dict) else {prefix + k}
    return out


def test_the_workbench_words_have_the_same_keys_in_every_language():
    def words(lang):
        path = resources.files("diferida") / "i18n" / lang / "web" / "workbench.toml"
        return tomllib.loads(path.read_text("utf-8"))

    assert _keys(words("es")) == _keys(words("en"))
    assert len(_keys(words("es"))) > 150


@pytest.fixture(params=["sqlite", "postgresql"])
def site(request, tmp_path):
    with workbench_app(request.param, tmp_path) as (app, c):
        yield app, c


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def _client(app, name: str) -> tuple[TestClient, str]:
    c = TestClient(app)
    sign_in(c, name)
    return c, csrf_of(c.get("/analista").text)


def _case_id(response) -> int:
    return int(re.match(r"^/analista/casos/(\d+)", response.headers["location"]).group(1))


def test_a_case_from_application_to_correction_as_the_pages_say_it(site):
    app, _ = site
    store = app.state.store
    sol, t_sol = _client(app, "sol")
    sam, t_sam = _client(app, "sam")
    typed = {**APPLICATION, "average_compensation": "$30,000.00",
             "creditable_service_years": "22 años", "application_date": "20/11/2026"}
    # the answer beside the form is the engine's, for the values as read
    r = sol.post("/analista/nuevo", data={**typed, "action": "preview", "csrf_token": t_sol})
    assert r.status_code == 200
    facts = {k: APPLICATION[k] for k in ("birth_date", "entry_date", "separation_date",
                                         "creditable_service_years", "average_compensation",
                                         "group", "refund_requested", "as_of")}
    expected = diferida.evaluate({**facts, "participant_id": "W-0001"}, lang="es")
    assert expected.headline in unescape(r.text)
    r = sol.post("/analista/nuevo", data={**typed, "action": "save", "csrf_token": t_sol},
                 follow_redirects=False)
    assert r.status_code == 303
    case_id = _case_id(r)
    page = sol.get(f"/analista/casos/{case_id}").text
    assert expected.headline in unescape(page)
    assert 'data-identical="yes"' in page  # the stored rules give the same answer
    assert "20 de noviembre de 2026" in page  # the application date, read day first
    history = workflow.history(store, store.sign_in_record("sol")[0], case_id)
    opened = history.events[0].at
    local = opened - timedelta(hours=4)
    assert f"{local:%H:%M} AST" in page
    letter = sol.get(f"/analista/casos/{case_id}/carta")
    assert letter.status_code == 200 and "BORRADOR" in letter.text
    assert "Carmen Rivera Ortiz" in letter.text
    # submitted; the maker may not approve: the workflow's refusal, in words
    assert sol.post(f"/analista/casos/{case_id}/enviar", data={"csrf_token": t_sol},
                    follow_redirects=False).status_code == 303
    r = sol.post(f"/analista/casos/{case_id}/aprobar", data={"csrf_token": t_sol,
                                                             "confirmado": "1"})
    assert r.status_code == 403
    own = workflow.Refused("own_case", number=case_id, version=1).message("es")
    assert own in unescape(r.text) and 'data-state="submitted"' in r.text
    # a return needs a reason; with one, the case page shows it
    r = sam.post(f"/analista/casos/{case_id}/devolver", data={"csrf_token": t_sam,
                                                              "reason": "  "})
    assert r.status_code == 422 and "motivo de la devolución" in r.text
    r = sam.post(f"/analista/casos/{case_id}/devolver",
                 data={"csrf_token": t_sam, "reason": "Falta la certificación"})
    page = sam.get(r.url).text
    assert 'data-state="returned"' in page and "Falta la certificación" in page
    # the correction: its form holds the stored application; a reason is needed
    form = sol.get(f"/analista/casos/{case_id}/corregir").text
    assert 'value="W-0001"' in form and "Calle Sol 12" in form
    corrected = {**typed, "average_compensation": "31000.00", "action": "save",
                 "csrf_token": t_sol}
    r = sol.post(f"/analista/casos/{case_id}/corregir", data=corrected)
    assert r.status_code == 422 and 'id="e-reason"' in r.text
    r = sol.post(f"/analista/casos/{case_id}/corregir",
                 data={**corrected, "reason": "Retribución corregida"}, follow_redirects=False)
    assert r.status_code == 303
    new_id = _case_id(r)
    page = sol.get(f"/analista/casos/{new_id}").text
    story = workflow.history(store, store.sign_in_record("sol")[0], new_id)
    assert story.changes and story.changes[-1].lines
    for line in story.changes[-1].lines:
        assert line in unescape(page)
    assert "Retribución corregida" in page
    # the old version says it was replaced, and links to the current one
    old = sol.get(f"/analista/casos/{case_id}").text
    assert 'id="not-current"' in old and f"/analista/casos/{new_id}" in old
    # approved by the other supervisor: the PDF served is the one stored
    sol.post(f"/analista/casos/{new_id}/enviar", data={"csrf_token": t_sol})
    r = sam.post(f"/analista/casos/{new_id}/aprobar",
                 data={"csrf_token": t_sam, "confirmado": "1"}, follow_redirects=False)
    assert r.status_code == 303
    pdf = sam.get(f"/analista/casos/{new_id}/carta.pdf")
    assert pdf.headers["content-type"] == "application/pdf"
    assert pdf.content == workflow.stored_letter(store, new_id)
    import hashlib

    assert hashlib.sha256(pdf.content).hexdigest() in sam.get(f"/analista/casos/{new_id}").text


def test_an_import_names_its_rejected_rows_and_search_finds_the_drafts(site):
    app, _ = site
    ana, token = _client(app, "ana")
    rows = [APPLICATION, {**APPLICATION, "participant_id": "W-0002"},
            {**APPLICATION, "participant_id": "W-0003", "birth_date": "1970-02-30"}]
    csv = ",".join(APPLICATION) + "\n" + "".join(
        ",".join(f'"{v}"' for v in row.values()) + "\n" for row in rows)
    r = ana.post("/analista/importar", data={"csrf_token": token},
                 files={"archivo": ("solicitudes.csv", csv.encode())})
    assert r.status_code == 200
    text = _text(r.text)
    assert "Filas leídas: 3" in text and "Borradores creados: 2" in text
    assert "Filas rechazadas: 1" in text
    rejected = re.search(r'<table class="wb-table" id="rejected-rows">.*?</table>', r.text, re.S)
    assert "W-0003" in rejected.group(0) and "birth_date" in rejected.group(0)
    r = ana.post("/analista/importar", data={"csrf_token": token})
    assert r.status_code == 422 and "Elija un archivo" in r.text
    # search by participant id and by case number; a bad number is named
    r = ana.post("/analista/buscar", data={"csrf_token": token, "participante": "W-0002"})
    assert r.status_code == 200 and "W-0002" in r.text and "W-0001" not in _text(r.text)
    number = re.search(r'href="/analista/casos/(\d+)">(\d+)</a>', r.text).group(2)
    r = ana.post("/analista/buscar", data={"csrf_token": token, "caso": number})
    assert "W-0002" in r.text
    r = ana.post("/analista/buscar", data={"csrf_token": token, "caso": "doce"})
    assert r.status_code == 422 and 'id="e-caso"' in r.text


def test_a_queue_longer_than_a_page_is_paged(site):
    app, _ = site
    ana, token = _client(app, "ana")
    rows = [{**APPLICATION, "participant_id": f"Q-{i:03}"} for i in range(workflow.PER_PAGE + 1)]
    csv = ",".join(APPLICATION) + "\n" + "".join(
        ",".join(f'"{v}"' for v in row.values()) + "\n" for row in rows)
    r = ana.post("/analista/importar", data={"csrf_token": token},
                 files={"archivo": ("q.csv", csv.encode())})
    assert f"Borradores creados: {len(rows)}" in _text(r.text)
    first = ana.get("/analista?lista=drafts").text
    assert "Página 1 de 2" in first and f"{len(rows)} casos" in first
    assert first.count('href="/analista/casos/') == workflow.PER_PAGE
    second = ana.get("/analista?lista=drafts&pagina=2").text
    assert "Página 2 de 2" in second and second.count('href="/analista/casos/') == 1
    english = ana.get("/analista?lista=drafts&pagina=2&lang=en").text
    assert 'lang="en"' in english and "Page 2 of 2" in english


def test_the_auditor_filters_the_trail_and_sees_the_chains_verified(site):
    app, _ = site
    sol, t_sol = _client(app, "sol")
    r = sol.post("/analista/nuevo", data={**APPLICATION, "action": "save",
                                          "csrf_token": t_sol}, follow_redirects=False)
    case_id = _case_id(r)
    sol.post(f"/analista/casos/{case_id}/enviar", data={"csrf_token": t_sol})
    sol.post(f"/analista/casos/{case_id}/aprobar",
             data={"csrf_token": t_sol, "confirmado": "1"})  # refused
    aud, t_aud = _client(app, "aud")
    page = aud.get("/analista/auditoria").text
    assert 'id="verify-none"' in page  # the chains are verified when asked, not on arrival
    verified = aud.post("/analista/auditoria", data={"csrf_token": t_aud, "verificar": "1"})
    assert 'data-intact="yes"' in verified.text
    # the exports are a tab of the auditor's, a page of their own
    assert 'href="/analista/auditoria/exportar"' in page
    exports = aud.get("/analista/auditoria/exportar").text
    for kind in ("cases", "events", "summary"):
        assert f"/analista/auditoria/exportar/{kind}.csv" in exports
    r = aud.post("/analista/auditoria", data={"csrf_token": t_aud, "caso": str(case_id),
                                              "accion": "workflow.approve"})
    rows = re.findall(r"<tr><td>.*?</tr>", r.text, re.S)
    # the person by their full name (their profile's), not their sign-in name
    assert len(rows) == 1 and 'data-status="403"' in rows[0]
    assert "<td>Sol Marrero Vega</td>" in rows[0] and ">sol<" not in rows[0]
    # filtered by the sign-in name, or by the full name the trail shows
    for who in ("sol", "sol marrero  vega"):
        r = aud.post("/analista/auditoria", data={"csrf_token": t_aud, "quien": who,
                                                  "desde": "2026-01-01"})
        actions = set(re.findall(r'<td data-action="(workflow\.[a-z_]+)">', r.text))
        assert {"workflow.open", "workflow.submit", "workflow.approve"} <= actions, who
    # a day and month that could be swapped is asked back, never guessed
    r = aud.post("/analista/auditoria", data={"csrf_token": t_aud, "desde": "2/11/2026"})
    assert r.status_code == 422 and "11 de febrero de 2026" in r.text
    export = aud.get("/analista/auditoria/exportar/events.csv")
    assert export.status_code == 200 and export.headers["content-type"].startswith("text/csv")
    assert "attachment" in export.headers["content-disposition"]
