"""The benefit analyst's workbench: one function per user action, called by
both the API (`workflow_api`) and the web pages, so the two can never differ.

A *case* is one participant's file of determinations. Each of its versions is
a row of `cases` (append-only, hash-chained); `CaseView.case_id` is the id of
that row and `CaseView.number` the id of the case's first version (the case
number printed on letters). Every function taking `case_id` accepts the id of
any version; the actions that change a case (`correct`, `submit`, `approve`,
`return_case`) act only on the current version and refuse (`stale`, 409) a
version that has been superseded, so nobody approves what they have not seen.

Lifecycle of a version::

    draft ──submit──► submitted ──approve──► approved (issued; never changes)
      ▲                   │
      │                 return (with a reason)
      │                   ▼
      └──── correct ◄── returned        (correct: a new version, in draft,
                                          naming the version it corrects and why)

A correction may also be made of a draft or of an approved version (the
approved one stays as issued; the new version needs approval again); a
submitted version is with the supervisor and is not corrected until returned.

Roles: `analyst` opens, imports, corrects and submits; `supervisor` does all
that and approves or returns, never approving a version of a case they
prepared (author of its first version), changed last (author of this version)
or submitted; `auditor` reads everything and changes nothing. Every refusal
raises `Refused` and is written to the audit trail first.

Every transition is a row of `workflow_events` (its own hash chain, so
`diferida audit verify` covers it) and an audit event. The application's
personal data (name, mailing address, application date, note) lives in
`case_applications` (a hash chain too) and is never written to a log line
or an audit event.

Beyond the first sketch of this module: `view` (one version), `verify_now`
and `last_verification` (the auditor's chain check, made on request and
recorded as an `audit.verify` event; `verify_view` its older shape),
`audit_filter_problems` (the trail's filters the store cannot take),
`stored_letter` and `correction_reason` (for the print route),
`hash_password` (for `diferida users`); `return_case` takes `lang` (for the
message of a missing reason); `preview` returns, not raises, its Refused;
every result type has `to_dict()` (the API's JSON).
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import and_, func, or_, select

from ..determination import Determination
from ..i18n import DEFAULT_LANG, LANGS, Keep, catalog, fmt_date
from ..money import format_money
from ..words import field_label
from .participant import control_character, field_problem, id_problem, normalised_id, parse
from .schemas import APPLICATION_FIELDS, ApplicationBody
from .store import (
    STATE_AFTER,
    Application,
    AuditEvent,
    Case,
    CaseApplication,
    CaseConflict,
    CaseProblem,
    CaseState,
    Letter,
    NewEvent,
    Store,
    User,
    WorkflowConflict,
    barred_from_approving,
)
from .store import WorkflowEvent as WorkflowRow

__all__ = [
    "ACTIONS", "EXPORTS", "QUEUES", "STATES", "AuditEntry", "CaseHistory", "CaseSummary",
    "CaseView",
    "ImportResult", "Page", "Refused", "RejectedRow", "VersionChange", "WorkflowEvent",
    "Verification", "approve", "audit_filter_problems", "audit_view", "authenticate",
    "correct", "export", "history", "last_verification", "verify_now",
    "import_applications", "letter", "open_draft", "preview", "queue", "return_case",
    "search", "correction_reason", "stored_letter", "submit", "verify_view", "view",
]

STATES = ("draft", "submitted", "approved", "returned")
QUEUES = ("drafts", "returned", "awaiting", "issued")
# what a user may do to a version, as listed in CaseView.can
ACTIONS = ("correct", "submit", "approve", "return")
# the application's own fields, besides SPEC §1's
EXPORTS = ("cases", "events", "summary")
FORMATS = ("csv", "xlsx")
PER_PAGE = 50
MAX_PER_PAGE = 200
# the longest text each application field takes (characters)
LIMITS = {"name": 200, "address": 1000, "note": 2000, "reason": 2000}

PREPARERS = ("analyst", "supervisor")
APPROVERS = ("supervisor",)
READERS = ("analyst", "supervisor", "auditor")
AUDITORS = ("auditor",)
EXPORTERS = ("supervisor", "auditor")

# audit events of the workbench: method WORKFLOW, path workflow.<action>
METHOD = "WORKFLOW"

# The cost of hashing a password: one of argon2-cffi's profiles, by name,
# from DIFERIDA_PASSWORD_PROFILE. The default is argon2-cffi's own default,
# RFC 9106's low-memory profile. A hash records its own parameters, so a
# password set under one profile is still verified under another. CHEAPEST
# is for tests only (argon2-cffi's words): the test suite sets it, since a
# hash at the default cost takes about 0.15 s of CPU here.
PASSWORD_PROFILE_ENV = "DIFERIDA_PASSWORD_PROFILE"
DEFAULT_PASSWORD_PROFILE = "RFC_9106_LOW_MEMORY"


def password_hasher() -> PasswordHasher:
    """The hasher of the profile DIFERIDA_PASSWORD_PROFILE names (see above)."""
    from argon2 import profiles

    name = os.environ.get(PASSWORD_PROFILE_ENV) or DEFAULT_PASSWORD_PROFILE
    known = sorted(n for n in dir(profiles) if n.isupper())
    if name not in known:
        raise ValueError(f"{PASSWORD_PROFILE_ENV} must be one of {', '.join(known)}, "
                         f"got {name!r}")
    return PasswordHasher.from_parameters(getattr(profiles, name))


_HASHER = password_hasher()
# verified when the name is unknown, so that a wrong name takes as long as a
# wrong password
_DUMMY_HASH = _HASHER.hash("not a password of anyone")


def hash_password(password: str) -> str:
    """The argon2id hash of a password (by default RFC 9106's low-memory
    profile, see password_hasher); the password itself is never stored."""
    return _HASHER.hash(password)


def _text(lang: str, key: str, **values: Any) -> str:
    lang = lang if lang in LANGS else DEFAULT_LANG
    node: Any = catalog(lang)["workflow"]
    for part in key.split("."):
        node = node[part]
    return str(node).format_map(Keep(values))


class Refused(Exception):
    """An action refused. `code`: not_allowed (403: the role may not),
    own_case (403: maker-checker), wrong_state (409), stale (409: not the
    current version), exists / submitted (409: the participant has a case /
    the case is with the supervisor), letter_check (409: the issued letter's
    stored bytes do not match the SHA-256 in its chained event), not_found (404), invalid (422:
    `problems` names every bad field, same shape and messages as the API's),
    too_large (413: a file holding more than an upload may; `problems` names
    the limit).
    `message(lang)` is the sentence to show (catalog
    i18n/<lang>/workflow.toml). Every refusal is recorded in the audit trail
    before it is raised."""

    STATUS = {"not_allowed": 403, "own_case": 403, "wrong_state": 409, "stale": 409,
              "exists": 409, "submitted": 409, "not_found": 404, "invalid": 422,
              "letter_check": 409, "too_large": 413}

    def __init__(self, code: str, *, problems: Sequence[Mapping[str, Any]] = (),
                 **values: Any):
        super().__init__(code)
        self.code = code
        self.status = self.STATUS[code]
        self.problems = [dict(p) for p in problems]
        self.values = values

    def message(self, lang: str) -> str:
        values = dict(self.values)
        if "action" in values:
            values["action_text"] = _text(lang, f"actions.{values['action']}")
        if "state" in values:
            values["state_text"] = _text(lang, f"states.{values['state']}")
        return _text(lang, self.code, **values)

    def to_problems(self, lang: str) -> list[dict[str, Any]]:
        """The refusal as the API's list of problems."""
        if self.problems:
            return self.problems
        return [{"field": None, "code": self.code, "message": self.message(lang),
                 "value": None}]


@dataclass(frozen=True)
class CaseView:
    """One version of a case, with its application and where it stands."""

    case_id: int                   # this version's row id
    number: int                    # the case number: id of the first version
    participant_id: str
    version: int
    state: str                     # one of STATES
    current: bool                  # not superseded by a later version
    inputs: dict[str, Any]         # the SPEC §1 fields as stored
    result: dict[str, Any]         # Determination.to_dict() as stored
    as_of: date
    lang: str
    rules_version: str
    created_at: datetime           # UTC, aware
    prepared_by: str               # author of the first version
    changed_by: str                # author of this version
    name: str | None = None
    address: str | None = None
    application_date: date | None = None
    note: str | None = None
    corrects: int | None = None            # case_id of the version this one corrects
    corrects_version: int | None = None
    correction_reason: str | None = None
    submitted_by: str | None = None
    submitted_at: datetime | None = None
    approved_by: str | None = None
    approved_at: datetime | None = None
    returned_by: str | None = None
    return_reason: str | None = None
    letter_sha256: str | None = None       # set once approved
    can: frozenset[str] = frozenset()      # what the user asking may do now (ACTIONS)

    def to_dict(self) -> dict[str, Any]:
        out = {k: _plain(getattr(self, k)) for k in self.__dataclass_fields__}
        out["can"] = sorted(self.can)
        return out


@dataclass(frozen=True)
class CaseSummary:
    """A row of a queue or of search results (the current version of a case)."""

    number: int
    case_id: int
    participant_id: str
    version: int
    state: str
    name: str | None
    changed_by: str
    updated_at: datetime
    status: str                    # the determination's status

    def to_dict(self) -> dict[str, Any]:
        return {k: _plain(getattr(self, k)) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class Page:
    items: list[Any]
    page: int
    per_page: int
    total: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))

    @property
    def has_next(self) -> bool:
        return self.page < self.pages

    def to_dict(self) -> dict[str, Any]:
        return {"items": [i.to_dict() for i in self.items], "page": self.page,
                "per_page": self.per_page, "total": self.total, "pages": self.pages}


@dataclass(frozen=True)
class WorkflowEvent:
    id: int
    at: datetime                   # UTC, aware (pages show it in AST)
    user: str
    role: str
    action: str                    # created, submitted, approved, returned, corrected,
    case_id: int                   #   letter_stored
    version: int
    reason: str | None = None
    corrects: int | None = None
    letter_sha256: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: _plain(getattr(self, k)) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class VersionChange:
    """What changed from one version to the next, in words."""

    from_version: int
    to_version: int
    lines: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"from_version": self.from_version, "to_version": self.to_version,
                "lines": list(self.lines)}


@dataclass(frozen=True)
class CaseHistory:
    current: CaseView              # the case's current version
    versions: list[CaseView]       # oldest first
    events: list[WorkflowEvent]    # oldest first
    changes: list[VersionChange]   # between each version and the next

    def to_dict(self) -> dict[str, Any]:
        return {"current": self.current.to_dict(),
                "versions": [v.to_dict() for v in self.versions],
                "events": [e.to_dict() for e in self.events],
                "changes": [c.to_dict() for c in self.changes]}


@dataclass(frozen=True)
class RejectedRow:
    row: int                       # as a person opening the file counts
    participant_id: str | None
    field: str | None
    code: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class ImportResult:
    rows_in: int
    created: list[CaseSummary]
    rejected: list[RejectedRow] = field(default_factory=list)

    @property
    def rows_rejected(self) -> int:
        return len({r.row for r in self.rejected})

    def to_dict(self) -> dict[str, Any]:
        return {"rows_in": self.rows_in, "rows_created": len(self.created),
                "rows_rejected": self.rows_rejected,
                "created": [c.to_dict() for c in self.created],
                "rejected": [r.to_dict() for r in self.rejected]}


@dataclass(frozen=True)
class AuditEntry:
    id: int
    at: datetime
    user: str | None
    role: str | None
    action: str
    case_id: int | None
    participant_id: str | None
    status_code: int
    detail: str | None

    def to_dict(self) -> dict[str, Any]:
        return {k: _plain(getattr(self, k)) for k in self.__dataclass_fields__}


def _plain(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, frozenset):
        return sorted(value)
    return value


# -- refusals ------------------------------------------------------------------


def _audit(store: Store, user: User | None, action: str, status: int, *,
           case_id: int | None = None, participant_id: str | None = None,
           detail: str | None = None) -> None:
    store.audit(NewEvent(f"workflow.{action}", METHOD, f"workflow.{action}", status, user=user,
                         case_id=case_id, participant_id=participant_id, detail=detail))


def _name_case(store: Store, refusal: Refused) -> None:
    """Add the case number and version of the version ids a refusal holds
    (`case_id` -> number, version; `current` -> current_number,
    current_version): messages name a case as the pages and letters do."""
    for key, prefix in (("case_id", ""), ("current", "current_")):
        row_id = refusal.values.get(key)
        if not isinstance(row_id, int) or f"{prefix}number" in refusal.values:
            continue
        with store.reading() as session:
            case = session.get(Case, row_id)
            if case is None:
                continue
            st = session.scalar(select(CaseState)
                                .where(CaseState.participant_id == case.participant_id))
            refusal.values[f"{prefix}number"] = _case_number(session, case, st)
            refusal.values[f"{prefix}version"] = case.version


def _refuse(store: Store, user: User | None, action: str, refusal: Refused, *,
            case_id: int | None = None, participant_id: str | None = None) -> Refused:
    """Record the refusal (codes and field names only, never values) and
    give it back to raise, naming the case by its number and version."""
    _name_case(store, refusal)
    detail = f"refused: {refusal.code}"
    if refusal.problems:
        detail += " " + ",".join(f"{p.get('field')}:{p.get('code')}" for p in refusal.problems)
    _audit(store, user, action, refusal.status, case_id=case_id,
           participant_id=participant_id, detail=detail[:500])
    return refusal


def _require(store: Store, user: User, action: str, roles: tuple[str, ...],
             case_id: int | None = None) -> None:
    if user.role not in roles or user.disabled_at is not None:
        raise _refuse(store, user, action,
                      Refused("not_allowed", role=user.role, action=action), case_id=case_id)


# -- sign-in ------------------------------------------------------------------


def authenticate(store: Store, name: str, password: str) -> User | None:
    """The active user with this name and password, or None (unknown name,
    wrong password, disabled user, or no password set). Takes the same time
    whether or not the name exists. Nothing is recorded here: the caller
    records the attempt (and rate-limits failures)."""
    if not isinstance(name, str) or not isinstance(password, str) or not name or \
            "\x00" in name or len(name) > 100:
        _verify(_DUMMY_HASH, password if isinstance(password, str) else "")
        return None
    user, hashed = store.sign_in_record(name)
    if user is None or hashed is None:
        _verify(_DUMMY_HASH, password)
        return None
    return user if _verify(hashed, password) else None


def _verify(hashed: str, password: str) -> bool:
    try:
        return _HASHER.verify(hashed, password)
    except (VerificationError, InvalidHashError):
        return False


# -- the application ------------------------------------------------------------


@dataclass
class _Parsed:
    fields: dict[str, Any]
    application: Application
    rules: Any
    problems: list[dict[str, Any]]


def _parse_application(application: Mapping[str, Any], lang: str,
                       today: date | None = None) -> _Parsed:
    body = {k: v for k, v in application.items() if k not in ("lang",)}
    parsed = parse(body, ApplicationBody)
    problems = [p for p in parsed.problems if p.get("field") != "lang"]
    texts: dict[str, str | None] = {}
    for name in ("name", "address", "note"):
        value = parsed.options.get(name)
        if isinstance(value, str):
            value = value.strip() or None
        if value is None:
            texts[name] = None
            continue
        if not isinstance(value, str):
            problems.append(_app_problem(lang, name, "not_text"))
            continue
        allowed = value.replace("\n", "").replace("\r", "") if name != "name" else value
        char = control_character(allowed)
        if "\x00" in value:
            problems.append(_app_problem(lang, name, "nul_character"))
        elif char is not None:
            problems.append(_app_problem(lang, name, "control_character", char=char))
        elif len(value) > LIMITS[name]:
            problems.append(_app_problem(lang, name, "too_long", limit=LIMITS[name]))
        else:
            texts[name] = value.replace("\r\n", "\n").replace("\r", "\n")
    applied: date | None = None
    raw = parsed.options.get("application_date")
    if isinstance(raw, str):
        raw = raw.strip() or None
    if isinstance(raw, date) and not isinstance(raw, datetime):
        applied = raw
    elif raw is not None:
        try:
            applied = date.fromisoformat(raw) if isinstance(raw, str) and len(raw) == 10 \
                else None
        except ValueError:
            applied = None
        if applied is None:
            problems.append(_app_problem(lang, "application_date", "not_a_date", str(raw)))
    if applied is not None and applied > (today or date.today()):
        problems.append(_app_problem(lang, "application_date", "in_future",
                                     applied.isoformat()))
        applied = None
    app = Application(name=texts.get("name"), address=texts.get("address"),
                      application_date=applied, note=texts.get("note"))
    return _Parsed(dict(parsed.fields), app, parsed.rules, problems)


def _app_problem(lang: str, name: str, code: str, value: Any = None, **kw: Any) -> dict:
    label = _text(lang, f"fields.{name}")
    if code == "in_future":
        message = _text(lang, "in_future", value=value)
    else:
        from . import messages

        message = messages.text(lang, code, name, value="" if value is None else value, **kw)
    return {"field": name, "code": code, "message": f"{label} ({name}): {message}",
            "value": value}


def _evaluate(parsed: _Parsed, lang: str, as_of: date | None) -> Determination:
    """The engine's answer, or Refused("invalid") naming every bad field."""
    from ..core import InputError, evaluate

    core: list[dict[str, Any]] = []
    d = None
    try:
        d = evaluate(parsed.fields, as_of=as_of, rules=parsed.rules, lang=lang)
    except InputError as exc:
        core = [p.to_dict() for p in exc.problems]
        for p in core:
            p.pop("row", None)
            p.pop("participant_id", None)
    flagged = {p["field"] for p in parsed.problems}
    problems = [*parsed.problems, *(p for p in core if p["field"] not in flagged)]
    pid = normalised_id(parsed.fields.get("participant_id"))
    if pid is None and not any(p["field"] == "participant_id" for p in problems):
        problems.append(field_problem(lang, "participant_id", "missing"))
    elif pid is not None and len(pid) > 200:
        problems.append(field_problem(lang, "participant_id", "too_long", None, limit=200))
    if problems or d is None:
        raise Refused("invalid", problems=problems)
    return d


def preview(application: Mapping[str, Any], *, lang: str,
            as_of: date | None = None) -> Determination | Refused:
    """The engine's answer for an application before saving: the
    Determination, or a Refused("invalid") naming every bad field (returned,
    not raised). Nothing is stored or logged."""
    lang = lang if lang in LANGS else DEFAULT_LANG
    try:
        return _evaluate(_parse_application(application, lang), lang, as_of)
    except Refused as refusal:
        return refusal


def _store_version(store: Store, user: User, action: str, parsed: _Parsed,
                   d: Determination, lang: str, supersedes: int | None,
                   reason: str | None) -> Case:
    inputs = dict(parsed.fields)
    inputs["participant_id"] = d.participant_id
    rules = parsed.rules

    def event(case: Case) -> NewEvent:
        return NewEvent(f"workflow.{action}", METHOD, f"workflow.{action}", 201, user=user,
                        case_id=case.id, participant_id=case.participant_id,
                        detail=f"version {case.version}" + (
                            f", corrects {case.supersedes}" if case.supersedes else ""))

    try:
        return store.record_case(
            participant_id=d.participant_id, inputs=inputs, result=d.to_dict(),
            rules_version=rules.version, rules_name=rules.name, rules_content=rules.resolved,
            as_of=d.as_of, lang=lang, author=user, supersedes=supersedes, note=None,
            event=event, application=parsed.application, reason=reason)
    except CaseConflict as exc:
        code = {"case_exists": "exists", "stale_version": "stale"}.get(exc.code, exc.code)
        raise _refuse(store, user, action, Refused(code, current=exc.current_id,
                                                   case_id=supersedes),
                      case_id=supersedes, participant_id=d.participant_id) from None
    except CaseProblem as exc:
        raise _refuse(store, user, action, Refused("not_found", case_id=exc.value),
                      case_id=supersedes) from None


def open_draft(store: Store, user: User, application: Mapping[str, Any], *, lang: str,
               as_of: date | None = None) -> CaseView:
    """A new case (version 1, draft) from an application: the SPEC §1 fields
    plus name, address, application_date (YYYY-MM-DD) and note. Values may be
    text as typed in a form or JSON values."""
    lang = lang if lang in LANGS else DEFAULT_LANG
    _require(store, user, "open", PREPARERS)
    parsed = _parse_application(application, lang)
    try:
        d = _evaluate(parsed, lang, as_of)
    except Refused as refusal:
        raise _refuse(store, user, "open", refusal) from None
    case = _store_version(store, user, "open", parsed, d, lang, None, None)
    return view(store, user, case.id, _audit_read=False)


def import_applications(store: Store, user: User, data: bytes, filename: str, *,
                        lang: str, as_of: date | None = None,
                        limits: Any = None) -> ImportResult:
    """Drafts from a CSV or .xlsx of applications (columns: the SPEC §1 fields
    and name, address, application_date, note).

    The file is read by the batch readers within `limits` (a
    `batch.limits.Limits`; by default an upload's, `settings.upload_limits`,
    as for POST /api/v1/batches): rows, cells and text once read, and an
    .xlsx's declared area and unzipped size, checked before the file is read
    where the file tells, else chunk by chunk as it is read. A file over one
    is Refused("too_large") (413), its message naming the limit. The file is
    decided by the population pass (`batch.population`), a chunk at a time
    and column-wise: the engine's checks of the SPEC §1 fields and the
    checks of `_parse_application` on the application's columns, with the
    same messages (`_import_problems`). Nothing is stored before the whole
    file is decided; the drafts are then stored IMPORT_BATCH to a
    transaction (`Store.record_drafts`, one audit event per transaction).

    Every rejected row is named with its row number, participant id, field
    and reason; rows in = drafts created + rows rejected. An id given again
    later in the file is rejected (duplicate_in_file), and so is an id that
    already has a case (exists): those are recorded in one audit event with
    their count. A file that cannot be read at all is Refused("invalid")
    with the reader's message."""
    from ..batch.errors import FileProblem
    from ..batch.limits import TOO_LARGE
    from .settings import upload_limits

    lang = lang if lang in LANGS else DEFAULT_LANG
    _require(store, user, "import", PREPARERS)
    try:
        decided = _decide_import(data, filename, lang, as_of,
                                 limits if limits is not None else upload_limits())
    except FileProblem as exc:
        code = "too_large" if exc.code in TOO_LARGE else "invalid"
        raise _refuse(store, user, "import", Refused(code, problems=[{
            "field": "file", "code": exc.code, "message": exc.text(lang),
            "value": None, "line": exc.line}])) from None
    created, rejected, exists = _store_imported(store, user, decided, lang)
    result = ImportResult(decided.rows_in, created, rejected)
    if result.rows_in != len(created) + result.rows_rejected:
        from ..batch.population import AccountingError

        raise AccountingError(f"import: {result.rows_in} rows in, {len(created)} drafts, "
                              f"{result.rows_rejected} rejected")
    if exists:
        _audit(store, user, "import", Refused.STATUS["exists"],
               detail=f"refused: exists, {exists} rows (participants with a case)")
    _audit(store, user, "import", 200,
           detail=f"{result.rows_in} rows: {len(created)} drafts, "
                  f"{result.rows_rejected} rejected")
    return result


IMPORT_CHUNK_ROWS = 5_000  # rows decided at a time: the population pass's chunk
IMPORT_BATCH = 1_000  # drafts stored per transaction (the chains' heads are held that long)
# What Python's str.strip() removes: the application's texts are trimmed so
# (tests/test_hardening_round3_import.py holds it equal to str.isspace).
PY_WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003"
                 "\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_CONTROL_CLASS = r"([\x00-\x1f\x7f-\x9f])"  # participant.control_character's
_ID_LIMIT = 200  # the store's column, as `_evaluate` checks it
_APP_COLUMN = {name: f"\x00application_{name}" for name in APPLICATION_FIELDS}
_XLSX_DATE_CELL = r"^(\d{4}-\d{2}-\d{2}) 00:00:00$"  # a date cell as the .xlsx reader reads it


@dataclass
class _Imported:
    """A file decided: rows read; the kept rows chunk by chunk (the engine's
    columns with the application's, the SPEC §1 fields as given, their row
    numbers); the rejected rows; the rules."""

    rows_in: int
    kept: list[tuple[Any, Any, Any]]
    rejected: list[RejectedRow]
    rules: Any


def _decide_import(data: bytes, filename: str, lang: str, as_of: date | None,
                   limits: Any) -> _Imported:
    import polars as pl

    from ..batch.errors import FileProblem
    from ..batch.io import open_source, text_bytes
    from ..batch.population import Decided, PopulationPass
    from ..core import run
    from ..fields import FIELD_NAMES
    from ..rules import load_rules
    from ..validation import ROW

    rules = load_rules(None)
    today = date.today()
    src = open_source(data, filename, limits=limits)
    spec = [c for c in src.columns if c in FIELD_NAMES]
    read = [0]
    kept: list[tuple[Any, Any, Any]] = []
    rejects: list[pl.DataFrame] = []

    def decide(frame: pl.DataFrame) -> tuple[tuple[pl.DataFrame, ...], pl.DataFrame]:
        read[0] += text_bytes(frame)  # the text once read, as it is read
        limits.check_text(src.file, read[0])
        full, errors, _ = run(frame.select(spec), as_of=as_of, rules=rules, require_id=True)
        app, bad = _import_problems(frame, errors, lang, rules, today, src.kind)
        rows = full.get_column(ROW)
        full = full.filter(~rows.is_in(bad.get_column("row").cast(rows.dtype).implode()))
        app = app[full.get_column(ROW).cast(pl.Int64).to_numpy()]
        return (pl.concat([full, app], how="horizontal"),), bad

    def use(d: Decided) -> None:
        kept.append((d.kept[0], d.chunk.frame.select(spec)[d.positions],
                     d.chunk.rows[d.positions]))
        rejects.append(d.rejects)

    population = PopulationPass(src, IMPORT_CHUNK_ROWS, lang=lang, sample_rejects=0)
    try:
        tally = population.run(decide, use)
    finally:
        population.close()
    if tally.rows_read == 0:
        raise FileProblem("no_rows", file=src.file)
    rejected = []
    for frame in rejects:
        for number, pid, name, code, _value, message in frame.iter_rows():
            if code == "duplicate_id":  # an id given again later in the file
                code, message = "duplicate_in_file", _text(lang, "duplicate_in_file", value=pid)
            rejected.append(RejectedRow(number, pid or None, name, code, message))
    return _Imported(tally.rows_read, kept, rejected, rules)


def _import_problems(frame: Any, errors: Any, lang: str, rules: Any, today: date,
                     kind: str) -> tuple[Any, Any]:
    """A chunk's application values as stored (texts trimmed, line breaks
    made \\n; the date) and its problems, column-wise: the checks and
    messages of `_parse_application` and `_evaluate`, each row's in their
    order there (the id's own, the application's fields, the engine's for
    the SPEC §1 fields, then a missing or too long id), an id given again
    (the engine's duplicate_id) first. Rows numbered in the chunk."""
    import polars as pl

    from ..core import _rejected

    h = frame.height
    number = pl.Series("row", range(h), dtype=pl.Int64)
    raw_id = frame.get_column("participant_id")
    raw_id = raw_id if raw_id.dtype == pl.String else raw_id.cast(pl.String)
    pid = raw_id.str.strip_chars()  # as the engine reads it (participant.normalised_id)
    parts: list[pl.DataFrame] = []

    def add(rank: int, name: str, code: pl.Series, key: pl.Series | None,
            text: Any) -> None:
        """Problems where `code` is set, `key` shown as their value; their
        message `text(code, key)`, worked out once per distinct pair."""
        key = pl.Series([None] * h, dtype=pl.String) if key is None else key
        found = pl.DataFrame({"row": number, "participant_id": pid, "code": code,
                              "value": key}).filter(pl.col("code").is_not_null())
        if not found.height:
            return
        texts = {f"{c}|{k or ''}": text(c, k)
                 for c, k in found.select("code", "value").unique().rows()}
        parts.append(found.select(
            "row", "participant_id", pl.lit(name, dtype=pl.String).alias("field"), "code",
            "value", (pl.col("code") + "|" + pl.col("value").fill_null(""))
            .replace_strict(texts, return_dtype=pl.String).alias("message"),
            pl.lit(rank, dtype=pl.Int32).alias("_rank")))

    # the participant id's own problems (participant.id_problem)
    char = pid.str.extract(_CONTROL_CLASS, 1)
    id_code = _first_code([(raw_id.str.contains("\x00", literal=True), "nul_character"),
                           (char.is_not_null(), "control_character")])
    add(1, "participant_id", id_code, char, lambda c, k: field_problem(
        lang, "participant_id", c, **({"char": _char(k)} if c == "control_character" else {})
    )["message"])
    # the application's fields (_parse_application), in its order
    values: dict[str, pl.Series] = {}
    for rank, name in enumerate(("name", "address", "note"), start=2):
        values[name], code, char = _text_column(frame, name, h)
        add(rank, name, code, char, lambda c, k, name=name: _app_problem(
            lang, name, c, **({"char": _char(k)} if c == "control_character" else
                              {"limit": LIMITS[name]} if c == "too_long" else {}))["message"])
    values["application_date"], code, shown = _date_column(frame, h, today, kind)
    add(5, "application_date", code, shown, lambda c, k: _app_problem(
        lang, "application_date", c, k)["message"])
    # the workflow's own: no id, or one longer than the store keeps (_evaluate)
    blank = (pid.is_null() | (pid == "")).fill_null(True)
    clean = id_code.is_null()
    late = _first_code([(blank & clean, "missing"),
                        (~blank & clean & (pid.str.len_chars() > _ID_LIMIT), "too_long")])
    add(100, "participant_id", late, None, lambda c, k: field_problem(
        lang, "participant_id", c, None, **({"limit": _ID_LIMIT} if c == "too_long" else {})
    )["message"])
    # the engine's: an id given again first, unless the id itself is refused
    # (as the population pass has it across chunks); its "missing" id is the
    # workflow's own, above (the path of one application asks for none)
    core = _rejected(errors, lang, rules).with_columns(pl.col("row").cast(pl.Int64))
    refused = number.filter(id_code.is_not_null() | late.is_not_null()).implode()
    parts.append(core.filter((pl.col("field") == "participant_id")
                             & (pl.col("code") == "duplicate_id")
                             & ~pl.col("row").is_in(refused))
                 .with_columns(pl.lit(0, dtype=pl.Int32).alias("_rank")))
    parts.append(core.filter(pl.col("field") != "participant_id")
                 .with_columns(pl.lit(10, dtype=pl.Int32).alias("_rank")))
    app = pl.DataFrame({_APP_COLUMN[n]: values[n] for n in APPLICATION_FIELDS})
    columns = ("row", "participant_id", "field", "code", "value", "message", "_rank")
    bad = pl.concat([p.select(columns) for p in parts]) \
        .sort("row", "_rank", maintain_order=True).drop("_rank")
    return app, bad


def _first_code(pairs: list[tuple[Any, str]]) -> Any:
    """Row by row, the code of the first mask that holds (null: none does)."""
    import polars as pl

    out = pl.Series([None] * len(pairs[0][0]), dtype=pl.String)
    for mask, code in reversed(pairs):
        out = pl.Series([code] * len(out), dtype=pl.String).zip_with(mask.fill_null(False), out)
    return out


def _char(found: str) -> str:
    return f"U+{ord(found):04X}"  # as participant.control_character writes it


def _text_column(frame: Any, name: str, h: int) -> tuple[Any, Any, Any]:
    """A text of the application (name, address, note), column-wise as
    `_parse_application` takes one: (the value stored, or null; the
    problem's code; the control character found)."""
    import polars as pl

    none = pl.Series([None] * h, dtype=pl.String)
    column = frame.get_column(name) if name in frame.columns else none
    if column.dtype == pl.Null:
        return none, none, none
    if column.dtype != pl.String:  # a typed column (Parquet): no text
        return none, _first_code([(column.is_not_null(), "not_text")]), none
    value = column.str.strip_chars(PY_WHITESPACE)
    value = none.zip_with((value == "").fill_null(False), value)
    allowed = value if name == "name" else value.str.replace_all(r"[\r\n]", "")
    char = allowed.str.extract(_CONTROL_CLASS, 1)
    code = _first_code([(value.str.contains("\x00", literal=True), "nul_character"),
                        (char.is_not_null(), "control_character"),
                        (value.str.len_chars() > LIMITS[name], "too_long")])
    stored = value.str.replace_all("\r\n", "\n", literal=True) \
        .str.replace_all("\r", "\n", literal=True)
    return stored.zip_with(code.is_null(), none), code, char


def _date_column(frame: Any, h: int, today: date, kind: str) -> tuple[Any, Any, Any]:
    """The application date, column-wise as `_parse_application` takes it:
    (the date stored, or null; the problem's code; the value shown)."""
    import polars as pl

    none = pl.Series([None] * h, dtype=pl.String)
    column = frame.get_column("application_date") if "application_date" in frame.columns \
        else none
    if column.dtype == pl.Null:
        return pl.Series([None] * h, dtype=pl.Date), none, none
    if column.dtype == pl.Date:
        dates, raw = column, column.cast(pl.String)
    else:
        raw = column if column.dtype == pl.String else column.cast(pl.String, strict=False)
        raw = raw.str.strip_chars(PY_WHITESPACE)
        raw = none.zip_with((raw == "").fill_null(False), raw)
        if kind == "xlsx":  # a date cell, read as the reader reads the SPEC §1 dates
            raw = raw.str.replace(_XLSX_DATE_CELL, "${1}")
        # each distinct text read once, by the very parse of one application
        parsed = {text: _iso_date(text) for text in raw.drop_nulls().unique().to_list()}
        dates = raw.replace_strict(parsed, default=None, return_dtype=pl.Date)
    not_date = raw.is_not_null() & dates.is_null()
    future = dates > today
    code = _first_code([(not_date, "not_a_date"), (future, "in_future")])
    shown = none.zip_with(not_date.fill_null(False), dates.cast(pl.String))
    shown = raw.zip_with(not_date.fill_null(False), shown)
    kept = pl.Series([None] * h, dtype=pl.Date).zip_with(future.fill_null(False), dates)
    return kept, code, shown


def _iso_date(text: str) -> date | None:
    try:
        return date.fromisoformat(text) if len(text) == 10 else None
    except ValueError:
        return None


def _store_imported(store: Store, user: User, imported: _Imported,
                    lang: str) -> tuple[list[CaseSummary], list[RejectedRow], int]:
    """Store the kept rows as drafts, IMPORT_BATCH to a transaction: (the
    drafts, every rejected row in the file's order, how many were refused
    for a case the participant already has)."""
    from ..core import determination_from_row, text_row
    from .store.repository import NewDraft

    rules = imported.rules
    created: list[CaseSummary] = []
    refused: list[tuple[int, str, int]] = []  # row, participant, its current version

    def event(cases: list[Case]) -> NewEvent:
        return NewEvent("workflow.import", METHOD, "workflow.import", 201, user=user,
                        detail=f"{len(cases)} drafts: cases {cases[0].id}-{cases[-1].id}, "
                               f"version 1")

    def save(batch: list[tuple[int, Any]]) -> None:
        cases, existing = store.record_drafts(
            [d for _, d in batch], rules_version=rules.version, rules_name=rules.name,
            rules_content=rules.resolved, lang=lang, author=user, event=event)
        stored = {c.participant_id: c for c in cases}
        for row, d in batch:
            c = stored.get(d.participant_id)
            if c is None:
                refused.append((row, d.participant_id, existing[d.participant_id]))
                continue
            created.append(CaseSummary(c.id, c.id, c.participant_id, c.version, "draft",
                                       d.application.name, user.name, c.created_at, c.status))

    batch: list[tuple[int, Any]] = []
    for full, given, numbers in imported.kept:
        typed = any(t != "String" for t in map(str, given.dtypes))
        for row, inputs, number in zip(full.iter_rows(named=True),
                                       given.iter_rows(named=True), numbers.tolist(),
                                       strict=True):
            d = determination_from_row(row, rules, lang)
            fields = text_row(inputs)[0] if typed else dict(inputs)
            fields["participant_id"] = d.participant_id
            application = Application(**{n: row[_APP_COLUMN[n]] for n in APPLICATION_FIELDS})
            batch.append((number, NewDraft(d.participant_id, fields, d.to_dict(), d.as_of,
                                           application)))
            if len(batch) == IMPORT_BATCH:
                save(batch)
                batch = []
    if batch:
        save(batch)
    rejected = list(imported.rejected)
    if refused:
        numbers = _current_numbers(store, [cid for *_, cid in refused])
        for row, pid, cid in refused:
            number, version = numbers[cid]
            p = Refused("exists", current=cid, current_number=number,
                        current_version=version).to_problems(lang)[0]
            rejected.append(RejectedRow(row, pid, p["field"], p["code"], p["message"]))
        rejected.sort(key=lambda r: r.row)
    return created, rejected, len(refused)


def _current_numbers(store: Store, case_ids: list[int]) -> dict[int, tuple[int, int]]:
    """{version id: (its case's number, its version)}, as `_name_case` names
    a case, read for many at once."""
    out: dict[int, tuple[int, int]] = {}
    with store.reading() as session:
        for start in range(0, len(case_ids), 500):
            part = case_ids[start:start + 500]
            versions = session.execute(select(Case.id, Case.participant_id, Case.version)
                                       .where(Case.id.in_(part))).all()
            pids = [pid for _, pid, _ in versions]
            numbers = dict(session.execute(select(CaseState.participant_id, CaseState.number)
                                           .where(CaseState.participant_id.in_(pids))).all())
            missing = [pid for pid in pids if pid not in numbers]
            if missing:  # no state row: the case's first version names it
                numbers.update(session.execute(
                    select(Case.participant_id, Case.id)
                    .where(Case.participant_id.in_(missing), Case.version == 1)).all())
            out.update({cid: (numbers[pid], version) for cid, pid, version in versions})
    return out


# -- transitions ------------------------------------------------------------------


def _reason(store: Store, user: User, action: str, reason: Any, lang: str,
            case_id: int) -> str:
    text = reason.strip() if isinstance(reason, str) else ""
    problem = None
    if not text:
        problem = "reason_required"
    elif "\x00" in text or control_character(text.replace("\n", "").replace("\r", "")):
        problem = "control_character"
    elif len(text) > LIMITS["reason"]:
        problem = "too_long"
    if problem is not None:
        from . import messages

        message = (_text(lang, "reason_required") if problem == "reason_required" else
                   messages.text(lang, problem, "reason", limit=LIMITS["reason"], char="?"))
        raise _refuse(store, user, action, Refused("invalid", problems=[{
            "field": "reason", "code": problem, "message": message, "value": None}]),
            case_id=case_id)
    return text


def _conflict(store: Store, user: User, action: str, exc: WorkflowConflict) -> Refused:
    values = dict(exc.values)
    if exc.code == "wrong_state":
        values["action"] = action
    return _refuse(store, user, action, Refused(exc.code, **values),
                   case_id=exc.values.get("case_id"))


def correct(store: Store, user: User, case_id: int, application: Mapping[str, Any], *,
            reason: str, lang: str, as_of: date | None = None) -> CaseView:
    """A new version of the case (draft) from a corrected application,
    naming the version it corrects and why (`reason`, required). The
    participant id cannot change (it is the case's)."""
    lang = lang if lang in LANGS else DEFAULT_LANG
    _require(store, user, "correct", PREPARERS, case_id)
    case = store.case(case_id)
    if case is None:
        raise _refuse(store, user, "correct", Refused("not_found", case_id=case_id),
                      case_id=case_id)
    why = _reason(store, user, "correct", reason, lang, case_id)
    app = dict(application)
    app["participant_id"] = case.participant_id
    parsed = _parse_application(app, lang)
    try:
        d = _evaluate(parsed, lang, as_of)
    except Refused as refusal:
        raise _refuse(store, user, "correct", refusal, case_id=case_id) from None
    new = _store_version(store, user, "correct", parsed, d, lang, case_id, why)
    return view(store, user, new.id, _audit_read=False)


def submit(store: Store, user: User, case_id: int) -> CaseView:
    """Send a draft for approval."""
    _require(store, user, "submit", PREPARERS, case_id)
    try:
        store.transition(case_id, user, "submitted", from_states=("draft",),
                         to_state="submitted", event=NewEvent(
                             "workflow.submit", METHOD, "workflow.submit", 200, user=user,
                             case_id=case_id))
    except WorkflowConflict as exc:
        raise _conflict(store, user, "submit", exc) from None
    return view(store, user, case_id, _audit_read=False)


def _own(user: User, st: CaseState, session=None, case: Case | None = None) -> bool:
    """Maker-checker: `user` prepared, changed or submitted the case. With
    the version (`case`) and a session, the rule is read from the chained
    rows too (`barred_from_approving`: the author of any version up to this
    one, the submitter of this one), so a `case_states` row changed behind
    the store's back grants nothing."""
    if user.id in (st.prepared_by, st.changed_by, st.submitted_by):
        return True
    return session is not None and case is not None and \
        user.id in barred_from_approving(session, case)


def approve(store: Store, user: User, case_id: int, *, lang: str | None = None) -> CaseView:
    """Approve a submitted version: its letter is rendered once
    (`diferida.letter.letter_pdf`), stored, and its SHA-256 entered in the
    chain. `lang` is the letter's language (default: the case's). Refused
    (own_case) to a supervisor who prepared the case, changed it last or
    submitted it."""
    _require(store, user, "approve", APPROVERS, case_id)
    with store.reading() as session:
        case = session.get(Case, case_id)
        st = None if case is None else session.scalar(
            select(CaseState).where(CaseState.participant_id == case.participant_id))
        pre = _precheck(case, st, case_id, ("submitted",), "approve")
        own = pre is None and _own(user, st, session, case)
    if pre is not None:
        raise _refuse(store, user, "approve", pre, case_id=case_id)

    def check(session, locked: Case, state: CaseState) -> None:
        # again inside the approving transaction, the case's row locked
        if _own(user, state, session, locked):
            raise WorkflowConflict("own_case", case_id=case_id)

    if own:
        raise _refuse(store, user, "approve", Refused("own_case", case_id=case_id),
                      case_id=case_id)
    at = datetime.now(UTC)
    letter_lang = lang if lang in LANGS else case.lang
    v = view(store, user, case_id, _audit_read=False)
    from ..letter import LetterError

    try:
        pdf = _render(v, letter_lang, approved_by=user.name, approved_at=at)
    except LetterError as exc:  # the facts cannot be written as a letter: nothing issued
        raise _refuse(store, user, "approve", Refused("invalid", problems=[{
            "field": None, "code": "letter_unavailable",
            "message": _text(letter_lang, "letter_unavailable", detail=str(exc)),
            "value": None}]), case_id=case_id) from None
    try:
        store.transition(case_id, user, "approved", from_states=("submitted",),
                         to_state="approved", check=check, letter=(pdf, letter_lang), at=at,
                         event=NewEvent("workflow.approve", METHOD, "workflow.approve", 200,
                                        user=user, case_id=case_id,
                                        participant_id=case.participant_id,
                                        detail="letter sha256 "
                                               + hashlib.sha256(pdf).hexdigest()))
    except WorkflowConflict as exc:
        raise _conflict(store, user, "approve", exc) from None
    return view(store, user, case_id, _audit_read=False)


def _precheck(case: Case | None, st: CaseState | None, case_id: int,
              states: tuple[str, ...], action: str) -> Refused | None:
    if case is None:
        return Refused("not_found", case_id=case_id)
    if st is None or st.case_id != case_id:
        return Refused("stale", case_id=case_id, current=st.case_id if st else None)
    if st.state not in states:
        return Refused("wrong_state", case_id=case_id, state=st.state, action=action)
    return None


def return_case(store: Store, user: User, case_id: int, *, reason: str,
                lang: str = DEFAULT_LANG) -> CaseView:
    """Return a submitted version to be corrected, with a reason (required)."""
    _require(store, user, "return", APPROVERS, case_id)
    why = _reason(store, user, "return", reason, lang, case_id)
    try:
        store.transition(case_id, user, "returned", from_states=("submitted",),
                         to_state="returned", reason=why, event=NewEvent(
                             "workflow.return", METHOD, "workflow.return", 200, user=user,
                             case_id=case_id))
    except WorkflowConflict as exc:
        raise _conflict(store, user, "return", exc) from None
    return view(store, user, case_id, _audit_read=False)


# -- reading ------------------------------------------------------------------


def _names(session, ids) -> dict[int, str]:
    ids = sorted({i for i in ids if i is not None})
    if not ids:
        return {}
    return dict(session.execute(select(User.id, User.name).where(User.id.in_(ids))).all())


def _build_views(session, user: User, cases: list[Case], st: CaseState | None,
                 number: int) -> list[CaseView]:
    """Views of versions of one case (all of the same participant)."""
    ids = [c.id for c in cases]
    apps = {a.case_id: a for a in session.scalars(
        select(CaseApplication).where(CaseApplication.case_id.in_(ids)))}
    events = list(session.scalars(select(WorkflowRow).where(WorkflowRow.case_id.in_(ids))
                                  .order_by(WorkflowRow.id)))
    first_author = session.scalar(select(Case.author_id).where(Case.id == number))
    names = _names(session, [first_author, *(c.author_id for c in cases)])
    versions = {c.id: c.version for c in session.execute(
        select(Case.id, Case.version).where(Case.participant_id == cases[0].participant_id))}
    out = []
    for c in cases:
        mine = [e for e in events if e.case_id == c.id]
        state = "draft"
        info: dict[str, Any] = {}
        for e in mine:
            state = STATE_AFTER.get(e.action, state)
            if e.action == "corrected":
                info["correction_reason"] = e.reason
            elif e.action == "submitted":
                info.update(submitted_by=e.user_name, submitted_at=e.at)
            elif e.action == "approved":
                info.update(approved_by=e.user_name, approved_at=e.at)
            elif e.action == "returned":
                info.update(returned_by=e.user_name, return_reason=e.reason)
            elif e.action == "letter_stored":
                info["letter_sha256"] = e.letter_sha256
        if c.supersedes and not info.get("correction_reason"):
            # recorded before the workbench: the API's note said why
            info["correction_reason"] = c.note
        current = st is not None and st.case_id == c.id
        a = apps.get(c.id)
        v = CaseView(
            case_id=c.id, number=number, participant_id=c.participant_id, version=c.version,
            state=state, current=current, inputs=json.loads(c.inputs),
            result=json.loads(c.result), as_of=c.as_of, lang=c.lang,
            rules_version=c.rules_version, created_at=c.created_at,
            prepared_by=names.get(first_author, "?"), changed_by=names.get(c.author_id, "?"),
            name=a.name if a else None, address=a.address if a else None,
            application_date=a.application_date if a else None, note=a.note if a else None,
            corrects=c.supersedes,
            corrects_version=versions.get(c.supersedes) if c.supersedes else None, **info)
        out.append(_with_can(v, user, st, session, c))
    return out


def _with_can(v: CaseView, user: User, st: CaseState | None, session=None,
              case: Case | None = None) -> CaseView:
    from dataclasses import replace

    can = set()
    if v.current and st is not None:
        if user.role in PREPARERS and v.state in ("draft", "returned", "approved"):
            can.add("correct")
        if user.role in PREPARERS and v.state == "draft":
            can.add("submit")
        if user.role in APPROVERS and v.state == "submitted":
            can.add("return")
            if not _own(user, st, session, case):
                can.add("approve")
    return replace(v, can=frozenset(can))


def view(store: Store, user: User, case_id: int, *, _audit_read: bool = True) -> CaseView:
    """One version of a case (the version whose id is given)."""
    _require(store, user, "read", READERS, case_id)
    with store.reading() as session:
        case, st, number = _case_read(session, store, user, case_id)
        v = _build_views(session, user, [case], st, number)[0]
    if _audit_read:
        _audit(store, user, "read", 200, case_id=case_id, participant_id=case.participant_id)
    return v


def _case_read(session, store: Store, user: User,
               case_id: int) -> tuple[Case, CaseState | None, int]:
    """The version `case_id` read by `user`, its case's state and case number;
    an unknown id refused (404) and recorded."""
    case = session.get(Case, case_id)
    if case is None:
        raise _refuse(store, user, "read", Refused("not_found", case_id=case_id),
                      case_id=case_id)
    st = session.scalar(select(CaseState).where(CaseState.participant_id == case.participant_id))
    return case, st, _case_number(session, case, st)


def _case_number(session, case: Case, st: CaseState | None) -> int:
    if st is not None:
        return st.number
    return session.scalar(select(Case.id).where(Case.participant_id == case.participant_id,
                                                Case.version == 1))


def history(store: Store, user: User, case_id: int, *,
            lang: str | None = None) -> CaseHistory:
    """Every version of the case, its events and the changes between
    versions in words (in `lang`, default the case's language); `current`
    is the current version."""
    _require(store, user, "read", READERS, case_id)
    with store.reading() as session:
        case, st, number = _case_read(session, store, user, case_id)
        cases = list(session.scalars(select(Case).where(
            Case.participant_id == case.participant_id).order_by(Case.version)))
        views = _build_views(session, user, cases, st, number)
        events = [WorkflowEvent(e.id, e.at, e.user_name, e.role, e.action, e.case_id,
                                    e.version, e.reason, e.corrects, e.letter_sha256)
                  for e in session.scalars(select(WorkflowRow)
                                           .where(WorkflowRow.number == number)
                                           .order_by(WorkflowRow.id))]
    lang = user_lang(lang or views[-1].lang)
    changes = [VersionChange(a.version, b.version, changes_in_words(a, b, lang))
               for a, b in zip(views, views[1:])]
    current = next((v for v in views if v.current), views[-1])
    _audit(store, user, "read", 200, case_id=case_id, participant_id=case.participant_id,
           detail="history")
    return CaseHistory(current, views, events, changes)


def user_lang(lang: str | None) -> str:
    return lang if lang in LANGS else DEFAULT_LANG


def changes_in_words(a: CaseView, b: CaseView, lang: str) -> list[str]:
    """What changed from version a to version b: inputs, application,
    determination status, dates and amounts, one sentence each."""
    lines = []
    empty = _text(lang, "changes.empty")
    for k in sorted(set(a.inputs) | set(b.inputs)):
        old, new = a.inputs.get(k), b.inputs.get(k)
        if old == new:
            continue
        label = field_label(lang, k)
        if old is None:
            lines.append(_text(lang, "changes.input_added", label=label, new=new))
        elif new is None:
            lines.append(_text(lang, "changes.input_removed", label=label, old=old))
        else:
            lines.append(_text(lang, "changes.input", label=label, old=old, new=new))
    for k in APPLICATION_FIELDS:
        old, new = getattr(a, k), getattr(b, k)
        if old != new:
            lines.append(_text(lang, "changes.application", label=_text(lang, f"fields.{k}"),
                               old=_shown(old, lang) if old is not None else empty,
                               new=_shown(new, lang) if new is not None else empty))
    statuses = catalog(lang)["status"]
    if a.result.get("status") != b.result.get("status"):
        lines.append(_text(lang, "changes.status",
                           old=statuses.get(a.result.get("status"), a.result.get("status")),
                           new=statuses.get(b.result.get("status"), b.result.get("status"))))
    for k in ("eligibility_date", "start_date"):
        old, new = a.result.get(k), b.result.get(k)
        if old != new:
            lines.append(_text(lang, "changes.date", label=_text(lang, f"changes.{k}"),
                               old=_date_text(old, lang) or empty,
                               new=_date_text(new, lang) or empty))
    for k in ("annual_amount", "monthly_amount"):
        old, new = a.result.get(k), b.result.get(k)
        if old != new:
            lines.append(_text(lang, "changes.amount", label=_text(lang, f"changes.{k}"),
                               old=_money_text(old) or empty, new=_money_text(new) or empty))
    return lines or [_text(lang, "changes.none")]


def _shown(value: Any, lang: str) -> str:
    if isinstance(value, date):
        return fmt_date(value, lang)
    return str(value).replace("\n", ", ")


def _date_text(value: str | None, lang: str) -> str | None:
    if not value:
        return None
    try:
        return fmt_date(date.fromisoformat(value), lang)
    except ValueError:
        return value


def _money_text(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return format_money(Decimal(value))
    except (InvalidOperation, TypeError):
        return str(value)


# -- queues and search ------------------------------------------------------------


def _page_args(page: Any, per_page: Any) -> tuple[int, int]:
    page = page if isinstance(page, int) and page >= 1 else 1
    per_page = per_page if isinstance(per_page, int) and per_page >= 1 else PER_PAGE
    return page, min(per_page, MAX_PER_PAGE)


def _summary_page(store: Store, where, order, page: int, per_page: int) -> Page:
    """A page of cases: counted and paged on the queue indexes alone, then
    the page's rows (at most `per_page`) fetched with their names."""
    with store.reading() as session:
        total = session.scalar(select(func.count()).select_from(CaseState).where(where)) or 0
        numbers = list(session.scalars(select(CaseState.number).where(where).order_by(*order)
                                       .limit(per_page).offset((page - 1) * per_page)))
        rows = session.execute(
            select(CaseState.number, CaseState.case_id, CaseState.participant_id,
                   CaseState.version, CaseState.state, CaseApplication.name, User.name,
                   CaseState.updated_at, CaseState.status)
            .outerjoin(CaseApplication, CaseApplication.case_id == CaseState.case_id)
            .outerjoin(User, User.id == CaseState.changed_by)
            .where(CaseState.number.in_(numbers)).order_by(*order)).all() if numbers else []
        items = [CaseSummary(number, case_id, pid, version, state, name, author or "?",
                             updated, status)
                 for number, case_id, pid, version, state, name, author, updated, status
                 in rows]
    return Page(items, page, per_page, total)


def _summaries(store: Store, participant_ids: list[str]) -> list[CaseSummary]:
    page = _summary_page(store, CaseState.participant_id.in_(participant_ids),
                         (CaseState.number,), 1, max(1, len(participant_ids)))
    return page.items


def queue(store: Store, user: User, kind: str, *, page: int = 1,
          per_page: int = PER_PAGE) -> Page:
    """A page of CaseSummary. kind: "drafts" (my drafts, newest change
    first), "returned" (returned to me, newest first), "awaiting" (submitted
    and waiting, oldest first: for a supervisor those they may approve, for
    an analyst those they submitted, for an auditor all), "issued" (approved,
    most recent first). A version is "mine" when I made it."""
    _require(store, user, "read", READERS)
    if kind not in QUEUES:
        raise _refuse(store, user, "read", Refused("invalid", problems=[{
            "field": "kind", "code": "unknown_queue",
            "message": _text(user_lang(None), "unknown_queue", value=kind), "value": kind}]))
    page, per_page = _page_args(page, per_page)
    newest = (CaseState.updated_at.desc(), CaseState.number.desc())
    if kind == "drafts":
        where = and_(CaseState.changed_by == user.id, CaseState.state == "draft")
        order = newest
    elif kind == "returned":
        where = and_(CaseState.changed_by == user.id, CaseState.state == "returned")
        order = newest
    elif kind == "awaiting":
        where = CaseState.state == "submitted"
        if user.role == "supervisor":
            where = and_(where, CaseState.prepared_by != user.id,
                         CaseState.changed_by != user.id,
                         or_(CaseState.submitted_by.is_(None),
                             CaseState.submitted_by != user.id))
        elif user.role == "analyst":
            where = and_(where, or_(CaseState.changed_by == user.id,
                                    CaseState.submitted_by == user.id))
        order = (CaseState.updated_at, CaseState.number)
    else:
        where = CaseState.state == "approved"
        order = newest
    return _summary_page(store, where, order, page, per_page)


def search(store: Store, user: User, *, case_id: int | None = None,
           participant_id: str | None = None, page: int = 1,
           per_page: int = PER_PAGE) -> Page:
    """Cases by case number (or the id of any of its versions) or by
    participant id (exact, surrounding spaces ignored): a page of
    CaseSummary (at most one case each)."""
    _require(store, user, "read", READERS)
    lang = user_lang(None)
    page, per_page = _page_args(page, per_page)
    pid = None
    if participant_id is not None:
        bad = id_problem(lang, participant_id) if isinstance(participant_id, str) else None
        pid = normalised_id(participant_id) if bad is None else None
        if pid is None:
            raise _refuse(store, user, "search", Refused("invalid", problems=[
                bad or field_problem(lang, "participant_id", "blank", participant_id)]))
    if case_id is None and pid is None:
        raise _refuse(store, user, "search", Refused("invalid", problems=[{
            "field": None, "code": "search_needs", "message": _text(lang, "search_needs"),
            "value": None}]))
    conditions = []
    if pid is not None:
        conditions.append(CaseState.participant_id == pid)
    if case_id is not None:
        with store.reading() as session:
            owner = session.scalar(select(Case.participant_id).where(Case.id == case_id))
        conditions.append(CaseState.participant_id == owner if owner is not None
                          else CaseState.number == case_id)
    result = _summary_page(store, and_(*conditions), (CaseState.number,), page, per_page)
    # what was typed is recorded as its kind, never as its text (a name or a
    # birth date typed into the search box would otherwise be in the trail);
    # the number of the case found is the case's, not what was typed
    kinds = " and ".join(k for k, v in (("case number", case_id), ("participant id", pid))
                         if v is not None)
    _audit(store, user, "search", 200,
           case_id=result.items[0].number if len(result.items) == 1 else None,
           detail=f"by {kinds}: {result.total} found")
    return result


# -- reproduction ---------------------------------------------------------------------

#: keys of a determination that are words, not decisions
TEXT_KEYS = ("headline", "explanation", "rules_title")


def reproduce(store: Store, user: User, case_id: int) -> dict[str, Any]:
    """Recompute one stored version with its stored inputs, its stored rules
    content and its as_of date, and compare with the stored result:
    `identical`, `decision_identical` (only words differ), `differences`
    (key, stored, recomputed), `added` (keys a later release added),
    `recomputed`, and `problem` (why it could not be recomputed, or None).
    The caller records the reading."""
    from ..core import InputError, evaluate
    from ..rules import RulesError, rules_from_resolved

    _require(store, user, "read", READERS, case_id)
    case = store.case(case_id)
    if case is None:
        raise _refuse(store, user, "read", Refused("not_found", case_id=case_id),
                      case_id=case_id)
    stored = json.loads(case.result)
    base = {"case_id": case.id, "rules_version": case.rules_version,
            "as_of": case.as_of.isoformat()}
    content = store.rules_content(case.rules_version)
    try:
        if content is None:
            raise RulesError(f"rules version {case.rules_version} is not in the store")
        rules = rules_from_resolved(content, origin=case.rules_version)
        if rules.version != case.rules_version:
            raise RulesError(f"the stored rules content hashes to {rules.version}, "
                             f"not {case.rules_version}")
        recomputed = evaluate(json.loads(case.inputs), as_of=case.as_of, rules=rules,
                              lang=case.lang).to_dict()
    except (RulesError, InputError) as exc:
        return {**base, "identical": False, "decision_identical": False, "differences": [],
                "added": [], "recomputed": None, "problem": str(exc)}
    # A key the stored determination lacks was added by a later release: it is
    # reported under "added", not as a difference in what was decided.
    keys = list(dict.fromkeys([*stored, *recomputed]))
    differences = [{"key": k, "stored": stored.get(k), "recomputed": recomputed.get(k)}
                   for k in keys if k in stored and stored.get(k) != recomputed.get(k)]
    added = sorted(k for k in recomputed if k not in stored)
    return {**base, "identical": not differences,
            "decision_identical": not [x for x in differences if x["key"] not in TEXT_KEYS],
            "differences": differences, "added": added, "recomputed": recomputed,
            "problem": None}


# -- letters --------------------------------------------------------------------------


def _facts(v: CaseView, lang: str, *, approved_by: str | None = None,
           approved_at: datetime | None = None):
    """The facts of one version's letter, as approval gives them."""
    from ..letter import LetterFacts

    return LetterFacts(
        case_id=v.number, version=v.version, lang=lang, inputs=v.inputs, result=v.result,
        as_of=v.as_of, rules_version=v.rules_version, prepared_by=v.changed_by,
        prepared_at=v.created_at, addressee_name=v.name, addressee_address=v.address,
        application_date=v.application_date, approved_by=approved_by,
        approved_at=approved_at, corrects_version=v.corrects_version,
        correction_reason=(v.correction_reason or _text(lang, "no_reason_recorded"))
        if v.corrects_version else None)


def _render(v: CaseView, lang: str, *, approved_by: str | None = None,
            approved_at: datetime | None = None) -> bytes:
    from ..letter import letter_pdf

    return letter_pdf(_facts(v, lang, approved_by=approved_by, approved_at=approved_at))


def _version_id(store: Store, user: User, action: str, case_id: int,
                version: int | None) -> int:
    """The id of version `version` of the case `case_id` belongs to
    (default: `case_id` itself)."""
    if version is None:
        return case_id
    with store.reading() as session:
        case = session.get(Case, case_id)
        found = None if case is None else session.scalar(select(Case.id).where(
            Case.participant_id == case.participant_id, Case.version == version))
    if found is None:
        raise _refuse(store, user, action, Refused("not_found", case_id=case_id),
                      case_id=case_id)
    return found


def letter_html(store: Store, user: User, case_id: int, version: int | None = None, *,
                lang: str | None = None) -> str:
    """The letter of one version as HTML. For an approved version: the letter
    as issued (its language, its approval), whatever `lang`; otherwise the
    draft, marked as such, in `lang` (default: the case's). Refused
    ("invalid", letter_unavailable) when it cannot be written."""
    from ..letter import LetterError
    from ..letter import letter_html as write_html

    _require(store, user, "read", READERS, case_id)
    target = _version_id(store, user, "letter", case_id, version)
    with store.reading() as session:
        stored, pdf = _issued_letter(session, target)
        issued_lang = stored.lang if stored is not None else None
    if stored is not None and pdf is None:  # the letter as issued is in doubt
        raise _letter_refused(store, user, "letter", target)
    v = view(store, user, target, _audit_read=False)
    if issued_lang is not None:
        chosen = user_lang(issued_lang)
        facts = _facts(v, chosen, approved_by=v.approved_by, approved_at=v.approved_at)
    else:
        chosen = user_lang(lang or v.lang)
        facts = _facts(v, chosen)
    try:
        html = write_html(facts)
    except LetterError as exc:
        raise _refuse(store, user, "letter", Refused("invalid", problems=[{
            "field": "lang", "code": "letter_unavailable",
            "message": _text(chosen, "letter_unavailable", detail=str(exc)),
            "value": lang}]), case_id=target) from None
    _audit(store, user, "letter", 200, case_id=target,
           detail="issued letter (html)" if issued_lang else "draft letter (html)")
    return html


def letter(store: Store, user: User, case_id: int, version: int | None = None, *,
           lang: str | None = None) -> bytes:
    """The letter of one version as PDF: for an approved version the bytes
    stored at approval, exactly (whatever `lang`); otherwise rendered now,
    marked as a draft, never stored. `version` picks a version of the case by
    its number (default: the version whose id is `case_id`)."""
    _require(store, user, "read", READERS, case_id)
    target = _version_id(store, user, "letter", case_id, version)
    with store.reading() as session:
        stored, pdf = _issued_letter(session, target)
    if stored is not None and pdf is None:
        raise _letter_refused(store, user, "letter", target)
    if pdf is None:
        from ..letter import LetterError

        v = view(store, user, target, _audit_read=False)
        chosen = user_lang(lang or v.lang)
        try:
            pdf = _render(v, chosen)
        except LetterError as exc:  # e.g. no letter in that language for this version
            raise _refuse(store, user, "letter", Refused("invalid", problems=[{
                "field": "lang", "code": "letter_unavailable",
                "message": _text(chosen, "letter_unavailable", detail=str(exc)),
                "value": lang}]), case_id=target) from None
    _audit(store, user, "letter", 200, case_id=target,
           detail="issued letter" if stored is not None else "draft letter")
    return pdf


def correction_reason(store: Store, case: Case, lang: str) -> str | None:
    """Why a version corrects the one before it: the reason of its
    `corrected` event, else the API's note, else words saying none was
    recorded; None for a first version."""
    if case.supersedes is None:
        return None
    with store.reading() as session:
        reason = session.scalar(select(WorkflowRow.reason).where(
            WorkflowRow.case_id == case.id, WorkflowRow.action == "corrected")
            .order_by(WorkflowRow.id).limit(1))
    return reason or case.note or _text(user_lang(lang), "no_reason_recorded")


def _issued_letter(session, case_id: int) -> tuple[Letter | None, bytes | None]:
    """The letter stored for version `case_id` and its bytes, but the bytes
    only when their SHA-256 is the one its chained `letter_stored` event
    recorded (and the letters row's own): (row, None) when they are not."""
    stored = session.get(Letter, case_id)
    if stored is None:
        return None, None
    pdf = bytes(stored.pdf) if stored.pdf is not None else b""
    chained = session.scalars(select(WorkflowRow.letter_sha256).where(
        WorkflowRow.case_id == case_id, WorkflowRow.action == "letter_stored")).all()
    digest = hashlib.sha256(pdf).hexdigest()
    ok = len(chained) == 1 and chained[0] == digest == stored.sha256
    return stored, pdf if ok else None


def _letter_refused(store: Store, user: User | None, action: str, case_id: int) -> Refused:
    """A stored letter that fails its check: refused and recorded."""
    return _refuse(store, user, action, Refused("letter_check", case_id=case_id),
                   case_id=case_id)


def stored_letter(store: Store, case_id: int, user: User | None = None) -> bytes | None:
    """The PDF issued for an approved version, exactly as issued, or None
    when none was issued. Refused (letter_check, recorded) when the stored
    bytes no longer match the SHA-256 its chained event recorded."""
    with store.reading() as session:
        stored, pdf = _issued_letter(session, case_id)
    if stored is not None and pdf is None:
        raise _letter_refused(store, user, "letter", case_id)
    return pdf


# -- the auditor's view -------------------------------------------------------------


# the longest text each filter of the trail takes: its column's length
AUDIT_TEXT_LIMITS = {"who": 100, "action": 40}
# the years a time filter of the trail may fall in (UTC): wide enough for any
# question about the trail, narrow enough that a day's bounds are always times
AUDIT_YEARS = (1900, 3000)
# the ids of the store's columns (BIGINT on PostgreSQL, INTEGER on SQLite: 64 bits)
MAX_DB_ID = 2**63 - 1
AUDIT_FILTERS = ("who", "action", "case_id", "since", "until")


def audit_filter_problems(lang: str | None, *, who: Any = None, action: Any = None,
                          case_id: Any = None, since: Any = None,
                          until: Any = None) -> list[dict[str, Any]]:
    """Why each filter of the audit trail cannot be used, as the API's
    problems (`field`: the filter's name, `code`: filter_control,
    filter_unicode, filter_too_long, filter_case, filter_time or
    filter_range, with `limit`, `first`, `last` where the message has them);
    an empty list when every filter can be. A filter is refused when the
    store cannot take it (PostgreSQL refuses a NUL, a column has a length
    and its integers a range) or when it can mean nothing in the trail (a
    control character, a time outside AUDIT_YEARS). Pure: records nothing."""
    lang = user_lang(lang)
    out: list[dict[str, Any]] = []

    def refuse(name: str, code: str, value: Any, **values: Any) -> None:
        out.append({"field": name, "code": code, "value": value, **values,
                    "message": _text(lang, code, filter=name, **values)})

    for name, text in (("who", who), ("action", action)):
        if text is None:
            continue
        if not isinstance(text, str):
            refuse(name, "filter_unicode", None)
            continue
        char = control_character(text)
        if char is not None:
            refuse(name, "filter_control", None, char=char)
        elif not _encodable(text):
            refuse(name, "filter_unicode", None)
        elif len(text) > AUDIT_TEXT_LIMITS[name]:
            refuse(name, "filter_too_long", None, limit=AUDIT_TEXT_LIMITS[name])
    if case_id is not None and (isinstance(case_id, bool) or not isinstance(case_id, int)
                                or not 1 <= case_id <= MAX_DB_ID):
        refuse("case_id", "filter_case", None, max=MAX_DB_ID)
    first, last = AUDIT_YEARS
    for name, moment in (("since", since), ("until", until)):
        if moment is None:
            continue
        if not isinstance(moment, datetime) or moment.tzinfo is None:
            refuse(name, "filter_time", None)
            continue
        try:
            year = moment.astimezone(UTC).year
        except OverflowError:  # year 1 east of UTC, year 9999 west of it
            year = None
        if year is None or not first <= year <= last:
            refuse(name, "filter_range", moment.isoformat(), first=first, last=last)
    return out


def _encodable(text: str) -> bool:
    """Whether `text` is valid Unicode (no lone surrogate, which no
    database driver can send)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def audit_view(store: Store, user: User, *, who: str | None = None, action: str | None = None,
               case_id: int | None = None, since: datetime | None = None,
               until: datetime | None = None, page: int = 1,
               per_page: int = PER_PAGE, lang: str | None = None) -> Page:
    """A page of AuditEntry, newest first, with filters (auditors only):
    `who` (a user name), `action`, `case_id`, `since` (from this time) and
    `until` (before it; aware datetimes). A filter the store cannot take is
    refused ("invalid", 422: audit_filter_problems). The reading is recorded
    with the kinds of filters used ("filters: who, since"), never what was
    typed into them: staff type names and dates there."""
    _require(store, user, "audit", AUDITORS)
    problems = audit_filter_problems(lang, who=who, action=action, case_id=case_id,
                                     since=since, until=until)
    if problems:
        raise _refuse(store, user, "audit", Refused("invalid", problems=problems))
    page, per_page = _page_args(page, per_page)
    conditions = []
    if case_id is not None:
        conditions.append(AuditEvent.case_id == case_id)
    if who is not None:
        conditions.append(AuditEvent.user_name == who)
    if action is not None:
        conditions.append(AuditEvent.action == action)
    if since is not None:
        conditions.append(AuditEvent.at >= since)
    if until is not None:
        conditions.append(AuditEvent.at < until)
    where = and_(True, *conditions)
    used = [name for name, value in zip(AUDIT_FILTERS, (who, action, case_id, since, until),
                                        strict=True) if value is not None]
    # the reading is recorded before it happens, so it appears in its own answer
    _audit(store, user, "audit", 200,
           detail="filters: " + (", ".join(used) if used else "none")
           + (f"; page {page}" if page > 1 else ""))
    # newest first, on the primary key (and on the filter's own index): a
    # page is read from the top of the trail, whatever its length
    with store.reading() as session:
        total = session.scalar(select(func.count()).select_from(AuditEvent).where(where)) or 0
        rows = session.scalars(select(AuditEvent).where(where).order_by(AuditEvent.id.desc())
                               .limit(per_page).offset((page - 1) * per_page)).all()
    items = [AuditEntry(e.id, e.at, e.user_name, e.role, e.action, e.case_id,
                        e.participant_id, e.status_code, e.detail) for e in rows]
    return Page(items, page, per_page, total)


# each verification of the chains is an event of the trail (a chain itself):
# its result is kept where a restart does not lose it, and nobody can make it
# say "intact" after the fact
VERIFY_ACTION = "audit.verify"


@dataclass(frozen=True)
class Verification:
    """One verification of every chain (as `diferida audit verify`): when,
    by whom, intact or not, how many findings, and — for the one just made,
    not for one read back from the trail — its lines."""

    at: datetime
    user: str | None
    intact: bool
    findings: int
    lines: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"at": self.at.isoformat(), "user": self.user, "intact": self.intact,
                "findings": self.findings, "lines": list(self.lines)}


def _verify_detail(intact: bool, findings: int) -> str:
    return f"{'intact' if intact else 'TAMPERING DETECTED'}; {findings} findings"


def verify_now(store: Store, user: User) -> Verification:
    """Verify every chain now (auditors only; it reads every row of the
    store) and record the result as an `audit.verify` event: intact or not
    and the number of findings (broken chains, rules, users, workflow rows
    and triggers found wrong)."""
    _require(store, user, "verify", AUDITORS)
    report = store.verify()
    findings = (sum(1 for c in report.chains if not c.intact) + len(report.findings)
                + len(report.missing_triggers) + len(report.changed_triggers)
                + len(report.unexpected_triggers))
    store.audit(NewEvent(VERIFY_ACTION, METHOD, VERIFY_ACTION, 200, user=user,
                         detail=_verify_detail(report.intact, findings)))
    return Verification(datetime.now(UTC), user.name, report.intact, findings,
                        report.lines())


def last_verification(store: Store, user: User) -> Verification | None:
    """The latest verification recorded in the trail (auditors only), or
    None; one indexed read (`action`, newest first), whatever the store's
    size. Its lines are not kept: verify again to see them."""
    _require(store, user, "audit", AUDITORS)
    with store.reading() as session:
        row = session.execute(
            select(AuditEvent.at, AuditEvent.user_name, AuditEvent.detail)
            .where(AuditEvent.action == VERIFY_ACTION)
            .order_by(AuditEvent.id.desc()).limit(1)).first()
    if row is None:
        return None
    at, name, detail = row
    result, _, count = (detail or "").partition("; ")
    number = count.split(" ")[0]
    return Verification(at, name, result == "intact",
                        int(number) if number.isdigit() else 0)


def verify_view(store: Store, user: User) -> tuple[bool, list[str]]:
    """verify_now's result as (intact, lines)."""
    done = verify_now(store, user)
    return done.intact, done.lines


def export(store: Store, user: User, kind: str, fmt: str) -> bytes:
    """kind "cases" (one row per version: state, status, application date,
    approval date, days from application to approval), "events" (the
    workflow events) or "summary" (counts by state and by determination
    status, and the days from application to approval: count, median, max),
    as "csv" or "xlsx". Names, addresses, notes and reasons are left out:
    these are management reports."""
    import polars as pl

    _require(store, user, "export", EXPORTERS)
    lang = user_lang(None)
    if kind not in EXPORTS or fmt not in FORMATS:
        bad, allowed = (("kind", kind), EXPORTS) if kind not in EXPORTS else (("fmt", fmt),
                                                                             FORMATS)
        raise _refuse(store, user, "export", Refused("invalid", problems=[{
            "field": bad[0], "code": "unknown_export",
            "message": _text(lang, "unknown_export", value=bad[1], allowed=", ".join(allowed)),
            "value": bad[1]}]))
    cases = _case_rows(store)
    if kind == "cases":
        frame = pl.DataFrame(cases, schema=_schema(CASE_COLUMNS), orient="row")
    elif kind == "events":
        with store.reading() as session:
            rows = session.execute(select(
                WorkflowRow.id, WorkflowRow.at, WorkflowRow.number,
                WorkflowRow.case_id, WorkflowRow.version, WorkflowRow.action,
                WorkflowRow.user_name, WorkflowRow.role, WorkflowRow.corrects,
                WorkflowRow.letter_sha256).order_by(WorkflowRow.id)).all()
        frame = pl.DataFrame([tuple(r) for r in rows], schema=_schema(EVENT_COLUMNS), orient="row")
    else:
        frame = _summary_frame(cases)
    _audit(store, user, "export", 200, detail=f"{kind} {fmt}: {frame.height} rows")
    from .cells import csv_bytes, xlsx_bytes  # no text cell read as a formula (cells.py)

    if fmt == "csv":
        return csv_bytes(frame)
    # Excel keeps no time zone: the times are written in Puerto Rico's (AST)
    stamps = [c for c, t in frame.schema.items() if isinstance(t, pl.Datetime)]
    frame = frame.with_columns(
        pl.col(c).dt.convert_time_zone("America/Puerto_Rico").dt.replace_time_zone(None)
        for c in stamps).rename({c: f"{c}_ast" for c in stamps})
    return xlsx_bytes(frame, kind)


CASE_COLUMNS = [("number", "Int64"), ("case_id", "Int64"), ("participant_id", "String"),
                ("version", "Int64"), ("current", "Boolean"), ("state", "String"),
                ("status", "String"), ("as_of", "Date"), ("application_date", "Date"),
                ("created_at", "Datetime"), ("approved_at", "Datetime"),
                ("days_to_approval", "Int64")]
EVENT_COLUMNS = [("id", "Int64"), ("at", "Datetime"), ("number", "Int64"),
                 ("case_id", "Int64"), ("version", "Int64"), ("action", "String"),
                 ("user", "String"), ("role", "String"), ("corrects", "Int64"),
                 ("letter_sha256", "String")]


def _schema(columns):
    import polars as pl

    types = {"Int64": pl.Int64, "String": pl.String, "Boolean": pl.Boolean, "Date": pl.Date,
             "Datetime": pl.Datetime("us", "UTC")}
    return {n: types[t] for n, t in columns}


def _case_rows(store: Store) -> list[tuple]:
    with store.reading() as session:
        states = dict(session.execute(select(CaseState.participant_id, CaseState.case_id)).all())
        first = dict(session.execute(select(Case.participant_id, Case.id)
                                     .where(Case.version == 1)).all())
        after: dict[int, str] = {}
        approved: dict[int, datetime] = {}
        for cid, action, at in session.execute(
                select(WorkflowRow.case_id, WorkflowRow.action, WorkflowRow.at)
                .order_by(WorkflowRow.id)):
            after[cid] = STATE_AFTER.get(action, after.get(cid, "draft"))
            if action == "approved":
                approved[cid] = at
        applied = dict(session.execute(select(CaseApplication.case_id,
                                              CaseApplication.application_date)).all())
        rows = []
        for cid, pid, version, status, as_of, created in session.execute(
                select(Case.id, Case.participant_id, Case.version, Case.status, Case.as_of,
                       Case.created_at).order_by(Case.id)):
            at = approved.get(cid)
            app = applied.get(cid)
            days = (_pr_date(at) - app).days if at is not None and app is not None else None
            rows.append((first.get(pid), cid, pid, version, states.get(pid) == cid,
                         after.get(cid, "draft"), status, as_of, app, created, at, days))
    return rows


def _pr_date(at: datetime) -> date:
    """The calendar day in Puerto Rico (AST, UTC−4, no daylight saving)."""
    from datetime import timedelta, timezone

    return at.astimezone(timezone(timedelta(hours=-4))).date()


def _summary_frame(rows: list[tuple]):
    import polars as pl

    current = [r for r in rows if r[4]]
    out: list[tuple[str, str, int | None]] = []
    for state in STATES:
        out.append(("cases_by_state", state, sum(1 for r in current if r[5] == state)))
    for status in sorted({r[6] for r in current}):
        out.append(("cases_by_status", status, sum(1 for r in current if r[6] == status)))
    days = [r[11] for r in rows if r[11] is not None]
    out.append(("days_application_to_approval", "count", len(days)))
    out.append(("days_application_to_approval", "median",
                int(statistics.median_low(days)) if days else None))
    out.append(("days_application_to_approval", "max", max(days) if days else None))
    return pl.DataFrame(out, schema={"measure": pl.String, "key": pl.String,
                                     "value": pl.Int64}, orient="row")
