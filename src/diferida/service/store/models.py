"""The tables of the case store.

Cases and audit events are append-only: a correction is a new case row that
names the one it replaces (`supersedes`), and the database itself refuses
UPDATE, DELETE, TRUNCATE and replacing inserts on those tables (triggers of
the migrations). Users can only be added and disabled. Cases, audit events and
users carry a hash chained to the previous row (see `chain`).
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
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

ROLES = ("analyst", "auditor")

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
    __table_args__ = (CheckConstraint("role IN ('analyst', 'auditor')", name="role"),)

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
    inputs: Mapped[str] = mapped_column(Text)  # JSON: the SPEC §1 fields as received
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
