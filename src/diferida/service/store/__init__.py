"""The case store: users and their tokens, append-only cases with their
versions, the rules content each case was decided with, and the audit trail."""

from .engine import DatabaseURLError, make_engine, sqlite_path
from .models import ROLES, AuditEvent, Case, RulesVersion, User
from .repository import (
    AuditQuery,
    CaseConflict,
    CaseProblem,
    NewEvent,
    Store,
    hash_token,
    new_token,
)

__all__ = [
    "ROLES",
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
    "hash_token",
    "make_engine",
    "new_token",
    "sqlite_path",
]
