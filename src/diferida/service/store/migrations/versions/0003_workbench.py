"""The workbench: the supervisor role, passwords, applications, workflow
events, letters, and where each case stands.

* `users.role` may also be `supervisor` (SQLite cannot change a CHECK in
  place: the table is rebuilt with its rows, keys and triggers as they were;
  no row or hash changes).
* `user_passwords`: argon2 hashes, append-only, hash-chained; a user's latest
  row is their password.
* `case_applications`: per case version, the person's name, mailing
  address, application date and a free note (personal data); append-only,
  hash-chained.
* `workflow_events`: created, submitted, approved, returned, corrected,
  letter_stored; append-only, hash-chained.
* `letters`: the PDF of each approved version, exactly as issued;
  append-only (its SHA-256 is in its `letter_stored` event).
* `case_states`: the current version and state of each case, indexed for
  the queues; the cases already stored are in state `draft` (recorded, never
  submitted).

The new tables name cases without a foreign key (as audit_events does):
what tells a case removed behind the store's back is the hash chains.
Every existing row keeps its hash: the chains of cases, audit events and
users go on from their heads.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from diferida.service.store import triggers
from diferida.service.store.chain import GENESIS

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
TS = sa.DateTime(timezone=True)
NEW_ROLES = "role IN ('analyst', 'supervisor', 'auditor')"


def _hashes() -> list[sa.Column]:
    return [sa.Column("prev_hash", sa.String(64), nullable=False),
            sa.Column("row_hash", sa.String(64), nullable=False)]


def upgrade() -> None:
    pg = op.get_bind().dialect.name == "postgresql"
    _roles(pg, NEW_ROLES)
    op.create_table(
        "user_passwords",
        sa.Column("id", BigId, nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("password_hash", sa.String(200), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        *_hashes(),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"],
                                name=op.f("fk_user_passwords_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_user_passwords")),
    )
    op.create_index(op.f("ix_user_passwords_user_id_id"), "user_passwords", ["user_id", "id"])
    op.create_table(
        "case_applications",
        sa.Column("id", BigId, nullable=False),
        sa.Column("case_id", BigId, nullable=False),
        sa.Column("name", sa.Text(), nullable=True),
        sa.Column("address", sa.Text(), nullable=True),
        sa.Column("application_date", sa.Date(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        *_hashes(),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_case_applications")),
        sa.UniqueConstraint("case_id", name=op.f("uq_case_applications_case_id")),
    )
    op.create_table(
        "workflow_events",
        sa.Column("id", BigId, nullable=False),
        sa.Column("at", TS, nullable=False),
        sa.Column("number", sa.BigInteger(), nullable=False),
        sa.Column("case_id", BigId, nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(20), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("user_name", sa.String(100), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("corrects", sa.BigInteger(), nullable=True),
        sa.Column("letter_sha256", sa.String(64), nullable=True),
        *_hashes(),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"],
                                name=op.f("fk_workflow_events_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_workflow_events")),
    )
    op.create_index(op.f("ix_workflow_events_case_id_id"), "workflow_events", ["case_id", "id"])
    op.create_index(op.f("ix_workflow_events_number_id"), "workflow_events", ["number", "id"])
    op.create_table(
        "letters",
        sa.Column("case_id", BigId, nullable=False),
        sa.Column("lang", sa.String(8), nullable=False),
        sa.Column("pdf", sa.LargeBinary(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("case_id", name=op.f("pk_letters")),
    )
    op.create_table(
        "case_states",
        sa.Column("number", sa.BigInteger(), nullable=False),
        sa.Column("participant_id", sa.String(200), nullable=False),
        sa.Column("case_id", sa.BigInteger(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("prepared_by", sa.Integer(), nullable=False),
        sa.Column("changed_by", sa.Integer(), nullable=False),
        sa.Column("submitted_by", sa.Integer(), nullable=True),
        sa.Column("updated_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("number", name=op.f("pk_case_states")),
        sa.UniqueConstraint("participant_id", name=op.f("uq_case_states_participant_id")),
        sa.UniqueConstraint("case_id", name=op.f("uq_case_states_case_id")),
    )
    # the queues read only these indexes to count and to page (the rows of
    # a page are then fetched by their number): the shared queues by state,
    # newest or oldest first, with who may not approve; "mine" by author
    op.create_index("ix_case_states_queue", "case_states",
                    ["state", "updated_at", "number", "prepared_by", "changed_by",
                     "submitted_by"])
    op.create_index("ix_case_states_mine", "case_states",
                    ["changed_by", "state", "updated_at", "number"])
    # the cases already stored: recorded, never submitted
    op.execute(
        "INSERT INTO case_states (number, participant_id, case_id, version, state, status, "
        "prepared_by, changed_by, submitted_by, updated_at) "
        "SELECT f.id, c.participant_id, c.id, c.version, 'draft', c.status, f.author_id, "
        "c.author_id, NULL, c.created_at FROM cases c "
        "JOIN cases f ON f.participant_id = c.participant_id AND f.version = 1 "
        "WHERE NOT EXISTS (SELECT 1 FROM cases n WHERE n.supersedes = c.id)")
    for chain in triggers.WORKFLOW_CHAINED:
        op.execute(sa.text("INSERT INTO chain_heads (chain, length, last_id, last_hash) "
                           "VALUES (:c, 0, NULL, :h)").bindparams(c=chain, h=GENESIS))
    if pg:
        for trigger in triggers.PG_WORKFLOW:
            op.execute(trigger.sql)
    else:
        for trigger in triggers.SQLITE_WORKFLOW:
            op.execute(trigger.sql)


def _roles(pg: bool, check: str) -> None:
    if pg:
        op.execute("ALTER TABLE users DROP CONSTRAINT ck_users_role")
        op.execute(f"ALTER TABLE users ADD CONSTRAINT ck_users_role CHECK ({check})")
        return
    # SQLite: the table is rebuilt. The foreign keys of cases, audit events
    # (and passwords, events) to users are checked at commit, when the rows
    # are back under the same ids.
    op.execute("PRAGMA defer_foreign_keys = ON")
    op.execute("CREATE TABLE users_0003 AS SELECT id, name, role, token_hash, created_at, "
               "disabled_at, prev_hash, row_hash FROM users")
    op.execute("DROP TABLE users")
    op.execute(
        "CREATE TABLE users (id INTEGER NOT NULL, name VARCHAR(100) NOT NULL, "
        "role VARCHAR(16) NOT NULL, token_hash VARCHAR(64) NOT NULL, "
        "created_at DATETIME NOT NULL, disabled_at DATETIME, prev_hash VARCHAR(64), "
        "row_hash VARCHAR(64), CONSTRAINT pk_users PRIMARY KEY (id), "
        "CONSTRAINT uq_users_name UNIQUE (name), "
        "CONSTRAINT uq_users_token_hash UNIQUE (token_hash), "
        f"CONSTRAINT ck_users_role CHECK ({check}))")
    op.execute("INSERT INTO users (id, name, role, token_hash, created_at, disabled_at, "
               "prev_hash, row_hash) SELECT id, name, role, token_hash, created_at, "
               "disabled_at, prev_hash, row_hash FROM users_0003 ORDER BY id")
    op.execute("DROP TABLE users_0003")
    for trigger in triggers.SQLITE_USERS:
        op.execute(trigger.sql)


def downgrade() -> None:
    """Back to 0002: the workbench's tables and what they hold are dropped
    (passwords, applications, workflow events, letters). Refused while a
    supervisor exists (0002 knows no such role)."""
    bind = op.get_bind()
    pg = bind.dialect.name == "postgresql"
    if bind.execute(sa.text("SELECT count(*) FROM users WHERE role = 'supervisor'")).scalar():
        raise RuntimeError("users with the role supervisor exist: 0002 has no such role")
    if pg:
        for trigger in triggers.PG_WORKFLOW:
            op.execute(f"DROP TRIGGER {trigger.name} ON {trigger.table}")
        op.execute("ALTER TABLE chain_heads DISABLE TRIGGER chain_heads_only_grow")
    else:
        for trigger in triggers.SQLITE_WORKFLOW:
            op.execute(f"DROP TRIGGER {trigger.name}")
        op.execute("DROP TRIGGER chain_heads_no_delete")
    op.execute("DELETE FROM chain_heads WHERE chain IN ('user_passwords', "
               "'case_applications', 'workflow_events')")
    if pg:
        op.execute("ALTER TABLE chain_heads ENABLE TRIGGER chain_heads_only_grow")
    else:
        op.execute(triggers.SQLITE_TRIGGERS["chain_heads_no_delete"].sql)
    for table in ("case_states", "letters", "workflow_events", "case_applications",
                  "user_passwords"):
        op.drop_table(table)
    _roles(pg, "role IN ('analyst', 'auditor')")
