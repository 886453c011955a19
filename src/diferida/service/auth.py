"""Bearer tokens and roles. Analysts create, correct and read cases;
supervisors read cases (and, in the workbench, approve or return them);
auditors read cases and the audit trail. A refused attempt (401, 403 or 429) is itself
written to the audit trail; repeated anonymous ones are collapsed into one
event with their count (throttle.FailureDigest). A client that fails to sign
in too often is refused (429) before its token is even looked up."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from ..i18n import help_text
from . import messages
from .errors import APIError, problem
from .store import NewEvent, Store, User
from .throttle import client_of, too_many_problems

ANALYST = "analyst"
SUPERVISOR = "supervisor"
AUDITOR = "auditor"
MAX_DB_ID = 2**63 - 1

bearer = HTTPBearer(auto_error=False,
                    description=help_text("api.responses.bearer"))
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


def store_of(request: Request) -> Store:
    return request.app.state.store


def _lang(request: Request) -> str:
    return messages.pick_lang(request.query_params.get("lang"),
                              request.headers.get("accept-language"))


def audit_path(request: Request) -> str:
    """The request's path as the audit trail keeps it: as the access log
    shows it (`logs.shown_path`: the path when its ids are numbers, else its
    route's template — a name typed into an address is not kept), and never
    a NUL, which no database keeps."""
    from .logs import shown_path

    return shown_path(request.url.path).replace("\x00", "%00")


async def audit_anonymous(request: Request, event: NewEvent) -> None:
    """Write an anonymous failure, or count it into the open window of its kind."""
    route = getattr(request.scope.get("route"), "path", None) or event.path
    digest = request.app.state.digest
    events = digest.note(event, route)
    for i, e in enumerate(events):
        try:
            await run_in_threadpool(store_of(request).audit, e)
        except Exception:
            for unwritten in events[i:]:  # written by a later flush, not lost
                digest.restore(unwritten)
            raise


def require(*roles: str) -> Callable:
    """A dependency giving the authenticated user when their role is one of `roles`."""

    async def dependency(request: Request, credentials: Credentials) -> User:
        store = store_of(request)
        limiter = request.app.state.limiter
        lang = _lang(request)
        client = client_of(request.scope)
        path = audit_path(request)
        retry = limiter.auth_blocked(client)
        if retry is not None:
            await audit_anonymous(request, NewEvent(
                "auth.rate_limited", request.method, path, 429,
                detail="too many failed attempts from this client", case_id=_case_id(request)))
            raise APIError(429, too_many_problems(lang, retry), {"Retry-After": str(retry)})
        user = None
        if credentials is not None and credentials.scheme.lower() == "bearer":
            user = await run_in_threadpool(store.user_for_token, credentials.credentials)
        if user is None:
            limiter.hit_auth_failure(client)
            reason = "no token" if credentials is None else "unknown or disabled token"
            await audit_anonymous(request, NewEvent(
                "auth.unauthorized", request.method, path, 401, detail=reason,
                case_id=_case_id(request)))
            raise APIError(401, [problem(None, "unauthorized",
                                         messages.text(lang, "unauthorized"))],
                           {"WWW-Authenticate": "Bearer"})
        if user.role not in roles:
            limiter.hit_auth_failure(client)
            await run_in_threadpool(store.audit, NewEvent(
                "auth.forbidden", request.method, path, 403, user=user,
                case_id=_case_id(request), detail=f"needs {' or '.join(roles)}"))
            raise APIError(403, [problem(None, "forbidden", messages.text(
                lang, "forbidden", role=user.role, allowed=", ".join(roles)))])
        return user

    return dependency


def _case_id(request: Request) -> int | None:
    """The case id of the path when it is one a case can have; else None (the
    path, kept in the event, still shows what was asked for)."""
    raw = request.path_params.get("case_id")
    try:
        value = int(raw) if raw is not None else None
    except ValueError:
        return None
    return value if value is not None and 1 <= value <= MAX_DB_ID else None


Analyst = Annotated[User, Depends(require(ANALYST))]
Reader = Annotated[User, Depends(require(ANALYST, SUPERVISOR, AUDITOR))]
# the workbench's routes: any signed-in role; the service layer decides
Anyone = Annotated[User, Depends(require(ANALYST, SUPERVISOR, AUDITOR))]
Auditor = Annotated[User, Depends(require(AUDITOR))]
