"""Cases, audit trail, users, rules versions; cases and audit append-only.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from diferida.service.store import triggers

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "rules_versions",
        sa.Column("version", sa.String(200), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("version", name=op.f("pk_rules_versions")),
    )
    op.create_table(
        "users",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("disabled_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("role IN ('analyst', 'auditor')", name=op.f("ck_users_role")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
        sa.UniqueConstraint("name", name=op.f("uq_users_name")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_users_token_hash")),
    )
    op.create_table(
        "audit_events",
        sa.Column("id", BigId, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("user_name", sa.String(100), nullable=True),
        sa.Column("role", sa.String(16), nullable=True),
        sa.Column("action", sa.String(40), nullable=False),
        sa.Column("case_id", BigId, nullable=True),
        sa.Column("participant_id", sa.String(200), nullable=True),
        sa.Column("method", sa.String(10), nullable=False),
        sa.Column("path", sa.String(500), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=False),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"],
                                name=op.f("fk_audit_events_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_events")),
    )
    for column in ("action", "at", "case_id", "user_name"):
        op.create_index(op.f(f"ix_audit_events_{column}"), "audit_events", [column])
    op.create_table(
        "cases",
        sa.Column("id", BigId, nullable=False),
        sa.Column("participant_id", sa.String(200), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("supersedes", BigId, nullable=True),
        sa.Column("inputs", sa.Text(), nullable=False),
        sa.Column("result", sa.Text(), nullable=False),
        sa.Column("rules_version", sa.String(200), nullable=False),
        sa.Column("as_of", sa.Date(), nullable=False),
        sa.Column("lang", sa.String(8), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("author_id", sa.Integer(), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("(version = 1) = (supersedes IS NULL)",
                           name=op.f("ck_cases_first_supersedes_none")),
        sa.CheckConstraint("version >= 1", name=op.f("ck_cases_version_positive")),
        sa.ForeignKeyConstraint(["author_id"], ["users.id"],
                                name=op.f("fk_cases_author_id_users")),
        sa.ForeignKeyConstraint(["rules_version"], ["rules_versions.version"],
                                name=op.f("fk_cases_rules_version_rules_versions")),
        sa.ForeignKeyConstraint(["supersedes"], ["cases.id"],
                                name=op.f("fk_cases_supersedes_cases")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cases")),
        sa.UniqueConstraint("participant_id", "version",
                            name=op.f("uq_cases_participant_id_version")),
        sa.UniqueConstraint("supersedes", name=op.f("uq_cases_supersedes")),
    )
    _append_only_triggers()


def _append_only_triggers() -> None:
    """The records that make a case reproducible and accountable are never
    changed in place: the database refuses UPDATE and DELETE on them. The
    definitions are in `triggers`, which `audit verify` compares with."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute(triggers.PG_APPEND_ONLY_FUNCTION.sql)
        for trigger in triggers.PG_APPEND_ONLY:
            op.execute(trigger.sql)
    else:
        for trigger in triggers.SQLITE_APPEND_ONLY:
            op.execute(trigger.sql)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for trigger in triggers.PG_APPEND_ONLY:
            op.execute(f"DROP TRIGGER {trigger.name} ON {trigger.table}")
        op.execute(f"DROP FUNCTION {triggers.PG_APPEND_ONLY_FUNCTION.name}()")
    else:
        for trigger in triggers.SQLITE_APPEND_ONLY:
            op.execute(f"DROP TRIGGER {trigger.name}")
    op.drop_table("cases")
    for column in ("action", "at", "case_id", "user_name"):
        op.drop_index(op.f(f"ix_audit_events_{column}"), "audit_events")
    op.drop_table("audit_events")
    op.drop_table("users")
    op.drop_table("rules_versions")
