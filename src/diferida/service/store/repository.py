"""Reading and writing the store. Every write is one transaction: a case and
the audit event that records its creation are stored together or not at all.
Every row of cases, audit events and users is appended to its hash chain in
the transaction that writes it (see `chain`)."""

from __future__ import annotations

import hashlib
import json
import random
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, TypeVar

from sqlalchemy import func, select, text, update
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from ...errors import DiferidaError
from . import migrate, triggers
from .chain import (
    ADDED,
    CHAINS,
    UnreadableRow,
    VerifyReport,
    content_sha256,
    row_hash,
    verify_chain,
)
from .engine import make_engine
from .models import (
    ROLES,
    AuditEvent,
    Base,
    Case,
    CaseApplication,
    CaseState,
    ChainHead,
    Letter,
    RulesVersion,
    User,
    UserPassword,
    UserProfile,
    WorkflowEvent,
)

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


class CaseConflict(DiferidaError):
    """The case cannot be recorded as asked because of what is already stored
    (HTTP 409): the client should read the current version and decide."""

    def __init__(self, code: str, message: str, current_id: int | None = None):
        super().__init__(message)
        self.code = code
        self.current_id = current_id


class CaseProblem(DiferidaError):
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


@dataclass(frozen=True)
class Application:
    """What a case version needs besides the rules §1 fields (personal data)."""

    name: str | None = None
    address: str | None = None
    application_date: date | None = None
    note: str | None = None
    letter_lang: str | None = None  # the addressee's: es, en (None: not given)


@dataclass(frozen=True)
class NewDraft:
    """A first version to store with `Store.record_drafts`: the rules §1
    inputs as received, the determination (`Determination.to_dict()`), the
    date it speaks for and the application."""

    participant_id: str
    inputs: dict[str, Any]
    result: dict[str, Any]
    as_of: date
    application: Application | None = None


class WorkflowConflict(DiferidaError):
    """A transition the stored state does not allow: `code` is not_found,
    stale (not the current version) or wrong_state; `values` fill the
    message."""

    def __init__(self, code: str, **values: Any):
        super().__init__(code)
        self.code, self.values = code, values


class Store:
    def __init__(self, url: str):
        self.url = url
        self.engine = make_engine(url)
        self._read = sessionmaker(self.engine, expire_on_commit=False)
        self._write = sessionmaker(self.engine.execution_options(write=True),
                                   expire_on_commit=False)
        self._audit_batches = _GroupCommit(self._write_events)

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

    def add_user(self, name: str, role: str, *, full_name: str | None = None,
                 title: str | None = None) -> tuple[User, str]:
        """A new user and their token, returned once; only its hash is stored.
        With `full_name` and `title` (both or neither), their profile too, in
        the same transaction (see `set_profile`)."""
        if role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}")
        from ..usernames import allowed, profile_problem, refusal

        if not allowed(name):  # a plain set of characters (service/usernames.py)
            raise ValueError(refusal(name))
        if (full_name, title) != (None, None):
            problem = profile_problem(full_name, title)
            if problem is not None:
                raise ValueError(problem)
        token = new_token()
        user = User(name=name, role=role, token_hash=hash_token(token), created_at=now())

        def work(session: Session) -> None:
            if session.scalar(select(User.id).where(User.name == name)) is not None:
                raise ValueError(f"a user named {name!r} already exists")
            _move_head(session, _append(session, user, _lock_head(session, "users")))
            if full_name is not None and title is not None:
                session.flush()
                self._append_profile(session, user, full_name.strip(), title.strip(),
                                     user.created_at, "diferida users add")

        try:
            self._retrying(work)
        except IntegrityError as exc:
            raise ValueError(f"a user named {name!r} already exists") from exc
        return user, token

    def users(self) -> list[User]:
        with self._read() as session:
            return list(session.scalars(select(User).order_by(User.id)))

    def disable_user(self, name: str) -> bool:
        """Disable a user for good; recorded in the audit trail (`user.disable`),
        which is how `verify` tells a user re-enabled behind the store's back."""

        def work(session: Session) -> bool:
            user = session.scalar(select(User).where(User.name == name))
            if user is None:
                return False
            if user.disabled_at is None:
                user.disabled_at = now()
                _move_head(session, _append(session, NewEvent(
                    "user.disable", "CLI", "diferida users disable", 200,
                    detail=canonical_json({"user_id": user.id, "name": user.name}),
                ).row(user.disabled_at), _lock_head(session, "audit_events")))
            return True

        return self._retrying(work)

    def set_password(self, name: str, password_hash: str) -> User:
        """Append a user's new password hash (the latest wins), recorded in the
        audit trail as `user.passwd` (without the hash)."""

        def work(session: Session) -> User:
            user = session.scalar(select(User).where(User.name == name))
            if user is None:
                raise ValueError(f"no user named {name!r}")
            at = now()
            row = UserPassword(user_id=user.id, password_hash=password_hash, created_at=at)
            _move_head(session, _append(session, row, _lock_head(session, "user_passwords")))
            _move_head(session, _append(session, NewEvent(
                "user.passwd", "CLI", "diferida users passwd", 200,
                detail=canonical_json({"user_id": user.id, "name": user.name}),
            ).row(at), _lock_head(session, "audit_events")))
            return user

        return self._retrying(work)

    @staticmethod
    def _append_profile(session: Session, user: User, full_name: str, title: str,
                        at: datetime, path: str) -> None:
        row = UserProfile(user_id=user.id, full_name=full_name, title=title, created_at=at)
        _move_head(session, _append(session, row, _lock_head(session, "user_profiles")))
        _move_head(session, _append(session, NewEvent(
            "user.profile", "CLI", path, 200,
            detail=canonical_json({"user_id": user.id, "name": user.name}),
        ).row(at), _lock_head(session, "audit_events")))

    def set_profile(self, name: str, full_name: str, title: str) -> User:
        """Append a user's full name and title, as their signature on a letter
        reads (the latest wins); recorded in the audit trail as `user.profile`.
        Each must be text of 1 to 200 characters without control characters
        (`usernames.profile_problem`, in every language)."""
        from ..usernames import profile_problem

        problem = profile_problem(full_name, title)
        if problem is not None:
            raise ValueError(problem)

        def work(session: Session) -> User:
            user = session.scalar(select(User).where(User.name == name))
            if user is None:
                raise ValueError(f"no user named {name!r}")
            self._append_profile(session, user, full_name.strip(), title.strip(), now(),
                                 "diferida users profile")
            return user

        return self._retrying(work)

    def profile(self, user_id: int) -> tuple[str, str] | None:
        """A user's full name and title (their latest profile), or None."""
        with self._read() as session:
            row = session.execute(select(UserProfile.full_name, UserProfile.title)
                                  .where(UserProfile.user_id == user_id)
                                  .order_by(UserProfile.id.desc()).limit(1)).first()
        return None if row is None else (row[0], row[1])

    def profile_by_name(self, name: str) -> tuple[str, str] | None:
        """The profile of the user named `name` (see `profile`)."""
        with self._read() as session:
            user_id = session.scalar(select(User.id).where(User.name == name))
        return None if user_id is None else self.profile(user_id)

    def sign_in_record(self, name: str) -> tuple[User | None, str | None]:
        """The active user of this name and their latest password hash."""
        with self._read() as session:
            user = session.scalar(select(User).where(User.name == name,
                                                     User.disabled_at.is_(None)))
            if user is None:
                return None, None
            hashed = session.scalar(select(UserPassword.password_hash)
                                    .where(UserPassword.user_id == user.id)
                                    .order_by(UserPassword.id.desc()).limit(1))
            return user, hashed

    def user(self, user_id: int) -> User | None:
        with self._read() as session:
            return session.get(User, user_id)

    def user_for_token(self, token: str) -> User | None:
        with self._read() as session:
            return session.scalar(select(User).where(
                User.token_hash == hash_token(token), User.disabled_at.is_(None)))

    # -- cases -------------------------------------------------------------

    def record_case(
        self, *, participant_id: str, inputs: dict[str, Any], result: dict[str, Any],
        rules_version: str, rules_name: str, rules_content: dict[str, Any], as_of: date,
        lang: str, author: User, supersedes: int | None, note: str | None,
        event: Callable[[Case], NewEvent], application: Application | None = None,
        reason: str | None = None,
    ) -> Case:
        """Store a new case version. The first case of a participant is version
        1; every later one must name the current version in `supersedes`
        (optimistic concurrency: a stale correction is refused, never merged).
        A version submitted for approval is not corrected until it is
        returned (`CaseConflict` "submitted").

        With it, in the same transaction: the version's application (when
        given; a correction given none keeps the one of the version it
        corrects), its workflow event (`created`, or `corrected` with `reason`
        and the version it corrects) and where the case now stands (draft)."""
        inputs_text, result_text = canonical_json(inputs), canonical_json(result)
        content_text = canonical_json(rules_content)

        def work(session: Session) -> Case:
            # the chain's head is locked first: writers of cases queue here
            head = _lock_head(session, "cases")
            latest = session.scalar(
                select(Case).where(Case.participant_id == participant_id)
                .order_by(Case.version.desc()).limit(1))
            kept = application
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
                # the case's state row, locked: a submit, return or approval of
                # this case waits for this transaction, or this one for it
                state = _lock_state(session, participant_id)
                if state is not None and state.state == "submitted":
                    raise CaseConflict(
                        "submitted", f"case {latest.id} is submitted for approval; it can be "
                                     f"corrected once it is returned", latest.id)
                version = latest.version + 1
            if kept is None and supersedes is not None:
                # a route that takes no application (the API's /cases) keeps
                # the one of the version it corrects: the addressee, the
                # application date and the note carry on, never dropped
                kept = _application_of(session, supersedes)
            stored = _rules_row(session, rules_version, rules_name, content_text)
            case = Case(participant_id=participant_id, version=version, supersedes=supersedes,
                        inputs=inputs_text, result=result_text, rules_version=rules_version,
                        as_of=as_of, lang=lang, status=str(result.get("status")),
                        author_id=author.id, note=note, created_at=now())
            _move_head(session, _append(session, case, head, content_sha256(stored.content)))
            session.flush()
            # the API's note is why a version was recorded
            _version_created(session, case, author, kept,
                             reason if reason is not None else note)
            _move_head(session, _append(session, event(case).row(case.created_at),
                                        _lock_head(session, "audit_events")))
            session.flush()
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

    def record_drafts(
        self, drafts: Sequence[NewDraft], *, rules_version: str, rules_name: str,
        rules_content: dict[str, Any], lang: str, author: User,
        event: Callable[[list[Case]], NewEvent],
    ) -> tuple[list[Case], dict[str, int]]:
        """Store many first versions (drafts) in one transaction: for each,
        the case, its application, its `created` workflow event and where the
        case stands, chained exactly as `record_case` chains one; and ONE
        audit event for them all, `event(cases)`. A participant that already
        has a case is left out (checked under the lock of the cases chain, so
        a case recorded meanwhile counts). Returns the cases stored, in the
        order given, and {participant id: id of its current version} for
        those left out. The participant ids must differ from one another."""
        ids = [d.participant_id for d in drafts]
        if len(set(ids)) != len(ids):
            raise ValueError("record_drafts: a participant id is given twice")
        texts = [(canonical_json(d.inputs), canonical_json(d.result)) for d in drafts]
        content_text = canonical_json(rules_content)

        def work(session: Session) -> tuple[list[Case], dict[str, int]]:
            # the order of record_case: cases head, then applications, workflow
            # events, and the audit head last (held the shortest)
            head = _lock_head(session, "cases")
            existing: dict[str, int] = {}
            for start in range(0, len(ids), 500):
                part = ids[start:start + 500]
                existing.update(session.execute(
                    select(Case.participant_id, func.max(Case.id))
                    .where(Case.participant_id.in_(part)).group_by(Case.participant_id)).all())
            fresh = [(d, t) for d, t in zip(drafts, texts, strict=True)
                     if d.participant_id not in existing]
            if not fresh:
                return [], existing
            stored = _rules_row(session, rules_version, rules_name, content_text)
            rules_sha = content_sha256(stored.content)
            heads = {c: _lock_head(session, c) for c in ("case_applications", "workflow_events")}
            cases = []
            with session.no_autoflush:
                for d, (inputs_text, result_text) in fresh:
                    case = Case(participant_id=d.participant_id, version=1, supersedes=None,
                                inputs=inputs_text, result=result_text,
                                rules_version=rules_version, as_of=d.as_of, lang=lang,
                                status=str(d.result.get("status")), author_id=author.id,
                                note=None, created_at=now())
                    head = _append(session, case, head, rules_sha)
                    _version_created(session, case, author, d.application, None, heads)
                    cases.append(case)
            _move_head(session, head)
            for h in heads.values():
                _move_head(session, h)
            _move_head(session, _append(session, event(cases).row(cases[-1].created_at),
                                        _lock_head(session, "audit_events")))
            session.flush()
            return cases, existing

        return self._retrying(work)

    # -- the workbench ---------------------------------------------------------

    def reading(self) -> Session:
        """A read-only session (use as a context manager) for the workbench's
        queries."""
        return self._read()

    def transition(self, case_id: int, user: User, action: str, *,
                   from_states: tuple[str, ...], to_state: str, event: NewEvent,
                   reason: str | None = None,
                   check: Callable[[Session, Case, CaseState], None] | None = None,
                   letter: tuple[bytes, str] | None = None,
                   at: datetime | None = None,
                   acknowledged: tuple[str, ...] | None = None) -> CaseState:
        """Move the current version `case_id` from one of `from_states` to
        `to_state`: its workflow event (and, with `letter` = (pdf, lang), the
        letter stored and a `letter_stored` event with its SHA-256), where
        the case stands, and the audit event `event`, in one transaction.
        `check` sees the transaction, the version and the case's state (its
        row locked) and raises to refuse. With `acknowledged` (the notes saying
        what was checked, one per warning of the version asking for a check,
        in the order of its warnings), an `acknowledged` workflow event per
        note, carrying it as its reason, comes first, in the same transaction.
        Raises WorkflowConflict (not_found, stale, wrong_state)."""

        def work(session: Session) -> CaseState:
            case = session.get(Case, case_id)
            if case is None:
                raise WorkflowConflict("not_found", case_id=case_id)
            # the case's state row first, locked until commit: one transition
            # (or new version) of a case at a time, in the order
            # cases head → case_states row → workflow_events head → audit head
            st = _lock_state(session, case.participant_id)
            wf_head = _lock_head(session, "workflow_events")
            if st is None or st.case_id != case_id:
                raise WorkflowConflict("stale", case_id=case_id,
                                       current=st.case_id if st else None)
            if st.state not in from_states:
                raise WorkflowConflict("wrong_state", case_id=case_id, state=st.state)
            if check is not None:
                check(session, case, st)
            when = at or now()
            for note in acknowledged or ():
                wf_head = _append(session, WorkflowEvent(
                    at=when, number=st.number, case_id=case.id, version=case.version,
                    action="acknowledged", user_id=user.id, user_name=user.name,
                    role=user.role, reason=note, corrects=None, letter_sha256=None),
                    wf_head)
            wf_head = _append(session, WorkflowEvent(
                at=when, number=st.number, case_id=case.id, version=case.version,
                action=action, user_id=user.id, user_name=user.name, role=user.role,
                reason=reason, corrects=None, letter_sha256=None), wf_head)
            if letter is not None:
                pdf, lang = letter
                digest = hashlib.sha256(pdf).hexdigest()
                session.add(Letter(case_id=case.id, lang=lang, pdf=pdf, sha256=digest,
                                   created_at=when))
                wf_head = _append(session, WorkflowEvent(
                    at=when, number=st.number, case_id=case.id, version=case.version,
                    action="letter_stored", user_id=user.id, user_name=user.name,
                    role=user.role, reason=None, corrects=None, letter_sha256=digest), wf_head)
            _move_head(session, wf_head)
            st.state, st.updated_at = to_state, when
            if to_state == "submitted":
                st.submitted_by = user.id
            _move_head(session, _append(session, event.row(when),
                                        _lock_head(session, "audit_events")))
            session.flush()
            session.expunge(st)
            return st

        return self._retrying(work)

    # -- audit trail ---------------------------------------------------------

    def audit(self, event: NewEvent) -> None:
        """Record `event`; returns once it is committed. Events recorded at
        the same moment by several threads share one transaction (each writer
        of the audit chain holds its head until it commits, so one commit per
        event would make the commits queue one by one)."""
        self._audit_batches.submit(event)

    def _write_events(self, events: list[NewEvent]) -> None:
        def work(session: Session) -> None:
            head = _lock_head(session, "audit_events")
            for event in events:
                head = _append(session, event.row(), head)
            _move_head(session, head)

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


    # -- tamper-evidence -----------------------------------------------------

    def verify(self, anchors: Iterable[tuple[str, int, str]] = ()) -> VerifyReport:
        """Re-check every hash chain from its first row, each chain's head,
        the stored rules content against its version's digest, and that the
        protecting triggers are in place. Reads one consistent snapshot.
        `anchors` are (chain, id, hash) recorded earlier outside the database."""
        report = VerifyReport()
        conn = self.engine.connect()
        if self.engine.dialect.name == "postgresql":
            conn = conn.execution_options(isolation_level="REPEATABLE READ")
        with conn, conn.begin():
            heads = {r["chain"]: r for r in
                     conn.execute(select(ChainHead.__table__)).mappings()}
            contents = {v: c for v, c in
                        conn.execute(select(RulesVersion.version, RulesVersion.content))}
            digests = {v: _stored_sha256(c) for v, c in contents.items()}
            for chain in CHAINS:
                table = Base.metadata.tables[chain]
                result = conn.execution_options(yield_per=2000).execute(
                    select(table).order_by(table.c.id))
                try:
                    report.chains.append(verify_chain(
                        chain, _readable_rows(conn, table, result), heads.get(chain), digests,
                        [(i, h) for c, i, h in anchors if c == chain]))
                finally:
                    result.close()
            for version, content in sorted(contents.items(), key=lambda vc: str(vc[0])):
                rebuilt, unreadable = _stored_rules_version(content)
                if rebuilt != version:
                    what = unreadable or f"gives {rebuilt!r}"
                    report.findings.append(
                        f"rules_versions {version!r}: the stored content {what} "
                        f"(changed after it was recorded)")
            report.rules_checked = len(contents)
            report.findings += _re_enabled_users(conn)
            report.findings += _workflow_findings(conn)
            guards = triggers.check(conn)
            report.missing_triggers = guards.missing
            report.changed_triggers = guards.changed
            report.unexpected_triggers = guards.unexpected
        return report


HEADS = ChainHead.__table__
# the state a version is in after each workflow event (letter_stored: no change)
STATE_AFTER = {"created": "draft", "corrected": "draft", "submitted": "submitted",
               "approved": "approved", "returned": "returned"}


def _number(session: Session, case: Case) -> int:
    """The case's number: the id of the participant's first version."""
    if case.version == 1:
        return case.id
    return session.scalar(select(Case.id).where(Case.participant_id == case.participant_id,
                                                Case.version == 1))


def _version_created(session: Session, case: Case, author: User,
                     application: Application | None, reason: str | None,
                     heads: dict[str, _Head] | None = None) -> None:
    """A new version's application, its workflow event and where the case
    stands (draft), in the transaction that stores the version. `heads`:
    the heads of case_applications and workflow_events, locked by a caller
    storing many new cases in one transaction (`record_drafts`), which
    moves them once at the end; here they are advanced."""

    def chained(chain: str, row: Any) -> None:
        if heads is None:
            _move_head(session, _append(session, row, _lock_head(session, chain)))
        else:
            heads[chain] = _append(session, row, heads[chain])

    number = _number(session, case)
    if application is not None:
        chained("case_applications", CaseApplication(
            case_id=case.id, name=application.name, address=application.address,
            application_date=application.application_date, note=application.note,
            letter_lang=application.letter_lang, created_at=case.created_at))
    chained("workflow_events", WorkflowEvent(
        at=case.created_at, number=number, case_id=case.id, version=case.version,
        action="created" if case.supersedes is None else "corrected", user_id=author.id,
        user_name=author.name, role=author.role, reason=reason, corrects=case.supersedes,
        letter_sha256=None))
    # a first version's number is its own new id: no state row can exist yet
    state = None if heads is not None and case.version == 1 else session.get(CaseState, number)
    if state is None:
        session.add(CaseState(number=number, participant_id=case.participant_id,
                              case_id=case.id, version=case.version, state="draft",
                              status=case.status, prepared_by=author.id, changed_by=author.id,
                              submitted_by=None, updated_at=case.created_at))
    else:
        state.case_id, state.version, state.state = case.id, case.version, "draft"
        state.status, state.changed_by, state.submitted_by = case.status, author.id, None
        state.updated_at = case.created_at


def _rules_row(session: Session, version: str, name: str, content: str) -> RulesVersion:
    """The stored rules of `version`, stored now if they are new."""
    stored = session.get(RulesVersion, version)
    if stored is None:
        stored = RulesVersion(version=version, name=name, content=content, created_at=now())
        session.add(stored)
        session.flush()
    return stored


def _application_of(session: Session, case_id: int) -> Application | None:
    """The application stored with version `case_id`, if any."""
    row = session.scalar(select(CaseApplication).where(CaseApplication.case_id == case_id))
    if row is None:
        return None
    return Application(name=row.name, address=row.address,
                       application_date=row.application_date, note=row.note,
                       letter_lang=row.letter_lang)


def _lock_state(session: Session, participant_id: str) -> CaseState | None:
    """The case's `case_states` row, locked until the transaction ends
    (SELECT ... FOR UPDATE on PostgreSQL, read afresh even if this session
    read it before; on SQLite the writer holds the database's write lock)."""
    return session.scalar(select(CaseState).where(CaseState.participant_id == participant_id)
                          .with_for_update().execution_options(populate_existing=True))


def barred_from_approving(session: Session, case: Case) -> set[int]:
    """The users who may not approve version `case`, read from the chained
    rows, whatever `case_states` says (maker-checker): the author of every
    version of the case up to this one (`cases.author_id`; a version's
    author is taken to have entered every value it carries, since a
    correction posts the whole application again) and whoever submitted
    this version (its `submitted` workflow events)."""
    authors = session.execute(select(Case.author_id).where(
        Case.participant_id == case.participant_id, Case.version <= case.version)).scalars()
    submitters = session.execute(select(WorkflowEvent.user_id).where(
        WorkflowEvent.case_id == case.id, WorkflowEvent.action == "submitted")).scalars()
    return {*authors, *submitters}


@dataclass(frozen=True)
class _Head:
    chain: str
    length: int
    last_id: int | None
    last_hash: str


def _lock_head(session: Session, chain: str) -> _Head:
    """The chain's head, locked until the transaction ends (SELECT ... FOR
    UPDATE on PostgreSQL; on SQLite the writer already holds the database's
    write lock). Writers of one chain queue here."""
    row = session.execute(select(HEADS.c.length, HEADS.c.last_id, HEADS.c.last_hash)
                          .where(HEADS.c.chain == chain).with_for_update()).one_or_none()
    if row is None:
        raise RuntimeError(f"the chain head {chain!r} is missing: run `diferida db upgrade`")
    return _Head(chain, row.length, row.last_id, row.last_hash)


def _append(session: Session, row: Any, head: _Head,
            rules_sha256: str | None = None) -> _Head:
    """Give `row` the id after the chain's last (`head`, locked), its place
    in the chain and its hash; the row is inserted with the transaction's next
    flush. Returns the chain's new head, for `_move_head`."""
    chain = head.chain
    row.id = (head.last_id or 0) + 1
    row.prev_hash = head.last_hash
    row.row_hash = row_hash(chain, head.last_hash,
                            {c: getattr(row, c)
                             for c in ("id", *CHAINS[chain], *ADDED.get(chain, ()))},
                            rules_sha256)
    session.add(row)
    return _Head(chain, head.length + 1, row.id, row.row_hash)


def _move_head(session: Session, head: _Head) -> None:
    session.execute(update(HEADS).where(HEADS.c.chain == head.chain).values(
        length=head.length, last_id=head.last_id, last_hash=head.last_hash))


class _GroupCommit:
    """Audit events submitted by several threads at once are written in one
    transaction: whoever finds no write under way writes every event waiting
    (its own included), the others wait for it. Each caller returns when its
    own event is committed, or raises its own error. A batch that fails is
    written again one event at a time, so one bad event fails alone."""

    def __init__(self, write: Callable[[list[NewEvent]], None]):
        self._write = write
        self._cond = threading.Condition()
        self._pending: list[_Slot] = []
        self._writing = False

    def submit(self, event: NewEvent) -> None:
        slot = _Slot(event)
        with self._cond:
            self._pending.append(slot)
            while not slot.done:
                if self._writing:
                    self._cond.wait()
                    continue
                self._writing = True
                batch, self._pending = self._pending, []
                self._cond.release()
                try:
                    self._write_batch(batch)
                finally:
                    self._cond.acquire()
                    for s in batch:
                        s.done = True
                    self._writing = False
                    self._cond.notify_all()
        if slot.error is not None:
            raise slot.error

    def _write_batch(self, batch: list[_Slot]) -> None:
        try:
            self._write([s.event for s in batch])
            return
        except Exception as exc:
            if len(batch) == 1:
                batch[0].error = exc
                return
        for s in batch:
            try:
                self._write([s.event])
            except Exception as exc:
                s.error = exc


@dataclass
class _Slot:
    event: NewEvent
    done: bool = False
    error: Exception | None = None


def _readable_rows(conn, table, result):
    """The rows of `result`; a row the driver cannot turn into values (on
    SQLite any column can hold anything) ends them with `UnreadableRow`,
    naming the first such row."""
    rows = iter(result.mappings())
    last = None
    while True:
        try:
            row = next(rows)
        except StopIteration:
            return
        except (ValueError, TypeError, OverflowError) as exc:
            raise UnreadableRow(_first_unreadable(conn, table, last), _short(exc)) from None
        last = row["id"]
        yield row


def _first_unreadable(conn, table, after: int | None) -> int | None:
    """The id of the first row after `after` that cannot be read (the driver
    reads rows in batches: the batch that failed is read again row by row)."""
    ids = select(table.c.id).order_by(table.c.id).limit(5000)
    if after is not None:
        ids = ids.where(table.c.id > after)
    for (rid,) in conn.execute(ids).all():
        try:
            conn.execute(select(table).where(table.c.id == rid)).one()
        except (ValueError, TypeError, OverflowError):
            return rid
    return None


def _stored_sha256(content: Any) -> str:
    """The SHA-256 a case's hash covers: of the stored rules content as text
    (anything else, which only a write around the application can store, is
    hashed as its bytes and so matches no case)."""
    if isinstance(content, str):
        return content_sha256(content)
    data = content if isinstance(content, bytes) else repr(content).encode("utf-8")
    return hashlib.sha256(b"\0" + data).hexdigest()


def _stored_rules_version(content: Any) -> tuple[str | None, str | None]:
    """The version stored rules content gives (its name and digest), or
    None and, in words, why it is not a rules table."""
    from diferida.rules import rules_from_resolved

    if not isinstance(content, str):
        return None, f"is not text ({type(content).__name__})"
    try:
        table = json.loads(content)
    except (ValueError, RecursionError) as exc:
        return None, f"is not JSON ({_short(exc)})"
    if not isinstance(table, dict):
        return None, f"is {_JSON_KINDS.get(type(table), 'a JSON value')}, not a rules table"
    try:
        return rules_from_resolved(table).version, None
    # stored content is read like any input: whatever the rules reader
    # raises on it means it is not the rules a case was decided with
    except Exception as exc:
        return None, f"is not a rules table ({type(exc).__name__}: {_short(exc)})"


_JSON_KINDS = {list: "a JSON array", str: "a JSON string", int: "a JSON number",
               float: "a JSON number", bool: "JSON true or false", type(None): "JSON null"}


def _short(exc: BaseException, limit: int = 200) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _re_enabled_users(conn) -> list[str]:
    """Users the audit trail says were disabled and the users table says are
    active (disabled_at is outside the users chain: it is the one field the
    store changes)."""
    disabled: dict[int, int] = {}
    for event_id, detail in conn.execute(
            select(AuditEvent.id, AuditEvent.detail).where(AuditEvent.action == "user.disable")
            .order_by(AuditEvent.id)):
        try:
            uid = int(json.loads(detail)["user_id"])
        except (TypeError, ValueError, KeyError, OverflowError, RecursionError):
            continue  # the event's own hash covers its content
        if 0 < uid < 2**31:  # users.id is an INTEGER
            disabled.setdefault(uid, event_id)
    if not disabled:
        return []
    active = conn.execute(select(User.id, User.name).where(
        User.id.in_(sorted(disabled)), User.disabled_at.is_(None))).all()
    return [f"users id {uid} ({name!r}): active, but disabled by audit event "
            f"{disabled[uid]} (re-enabled behind the store's back)" for uid, name in active]


def _workflow_findings(conn) -> list[str]:
    """What the workflow's derived and stored parts say against its chain:
    each letter's bytes against its SHA-256 in the `letter_stored` event,
    and where each case stands against its versions and events."""
    out: list[str] = []
    stored = {cid: sha for cid, sha in conn.execute(
        select(WorkflowEvent.case_id, WorkflowEvent.letter_sha256)
        .where(WorkflowEvent.action == "letter_stored"))}
    seen = set()
    for cid, pdf, sha in conn.execute(select(Letter.case_id, Letter.pdf, Letter.sha256)):
        seen.add(cid)
        actual = hashlib.sha256(bytes(pdf)).hexdigest() if pdf is not None else None
        if cid not in stored:
            out.append(f"letters case {cid}: no letter_stored event records it")
        elif not (actual == sha == stored[cid]):
            out.append(f"letters case {cid}: the stored PDF does not match the SHA-256 in its "
                       f"letter_stored event (changed after it was issued)")
    out += [f"letters case {cid}: its letter_stored event names a letter that is not stored"
            for cid in sorted(set(stored) - seen)]
    # each version: its participant, number and author (the cases chain)
    versions: dict[int, tuple[str, int, int]] = {
        cid: (pid, version, author) for cid, pid, version, author in conn.execute(
            select(Case.id, Case.participant_id, Case.version, Case.author_id))}
    authors: dict[str, dict[int, int]] = {}
    for pid, version, author in versions.values():
        authors.setdefault(pid, {})[version] = author
    after: dict[int, str] = {}
    submitters: dict[int, int] = {}
    for eid, cid, action, uid, name in conn.execute(
            select(WorkflowEvent.id, WorkflowEvent.case_id, WorkflowEvent.action,
                   WorkflowEvent.user_id, WorkflowEvent.user_name)
            .order_by(WorkflowEvent.id)):
        if action in STATE_AFTER:
            after[cid] = STATE_AFTER[action]
        if action == "submitted":
            submitters[cid] = uid
        elif action == "approved" and cid in versions:
            out += _approval_finding(eid, cid, uid, name, versions[cid], authors,
                                     submitters.get(cid))
    latest = dict(conn.execute(select(Case.participant_id, func.max(Case.version))
                               .group_by(Case.participant_id)).all())
    listed = set()
    for number, pid, cid, version, state, prepared, changed, submitted in conn.execute(
            select(CaseState.number, CaseState.participant_id, CaseState.case_id,
                   CaseState.version, CaseState.state, CaseState.prepared_by,
                   CaseState.changed_by, CaseState.submitted_by)):
        listed.add(pid)
        if latest.get(pid) != version:
            out.append(f"case_states case {number}: says version {version} is current, the "
                       f"cases table's latest is {latest.get(pid)}")
        elif after.get(cid, "draft") != state:
            out.append(f"case_states case {number}: says {state!r}, its workflow events say "
                       f"{after.get(cid, 'draft')!r}")
        else:
            mine = authors.get(pid, {})
            said = {"prepared_by": prepared, "changed_by": changed, "submitted_by": submitted}
            truth = {"prepared_by": mine.get(1), "changed_by": mine.get(version),
                     "submitted_by": submitters.get(cid)}
            out += [f"case_states case {number}: says {key} = user {said[key]}, its versions "
                    f"and workflow events say user {truth[key]}"
                    for key in said if said[key] != truth[key]]
    missing = len(set(latest) - listed)
    if missing:
        out.append(f"case_states: {missing} cases are missing (they would be in no queue)")
    return out


def _approval_finding(event_id: int, case_id: int, approver: int, name: str,
                      version: tuple[str, int, int], authors: dict[str, dict[int, int]],
                      submitter: int | None) -> list[str]:
    """The maker-checker rule read from the chained rows alone (as
    `barred_from_approving` applies it): an approval by the author of any
    version up to the one approved, or by its submitter, is a finding."""
    pid, number, _author = version
    roles = [f"the author of version {v}" for v, a in sorted(authors.get(pid, {}).items())
             if v <= number and a == approver]
    if submitter == approver:
        roles.append(f"the submitter of version {number}")
    if not roles:
        return []
    return [f"workflow_events id {event_id}: version {number} (case row {case_id}) approved "
            f"by user {approver} ({name!r}), who is {' and '.join(roles)} (four-eyes rule "
            f"broken)"]


def _transient(exc: OperationalError) -> bool:
    """Lock waits that ran out or a serialization failure: worth another try."""
    message = str(exc.orig).lower() if exc.orig is not None else ""
    return ("database is locked" in message or "could not serialize" in message
            or "deadlock" in message)
