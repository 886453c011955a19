"""People by their names and events in words, through the real application
(TestClient) on SQLite and PostgreSQL: the auditor's trail says each
event's detail as a sentence of the page's language (the codes stay in the
exports and the API), and names people by their full names, as the queue
and the header do; the last change of an issued case is its approval, by
its approver; a draft its letter cannot be written for says why before
anyone presses "Enviar", and how to fix it; "Revise y confirme" has a
"Cambiar" per fact, which works without a script."""

from __future__ import annotations

import csv
import io
import re
from html import unescape

import pytest
from fastapi.testclient import TestClient

from diferida.service import workflow

from .workbench_helpers import APPLICATION, csrf_of, sign_in, workbench_app

# the full names the tests' users are given (workbench_helpers.SIGNERS), and
# the auditor's, set here
SOL, ANA, SAM = "Sol Marrero Vega", "Ana Rivera Colón", "Samuel Ortiz Cruz"
AUD = "Aurora Díaz Ramos"


@pytest.fixture(params=["sqlite", "postgresql"])
def site(request, tmp_path):
    with workbench_app(request.param, tmp_path) as (app, _):
        app.state.store.set_profile("aud", AUD, "Auditora")
        yield app


@pytest.fixture
def sqlite_site(tmp_path):
    with workbench_app("sqlite", tmp_path) as (app, _):
        yield app


def _client(app, name: str, lang: str = "es") -> tuple[TestClient, str]:
    c = TestClient(app)
    sign_in(c, name, lang=lang)
    return c, csrf_of(c.get("/analista").text)


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def _open(client, token, application=APPLICATION) -> int:
    r = client.post("/analista/nuevo", data={**application, "action": "save",
                                             "csrf_token": token}, follow_redirects=False)
    assert r.status_code == 303, _text(r.text)[:800]
    return int(re.match(r"^/analista/casos/(\d+)", r.headers["location"]).group(1))


def _issued(app) -> int:
    """A case ana prepared and sent, sol approved (its letter viewed first)."""
    ana, t_ana = _client(app, "ana")
    sol, t_sol = _client(app, "sol")
    case_id = _open(ana, t_ana)
    ana.get(f"/analista/casos/{case_id}")
    ana.get(f"/analista/casos/{case_id}/carta")
    assert ana.post(f"/analista/casos/{case_id}/enviar", data={"csrf_token": t_ana},
                    follow_redirects=False).status_code == 303
    assert sol.post(f"/analista/casos/{case_id}/aprobar",
                    data={"csrf_token": t_sol, "confirmado": "1"},
                    follow_redirects=False).status_code == 303
    return case_id


def _rows(html: str) -> list[str]:
    return [_text(r).strip() for r in re.findall(r"<tr>\s*<td>.*?</tr>", html, re.S)]


def test_the_trail_says_each_detail_in_words_and_people_by_their_names(site):
    store = site.state.store
    case_id = _issued(site)
    # a user made by the administrator, and a new password: the trail's user events
    store.add_user("ramon", "analyst", full_name="Ramón Pérez Soto", title="Analista")
    store.set_password("ramon", workflow.hash_password("ramon-pass-1234"))
    aud, t_aud = _client(site, "aud")
    page = aud.post("/analista/auditoria", data={"csrf_token": t_aud, "consultas": "1"}).text
    rows = _rows(page)
    # the sign-ins and the reads of a case's history, further down the trail
    for action in ("auth.signin", "workflow.read"):
        rows += _rows(aud.post("/analista/auditoria", data={"csrf_token": t_aud,
                                                            "accion": action}).text)
    said = " ".join(rows)
    sha = workflow.view(store, store.sign_in_record("sol")[0], case_id).letter_sha256
    # each detail a sentence of the page's language: no code, no JSON
    for english in ("issued letter", "draft letter", "letter sha256", "version 1", "workbench",
                    "filters:", '"user_id"', "{", "}"):
        assert english not in said, english
    assert f"Carta emitida; huella SHA-256 {sha}." in said
    assert "Usuario creado: Ramón Pérez Soto (ramon)." in said
    assert "Contraseña nueva de Ramón Pérez Soto (ramon)." in said
    assert "Borrador de la carta, en HTML." in said and "Versión 1." in said
    assert "En la mesa de trabajo." in said and "Con su historial." in said
    assert 'class="wb-detail">Detalle técnico' not in page  # every form here has its words
    # people by their full names, never their sign-in names
    approval = next(r for r in rows if "Aprobado y carta emitida" in r)
    assert approval.startswith(f"{approval.split(' AST ')[0]} AST {SOL} supervisor")
    users = re.findall(r"<tr><td>[^<]*</td><td>([^<]*)</td>", page)
    assert set(users) <= {SOL, ANA, AUD, "—"} and {SOL, ANA, AUD} <= set(users)
    # the same page in English, in English
    en = _rows(aud.post("/analista/auditoria", data={"csrf_token": t_aud, "lang": "en",
                                                      "consultas": "1"}).text)
    english = " ".join(en)
    assert f"Letter issued; SHA-256 fingerprint {sha}." in english
    assert "User created: Ramón Pérez Soto (ramon)." in english
    assert "Carta emitida" not in english
    # the header names the auditor by their full name
    assert f"Sesión de {AUD} (auditor)" in _text(page)
    # the codes stay as they were in the export and in the API
    export = aud.get("/analista/auditoria/exportar/events.csv").text
    table = list(csv.DictReader(io.StringIO(export)))
    assert list(table[0]) == ["id", "at", "number", "case_id", "version", "action", "user",
                              "role", "corrects", "letter_sha256"]
    assert {r["user"] for r in table} == {"ana", "sol"}  # the sign-in names
    assert [r["action"] for r in table] == ["created", "submitted", "approved",
                                            "letter_stored"]
    token = store.add_user("aud-api", "auditor")[1]
    api = TestClient(site).get("/api/v1/workbench/audit?action=workflow.approve",
                               headers={"Authorization": f"Bearer {token}"}).json()
    assert [i["detail"] for i in api["items"]] == [f"letter sha256 {sha}"]
    assert api["items"][0]["user"] == "sol"


def test_the_queue_names_the_approver_of_an_issued_case_by_full_name(site):
    case_id = _issued(site)
    for who in ("ana", "sol", "aud"):
        c, _ = _client(site, who)
        page = c.get("/analista?lista=issued").text
        row = next(r for r in _rows(page) if f" {APPLICATION['participant_id']} " in f" {r} ")
        # the last change of an issued case is its approval, by who approved it
        assert row.endswith(f"AST · {SOL}"), row
        assert f"/analista/casos/{case_id}" in page
    # a draft's last change is its author's; the header names who is signed in
    ana, t_ana = _client(site, "ana")
    _open(ana, t_ana, {**APPLICATION, "participant_id": "W-0100"})
    drafts = ana.get("/analista?lista=drafts").text
    assert _rows(drafts)[0].endswith(f"AST · {ANA}")
    assert f"Sesión de {ANA} (analista)" in _text(drafts)


def test_a_draft_without_its_addressee_says_why_it_cannot_be_sent_and_how_to_fix_it(
        sqlite_site):
    ana, t_ana = _client(sqlite_site, "ana")
    case_id = _open(ana, t_ana, {**APPLICATION, "name": "", "address": ""})
    page = ana.get(f"/analista/casos/{case_id}").text
    blocked = re.search(r'<div class="wb-notice wb-blocked" id="not-sendable">(.*?)</div>',
                        page, re.S)
    assert blocked, "no reason given before sending"
    said = _text(blocked.group(1))
    assert "Todavía no se puede enviar a aprobación" in said
    assert "Falta el nombre del destinatario" in said and "Falta la dirección postal" in said
    # each fixed in the correction form, at its field
    links = dict((unescape(text), href) for href, text in re.findall(
        r'<a href="([^"]+)" class="wb-fix">([^<]+)</a>', blocked.group(1)))
    assert links == {"Añadir el nombre del destinatario":
                     f"/analista/casos/{case_id}/corregir#f-name",
                     "Añadir la dirección postal del destinatario":
                     f"/analista/casos/{case_id}/corregir#f-address"}
    form = ana.get(links["Añadir el nombre del destinatario"].split("#")[0]).text
    assert 'id="f-name"' in form and 'id="f-address"' in form
    # "Enviar" shown, not usable, described by the reason; no form that sends it
    assert re.search(r'<button type="button" class="primary" id="submit" disabled '
                     r'aria-describedby="not-sendable-title">', page)
    assert f'action="/analista/casos/{case_id}/enviar"' not in page
    # in English too
    en = _text(ana.get(f"/analista/casos/{case_id}?lang=en").text)
    assert "Not ready to submit for approval yet" in en and "Add the addressee's name" in en
    # once the addressee is there, the button sends
    r = ana.post(f"/analista/casos/{case_id}/corregir",
                 data={**APPLICATION, "action": "save", "csrf_token": t_ana,
                       "reason": "Destinatario añadido"}, follow_redirects=False)
    fixed = ana.get(r.headers["location"]).text
    assert 'id="not-sendable"' not in fixed and 'id="submit" disabled' not in fixed
    assert re.search(r'action="/analista/casos/\d+/enviar"', fixed)


def test_review_and_confirm_has_a_change_link_per_fact_that_needs_no_script(sqlite_site):
    ana, t_ana = _client(sqlite_site, "ana")
    sol, _ = _client(sqlite_site, "sol")
    case_id = _open(ana, t_ana)
    ana.post(f"/analista/casos/{case_id}/enviar", data={"csrf_token": t_ana})
    confirm = sol.get(f"/analista/casos/{case_id}/aprobar").text
    facts = re.search(r'<dl class="wb-facts" id="confirm-facts">(.*?)</dl>', confirm, re.S)
    rows = re.findall(r"<div><dt>(.*?)</dt><dd>(.*?)</dd></div>", facts.group(1), re.S)
    assert len(rows) >= 8
    fields = []
    for label, value in rows:
        link = re.search(r'<a href="([^"]+)" class="wb-change" data-field="([a-z_0-9]+)">'
                         r'Cambiar<span class="wb-vh">: ([^<]+)</span></a>', value)
        assert link, (label, value)  # a "Cambiar" per fact, named by its fact for a reader
        href, field, named = link.groups()
        assert unescape(named) == unescape(label)
        assert href == f"/analista/casos/{case_id}?cambiar={field}#f-return-reason"
        fields.append(field)
    assert fields[:3] == ["participant_id", "birth_date", "entry_date"]
    assert fields[-2:] == ["as_of", "rules"]
    assert 'id="change-help"' in confirm
    # followed (a plain link): the return's form, its reason naming the fact
    page = sol.get(f"/analista/casos/{case_id}?cambiar=birth_date").text
    reason = re.search(r'<textarea id="f-return-reason"[^>]*>([^<]*)</textarea>', page)
    assert unescape(reason.group(1)) == "Corregir «Fecha de nacimiento»: "
    en = sol.get(f"/analista/casos/{case_id}?cambiar=birth_date&lang=en").text
    reason = re.search(r'<textarea id="f-return-reason"[^>]*>([^<]*)</textarea>', en)
    assert unescape(reason.group(1)).startswith("Correct “")
    # a name the facts do not have prefills nothing
    page = sol.get(f"/analista/casos/{case_id}?cambiar=nada").text
    assert re.search(r'<textarea id="f-return-reason"[^>]*></textarea>', page)
    # the analyst's page of the same case has no such links (nothing to confirm)
    assert 'class="wb-change"' not in ana.get(f"/analista/casos/{case_id}").text


def test_the_exports_are_a_page_of_their_own_for_whoever_may_export(sqlite_site):
    for who, status in (("aud", 200), ("sol", 200), ("ana", 403)):
        c, _ = _client(sqlite_site, who)
        r = c.get("/analista/auditoria/exportar")
        assert r.status_code == status, who
        if status == 200:
            for kind in ("cases", "events", "summary"):
                for fmt in ("csv", "xlsx"):
                    assert f'href="/analista/auditoria/exportar/{kind}.{fmt}"' in r.text
