"""What every part of the workbench shares: the states, queues, roles and
limits; the passwords' hashing and `authenticate`; `Refused` and the
catalog's sentences (`_text`); the result types (`CaseView`, `Page`, ...);
the audit trail's writes of an action and of a refusal (`_audit`, `_refuse`,
`_require`); the maker-checker rule (`is_own`); a case's number."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import select

from ...errors import DiferidaError
from ...i18n import DEFAULT_LANG, LANGS, Keep, catalog
from ..store import (
    Case,
    CaseState,
    NewEvent,
    Store,
    User,
    UserProfile,
    barred_from_approving,
)

STATES = ("draft", "submitted", "approved", "returned")
QUEUES = ("drafts", "returned", "awaiting", "issued")
# what a user may do to a version, as listed in CaseView.can
ACTIONS = ("correct", "submit", "approve", "return")
# the application's own fields, besides rules §1's
EXPORTS = ("cases", "events", "summary")
FORMATS = ("csv", "xlsx")
PER_PAGE = 50
MAX_PER_PAGE = 200
# the longest text each application field takes (characters)
LIMITS = {"name": 200, "address": 1000, "note": 2000, "reason": 2000}
# the fewest letters or digits a reader can see (`visible_letters`) that the
# text a person writes for an action carries: a note saying what was checked
# is a sentence; a reason (a correction's, a return's) may be one word
MIN_VISIBLE = {"acknowledgement": 10, "reason": 1}

PREPARERS = ("analyst", "supervisor")
APPROVERS = ("supervisor",)
READERS = ("analyst", "supervisor", "auditor")
AUDITORS = ("auditor",)
EXPORTERS = ("supervisor", "auditor")

# The warnings that ask someone to check the inputs (their text asks for a
# check: "verifíquelo", "verifique las fechas", "verifique que los servicios
# ... lleguen solo hasta ..."): a version carrying one is submitted and
# approved only with a note saying it was checked (an `acknowledged` workflow
# event, chained, its note as the event's reason). The other warnings say
# what the determination does not cover; nobody can check them away.
ACKNOWLEDGED = "acknowledged"  # the workflow event of such a note
CHECK_WARNINGS = ("service_exceeds_span", "implausible_entry_age", "act_3_2013_accruals_frozen")
# A check the facts themselves contradict (its finding says so: the service
# given is longer than the span to the day the warning names, rules §7,
# docs/rules.md) cannot be acknowledged: the version is neither submitted nor
# approved until corrected. The fact each asks to correct:
CONTRADICTED_FIELD = {"act_3_2013_accruals_frozen": "creditable_service_years"}

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


# Letters (Lo) that show nothing: the Hangul fillers, Unicode's only
# default-ignorable letters. Every other character that shows nothing is a
# format character (Cf: zero-width space, word joiner, BOM, bidirectional
# controls, U+180E, invisible operators), a control (Cc), a mark (M*: a
# combining accent alone, variation selectors), a separator (Z*) or a symbol
# (U+2800, the Braille blank): none of those is a letter or digit.
BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0")


def visible_letters(text: str) -> int:
    """How many of the characters of `text` are letters or digits a reader
    can see: a character counts when its NFKC form (a full-width letter, a
    ligature, a superscript digit read as the letter or digit it shows)
    holds a letter or a digit (Unicode categories L* and N*) other than the
    BLANK_LETTERS. Format and control characters, marks, spaces and
    punctuation never count. Each character typed counts at most once, so
    the count is never more than the text's length."""
    count = 0
    for char in text:
        shown = unicodedata.normalize("NFKC", char)
        if any(unicodedata.category(c)[0] in "LN" and c not in BLANK_LETTERS for c in shown):
            count += 1
    return count


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


class Refused(DiferidaError):
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
        if "role" in values:  # the role in words, never its code
            values["role_text"] = _text(lang, f"roles.{values['role']}")
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
    inputs: dict[str, Any]         # the rules §1 fields as stored
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
    letter_lang: str | None = None         # the addressee's language: the letter's
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
    rules_name: str | None = None          # the rules set the version was decided under
    # the warnings of CHECK_WARNINGS this version carries, and the notes
    # saying they were checked (oldest first)
    checks: tuple[str, ...] = ()
    acknowledgements: tuple[Acknowledgement, ...] = ()
    # the checks its own facts contradict (CONTRADICTED_FIELD): it cannot be
    # submitted or approved until corrected
    contradicted: tuple[str, ...] = ()
    # why the user asking may not approve this version (maker-checker), as
    # codes: "version:<n>" (they wrote version n), "submitted" (they sent it)
    barred: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out = {k: _plain(getattr(self, k)) for k in self.__dataclass_fields__}
        out["can"] = sorted(self.can)
        out["checks"] = list(self.checks)
        out["barred"] = list(self.barred)
        out["acknowledgements"] = [a.to_dict() for a in self.acknowledgements]
        out["contradicted"] = list(self.contradicted)
        return out


@dataclass(frozen=True)
class Acknowledgement:
    """A note saying that the warnings asking for a check were checked: who
    (as pages and letters name them), their role, when, which warnings (the
    version's CHECK_WARNINGS) and the note."""

    by: str
    role: str
    at: datetime
    warnings: tuple[str, ...]
    note: str

    def to_dict(self) -> dict[str, Any]:
        return {"by": self.by, "role": self.role, "at": self.at.isoformat(),
                "warnings": list(self.warnings), "note": self.note}


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


def is_own(user: User, st: CaseState, session=None, case: Case | None = None) -> bool:
    """Maker-checker: `user` prepared, changed or submitted the case. With
    the version (`case`) and a session, the rule is read from the chained
    rows too (`barred_from_approving`: the author of any version up to this
    one, the submitter of this one), so a `case_states` row changed behind
    the store's back grants nothing."""
    if user.id in (st.prepared_by, st.changed_by, st.submitted_by):
        return True
    return session is not None and case is not None and \
        user.id in barred_from_approving(session, case)


def people(session, ids) -> dict[int, str]:
    """Users by id as pages and letters name them: the full name of their
    latest profile (`diferida users`), else their sign-in name."""
    ids = sorted({i for i in ids if i is not None})
    if not ids:
        return {}
    out = dict(session.execute(select(User.id, User.name).where(User.id.in_(ids))).all())
    rows = session.execute(select(UserProfile.user_id, UserProfile.full_name)
                           .where(UserProfile.user_id.in_(ids)).order_by(UserProfile.id)).all()
    out.update({uid: full for uid, full in rows if full and full.strip()})
    return out


def _case_number(session, case: Case, st: CaseState | None) -> int:
    if st is not None:
        return st.number
    return session.scalar(select(Case.id).where(Case.participant_id == case.participant_id,
                                                Case.version == 1))


def user_lang(lang: str | None) -> str:
    return lang if lang in LANGS else DEFAULT_LANG


def _page_args(page: Any, per_page: Any) -> tuple[int, int]:
    page = page if isinstance(page, int) and page >= 1 else 1
    per_page = per_page if isinstance(per_page, int) and per_page >= 1 else PER_PAGE
    return page, min(per_page, MAX_PER_PAGE)


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


def contradicted_codes(result: Mapping[str, Any]) -> tuple[str, ...]:
    """The warnings of a determination asking for a check that its facts
    contradict (the finding's `values.contradicted`)."""
    return tuple(f["condition"] for f in result.get("explanation") or ()
                 if f.get("condition") in CONTRADICTED_FIELD
                 and (f.get("values") or {}).get("contradicted"))


def contradicted(result: Mapping[str, Any], inputs: Mapping[str, Any], as_of: date,
                 lang: str) -> list[dict[str, Any]]:
    """Those checks as problems naming the field to correct, each with the
    determination's own sentence in `lang` (the stored one, or the same facts
    decided again in that language)."""
    codes = contradicted_codes(result)
    if not codes:
        return []
    found = [f for f in result["explanation"] if f["condition"] in codes]
    if result.get("lang") != lang:
        from ...core import evaluate
        from ...letter.view import rules_named

        again = evaluate(dict(inputs), as_of=as_of, rules=rules_named(result.get("rules_name")),
                         lang=lang).to_dict()
        found = [f for f in again["explanation"] if f["condition"] in codes]
    return [{"field": CONTRADICTED_FIELD[f["condition"]], "code": "check_contradicted",
             "warning": f["condition"],
             "message": _text(lang, "check_contradicted", finding=f["text"]),
             "value": None} for f in found]
