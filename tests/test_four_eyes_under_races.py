"""Four-eyes that holds in the data and under races, the older API beside
the workbench, and letters served only as issued: each test is an attack
that succeeded before (a supervisor approving after one UPDATE of
`case_states`, approving values they entered, a correction and a submit
racing on PostgreSQL, the older API's corrections, a forged stored PDF).
On SQLite and PostgreSQL."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from datetime import date

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from sqlalchemy import select, text

from diferida.cli import main
from diferida.server import create_app
from diferida.service import workflow as wf
from diferida.service.settings import Settings
from diferida.service.store import AuditQuery, CaseApplication, Store
from diferida.service.testing import database_for_tests

from .test_workflow_lifecycle import APPLICATION, AS_OF, refused
from .test_workflow_lifecycle import Office as LifecycleOffice
from .workbench_helpers import around_the_triggers, signer

KINDS = ["sqlite", "postgresql"]


class Office(LifecycleOffice):
    """The office of the lifecycle's tests (two analysts, two supervisors,
    an auditor), with a new draft at each call of `draft`."""

    def __init__(self, store: Store):
        super().__init__(store)
        self.n = 0

    def draft(self, author, **changes) -> wf.CaseView:
        self.n += 1
        return wf.open_draft(self.store, author, {**APPLICATION, "participant_id": f"H3-{self.n}",
                                                  **changes}, lang="es", as_of=AS_OF)


@pytest.fixture(params=KINDS)
def office(request, tmp_path) -> Iterator[Office]:
    with database_for_tests(request.param, tmp_path) as url:
        store = Store(url)
        store.upgrade()
        yield Office(store)
        store.dispose()


def verify_cli(store: Store) -> tuple[int, str]:
    r = CliRunner().invoke(main, ["audit", "verify", "--database-url", store.url],
                           catch_exceptions=False)
    return r.exit_code, r.output


# -- the maker-checker rule is held by the chained rows ---------------------------


def test_case_states_rewritten_by_the_owner_grants_no_approval_and_verify_names_it(office):
    """The attack: the supervisor opens and submits a case, then one UPDATE
    of case_states says an analyst did; before, the approval went through
    and `audit verify` said intact."""
    s, o = office.store, office
    own = o.draft(o.sofia)
    wf.submit(s, o.sofia, own.case_id)
    with s.engine.begin() as conn:
        conn.execute(text("UPDATE case_states SET prepared_by = :a, changed_by = :a, "
                          "submitted_by = :a WHERE case_id = :c"),
                     {"a": o.ana.id, "c": own.case_id})
    assert "approve" not in wf.view(s, o.sofia, own.case_id).can
    refused("own_case", wf.approve, s, o.sofia, own.case_id)
    assert wf.view(s, o.pedro, own.case_id).state == "submitted"
    report = s.verify()
    assert not report.intact
    code, output = verify_cli(s)
    assert code == 1 and "TAMPERING DETECTED" in output
    for key in ("prepared_by", "changed_by", "submitted_by"):
        assert re.search(rf"case_states case {own.number}: says {key} = user {o.ana.id}, its "
                         rf"versions and workflow events say user {o.sofia.id}", output), output


def test_an_approval_by_a_maker_in_the_chain_breaks_audit_verify(office, monkeypatch):
    """A store where a supervisor approved their own case (as the rule read
    from `case_states` alone allowed after the UPDATE above): `audit verify`
    reads the rule from the chained events and reports it, whatever
    case_states says."""
    s, o = office.store, office
    own = o.draft(o.sofia)
    wf.submit(s, o.sofia, own.case_id)
    monkeypatch.setattr(wf.common, "is_own", lambda *args, **kwargs: False)  # the rule switched off
    wf.approve(s, o.sofia, own.case_id)
    monkeypatch.undo()
    report = s.verify()
    assert not report.intact
    code, output = verify_cli(s)
    assert code == 1 and "TAMPERING DETECTED" in output
    assert re.search(rf"version 1 \(case row {own.case_id}\) approved by user {o.sofia.id} "
                     r"\('sofia'\), who is the author of version 1 and the submitter of "
                     r"version 1 \(four-eyes rule broken\)", output), output


def test_a_supervisor_never_approves_values_they_entered_in_any_version(office):
    """The supervisor corrects v1 (average compensation 90,000); an analyst
    makes v3 with the same values and submits it: before, the supervisor
    approved v3, values they had entered."""
    s, o = office.store, office
    v1 = o.draft(o.ana)
    v2 = wf.correct(s, o.sofia, v1.case_id, {**APPLICATION, "participant_id": v1.participant_id,
                                              "average_compensation": "90000.00"},
                    reason="Salario del certificado", lang="es", as_of=AS_OF)
    v3 = wf.correct(s, o.ana, v2.case_id, {**APPLICATION, "participant_id": v1.participant_id,
                                            "average_compensation": "90000.00"},
                    reason="sin cambios", lang="es", as_of=AS_OF)
    wf.submit(s, o.ana, v3.case_id)
    assert "approve" not in wf.view(s, o.sofia, v3.case_id).can
    r = refused("own_case", wf.approve, s, o.sofia, v3.case_id)
    assert r.status == 403 and "otro supervisor" in r.message("es").lower()
    assert "another supervisor" in r.message("en").lower()
    # a supervisor who entered nothing approves it
    assert "approve" in wf.view(s, o.pedro, v3.case_id).can
    assert wf.approve(s, o.pedro, v3.case_id).state == "approved"
    assert s.verify().intact


def test_a_supervisor_who_only_changed_the_case_last_may_not_approve_it(office):
    """Prepared by an analyst, submitted by an analyst: the supervisor's only
    part is the current version (a correction). With 'changed last' left
    out of the rule, this approval went through."""
    s, o = office.store, office
    v1 = o.draft(o.ana)
    wf.submit(s, o.ana, v1.case_id)
    wf.return_case(s, o.pedro, v1.case_id, reason="Revise el grupo")
    v2 = wf.correct(s, o.sofia, v1.case_id, {**APPLICATION, "participant_id": v1.participant_id},
                    reason="Grupo revisado", lang="es", as_of=AS_OF)
    wf.submit(s, o.beto, v2.case_id)
    refused("own_case", wf.approve, s, o.sofia, v2.case_id)
    assert wf.approve(s, o.pedro, v2.case_id).state == "approved"
    assert s.verify().intact


def test_the_approving_transaction_reads_the_rule_again(office, monkeypatch):
    """The check before rendering the letter is not the only one: with it
    skipped, the transaction that approves refuses the maker on its own."""
    s, o = office.store, office
    own = o.draft(o.sofia)
    wf.submit(s, o.sofia, own.case_id)
    real = wf.is_own
    calls = []

    def first_check_passes(user, st, session=None, case=None):
        calls.append(1)
        return False if len(calls) == 1 else real(user, st, session, case)

    monkeypatch.setattr(wf.common, "is_own", first_check_passes)
    refused("own_case", wf.approve, s, o.sofia, own.case_id)
    monkeypatch.undo()
    assert wf.view(s, o.pedro, own.case_id).state == "submitted"
    assert s.verify().intact


# -- one transition of a case at a time --------------------------------------------


def _race(*actions) -> list[object]:
    """Run the actions at the same moment, each in its own thread; each
    result is the action's return value or the exception it raised."""
    barrier = threading.Barrier(len(actions))
    results: list[object] = [None] * len(actions)

    def run(i, fn):
        barrier.wait()
        try:
            results[i] = fn()
        except Exception as exc:  # the outcome is what the test reads
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i, fn)) for i, fn in enumerate(actions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


def _awaiting_were_submitted(s: Store, o: Office) -> None:
    """Every version in the supervisor's awaiting queue was submitted (its
    own `submitted` event), and `case_states` agrees with the events."""
    from diferida.service.store import WorkflowEvent

    page = wf.queue(s, o.pedro, "awaiting", per_page=200)
    with s.reading() as session:
        submitted = set(session.scalars(select(WorkflowEvent.case_id)
                                        .where(WorkflowEvent.action == "submitted")))
    assert {c.case_id for c in page.items} <= submitted
    report = s.verify()
    assert report.intact, report.lines()


def test_a_correction_and_a_submit_of_one_draft_never_both_succeed(office):
    s, o = office.store, office
    rounds = 12
    for _ in range(rounds):
        d = o.draft(o.ana)
        app = {**APPLICATION, "participant_id": d.participant_id,
               "creditable_service_years": "23"}
        results = _race(
            lambda d=d: wf.submit(s, o.ana, d.case_id),
            lambda d=d, app=app: wf.correct(s, o.beto, d.case_id, app, reason="Años",
                                            lang="es", as_of=AS_OF))
        ok = [r for r in results if isinstance(r, wf.CaseView)]
        no = [r for r in results if isinstance(r, wf.Refused)]
        assert len(ok) == 1 and len(no) == 1, results
        assert no[0].code in ("stale", "submitted"), no[0].code
        now = wf.view(s, o.ana, d.case_id)
        assert len(wf.search(s, o.ana, participant_id=d.participant_id).items) == 1
        if isinstance(results[0], wf.CaseView):  # the submit won: v1 awaits approval
            assert (now.state, now.current) == ("submitted", True)
        else:  # the correction won: v2 is a draft, v1 superseded
            assert not now.current
    _awaiting_were_submitted(s, o)


def test_concurrent_transitions_of_one_case_happen_once(office):
    s, o = office.store, office
    # two submits of one draft
    d = o.draft(o.ana)
    results = _race(lambda: wf.submit(s, o.ana, d.case_id),
                    lambda: wf.submit(s, o.beto, d.case_id))
    assert sorted(type(r).__name__ for r in results) == ["CaseView", "Refused"], results
    # a return and an approval of one submitted version
    r1, r2 = _race(lambda: wf.return_case(s, o.pedro, d.case_id, reason="Falta un dato"),
                   lambda: wf.approve(s, o.sofia, d.case_id))
    assert sorted(type(r).__name__ for r in (r1, r2)) == ["CaseView", "Refused"], (r1, r2)
    refusal = r1 if isinstance(r1, wf.Refused) else r2
    assert refusal.code == "wrong_state"
    # two approvals by two supervisors: one letter
    e = o.draft(o.ana)
    wf.submit(s, o.ana, e.case_id)
    results = _race(lambda: wf.approve(s, o.sofia, e.case_id),
                    lambda: wf.approve(s, o.pedro, e.case_id))
    assert sorted(type(r).__name__ for r in results) == ["CaseView", "Refused"], results
    from diferida.service.store import WorkflowEvent

    with s.reading() as session:
        approvals = session.scalars(select(WorkflowEvent.id).where(
            WorkflowEvent.case_id == e.case_id, WorkflowEvent.action == "approved")).all()
    assert len(approvals) == 1
    _awaiting_were_submitted(s, o)


# -- the older API beside the workbench ---------------------------------------------


@pytest.fixture(params=KINDS)
def api(request, tmp_path):
    with database_for_tests(request.param, tmp_path) as url:
        app = create_app(Settings(database_url=url, rate_limit_auth_failures="off"))
        with TestClient(app) as client:
            store: Store = app.state.store
            users, tokens = {}, {}
            for name, role in (("ana", "analyst"), ("sofia", "supervisor")):
                users[name], tokens[name] = store.add_user(name, role, **signer(name))
            yield client, store, users, tokens


def _api_body(pid: str, supersedes: int | None = None, **changes) -> dict:
    body = {k: v for k, v in APPLICATION.items()
            if k not in ("name", "address", "application_date", "note", "letter_lang")}
    body.update(participant_id=pid, **changes)
    if supersedes is not None:
        body.update(supersedes=supersedes, note="Años revisados")
    return body


def test_the_older_api_refuses_to_correct_a_submitted_version_in_words(api):
    client, store, users, tokens = api
    h = {"Authorization": f"Bearer {tokens['ana']}"}
    v = wf.open_draft(store, users["ana"], {**APPLICATION, "participant_id": "OLD-1"},
                      lang="es", as_of=AS_OF)
    wf.submit(store, users["ana"], v.case_id)
    for lang, words in (("es", "enviado a aprobación"), ("en", "submitted for approval")):
        r = client.post("/api/v1/cases", headers=h, json=_api_body(
            "OLD-1", v.case_id, creditable_service_years="23", lang=lang))
        assert r.status_code == 409, r.text
        (problem,) = r.json()["errors"]
        assert problem["field"] == "supersedes" and problem["code"] == "submitted"
        assert words in problem["message"]
    assert wf.view(store, users["ana"], v.case_id).state == "submitted"
    assert store.verify().intact


def test_the_older_api_keeps_the_addressee_when_it_corrects_an_approved_version(api):
    client, store, users, tokens = api
    h = {"Authorization": f"Bearer {tokens['ana']}"}
    v = wf.open_draft(store, users["ana"], {**APPLICATION, "participant_id": "OLD-2"},
                      lang="es", as_of=AS_OF)
    wf.submit(store, users["ana"], v.case_id)
    wf.approve(store, users["sofia"], v.case_id)
    r = client.post("/api/v1/cases", headers=h,
                    json=_api_body("OLD-2", v.case_id, creditable_service_years="23"))
    assert r.status_code == 201, r.text
    new = r.json()["case_id"] if "case_id" in r.json() else r.json()["id"]
    v2 = wf.view(store, users["ana"], new)
    assert (v2.version, v2.name, v2.address, v2.application_date, v2.letter_lang) == (
        2, APPLICATION["name"], APPLICATION["address"], date(2026, 10, 1), "es")
    with store.reading() as session:
        assert session.scalar(select(CaseApplication.name)
                              .where(CaseApplication.case_id == new)) == APPLICATION["name"]
    assert store.verify().intact


# -- letters served only as issued --------------------------------------------------


def _forge_letter(store: Store) -> None:
    """The database owner drops the triggers, changes the stored PDF, and
    puts the triggers back."""
    around_the_triggers(store, [("UPDATE letters SET pdf = :p", {"p": b"%PDF-1.7 forged"})])


def test_a_letter_changed_after_issue_is_never_served(api):
    client, store, users, tokens = api
    v = wf.open_draft(store, users["ana"], {**APPLICATION, "participant_id": "LET-1"},
                      lang="es", as_of=AS_OF)
    wf.submit(store, users["ana"], v.case_id)
    wf.approve(store, users["sofia"], v.case_id)
    h = {"Authorization": f"Bearer {tokens['ana']}"}
    good = client.get(f"/api/v1/workbench/cases/{v.case_id}/letter", headers=h)
    assert good.status_code == 200 and good.content.startswith(b"%PDF")
    _forge_letter(store)
    for path in (f"/api/v1/workbench/cases/{v.case_id}/letter",
                 f"/api/v1/cases/{v.case_id}/print"):
        for lang, words in (("es", "no pasa su comprobación"), ("en", "fails its check")):
            r = client.get(path, headers={**h, "Accept-Language": lang},
                           params={"lang": lang} if "workbench" in path else None)
            assert r.status_code == 409, (path, r.status_code)
            assert b"forged" not in r.content
            assert r.json()["errors"][0]["code"] == "letter_check"
            assert words in r.json()["errors"][0]["message"], r.text
    with pytest.raises(wf.Refused) as info:
        wf.letter(store, users["sofia"], v.case_id)
    assert info.value.code == "letter_check"
    with pytest.raises(wf.Refused):
        wf.letter_html(store, users["sofia"], v.case_id)
    refusals = [e for e in store.audit_events(AuditQuery(action="workflow.letter", limit=100))
                if e.detail == "refused: letter_check"]
    assert len(refusals) >= 3 and {e.status_code for e in refusals} == {409}
    assert not store.verify().intact


def _eight_actions(s: Store, o: Office, d: wf.CaseView) -> list:
    app = {**APPLICATION, "participant_id": d.participant_id, "group": "general"}
    return [lambda: wf.submit(s, o.ana, d.case_id),
            lambda: wf.submit(s, o.beto, d.case_id),
            lambda: wf.correct(s, o.ana, d.case_id, app, reason="a", lang="es", as_of=AS_OF),
            lambda: wf.correct(s, o.beto, d.case_id, app, reason="b", lang="es", as_of=AS_OF),
            lambda: wf.return_case(s, o.pedro, d.case_id, reason="c"),
            lambda: wf.return_case(s, o.sofia, d.case_id, reason="d"),
            lambda: wf.approve(s, o.sofia, d.case_id),
            lambda: wf.approve(s, o.pedro, d.case_id)]


def test_many_threads_acting_on_one_case_leave_one_history(office):
    """Eight users act on one draft at the same moment, again and again:
    each version is submitted at most once, approved or returned at most
    once and only after it was submitted, and the store verifies."""
    from diferida.service.store import WorkflowEvent

    s, o = office.store, office
    for _ in range(4):
        d = o.draft(o.ana)
        _race(*_eight_actions(s, o, d))
        with s.reading() as session:
            events = session.execute(select(WorkflowEvent.case_id, WorkflowEvent.action)
                                     .where(WorkflowEvent.number == d.number)
                                     .order_by(WorkflowEvent.id)).all()
        by_version: dict[int, list[str]] = {}
        for cid, action in events:
            by_version.setdefault(cid, []).append(action)
        for actions in by_version.values():
            assert actions.count("submitted") <= 1, actions
            assert actions.count("approved") + actions.count("returned") <= 1, actions
            for verdict in ("approved", "returned"):
                if verdict in actions:
                    assert actions.index("submitted") < actions.index(verdict), actions
        # at most one correction of version 1
        assert sum(a == "corrected" for _, a in events) <= 1, events
    _awaiting_were_submitted(s, o)
