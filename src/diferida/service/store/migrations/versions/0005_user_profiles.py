"""The names and titles letters are signed with.

* `user_profiles`: each user's full name and title (a supervisor's, say,
  "Sofía Méndez Ruiz", "Supervisora de Beneficios"), as the signature block
  of a letter prints them; append-only and hash-chained like
  `user_passwords`: a user's latest row is their profile. `users` itself is
  not changed (its rows only ever get disabled), so no existing row or hash
  changes; the users already stored have no profile until `diferida users
  profile` gives them one, and until then they cannot sign a letter.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from diferida.service.store import triggers
from diferida.service.store.chain import GENESIS

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    pg = op.get_bind().dialect.name == "postgresql"
    op.create_table(
        "user_profiles",
        sa.Column("id", BigId, nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("full_name", sa.Text(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("row_hash", sa.String(64), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"],
                                name=op.f("fk_user_profiles_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_user_profiles")),
    )
    op.create_index(op.f("ix_user_profiles_user_id_id"), "user_profiles", ["user_id", "id"])
    for chain in triggers.PROFILE_APPEND_ONLY:
        op.execute(sa.text("INSERT INTO chain_heads (chain, length, last_id, last_hash) "
                           "VALUES (:c, 0, NULL, :h)").bindparams(c=chain, h=GENESIS))
    for trigger in (triggers.PG_PROFILES if pg else triggers.SQLITE_PROFILES):
        op.execute(trigger.sql)


def downgrade() -> None:
    """Back to 0004: the names and titles are forgotten (the letters already
    issued keep them, in their stored PDF)."""
    pg = op.get_bind().dialect.name == "postgresql"
    if pg:
        for trigger in triggers.PG_PROFILES:
            op.execute(f"DROP TRIGGER {trigger.name} ON {trigger.table}")
        op.execute("ALTER TABLE chain_heads DISABLE TRIGGER chain_heads_only_grow")
    else:
        for trigger in triggers.SQLITE_PROFILES:
            op.execute(f"DROP TRIGGER {trigger.name}")
        op.execute("DROP TRIGGER chain_heads_no_delete")
    op.execute("DELETE FROM chain_heads WHERE chain = 'user_profiles'")
    if pg:
        op.execute("ALTER TABLE chain_heads ENABLE TRIGGER chain_heads_only_grow")
    else:
        op.execute(next(t for t in triggers.SQLITE_GUARDS
                        if t.name == "chain_heads_no_delete").sql)
    op.drop_index(op.f("ix_user_profiles_user_id_id"), "user_profiles")
    op.drop_table("user_profiles")
