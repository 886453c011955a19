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

The package, by what each part does: `common` (states, roles, limits,
passwords, `Refused`, the result types, the audit trail's writes, the
maker-checker rule), `applications` (parsing and evaluating an
application, `preview`), `actions` (open, import, correct, submit,
approve, return), `imports` (the file's column-wise decision and its
storing), `views` (view, history, queues, search, changes in words),
`letters` (letters, the issued letter's bytes, `reproduce`), `audit`
(the auditor's view and verification) and `exports`. This module
re-exports the public names, so callers write `workflow.approve(...)`;
a name is patched (in a test) on the module that defines it, e.g.
`workflow.common.is_own` or `workflow.imports.IMPORT_BATCH`.
"""

from __future__ import annotations

from ..schemas import APPLICATION_FIELDS
from .actions import (
    approve,
    check_names,
    correct,
    import_applications,
    open_draft,
    return_case,
    submit,
)
from .applications import _parse_application, preview
from .audit import (
    AUDIT_FILTERS,
    AUDIT_TEXT_LIMITS,
    AUDIT_YEARS,
    MAX_DB_ID,
    READ_ACTIONS,
    VERIFY_ACTION,
    AuditPage,
    Verification,
    audit_filter_problems,
    audit_view,
    last_verification,
    verify_now,
    verify_view,
)
from .common import (
    ACKNOWLEDGED,
    ACTIONS,
    APPROVERS,
    AUDITORS,
    CHECK_WARNINGS,
    CONTRADICTED_FIELD,
    DEFAULT_PASSWORD_PROFILE,
    EXPORTERS,
    EXPORTS,
    FORMATS,
    LIMITS,
    MAX_PER_PAGE,
    METHOD,
    MIN_VISIBLE,
    PASSWORD_PROFILE_ENV,
    PER_PAGE,
    PREPARERS,
    QUEUES,
    READERS,
    STATES,
    Acknowledgement,
    AuditEntry,
    CaseHistory,
    CaseSummary,
    CaseView,
    ImportResult,
    Page,
    Refused,
    RejectedRow,
    VersionChange,
    WorkflowEvent,
    _text,
    authenticate,
    contradicted,
    hash_password,
    is_own,
    password_hasher,
    people,
    user_lang,
)
from .exports import export
from .imports import IMPORT_BATCH, IMPORT_CHUNK_ROWS, PY_WHITESPACE
from .letters import TEXT_KEYS, correction_reason, letter, letter_html, reproduce, stored_letter
from .views import changes_in_words, history, queue, search, view

__all__ = [
    "ACTIONS", "EXPORTS", "QUEUES", "STATES", "AuditEntry", "CaseHistory", "CaseSummary",
    "CaseView",
    "ImportResult", "Page", "Refused", "RejectedRow", "VersionChange", "WorkflowEvent",
    "Verification", "approve", "audit_filter_problems", "audit_view", "authenticate",
    "correct", "export", "history", "last_verification", "verify_now",
    "import_applications", "letter", "open_draft", "preview", "queue", "return_case",
    "search", "correction_reason", "stored_letter", "submit", "verify_view", "view",
    # also used by name across the package
    "APPLICATION_FIELDS", "APPROVERS", "AUDITORS", "AUDIT_FILTERS", "AUDIT_TEXT_LIMITS",
    "AUDIT_YEARS", "DEFAULT_PASSWORD_PROFILE", "EXPORTERS", "FORMATS", "IMPORT_BATCH",
    "IMPORT_CHUNK_ROWS", "LIMITS", "MAX_DB_ID", "MAX_PER_PAGE", "METHOD", "MIN_VISIBLE",
    "PASSWORD_PROFILE_ENV", "PER_PAGE", "PREPARERS", "PY_WHITESPACE", "READERS",
    "TEXT_KEYS", "VERIFY_ACTION", "is_own", "_parse_application", "_text", "changes_in_words",
    "hash_password", "letter_html", "password_hasher", "reproduce", "user_lang",
    "READ_ACTIONS", "AuditPage", "ACKNOWLEDGED", "CHECK_WARNINGS", "Acknowledgement",
    "check_names", "people", "contradicted", "CONTRADICTED_FIELD",
]
