"""`audit verify` checks what the protecting triggers do, not what they are
called: a trigger recreated under its name with another body, a trigger
function emptied, a trigger disabled or left to fire only for replication
sessions, a trigger added to a store table: each is reported, on SQLite and
PostgreSQL, before anything it lets through is done. And a chain head or a
stored rules content that no writer of the store could have written is
reported as tampering, never a traceback."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

import diferida
from diferida.cli import main
from diferida.service.store import NewEvent, Store, User
from diferida.service.testing import database_for_tests

AS_OF = date(2026, 11, 29)
EXAMPLE_1 = {"participant_id": "P-1", "birth_date": "1970-05-10", "entry_date": "1988-07-01",
             "separation_date": "2010-06-30", "creditable_service_years": "22",
             "average_compensation": "30000.00", "group": "general", "refund_requested": False}
CHANGED = "trigger CHANGED (the database may no longer refuse changes): "
MISSING = "triggers MISSING or disabled (the database no longer refuses changes): "
ADDED = "trigger NOT CREATED by the migrations: "


def record(store: Store, author: User, inputs: dict, supersedes: int | None = None):
    rules = diferida.load_rules()
    result = diferida.evaluate(inputs, as_of=AS_OF, rules=rules, lang="en").to_dict()
    return store.record_case(
        participant_id=inputs["participant_id"], inputs=inputs, result=result,
        rules_version=rules.version, rules_name=rules.name, rules_content=rules.resolved,
        as_of=AS_OF, lang="en", author=author, supersedes=supersedes, note=None,
        event=lambda c: NewEvent("case.create", "POST", "/api/v1/cases", 201, user=author,
                                 case_id=c.id, participant_id=c.participant_id))


@contextmanager
def seeded_store(kind: str, folder) -> Iterator[Store]:
    """User 1 ana (analyst), 2 ines (auditor); cases 1 and 2 (P-1, versions
    1 and 2) and 3 (P-2); audit events 1-3 record them."""
    with database_for_tests(kind, folder) as url:
        store = Store(url)
        store.upgrade()
        ana = store.add_user("ana", "analyst")[0]
        store.add_user("ines", "auditor")
        first = record(store, ana, EXAMPLE_1)
        record(store, ana, {**EXAMPLE_1, "average_compensation": "30600.00"},
               supersedes=first.id)
        record(store, ana, {**EXAMPLE_1, "participant_id": "P-2"})
        try:
            r = verify_cli(store)
            assert r.exit_code == 0, r.output
            assert "triggers: all in place, as the migrations define them" in r.output
            yield store
        finally:
            store.dispose()


def verify_cli(store: Store):
    # an exception escaping the command fails the test: no traceback, ever
    return CliRunner().invoke(main, ["audit", "verify", "--database-url", store.url],
                              catch_exceptions=False)


def run(store: Store, *statements: str) -> None:
    with store.engine.begin() as conn:
        for statement in statements:
            conn.execute(text(statement))


def refused(store: Store, statement: str) -> bool:
    try:
        run(store, statement)
    except DBAPIError:
        return True
    return False


# -- the owner changes a trigger and keeps its name ------------------------------

LET_THROUGH = ("CREATE FUNCTION let_through() RETURNS trigger AS $$ "
               "BEGIN RETURN COALESCE(NEW, OLD); END $$ LANGUAGE plpgsql")
# name: (statements of the owner, what the database refused before and lets
# through after, what `audit verify` must say)
TRIGGER_ATTACKS: dict[str, dict[str, tuple[tuple[str, ...], str | None, str]]] = {
    "sqlite": {
        "cases_no_delete recreated as SELECT 1": (
            ("DROP TRIGGER cases_no_delete",
             "CREATE TRIGGER cases_no_delete BEFORE DELETE ON cases BEGIN SELECT 1; END"),
            "DELETE FROM cases WHERE id = 3",
            re.escape(CHANGED + "cases_no_delete is now `CREATE TRIGGER cases_no_delete "
                      "BEFORE DELETE ON cases BEGIN SELECT 1; END`")),
        "audit_events_no_update recreated with a condition never true": (
            ("DROP TRIGGER audit_events_no_update",
             "CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events WHEN 0 "
             "BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END"),
            "UPDATE audit_events SET user_name = 'ines' WHERE id = 1",
            re.escape(CHANGED) + r"audit_events_no_update is now `CREATE TRIGGER "
                                 r"audit_events_no_update BEFORE UPDATE ON audit_events WHEN 0 "),
        "users_only_disable recreated to let every change through": (
            ("DROP TRIGGER users_only_disable",
             "CREATE TRIGGER users_only_disable BEFORE UPDATE ON users BEGIN SELECT 1; END"),
            "UPDATE users SET role = 'auditor' WHERE id = 1",
            re.escape(CHANGED) + r"users_only_disable is now `CREATE TRIGGER "
                                 r"users_only_disable BEFORE UPDATE ON users BEGIN SELECT 1; END`"),
        "a trigger added that silently drops ana's audit events": (
            ("CREATE TRIGGER audit_events_quiet BEFORE INSERT ON audit_events "
             "WHEN NEW.user_name = 'ana' BEGIN SELECT RAISE(IGNORE); END",),
            None,
            re.escape(ADDED + "audit_events_quiet on audit_events")),
    },
    "postgresql": {
        "diferida_append_only() emptied": (
            ("CREATE OR REPLACE FUNCTION diferida_append_only() RETURNS trigger AS $$ "
             "BEGIN RETURN COALESCE(NEW, OLD); END $$ LANGUAGE plpgsql",),
            "DELETE FROM cases WHERE id = 3",
            re.escape(CHANGED + "the function diferida_append_only(), run by "
                      "cases_append_only, audit_events_append_only, rules_versions_append_only, "
                      "cases_no_truncate, audit_events_no_truncate, rules_versions_no_truncate, "
                      "users_no_truncate, chain_heads_no_truncate, user_passwords_append_only, "
                      "case_applications_append_only, workflow_events_append_only, "
                      "letters_append_only, user_passwords_no_truncate, "
                      "case_applications_no_truncate, workflow_events_no_truncate, "
                      "letters_no_truncate, user_profiles_append_only, "
                      "user_profiles_no_truncate: its body is now "
                      "`BEGIN RETURN COALESCE(NEW, OLD); END` (LANGUAGE plpgsql)")),
        "diferida_users_only_disable() emptied": (
            ("CREATE OR REPLACE FUNCTION diferida_users_only_disable() RETURNS trigger AS $$ "
             "BEGIN RETURN NEW; END $$ LANGUAGE plpgsql",),
            "UPDATE users SET role = 'auditor' WHERE id = 1",
            re.escape(CHANGED + "the function diferida_users_only_disable(), run by "
                      "users_only_disable: its body is now `BEGIN RETURN NEW; END`")),
        "cases_append_only recreated with a condition never true": (
            ("DROP TRIGGER cases_append_only ON cases",
             "CREATE TRIGGER cases_append_only BEFORE UPDATE OR DELETE ON cases FOR EACH ROW "
             "WHEN (false) EXECUTE FUNCTION diferida_append_only()"),
            "DELETE FROM cases WHERE id = 3",
            re.escape(CHANGED) + r"cases_append_only is now `CREATE TRIGGER cases_append_only "
                                 r"BEFORE DELETE OR UPDATE ON \S+\.cases FOR EACH ROW "
                                 r"WHEN \(false\) EXECUTE FUNCTION diferida_append_only\(\)`"),
        "cases_append_only recreated to run a function that lets everything through": (
            (LET_THROUGH, "DROP TRIGGER cases_append_only ON cases",
             "CREATE TRIGGER cases_append_only BEFORE UPDATE OR DELETE ON cases FOR EACH ROW "
             "EXECUTE FUNCTION let_through()"),
            "UPDATE cases SET note = 'changed' WHERE id = 1",
            re.escape(CHANGED) + r"cases_append_only is now `CREATE TRIGGER cases_append_only "
                                 r"BEFORE DELETE OR UPDATE ON \S+\.cases FOR EACH ROW "
                                 r"EXECUTE FUNCTION let_through\(\)`"),
        "cases_append_only disabled": (
            ("ALTER TABLE cases DISABLE TRIGGER cases_append_only",),
            "DELETE FROM cases WHERE id = 3",
            re.escape(MISSING + "cases_append_only (disabled)")),
        "audit_events_append_only enabled only for replication sessions": (
            ("ALTER TABLE audit_events ENABLE REPLICA TRIGGER audit_events_append_only",),
            "DELETE FROM audit_events WHERE id = 1",
            re.escape(MISSING + "audit_events_append_only (enabled only for replication "
                      "sessions)")),
        "a trigger added that silently drops ana's audit events": (
            ("CREATE FUNCTION quiet() RETURNS trigger AS $$ BEGIN RETURN NULL; END $$ "
             "LANGUAGE plpgsql",
             "CREATE TRIGGER audit_events_quiet BEFORE INSERT ON audit_events FOR EACH ROW "
             "WHEN (NEW.user_name = 'ana') EXECUTE FUNCTION quiet()"),
            None,
            re.escape(ADDED + "audit_events_quiet on audit_events")),
    },
}


@pytest.mark.parametrize(("kind", "attack"), [(k, a) for k, attacks in TRIGGER_ATTACKS.items()
                                              for a in attacks])
def test_a_protecting_trigger_changed_by_the_owner_is_reported_before_it_is_used(
        kind, attack, tmp_path):
    statements, let_through, expected = TRIGGER_ATTACKS[kind][attack]
    with seeded_store(kind, tmp_path) as store:
        if let_through is not None:
            assert refused(store, let_through)
        run(store, *statements)
        # nothing recorded has changed yet: only the triggers can tell
        report = store.verify()
        assert all(c.intact for c in report.chains) and report.findings == []
        r = verify_cli(store)
        assert r.exit_code == 1, r.output
        assert re.search(expected, r.output), r.output
        assert "triggers: all in place" not in r.output
        assert r.output.rstrip().endswith("audit verify: TAMPERING DETECTED")
        if let_through is not None:
            # what the check is for: the statement now goes through
            assert not refused(store, let_through)


def test_an_added_trigger_that_drops_audit_events_is_what_breaks_the_chain(tmp_path):
    """The added trigger of the attack above, used: the audit event is not
    stored although the head moved, which the chain then tells too."""
    statements, _, expected = TRIGGER_ATTACKS["sqlite"][
        "a trigger added that silently drops ana's audit events"]
    with seeded_store("sqlite", tmp_path) as store:
        run(store, *statements)
        ana = next(u for u in store.users() if u.name == "ana")
        store.audit(NewEvent("case.read", "GET", "/api/v1/cases/1", 200, user=ana, case_id=1))
        r = verify_cli(store)
        assert r.exit_code == 1
        assert re.search(expected, r.output)
        assert "audit_events: BROKEN at audit_events end: the chain head records 4 rows" \
            in r.output


# -- what no writer of the store writes: reported, never a traceback -----------------

@contextmanager
def around_the_triggers(store: Store) -> Iterator[Any]:
    """A connection the triggers do not stop (a superuser's, or the owner of
    the SQLite file dropping and recreating them)."""
    with store.engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SET LOCAL session_replication_role = replica"))
            yield conn
            return
        saved = conn.execute(text("SELECT name, sql FROM sqlite_master "
                                  "WHERE type = 'trigger'")).all()
        for name, _ in saved:
            conn.execute(text(f"DROP TRIGGER {name}"))
        yield conn
        for _, sql in saved:
            conn.execute(text(sql))


DEEP = "[" * 100_000 + "]" * 100_000
CASES_CHANGED = "cases: BROKEN at cases id 1: the stored content or the rules content it names"
RULES_BROKEN = r"BROKEN at rules_versions 'article19@[0-9a-f]{12}': the stored content "
# name: (statement, dialects, what `audit verify` must say)
MALFORMED: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "chain head length not a number": (
        "UPDATE chain_heads SET length = 'three' WHERE chain = 'cases'", ("sqlite",),
        (re.escape("cases: BROKEN at cases end: the chain head row cannot be read (its length "
                   "is 'three', not a whole number)"),)),
    "chain head length infinite": (
        "UPDATE chain_heads SET length = 1e999 WHERE chain = 'cases'", ("sqlite",),
        (re.escape("cases: BROKEN at cases end: the chain head row cannot be read (its length "
                   "is inf, not a whole number)"),)),
    "chain head length a fraction": (
        "UPDATE chain_heads SET length = 3.5 WHERE chain = 'cases'", ("sqlite",),
        (re.escape("cases: BROKEN at cases end: the chain head row cannot be read (its length "
                   "is 3.5, not a whole number)"),)),
    "chain head last hash not text": (
        "UPDATE chain_heads SET last_hash = x'00' WHERE chain = 'users'", ("sqlite",),
        (re.escape("users: BROKEN at users end: the chain head row cannot be read (its last "
                   "hash is b'\\x00', not text)"),)),
    "rules content a JSON array": (
        "UPDATE rules_versions SET content = '[1, 2]'", ("sqlite", "postgresql"),
        (re.escape(CASES_CHANGED), RULES_BROKEN + "is a JSON array, not a rules table")),
    "rules content JSON null": (
        "UPDATE rules_versions SET content = 'null'", ("sqlite", "postgresql"),
        (re.escape(CASES_CHANGED), RULES_BROKEN + "is JSON null, not a rules table")),
    "rules table whose regime is not a table": (
        """UPDATE rules_versions SET content = '{"meta": {"name": "x"}, "regime": [1], """
        """"routes": []}'""", ("sqlite", "postgresql"),
        (re.escape(CASES_CHANGED), RULES_BROKEN + r"is not a rules table \(")),
    "rules table whose routes are numbers": (
        "UPDATE rules_versions SET content = replace(content, '\"routes\":[', "
        "'\"routes\":[1,')", ("sqlite", "postgresql"),
        (re.escape(CASES_CHANGED), RULES_BROKEN + r"is not a rules table \(")),
    "rules content nested too deep to read": (
        f"UPDATE rules_versions SET content = '{DEEP}'", ("sqlite", "postgresql"),
        (re.escape(CASES_CHANGED), RULES_BROKEN + r"is not JSON \(maximum recursion depth")),
    "rules content stored as bytes": (
        "UPDATE rules_versions SET content = CAST(content AS BLOB)", ("sqlite",),
        (re.escape(CASES_CHANGED), RULES_BROKEN + r"is not text \(bytes\)")),
    "a case's date that is no date": (
        "UPDATE cases SET created_at = 'yesterday' WHERE id = 2", ("sqlite",),
        (re.escape("cases: BROKEN at cases id 2: the row cannot be read (Invalid isoformat "
                   "string: 'yesterday')"),)),
    "a user disabled at a date that is no date": (
        "UPDATE users SET disabled_at = 'never' WHERE id = 2", ("sqlite",),
        (re.escape("users: BROKEN at users id 2: the row cannot be read"),)),
    "an audit event disabling user 1e999": (
        """UPDATE audit_events SET action = 'user.disable', detail = '{"user_id": 1e999}' """
        """WHERE id = 3""", ("sqlite", "postgresql"),
        (re.escape("audit_events: BROKEN at audit_events id 3: the stored content does not "
                   "match its hash"),)),
}


@pytest.mark.parametrize(("kind", "case"), [(k, c) for c, (_, kinds, _) in MALFORMED.items()
                                            for k in kinds])
def test_audit_verify_reports_what_no_writer_of_the_store_writes_without_a_traceback(
        kind, case, tmp_path):
    statement, _, expected = MALFORMED[case]
    with seeded_store(kind, tmp_path) as store:
        with around_the_triggers(store) as conn:
            conn.execute(text(statement))
        r = verify_cli(store)
        assert r.exit_code == 1, r.output
        assert "Traceback" not in r.output
        for line in expected:
            assert re.search(line, r.output), r.output
        assert r.output.rstrip().endswith("audit verify: TAMPERING DETECTED")
        assert not store.verify().intact
