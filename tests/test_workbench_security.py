"""The workbench's pages (/analista) and who may use them: sign-in and its
session cookie (HttpOnly, SameSite, Secure behind HTTPS, expiry, a new id at
each sign-in), CSRF on every form, failed sign-ins limited, sign-out, and a
role matrix over every route of the workbench (anonymous, each role, a
disabled user). Through the real application (TestClient) on a real SQLite
store; the browser walk is in test_workbench_browser.py."""

from __future__ import annotations

import re
from http.cookies import SimpleCookie

import pytest
from fastapi.testclient import TestClient

from diferida.server import create_app
from diferida.service.settings import Settings
from diferida.web.workbench.routes import router
from diferida.web.workbench.session import COOKIE, PRE_COOKIE, Sessions

from .workbench_helpers import APPLICATION, PASSWORDS, add_users, csrf_of, sign_in


class Clock:
    def __init__(self, start: float = 2_000_000_000.0):
        self.now = start

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def app(tmp_path):
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'wb.db'}",
                        rate_limit_auth_failures="5/minute", rate_limit_public="off")
    app = create_app(settings)
    with TestClient(app) as client:
        add_users(app.state.store)
        app.state.clock = Clock()
        app.state.workbench_sessions = Sessions("a test key", idle_seconds=1800,
                                                max_seconds=36000, clock=app.state.clock)
        yield app, client


def _cookie(response, name=COOKIE) -> dict[str, str] | None:
    for header in response.headers.get_list("set-cookie"):
        jar = SimpleCookie()
        jar.load(header)
        if name in jar:
            morsel = jar[name]
            flags = header.lower()
            return {"value": morsel.value, "httponly": "httponly" in flags,
                    "samesite": morsel["samesite"].lower(), "secure": "secure" in flags,
                    "path": morsel["path"], "max-age": morsel["max-age"]}
    return None


def test_sign_in_gives_an_httponly_strict_cookie_and_a_wrong_password_does_not(app):
    _, c = app
    page = c.get("/analista/entrar")
    assert page.status_code == 200 and 'type="password"' in page.text
    token = csrf_of(page.text)
    bad = c.post("/analista/entrar", data={"name": "ana", "password": "not it",
                                           "csrf_token": token}, follow_redirects=False)
    assert bad.status_code == 401 and _cookie(bad) is None
    assert "no son correctos" in bad.text
    good = c.post("/analista/entrar", data={"name": "ana", "password": PASSWORDS["ana"],
                                            "csrf_token": csrf_of(bad.text)},
                  follow_redirects=False)
    assert good.status_code == 303 and good.headers["location"] == "/analista"
    cookie = _cookie(good)
    assert cookie["httponly"] and cookie["samesite"] == "strict"
    assert cookie["path"] == "/analista" and not cookie["secure"]  # plain HTTP here
    # the browser keeps it for the session's whole length (10 h here); the
    # server refuses it after 30 minutes without a request (the idle test below)
    assert int(cookie["max-age"]) == 36000
    queue = c.get("/analista")
    assert queue.status_code == 200 and "ana" in queue.text


def test_the_cookie_is_secure_over_https_and_behind_a_trusted_proxy(tmp_path):
    app = create_app(Settings(database_url=f"sqlite:///{tmp_path / 'wb.db'}"))
    with TestClient(app, base_url="https://testserver") as c:
        add_users(app.state.store)
        r = sign_in(c, "ana")
        assert _cookie(r)["secure"]
    # behind a reverse proxy that speaks HTTPS to the browser: the cookies
    # (here the sign-in page's) are Secure when the trusted proxy says so
    proxied = create_app(Settings(database_url=f"sqlite:///{tmp_path / 'wb2.db'}",
                                  trusted_proxies="10.0.0.0/8"))
    with TestClient(proxied, client=("10.1.2.3", 5000)) as c:
        r = c.get("/analista/entrar", headers={"X-Forwarded-Proto": "https"})
        assert _cookie(r, PRE_COOKIE)["secure"]
        assert not _cookie(c.get("/analista/entrar"), PRE_COOKIE)["secure"]
    plain = create_app(Settings(database_url=f"sqlite:///{tmp_path / 'wb3.db'}"))
    with TestClient(plain) as c:
        # no trusted proxy: a client's own header is not believed
        r = c.get("/analista/entrar", headers={"X-Forwarded-Proto": "https"})
        assert not _cookie(r, PRE_COOKIE)["secure"]


def test_a_session_id_brought_before_sign_in_is_never_the_one_after(app):
    application, c = app
    first = sign_in(c, "ana")
    old = _cookie(first)["value"]
    assert c.get("/analista").status_code == 200
    # signing in again (as another user, on the same browser) makes a new session
    second = sign_in(c, "sol")
    new = _cookie(second)["value"]
    assert new != old
    sessions = application.state.workbench_sessions
    assert sessions._loads(sessions._session, old, 10**9)["s"] != \
        sessions._loads(sessions._session, new, 10**9)["s"]
    # a cookie made up by an attacker is not a session at all
    c.cookies.clear()
    c.cookies.set(COOKIE, "attacker-chosen-value", path="/analista")
    r = c.get("/analista", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith("/analista/entrar")
    signed = sign_in(c, "ana")
    assert _cookie(signed)["value"] not in ("attacker-chosen-value", old, new)


def test_the_session_expires_when_idle_and_after_its_length(app):
    application, c = app
    clock = application.state.clock
    sign_in(c, "ana")
    clock.now += 1700
    assert c.get("/analista").status_code == 200  # renewed by this request
    clock.now += 1700
    assert c.get("/analista").status_code == 200
    clock.now += 1801
    r = c.get("/analista", follow_redirects=False)
    assert r.status_code == 303 and "aviso=expired" in r.headers["location"]
    # active all along, the session still ends after its whole length
    sign_in(c, "ana")
    start = clock.now
    for _ in range(30):
        clock.now += 1790
        r = c.get("/analista", follow_redirects=False)
        if r.status_code != 200:
            break
    assert r.status_code == 303 and r.headers["location"].startswith("/analista/entrar")
    assert 36000 < clock.now - start <= 36000 + 1790


def test_sign_out_ends_the_session_even_for_a_copy_of_its_cookie(app):
    _, c = app
    sign_in(c, "ana")
    copy = c.cookies.get(COOKIE)
    page = c.get("/analista")
    r = c.post("/analista/salir", data={"csrf_token": csrf_of(page.text)},
               follow_redirects=False)
    assert r.status_code == 303 and "aviso=signed_out" in r.headers["location"]
    c.cookies.set(COOKIE, copy, path="/analista")
    assert c.get("/analista", follow_redirects=False).status_code == 303


def test_every_form_needs_its_token_and_a_token_of_another_session_is_refused(app):
    application, c = app
    sign_in(c, "ana")
    page = c.get("/analista/nuevo")
    token = csrf_of(page.text)
    # no token, a made-up token, another session's token
    other = TestClient(application)
    sign_in(other, "sol")
    foreign = csrf_of(other.get("/analista").text)
    for bad in (None, "made-up", foreign):
        data = {**APPLICATION, "action": "save"}
        if bad is not None:
            data["csrf_token"] = bad
        r = c.post("/analista/nuevo", data=data, follow_redirects=False)
        assert r.status_code == 403, bad
        assert "caducó" in r.text
    # the same form with its own token is taken
    r = c.post("/analista/nuevo", data={**APPLICATION, "action": "save", "csrf_token": token},
               follow_redirects=False)
    assert r.status_code == 303 and re.match(r"^/analista/casos/\d+\?hecho=created$",
                                             r.headers["location"])
    # the sign-in form too: a post without the sign-in page's token is refused
    fresh = TestClient(application)
    r = fresh.post("/analista/entrar", data={"name": "ana", "password": PASSWORDS["ana"]},
                   follow_redirects=False)
    assert r.status_code == 403 and _cookie(r) is None


def test_failed_sign_ins_are_limited_then_even_the_right_password_waits(app):
    _, c = app
    for _ in range(5):
        page = c.get("/analista/entrar")
        r = c.post("/analista/entrar", data={"name": "ana", "password": "wrong",
                                             "csrf_token": csrf_of(page.text)})
        assert r.status_code == 401
    page = c.get("/analista/entrar")
    r = c.post("/analista/entrar", data={"name": "ana", "password": PASSWORDS["ana"],
                                         "csrf_token": csrf_of(page.text)},
               follow_redirects=False)
    assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1
    assert _cookie(r) is None


def test_a_disabled_user_is_signed_out_at_their_next_request(app):
    application, c = app
    sign_in(c, "ana")
    assert c.get("/analista").status_code == 200
    assert application.state.store.disable_user("ana")
    r = c.get("/analista", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith("/analista/entrar")
    page = c.get("/analista/entrar")
    r = c.post("/analista/entrar", data={"name": "ana", "password": PASSWORDS["ana"],
                                         "csrf_token": csrf_of(page.text)})
    assert r.status_code == 401


# --- the role matrix ----------------------------------------------------------------------

# every route of the workbench, as (method, path) with {case} for a case id;
# the matrix below must name each one
ROUTES = {
    ("GET", "/analista/entrar"), ("POST", "/analista/entrar"), ("POST", "/analista/salir"),
    ("GET", "/analista"), ("POST", "/analista/buscar"), ("GET", "/analista/nuevo"),
    ("POST", "/analista/nuevo"), ("POST", "/analista/importar"),
    ("GET", "/analista/casos/{case_id}"), ("POST", "/analista/casos/{case_id}/enviar"),
    ("GET", "/analista/casos/{case_id}/aprobar"),
    ("POST", "/analista/casos/{case_id}/aprobar"), ("POST", "/analista/casos/{case_id}/devolver"),
    ("GET", "/analista/casos/{case_id}/corregir"), ("POST", "/analista/casos/{case_id}/corregir"),
    ("GET", "/analista/casos/{case_id}/carta"), ("GET", "/analista/casos/{case_id}/carta.pdf"),
    ("GET", "/analista/auditoria"), ("POST", "/analista/auditoria"),
    ("GET", "/analista/auditoria/exportar"), ("GET", "/analista/auditoria/exportar/{name}"),
    ("POST", "/analista/sesion"), ("GET", "/analista/sesion"),
    # addresses only posted to, asked for by GET: to the page for them
    ("GET", "/analista/casos/{case_id}/enviar"), ("GET", "/analista/casos/{case_id}/devolver"),
    ("GET", "/analista/buscar"), ("GET", "/analista/importar"), ("GET", "/analista/salir"),
}


def test_the_matrix_names_every_route_of_the_workbench():
    declared = {(m, r.path) for r in router.routes for m in r.methods if m != "HEAD"}
    assert declared == ROUTES


def _request(c: TestClient, method: str, path: str, token: str):
    if method == "GET":
        return c.get(path, follow_redirects=False)
    if path.endswith("/importar"):
        return c.post(path, data={"csrf_token": token},
                      files={"archivo": ("a.csv", _csv().encode())}, follow_redirects=False)
    data = {**APPLICATION, "csrf_token": token, "action": "preview", "reason": "a reason",
            "caso": "1", "participante": ""}
    return c.post(path, data=data, follow_redirects=False)


def _csv() -> str:
    head = ",".join(APPLICATION)
    row = {**APPLICATION, "participant_id": "W-0009"}
    return head + "\n" + ",".join(f'"{v}"' for v in row.values()) + "\n"


# what each kind of user gets: "page" (2xx/3xx to a workbench page), "signin"
# (303 to the sign-in page), "refused" (403 on a page saying so)
READ_ONLY = {("GET", "/analista"), ("POST", "/analista/buscar"),
             ("GET", "/analista/casos/{case_id}"), ("GET", "/analista/casos/{case_id}/carta"),
             ("GET", "/analista/casos/{case_id}/carta.pdf"), ("POST", "/analista/salir")}
PREPARE = {("GET", "/analista/nuevo"), ("POST", "/analista/nuevo"),
           ("POST", "/analista/importar"), ("GET", "/analista/casos/{case_id}/corregir"),
           ("POST", "/analista/casos/{case_id}/corregir")}
AUDIT = {("GET", "/analista/auditoria"), ("POST", "/analista/auditoria")}
EXPORT = {("GET", "/analista/auditoria/exportar"),
          ("GET", "/analista/auditoria/exportar/{name}")}
POSTED_ONLY = {("GET", "/analista/casos/{case_id}/enviar"),
               ("GET", "/analista/casos/{case_id}/devolver"), ("GET", "/analista/buscar"),
               ("GET", "/analista/importar"), ("GET", "/analista/salir")}


def _expected(who: str, route: tuple[str, str]) -> set[int]:
    if route == ("GET", "/analista/entrar"):
        return {200}
    if route == ("POST", "/analista/entrar"):
        return {403}  # posted without the sign-in page's own token
    if route[1] == "/analista/sesion":  # the warning's questions and "keep working" (JSON)
        return {401} if who in ("anonymous", "disabled") else {200}
    if route in POSTED_ONLY:
        return {303}  # to the page for it (or to the sign-in page first)
    if who in ("anonymous", "disabled"):
        return {303}  # to the sign-in page
    if route in READ_ONLY:
        return {200, 303}
    if route in PREPARE:
        return {403} if who == "auditor" else {200, 303}
    if route in AUDIT:
        return {200} if who == "auditor" else {403}
    if route in EXPORT:
        return {403} if who == "analyst" else {200}
    # submit, approve, return: the workflow decides by role and state
    if who == "auditor":
        return {403}
    return {200, 303, 403, 409}


@pytest.mark.slow  # every route for every role: make test, not the loop
@pytest.mark.parametrize("who", ["anonymous", "ana", "sol", "aud", "gone"])
def test_role_matrix_over_every_route(app, who):
    application, c = app
    role = {"anonymous": "anonymous", "ana": "analyst", "sol": "supervisor",
            "aud": "auditor", "gone": "disabled"}[who]
    # a case to act on, opened by another analyst
    owner = TestClient(application)
    sign_in(owner, "ana2")
    page = owner.get("/analista/nuevo")
    made = owner.post("/analista/nuevo", data={**APPLICATION, "action": "save",
                                              "csrf_token": csrf_of(page.text)},
                      follow_redirects=False)
    case_id = int(made.headers["location"].split("/")[3].split("?")[0])
    token = ""
    if who != "anonymous":
        sign_in(c, who)
        token = csrf_of(c.get("/analista").text)
        if who == "gone":
            application.state.store.disable_user("gone")
    for method, template in sorted(ROUTES):
        if template == "/analista/salir":
            continue  # last: it ends the session
        path = template.replace("{case_id}", str(case_id)).replace("{name}", "cases.csv")
        r = _request(c, method, path, token)
        assert r.status_code < 500, (method, path, r.status_code)
        assert r.status_code in _expected(role, (method, template)), \
            (role, method, path, r.status_code)
        if r.status_code == 303 and role in ("anonymous", "disabled"):
            assert r.headers["location"].startswith("/analista/entrar")
        if r.status_code == 403:  # said on the page, in words
            assert 'id="refusal"' in r.text or 'id="signin-error"' in r.text
    r = _request(c, "POST", "/analista/salir", token)
    assert r.status_code == 303 and r.headers["location"].startswith("/analista/entrar")


def test_the_password_cost_is_argon2s_default_unless_a_profile_is_named(monkeypatch):
    """DIFERIDA_PASSWORD_PROFILE picks argon2-cffi's profile (the tests run
    with CHEAPEST); unset, it is RFC 9106's low-memory one; a hash made under
    one profile is verified under another; an unknown name is refused, named."""
    from argon2 import PasswordHasher, profiles

    from diferida.service.workflow import password_hasher

    monkeypatch.delenv("DIFERIDA_PASSWORD_PROFILE", raising=False)
    default = password_hasher()
    assert default.memory_cost == profiles.RFC_9106_LOW_MEMORY.memory_cost == 65536
    assert default.time_cost == PasswordHasher().time_cost
    monkeypatch.setenv("DIFERIDA_PASSWORD_PROFILE", "CHEAPEST")
    cheap = password_hasher()
    assert cheap.memory_cost < default.memory_cost
    assert default.verify(cheap.hash("s3cret-pass"), "s3cret-pass")
    assert default.check_needs_rehash(cheap.hash("s3cret-pass"))
    monkeypatch.setenv("DIFERIDA_PASSWORD_PROFILE", "FAST")
    with pytest.raises(ValueError, match="DIFERIDA_PASSWORD_PROFILE must be one of .*CHEAPEST"):
        password_hasher()
