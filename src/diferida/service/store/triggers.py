"""The triggers that make the database itself refuse changes to the record
(and, on PostgreSQL, the functions they run), each defined once: the
migrations create them from these definitions and `audit verify` compares
what the database holds with them, definition by definition, not name by
name. A trigger kept under its name but given another body, a function
emptied, a trigger disabled or left to fire only for replication sessions:
each is reported.

The definitions are those of the newest schema. The text of every SQLite
trigger is kept as migrations `0001`, `0002`, `0003` and `0005` first issued it (SQLite keeps
that text and reads the trigger from it). A change of a trigger is a new
migration that drops and recreates it from a new definition here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text

# tables whose rows are never updated or deleted
APPEND_ONLY = ("cases", "audit_events", "rules_versions")
# tables whose rows carry a hash chain (see .chain)
CHAINED = ("cases", "audit_events", "users")
# every table of the store
TABLES = ("cases", "audit_events", "rules_versions", "users", "chain_heads")
# every key (primary or unique) of each table, for the SQLite replace guard
KEYS = {
    "cases": ("id = NEW.id", "(participant_id = NEW.participant_id AND version = NEW.version)",
              "supersedes = NEW.supersedes"),
    "audit_events": ("id = NEW.id",),
    "rules_versions": ("version = NEW.version",),
    "users": ("id = NEW.id", "name = NEW.name", "token_hash = NEW.token_hash"),
    "chain_heads": ("chain = NEW.chain",),
}
# migration 0003 (the workbench): append-only tables, the chained ones among
# them, and their keys
WORKFLOW_APPEND_ONLY = ("user_passwords", "case_applications", "workflow_events", "letters")
WORKFLOW_CHAINED = ("user_passwords", "case_applications", "workflow_events")
WORKFLOW_KEYS = {
    "user_passwords": ("id = NEW.id",),
    "case_applications": ("id = NEW.id", "case_id = NEW.case_id"),
    "workflow_events": ("id = NEW.id",),
    "letters": ("case_id = NEW.case_id",),
}
# migration 0005: the users' names and titles (append-only, chained)
PROFILE_APPEND_ONLY = ("user_profiles",)
PROFILE_KEYS = {"user_profiles": ("id = NEW.id",)}
# every table the check looks at (case_states is derived and rewritten, and
# migration 0004's signed_out_sessions has its old rows deleted: no guard;
# a trigger put on either is still reported, one that drops the sign-outs
# written, say)
STORE_TABLES = (*TABLES, *WORKFLOW_APPEND_ONLY, "case_states", "signed_out_sessions",
                *PROFILE_APPEND_ONLY)
# what disabling a user leaves as it was
USER_FIXED = ("id", "name", "role", "token_hash", "created_at", "prev_hash", "row_hash")


def normalised(sql: str) -> str:
    """The definition with every run of white space made one space: how two
    definitions are compared."""
    return " ".join(str(sql).split())


def shortened(sql: str, limit: int = 160) -> str:
    flat = normalised(sql)
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


# -- SQLite ------------------------------------------------------------------

@dataclass(frozen=True)
class SqliteTrigger:
    name: str
    table: str
    sql: str  # the CREATE TRIGGER statement; sqlite_master keeps its text


def _sqlite_no_change(table: str, verb: str) -> SqliteTrigger:
    return SqliteTrigger(
        f"{table}_no_{verb}", table,
        f"CREATE TRIGGER {table}_no_{verb} BEFORE {verb.upper()} ON {table} "
        f"BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END")


def _sqlite_no_replace(table: str, keys: tuple[str, ...]) -> SqliteTrigger:
    return SqliteTrigger(
        f"{table}_no_replace", table,
        f"CREATE TRIGGER {table}_no_replace BEFORE INSERT ON {table} "
        f"WHEN EXISTS (SELECT 1 FROM {table} WHERE {' OR '.join(keys)}) "
        f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: a row with this key "
        f"exists and is never replaced'); END")


def _sqlite_hash_required(table: str) -> SqliteTrigger:
    return SqliteTrigger(
        f"{table}_hash_required", table,
        f"CREATE TRIGGER {table}_hash_required BEFORE INSERT ON {table} "
        f"WHEN NEW.prev_hash IS NULL OR NEW.row_hash IS NULL "
        f"BEGIN SELECT RAISE(ABORT, '{table} rows need their chain hash'); END")


_SQLITE_USER_FIXED = " AND ".join(f"NEW.{c} IS OLD.{c}" for c in USER_FIXED)

# migration 0001: UPDATE and DELETE refused on the append-only tables
SQLITE_APPEND_ONLY = tuple(_sqlite_no_change(t, v) for t in APPEND_ONLY
                           for v in ("update", "delete"))
# migration 0002: replacing inserts, rows without their hash, users, chain heads
SQLITE_GUARDS = (
    *(_sqlite_no_replace(t, keys) for t, keys in KEYS.items()),
    *(_sqlite_hash_required(t) for t in CHAINED),
    SqliteTrigger(
        "users_no_delete", "users",
        "CREATE TRIGGER users_no_delete BEFORE DELETE ON users "
        "BEGIN SELECT RAISE(ABORT, 'users are never deleted: disable them'); END"),
    SqliteTrigger(
        "users_only_disable", "users",
        f"CREATE TRIGGER users_only_disable BEFORE UPDATE ON users "
        f"WHEN NOT (OLD.disabled_at IS NULL AND NEW.disabled_at IS NOT NULL AND "
        f"{_SQLITE_USER_FIXED}) "
        f"BEGIN SELECT RAISE(ABORT, 'users: the only change allowed is disabling a "
        f"user'); END"),
    SqliteTrigger(
        "chain_heads_no_delete", "chain_heads",
        "CREATE TRIGGER chain_heads_no_delete BEFORE DELETE ON chain_heads "
        "BEGIN SELECT RAISE(ABORT, 'chain_heads is append-only'); END"),
    SqliteTrigger(
        "chain_heads_only_grow", "chain_heads",
        "CREATE TRIGGER chain_heads_only_grow BEFORE UPDATE ON chain_heads "
        "WHEN NOT (NEW.chain IS OLD.chain AND NEW.length > OLD.length "
        "AND NEW.last_id IS NOT NULL "
        "AND (OLD.last_id IS NULL OR NEW.last_id > OLD.last_id)) "
        "BEGIN SELECT RAISE(ABORT, 'chain_heads: a chain only grows'); END"),
)
# migration 0003: the workbench's tables
SQLITE_WORKFLOW = (
    *(_sqlite_no_change(t, v) for t in WORKFLOW_APPEND_ONLY for v in ("update", "delete")),
    *(_sqlite_no_replace(t, keys) for t, keys in WORKFLOW_KEYS.items()),
    *(_sqlite_hash_required(t) for t in WORKFLOW_CHAINED),
)
# the triggers of `users` (0002), created again when 0003 rebuilds the table
SQLITE_USERS = tuple(t for t in SQLITE_GUARDS if t.table == "users")
# migration 0005: the users' profiles
SQLITE_PROFILES = (
    *(_sqlite_no_change(t, v) for t in PROFILE_APPEND_ONLY for v in ("update", "delete")),
    *(_sqlite_no_replace(t, keys) for t, keys in PROFILE_KEYS.items()),
    *(_sqlite_hash_required(t) for t in PROFILE_APPEND_ONLY),
)
SQLITE_TRIGGERS = {t.name: t for t in (*SQLITE_APPEND_ONLY, *SQLITE_GUARDS, *SQLITE_WORKFLOW,
                                       *SQLITE_PROFILES)}


# -- PostgreSQL ----------------------------------------------------------------

@dataclass(frozen=True)
class PgFunction:
    name: str
    body: str  # PL/pgSQL, between the $$ (pg_proc.prosrc)

    @property
    def sql(self) -> str:
        return f"CREATE FUNCTION {self.name}() RETURNS trigger AS $${self.body}$$ LANGUAGE plpgsql"


@dataclass(frozen=True)
class PgTrigger:
    name: str
    table: str
    events: str  # as pg_get_triggerdef writes them: DELETE OR UPDATE, TRUNCATE
    level: str  # ROW or STATEMENT
    function: str

    @property
    def sql(self) -> str:
        """The CREATE TRIGGER statement, word for word as pg_get_triggerdef
        gives it back (with the table's schema before its name)."""
        return (f"CREATE TRIGGER {self.name} BEFORE {self.events} ON {self.table} "
                f"FOR EACH {self.level} EXECUTE FUNCTION {self.function}()")


PG_APPEND_ONLY_FUNCTION = PgFunction("diferida_append_only", """
            BEGIN
                RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
            END
            """)
_PG_USER_FIXED = " AND ".join(f"NEW.{c} IS NOT DISTINCT FROM OLD.{c}" for c in USER_FIXED)
PG_GUARD_FUNCTIONS = (
    PgFunction("diferida_users_only_disable", f"""
        BEGIN
            IF TG_OP = 'UPDATE' AND OLD.disabled_at IS NULL AND NEW.disabled_at IS NOT NULL
               AND {_PG_USER_FIXED} THEN
                RETURN NEW;
            END IF;
            RAISE EXCEPTION 'users: the only change allowed is disabling a user (% refused)',
                TG_OP;
        END
        """),
    PgFunction("diferida_chain_heads_only_grow", """
        BEGIN
            IF TG_OP = 'UPDATE' AND NEW.chain = OLD.chain AND NEW.length > OLD.length
               AND NEW.last_id IS NOT NULL
               AND (OLD.last_id IS NULL OR NEW.last_id > OLD.last_id) THEN
                RETURN NEW;
            END IF;
            RAISE EXCEPTION 'chain_heads: a chain only grows (% refused)', TG_OP;
        END
        """),
)
# migration 0001: UPDATE and DELETE refused on the append-only tables
PG_APPEND_ONLY = tuple(PgTrigger(f"{t}_append_only", t, "DELETE OR UPDATE", "ROW",
                                 PG_APPEND_ONLY_FUNCTION.name) for t in APPEND_ONLY)
# migration 0002: TRUNCATE on every table, users, chain heads
PG_GUARDS = (
    *(PgTrigger(f"{t}_no_truncate", t, "TRUNCATE", "STATEMENT", PG_APPEND_ONLY_FUNCTION.name)
      for t in TABLES),
    PgTrigger("users_only_disable", "users", "DELETE OR UPDATE", "ROW",
              "diferida_users_only_disable"),
    PgTrigger("chain_heads_only_grow", "chain_heads", "DELETE OR UPDATE", "ROW",
              "diferida_chain_heads_only_grow"),
)
# migration 0003: the workbench's tables
PG_WORKFLOW = (
    *(PgTrigger(f"{t}_append_only", t, "DELETE OR UPDATE", "ROW", PG_APPEND_ONLY_FUNCTION.name)
      for t in WORKFLOW_APPEND_ONLY),
    *(PgTrigger(f"{t}_no_truncate", t, "TRUNCATE", "STATEMENT", PG_APPEND_ONLY_FUNCTION.name)
      for t in WORKFLOW_APPEND_ONLY),
)
# migration 0005: the users' profiles
PG_PROFILES = (
    *(PgTrigger(f"{t}_append_only", t, "DELETE OR UPDATE", "ROW", PG_APPEND_ONLY_FUNCTION.name)
      for t in PROFILE_APPEND_ONLY),
    *(PgTrigger(f"{t}_no_truncate", t, "TRUNCATE", "STATEMENT", PG_APPEND_ONLY_FUNCTION.name)
      for t in PROFILE_APPEND_ONLY),
)
PG_FUNCTIONS = {f.name: f for f in (PG_APPEND_ONLY_FUNCTION, *PG_GUARD_FUNCTIONS)}
PG_TRIGGERS = {(t.table, t.name): t for t in (*PG_APPEND_ONLY, *PG_GUARDS, *PG_WORKFLOW,
                                              *PG_PROFILES)}

# pg_trigger.tgenabled: O fires in ordinary sessions, A always; D (disabled)
# and R (replica sessions only) never fire for an ordinary client
_PG_NOT_FIRING = {"D": "disabled", "R": "enabled only for replication sessions"}


# -- the check -----------------------------------------------------------------

@dataclass
class TriggerCheck:
    """How the triggers in the database differ from their definitions."""

    missing: list[str] = field(default_factory=list)  # absent or never firing
    changed: list[str] = field(default_factory=list)  # there, but not as defined
    unexpected: list[str] = field(default_factory=list)  # on the store's tables, not ours

    @property
    def intact(self) -> bool:
        return not (self.missing or self.changed or self.unexpected)


def check(conn) -> TriggerCheck:
    """Compare the triggers on the store's tables (and the functions they
    run) with their definitions."""
    if conn.dialect.name == "postgresql":
        return _check_postgresql(conn)
    return _check_sqlite(conn)


def _check_sqlite(conn) -> TriggerCheck:
    found = TriggerCheck()
    present = {name: (table, sql) for name, table, sql in conn.execute(text(
        "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger'"))}
    for name, trigger in SQLITE_TRIGGERS.items():
        if name not in present:
            found.missing.append(name)
            continue
        table, sql = present[name]
        if table != trigger.table or normalised(sql or "") != normalised(trigger.sql):
            found.changed.append(f"{name} is now `{shortened(sql or '')}`")
    found.unexpected += [f"{name} on {table}" for name, (table, _) in sorted(present.items())
                         if name not in SQLITE_TRIGGERS and str(table).lower() in STORE_TABLES]
    return found


_PG_TRIGGERS_SQL = """
    SELECT c.relname AS table_name, t.tgname AS name, t.tgenabled AS enabled,
           pg_get_triggerdef(t.oid) AS definition, quote_ident(n.nspname) AS schema,
           p.oid AS function_oid, p.proname AS function, p.prosrc AS body,
           l.lanname AS language, p.prorettype = CAST('trigger' AS regtype) AS returns_trigger
    FROM pg_trigger t
    JOIN pg_class c ON c.oid = t.tgrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_proc p ON p.oid = t.tgfoid
    JOIN pg_language l ON l.oid = p.prolang
    WHERE NOT t.tgisinternal
      AND t.tgrelid IN (SELECT to_regclass(x) FROM unnest(CAST(:tables AS text[])) x)
    ORDER BY c.relname, t.tgname
"""


def _check_postgresql(conn) -> TriggerCheck:
    found = TriggerCheck()
    present = {(r.table_name, r.name): r for r in conn.execute(
        text(_PG_TRIGGERS_SQL), {"tables": list(STORE_TABLES)})}
    bad_functions: dict[int, tuple[Any, list[str]]] = {}
    for key, trigger in PG_TRIGGERS.items():
        row = present.get(key)
        if row is None:
            found.missing.append(trigger.name)
            continue
        if row.enabled in _PG_NOT_FIRING:
            found.missing.append(f"{trigger.name} ({_PG_NOT_FIRING[row.enabled]})")
        # pg_get_triggerdef puts the table's schema before its name
        definition = str(row.definition).replace(f" ON {row.schema}.", " ON ", 1)
        if normalised(definition) != normalised(trigger.sql):
            found.changed.append(f"{trigger.name} is now `{shortened(row.definition)}`")
        function = PG_FUNCTIONS[trigger.function]
        if not (row.language == "plpgsql" and row.returns_trigger
                and normalised(row.body or "") == normalised(function.body)):
            bad_functions.setdefault(row.function_oid, (row, []))[1].append(trigger.name)
    found.changed += [f"the function {row.function}(), run by {', '.join(names)}: its body is "
                      f"now `{shortened(row.body or '')}` (LANGUAGE {row.language})"
                      for row, names in bad_functions.values()]
    found.unexpected += [f"{name} on {table}" for table, name in sorted(present)
                         if (table, name) not in PG_TRIGGERS]
    return found

