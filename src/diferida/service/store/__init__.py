"""The case store: users and their tokens, append-only cases with their
versions, the rules content each case was decided with, and the audit trail."""

from .engine import DatabaseURLError, make_engine, sqlite_path
from .models import (
    ROLES,
    AuditEvent,
    Case,
    CaseApplication,
    CaseState,
    Letter,
    RulesVersion,
    User,
    UserPassword,
    UserProfile,
    WorkflowEvent,
)
from .repository import (
    STATE_AFTER,
    Application,
    AuditQuery,
    CaseConflict,
    CaseProblem,
    NewEvent,
    Store,
    WorkflowConflict,
    barred_from_approving,
    hash_token,
    new_token,
)

__all__ = [
    "ROLES",
    "STATE_AFTER",
    "Application",
    "CaseApplication",
    "CaseState",
    "Letter",
    "UserPassword",
    "UserProfile",
    "WorkflowConflict",
    "WorkflowEvent",
    "AuditEvent",
    "AuditQuery",
    "Case",
    "CaseConflict",
    "CaseProblem",
    "DatabaseURLError",
    "NewEvent",
    "RulesVersion",
    "Store",
    "User",
    "barred_from_approving",
    "hash_token",
    "make_engine",
    "new_token",
    "sqlite_path",
]
