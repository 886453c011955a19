"""The hash chains of the case store: existing databases get them by a
migration, concurrent writers in several processes keep them linear, and the
SQLite file is private to its owner."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from datetime import date

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

import diferida
from diferida.service.store import NewEvent, Store, hash_token
from diferida.service.store.migrate import head_revision, upgrade
from diferida.service.testing import database_for_tests

AS_OF = date(2026, 11, 29)
EXAMPLE_1 = {"participant_id": "P-1", "birth_date": "1970-05-10", "entry_date": "1988-07-01",
             "separation_date": "2010-06-30", "creditable_service_years": "22",
             "average_compensation": "30000.00", "group": "general", "refund_requested": False}


def _old_rows(conn) -> None:
    """Rows as the first schema held them, before there were hashes."""
    rules = diferida.load_rules()
    from diferida.service.store.repository import canonical_json

    result = canonical_json(diferida.evaluate(EXAMPLE_1, as_of=AS_OF, lang="en").to_dict())
    conn.execute(text("INSERT INTO users (id, name, role, token_hash, created_at) VALUES "
                      "(1, 'ana', 'analyst', :t1, '2026-01-02 03:04:05.000006'), "
                      "(2, 'ines', 'auditor', :t2, '2026-01-02 03:04:06')"),
                 {"t1": hash_token("dfr_a"), "t2": hash_token("dfr_b")})
    conn.execute(text("INSERT INTO rules_versions VALUES (:v, :n, :c, '2026-01-02 03:04:07')"),
                 {"v": rules.version, "n": rules.name, "c": canonical_json(rules.resolved)})
    for i, (pid, version, supersedes) in enumerate([("P-1", 1, None), ("P-1", 2, 1),
                                                    ("P-2", 1, None)], start=1):
        conn.execute(text(
            "INSERT INTO cases (id, participant_id, version, supersedes, inputs, result, "
            "rules_version, as_of, lang, status, author_id, note, created_at) VALUES "
            "(:i, :p, :v, :s, :inputs, :r, :rv, '2026-11-29', 'en', 'eligible', 1, :note, "
            ":at)"),
            {"i": i, "p": pid, "v": version, "s": supersedes, "inputs": canonical_json(EXAMPLE_1),
             "r": result, "rv": rules.version, "note": "nota ñ" if i == 2 else None,
             "at": f"2026-11-29 10:00:0{i}.12345{i}"})
        conn.execute(text(
            "INSERT INTO audit_events (id, at, user_id, user_name, role, action, case_id, "
            "participant_id, method, path, status_code, detail) VALUES (:i, :at, 1, 'ana', "
            "'analyst', 'case.create', :i, :p, 'POST', '/api/v1/cases', 201, NULL)"),
            {"i": i, "p": pid, "at": f"2026-11-29 10:00:0{i}.12345{i}"})
    conn.execute(text(
        "INSERT INTO audit_events (id, at, action, method, path, status_code, detail) VALUES "
        "(4, '2026-11-29 11:00:00', 'auth.unauthorized', 'GET', '/api/v1/cases', 401, NULL)"))


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_the_migration_gives_existing_rows_their_chain_and_new_rows_continue_it(kind,
                                                                               tmp_path):
    with database_for_tests(kind, tmp_path) as url:
        store = Store(url)
        try:
            upgrade(store.engine, "0001")
            with store.engine.begin() as conn:
                _old_rows(conn)
            store.upgrade()
            assert store.revision() == head_revision()
            report = store.verify()
            assert report.intact, report.lines()
            assert [(c.chain, c.rows) for c in report.chains] == [
                ("cases", 3), ("audit_events", 4), ("users", 2), ("user_passwords", 0),
                ("case_applications", 0), ("workflow_events", 0), ("user_profiles", 0)]
            # the store writes on from the migrated heads
            ana = store.user_for_token("dfr_a")
            rules = diferida.load_rules()
            current = store.cases("P-2")[-1]
            store.record_case(
                participant_id="P-2", inputs={**EXAMPLE_1, "participant_id": "P-2"},
                result={"status": "eligible"}, rules_version=rules.version,
                rules_name=rules.name, rules_content=rules.resolved, as_of=AS_OF, lang="en",
                author=ana, supersedes=current.id, note=None,
                event=lambda c: NewEvent("case.correct", "POST", "/api/v1/cases", 201,
                                         user=ana, case_id=c.id))
            assert store.disable_user("ines")
            report = store.verify()
            assert report.intact, report.lines()
            assert [(c.chain, c.rows, c.last_id) for c in report.chains] == [
                ("cases", 4, 4), ("audit_events", 6, 6), ("users", 2, 2),
                ("user_passwords", 0, None), ("case_applications", 0, None),
                # the correction's workflow event
                ("workflow_events", 1, 1), ("user_profiles", 0, None)]
            # and the old rows are now refused a rewrite like the new ones
            with pytest.raises(DBAPIError):
                with store.engine.begin() as conn:
                    conn.execute(text("UPDATE cases SET note = 'x' WHERE id = 2"))
        finally:
            store.dispose()


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_the_migration_can_be_undone_and_done_again(kind, tmp_path):
    from alembic import command

    from diferida.service.store.migrate import alembic_config

    with database_for_tests(kind, tmp_path) as url:
        store = Store(url)
        try:
            upgrade(store.engine, "0001")
            with store.engine.begin() as conn:
                _old_rows(conn)
            store.upgrade()
            with store.engine.connect().execution_options(write=True) as conn:
                command.downgrade(alembic_config(conn), "0001")
                conn.commit()
            assert store.revision() == "0001"
            with store.engine.connect() as conn:
                assert conn.execute(text("SELECT count(*) FROM cases")).scalar() == 3
            store.upgrade()
            assert store.verify().intact
        finally:
            store.dispose()


WRITER = textwrap.dedent("""
    import sys
    from datetime import date
    from diferida import load_rules
    from diferida.service.store import CaseConflict, NewEvent, Store
    url, n = sys.argv[1], int(sys.argv[2])
    rules = load_rules()
    s = Store(url)
    user = s.user_for_token("dfr_writer")
    for i in range(20):
        s.audit(NewEvent("case.read", "GET", f"/api/v1/cases/{n}/{i}", 200, user=user))
        if i % 4:
            continue
        while True:
            current = s.cases("SHARED")
            try:
                s.record_case(participant_id="SHARED", inputs={"n": n, "i": i},
                              result={"status": "eligible"}, rules_version=rules.version,
                              rules_name=rules.name, rules_content=rules.resolved,
                              as_of=date(2026, 1, 1),
                              lang="en", author=user,
                              supersedes=current[-1].id if current else None, note=None,
                              event=lambda c: NewEvent("case.create", "POST", "/api/v1/cases",
                                                       201, user=user, case_id=c.id))
                break
            except CaseConflict:
                continue
    s.dispose()
""")


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
@pytest.mark.slow
def test_writers_in_several_processes_keep_each_chain_linear(kind, tmp_path,
                                                               monkeypatch):
    """4 processes at once, each writing 20 audit events and 5 corrections of
    one shared case: no version lost or duplicated, every chain intact."""
    with database_for_tests(kind, tmp_path) as url:
        store = Store(url)
        try:
            store.upgrade()
            # a user whose token the writer processes know
            from diferida.service.store import repository

            monkeypatch.setattr(repository, "new_token", lambda: "dfr_writer")
            store.add_user("writer", "analyst")
            procs = [subprocess.Popen([sys.executable, "-c", WRITER, url, str(n)],
                                      stderr=subprocess.PIPE) for n in range(4)]
            errors = [p.communicate(timeout=300)[1].decode() for p in procs]
            assert [p.returncode for p in procs] == [0] * 4, errors
            versions = store.cases("SHARED", limit=1000)
            assert [c.version for c in versions] == list(range(1, 21))
            report = store.verify()
            assert report.intact, report.lines()
            assert [(c.chain, c.rows) for c in report.chains] == [
                ("cases", 20), ("audit_events", 100), ("users", 1), ("user_passwords", 0),
                ("case_applications", 0), ("workflow_events", 20), ("user_profiles", 0)]
        finally:
            store.dispose()


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_the_sqlite_file_and_its_new_folders_are_private_to_their_owner(tmp_path):
    old = os.umask(0)  # the modes must not depend on the caller's umask
    try:
        db = tmp_path / "var" / "deep" / "cases.db"
        store = Store(f"sqlite:///{db}")
        store.upgrade()
        store.add_user("ana", "analyst")
        assert _mode(db) == 0o600
        for side in ("cases.db-wal", "cases.db-shm"):
            assert (db.parent / side).exists() and _mode(db.parent / side) == 0o600
        assert _mode(tmp_path / "var") == _mode(tmp_path / "var" / "deep") == 0o700
        store.dispose()
    finally:
        os.umask(old)


def test_an_existing_sqlite_file_and_folder_keep_their_mode(tmp_path):
    db = tmp_path / "cases.db"
    db.touch(mode=0o640)
    os.chmod(db, 0o640)
    store = Store(f"sqlite:///{db}")
    store.upgrade()
    store.dispose()
    assert _mode(db) == 0o640


def test_db_upgrade_from_the_command_line_creates_a_private_file(tmp_path):
    db = tmp_path / "var" / "diferida.db"
    subprocess.run([sys.executable, "-m", "diferida.cli", "db", "upgrade", "--database-url",
                    f"sqlite:///{db}"], check=True, capture_output=True)
    assert _mode(db) == 0o600 and _mode(db.parent) == 0o700


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_events_written_together_fail_alone(kind, tmp_path):
    """16 threads record 20 audit events each at once (they share
    transactions); one thread's events cannot be stored (a value with no
    canonical form). Exactly that thread's events fail, the other 300 are
    stored, the chain is intact."""
    import threading

    from diferida.service.store import AuditQuery

    with database_for_tests(kind, tmp_path) as url:
        store = Store(url)
        try:
            store.upgrade()
            user = store.add_user("a", "analyst")[0]
            start = threading.Barrier(16)
            failures: list[int] = []
            lock = threading.Lock()

            def writer(n: int) -> None:
                start.wait()
                for i in range(20):
                    detail = object() if n == 7 else f"{n}/{i}"
                    try:
                        store.audit(NewEvent("case.read", "GET", "/x", 200, user=user,
                                             detail=detail))
                    except TypeError:
                        with lock:
                            failures.append(n)

            threads = [threading.Thread(target=writer, args=(n,)) for n in range(16)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert failures == [7] * 20
            stored = store.audit_events(AuditQuery(limit=1000))
            assert sorted(e.detail for e in stored) == sorted(
                f"{n}/{i}" for n in range(16) if n != 7 for i in range(20))
            assert store.verify().intact
        finally:
            store.dispose()
