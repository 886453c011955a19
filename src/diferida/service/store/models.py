"""The tables of the case store.

Cases and audit events are append-only: a correction is a new case row that
names the one it replaces (`supersedes`), and the database itself refuses
UPDATE, DELETE, TRUNCATE and replacing inserts on those tables (triggers of
the migrations). Users can only be added and disabled. Cases, audit events and
users carry a hash chained to the previous row (see `chain`).

The workbench adds (migration 0003) four append-only tables — password
hashes, the application of each case version (personal data), the workflow
events and the letters issued — and `case_states`, where each case stands
now: the one table rewritten in place, an index over the workflow events
(which `verify` checks it against) that keeps the queues fast.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Date,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

ROLES = ("analyst", "supervisor", "auditor")

# SQLite gives an auto-increment key only to a column declared INTEGER.
BigId = BigInteger().with_variant(Integer(), "sqlite")


class UTCDateTime(TypeDecorator):
    """Timestamps are stored in UTC and always come back timezone-aware
    (SQLite keeps no zone, PostgreSQL keeps timestamptz)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value, dialect):
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    })


class User(Base):
    __tablename__ = "users"
    __table_args__ = (CheckConstraint("role IN ('analyst', 'supervisor', 'auditor')", name="role"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    role: Mapped[str] = mapped_column(String(16))
    # sha256 of the bearer token; the token itself is shown once and never stored
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    disabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # the hash chain (see .chain): the previous row's hash and this row's
    prev_hash: Mapped[str] = mapped_column(String(64))
    row_hash: Mapped[str] = mapped_column(String(64))


class RulesVersion(Base):
    """The resolved rules content of every version a case was decided with, so
    an old case can be recomputed after the rules file has changed."""

    __tablename__ = "rules_versions"

    version: Mapped[str] = mapped_column(String(200), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    content: Mapped[str] = mapped_column(Text)  # canonical JSON of Rules.resolved
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Case(Base):
    __tablename__ = "cases"
    __table_args__ = (
        # one row per (participant, version): the guard that keeps concurrent
        # writers from losing or duplicating a version
        UniqueConstraint("participant_id", "version"),
        # a case is replaced at most once, so the versions form a chain
        UniqueConstraint("supersedes"),
        CheckConstraint("version >= 1", name="version_positive"),
        CheckConstraint("(version = 1) = (supersedes IS NULL)", name="first_supersedes_none"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    participant_id: Mapped[str] = mapped_column(String(200))
    version: Mapped[int] = mapped_column(Integer)
    supersedes: Mapped[int | None] = mapped_column(
        BigId, ForeignKey("cases.id"), nullable=True)
    inputs: Mapped[str] = mapped_column(Text)  # JSON: the rules §1 fields as received
    result: Mapped[str] = mapped_column(Text)  # JSON: Determination.to_dict()
    rules_version: Mapped[str] = mapped_column(
        String(200), ForeignKey("rules_versions.version"))
    as_of: Mapped[date] = mapped_column(Date)
    lang: Mapped[str] = mapped_column(String(8))
    status: Mapped[str] = mapped_column(String(32))
    author_id: Mapped[int] = mapped_column(Integer, ForeignKey("users.id"))
    note: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # the hash chain (see .chain): the previous row's hash and this row's
    prev_hash: Mapped[str] = mapped_column(String(64))
    row_hash: Mapped[str] = mapped_column(String(64))


class AuditEvent(Base):
    """Who did what to which case, when — including refused attempts."""

    __tablename__ = "audit_events"
    __table_args__ = (
        Index(None, "case_id"),
        Index(None, "user_name"),
        Index(None, "action"),
        Index(None, "at"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime)
    user_id: Mapped[int | None] = mapped_column(Integer, ForeignKey("users.id"), nullable=True)
    user_name: Mapped[str | None] = mapped_column(String(100), nullable=True)
    role: Mapped[str | None] = mapped_column(String(16), nullable=True)
    action: Mapped[str] = mapped_column(String(40))
    # no foreign key: an attempt on a case that does not exist is recorded too
    case_id: Mapped[int | None] = mapped_column(BigId, nullable=True)
    participant_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    method: Mapped[str] = mapped_column(String(10))
    path: Mapped[str] = mapped_column(String(500))
    status_code: Mapped[int] = mapped_column(Integer)
    detail: Mapped[str | None] = mapped_column(Text, nullable=True)
    # the hash chain (see .chain): the previous row's hash and this row's
    prev_hash: Mapped[str] = mapped_column(String(64))
    row_hash: Mapped[str] = mapped_column(String(64))


class ChainHead(Base):
    """The end of each hash chain: how many rows it has, and the id and hash
    of the last. Writers lock this row first, which keeps each chain linear
    under concurrent writers; the database lets it only grow."""

    __tablename__ = "chain_heads"

    chain: Mapped[str] = mapped_column(String(32), primary_key=True)
    length: Mapped[int] = mapped_column(BigInteger)
    last_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    last_hash: Mapped[str] = mapped_column(String(64))


class UserPassword(Base):
    """A user's password, as an argon2 hash; the latest row of a user wins
    (`diferida users passwd` appends one)."""

    __tablename__ = "user_passwords"
    __table_args__ = (Index(None, "user_id", "id"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    user_id: Mapped[int] = mapped_column(Integer, ForeignKey("users.id"))
    password_hash: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    prev_hash: Mapped[str] = mapped_column(String(64))
    row_hash: Mapped[str] = mapped_column(String(64))


class UserProfile(Base):
    """A user's full name and title, as their signature on a letter reads;
    the latest row of a user wins (`diferida users add --full-name --title`
    and `diferida users profile` append one). Append-only, hash-chained
    (migration 0005)."""

    __tablename__ = "user_profiles"
    __table_args__ = (Index(None, "user_id", "id"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    user_id: Mapped[int] = mapped_column(Integer, ForeignKey("users.id"))
    full_name: Mapped[str] = mapped_column(Text)
    title: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    prev_hash: Mapped[str] = mapped_column(String(64))
    row_hash: Mapped[str] = mapped_column(String(64))


class CaseApplication(Base):
    """What a case version needs and a determination is not about: the
    person's name and mailing address, the application date, a free note.
    Personal data: never logged, never in an audit event."""

    __tablename__ = "case_applications"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    # no foreign keys to cases (as in audit_events): the hash chains, not the
    # schema, tell a case removed behind the store's back
    case_id: Mapped[int] = mapped_column(BigId, unique=True)
    name: Mapped[str | None] = mapped_column(Text, nullable=True)
    address: Mapped[str | None] = mapped_column(Text, nullable=True)
    application_date: Mapped[date | None] = mapped_column(Date, nullable=True)
    note: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    prev_hash: Mapped[str] = mapped_column(String(64))
    row_hash: Mapped[str] = mapped_column(String(64))
    # migration 0006: the language the addressee's letter is issued in (es,
    # en); NULL in the rows stored before it
    letter_lang: Mapped[str | None] = mapped_column(String(2), nullable=True)


class WorkflowEvent(Base):
    """A transition of a case version: created, submitted, approved,
    returned (with its reason), corrected (with its reason and the version it
    corrects), letter_stored (with the letter's SHA-256)."""

    __tablename__ = "workflow_events"
    __table_args__ = (Index(None, "case_id", "id"), Index(None, "number", "id"))

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime)
    number: Mapped[int] = mapped_column(BigInteger)  # the case: id of its first version
    case_id: Mapped[int] = mapped_column(BigId)
    version: Mapped[int] = mapped_column(Integer)
    action: Mapped[str] = mapped_column(String(20))
    user_id: Mapped[int] = mapped_column(Integer, ForeignKey("users.id"))
    user_name: Mapped[str] = mapped_column(String(100))
    role: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    corrects: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    letter_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    prev_hash: Mapped[str] = mapped_column(String(64))
    row_hash: Mapped[str] = mapped_column(String(64))


class Letter(Base):
    """The letter of an approved version, exactly as issued (PDF). Its
    SHA-256 is in the `letter_stored` workflow event."""

    __tablename__ = "letters"

    case_id: Mapped[int] = mapped_column(BigId, primary_key=True)
    lang: Mapped[str] = mapped_column(String(8))
    pdf: Mapped[bytes] = mapped_column(LargeBinary)
    sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class CaseState(Base):
    """Where each case stands now (one row per case, rewritten at each
    transition): derived from the cases and workflow events, which `verify`
    checks it against; it exists so that queues and searches are indexed."""

    __tablename__ = "case_states"
    __table_args__ = (
        # covering the queues' filters and order (see migration 0003)
        Index("ix_case_states_queue", "state", "updated_at", "number", "prepared_by",
              "changed_by", "submitted_by"),
        Index("ix_case_states_mine", "changed_by", "state", "updated_at", "number"),
    )

    number: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    participant_id: Mapped[str] = mapped_column(String(200), unique=True)
    case_id: Mapped[int] = mapped_column(BigInteger, unique=True)  # the current version
    version: Mapped[int] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(32))  # the determination's
    prepared_by: Mapped[int] = mapped_column(Integer)  # author of the first version
    changed_by: Mapped[int] = mapped_column(Integer)  # author of the current version
    submitted_by: Mapped[int | None] = mapped_column(Integer, nullable=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class SignedOutSession(Base):
    """A workbench session signed out before its cookie expired (migration
    0004): the SHA-256 of its random id, so that a copy of the cookie is
    refused by every process of the service, restarts included. A row is
    needed only while the cookie could still be good: it is deleted once the
    session's absolute lifetime (DIFERIDA_SESSION_HOURS from the sign-in),
    its idle time and an hour have passed (see
    `diferida.web.workbench.session.Sessions.end`)."""

    __tablename__ = "signed_out_sessions"
    __table_args__ = (Index(None, "signed_in_at"),)

    session_sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    signed_in_at: Mapped[datetime] = mapped_column(UTCDateTime)
    signed_out_at: Mapped[datetime] = mapped_column(UTCDateTime)
