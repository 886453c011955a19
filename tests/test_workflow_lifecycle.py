"""The workbench's service layer on SQLite and PostgreSQL: the life of a case
from an application to an issued letter, the four-eyes rule, the roles, the
queues, imports and exports, and `audit verify` over the workflow."""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Iterator
from datetime import date

import pytest

import diferida
from diferida.service import workflow as wf
from diferida.service.store import AuditQuery, Store
from diferida.service.testing import database_for_tests

from .workbench_helpers import SIGNERS, signer

AS_OF = date(2026, 11, 29)
APPLICATION = {"participant_id": "P-1", "birth_date": "1970-05-10", "entry_date": "1988-07-01",
               "separation_date": "2010-06-30", "creditable_service_years": "22",
               "average_compensation": "30000.00", "group": "general",
               "refund_requested": "false", "name": "Juana del Pueblo",
               "letter_lang": "es", "address": "Calle Luna 12\nSan Juan, PR 00901",
               "application_date": "2026-10-01", "note": "entregó certificado"}


class Office:
    def __init__(self, store: Store):
        self.store = store
        self.ana = store.add_user("ana", "analyst", **signer("ana"))[0]
        self.beto = store.add_user("beto", "analyst", **signer("beto"))[0]
        self.sofia = store.add_user("sofia", "supervisor", **signer("sofia"))[0]
        self.pedro = store.add_user("pedro", "supervisor", **signer("pedro"))[0]
        self.ines = store.add_user("ines", "auditor")[0]


@pytest.fixture(params=["sqlite", "postgresql"])
def office(request, tmp_path) -> Iterator[Office]:
    with database_for_tests(request.param, tmp_path) as url:
        store = Store(url)
        store.upgrade()
        yield Office(store)
        store.dispose()


def refused(code: str, fn, *args, **kwargs) -> wf.Refused:
    with pytest.raises(wf.Refused) as info:
        fn(*args, **kwargs)
    assert info.value.code == code, (info.value.code, info.value.values)
    assert info.value.message("es") and info.value.message("en")
    return info.value


def events(store: Store, action: str) -> list:
    return store.audit_events(AuditQuery(action=action, limit=1000))


def test_a_case_goes_from_application_to_issued_letter_and_is_corrected(office):
    s, o = office.store, office
    draft = wf.open_draft(s, o.ana, APPLICATION, lang="es", as_of=AS_OF)
    engine = diferida.evaluate({k: v for k, v in APPLICATION.items()
                                if k not in wf.APPLICATION_FIELDS}, as_of=AS_OF, lang="es")
    assert draft.result == engine.to_dict()
    assert (draft.version, draft.state, draft.number, draft.name) == (
        1, "draft", draft.case_id, "Juana del Pueblo")
    assert draft.address == "Calle Luna 12\nSan Juan, PR 00901"
    assert draft.application_date == date(2026, 10, 1)
    assert draft.can == {"correct", "submit"}
    assert wf.submit(s, o.ana, draft.case_id).state == "submitted"
    # returned with a reason, corrected as a new version naming the one it corrects
    returned = wf.return_case(s, o.sofia, draft.case_id, reason="Falta el certificado")
    assert (returned.state, returned.return_reason, returned.returned_by) == (
        "returned", "Falta el certificado", SIGNERS["sofia"][0])
    assert [c.case_id for c in wf.queue(s, o.ana, "returned").items] == [draft.case_id]
    v2 = wf.correct(s, o.ana, draft.case_id, {**APPLICATION, "creditable_service_years": "23"},
                    reason="Certificado de servicio recibido", lang="es", as_of=AS_OF)
    assert (v2.version, v2.state, v2.corrects, v2.corrects_version, v2.number) == (
        2, "draft", draft.case_id, 1, draft.case_id)
    assert v2.correction_reason == "Certificado de servicio recibido"
    assert wf.view(s, o.ana, draft.case_id).current is False
    # 23 years of service in a span of 22: the warning asks for a check, noted
    wf.submit(s, o.ana, v2.case_id, acknowledgement="Servicios previos acreditados: verificado")
    # the four-eyes rule does not stop a supervisor who did not touch the case
    approved = wf.approve(s, o.sofia, v2.case_id, acknowledgement="Certificado revisado")
    assert (approved.state, approved.approved_by) == ("approved", SIGNERS["sofia"][0])
    pdf = wf.letter(s, o.ines, v2.case_id)
    assert pdf.startswith(b"%PDF")
    assert hashlib.sha256(pdf).hexdigest() == approved.letter_sha256
    # later prints are the issued bytes, in the language it was issued in; in
    # another it is refused in words (docs/workbench.md)
    assert wf.letter(s, o.ana, v2.case_id, lang="es") == pdf
    assert refused("invalid", wf.letter, s, o.ana, v2.case_id, lang="en").problems[0][
        "field"] == "lang"
    assert wf.letter(s, o.ana, draft.case_id, version=2) == pdf
    # an approved version never changes
    refused("wrong_state", wf.approve, s, o.pedro, v2.case_id)
    refused("wrong_state", wf.return_case, s, o.pedro, v2.case_id, reason="x")
    refused("wrong_state", wf.submit, s, o.ana, v2.case_id)
    # a correction of an issued version is a new draft needing approval again
    v3 = wf.correct(s, o.beto, v2.case_id, {**APPLICATION, "creditable_service_years": "23",
                                            "address": "Calle Sol 3\nPonce, PR 00716"},
                    reason="Cambio de dirección", lang="es", as_of=AS_OF)
    assert (v3.version, v3.state, v3.letter_sha256, v3.corrects) == (
        3, "draft", None, v2.case_id)
    assert wf.view(s, o.ines, v2.case_id).state == "approved"
    assert wf.letter(s, o.ines, v2.case_id) == pdf
    wf.submit(s, o.beto, v3.case_id, acknowledgement="Servicios previos: verificado")
    wf.approve(s, o.pedro, v3.case_id, acknowledgement="Verificado")
    h = wf.history(s, o.ines, draft.case_id)
    assert [v.version for v in h.versions] == [1, 2, 3]
    assert h.current.case_id == v3.case_id and h.current.state == "approved"
    n = {k: v[0] for k, v in SIGNERS.items()}  # as pages and letters name them
    assert [(e.action, e.version, e.user) for e in h.events] == [
        ("created", 1, n["ana"]), ("submitted", 1, n["ana"]), ("returned", 1, n["sofia"]),
        ("corrected", 2, n["ana"]), ("acknowledged", 2, n["ana"]), ("submitted", 2, n["ana"]),
        ("acknowledged", 2, n["sofia"]), ("approved", 2, n["sofia"]),
        ("letter_stored", 2, n["sofia"]), ("corrected", 3, n["beto"]),
        ("acknowledged", 3, n["beto"]), ("submitted", 3, n["beto"]),
        ("acknowledged", 3, n["pedro"]), ("approved", 3, n["pedro"]),
        ("letter_stored", 3, n["pedro"])]
    assert all(e.at.utcoffset().total_seconds() == 0 for e in h.events)
    words = {(c.from_version, c.to_version): c.lines for c in h.changes}
    assert any("«22» → «23»" in line for line in words[(1, 2)])
    assert any("Pensión anual" in line for line in words[(1, 2)])
    assert any("Calle Sol 3" in line for line in words[(2, 3)])
    report = s.verify()
    assert report.intact, report.lines()


def test_a_supervisor_never_approves_a_case_they_prepared_changed_or_submitted(office):
    s, o = office.store, office
    own = wf.open_draft(s, o.sofia, APPLICATION, lang="es", as_of=AS_OF)
    wf.submit(s, o.sofia, own.case_id)
    assert "approve" not in wf.view(s, o.sofia, own.case_id).can
    r = refused("own_case", wf.approve, s, o.sofia, own.case_id)
    assert r.status == 403 and "otro supervisor" in r.message("es").lower()
    # changed last by another supervisor: neither may approve this version
    wf.return_case(s, o.pedro, own.case_id, reason="Revise el grupo")
    v2 = wf.correct(s, o.pedro, own.case_id, APPLICATION, reason="Grupo revisado", lang="es",
                    as_of=AS_OF)
    wf.submit(s, o.pedro, v2.case_id)
    refused("own_case", wf.approve, s, o.pedro, v2.case_id)  # changed it last
    refused("own_case", wf.approve, s, o.sofia, v2.case_id)  # prepared the case
    # submitted someone else's draft: may not approve it either
    other = wf.open_draft(s, o.ana, {**APPLICATION, "participant_id": "P-2"}, lang="es",
                          as_of=AS_OF)
    wf.submit(s, o.pedro, other.case_id)
    refused("own_case", wf.approve, s, o.pedro, other.case_id)
    assert wf.approve(s, o.sofia, other.case_id).state == "approved"
    refusals = [e for e in events(s, "workflow.approve") if e.status_code == 403]
    assert [(e.user_name, e.case_id, e.detail) for e in refusals] == [
        ("sofia", own.case_id, "refused: own_case"), ("pedro", v2.case_id, "refused: own_case"),
        ("sofia", v2.case_id, "refused: own_case"),
        ("pedro", other.case_id, "refused: own_case")]
    assert wf.view(s, o.ines, v2.case_id).state == "submitted"
    assert s.verify().intact


def test_each_role_may_do_only_its_own_actions_and_every_refusal_is_recorded(office):
    s, o = office.store, office
    case = wf.open_draft(s, o.ana, APPLICATION, lang="en", as_of=AS_OF)
    before = len(s.audit_events(AuditQuery(limit=10000)))
    attempts = [
        (o.ines, wf.open_draft, (APPLICATION,), {"lang": "en"}),
        (o.ines, wf.correct, (case.case_id, APPLICATION), {"reason": "x", "lang": "en"}),
        (o.ines, wf.submit, (case.case_id,), {}),
        (o.ines, wf.approve, (case.case_id,), {}),
        (o.ines, wf.return_case, (case.case_id,), {"reason": "x"}),
        (o.ines, wf.import_applications, (b"participant_id\nX\n", "a.csv"), {"lang": "en"}),
        (o.ana, wf.approve, (case.case_id,), {}),
        (o.ana, wf.return_case, (case.case_id,), {"reason": "x"}),
        (o.ana, wf.audit_view, (), {}),
        (o.ana, wf.export, ("cases", "csv"), {}),
        (o.sofia, wf.audit_view, (), {}),
    ]
    for user, fn, args, kwargs in attempts:
        r = refused("not_allowed", fn, s, user, *args, **kwargs)
        assert r.status == 403 and user.role in r.message("en")
    after = s.audit_events(AuditQuery(limit=10000))[before:]
    assert [(e.user_name, e.status_code) for e in after] == [
        (u.name, 403) for u, *_ in attempts]
    assert wf.view(s, o.ines, case.case_id).state == "draft"
    assert wf.history(s, o.ines, case.case_id).events[-1].action == "created"


def test_refusals_name_what_is_wrong_and_change_nothing(office):
    s, o = office.store, office
    bad = refused("invalid", wf.open_draft, s, o.ana,
                  {**APPLICATION, "birth_date": "1970-02-30", "application_date": "2030-01-01",
                   "name": "x" * 201}, lang="es", as_of=AS_OF)
    assert {p["field"] for p in bad.problems} == {"birth_date", "application_date", "name"}
    assert all(p["message"] for p in bad.problems)
    case = wf.open_draft(s, o.ana, APPLICATION, lang="es", as_of=AS_OF)
    refused("exists", wf.open_draft, s, o.beto, APPLICATION, lang="es", as_of=AS_OF)
    refused("invalid", wf.correct, s, o.ana, case.case_id, APPLICATION, reason="  ", lang="es")
    refused("not_found", wf.submit, s, o.ana, 999)
    refused("not_found", wf.view, s, o.ines, 999)
    wf.submit(s, o.ana, case.case_id)
    refused("submitted", wf.correct, s, o.ana, case.case_id, APPLICATION, reason="r",
            lang="es", as_of=AS_OF)
    refused("invalid", wf.return_case, s, o.sofia, case.case_id, reason="")
    wf.return_case(s, o.sofia, case.case_id, reason="Revise")
    v2 = wf.correct(s, o.ana, case.case_id, APPLICATION, reason="Revisado", lang="es",
                    as_of=AS_OF)
    # the superseded version can no longer be acted on
    refused("stale", wf.submit, s, o.ana, case.case_id)
    refused("stale", wf.correct, s, o.ana, case.case_id, APPLICATION, reason="r", lang="es",
            as_of=AS_OF)
    assert wf.view(s, o.ana, v2.case_id).state == "draft"
    detail = [e.detail for e in events(s, "workflow.open") if e.status_code == 422]
    assert detail and "birth_date:" in detail[0] and "1970-02-30" not in detail[0]
    assert s.verify().intact


def test_refusals_and_letters_name_the_case_by_its_number_and_version(office):
    s, o = office.store, office
    wf.open_draft(s, o.ana, {**APPLICATION, "participant_id": "P-0"}, lang="es", as_of=AS_OF)
    case = wf.open_draft(s, o.sofia, APPLICATION, lang="es", as_of=AS_OF)
    number = case.number
    wf.submit(s, o.sofia, case.case_id)
    r = refused("submitted", wf.correct, s, o.ana, case.case_id, APPLICATION, reason="r",
                lang="es", as_of=AS_OF)
    assert f"El caso {number} está enviado" in r.message("es")
    wf.return_case(s, o.pedro, case.case_id, reason="Revise")
    v2 = wf.correct(s, o.sofia, case.case_id, APPLICATION, reason="Revisado", lang="es",
                    as_of=AS_OF)
    assert v2.case_id != number and v2.number == number  # a version's id is not the case's
    r = refused("stale", wf.submit, s, o.ana, case.case_id)
    assert r.message("es").startswith(f"La versión 1 del caso {number} ya fue sustituida; "
                                      "la versión vigente es la 2.")
    assert r.message("en").startswith(f"Version 1 of case {number} has been superseded; "
                                      "the current version is 2.")
    wf.submit(s, o.sofia, v2.case_id)
    r = refused("own_case", wf.approve, s, o.sofia, v2.case_id)
    assert r.message("es").startswith(f"No puede aprobar el caso {number} (versión 2):")
    assert r.message("en").startswith(f"You cannot approve case {number} (version 2):")
    r = refused("wrong_state", wf.submit, s, o.sofia, v2.case_id)
    assert r.message("es").startswith(f"El caso {number} (versión 2) está «")
    r = refused("exists", wf.open_draft, s, o.beto, APPLICATION, lang="es", as_of=AS_OF)
    assert f"ya tiene el caso {number};" in r.message("es")
    # the draft letter and the issued one: the same case number, the version
    draft = " ".join(wf.letter_html(s, o.ines, v2.case_id, lang="es").split())
    assert f"Caso {number} · versión 2" in draft and f"Caso {v2.case_id} " not in draft
    wf.approve(s, o.pedro, v2.case_id)
    issued = " ".join(wf.letter_html(s, o.ines, number, 2, lang="en").split())
    assert f"Caso {number} · versión 2" in issued and "BORRADOR" not in issued
    # signed with the approver's full name and title, in the letter's own language
    assert SIGNERS["pedro"][0] in issued and SIGNERS["pedro"][1] in issued


def test_the_queues_list_each_users_work_in_pages(office):
    s, o = office.store, office
    ids = []
    for n in range(7):
        ids.append(wf.open_draft(s, o.ana if n % 2 == 0 else o.sofia,
                                 {**APPLICATION, "participant_id": f"Q-{n}"}, lang="es",
                                 as_of=AS_OF).case_id)
    for i in ids[:4]:
        wf.submit(s, o.ana if ids.index(i) % 2 == 0 else o.sofia, i)
    wf.return_case(s, o.pedro, ids[0], reason="Revise")
    wf.approve(s, o.pedro, ids[1])
    assert [c.case_id for c in wf.queue(s, o.ana, "drafts").items] == [ids[6], ids[4]]
    assert [c.case_id for c in wf.queue(s, o.sofia, "drafts").items] == [ids[5]]
    assert [c.case_id for c in wf.queue(s, o.ana, "returned").items] == [ids[0]]
    # sofia prepared ids[3]: it is not hers to approve
    assert [c.case_id for c in wf.queue(s, o.sofia, "awaiting").items] == [ids[2]]
    assert [c.case_id for c in wf.queue(s, o.pedro, "awaiting").items] == [ids[2], ids[3]]
    assert [c.case_id for c in wf.queue(s, o.ines, "issued").items] == [ids[1]]
    first = wf.queue(s, o.ana, "drafts", per_page=1)
    second = wf.queue(s, o.ana, "drafts", page=2, per_page=1)
    assert (first.total, first.pages, first.has_next, second.has_next) == (2, 2, True, False)
    assert [c.case_id for c in first.items + second.items] == [ids[6], ids[4]]
    found = wf.search(s, o.ines, participant_id=" Q-3 ")
    assert [(c.case_id, c.name) for c in found.items] == [(ids[3], "Juana del Pueblo")]
    assert [c.case_id for c in wf.search(s, o.ana, case_id=ids[5]).items] == [ids[5]]
    assert wf.search(s, o.ana, participant_id="nadie").total == 0
    refused("invalid", wf.search, s, o.ana)
    refused("invalid", wf.queue, s, o.ana, "mine")


def test_applications_are_imported_with_every_rejected_row_named(office):
    s, o = office.store, office
    head = ("participant_id,birth_date,entry_date,separation_date,creditable_service_years,"
            "average_compensation,group,refund_requested,name,address,application_date\n")
    rows = ["I-1,1970-05-10,1988-07-01,2010-06-30,22,30000.00,general,false,Ana Uno,"
            "\"Calle 1\nPonce\",2026-10-01",
            "I-2,1970-02-30,1988-07-01,2010-06-30,22,30000.00,general,false,Bo Dos,,2026-10-01",
            "I-1,1970-05-10,1988-07-01,2010-06-30,22,30000.00,general,false,Otra,,",
            "I-3,1971-05-10,1989-07-01,2011-06-30,21,31000.00,general,false,,,2026-13-01",
            "I-4,1972-05-10,1990-07-01,2012-06-30,20,32000.00,general,false,Cu Cuatro,,"]
    result = wf.import_applications(s, o.ana, (head + "\n".join(rows) + "\n").encode(),
                                    "solicitudes.csv", lang="es", as_of=AS_OF)
    assert result.rows_in == 5 == len(result.created) + result.rows_rejected
    assert [c.participant_id for c in result.created] == ["I-1", "I-4"]
    # rows as a person opening the file counts them (I-1's address spans two lines)
    assert [(r.row, r.participant_id, r.field, r.code) for r in result.rejected] == [
        (4, "I-2", "birth_date", "not_a_date"),
        (5, "I-1", "participant_id", "duplicate_in_file"),
        (6, "I-3", "application_date", "not_a_date")]
    assert all(r.message for r in result.rejected)
    stored = wf.view(s, o.ana, result.created[0].case_id)
    assert (stored.address, stored.state) == ("Calle 1\nPonce", "draft")
    # a participant already in the store is named too
    again = wf.import_applications(s, o.ana, (head + rows[4] + "\n").encode(), "b.csv",
                                   lang="en", as_of=AS_OF)
    assert [(r.row, r.code) for r in again.rejected] == [(2, "exists")]
    refused("invalid", wf.import_applications, s, o.ana, b"", "empty.csv", lang="es")


def test_the_export_counts_cases_by_state_and_the_days_to_approval(office):
    s, o = office.store, office
    a = wf.open_draft(s, o.ana, APPLICATION, lang="es", as_of=AS_OF)
    b = wf.open_draft(s, o.ana, {**APPLICATION, "participant_id": "P-2",
                                 "application_date": None}, lang="es", as_of=AS_OF)
    wf.submit(s, o.ana, a.case_id)
    approved = wf.approve(s, o.sofia, a.case_id)
    cases = list(csv.DictReader(io.StringIO(wf.export(s, o.ines, "cases", "csv").decode())))
    assert [(r["case_id"], r["state"], r["current"]) for r in cases] == [
        (str(a.case_id), "approved", "true"), (str(b.case_id), "draft", "true")]
    assert cases[0]["days_to_approval"] == str(_days(approved.approved_at))
    assert cases[1]["days_to_approval"] == ""
    assert "Juana" not in wf.export(s, o.ines, "cases", "csv").decode()
    summary = {(r["measure"], r["key"]): r["value"] for r in csv.DictReader(io.StringIO(
        wf.export(s, o.sofia, "summary", "csv").decode()))}
    assert summary[("cases_by_state", "approved")] == "1"
    assert summary[("cases_by_state", "draft")] == "1"
    assert summary[("days_application_to_approval", "count")] == "1"
    ev = list(csv.DictReader(io.StringIO(wf.export(s, o.ines, "events", "csv").decode())))
    assert [r["action"] for r in ev] == ["created", "created", "submitted", "approved",
                                         "letter_stored"]
    xlsx = wf.export(s, o.ines, "cases", "xlsx")
    assert xlsx[:2] == b"PK"
    import polars as pl

    sheet = pl.read_excel(io.BytesIO(xlsx))
    assert sheet.height == 2 and "approved_at_ast" in sheet.columns


def _days(at) -> int:
    from datetime import timedelta, timezone

    return (at.astimezone(timezone(timedelta(hours=-4))).date() - date(2026, 10, 1)).days


def test_a_disabled_user_can_do_nothing_through_the_service_layer(office):
    s, o = office.store, office
    case = wf.open_draft(s, o.ana, APPLICATION, lang="es", as_of=AS_OF)
    assert s.disable_user("beto")
    beto = next(u for u in s.users() if u.name == "beto")
    refused("not_allowed", wf.submit, s, beto, case.case_id)
    refused("not_allowed", wf.view, s, beto, case.case_id)
    refused("not_allowed", wf.queue, s, beto, "drafts")
    assert wf.view(s, o.ana, case.case_id).state == "draft"


# ---- what a letter needs before it is sent for approval and issued -----------

def test_a_case_without_its_addressees_name_and_address_is_not_submitted(office):
    s, o = office.store, office
    bare = {k: v for k, v in APPLICATION.items() if k not in ("name", "address")}
    draft = wf.open_draft(s, o.ana, bare, lang="es", as_of=AS_OF)  # a draft may lack them
    r = refused("invalid", wf.submit, s, o.ana, draft.case_id, lang="es")
    assert [(p["field"], p["code"]) for p in r.problems] == [
        ("name", "required"), ("address", "required")]
    assert "«Nombre del solicitante»" in r.problems[0]["message"]
    assert "«Dirección postal»" in r.problems[1]["message"]
    english = refused("invalid", wf.submit, s, o.ana, draft.case_id, lang="en")
    assert "\"Applicant's name\"" in english.problems[0]["message"]
    assert wf.view(s, o.ana, draft.case_id).state == "draft"
    # a name but a blank address: the address is still missing
    v2 = wf.correct(s, o.ana, draft.case_id, {**bare, "name": "Juana del Pueblo",
                                               "letter_lang": "es", "address": "   "},
                    reason="Nombre", lang="es", as_of=AS_OF)
    r = refused("invalid", wf.submit, s, o.ana, v2.case_id)
    assert [p["field"] for p in r.problems] == ["address"]
    v3 = wf.correct(s, o.ana, v2.case_id, APPLICATION, reason="Dirección", lang="es",
                    as_of=AS_OF)
    assert wf.submit(s, o.ana, v3.case_id).state == "submitted"
    refusals = [e for e in events(s, "workflow.submit") if e.status_code == 422]
    assert len(refusals) == 3


def test_an_older_case_submitted_without_an_addressee_is_not_approved(office, monkeypatch):
    """A case sent before the addressee was required (here: around the check)
    is refused at approval, naming the fields; no letter is stored."""
    s, o = office.store, office
    bare = {k: v for k, v in APPLICATION.items() if k not in ("name", "address")}
    draft = wf.open_draft(s, o.ana, bare, lang="es", as_of=AS_OF)
    with monkeypatch.context() as m:
        m.setattr("diferida.service.workflow.actions.ready", lambda *a, **k: None)
        wf.submit(s, o.ana, draft.case_id)
    r = refused("invalid", wf.approve, s, o.sofia, draft.case_id)
    assert [p["field"] for p in r.problems] == ["name", "address"]
    v = wf.view(s, o.sofia, draft.case_id)
    assert (v.state, v.letter_sha256) == ("submitted", None)


def test_whoever_signs_needs_a_full_name_and_title_and_is_told_the_command(office):
    s, o = office.store, office
    carla = s.add_user("carla", "analyst")[0]          # no name or title yet
    mario = s.add_user("mario", "supervisor")[0]
    draft = wf.open_draft(s, carla, {**APPLICATION, "participant_id": "P-9"}, lang="es",
                          as_of=AS_OF)
    r = refused("invalid", wf.submit, s, carla, draft.case_id)
    assert [p["field"] for p in r.problems] == ["prepared_by"]
    assert ('diferida users profile carla --full-name "…" --title "…"'
            in r.problems[0]["message"])
    s.set_profile("carla", "Carla Soto Rivera", "Analista de Beneficios")
    wf.submit(s, carla, draft.case_id)
    # the supervisor approving without them is refused, saying what and how
    r = refused("invalid", wf.approve, s, mario, draft.case_id, lang="en")
    assert [p["field"] for p in r.problems] == ["approved_by"]
    assert "The user mario has no full name or title" in r.problems[0]["message"]
    assert "diferida users profile mario" in r.problems[0]["message"]
    assert wf.view(s, mario, draft.case_id).state == "submitted"
    s.set_profile("mario", "Mario Vélez Cruz", "Supervisor de Beneficios")
    issued = wf.approve(s, mario, draft.case_id)
    letter = " ".join(wf.letter_html(s, o.ines, issued.case_id).split())
    for words in ("Carla Soto Rivera", "Analista de Beneficios", "Mario Vélez Cruz",
                  "Supervisor de Beneficios"):
        assert words in letter, words
    assert ">carla<" not in letter and ">mario<" not in letter


def test_no_letter_is_issued_while_the_administrators_texts_are_empty(office, monkeypatch,
                                                                     tmp_path):
    s, o = office.store, office
    draft = wf.open_draft(s, o.ana, APPLICATION, lang="es", as_of=AS_OF)
    wf.submit(s, o.ana, draft.case_id)
    monkeypatch.setenv("DIFERIDA_WEB_TEXTS_DIR", str(tmp_path))  # none written
    r = refused("invalid", wf.approve, s, o.sofia, draft.case_id)
    assert [p["field"] for p in r.problems] == ["letter_texts"]
    message = r.problems[0]["message"]
    assert message.startswith("No se puede emitir la carta en español")
    for key in ("letter_office.address", "letter_office.telephone", "letter_office.hours",
                "letter_next.reconsideration"):
        assert key in message, key
    # said in the supervisor's English, of the letter in the addressee's Spanish
    r = refused("invalid", wf.approve, s, o.sofia, draft.case_id, lang="en")
    assert r.problems[0]["message"].startswith("The letter cannot be issued in Spanish")
    assert wf.view(s, o.sofia, draft.case_id).state == "submitted"
    # the draft is still written: its letter is only a draft
    assert "BORRADOR" in wf.letter_html(s, o.ana, draft.case_id)
    monkeypatch.delenv("DIFERIDA_WEB_TEXTS_DIR")
    from .admin_texts import write_admin_texts

    monkeypatch.setenv("DIFERIDA_WEB_TEXTS_DIR", str(write_admin_texts(tmp_path / "ok")))
    assert wf.approve(s, o.sofia, draft.case_id).state == "approved"


def test_an_issued_letter_asked_for_in_another_language_is_refused_in_that_language(office):
    s, o = office.store, office
    draft = wf.open_draft(s, o.ana, APPLICATION, lang="es", as_of=AS_OF)
    wf.submit(s, o.ana, draft.case_id)
    issued = wf.approve(s, o.sofia, draft.case_id)
    pdf = wf.letter(s, o.ines, issued.case_id)
    assert wf.letter(s, o.ines, issued.case_id, lang="es") == pdf  # its own language
    for fn, kwargs in ((wf.letter, {"lang": "en"}), (wf.letter_html, {"asked_lang": "en"})):
        r = refused("invalid", fn, s, o.ines, issued.case_id, **kwargs)
        [p] = r.problems
        assert (p["field"], p["code"], p["value"]) == (
            "lang", "letter_issued_in_other_language", "en")
        assert p["message"].startswith(f"The letter of case {issued.number} (version 1) was "
                                       "issued in Spanish and exists only in that language")
    # the draft of another case may be read in either language
    other = wf.open_draft(s, o.ana, {**APPLICATION, "participant_id": "P-2"}, lang="es",
                          as_of=AS_OF)
    assert 'lang="en"' in wf.letter_html(s, o.ines, other.case_id, asked_lang="en")
