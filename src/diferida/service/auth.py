"""Bearer tokens and roles. Analysts create, correct and read cases; auditors
read cases and the audit trail. A refused attempt (401 or 403) is itself
written to the audit trail."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from . import messages
from .errors import APIError, problem
from .store import NewEvent, Store, User

ANALYST = "analyst"
AUDITOR = "auditor"

bearer = HTTPBearer(auto_error=False,
                    description="A token from `diferida users add NAME --role ROLE`.")
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


def store_of(request: Request) -> Store:
    return request.app.state.store


def _lang(request: Request) -> str:
    return messages.pick_lang(request.query_params.get("lang"),
                              request.headers.get("accept-language"))


def require(*roles: str) -> Callable:
    """A dependency giving the authenticated user when their role is one of `roles`."""

    async def dependency(request: Request, credentials: Credentials) -> User:
        store = store_of(request)
        lang = _lang(request)
        user = None
        if credentials is not None and credentials.scheme.lower() == "bearer":
            user = await run_in_threadpool(store.user_for_token, credentials.credentials)
        if user is None:
            reason = "no token" if credentials is None else "unknown or disabled token"
            await run_in_threadpool(store.audit, NewEvent(
                "auth.unauthorized", request.method, request.url.path, 401, detail=reason,
                case_id=_case_id(request)))
            raise APIError(401, [problem(None, "unauthorized",
                                         messages.text(lang, "unauthorized"))],
                           {"WWW-Authenticate": "Bearer"})
        if user.role not in roles:
            await run_in_threadpool(store.audit, NewEvent(
                "auth.forbidden", request.method, request.url.path, 403, user=user,
                case_id=_case_id(request), detail=f"needs {' or '.join(roles)}"))
            raise APIError(403, [problem(None, "forbidden", messages.text(
                lang, "forbidden", role=user.role, allowed=", ".join(roles)))])
        return user

    return dependency


def _case_id(request: Request) -> int | None:
    raw = request.path_params.get("case_id")
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


Analyst = Annotated[User, Depends(require(ANALYST))]
Reader = Annotated[User, Depends(require(ANALYST, AUDITOR))]
Auditor = Annotated[User, Depends(require(AUDITOR))]
