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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from ..determination import Determination
from .store import Store, User

__all__ = [
    "ACTIONS", "QUEUES", "STATES", "AuditEntry", "CaseHistory", "CaseSummary", "CaseView",
    "ImportResult", "Page", "Refused", "RejectedRow", "VersionChange", "WorkflowEvent",
    "approve", "audit_view", "authenticate", "correct", "export", "history",
    "import_applications", "letter", "open_draft", "preview", "queue", "return_case",
    "search", "submit",
]

STATES = ("draft", "submitted", "approved", "returned")
QUEUES = ("drafts", "returned", "awaiting", "issued")
# what a user may do to a version, as listed in CaseView.can
ACTIONS = ("correct", "submit", "approve", "return")
# the application's own fields, besides SPEC §1's
APPLICATION_FIELDS = ("name", "address", "application_date", "note")
PER_PAGE = 50
MAX_PER_PAGE = 200


class Refused(Exception):
    """An action refused. `code`: not_allowed (403: the role may not),
    own_case (403: maker-checker), wrong_state (409), stale (409: not the
    current version), not_found (404), invalid (422: `problems` names every
    bad field, same shape and messages as the API's). `message(lang)` is the
    sentence to show (catalog i18n/<lang>/workflow.toml)."""

    STATUS = {"not_allowed": 403, "own_case": 403, "wrong_state": 409, "stale": 409,
              "not_found": 404, "invalid": 422}

    def __init__(self, code: str, *, problems: Sequence[Mapping[str, Any]] = (),
                 **values: Any):
        super().__init__(code)
        self.code = code
        self.status = self.STATUS[code]
        self.problems = [dict(p) for p in problems]
        self.values = values

    def message(self, lang: str) -> str:
        raise NotImplementedError


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


@dataclass(frozen=True)
class VersionChange:
    """What changed from one version to the next, in words."""

    from_version: int
    to_version: int
    lines: list[str]


@dataclass(frozen=True)
class CaseHistory:
    current: CaseView              # the case's current version
    versions: list[CaseView]       # oldest first
    events: list[WorkflowEvent]    # oldest first
    changes: list[VersionChange]   # between each version and the next


@dataclass(frozen=True)
class RejectedRow:
    row: int                       # as a person opening the file counts
    participant_id: str | None
    field: str
    code: str
    message: str


@dataclass(frozen=True)
class ImportResult:
    rows_in: int
    created: list[CaseSummary]
    rejected: list[RejectedRow] = field(default_factory=list)

    @property
    def rows_rejected(self) -> int:
        return len({r.row for r in self.rejected})


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


def authenticate(store: Store, name: str, password: str) -> User | None:
    """The active user with this name and password, or None (unknown name,
    wrong password, disabled user, or no password set). Takes the same time
    whether or not the name exists."""
    raise NotImplementedError


def preview(application: Mapping[str, Any], *, lang: str,
            as_of: date | None = None) -> Determination | Refused:
    """The engine's answer for an application before saving: the
    Determination, or a Refused("invalid") naming every bad field (returned,
    not raised). Nothing is stored or logged."""
    raise NotImplementedError


def open_draft(store: Store, user: User, application: Mapping[str, Any], *, lang: str,
               as_of: date | None = None) -> CaseView:
    """A new case (version 1, draft) from an application: the SPEC §1 fields
    plus name, address, application_date (YYYY-MM-DD) and note. Values may be
    text as typed in a form or JSON values."""
    raise NotImplementedError


def import_applications(store: Store, user: User, data: bytes, filename: str, *,
                        lang: str, as_of: date | None = None) -> ImportResult:
    """Drafts from a CSV or .xlsx of applications (columns: the SPEC §1 fields
    and name, address, application_date, note), read by the batch readers.
    Every rejected row is named with its row number, participant id, field
    and reason; rows in = drafts created + rows rejected."""
    raise NotImplementedError


def correct(store: Store, user: User, case_id: int, application: Mapping[str, Any], *,
            reason: str, lang: str, as_of: date | None = None) -> CaseView:
    """A new version of the case (draft) from a corrected application,
    naming the version it corrects and why (`reason`, required)."""
    raise NotImplementedError


def submit(store: Store, user: User, case_id: int) -> CaseView:
    """Send a draft for approval."""
    raise NotImplementedError


def approve(store: Store, user: User, case_id: int, *, lang: str | None = None) -> CaseView:
    """Approve a submitted version: its letter is rendered once
    (`diferida.letter.letter_pdf`), stored, and its SHA-256 entered in the
    chain. `lang` is the letter's language (default: the case's)."""
    raise NotImplementedError


def return_case(store: Store, user: User, case_id: int, *, reason: str) -> CaseView:
    """Return a submitted version to be corrected, with a reason (required)."""
    raise NotImplementedError


def queue(store: Store, user: User, kind: str, *, page: int = 1,
          per_page: int = PER_PAGE) -> Page:
    """A page of CaseSummary, newest change first. kind: "drafts" (my
    drafts), "returned" (returned to me), "awaiting" (submitted, waiting for
    approval; for a supervisor those they may approve), "issued" (approved,
    most recent first)."""
    raise NotImplementedError


def search(store: Store, user: User, *, case_id: int | None = None,
           participant_id: str | None = None, page: int = 1,
           per_page: int = PER_PAGE) -> Page:
    """Cases by case number/version id or participant id (exact): a page of
    CaseSummary."""
    raise NotImplementedError


def history(store: Store, user: User, case_id: int) -> CaseHistory:
    """Every version of the case, its events and the changes between
    versions in words; `current` is the current version."""
    raise NotImplementedError


def view(store: Store, user: User, case_id: int) -> CaseView:
    """One version of a case (the version whose id is given)."""
    raise NotImplementedError


def letter(store: Store, user: User, case_id: int, version: int | None = None, *,
           lang: str | None = None) -> bytes:
    """The letter of one version as PDF: for an approved version the bytes
    stored at approval, exactly; otherwise rendered now, marked as a draft.
    `version` picks a version of the case by number (default: the version
    whose id is `case_id`)."""
    raise NotImplementedError


def audit_view(store: Store, user: User, *, who: str | None = None, action: str | None = None,
               case_id: int | None = None, since: datetime | None = None,
               until: datetime | None = None, page: int = 1,
               per_page: int = PER_PAGE) -> Page:
    """A page of AuditEntry, newest first, with filters (auditors and
    supervisors)."""
    raise NotImplementedError


def export(store: Store, user: User, kind: str, fmt: str) -> bytes:
    """kind "cases" (one row per version: state, status, application date,
    approval date, days from application to approval), "events" (the
    workflow events) or "summary" (counts by state and by determination
    status, and the days from application to approval: count, median, max),
    as "csv" or "xlsx"."""
    raise NotImplementedError
