"""Hardening, round three: a workbench session signed out stays signed out.

The attack: with a fixed DIFERIDA_SESSION_SECRET, someone copies an
analyst's cookie (and a form's CSRF token) before she signs out; after a
restart of the service, or at another worker process, the copy used to be
a good session again (sign-out was remembered only by the process that
served it), and a case could be opened with it. Sign-outs are now in the
database (migration 0004), so every process refuses the copy. Sign-outs
are forgotten once the cookie is refused by the times it carries, signed
(the session's absolute lifetime, its idle time and an hour), and
disabling a user or changing their password still ends their sessions
everywhere. On SQLite and
PostgreSQL, through the real application, and through `diferida serve`
restarted."""

from __future__ import annotations

from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from sqlalchemy import text

from diferida.cli import main
from diferida.server import create_app
from diferida.service import workflow as wf
from diferida.service.settings import Settings
from diferida.service.store import Store
from diferida.service.store.signouts import is_signed_out, record_sign_out, session_sha256
from diferida.service.testing import database_for_tests, running_server
from diferida.web.workbench.session import COOKIE, Sessions

from .workbench_helpers import APPLICATION, add_users, csrf_of, sign_in

KINDS = ["sqlite", "postgresql"]
SECRET = "the one key of every worker of this service"


class Clock:
    def __init__(self, start: float = 2_000_000_000.0):
        self.now = start

    def __call__(self) -> float:
        return self.now


def _settings(url: str) -> Settings:
    return Settings(database_url=url, rate_limit_auth_failures="off", rate_limit_public="off")


@pytest.fixture(params=KINDS)
def database(request, tmp_path, monkeypatch):
    """A database URL with the workbench's users in it, and the signing key
    set as an administrator sets it (every app made here reads it)."""
    monkeypatch.setenv("DIFERIDA_SESSION_SECRET", SECRET)
    with database_for_tests(request.param, tmp_path) as url:
        store = Store(url)
        store.upgrade()
        add_users(store)
        store.dispose()
        yield url


@contextmanager
def app_instance(url: str):
    """One instance of the service (a process, or one worker of several):
    the whole application with its own store and its own Sessions."""
    app = create_app(_settings(url))
    with TestClient(app) as client:
        yield app, client


def _stolen(client) -> tuple[str, str]:
    """What an attacker copies from a signed-in browser: the session cookie
    and the CSRF token of a page's form."""
    return client.cookies.get(COOKIE), csrf_of(client.get("/analista/nuevo").text)


def _sign_out(client) -> None:
    token = csrf_of(client.get("/analista").text)
    r = client.post("/analista/salir", data={"csrf_token": token}, follow_redirects=False)
    assert r.status_code == 303 and "aviso=signed_out" in r.headers["location"]


def _with_cookie(client, cookie: str):
    """A browser of the attacker's at the same service (the same instance as
    `client`), holding only the copied cookie."""
    if isinstance(client, TestClient):
        attacker = TestClient(client.app)
    else:
        attacker = httpx.Client(base_url=client.base_url)
    attacker.cookies.set(COOKIE, cookie, path="/analista")
    return attacker


def _refused(response) -> bool:
    return (response.status_code == 303
            and response.headers["location"].startswith("/analista/entrar"))


def _open_case(client, token: str, participant_id: str):
    return client.post("/analista/nuevo", data={
        **APPLICATION, "participant_id": participant_id, "action": "save",
        "csrf_token": token}, follow_redirects=False)


def _cases(url: str) -> int:
    store = Store(url)
    try:
        return store.count_cases()
    finally:
        store.dispose()


def test_a_signed_out_cookie_is_refused_after_a_restart(database):
    with app_instance(database) as (_, c):
        sign_in(c, "ana")
        cookie, token = _stolen(c)
        # a session of sol's, not signed out: it must survive the restart,
        # so that the refusal below is the sign-out's and not the key's
        sign_in(other := TestClient(c.app), "sol")
        kept = other.cookies.get(COOKIE)
        _sign_out(c)
        # the process that served the sign-out refuses the copy (as before)
        assert _refused(_with_cookie(c, cookie).get("/analista", follow_redirects=False))
    # the service restarts: a new application, the same key, the same database
    with app_instance(database) as (_, c):
        assert _with_cookie(c, kept).get("/analista").status_code == 200
        attacker = _with_cookie(c, cookie)
        r = attacker.get("/analista", follow_redirects=False)
        assert _refused(r) and "aviso=expired" in r.headers["location"]
        # the attack of the finding: a case opened with the copied cookie and token
        r = _open_case(attacker, token, "W-ROBADO")
        assert _refused(r)
        assert _cases(database) == 0


def test_a_session_signed_out_at_one_worker_is_refused_by_another(database):
    with app_instance(database) as (_, one), app_instance(database) as (_, two):
        sign_in(one, "ana")
        cookie, token = _stolen(one)
        # the same key: the other worker takes the session while it lasts
        assert _with_cookie(two, cookie).get("/analista").status_code == 200
        _sign_out(one)
        assert _refused(_with_cookie(two, cookie).get("/analista", follow_redirects=False))
        assert _refused(_open_case(_with_cookie(two, cookie), token, "W-ROBADO"))
        # and the other way round, with a form posted
        sign_in(two, "ana2")
        cookie, token = _stolen(two)
        assert _open_case(_with_cookie(one, cookie), token, "W-0100").status_code == 303
        _sign_out(two)
        assert _refused(_open_case(_with_cookie(one, cookie), token, "W-0101"))
    assert _cases(database) == 1


def test_disabling_a_user_or_a_new_password_still_ends_their_sessions_everywhere(database):
    with app_instance(database) as (app, one), app_instance(database) as (_, two):
        sign_in(one, "ana")
        ana = one.cookies.get(COOKIE)
        sign_in(other := TestClient(one.app), "gone")
        gone = other.cookies.get(COOKIE)
        for cookie in (ana, gone):
            assert _with_cookie(two, cookie).get("/analista").status_code == 200
        store = app.state.store
        store.set_password("ana", wf.hash_password("una contraseña nueva de ana"))
        assert store.disable_user("gone")
        for cookie in (ana, gone):
            assert _refused(_with_cookie(two, cookie).get("/analista", follow_redirects=False))
            assert _refused(_with_cookie(one, cookie).get("/analista", follow_redirects=False))
        # nothing was signed out: the fingerprint, not the table, refused them
        with store.engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM signed_out_sessions")).scalar() == 0


def test_sign_outs_are_forgotten_once_the_session_would_have_expired(database):
    clock = Clock()
    with app_instance(database) as (app, c):
        sessions = app.state.workbench_sessions = Sessions(
            idle_seconds=1800, max_seconds=36000, clock=clock)
        store = app.state.store
        sign_in(c, "ana")
        cookie = c.cookies.get(COOKIE)
        sid = sessions._loads(sessions._session, cookie, 10**9)["s"]
        _sign_out(c)

        def rows() -> list[tuple]:
            with store.engine.connect() as conn:
                return [tuple(r) for r in conn.execute(text(
                    "SELECT * FROM signed_out_sessions ORDER BY signed_in_at"))]

        # only the SHA-256 of the session id is stored, never the id
        stored = rows()
        assert [r[0] for r in stored] == [session_sha256(sid)]
        assert sid not in repr(stored)
        # past the session's 10 hours, her copy is refused by the sign-in
        # time it carries, signed; the row is kept another idle time and an
        # hour (the clocks of several machines), another sign-out keeps it
        clock.now += 36000 + 1
        assert _refused(_with_cookie(c, cookie).get("/analista", follow_redirects=False))
        clock.now += 1800 + 3600 - 60
        sign_in(c, "sol")
        _sign_out(c)
        assert len(rows()) == 2
        # past them, ana's row goes with the next sign-out
        clock.now += 120
        sign_in(c, "sam")
        _sign_out(c)
        assert session_sha256(sid) not in [r[0] for r in rows()] and len(rows()) == 2
        assert _refused(_with_cookie(c, cookie).get("/analista", follow_redirects=False))


@pytest.mark.parametrize("kind", KINDS)
def test_a_session_signed_out_twice_at_once_is_one_row_and_no_error(kind, tmp_path):
    with database_for_tests(kind, tmp_path) as url:
        store = Store(url)
        try:
            store.upgrade()
            at = datetime(2026, 12, 5, 14, 0, tzinfo=UTC)
            for _ in range(2):
                record_sign_out(store.engine, "one session id", signed_in=at,
                                signed_out=at + timedelta(minutes=5),
                                forget_before=at - timedelta(hours=10))
            assert is_signed_out(store.engine, "one session id")
            assert not is_signed_out(store.engine, "another session id")
            with store.engine.connect() as conn:
                assert conn.execute(text("SELECT count(*) FROM signed_out_sessions")
                                    ).scalar() == 1
        finally:
            store.dispose()


QUIET = {
    "sqlite": ("CREATE TRIGGER signed_out_sessions_quiet BEFORE INSERT ON signed_out_sessions "
               "BEGIN SELECT RAISE(IGNORE); END",),
    "postgresql": ("CREATE FUNCTION quiet() RETURNS trigger AS $$ BEGIN RETURN NULL; END $$ "
                   "LANGUAGE plpgsql",
                   "CREATE TRIGGER signed_out_sessions_quiet BEFORE INSERT ON "
                   "signed_out_sessions FOR EACH ROW EXECUTE FUNCTION quiet()"),
}


@pytest.mark.parametrize("kind", KINDS)
def test_a_trigger_that_drops_sign_outs_is_reported_by_audit_verify(kind, tmp_path):
    """Whoever owns the tables could make every sign-out vanish (the cookie
    good again): `audit verify` names the trigger."""
    with database_for_tests(kind, tmp_path) as url:
        store = Store(url)
        try:
            store.upgrade()
            with store.engine.begin() as conn:
                for statement in QUIET[kind]:
                    conn.execute(text(statement))
            at = datetime(2026, 12, 5, 14, 0, tzinfo=UTC)
            record_sign_out(store.engine, "sid", signed_in=at, signed_out=at,
                            forget_before=at - timedelta(hours=10))
            assert not is_signed_out(store.engine, "sid")  # what the trigger does
            assert store.verify().unexpected_triggers == [
                "signed_out_sessions_quiet on signed_out_sessions"]
            r = CliRunner().invoke(main, ["audit", "verify", "--database-url", url],
                                   catch_exceptions=False)
            assert r.exit_code == 1
            assert ("trigger NOT CREATED by the migrations: signed_out_sessions_quiet on "
                    "signed_out_sessions") in r.output
        finally:
            store.dispose()


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_a_signed_out_cookie_is_refused_by_a_new_server_process(kind, tmp_path):
    """`diferida serve` itself, stopped and started again (a new process,
    the same key and database), with two workers the second time."""
    env = {"DIFERIDA_SESSION_SECRET": SECRET, "DIFERIDA_RATE_LIMIT_AUTH_FAILURES": "off",
           "DIFERIDA_RATE_LIMIT_PUBLIC": "off"}
    with database_for_tests(kind, tmp_path) as url:
        store = Store(url)
        store.upgrade()
        add_users(store)
        store.dispose()
        with running_server(url, env=env) as base, httpx.Client(base_url=base) as c:
            sign_in(c, "ana")
            cookie, token = _stolen(c)
            _sign_out(c)
        with running_server(url, env=env, workers=2) as base, \
                httpx.Client(base_url=base) as c:
            for _ in range(4):  # whichever worker answers
                with _with_cookie(c, cookie) as attacker:
                    assert _refused(attacker.get("/analista"))
                with _with_cookie(c, cookie) as attacker:
                    assert _refused(_open_case(attacker, token, "W-ROBADO"))
        assert _cases(url) == 0
