"""Check, then approve; the auditor reads words — through the real
application (TestClient) on SQLite and PostgreSQL.

The case page lists the facts relied on in words, as the letter states
them, with the letter's preview one link away; approval is a confirmation
page ("Revise y confirme") whose form alone approves; a supervisor barred
by the maker-checker rule is told why and offered neither button nor
return; the versions list names who approved; warnings that ask for a check
are acknowledged with a note before submission and before approval (the
note chained, stated in the letter, `audit verify` intact); the rules set
is chosen per case. The auditor's page names events in words, folds reads
into a count per case, filters by a list of actions, always shows the
chains' check in its language, and the auditor's queue has only the
auditor's tabs."""

from __future__ import annotations

import re
from datetime import date
from html import unescape

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from sqlalchemy import select

from diferida.cli import main
from diferida.i18n import fmt_date
from diferida.service import workflow
from diferida.service.store import AuditEvent, WorkflowEvent

from .workbench_helpers import APPLICATION, csrf_of, sign_in, workbench_app

# rules §8 example 1, separated in 2020 with the 25 years served to 30 June
# 2013: Act 3-2013 froze accruals on 30 June 2013, and the warning asks to
# check that the service and the compensation stop there (a warning of
# CHECK_WARNINGS; the 25 years fit, so the facts do not contradict it)
CHECKED = {**APPLICATION, "participant_id": "W-0002", "separation_date": "2020-06-30",
           "creditable_service_years": "25"}


def _profiles(store) -> None:
    """Full names and titles where the store keeps them (letters are signed)."""
    setter = getattr(store, "set_profile", None)
    if setter is None:
        return
    for name, full, title in (("ana", "Ana Rivera Soto", "Analista de Beneficios"),
                              ("sol", "Sofía Colón Díaz", "Supervisora de Beneficios"),
                              ("sam", "Samuel Ortiz Vega", "Supervisor de Beneficios")):
        setter(name, full, title)


@pytest.fixture(params=["sqlite", "postgresql"])
def site(request, tmp_path):
    with workbench_app(request.param, tmp_path) as (app, c):
        _profiles(app.state.store)
        yield app


def _user(store, name: str):
    return store.sign_in_record(name)[0]


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


def _state(html: str) -> str:
    return re.search(r'id="case-state" data-state="([a-z]+)"', html).group(1)


def _section(html: str, ident: str) -> str:
    start = html.index(f'id="{ident}"')
    return html[start:html.index("</section>", start)]


# -- check, then approve ------------------------------------------------------------


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_case_page_lists_the_facts_relied_on_in_words_and_links_the_letter(site, lang):
    ana, t = _client(site, "ana", lang)
    case_id = _open(ana, t)
    page = ana.get(f"/analista/casos/{case_id}?lang={lang}").text
    facts = _text(_section(page, "relied-title"))
    said = [fmt_date(date(1970, 5, 10), lang), fmt_date(date(1988, 7, 1), lang),
            fmt_date(date(2010, 6, 30), lang), {"es": "22 años", "en": "22 years"}[lang],
            "$30,000.00", "general"]
    assert said[0] in ("10 de mayo de 1970", "May 10, 1970", "10 May 1970")
    for words in said:
        assert words.lower() in facts.lower(), (words, facts)
    # the 19.6 condition and the refund are said, not left as codes
    assert "19.6" in facts and "false" not in facts and "1970-05-10" not in facts
    # the same rows the letter prints
    letter = _text(ana.get(f"/analista/casos/{case_id}/carta?lang={lang}").text)
    for words in said:
        assert words.lower() in letter.lower()
    # the letter's preview one link away
    assert f'href="/analista/casos/{case_id}/carta' in page


def test_approval_is_a_confirmation_page_and_only_its_form_approves(site):
    store = site.state.store
    ana, t_ana = _client(site, "ana")
    sol, t_sol = _client(site, "sol")
    case_id = _open(ana, t_ana)
    assert ana.post(f"/analista/casos/{case_id}/enviar", data={"csrf_token": t_ana},
                    follow_redirects=False).status_code == 303
    page = sol.get(f"/analista/casos/{case_id}").text
    # the case page's button leads to the confirmation; no form on it approves
    assert re.search(rf'<a [^>]*href="/analista/casos/{case_id}/aprobar"[^>]*id="approve"',
                     page)
    assert f'action="/analista/casos/{case_id}/aprobar"' not in page
    confirm = sol.get(f"/analista/casos/{case_id}/aprobar")
    assert confirm.status_code == 200
    said = _text(confirm.text)
    assert "Revise y confirme" in said
    assert "10 de mayo de 1970" in said and "$30,000.00" in said  # the facts, in words
    assert 'id="confirm-decision"' in confirm.text and 'id="irreversible"' in confirm.text
    assert f'href="/analista/casos/{case_id}/carta"' in confirm.text
    assert 'name="confirmado" value="1"' in confirm.text
    # a post without the confirmation page's field approves nothing: it is sent there
    r = sol.post(f"/analista/casos/{case_id}/aprobar", data={"csrf_token": t_sol},
                 follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == f"/analista/casos/{case_id}/aprobar"
    assert workflow.view(store, _user(store, "sol"), case_id).state == "submitted"
    r = sol.post(f"/analista/casos/{case_id}/aprobar",
                 data={"csrf_token": t_sol, "confirmado": "1"}, follow_redirects=False)
    assert r.status_code == 303, _text(r.text)[:800]
    assert _state(sol.get(r.headers["location"]).text) == "approved"
    en = sol.get(f"/analista/casos/{case_id}/aprobar?lang=en")  # approved: nothing to confirm
    assert en.status_code == 403


def test_a_supervisor_on_their_own_case_is_told_why_and_offered_no_button(site):
    store = site.state.store
    sol, t_sol = _client(site, "sol")
    case_id = _open(sol, t_sol)
    sol.post(f"/analista/casos/{case_id}/enviar", data={"csrf_token": t_sol})
    page = sol.get(f"/analista/casos/{case_id}").text
    assert _state(page) == "submitted"
    assert 'id="approve"' not in page and "/devolver" not in page
    why = _text(re.search(r'<p class="wb-notice" id="own-case">(.*?)</p>', page, re.S).group(1))
    assert "escribió la versión 1" in why and "lo envió a aprobación" in why
    assert "otro supervisor" in why
    en = _text(sol.get(f"/analista/casos/{case_id}?lang=en").text)
    assert "wrote version 1" in en and "submitted it for approval" in en
    # the confirmation page is not theirs either, and a post is refused as before
    r = sol.get(f"/analista/casos/{case_id}/aprobar")
    assert r.status_code == 403 and "escribió la versión 1" in _text(r.text)
    assert 'id="confirm-approve"' not in r.text
    r = sol.post(f"/analista/casos/{case_id}/aprobar",
                 data={"csrf_token": t_sol, "confirmado": "1"})
    assert r.status_code == 403
    assert workflow.view(store, _user(store, "sol"), case_id).state == "submitted"
    # another supervisor sees the buttons
    sam, _ = _client(site, "sam")
    other = sam.get(f"/analista/casos/{case_id}").text
    assert 'id="approve"' in other and "/devolver" in other and 'id="own-case"' not in other


def test_the_versions_list_names_who_approved(site):
    store = site.state.store
    ana, t_ana = _client(site, "ana")
    sol, t_sol = _client(site, "sol")
    case_id = _open(ana, t_ana)
    ana.post(f"/analista/casos/{case_id}/enviar", data={"csrf_token": t_ana})
    sol.post(f"/analista/casos/{case_id}/aprobar", data={"csrf_token": t_sol, "confirmado": "1"})
    page = ana.get(f"/analista/casos/{case_id}").text
    row = _text(re.search(r'<ol class="wb-versions">(.*?)</ol>', page, re.S).group(1))
    with store.reading() as session:
        names = workflow.people(session, [_user(store, n).id for n in ("ana", "sol")])
    approver, author = names[_user(store, "sol").id], names[_user(store, "ana").id]
    assert f"aprobada por {approver}" in row, row
    assert f"por {author}" in row  # who wrote it, said apart from who approved it


# -- warnings that ask for a check --------------------------------------------------


def test_warnings_asking_for_a_check_need_a_note_before_submission_and_approval(site):
    store = site.state.store
    ana, t_ana = _client(site, "ana")
    sol, t_sol = _client(site, "sol")
    case_id = _open(ana, t_ana, CHECKED)
    page = ana.get(f"/analista/casos/{case_id}").text
    assert 'id="f-acknowledgement"' in page
    # refused without a note, said by the field; nothing moves
    r = ana.post(f"/analista/casos/{case_id}/enviar", data={"csrf_token": t_ana,
                                                            "acknowledgement": "  "})
    assert r.status_code == 422 and 'id="e-acknowledgement"' in r.text
    assert "30 de junio de 2013" in _text(r.text)
    assert _state(r.text) == "draft"
    note_ana = "Certificación de servicios del 30/06/2013 revisada: 25 años hasta esa fecha"
    r = ana.post(f"/analista/casos/{case_id}/enviar",
                 data={"csrf_token": t_ana, "acknowledgement": note_ana},
                 follow_redirects=False)
    assert r.status_code == 303
    # the supervisor: the confirmation page asks again, and refuses without a note
    confirm = sol.get(f"/analista/casos/{case_id}/aprobar").text
    assert 'id="f-acknowledgement"' in confirm and note_ana in unescape(confirm)
    r = sol.post(f"/analista/casos/{case_id}/aprobar",
                 data={"csrf_token": t_sol, "confirmado": "1"})
    assert r.status_code == 422 and 'id="e-acknowledgement"' in r.text
    assert "Revise y confirme" in _text(r.text)
    assert workflow.view(store, _user(store, "sol"), case_id).state == "submitted"
    note_sol = "Revisé la certificación con la nota de la analista"
    r = sol.post(f"/analista/casos/{case_id}/aprobar",
                 data={"csrf_token": t_sol, "confirmado": "1", "acknowledgement": note_sol},
                 follow_redirects=False)
    assert r.status_code == 303, _text(r.text)[:800]
    # in the chain: two acknowledged events with their notes, before each action
    with store.reading() as session:
        events = session.execute(select(WorkflowEvent.action, WorkflowEvent.user_name,
                                        WorkflowEvent.reason)
                                 .where(WorkflowEvent.case_id == case_id)
                                 .order_by(WorkflowEvent.id)).all()
        details = session.scalars(select(AuditEvent.detail).where(
            AuditEvent.case_id == case_id,
            AuditEvent.action.in_(("workflow.submit", "workflow.approve")),
            AuditEvent.status_code == 200)).all()
    assert [a for a, _, _ in events] == ["created", "acknowledged", "submitted",
                                         "acknowledged", "approved", "letter_stored"]
    assert events[1][1:] == ("ana", note_ana) and events[3][1:] == ("sol", note_sol)
    # the trail names the warnings by code; the notes stay in the chained events
    assert all("acknowledged warnings: act_3_2013_accruals_frozen" in d for d in details)
    assert not any(note_ana in d or note_sol in d for d in details)
    v = workflow.view(store, _user(store, "sol"), case_id)
    assert [a.note for a in v.acknowledgements] == [note_ana, note_sol]
    assert v.to_dict()["acknowledgements"][0]["warnings"] == ["act_3_2013_accruals_frozen"]
    # the case's timeline names the checks in words, with their notes
    timeline = _text(re.search(r'<ol class="wb-timeline" id="timeline">(.*?)</ol>',
                               sol.get(f"/analista/casos/{case_id}").text, re.S).group(1))
    assert timeline.count("Advertencias verificadas") == 2 and note_sol in timeline
    assert "acknowledged" not in timeline
    # the letter quotes each note under its warning, with who wrote it
    with store.reading() as session:
        names = workflow.people(session, [_user(store, n).id for n in ("ana", "sol")])
    letter = _text(sol.get(f"/analista/casos/{case_id}/carta").text)
    for name in names.values():
        assert f"Verificado por {name} el" in letter
    assert f"«{note_sol}»" in letter
    # the chains are intact
    r = CliRunner().invoke(main, ["audit", "verify", "--database-url", store.url],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output


def test_the_api_takes_the_note_and_refuses_without_it(site):
    store = site.state.store
    ana = _user(store, "ana")
    v = workflow.open_draft(store, ana, CHECKED, lang="en")
    assert v.checks == ("act_3_2013_accruals_frozen",)
    with pytest.raises(workflow.Refused) as refused:
        workflow.submit(store, ana, v.case_id, lang="en")
    assert refused.value.problems[0]["field"] == "acknowledgement"
    assert "write a note" in refused.value.problems[0]["message"]
    note = "Checked the service certificate"
    done = workflow.submit(store, ana, v.case_id, acknowledgement=note, lang="en")
    assert done.state == "submitted" and done.acknowledgements[0].note == note
    # a case without such a warning needs no note
    plain = workflow.open_draft(store, ana, APPLICATION, lang="en")
    assert plain.checks == () and workflow.submit(store, ana, plain.case_id).state == "submitted"


# -- the rules set, chosen per case -------------------------------------------------


def test_the_rules_set_is_chosen_per_case_stored_and_named(site):
    store = site.state.store
    ana, t = _client(site, "ana")
    form = ana.get("/analista/nuevo").text
    # a choice each, by the rules' own title in words (not the code), the
    # regulation as written first and chosen
    choices = re.findall(r'<input type="radio" id="f-rules[^"]*" name="rules" value="([^"]+)"'
                         r'( checked)?>\s*<label[^>]*>(.*?)</label>', form, re.S)
    values = [v for v, _, _ in choices]
    assert values[0] == "article19" and "article19-strict-19_4" in values
    assert [v for v, checked, _ in choices if checked] == ["article19"]
    assert not any(workflow_rules_illustrative(v) for v in values)
    from diferida.rules import load_rules

    for value, _, label in choices:
        said = _text(label).strip()
        assert said.startswith(load_rules(value).title) and f"({value})" not in said
    default = _open(ana, t)
    assert workflow.view(store, _user(store, "ana"), default).rules_name == "article19"
    strict = _open(ana, t, {**APPLICATION, "participant_id": "W-0009",
                            "rules": "article19-strict-19_4"})
    v = workflow.view(store, _user(store, "ana"), strict)
    assert v.rules_name == "article19-strict-19_4" == v.result["rules_name"]
    page = ana.get(f"/analista/casos/{strict}").text
    shown = _text(re.search(r'<dd id="rules-set"[^>]*>(.*?)</dd>', page, re.S).group(1)).strip()
    assert shown == load_rules("article19-strict-19_4").title  # its title, not its code
    # the correction keeps it chosen
    again = ana.get(f"/analista/casos/{strict}/corregir").text
    assert re.search(r'name="rules" value="article19-strict-19_4" checked', again)
    # the letter names the rules set
    letter = ana.get(f"/analista/casos/{strict}/carta").text
    assert "19.4" in _text(letter)
    # a rules set that does not exist is refused, naming the field
    r = ana.post("/analista/nuevo", data={**APPLICATION, "participant_id": "W-0010",
                                          "rules": "article99", "action": "save",
                                          "csrf_token": t})
    assert r.status_code == 422 and 'id="e-rules"' in r.text


def test_an_illustrative_reform_decides_no_case(site):
    """A letter is issued under law: the reform the calculator compares with
    is refused as a case's rules set, naming the field, in words."""
    store = site.state.store
    with pytest.raises(workflow.Refused) as refused:
        workflow.open_draft(store, _user(store, "ana"),
                            {**APPLICATION, "rules": "reform-19_2-age-67"}, lang="es")
    [problem] = refused.value.problems
    assert (problem["field"], problem["code"]) == ("rules", "illustrative_rules")
    assert "reforma ilustrativa" in problem["message"] and "article19" in problem["message"]
    assert workflow.search(store, _user(store, "ana"), participant_id="W-0001").total == 0


def workflow_rules_illustrative(name: str) -> bool:
    from diferida.rules import illustrative

    return illustrative(name)


# -- the auditor reads words ----------------------------------------------------------


def _audit_rows(html: str) -> list[str]:
    return [_text(r) for r in re.findall(r"<tr><td>.*?</tr>", html, re.S)]


def test_the_auditor_reads_events_in_words_with_reads_folded(site):
    ana, t_ana = _client(site, "ana")
    case_id = _open(ana, t_ana)
    for _ in range(4):
        ana.get(f"/analista/casos/{case_id}")  # each a read (and its history)
    aud, t_aud = _client(site, "aud")
    page = aud.post("/analista/auditoria", data={"csrf_token": t_aud})
    rows = _audit_rows(page.text)
    said = " ".join(rows)
    assert "Caso abierto" in said and "workflow.open" not in said
    assert "Caso consultado" not in said  # folded
    assert "Hecho" in said and "{}" not in said
    assert not re.search(r"\b20[01]\b", " ".join(r.split("AST", 1)[-1] for r in rows))
    folded = _text(re.search(r'<div class="wb-notice" id="reads-folded">(.*?)</div>',
                             page.text, re.S).group(1))
    assert re.search(rf"Caso {case_id}\s*: consultado \d+ veces", folded), folded
    # asked for, the reads are listed
    shown = aud.post("/analista/auditoria", data={"csrf_token": t_aud, "consultas": "1"})
    assert any("Caso consultado" in r for r in _audit_rows(shown.text))
    assert 'id="reads-folded"' not in shown.text
    # in English too
    en = _text(aud.post("/analista/auditoria", data={"csrf_token": t_aud, "lang": "en"}).text)
    assert "Case opened" in en and "Show reads" in en


def test_the_action_filter_is_a_list_and_the_check_always_shows_in_words(site):
    ana, t_ana = _client(site, "ana")
    sol, t_sol = _client(site, "sol")
    case_id = _open(ana, t_ana)
    ana.post(f"/analista/casos/{case_id}/enviar", data={"csrf_token": t_ana})
    sol.post(f"/analista/casos/{case_id}/aprobar", data={"csrf_token": t_sol, "confirmado": "1"})
    aud, t_aud = _client(site, "aud")
    page = aud.get("/analista/auditoria").text
    select_ = re.search(r'<select id="f-accion" name="accion".*?</select>', page, re.S).group(0)
    assert '<option value="workflow.approve">Aprobado y carta emitida</option>' in select_
    assert '<input id="f-accion"' not in page
    verified = aud.post("/analista/auditoria", data={"csrf_token": t_aud, "verificar": "1"})
    chains = _text(re.search(r'<ul class="wb-chains" id="verify-chains">(.*?)</ul>',
                             verified.text, re.S).group(1))
    assert "Versiones de los casos: 1 filas, cadena íntegra." in chains
    assert "chain intact" not in chains and "rows" not in chains
    assert re.search(r"cases:1:[0-9a-f]{64}", chains)
    # a filter set: the verification still shown, in words, with the anchors
    filtered = aud.post("/analista/auditoria", data={"csrf_token": t_aud,
                                                     "accion": "workflow.approve"})
    assert 'id="verify-last"' in filtered.text and 'id="verify-chains"' in filtered.text
    assert "cadena íntegra" in _text(filtered.text)
    rows = _audit_rows(filtered.text)
    assert rows and all("Aprobado y carta emitida" in r for r in rows)
    assert re.search(r'<option value="workflow.approve" selected>', filtered.text)
    en = aud.post("/analista/auditoria", data={"csrf_token": t_aud, "lang": "en",
                                               "accion": "workflow.approve"})
    assert "Case versions: 1 rows, chain intact." in _text(en.text)
    # the codes stay in the API
    api = TestClient(site)
    token = site.state.store.add_user("aud-api", "auditor")[1]
    r = api.get("/api/v1/workbench/audit?action=workflow.approve",
                headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200
    assert {i["action"] for i in r.json()["items"]} == {"workflow.approve"}


def test_the_auditor_sees_only_the_auditors_tabs(site):
    aud, _ = _client(site, "aud")
    page = aud.get("/analista").text
    tabs = re.search(r'<ul class="wb-tabs">(.*?)</ul>', page, re.S).group(1)
    assert "lista=issued" in tabs and "lista=awaiting" in tabs
    assert "lista=drafts" not in tabs and "lista=returned" not in tabs
    # an auditor approves nothing: what waits is a supervisor's, said so; the
    # trail and the exports are tabs of theirs
    said = _text(tabs)
    assert "En espera de aprobación" in said and "de mi aprobación" not in said
    assert 'href="/analista/auditoria"' in tabs and 'href="/analista/auditoria/exportar"' in tabs
    awaiting = aud.get("/analista?lista=awaiting").text
    assert "de mi aprobación" not in _text(awaiting)
    for path in ("/analista/auditoria", "/analista/auditoria/exportar"):
        shown = aud.get(path).text
        assert re.search(rf'href="{path}" aria-current="page"', shown), path
    # asked for an analyst's queue, the auditor's default one is shown
    r = aud.get("/analista?lista=drafts").text
    assert re.search(r'href="/analista\?lista=issued" aria-current="page"', r)
    ana, _ = _client(site, "ana")
    assert "lista=drafts" in ana.get("/analista").text
