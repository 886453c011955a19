"""Bounds on abuse: how many public requests and failed sign-ins a client
may make (rate limits, by the `limits` library), and how repeated anonymous
failures are written to the audit trail (collapsed, never uncounted).

A client is the address the connection comes from, as the server sees it,
or the one a trusted proxy names (DIFERIDA_TRUSTED_PROXIES, service/proxies.py).
Each worker process keeps its own counts, in memory.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from limits import RateLimitItem, parse, storage, strategies

from . import messages
from .errors import error_response, problem
from .store import NewEvent

# Requests that are neither public work nor sign-in attempts: never limited.
UNLIMITED_PATHS = ("/health",)
UNLIMITED_PREFIXES = ("/web/static/",)
# Every request under these is authenticated (a bearer token, or the
# workbench's session): failures are limited, not the requests.
AUTH_PREFIXES = ("/api/v1/cases", "/api/v1/audit", "/api/v1/workbench", "/analista")


def parse_limit(name: str, text: str) -> RateLimitItem | None:
    """A limit in the `limits` notation ("300/minute", "20 per 10 seconds"),
    or None for "off"."""
    if text.strip().lower() in ("off", "none", "0"):
        return None
    try:
        return parse(text)
    except ValueError as exc:
        raise ValueError(f"{name} must be a rate such as '300/minute' or 'off', "
                         f"got {text!r}") from exc


def client_of(scope) -> str:
    client = scope.get("client")
    return client[0] if client else "unknown"


class MemoryStorage(storage.MemoryStorage):
    """The library's in-memory storage, swept of expired entries by the
    request that finds a sweep due (at most every SWEEP_SECONDS) instead of by
    a timer thread the library starts again 10 ms after the last one ended:
    at one request every few milliseconds, that was a new thread for almost
    every request (`tests/test_hardening_api_abuse.py` holds that none is
    started)."""

    SWEEP_SECONDS = 1.0

    def __init__(self) -> None:
        super().__init__()
        self._next_sweep = 0.0

    def _MemoryStorage__schedule_expiry(self) -> None:  # the library's hook, by its name
        now = time.monotonic()
        if now >= self._next_sweep:
            self._next_sweep = now + self.SWEEP_SECONDS
            self._MemoryStorage__expire_events()


class Limiter:
    """The two per-client limits, in this process's memory."""

    def __init__(self, public: RateLimitItem | None, auth_failures: RateLimitItem | None):
        self.public = public
        self.auth_failures = auth_failures
        self._limiter = strategies.MovingWindowRateLimiter(MemoryStorage())

    def _retry_after(self, item: RateLimitItem, *key: str) -> int:
        reset = self._limiter.get_window_stats(item, *key).reset_time
        return max(1, math.ceil(reset - time.time()))

    def hit_public(self, client: str) -> int | None:
        """Count a public request; the seconds to wait when over the limit."""
        if self.public is None or self._limiter.hit(self.public, "public", client):
            return None
        return self._retry_after(self.public, "public", client)

    def auth_blocked(self, client: str) -> int | None:
        """The seconds to wait when this client has failed too often to sign in."""
        if self.auth_failures is None or self._limiter.test(self.auth_failures, "auth", client):
            return None
        return self._retry_after(self.auth_failures, "auth", client)

    def hit_auth_failure(self, client: str) -> None:
        if self.auth_failures is not None:
            self._limiter.hit(self.auth_failures, "auth", client)


def too_many_problems(lang: str, retry: int) -> list[dict]:
    return [problem(None, "too_many_requests", messages.text(
        lang, "too_many_requests", retry=retry), retry_after=retry)]


def too_many(lang: str, retry: int):
    return error_response(429, too_many_problems(lang, retry), {"Retry-After": str(retry)})


class PublicRateLimit:
    """Pure ASGI: the public limit, before any work is done for the request."""

    def __init__(self, app, limiter: Limiter):
        self.app = app
        self.limiter = limiter

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and self.limiter.public is not None:
            path = scope.get("path", "")
            if not (path in UNLIMITED_PATHS or path.startswith(UNLIMITED_PREFIXES)
                    or path.startswith(AUTH_PREFIXES)):
                retry = self.limiter.hit_public(client_of(scope))
                if retry is not None:
                    headers = dict(scope.get("headers") or [])
                    lang = messages.pick_lang(
                        None, headers.get(b"accept-language", b"").decode("latin-1"))
                    return await too_many(lang, retry)(scope, receive, send)
        await self.app(scope, receive, send)


@dataclass
class _Window:
    first: NewEvent
    opened: float
    count: int = 0
    last_at: datetime | None = None


class FailureDigest:
    """Anonymous failures (no token, an unknown token, too many attempts) of
    one kind — same action, method, route and reason — are written once per
    window: the first in full when it happens, then, when the window closes,
    one event saying how many more there were and when the last was. Nothing
    is dropped uncounted: `flush(force=True)` writes every open count (on
    shutdown)."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic):
        self.seconds = seconds
        self.clock = clock
        self._open: dict[tuple, _Window] = {}
        self._unwritten: list[NewEvent] = []

    def restore(self, event: NewEvent) -> None:
        """An event that could not be written: handed out again by the next flush."""
        self._unwritten.append(event)

    def note(self, event: NewEvent, route: str) -> list[NewEvent]:
        """The events to write now for this failure."""
        out = self.flush()
        if self.seconds <= 0:
            return [*out, event]
        key = (event.action, event.method, route, event.status_code, event.detail)
        window = self._open.get(key)
        if window is None:
            self._open[key] = _Window(event, self.clock())
            return [*out, event]
        window.count += 1
        window.last_at = datetime.now(UTC)
        return out

    def flush(self, force: bool = False) -> list[NewEvent]:
        """Close the windows that are over (all of them when forced): one
        summary event for each that counted repeats."""
        now = self.clock()
        out, self._unwritten = self._unwritten, []
        for key, window in list(self._open.items()):
            if force or now - window.opened >= self.seconds:
                del self._open[key]
                if window.count:
                    out.append(self._summary(key, window))
        return out

    def _summary(self, key: tuple, window: _Window) -> NewEvent:
        action, method, route, status, reason = key
        last = window.last_at.isoformat(timespec="seconds") if window.last_at else "?"
        return NewEvent(action, method, route, status, detail=(
            f"{reason}; {window.count} more like this (collapsed, {self.seconds:g} s "
            f"window, last at {last})"))
