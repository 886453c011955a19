"""The case store on SQLite and on PostgreSQL: versions, append-only records,
stored rules content, tokens, and concurrent writers."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from datetime import date

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError

import diferida
from diferida.rules import rules_from_resolved
from diferida.service.store import (
    AuditQuery,
    CaseConflict,
    CaseProblem,
    NewEvent,
    Store,
    User,
    hash_token,
)
from diferida.service.store.migrate import head_revision
from diferida.service.testing import database_for_tests

AS_OF = date(2026, 11, 29)
EXAMPLE_1 = {"participant_id": "P-1", "birth_date": "1970-05-10", "entry_date": "1988-07-01",
             "separation_date": "2010-06-30", "creditable_service_years": "22",
             "average_compensation": "30000.00", "group": "general", "refund_requested": False}


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    with database_for_tests(request.param, tmp_path) as url:
        s = Store(url)
        s.upgrade()
        yield s
        s.dispose()


@pytest.fixture
def analyst(store) -> User:
    return store.add_user("ana", "analyst")[0]


def record(store: Store, author: User, inputs: dict, supersedes: int | None = None,
           rules=None, result: dict | None = None):
    rules = diferida.load_rules(rules)
    if result is None:
        result = diferida.evaluate(inputs, as_of=AS_OF, rules=rules, lang="en").to_dict()
    return store.record_case(
        participant_id=inputs["participant_id"], inputs=inputs, result=result,
        rules_version=rules.version, rules_name=rules.name, rules_content=rules.resolved,
        as_of=AS_OF, lang="en", author=author, supersedes=supersedes, note=None,
        event=lambda c: NewEvent("case.correct" if supersedes else "case.create", "POST",
                                 "/api/v1/cases", 201, user=author, case_id=c.id,
                                 participant_id=c.participant_id))


def test_a_new_database_is_migrated_to_the_newest_schema(store):
    assert store.revision() == head_revision() is not None
    store.upgrade()  # running it again changes nothing
    assert store.revision() == head_revision()


def test_the_first_case_of_a_participant_is_version_1_and_a_correction_version_2(
        store, analyst):
    first = record(store, analyst, EXAMPLE_1)
    corrected = record(store, analyst, {**EXAMPLE_1, "creditable_service_years": "27.5"},
                       supersedes=first.id)
    assert (first.version, first.supersedes) == (1, None)
    assert (corrected.version, corrected.supersedes) == (2, first.id)
    versions = store.cases("P-1")
    assert [(c.id, c.version) for c in versions] == [(first.id, 1), (corrected.id, 2)]
    assert store.superseded_by([first.id, corrected.id]) == {first.id: corrected.id}
    # the first version is kept exactly as it was recorded
    assert json.loads(store.case(first.id).inputs)["creditable_service_years"] == "22"
    assert json.loads(store.case(corrected.id).result)["route"] == "19.1(b)"


def test_a_second_case_for_a_participant_without_naming_the_current_one_is_refused(
        store, analyst):
    first = record(store, analyst, EXAMPLE_1)
    with pytest.raises(CaseConflict) as exc:
        record(store, analyst, EXAMPLE_1)
    assert exc.value.code == "case_exists" and exc.value.current_id == first.id
    assert store.count_cases() == 1


def test_correcting_a_version_that_was_already_corrected_is_refused(store, analyst):
    first = record(store, analyst, EXAMPLE_1)
    second = record(store, analyst, EXAMPLE_1, supersedes=first.id)
    with pytest.raises(CaseConflict) as exc:
        record(store, analyst, EXAMPLE_1, supersedes=first.id)
    assert exc.value.code == "stale_version" and exc.value.current_id == second.id
    assert [c.version for c in store.cases("P-1")] == [1, 2]


def test_a_correction_must_name_a_case_of_the_same_participant(store, analyst):
    other = record(store, analyst, {**EXAMPLE_1, "participant_id": "P-2"})
    record(store, analyst, EXAMPLE_1)
    with pytest.raises(CaseProblem) as exc:
        record(store, analyst, EXAMPLE_1, supersedes=other.id)
    assert exc.value.code == "other_participant"
    with pytest.raises(CaseProblem) as exc:
        record(store, analyst, EXAMPLE_1, supersedes=987654)
    assert exc.value.code == "no_such_case"
    assert store.count_cases() == 2


def test_the_database_refuses_to_change_or_delete_a_recorded_case_or_audit_event(
        store, analyst):
    case = record(store, analyst, EXAMPLE_1)
    for statement in (f"UPDATE cases SET note = 'x' WHERE id = {case.id}",
                      f"DELETE FROM cases WHERE id = {case.id}",
                      "UPDATE audit_events SET action = 'x'",
                      "DELETE FROM audit_events",
                      "DELETE FROM rules_versions"):
        with pytest.raises(DBAPIError, match="append-only"):
            with store.engine.begin() as conn:
                conn.execute(text(statement))
    assert store.case(case.id).note is None
    assert len(store.audit_events(AuditQuery())) == 1


def test_each_case_keeps_the_rules_content_it_was_decided_with(store, analyst):
    case = record(store, analyst, {**EXAMPLE_1, "group": "police"},
                  rules="article19-strict-19_4")
    content = store.rules_content(case.rules_version)
    rebuilt = rules_from_resolved(content)
    assert rebuilt.version == case.rules_version == \
        diferida.load_rules("article19-strict-19_4").version
    again = diferida.evaluate(json.loads(case.inputs), as_of=case.as_of, rules=rebuilt,
                              lang=case.lang)
    assert again.to_dict() == json.loads(case.result)


def test_a_token_is_stored_only_as_its_hash_and_stops_working_when_the_user_is_disabled(
        store):
    user, token = store.add_user("aud", "auditor")
    assert store.user_for_token(token).name == "aud"
    with store.engine.connect() as conn:
        stored = conn.execute(select(User.token_hash).where(User.name == "aud")).scalar()
        dump = "\n".join(str(r) for r in conn.execute(text("SELECT * FROM users")))
    assert stored == hash_token(token) and token not in dump
    assert store.user_for_token(token + "x") is None
    assert store.disable_user("aud")
    assert store.user_for_token(token) is None


def test_a_user_name_is_unique_and_the_role_must_be_analyst_or_auditor(store):
    store.add_user("ana", "analyst")
    with pytest.raises(ValueError, match="already exists"):
        store.add_user("ana", "auditor")
    with pytest.raises(ValueError, match="role"):
        store.add_user("bob", "admin")


@pytest.mark.slow
def test_fifty_concurrent_writers_lose_and_duplicate_no_version(store, analyst):
    """50 threads, each recording cases for its own participant and
    correcting shared ones; conflicts are answered by re-reading the current
    version and correcting it. Every accepted case is stored exactly once and
    each participant's versions run 1..n as one chain."""
    shared = [f"S-{i}" for i in range(3)]
    accepted: list[tuple[str, int]] = []
    lock = threading.Lock()
    errors: list[BaseException] = []
    start = threading.Barrier(50)
    # one evaluation for all: this test is about the store, not the engine
    result = diferida.evaluate(EXAMPLE_1, as_of=AS_OF, lang="en").to_dict()

    def client(n: int) -> None:
        try:
            start.wait()
            own = record(store, analyst, {**EXAMPLE_1, "participant_id": f"C-{n}"},
                         result=result)
            with lock:
                accepted.append((own.participant_id, own.id))
            pid = shared[n % len(shared)]
            while True:
                current = store.cases(pid)
                try:
                    c = record(store, analyst, {**EXAMPLE_1, "participant_id": pid},
                               supersedes=current[-1].id if current else None, result=result)
                except CaseConflict:
                    continue
                with lock:
                    accepted.append((pid, c.id))
                return
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert len(accepted) == 100 == store.count_cases()
    stored = store.cases(limit=1000)
    assert sorted(c.id for c in stored) == sorted(i for _, i in accepted)
    for pid in {p for p, _ in accepted}:
        versions = store.cases(pid)
        assert [c.version for c in versions] == list(range(1, len(versions) + 1))
        assert [c.supersedes for c in versions] == [None] + [c.id for c in versions[:-1]]
    assert sum(len(store.cases(p)) for p in shared) == 50
    events = store.audit_events(AuditQuery(limit=1000))
    assert sorted(e.case_id for e in events) == sorted(i for _, i in accepted)
    # the hash chains stayed linear: each row follows the one before it
    report = store.verify()
    assert report.intact, report.lines()
    assert [(c.chain, c.rows) for c in report.chains] == [
        ("cases", 100), ("audit_events", 100), ("users", 1), ("user_passwords", 0),
        ("case_applications", 0), ("workflow_events", 100), ("user_profiles", 0)]


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
@pytest.mark.slow
def test_several_processes_starting_at_once_migrate_the_database_once(kind, tmp_path):
    with database_for_tests(kind, tmp_path) as url:
        procs = [subprocess.Popen([sys.executable, "-m", "diferida.cli", "db", "upgrade",
                                   "--database-url", url],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                 for _ in range(4)]
        outputs = [p.communicate(timeout=120)[0].decode() for p in procs]
        assert [p.returncode for p in procs] == [0] * 4, outputs
        s = Store(url)
        assert s.revision() == head_revision()
        s.dispose()


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_an_upgrade_that_fails_part_way_leaves_the_database_as_it_was(kind, tmp_path):
    # The whole upgrade is one transaction: a revision that cannot apply undoes
    # the revisions before it, so no other process ever reads a half-migrated
    # schema's revision (and applies its next revision a second time).
    with database_for_tests(kind, tmp_path) as url:
        s = Store(url)
        with s.engine.begin() as conn:  # a table in the way of revision 0004
            conn.execute(text("CREATE TABLE signed_out_sessions (x INTEGER)"))
        with pytest.raises(DBAPIError):
            s.upgrade()
        assert s.revision() is None
        with s.engine.connect() as conn:
            names = set(conn.dialect.get_table_names(conn))
        assert names == {"signed_out_sessions"}, names
        s.dispose()
