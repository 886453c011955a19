"""Tamper-evidence: hash chains over cases, audit events and users; closing
the replace, truncate and users paths around the append-only triggers.

Adds `prev_hash` and `row_hash` to cases, audit_events and users, and the
table `chain_heads`; gives every existing row its hash, in id order (the
chain vouches for rows as they are at this migration). Then:

* SQLite: `REPLACE`, `INSERT OR REPLACE` and upserts delete or rewrite a
  conflicting row without firing DELETE triggers (unless the connection that
  does it turns `recursive_triggers` on, which a tampering client would not).
  A BEFORE INSERT trigger on each protected table refuses an insert whose key
  (primary or unique) already exists, before any conflict resolution, from any
  client. Rows without their hash are refused.
* PostgreSQL: TRUNCATE is refused (BEFORE TRUNCATE triggers). Upserts fire the
  UPDATE triggers, which refuse them.
* Both: `users` rows cannot be deleted, and the only change allowed is setting
  `disabled_at` once (disabling a user; nothing re-enables one). `chain_heads`
  rows can only grow.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from diferida.service.store.chain import CHAINS, GENESIS, chained, content_sha256

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

CHAINED = ("cases", "audit_events", "users")
NO_TRUNCATE = ("cases", "audit_events", "rules_versions", "users", "chain_heads")
# every key (primary or unique) of each table, for the SQLite replace guard
KEYS = {
    "cases": ("id = NEW.id", "(participant_id = NEW.participant_id AND version = NEW.version)",
              "supersedes = NEW.supersedes"),
    "audit_events": ("id = NEW.id",),
    "rules_versions": ("version = NEW.version",),
    "users": ("id = NEW.id", "name = NEW.name", "token_hash = NEW.token_hash"),
    "chain_heads": ("chain = NEW.chain",),
}
USER_FIXED = ("id", "name", "role", "token_hash", "created_at", "prev_hash", "row_hash")

_TYPES = {"id": sa.BigInteger, "version": sa.Integer, "supersedes": sa.BigInteger,
          "author_id": sa.Integer, "user_id": sa.Integer, "case_id": sa.BigInteger,
          "status_code": sa.Integer, "as_of": sa.Date, "created_at": sa.DateTime(timezone=True),
          "at": sa.DateTime(timezone=True)}


def _table(name: str, *extra: str) -> sa.TableClause:
    return sa.table(name, *(sa.column(c, _TYPES.get(c, sa.Text))
                            for c in ("id", *CHAINS[name], *extra)))


def upgrade() -> None:
    bind = op.get_bind()
    pg = bind.dialect.name == "postgresql"
    for table in CHAINED:
        op.add_column(table, sa.Column("prev_hash", sa.String(64), nullable=True))
        op.add_column(table, sa.Column("row_hash", sa.String(64), nullable=True))
    op.create_table(
        "chain_heads",
        sa.Column("chain", sa.String(32), nullable=False),
        sa.Column("length", sa.BigInteger(), nullable=False),
        sa.Column("last_id", sa.BigInteger(), nullable=True),
        sa.Column("last_hash", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("chain", name=op.f("pk_chain_heads")),
    )
    _backfill(bind, pg)
    if pg:
        for table in CHAINED:
            for column in ("prev_hash", "row_hash"):
                op.alter_column(table, column, existing_type=sa.String(64), nullable=False)
        _postgresql_triggers()
    else:
        _sqlite_triggers()


def _backfill(bind, pg: bool) -> None:
    rules = {v: content_sha256(c)
             for v, c in bind.execute(sa.text("SELECT version, content FROM rules_versions"))}
    # the append-only triggers refuse the UPDATE that stores the hashes
    _append_only_updates(pg, allow=True)
    for chain in CHAINED:
        t = _table(chain)
        rows = bind.execute(sa.select(t).order_by(t.c.id)).mappings()
        hashes = list(chained(chain, rows, rules))
        if hashes:
            bind.execute(sa.text(f"UPDATE {chain} SET prev_hash = :p, row_hash = :h "
                                 f"WHERE id = :i"),
                         [{"i": i, "p": p, "h": h} for i, p, h in hashes])
        last_id, _, last_hash = hashes[-1] if hashes else (None, None, GENESIS)
        bind.execute(sa.text("INSERT INTO chain_heads (chain, length, last_id, last_hash) "
                             "VALUES (:c, :n, :i, :h)"),
                     {"c": chain, "n": len(hashes), "i": last_id, "h": last_hash})
    _append_only_updates(pg, allow=False)


def _append_only_updates(pg: bool, allow: bool) -> None:
    for table in ("cases", "audit_events"):
        if pg:
            op.execute(f"ALTER TABLE {table} {'DISABLE' if allow else 'ENABLE'} "
                       f"TRIGGER {table}_append_only")
        elif allow:
            op.execute(f"DROP TRIGGER {table}_no_update")
        else:
            op.execute(f"CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table} "
                       f"BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END")


def _sqlite_triggers() -> None:
    for table, keys in KEYS.items():
        op.execute(f"CREATE TRIGGER {table}_no_replace BEFORE INSERT ON {table} "
                   f"WHEN EXISTS (SELECT 1 FROM {table} WHERE {' OR '.join(keys)}) "
                   f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: a row with this key "
                   f"exists and is never replaced'); END")
    for table in CHAINED:
        op.execute(f"CREATE TRIGGER {table}_hash_required BEFORE INSERT ON {table} "
                   f"WHEN NEW.prev_hash IS NULL OR NEW.row_hash IS NULL "
                   f"BEGIN SELECT RAISE(ABORT, '{table} rows need their chain hash'); END")
    fixed = " AND ".join(f"NEW.{c} IS OLD.{c}" for c in USER_FIXED)
    op.execute("CREATE TRIGGER users_no_delete BEFORE DELETE ON users "
               "BEGIN SELECT RAISE(ABORT, 'users are never deleted: disable them'); END")
    op.execute(f"CREATE TRIGGER users_only_disable BEFORE UPDATE ON users "
               f"WHEN NOT (OLD.disabled_at IS NULL AND NEW.disabled_at IS NOT NULL AND {fixed}) "
               f"BEGIN SELECT RAISE(ABORT, 'users: the only change allowed is disabling a "
               f"user'); END")
    op.execute("CREATE TRIGGER chain_heads_no_delete BEFORE DELETE ON chain_heads "
               "BEGIN SELECT RAISE(ABORT, 'chain_heads is append-only'); END")
    op.execute("CREATE TRIGGER chain_heads_only_grow BEFORE UPDATE ON chain_heads "
               "WHEN NOT (NEW.chain IS OLD.chain AND NEW.length > OLD.length "
               "AND NEW.last_id IS NOT NULL "
               "AND (OLD.last_id IS NULL OR NEW.last_id > OLD.last_id)) "
               "BEGIN SELECT RAISE(ABORT, 'chain_heads: a chain only grows'); END")


def _postgresql_triggers() -> None:
    for table in NO_TRUNCATE:
        op.execute(f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
                   f"FOR EACH STATEMENT EXECUTE FUNCTION diferida_append_only()")
    fixed = " AND ".join(f"NEW.{c} IS NOT DISTINCT FROM OLD.{c}" for c in USER_FIXED)
    op.execute(f"""
        CREATE FUNCTION diferida_users_only_disable() RETURNS trigger AS $$
        BEGIN
            IF TG_OP = 'UPDATE' AND OLD.disabled_at IS NULL AND NEW.disabled_at IS NOT NULL
               AND {fixed} THEN
                RETURN NEW;
            END IF;
            RAISE EXCEPTION 'users: the only change allowed is disabling a user (% refused)',
                TG_OP;
        END
        $$ LANGUAGE plpgsql
    """)
    op.execute("CREATE TRIGGER users_only_disable BEFORE UPDATE OR DELETE ON users "
               "FOR EACH ROW EXECUTE FUNCTION diferida_users_only_disable()")
    op.execute("""
        CREATE FUNCTION diferida_chain_heads_only_grow() RETURNS trigger AS $$
        BEGIN
            IF TG_OP = 'UPDATE' AND NEW.chain = OLD.chain AND NEW.length > OLD.length
               AND NEW.last_id IS NOT NULL
               AND (OLD.last_id IS NULL OR NEW.last_id > OLD.last_id) THEN
                RETURN NEW;
            END IF;
            RAISE EXCEPTION 'chain_heads: a chain only grows (% refused)', TG_OP;
        END
        $$ LANGUAGE plpgsql
    """)
    op.execute("CREATE TRIGGER chain_heads_only_grow BEFORE UPDATE OR DELETE ON chain_heads "
               "FOR EACH ROW EXECUTE FUNCTION diferida_chain_heads_only_grow()")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table in NO_TRUNCATE:
            op.execute(f"DROP TRIGGER {table}_no_truncate ON {table}")
        op.execute("DROP TRIGGER users_only_disable ON users")
        op.execute("DROP FUNCTION diferida_users_only_disable()")
        op.execute("DROP TRIGGER chain_heads_only_grow ON chain_heads")
        op.execute("DROP FUNCTION diferida_chain_heads_only_grow()")
    else:
        for table in KEYS:
            op.execute(f"DROP TRIGGER {table}_no_replace")
        for table in CHAINED:
            op.execute(f"DROP TRIGGER {table}_hash_required")
        for name in ("users_no_delete", "users_only_disable", "chain_heads_no_delete",
                     "chain_heads_only_grow"):
            op.execute(f"DROP TRIGGER {name}")
    op.drop_table("chain_heads")
    for table in CHAINED:
        op.drop_column(table, "row_hash")
        op.drop_column(table, "prev_hash")
