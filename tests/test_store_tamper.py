"""Tampering with the case store directly in the database, on SQLite and on
PostgreSQL: the database refuses every rewrite (REPLACE, INSERT OR REPLACE,
upserts, UPDATE, DELETE, TRUNCATE), and what a superuser does around the
triggers is found by `diferida audit verify`, which names the first broken
link."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

import diferida
from diferida.cli import main
from diferida.service.store import NewEvent, Store, User, hash_token
from diferida.service.store.chain import GENESIS, chained, content_sha256, row_hash
from diferida.service.testing import database_for_tests

AS_OF = date(2026, 11, 29)
EXAMPLE_1 = {"participant_id": "P-1", "birth_date": "1970-05-10", "entry_date": "1988-07-01",
             "separation_date": "2010-06-30", "creditable_service_years": "22",
             "average_compensation": "30000.00", "group": "general", "refund_requested": False}
TABLES = ("users", "rules_versions", "cases", "audit_events", "chain_heads")
CASE_COLUMNS = ("id", "participant_id", "version", "supersedes", "inputs", "result",
                "rules_version", "as_of", "lang", "status", "author_id", "note", "created_at",
                "prev_hash", "row_hash")
AUDIT_COLUMNS = ("id", "at", "user_id", "user_name", "role", "action", "case_id",
                 "participant_id", "method", "path", "status_code", "detail", "prev_hash",
                 "row_hash")
USER_COLUMNS = ("id", "name", "role", "token_hash", "created_at", "disabled_at", "prev_hash",
                "row_hash")


def record(store: Store, author: User, inputs: dict, supersedes: int | None = None):
    rules = diferida.load_rules()
    result = diferida.evaluate(inputs, as_of=AS_OF, rules=rules, lang="en").to_dict()
    return store.record_case(
        participant_id=inputs["participant_id"], inputs=inputs, result=result,
        rules_version=rules.version, rules_name=rules.name, rules_content=rules.resolved,
        as_of=AS_OF, lang="en", author=author, supersedes=supersedes, note=None,
        event=lambda c: NewEvent("case.correct" if supersedes else "case.create", "POST",
                                 "/api/v1/cases", 201, user=author, case_id=c.id,
                                 participant_id=c.participant_id))


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path) -> Iterator[Store]:
    """Users 1 ana (analyst), 2 ines (auditor), 3 old (disabled); cases 1 and
    2 (P-1, versions 1 and 2) and 3 (P-2); audit events 1-3 record the cases,
    4 a reading, 5 the disabling of user 3."""
    with database_for_tests(request.param, tmp_path) as url:
        s = Store(url)
        s.upgrade()
        ana = s.add_user("ana", "analyst")[0]
        s.add_user("ines", "auditor")
        s.add_user("old", "analyst")
        first = record(s, ana, EXAMPLE_1)
        record(s, ana, {**EXAMPLE_1, "average_compensation": "30600.00"}, supersedes=first.id)
        record(s, ana, {**EXAMPLE_1, "participant_id": "P-2"})
        s.audit(NewEvent("case.read", "GET", "/api/v1/cases/1", 200, user=ana, case_id=1,
                         participant_id="P-1"))
        assert s.disable_user("old")
        assert s.verify().intact
        yield s
        s.dispose()


def snapshot(store: Store) -> dict[str, list[tuple]]:
    with store.engine.connect() as conn:
        return {t: [tuple(r) for r in conn.execute(text(f"SELECT * FROM {t} ORDER BY 1"))]
                for t in TABLES}


def copy_row(verb: str, table: str, columns: tuple[str, ...], row_id: int,
             **changed: str) -> str:
    """`verb INTO table (columns) SELECT ... FROM table WHERE id = row_id`,
    with some columns replaced by SQL expressions: a rewrite of a stored row
    through an insert."""
    exprs = ", ".join(changed.get(c, c) for c in columns)
    return (f"{verb} INTO {table} ({', '.join(columns)}) "
            f"SELECT {exprs} FROM {table} WHERE id = {row_id}")


def stored_amount(store: Store, case_id: int) -> str:
    return json.loads(store.case(case_id).result)["annual_amount"]


# -- the database refuses ----------------------------------------------------

FORGED_AUDIT = ("INSERT INTO audit_events (id, at, action, method, path, status_code) "
                "VALUES (99, '2026-11-29 10:00:00', 'case.read', 'GET', '/x', 200)")
COMMON = {
    "update a case's result": "UPDATE cases SET result = '{}' WHERE id = 1",
    "delete a case": "DELETE FROM cases WHERE id = 3",
    "update an audit event's user": "UPDATE audit_events SET user_name = 'ines' WHERE id = 1",
    "delete the audit trail": "DELETE FROM audit_events",
    "update stored rules": "UPDATE rules_versions SET content = '{}'",
    "delete stored rules": "DELETE FROM rules_versions",
    "delete a user": "DELETE FROM users WHERE id = 2",
    "change a user's role": "UPDATE users SET role = 'analyst' WHERE id = 2",
    "swap a user's token": f"UPDATE users SET token_hash = '{hash_token('dfr_mine')}' WHERE id = 2",
    "re-enable a disabled user": "UPDATE users SET disabled_at = NULL WHERE id = 3",
    "move a disabling date": "UPDATE users SET disabled_at = created_at WHERE id = 3",
    "disable a user while renaming them":
        "UPDATE users SET disabled_at = created_at, name = 'x' WHERE id = 1",
    "reset a chain head":
        f"UPDATE chain_heads SET length = 0, last_id = NULL, last_hash = '{GENESIS}'",
    "shorten a chain head": "UPDATE chain_heads SET length = length - 1, last_id = last_id - 1",
    "delete a chain head": "DELETE FROM chain_heads WHERE chain = 'audit_events'",
    "insert an audit event without its hash": FORGED_AUDIT,
}
SQLITE_ONLY = {
    "REPLACE INTO cases (amount rewritten)": copy_row(
        "REPLACE", "cases", CASE_COLUMNS, 1,
        result="json_set(result, '$.annual_amount', '99999.00')"),
    "INSERT OR REPLACE INTO audit_events (user rewritten)": copy_row(
        "INSERT OR REPLACE", "audit_events", AUDIT_COLUMNS, 1, user_name="'ines'"),
    "INSERT OR REPLACE INTO cases under a new id (same participant and version)": copy_row(
        "INSERT OR REPLACE", "cases", CASE_COLUMNS, 1, id="1000",
        result="json_set(result, '$.annual_amount', '99999.00')"),
    "REPLACE INTO users (role rewritten)": copy_row(
        "REPLACE", "users", USER_COLUMNS, 2, role="'analyst'"),
    "REPLACE INTO users (disabled user revived)": copy_row(
        "REPLACE", "users", USER_COLUMNS, 3, disabled_at="NULL"),
    "REPLACE INTO rules_versions": "REPLACE INTO rules_versions "
        "SELECT version, name, '{}', created_at FROM rules_versions",
    "REPLACE INTO chain_heads": "REPLACE INTO chain_heads "
        f"VALUES ('audit_events', 0, NULL, '{GENESIS}')",
    "upsert into cases": copy_row("INSERT", "cases", CASE_COLUMNS, 1)
        + " ON CONFLICT(id) DO UPDATE SET note = 'x'",
    "UPDATE OR REPLACE cases": "UPDATE OR REPLACE cases SET version = 1 WHERE id = 2",
}
POSTGRESQL_ONLY = {
    "TRUNCATE audit_events": "TRUNCATE audit_events",
    "TRUNCATE cases": "TRUNCATE cases CASCADE",
    "TRUNCATE users": "TRUNCATE users CASCADE",
    "TRUNCATE rules_versions": "TRUNCATE rules_versions CASCADE",
    "TRUNCATE chain_heads": "TRUNCATE chain_heads",
    "upsert into cases (amount rewritten)": copy_row("INSERT", "cases", CASE_COLUMNS, 1)
        + " ON CONFLICT (id) DO UPDATE SET result = "
          "jsonb_set(EXCLUDED.result::jsonb, '{annual_amount}', '\"99999.00\"')::text",
    "upsert into audit_events (user rewritten)": copy_row(
        "INSERT", "audit_events", AUDIT_COLUMNS, 1)
        + " ON CONFLICT (id) DO UPDATE SET user_name = 'ines'",
    "upsert into users (role rewritten)": copy_row("INSERT", "users", USER_COLUMNS, 2)
        + " ON CONFLICT (id) DO UPDATE SET role = 'analyst'",
    "upsert into rules_versions": "INSERT INTO rules_versions SELECT * FROM rules_versions "
        "ON CONFLICT (version) DO UPDATE SET content = '{}'",
}


def refused_statements(dialect: str) -> dict[str, str]:
    return {**COMMON, **(SQLITE_ONLY if dialect == "sqlite" else POSTGRESQL_ONLY)}


def test_the_database_refuses_every_rewrite_of_the_record(store):
    """Every statement is tried in its own transaction; each must fail, leave
    every table as it was, and leave the chains intact."""
    before = snapshot(store)
    amount = stored_amount(store, 1)
    accepted = []
    for name, statement in refused_statements(store.engine.dialect.name).items():
        try:
            with store.engine.begin() as conn:
                conn.execute(text(statement))
        except DBAPIError:
            continue
        accepted.append(name)
    assert accepted == []
    assert snapshot(store) == before
    assert stored_amount(store, 1) == amount != "99999.00"
    assert store.verify().intact


def test_disabling_a_user_is_the_one_change_the_database_allows_on_users(store):
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE users SET disabled_at = created_at WHERE id = 2"))
    assert [u.name for u in store.users() if u.disabled_at is None] == ["ana"]
    # done behind the store's back it is not in the audit trail, but nothing
    # recorded was changed: the chains hold
    assert store.verify().intact


# -- a superuser goes around the triggers: `audit verify` finds it -------------

@contextmanager
def around_the_triggers(store: Store) -> Iterator[Any]:
    """A connection whose statements the triggers do not stop, as a superuser
    (or anyone who can write the SQLite file) could open; the triggers are in
    force again afterwards, so only the hash chains can tell."""
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


def _result_with_amount(store: Store, case_id: int, amount: str) -> str:
    result = json.loads(store.case(case_id).result)
    result["annual_amount"] = amount
    return json.dumps(result, sort_keys=True, separators=(",", ":"))


def _forged_event(store: Store, conn, *, good_hash: bool) -> dict[str, Any]:
    head = conn.execute(text("SELECT last_id, last_hash FROM chain_heads "
                             "WHERE chain = 'audit_events'")).one()
    row = {"id": head.last_id + 1, "at": datetime(2026, 11, 29, 10, tzinfo=UTC),
           "user_id": 2, "user_name": "ines", "role": "auditor", "action": "case.read",
           "case_id": 1, "participant_id": "P-1", "method": "GET", "path": "/api/v1/cases/1",
           "status_code": 200, "detail": None}
    row_hash_ = row_hash("audit_events", head.last_hash, row) if good_hash else "f" * 64
    at = "2026-11-29 10:00:00.000000" if conn.dialect.name == "sqlite" else row["at"]
    conn.execute(text(f"INSERT INTO audit_events ({', '.join(AUDIT_COLUMNS)}) VALUES "
                      f"({', '.join(':' + c for c in AUDIT_COLUMNS)})"),
                 {**row, "at": at, "prev_hash": head.last_hash, "row_hash": row_hash_})
    return {**row, "row_hash": row_hash_}


def tamper_amount(store, conn):
    conn.execute(text("UPDATE cases SET result = :r WHERE id = 1"),
                 {"r": _result_with_amount(store, 1, "99999.00")})


def tamper_amount_and_its_hash(store, conn):
    """The row's own hash recomputed too: the next row's link breaks."""
    row = dict(conn.execute(text("SELECT * FROM cases WHERE id = 1")).mappings().one())
    row["result"] = _result_with_amount(store, 1, "99999.00")
    row["as_of"] = date.fromisoformat(str(row["as_of"]))
    row["created_at"] = store.case(1).created_at
    rules = conn.execute(text("SELECT content FROM rules_versions")).scalar_one()
    new_hash = row_hash("cases", row["prev_hash"], row, content_sha256(rules))
    conn.execute(text("UPDATE cases SET result = :r, row_hash = :h WHERE id = 1"),
                 {"r": row["result"], "h": new_hash})


def tamper_audit_user(store, conn):
    conn.execute(text("UPDATE audit_events SET user_name = 'ines' WHERE id = 2"))


def tamper_delete_middle_event(store, conn):
    conn.execute(text("DELETE FROM audit_events WHERE id = 2"))


def tamper_delete_last_case(store, conn):
    conn.execute(text("DELETE FROM cases WHERE id = 3"))


def tamper_empty_audit_trail(store, conn):
    conn.execute(text("TRUNCATE audit_events" if conn.dialect.name == "postgresql"
                      else "DELETE FROM audit_events"))


def tamper_swap_token(store, conn):
    conn.execute(text("UPDATE users SET token_hash = :h WHERE id = 2"),
                 {"h": hash_token("dfr_mine")})


def tamper_promote_role(store, conn):
    conn.execute(text("UPDATE users SET role = 'analyst' WHERE id = 2"))


def tamper_re_enable_user(store, conn):
    conn.execute(text("UPDATE users SET disabled_at = NULL WHERE id = 3"))


def tamper_rules_content(store, conn):
    content = json.loads(conn.execute(text("SELECT content FROM rules_versions")).scalar_one())
    content["minimum"]["rate"] = "0.99"
    conn.execute(text("UPDATE rules_versions SET content = :c"),
                 {"c": json.dumps(content, sort_keys=True, separators=(",", ":"))})


def tamper_swap_two_events(store, conn):
    one, two = (dict(conn.execute(text(f"SELECT user_name, action, case_id FROM audit_events "
                                       f"WHERE id = {i}")).mappings().one()) for i in (1, 4))
    for target, values in ((1, two), (4, one)):
        conn.execute(text(f"UPDATE audit_events SET user_name = :user_name, action = :action, "
                          f"case_id = :case_id WHERE id = {target}"), values)


def tamper_forged_event(store, conn):
    _forged_event(store, conn, good_hash=False)


def tamper_forged_event_head_kept(store, conn):
    _forged_event(store, conn, good_hash=True)


def tamper_event_without_hash(store, conn):
    if conn.dialect.name == "postgresql":  # a superuser can lift the constraint too
        conn.execute(text("ALTER TABLE audit_events ALTER row_hash DROP NOT NULL, "
                          "ALTER prev_hash DROP NOT NULL"))
    conn.execute(text(FORGED_AUDIT))


def tamper_reorder_case_ids(store, conn):
    """P-2's case moved from id 3 to id 4: a reference to case 3 now misses."""
    conn.execute(text("UPDATE cases SET id = 4 WHERE id = 3"))


TAMPERING = {
    # name: (what is done, the first broken link `audit verify` must name)
    "amount changed": (tamper_amount, r"cases id 1: the stored content"),
    "amount and its row hash changed": (tamper_amount_and_its_hash,
                                        r"cases id 2: its previous hash does not match id 1"),
    "audit event's user changed": (tamper_audit_user, r"audit_events id 2: the stored content"),
    "audit event removed": (tamper_delete_middle_event,
                            r"audit_events id 3: its previous hash does not match id 1"),
    "last case removed": (tamper_delete_last_case,
                          r"cases end: the chain head records 3 rows ending at id 3, "
                          r"the table has 2 ending at id 2"),
    "audit trail emptied": (tamper_empty_audit_trail,
                            r"audit_events end: the chain head records 5 rows"),
    "token swapped": (tamper_swap_token, r"users id 2: the stored content"),
    "role changed": (tamper_promote_role, r"users id 2: the stored content"),
    "disabled user re-enabled": (tamper_re_enable_user,
                                 r"users id 3 \('old'\): active, but disabled by audit event 5"),
    "rules content changed": (tamper_rules_content,
                              r"cases id 1: the stored content or the rules content"),
    "two audit events swapped": (tamper_swap_two_events,
                                 r"audit_events id 1: the stored content"),
    "event forged (made-up hash)": (tamper_forged_event,
                                    r"audit_events id 6: the stored content"),
    "event forged (right hash, head not moved)": (
        tamper_forged_event_head_kept,
        r"audit_events end: the chain head records 5 rows ending at id 5, the table has 6"),
    "event inserted without hash": (tamper_event_without_hash,
                                    r"audit_events id 99: the row has no hash"),
    "case renumbered": (tamper_reorder_case_ids, r"cases id 4: the stored content"),
}


def verify_cli(store: Store, *extra: str):
    return CliRunner().invoke(main, ["audit", "verify", "--database-url", store.url, *extra],
                              catch_exceptions=False)


@pytest.mark.parametrize("tampering", list(TAMPERING))
def test_audit_verify_names_the_first_broken_link_of_a_direct_edit(store, tampering):
    do, expected = TAMPERING[tampering]
    with around_the_triggers(store) as conn:
        do(store, conn)
    report = store.verify()
    assert not report.intact
    assert report.missing_triggers == []  # only the chains could tell
    r = verify_cli(store)
    assert r.exit_code == 1, r.output
    assert "TAMPERING DETECTED" in r.output
    assert re.search(expected, r.output), r.output


def test_audit_verify_reports_an_intact_store_with_a_summary_and_exit_0(store):
    r = verify_cli(store)
    assert r.exit_code == 0, r.output
    assert "cases: 3 rows, chain intact; anchor cases:3:" in r.output
    assert "audit_events: 5 rows, chain intact" in r.output
    assert "users: 3 rows, chain intact" in r.output
    assert "rules_versions: 1 rows checked" in r.output
    assert "triggers: all in place" in r.output
    assert r.output.rstrip().endswith("audit verify: intact")


def test_a_trigger_dropped_or_disabled_is_reported(store):
    with store.engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("ALTER TABLE audit_events DISABLE TRIGGER audit_events_no_truncate"))
            missing = "audit_events_no_truncate"
        else:
            conn.execute(text("DROP TRIGGER audit_events_no_replace"))
            missing = "audit_events_no_replace"
    r = verify_cli(store)
    assert r.exit_code == 1
    assert f"triggers MISSING or disabled (the database no longer refuses changes): {missing}" \
        in r.output


def test_a_dropped_table_is_tampering(store):
    with store.engine.begin() as conn:
        conn.execute(text("DROP TABLE audit_events"))
    r = verify_cli(store)
    assert r.exit_code == 1 and "TAMPERING DETECTED" in r.output


def test_a_whole_chain_rewritten_and_rehashed_is_caught_by_an_anchor_kept_outside(store):
    """Rewriting a case and re-hashing every later row (and the head) leaves
    a chain that is consistent in itself; the anchor printed by an earlier
    `audit verify` and kept elsewhere is what no longer matches."""
    anchor = next(line.split("anchor ")[1] for line in verify_cli(store).output.splitlines()
                  if line.startswith("cases:"))
    with around_the_triggers(store) as conn:
        conn.execute(text("UPDATE cases SET result = :r WHERE id = 1"),
                     {"r": _result_with_amount(store, 1, "99999.00")})
        rules = {v: content_sha256(c) for v, c in
                 conn.execute(text("SELECT version, content FROM rules_versions"))}
        rows = [{**dict(r), "as_of": date.fromisoformat(str(r["as_of"]))}
                for r in conn.execute(text("SELECT * FROM cases ORDER BY id")).mappings()]
        for row, case in zip(rows, [store.case(r["id"]) for r in rows], strict=True):
            row["created_at"] = case.created_at
        hashes = list(chained("cases", rows, rules))
        for i, p, h in hashes:
            conn.execute(text("UPDATE cases SET prev_hash = :p, row_hash = :h WHERE id = :i"),
                         {"i": i, "p": p, "h": h})
        conn.execute(text("UPDATE chain_heads SET last_hash = :h WHERE chain = 'cases'"),
                     {"h": hashes[-1][2]})
    assert stored_amount(store, 1) == "99999.00"
    assert verify_cli(store).exit_code == 0  # consistent in itself
    r = verify_cli(store, "--anchor", anchor)
    assert r.exit_code == 1
    assert "cases id 3: its hash is not the anchor recorded for it" in r.output


def test_an_anchor_must_name_a_chain_an_id_and_a_hash(store):
    r = verify_cli(store, "--anchor", "cases:1:nothex")
    assert r.exit_code == 2 and "--anchor" in r.output


def test_audit_verify_of_a_database_not_yet_migrated_says_so_with_exit_2(tmp_path):
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    Store(url).dispose()  # the file exists, without tables
    r = CliRunner().invoke(main, ["audit", "verify", "--database-url", url])
    assert r.exit_code == 2 and "diferida db upgrade" in r.output
    r = CliRunner().invoke(main, ["audit", "verify", "--database-url",
                                  f"sqlite:///{tmp_path / 'none.db'}"])
    assert r.exit_code == 2 and "no database at" in r.output
    assert not (tmp_path / "none.db").exists()
