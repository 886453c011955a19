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

from diferida.service.store import triggers
from diferida.service.store.chain import CHAINS, GENESIS, chained, content_sha256

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

CHAINED = triggers.CHAINED

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
            op.execute(triggers.SQLITE_TRIGGERS[f"{table}_no_update"].sql)


def _sqlite_triggers() -> None:
    """The definitions are in `triggers`, which `audit verify` compares with."""
    for trigger in triggers.SQLITE_GUARDS:
        op.execute(trigger.sql)


def _postgresql_triggers() -> None:
    for function in triggers.PG_GUARD_FUNCTIONS:
        op.execute(function.sql)
    for trigger in triggers.PG_GUARDS:
        op.execute(trigger.sql)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for trigger in triggers.PG_GUARDS:
            op.execute(f"DROP TRIGGER {trigger.name} ON {trigger.table}")
        for function in triggers.PG_GUARD_FUNCTIONS:
            op.execute(f"DROP FUNCTION {function.name}()")
    else:
        for trigger in triggers.SQLITE_GUARDS:
            op.execute(f"DROP TRIGGER {trigger.name}")
    op.drop_table("chain_heads")
    for table in CHAINED:
        op.drop_column(table, "row_hash")
        op.drop_column(table, "prev_hash")
