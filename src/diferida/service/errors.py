"""Errors as JSON, one shape everywhere:

    {"errors": [{"field": ..., "code": ..., "value": ..., "message": ...}, ...]}

and the outer guard of the app: a body-size limit enforced while the body is
read, and a last-resort handler that answers 500 without ever writing a
request's data (or an exception message that might hold it) to the log."""

from __future__ import annotations

import json
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from ..errors import DiferidaError
from . import messages
from .logs import shown_path, where

# uvicorn configures its loggers; the app's lines go where its lines go
log = logging.getLogger("uvicorn.error")


def problem(field: str | None, code: str, message: str, value: Any = None,
            **extra: Any) -> dict[str, Any]:
    return {"field": field, "code": code, "value": value, "message": message, **extra}


class APIError(DiferidaError):
    def __init__(self, status: int, problems: list[dict[str, Any]],
                 headers: dict[str, str] | None = None):
        super().__init__(f"HTTP {status}")
        self.status = status
        self.problems = problems
        self.headers = headers


def error_response(status: int, problems: list[dict[str, Any]],
                   headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"errors": problems}, status_code=status, headers=headers)


def _lang(request: Request) -> str:
    return messages.pick_lang(request.query_params.get("lang"),
                              request.headers.get("accept-language"))


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(APIError)
    async def _api_error(request: Request, exc: APIError):
        return error_response(exc.status, exc.problems, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError):
        out = []
        for e in exc.errors():
            loc = [str(p) for p in e.get("loc", ()) if p not in ("query", "path", "body", "form")]
            value = e.get("input")
            if (e.get("ctx") or {}).get("catalog"):
                # a parameter refused by its type in schemas.py: the catalog words it,
                # naming the parameter and quoting a short, cut value
                from ..bounded import shown

                name, code = ".".join(loc), e["type"]
                out.append(problem(name, code, f"{name}: " + messages.text(
                    _lang(request), code, value=shown(value)),
                    value if isinstance(value, str) else None))
                continue
            from ..bounded import shown

            out.append(problem(".".join(loc) or None, e.get("type", "invalid"),
                               messages.text(_lang(request), "invalid",
                                             value="" if value is None else shown(value),
                                             detail=shown(e.get("msg", ""), 160)),
                               value if isinstance(value, str | int | float | bool) else None))
        return error_response(422, out)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException):
        if exc.status_code == 400:
            # a body the framework cannot read (broken multipart): bad input, 422
            # as everywhere in this API
            return error_response(422, [problem(None, "invalid_body", messages.text(
                _lang(request), "invalid_body", detail=str(exc.detail)))])
        code = {404: "not_found_path", 405: "method_not_allowed"}.get(exc.status_code)
        msg = messages.text(_lang(request), code) if code else str(exc.detail)
        headers = dict(getattr(exc, "headers", None) or {})
        if exc.status_code == 405:
            # every method of the path, not only those of the first route that matched it
            headers["Allow"] = ", ".join(allowed_methods(request))
        return error_response(exc.status_code, [problem(None, code or "http_error", msg)],
                              headers or None)


def allowed_methods(request: Request) -> list[str]:
    """The methods some route of the app answers on this request's path."""
    from starlette.routing import Match

    methods: set[str] = set()
    routes = getattr(request.app.state, "route_table", None) or request.app.router.routes
    for route in routes:
        match, _ = route.matches(request.scope)
        if match != Match.NONE:
            methods |= set(getattr(route, "methods", None) or ())
    order = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
    return sorted(methods, key=lambda m: (order.index(m) if m in order else len(order), m))


API_HEADERS = [(b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff")]


class BodyTooLarge(DiferidaError):
    pass


class GuardMiddleware:
    """Pure ASGI, outside the routing: refuses bodies over the limit (by
    Content-Length up front, and by counting when the length is not given),
    and turns any unhandled exception into a 500 logged without its message."""

    def __init__(self, app, *, max_json_bytes: int, max_upload_bytes: int):
        self.app = app
        self.max_json = max_json_bytes
        # the multipart envelope (boundaries, part headers, form fields) on top of the file
        self.max_multipart = max_upload_bytes + 64 * 1024
        self.max_upload = max_upload_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        ctype = headers.get(b"content-type", b"").decode("latin-1").lower()
        multipart = ctype.startswith("multipart/")
        limit = self.max_multipart if multipart else self.max_json
        shown = self.max_upload if multipart else self.max_json
        lang = messages.pick_lang(None, headers.get(b"accept-language", b"").decode("latin-1"))
        started = False

        api = scope.get("path", "").startswith("/api/")

        async def send_wrapper(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                if api:
                    # answers carry personal data: never kept by a shared cache
                    message = {**message, "headers": [*message.get("headers", []),
                                                      *API_HEADERS]}
            await send(message)

        async def too_large():
            await error_response(413, [problem(None, "payload_too_large", messages.text(
                lang, "payload_too_large", limit=shown), limit=shown)],
                {"Connection": "close"})(scope, receive, send_wrapper)

        length = headers.get(b"content-length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                declared = -1
            if declared > limit:
                return await too_large()

        seen = 0

        async def receive_counted():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge()
            return message

        try:
            await self.app(scope, receive_counted, send_wrapper)
        except BodyTooLarge:
            if not started:
                await too_large()
        except ClientDisconnect:
            # the client went away before its body arrived: nobody to answer, nothing wrong here
            log.info("client disconnected during %s %s", scope.get("method"), _route(scope))
        except Exception as exc:  # the last line of defence: log where, never what
            log.error("unhandled %s in %s %s at %s", type(exc).__name__, scope.get("method"),
                      _route(scope), where(exc))
            if not started:
                await error_response(500, [problem(None, "server_error", messages.text(
                    lang, "server_error"))])(scope, receive, send_wrapper)


def _route(scope) -> str:
    """The request's route template (/api/v1/cases/{case_id}), never values a
    client put in the path."""
    route = getattr(scope.get("route"), "path", None)
    return route or shown_path(scope.get("path", ""))


def parse_json_object(body: bytes, lang: str) -> dict[str, Any]:
    """The body as a JSON object. Numbers with a fraction are kept as exact
    decimals (30000.5 stays 30000.5), NaN/Infinity are refused, and a key
    given twice is an error rather than silently taking the last one.

    This thin guard stays before the body models (`schemas.ParticipantBody`,
    validated in `participant.parse`) because a model sees a body only once
    it is a dict: pydantic's JSON reader keeps the last of two equal keys
    without a word, and it would read a number with a fraction as a float
    for a field that also accepts text; a lone surrogate is valid JSON but
    no text. Hence FastAPI is not asked to parse these bodies."""
    from decimal import Decimal

    duplicates: list[str] = []

    def pairs(items):
        seen: dict[str, Any] = {}
        for k, v in items:
            if k in seen:
                duplicates.append(k)
            seen[k] = v
        return seen

    def no_constants(name):
        raise ValueError(f"{name} is not allowed")

    try:
        text = body.decode("utf-8")
        data = json.loads(text, parse_float=Decimal, parse_constant=no_constants,
                          object_pairs_hook=pairs)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        detail = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
        if isinstance(exc, json.JSONDecodeError):
            detail = f"{exc.msg}, line {exc.lineno} column {exc.colno}"
        elif isinstance(exc, UnicodeDecodeError):
            detail = "not UTF-8"
        elif isinstance(exc, ValueError):
            detail = str(exc)
        raise APIError(422, [problem(None, "invalid_json",
                                     messages.text(lang, "invalid_json", detail=detail))]) from None
    if not isinstance(data, dict):
        raise APIError(422, [problem(None, "not_an_object", messages.text(lang, "not_an_object"))])
    bad_text = [shown_key(k) for k, v in data.items() if not _is_unicode(k) or not _is_unicode(v)]
    if bad_text:
        # JSON allows "\ud800", Unicode text does not: nothing can store or print it
        raise APIError(422, [problem(k, "not_unicode",
                                     f"{k}: " + messages.text(lang, "not_unicode"))
                             for k in bad_text])
    if duplicates:
        raise APIError(422, [problem(k, "duplicate_key", f"{k}: "
                                     + messages.text(lang, "duplicate_key"))
                             for k in dict.fromkeys(duplicates)])
    return data


def _is_unicode(value: Any) -> bool:
    """False when a text anywhere in `value` holds a lone surrogate."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, dict):
        return all(_is_unicode(k) and _is_unicode(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_is_unicode(v) for v in value)
    return True


def shown_key(key: str) -> str:
    """A key as it can be printed: a lone surrogate written as its escape."""
    return key.encode("utf-8", "backslashreplace").decode("utf-8")
