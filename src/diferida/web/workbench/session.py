"""Who is signed in to the workbench, and proof that a form was sent by the
workbench's own page.

The session is a cookie signed with itsdangerous (the signing library of
Flask and of Starlette's sessions): a random session id, the user's id, a
fingerprint of the user's credentials and the time of the sign-in. Nothing
personal about a participant is ever in it. The cookie is

- HttpOnly (no script reads it), SameSite=Strict (no other site's page
  sends it), limited to the workbench's paths (/analista), and Secure when
  the request came over HTTPS: the request's own scheme, or the
  `X-Forwarded-Proto` of a reverse proxy the administrator trusts
  (DIFERIDA_TRUSTED_PROXIES, the same list that names the client), or
  always with DIFERIDA_SESSION_SECURE=true;
- renewed on each page (its signature carries the time), so that it
  expires after DIFERIDA_SESSION_IDLE_MINUTES without a request (30 by
  default) and in any case DIFERIDA_SESSION_HOURS after the sign-in (10);
  the browser keeps it for the absolute lifetime, so that a request after
  the idle expiry is recognised as such (the sign-in page says why) while
  the server refuses it by the time it carries;
- made anew at each sign-in: a session id a browser brought before signing
  in is never the one it has after (no session fixation);
- refused when the user was disabled or their password changed since the
  sign-in (the fingerprint no longer matches), and after signing out: a
  sign-out is written to the database (table `signed_out_sessions`, see
  `diferida.service.store.signouts`), which every request's session is
  checked against, so a copy of the cookie is refused by every worker
  process and after a restart, until it would have expired anyway.

CSRF: every form of the workbench carries a token, the session id (and
the user's id) signed with a purpose of its own (the synchronizer-token
pattern: a token is good for one session only); the sign-in form, before
any session exists, is tied the same way to a random pre-session cookie. A
post whose token does not verify is refused (403) before anything is done.

Nothing typed is lost: a form of the workbench's own pages posted after its
session ended (`lapsed`: the post's CSRF token still verifies, so the form
came from that session's page) is kept in a signed envelope (`keep`: the
user's id, the form's address, what was posted, a random id and the time)
that travels in the sign-in form; once the same user signs in (and only
then) the form is shown again with every value (`open_kept`), once
(`spend`, the random id recorded as spent) and within
DIFERIDA_SESSION_IDLE_MINUTES of the keeping. The text typed for an action
(a return's reason, a note of verification) is kept the same way, alone,
and given back on its page with the action not done (routes.py decides
what goes in an envelope and where it is given back). See docs/workbench.md.

The signing key is DIFERIDA_SESSION_SECRET; without it each server process
makes a random key when it starts (sessions then end with a restart and
are not shared between worker processes: set the key when running more
than one worker).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer
from starlette.requests import Request
from starlette.responses import Response

from diferida.service.store import signouts

log = logging.getLogger("uvicorn.error")

COOKIE = "diferida_wb"
PRE_COOKIE = "diferida_wb_pre"
COOKIE_PATH = "/analista"
CSRF_FIELD = "csrf_token"
DEFAULT_IDLE_MINUTES = 30
DEFAULT_HOURS = 10
# how much longer than its cookie could last a sign-out is kept: for the
# clocks of different machines (see `Sessions.end`)
SIGN_OUT_MARGIN_SECONDS = 3600


def _positive(name: str, default: float) -> float:
    raw = os.environ.get(name, "")
    if raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ValueError(f"{name} must be a positive number, got {raw!r}")
    return value


def _secure_setting() -> bool | None:
    raw = os.environ.get("DIFERIDA_SESSION_SECURE", "").lower()
    if raw in ("", "auto"):
        return None
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"DIFERIDA_SESSION_SECURE must be true, false or auto, got {raw!r}")


@dataclass(frozen=True)
class Session:
    sid: str
    user_id: int
    fingerprint: str
    signed_in: float  # epoch seconds


@dataclass(frozen=True)
class Lapsed:
    """A session that ended by time alone (idle or too long) whose form was
    posted."""

    session: Session
    reason: str  # "idle" or "length"


@dataclass(frozen=True)
class Kept:
    """A form posted after its session ended, kept for its user."""

    user_id: int
    path: str
    values: dict[str, str]
    nonce: str
    kept_at: float


# what a kept form may hold: its fields and their length (the workbench's
# forms have about twenty fields; a field longer than the page takes is
# refused by the page when the form comes back)
KEPT_MAX_FIELDS = 200
KEPT_MAX_CHARS = 20_000


class Sessions:
    """The signer of the workbench's cookies and forms (one per app)."""

    def __init__(self, secret: str | None = None, *, idle_seconds: float | None = None,
                 max_seconds: float | None = None, secure: bool | None = None,
                 clock=time.time):
        given = secret if secret is not None else os.environ.get("DIFERIDA_SESSION_SECRET")
        if not given:
            given = secrets.token_urlsafe(32)
            self.ephemeral = True
        else:
            self.ephemeral = False
        self.idle = idle_seconds if idle_seconds is not None else 60 * _positive(
            "DIFERIDA_SESSION_IDLE_MINUTES", DEFAULT_IDLE_MINUTES)
        self.max = max_seconds if max_seconds is not None else 3600 * _positive(
            "DIFERIDA_SESSION_HOURS", DEFAULT_HOURS)
        self.secure = secure if secure is not None else _secure_setting()
        self.clock = clock
        self._session = URLSafeTimedSerializer(given, salt="diferida.workbench.session")
        self._csrf = URLSafeTimedSerializer(given, salt="diferida.workbench.csrf")
        self._pre = URLSafeTimedSerializer(given, salt="diferida.workbench.pre-session")
        self._kept = URLSafeTimedSerializer(given, salt="diferida.workbench.kept-form")
        # how long a kept form waits for its user to sign in again
        self.kept_seconds = self.idle

    # --- the session --------------------------------------------------------------

    def _loads(self, serializer: URLSafeTimedSerializer, value: str, max_age: float):
        # itsdangerous reads its own clock; ours (tests move it) decides the age
        try:
            payload, signed_at = serializer.loads(value, return_timestamp=True)
        except (BadSignature, SignatureExpired, ValueError, TypeError):
            return None
        age = self.clock() - signed_at.timestamp()
        if age > max_age or age < -60:
            return None
        return payload

    def read(self, request: Request) -> Session | None:
        """The request's session when its cookie is good and not expired
        (whether it was signed out is the database's: `signed_out`)."""
        s = self._cookie(request, self.idle)
        if s is None or self.clock() - s.signed_in > self.max:
            return None
        return s

    def _cookie(self, request: Request, max_age: float) -> Session | None:
        """The session the request's cookie holds, when the cookie is signed
        and was renewed at most `max_age` seconds ago; None otherwise."""
        raw = request.cookies.get(COOKIE)
        data = self._loads(self._session, raw, max_age) if raw else None
        if not isinstance(data, dict):
            return None
        try:
            return Session(sid=str(data["s"]), user_id=int(data["u"]),
                           fingerprint=str(data["f"]), signed_in=float(data["t"]))
        except (KeyError, TypeError, ValueError):
            return None

    def start(self, user_id: int, fingerprint: str) -> Session:
        """A new session, with an id never seen before (whatever the browser brought)."""
        return Session(sid=secrets.token_urlsafe(24), user_id=user_id,
                       fingerprint=fingerprint, signed_in=self.clock())

    def end(self, store, session: Session) -> None:
        """Sign the session out, for every process using `store` (a
        `diferida.service.store.Store`). The sign-outs of sessions signed in
        longer ago than the absolute lifetime, the idle time and an hour are
        forgotten: a copy of such a cookie is refused by its signed sign-in
        time, and by its signed last renewal (never after its sign-out),
        whichever process reads it and even if one of the two settings is
        lengthened later; the hour covers the clocks of different machines."""
        now = self.clock()
        signouts.record_sign_out(
            store.engine, session.sid, signed_in=_utc(session.signed_in), signed_out=_utc(now),
            forget_before=_utc(now - self.max - self.idle - SIGN_OUT_MARGIN_SECONDS))

    def signed_out(self, store, session: Session) -> bool:
        """Whether the session was signed out (by any process using `store`)."""
        return signouts.is_signed_out(store.engine, session.sid)

    def _signed(self, serializer: URLSafeTimedSerializer, payload) -> str:
        # sign with our clock, so that expiry follows it (tests move it)
        signer = serializer.make_signer(serializer.salt)
        # TimestampSigner's clock, replaced on this one signer (itsdangerous
        # types make_signer as the plain Signer it returns a subclass of)
        signer.get_timestamp = lambda: int(self.clock())  # type: ignore[attr-defined]
        return signer.sign(serializer.dump_payload(payload)).decode("ascii")

    def put(self, response: Response, request: Request, session: Session) -> None:
        """Set (or renew) the session cookie on a response."""
        value = self._signed(self._session, {"s": session.sid, "u": session.user_id,
                                             "f": session.fingerprint, "t": session.signed_in})
        # kept by the browser for the absolute lifetime, refused by the server
        # after the idle time (the signed time above): a request after the
        # idle expiry is then known to be one, and its form can be kept
        response.set_cookie(COOKIE, value, max_age=int(self.max), path=COOKIE_PATH,
                            httponly=True, samesite="strict", secure=self.is_secure(request))
        response.delete_cookie(PRE_COOKIE, path=COOKIE_PATH)

    def clear(self, response: Response, request: Request) -> None:
        response.delete_cookie(COOKIE, path=COOKIE_PATH, httponly=True, samesite="strict",
                               secure=self.is_secure(request))

    def is_secure(self, request: Request) -> bool:
        if self.secure is not None:
            return self.secure
        if request.url.scheme == "https":
            return True
        settings = getattr(request.app.state, "settings", None)
        proxies = getattr(settings, "proxy_networks", ())
        if not proxies:
            return False
        # X-Forwarded-Proto is believed only when a trusted proxy is named:
        # the service then sits behind one (service/proxies.py)
        proto = request.headers.get("x-forwarded-proto", "")
        return proto.split(",")[-1].strip().lower() == "https"

    # --- CSRF --------------------------------------------------------------------

    def csrf_token(self, session: Session) -> str:
        return self._signed(self._csrf, [session.sid, session.user_id])

    def _csrf_of(self, token: str | None) -> tuple[str, int] | None:
        got = self._loads(self._csrf, token, self.max) if token else None
        if (isinstance(got, list) and len(got) == 2 and isinstance(got[0], str)
                and isinstance(got[1], int)):
            return got[0], got[1]
        return None

    def check_csrf(self, session: Session | None, token: str | None) -> bool:
        if session is None:
            return False
        got = self._csrf_of(token)
        return got is not None and hmac.compare_digest(got[0], session.sid) \
            and got[1] == session.user_id

    # --- what is posted after the session ended ---------------------------------

    def seconds_left(self, session: Session) -> float:
        """How long the session lasts from now without another request."""
        return max(0.0, min(self.idle, session.signed_in + self.max - self.clock()))

    def seconds_left_now(self, request: Request, session: Session) -> float:
        """How long the request's session lasts without another request,
        counted from its cookie's last renewal (which another tab of the same
        browser may have made): nothing is renewed by asking."""
        raw = request.cookies.get(COOKIE)
        if raw is None:
            return 0.0
        try:
            _, renewed = self._session.loads(raw, return_timestamp=True)
        except (BadSignature, SignatureExpired, ValueError, TypeError):
            return 0.0
        now = self.clock()
        return max(0.0, min(renewed.timestamp() + self.idle - now,
                            session.signed_in + self.max - now))

    def warn_seconds(self) -> int:
        """How long before the end the page warns: two minutes, or half the
        idle time when that is shorter, and never less than 20 seconds to act
        (WCAG 2.2.1)."""
        return int(max(20, min(120, self.idle // 2)))

    def lapsed(self, request: Request, token: str | None) -> Lapsed | None:
        """The session a form was posted from, when that session ended by
        time alone: its cookie, which the browser keeps for the absolute
        lifetime, is signed and was renewed at most that long ago but is past
        its idle time or its length, and the form's CSRF token is that
        session's (the form came from its page). Whether it was signed out,
        or its user disabled or given a new password since, is the caller's
        to check (`signed_out`, the fingerprint): then nothing is kept."""
        s = self._cookie(request, self.max)
        if s is None or not self.check_csrf(s, token):
            return None
        return Lapsed(session=s, reason="length" if self.clock() - s.signed_in > self.max
                      else "idle")

    def ended_by_time(self, request: Request) -> str | None:
        """Why the request's session is no longer good, when time alone ended
        it: "idle" or "length"; None when there is no such cookie, or it is
        still good by its times (signed out, a user disabled or a new password:
        the caller's to say)."""
        s = self._cookie(request, self.max)
        if s is None or self.read(request) is not None:
            return None
        return "length" if self.clock() - s.signed_in > self.max else "idle"

    def keep(self, lapsed: Lapsed, path: str, values: dict[str, str]) -> str | None:
        """The signed envelope of a form posted after its session ended, for
        the sign-in form to carry; None when the form is too big to keep."""
        if len(values) > KEPT_MAX_FIELDS or any(
                len(k) > 100 or len(v) > KEPT_MAX_CHARS for k, v in values.items()):
            return None
        return self._signed(self._kept, {"u": lapsed.session.user_id, "p": path, "v": values,
                                         "n": secrets.token_urlsafe(18)})

    def open_kept(self, envelope: str | None) -> Kept | None:
        """A kept form, when its envelope is good and not too old."""
        if not envelope or len(envelope) > 2 * KEPT_MAX_FIELDS * KEPT_MAX_CHARS:
            return None
        try:
            payload, signed_at = self._kept.loads(envelope, return_timestamp=True)
        except (BadSignature, SignatureExpired, ValueError, TypeError):
            return None
        at = signed_at.timestamp()
        if not -60 <= self.clock() - at <= self.kept_seconds:
            return None
        try:
            values = payload["v"]
            kept = Kept(user_id=int(payload["u"]), path=str(payload["p"]),
                        values={str(k): str(v) for k, v in values.items()},
                        nonce=str(payload["n"]), kept_at=at)
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        return kept

    def spent(self, store, kept: Kept) -> bool:
        """Whether the kept form was already given back (by any process)."""
        return signouts.is_signed_out(store.engine, "kept:" + kept.nonce)

    def spend(self, store, kept: Kept) -> None:
        """Give the kept form back once: its random id is recorded as spent,
        with the sign-outs (a row forgotten as theirs are)."""
        now = self.clock()
        signouts.record_sign_out(
            store.engine, "kept:" + kept.nonce, signed_in=_utc(kept.kept_at),
            signed_out=_utc(now),
            forget_before=_utc(now - self.max - self.idle - SIGN_OUT_MARGIN_SECONDS))

    def pre_session(self, request: Request) -> str | None:
        """The random value of the sign-in page's cookie, when it is good."""
        raw = request.cookies.get(PRE_COOKIE)
        if not raw:
            return None
        value = self._loads(self._pre, raw, self.max)
        return value if isinstance(value, str) else None

    def new_pre_session(self) -> str:
        """A random value for a sign-in form (put in its cookie with `put_pre_session`)."""
        return secrets.token_urlsafe(24)

    def put_pre_session(self, response: Response, request: Request, value: str) -> None:
        response.set_cookie(PRE_COOKIE, self._signed(self._pre, value), max_age=int(self.max),
                            path=COOKIE_PATH, httponly=True, samesite="strict",
                            secure=self.is_secure(request))

    def pre_csrf_token(self, value: str) -> str:
        return self._signed(self._csrf, "pre:" + value)

    def check_pre_csrf(self, value: str | None, token: str | None) -> bool:
        if not value or not token:
            return False
        got = self._loads(self._csrf, token, self.max)
        return isinstance(got, str) and hmac.compare_digest(got, "pre:" + value)


def _utc(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


def fingerprint(*parts: object) -> str:
    """A short digest of what must not change during a session (the user's
    name, role, state and password hash): a change ends the session."""
    text = "\x1f".join("" if p is None else str(p) for p in parts)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]

