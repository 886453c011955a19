"""Reading and writing the store. Every write is one transaction: a case and
the audit event that records its creation are stored together or not at all."""

from __future__ import annotations

import hashlib
import json
import random
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, TypeVar

from sqlalchemy import func, select, text
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from . import migrate
from .engine import make_engine
from .models import ROLES, AuditEvent, Case, RulesVersion, User

T = TypeVar("T")
TOKEN_PREFIX = "dfr_"
WRITE_ATTEMPTS = 20


def new_token() -> str:
    """A random bearer token (256 bits): hashing it with sha256 is enough,
    there is nothing to guess that a slow hash would protect."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def now() -> datetime:
    return datetime.now(UTC)


class CaseConflict(Exception):
    """The case cannot be recorded as asked because of what is already stored
    (HTTP 409): the client should read the current version and decide."""

    def __init__(self, code: str, message: str, current_id: int | None = None):
        super().__init__(message)
        self.code = code
        self.current_id = current_id


class CaseProblem(Exception):
    """A field of the request names something impossible (HTTP 422)."""

    def __init__(self, field: str, code: str, value: Any, message: str):
        super().__init__(message)
        self.field, self.code, self.value = field, code, value


@dataclass(frozen=True)
class NewEvent:
    """An audit event about to be written; who and what, never personal data."""

    action: str
    method: str
    path: str
    status_code: int
    user: User | None = None
    case_id: int | None = None
    participant_id: str | None = None
    detail: str | None = None

    def row(self, at: datetime | None = None) -> AuditEvent:
        return AuditEvent(
            at=at or now(), user_id=self.user.id if self.user else None,
            user_name=self.user.name if self.user else None,
            role=self.user.role if self.user else None, action=self.action,
            case_id=self.case_id, participant_id=self.participant_id, method=self.method,
            path=self.path[:500], status_code=self.status_code, detail=self.detail,
        )


@dataclass(frozen=True)
class AuditQuery:
    case_id: int | None = None
    user: str | None = None
    action: str | None = None
    participant_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int = 100
    offset: int = 0


class Store:
    def __init__(self, url: str):
        self.url = url
        self.engine = make_engine(url)
        self._read = sessionmaker(self.engine, expire_on_commit=False)
        self._write = sessionmaker(self.engine.execution_options(write=True),
                                   expire_on_commit=False)

    # -- lifecycle ---------------------------------------------------------

    def upgrade(self) -> None:
        migrate.upgrade(self.engine)

    def dispose(self) -> None:
        self.engine.dispose()

    def revision(self) -> str | None:
        return migrate.current_revision(self.engine)

    def ping(self) -> bool:
        with self.engine.connect() as conn:
            return conn.execute(text("SELECT 1")).scalar() == 1

    # -- transactions ------------------------------------------------------

    def _retrying(self, work: Callable[[Session], T]) -> T:
        """Run `work` in a write transaction; when a concurrent writer took the
        same version number (unique constraint) or the database was busy,
        start again from a fresh read. `work` re-checks everything it relies on."""
        for attempt in range(WRITE_ATTEMPTS):
            try:
                with self._write.begin() as session:
                    return work(session)
            except (IntegrityError, OperationalError) as exc:
                if isinstance(exc, OperationalError) and not _transient(exc):
                    raise
                if attempt == WRITE_ATTEMPTS - 1:
                    raise
                time.sleep(random.uniform(0, 0.005 * (attempt + 1)))
        raise AssertionError("unreachable")

    # -- users -------------------------------------------------------------

    def add_user(self, name: str, role: str) -> tuple[User, str]:
        """A new user and their token, returned once; only its hash is stored."""
        if role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}")
        if not name.strip():
            raise ValueError("the user name is empty")
        token = new_token()
        user = User(name=name, role=role, token_hash=hash_token(token), created_at=now())
        try:
            with self._write.begin() as session:
                session.add(user)
        except IntegrityError as exc:
            raise ValueError(f"a user named {name!r} already exists") from exc
        return user, token

    def users(self) -> list[User]:
        with self._read() as session:
            return list(session.scalars(select(User).order_by(User.id)))

    def disable_user(self, name: str) -> bool:
        with self._write.begin() as session:
            user = session.scalar(select(User).where(User.name == name))
            if user is None:
                return False
            if user.disabled_at is None:
                user.disabled_at = now()
            return True

    def user_for_token(self, token: str) -> User | None:
        with self._read() as session:
            return session.scalar(select(User).where(
                User.token_hash == hash_token(token), User.disabled_at.is_(None)))

    # -- cases -------------------------------------------------------------

    def record_case(
        self, *, participant_id: str, inputs: dict[str, Any], result: dict[str, Any],
        rules_version: str, rules_name: str, rules_content: dict[str, Any], as_of: date,
        lang: str, author: User, supersedes: int | None, note: str | None,
        event: Callable[[Case], NewEvent],
    ) -> Case:
        """Store a new case version. The first case of a participant is version
        1; every later one must name the current version in `supersedes`
        (optimistic concurrency: a stale correction is refused, never merged)."""
        inputs_text, result_text = canonical_json(inputs), canonical_json(result)
        content_text = canonical_json(rules_content)

        def work(session: Session) -> Case:
            latest = session.scalar(
                select(Case).where(Case.participant_id == participant_id)
                .order_by(Case.version.desc()).limit(1))
            if supersedes is None:
                if latest is not None:
                    raise CaseConflict(
                        "case_exists",
                        f"participant {participant_id!r} already has case {latest.id} "
                        f"(version {latest.version}); a correction must name it in 'supersedes'",
                        latest.id)
                version = 1
            else:
                target = session.get(Case, supersedes)
                if target is None:
                    raise CaseProblem("supersedes", "no_such_case", supersedes,
                                      f"there is no case {supersedes}")
                if target.participant_id != participant_id:
                    raise CaseProblem("supersedes", "other_participant", supersedes,
                                      f"case {supersedes} belongs to another participant")
                assert latest is not None
                if latest.id != target.id:
                    raise CaseConflict(
                        "stale_version",
                        f"case {supersedes} has already been superseded; the current version "
                        f"is case {latest.id} (version {latest.version})", latest.id)
                version = latest.version + 1
            if session.get(RulesVersion, rules_version) is None:
                session.add(RulesVersion(version=rules_version, name=rules_name,
                                         content=content_text, created_at=now()))
                session.flush()
            case = Case(participant_id=participant_id, version=version, supersedes=supersedes,
                        inputs=inputs_text, result=result_text, rules_version=rules_version,
                        as_of=as_of, lang=lang, status=str(result.get("status")),
                        author_id=author.id, note=note, created_at=now())
            session.add(case)
            session.flush()
            session.add(event(case).row(case.created_at))
            return case

        return self._retrying(work)

    def case(self, case_id: int) -> Case | None:
        with self._read() as session:
            return session.get(Case, case_id)

    def cases(self, participant_id: str | None = None, limit: int = 100,
              offset: int = 0) -> list[Case]:
        q = select(Case)
        if participant_id is not None:
            q = q.where(Case.participant_id == participant_id).order_by(Case.version)
        else:
            q = q.order_by(Case.id)
        with self._read() as session:
            return list(session.scalars(q.limit(limit).offset(offset)))

    def superseded_by(self, ids: Iterable[int]) -> dict[int, int]:
        """For each case id, the id of the case that replaced it (if any)."""
        ids = list(ids)
        if not ids:
            return {}
        with self._read() as session:
            rows = session.execute(select(Case.supersedes, Case.id)
                                   .where(Case.supersedes.in_(ids)))
            return {old: new for old, new in rows}

    def authors(self, ids: Iterable[int]) -> dict[int, str]:
        ids = sorted(set(ids))
        if not ids:
            return {}
        with self._read() as session:
            return dict(session.execute(select(User.id, User.name).where(User.id.in_(ids))).all())

    def rules_content(self, version: str) -> dict[str, Any] | None:
        with self._read() as session:
            row = session.get(RulesVersion, version)
            return None if row is None else json.loads(row.content)

    def count_cases(self) -> int:
        with self._read() as session:
            return session.scalar(select(func.count()).select_from(Case)) or 0

    # -- audit trail ---------------------------------------------------------

    def audit(self, event: NewEvent) -> None:
        def work(session: Session) -> None:
            session.add(event.row())

        self._retrying(work)

    def audit_events(self, q: AuditQuery) -> list[AuditEvent]:
        s = select(AuditEvent)
        if q.case_id is not None:
            s = s.where(AuditEvent.case_id == q.case_id)
        if q.user is not None:
            s = s.where(AuditEvent.user_name == q.user)
        if q.action is not None:
            s = s.where(AuditEvent.action == q.action)
        if q.participant_id is not None:
            s = s.where(AuditEvent.participant_id == q.participant_id)
        if q.since is not None:
            s = s.where(AuditEvent.at >= q.since)
        if q.until is not None:
            s = s.where(AuditEvent.at < q.until)
        s = s.order_by(AuditEvent.id).limit(q.limit).offset(q.offset)
        with self._read() as session:
            return list(session.scalars(s))


def _transient(exc: OperationalError) -> bool:
    """Lock waits that ran out or a serialization failure: worth another try."""
    message = str(exc.orig).lower() if exc.orig is not None else ""
    return ("database is locked" in message or "could not serialize" in message
            or "deadlock" in message)
