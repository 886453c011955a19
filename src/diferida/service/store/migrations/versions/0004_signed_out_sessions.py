"""Workbench sessions signed out, remembered by the database.

* `signed_out_sessions`: the SHA-256 of the random id of each workbench
  session signed out, with its sign-in and sign-out times. Every process of
  the service reads it, so a copy of a signed-out cookie is refused by every
  worker and after a restart. A row is deleted once the session's cookie
  is refused by the times it carries, signed (its absolute lifetime, its
  idle time and an hour after the sign-in).

The table holds no record: it is neither hash-chained nor append-only (rows
are pruned), and no existing row or trigger changes. `audit verify` reports
a trigger put on it, as on the other tables of the store.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "signed_out_sessions",
        sa.Column("session_sha256", sa.String(64), nullable=False),
        sa.Column("signed_in_at", TS, nullable=False),
        sa.Column("signed_out_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("session_sha256", name=op.f("pk_signed_out_sessions")),
    )
    op.create_index(op.f("ix_signed_out_sessions_signed_in_at"), "signed_out_sessions",
                    ["signed_in_at"])


def downgrade() -> None:
    """Back to 0003: the sessions signed out are forgotten (the release
    before this one remembers sign-outs in each process only)."""
    op.drop_index(op.f("ix_signed_out_sessions_signed_in_at"), "signed_out_sessions")
    op.drop_table("signed_out_sessions")
