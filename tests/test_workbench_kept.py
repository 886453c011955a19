"""Nothing typed is lost, over HTTP (the browser's side is in
test_workbench_kept_browser.py).

The attacks of the finding, each as a test: an analyst's session ends while
she types an application; she presses "Guardar borrador". The post used to
be answered by a redirect to the sign-in page, which said nothing, and after
signing in she landed on the queue: the application was gone. Now the post
is kept (a signed envelope the sign-in form carries), the sign-in page says
why, and signing in brings back the same form with every value — to her
only, once, and for a limited time. The header's language switch used to be
a link that threw the typed form away, and on a page reached by a post
(`…/aprobar`, `…/enviar`) it pointed at the post's own address, answered
with a raw JSON "method not allowed". And the warning before the session
ends needs a way to keep it going (POST /analista/sesion).

Through the real application (TestClient) on SQLite and PostgreSQL."""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser

import pytest
from fastapi.testclient import TestClient

from diferida.server import create_app
from diferida.service.settings import Settings
from diferida.service.testing import database_for_tests
from diferida.web import lenient
from diferida.web.workbench.routes import DATE_FIELDS
from diferida.web.workbench.session import COOKIE, Sessions

from .workbench_helpers import APPLICATION, PASSWORDS, add_users, csrf_of, sign_in

KINDS = ["sqlite", "postgresql"]
IDLE = 1800

# an application as the form posts it: its dates in three boxes, an address
# on two lines, accents and quotes, a field the page does not know (kept too)
TYPED = {**{k: v for k, v in APPLICATION.items() if k not in ("birth_date", "application_date")},
         "birth_date-day": "10", "birth_date-month": "mayo", "birth_date-year": "1970",
         "application_date-day": "2", "application_date-month": "11",
         "application_date-year": "2026",
         "name": "Carmen Rivera Ortiz \"la maestra\" <Núñez>",
         "note": "Llamó el 3 de diciembre; trae la certificación & el formulario",
         "some_future_field": "kept as typed"}
# what the form shows of it: a date posted whole ("1988-07-01") in its boxes
SHOWN = dict(TYPED)
lenient.split_whole(SHOWN, DATE_FIELDS)


class Clock:
    def __init__(self, start: float = 2_000_000_000.0):
        self.now = start

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=KINDS)
def wb(request, tmp_path):
    """The application on each database, its sessions on a clock the test moves."""
    with database_for_tests(request.param, tmp_path) as url:
        app = create_app(Settings(database_url=url, rate_limit_auth_failures="off",
                                  rate_limit_public="off"))
        with TestClient(app) as client:
            add_users(app.state.store)
            app.state.clock = Clock()
            app.state.workbench_sessions = Sessions("a test key", idle_seconds=IDLE,
                                                    max_seconds=36000, clock=app.state.clock)
            yield app, client


class _Controls(HTMLParser):
    """The values of a page's form controls, as a browser would post them."""

    def __init__(self, form_id: str):
        super().__init__()
        self.form_id, self.inside, self.values = form_id, False, {}
        self._textarea = self._select = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.inside = a.get("id") == self.form_id
        if not self.inside:
            return
        if tag == "input" and a.get("name") and a.get("type") not in ("submit", "file"):
            self.values[a["name"]] = a.get("value") or ""
        elif tag == "textarea":
            self._textarea = a.get("name")
            self.values[self._textarea] = ""
        elif tag == "select":
            self._select = a.get("name")
        elif tag == "option" and self._select and "selected" in a:
            self.values[self._select] = a.get("value") or ""

    def handle_data(self, data):
        if self._textarea:
            self.values[self._textarea] += data

    def handle_endtag(self, tag):
        if tag == "textarea":
            self._textarea = None
        elif tag == "select":
            self._select = None
        elif tag == "form":
            self.inside = False


def controls(html: str, form_id: str = "application-form") -> dict[str, str]:
    parser = _Controls(form_id)
    parser.feed(html)
    return parser.values


def _envelope(html: str) -> str:
    found = re.search(r'name="conservado" value="([^"]+)"', html)
    assert found, "the sign-in page carries no kept form"
    return found.group(1)


def _sign_in_with(c, name: str, page_html: str, envelope: str, **extra):
    return c.post("/analista/entrar", data={
        "name": name, "password": PASSWORDS[name], "csrf_token": csrf_of(page_html),
        "lang": "es", "conservado": envelope, **extra}, follow_redirects=False)


def _typed_then_expired(app, c, path: str = "/analista/nuevo", action: str = "save",
                        **more):
    """Ana opens the form, types, goes away past the idle time, presses Save."""
    sign_in(c, "ana")
    token = csrf_of(c.get(path).text)
    app.state.clock.now += IDLE + 60
    return c.post(path, data={**TYPED, **more, "csrf_token": token, "lang": "es",
                              "action": action}, follow_redirects=False)


def _saved_by_ana(c) -> str:
    """Ana signs in and saves the application on its page: the new case's id."""
    sign_in(c, "ana")
    token = csrf_of(c.get("/analista/nuevo").text)
    made = c.post("/analista/nuevo", data={**APPLICATION, "action": "save",
                                           "csrf_token": token}, follow_redirects=False)
    assert made.status_code == 303, made.text[:300]
    return made.headers["location"].split("/")[3].split("?")[0]


def _cases(app) -> int:
    return app.state.store.count_cases()


def test_a_save_after_the_session_ended_is_kept_and_given_back_whole(wb):
    app, c = wb
    r = _typed_then_expired(app, c)
    # not saved, not lost: the sign-in page says why, and carries the form
    assert r.status_code == 200 and _cases(app) == 0
    notice = re.search(r'id="notice"[^>]*>([^<]*)<', r.text).group(1)
    assert "terminó por inactividad; lo escrito se conservó" in notice
    assert 'id="signin-form"' in r.text and 'type="password"' in r.text
    envelope = _envelope(r.text)
    # nothing typed is in the address or in a cookie; the envelope is signed
    assert all("Carmen" not in v for v in r.headers.get_list("set-cookie"))
    # the same user signs in: the same form, every value as typed
    back = _sign_in_with(c, "ana", r.text, envelope)
    assert back.status_code == 200, back.text[:300]
    assert 'id="restored"' in back.text and 'id="list-title"' not in back.text
    got = controls(back.text)
    for name, value in SHOWN.items():
        if name == "some_future_field":
            continue  # not a field of this form: kept, but no box shows it
        assert got.get(name) == value, (name, got.get(name), value)
    # a new session, and the form saves from there
    assert c.cookies.get(COOKIE)
    saved = c.post("/analista/nuevo", data={**got, "action": "save"}, follow_redirects=False)
    assert saved.status_code == 303 and "hecho=created" in saved.headers["location"]
    assert _cases(app) == 1


def test_a_kept_correction_comes_back_on_its_case_with_its_reason(wb):
    app, c = wb
    case = _saved_by_ana(c)
    path = f"/analista/casos/{case}/corregir"
    token = csrf_of(c.get(path).text)
    app.state.clock.now += IDLE + 1
    r = c.post(path, data={**APPLICATION, "average_compensation": "31.500,00",
                           "reason": "Certificación nueva de la retribución",
                           "csrf_token": token, "action": "save"}, follow_redirects=False)
    assert r.status_code == 200 and "conservado" in r.text
    back = _sign_in_with(c, "ana", r.text, _envelope(r.text))
    assert back.status_code == 200 and 'id="restored"' in back.text
    got = controls(back.text)
    assert got["average_compensation"] == "31.500,00"
    assert got["reason"] == "Certificación nueva de la retribución"
    assert f'action="{path}"' in back.text


def test_another_user_signing_in_never_gets_it(wb):
    app, c = wb
    r = _typed_then_expired(app, c)
    envelope = _envelope(r.text)
    # sol signs in at the same browser, with ana's kept form in the page
    other = _sign_in_with(c, "sol", r.text, envelope)
    assert other.status_code == 303 and other.headers["location"] == "/analista"
    queue = c.get("/analista")
    assert "Carmen" not in queue.text and "la maestra" not in queue.text
    # left for ana: she still gets it
    c.cookies.clear()
    page = c.get("/analista/entrar")
    back = _sign_in_with(c, "ana", page.text, envelope)
    assert back.status_code == 200 and controls(back.text)["birth_date-month"] == "mayo"


def test_the_kept_form_is_given_back_once(wb):
    app, c = wb
    r = _typed_then_expired(app, c)
    envelope = _envelope(r.text)
    assert _sign_in_with(c, "ana", r.text, envelope).status_code == 200
    # the same envelope again (Back and resubmit, or a copy): the queue, no form
    c.cookies.clear()
    page = c.get("/analista/entrar")
    again = _sign_in_with(c, "ana", page.text, envelope)
    assert again.status_code == 303 and again.headers["location"] == "/analista"


def test_a_kept_form_expires(wb):
    app, c = wb
    r = _typed_then_expired(app, c)
    envelope = _envelope(r.text)
    app.state.clock.now += IDLE + 1  # longer than a kept form waits
    late = _sign_in_with(c, "ana", r.text, envelope)
    assert late.status_code == 303 and late.headers["location"] == "/analista"


def test_a_forged_or_altered_envelope_gives_nothing_back(wb):
    app, c = wb
    r = _typed_then_expired(app, c)
    envelope = _envelope(r.text)
    forged = Sessions("another key", idle_seconds=IDLE, clock=app.state.clock)
    made = forged._signed(forged._kept, {"u": 1, "p": "/analista/nuevo",
                                         "v": {"name": "x"}, "n": "n"})
    for bad in (made, envelope[:-2] + ("AA" if envelope[-2:] != "AA" else "BB"), "x" * 5000):
        page = c.get("/analista/entrar")
        got = _sign_in_with(c, "ana", page.text, bad)
        assert got.status_code == 303 and got.headers["location"] == "/analista", bad[:40]


def test_only_a_form_of_the_sessions_own_page_is_kept(wb):
    """A post without the session's CSRF token (another site's page, which
    the SameSite cookie does not even reach), or from a session signed out
    or of a user disabled since, is refused as before: nothing kept."""
    app, c = wb
    sign_in(c, "ana")
    token = csrf_of(c.get("/analista/nuevo").text)
    app.state.clock.now += IDLE + 1
    for data in ({**TYPED, "action": "save"}, {**TYPED, "action": "save", "csrf_token": "x"}):
        r = c.post("/analista/nuevo", data=data, follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"].startswith("/analista/entrar")
    # signed out: the session ended for good
    c2 = TestClient(app)
    sign_in(c2, "ana")
    token = csrf_of(c2.get("/analista/nuevo").text)
    cookie = c2.cookies.get(COOKIE)
    c2.post("/analista/salir", data={"csrf_token": token})
    c2.cookies.set(COOKIE, cookie, path="/analista")
    app.state.clock.now += IDLE + 1
    r = c2.post("/analista/nuevo", data={**TYPED, "csrf_token": token, "action": "save"},
                follow_redirects=False)
    assert r.status_code == 303 and "conservado" not in r.text
    # disabled since
    c3 = TestClient(app)
    sign_in(c3, "gone")
    token = csrf_of(c3.get("/analista/nuevo").text)
    app.state.store.disable_user("gone")
    app.state.clock.now += IDLE + 1
    r = c3.post("/analista/nuevo", data={**TYPED, "csrf_token": token, "action": "save"},
                follow_redirects=False)
    assert r.status_code == 303 and "conservado" not in r.text
    assert _cases(app) == 0


def test_a_session_past_its_length_says_so_and_keeps_the_form(wb):
    app, c = wb
    sign_in(c, "ana")
    for _ in range(20):  # active all day: renewed by each page
        app.state.clock.now += 1790
        token = csrf_of(c.get("/analista/nuevo").text)
    app.state.clock.now += 1790  # past the 10 hours
    r = c.post("/analista/nuevo", data={**TYPED, "csrf_token": token, "action": "preview"},
               follow_redirects=False)
    assert r.status_code == 200
    assert "duración máxima" in r.text and _envelope(r.text)


def test_the_sign_in_pages_language_switch_keeps_the_kept_form(wb):
    app, c = wb
    r = _typed_then_expired(app, c)
    envelope = _envelope(r.text)
    assert re.search(r'<button[^>]*form="signin-form"[^>]*name="idioma"[^>]*value="en"', r.text)
    en = c.post("/analista/entrar", data={"idioma": "en", "lang": "es", "conservado": envelope,
                                          "aviso": "kept_idle", "name": "ana"})
    assert en.status_code == 200 and '<html lang="en">' in en.text
    assert "what you typed was kept" in en.text and _envelope(en.text) == envelope
    back = c.post("/analista/entrar", data={
        "name": "ana", "password": PASSWORDS["ana"], "csrf_token": csrf_of(en.text),
        "lang": "en", "conservado": envelope}, follow_redirects=False)
    assert back.status_code == 200 and '<html lang="en">' in back.text
    assert controls(back.text)["note"] == TYPED["note"]


# --- the language switch --------------------------------------------------------------------

def test_the_language_switch_posts_the_form_and_keeps_every_value(wb):
    app, c = wb
    sign_in(c, "ana")
    page = c.get("/analista/nuevo")
    # the switch is a button of the application form, not a link
    assert re.search(r'<button[^>]*form="application-form"[^>]*name="idioma"[^>]*value="en"',
                     page.text)
    assert 'id="application-form"' in page.text
    r = c.post("/analista/nuevo", data={**TYPED, "csrf_token": csrf_of(page.text),
                                        "lang": "es", "idioma": "en"})
    assert r.status_code == 200 and '<html lang="en">' in r.text
    got = controls(r.text)
    for name, value in SHOWN.items():
        if name != "some_future_field":
            assert got.get(name) == value, name
    assert 'id="error-summary"' not in r.text and _cases(app) == 0
    # and back to Spanish, from the English page
    es = c.post("/analista/nuevo", data={**got, "idioma": "es"})
    assert '<html lang="es">' in es.text and controls(es.text)["name"] == TYPED["name"]


def _lang_link(html: str) -> str:
    found = re.search(r'<a href="([^"]+)" id="lang-switch"', html)
    assert found, "the page's language switch is not a link"
    return found.group(1).replace("&amp;", "&")


def test_every_page_reached_by_a_post_has_a_language_link_that_works(wb):
    app, c = wb
    case = _saved_by_ana(c)
    token = csrf_of(c.get("/analista/nuevo").text)
    aud = TestClient(app)
    sign_in(aud, "aud")
    aud_token = csrf_of(aud.get("/analista").text)
    # refusals reached by a post, and the search results
    answers = [
        aud.post(f"/analista/casos/{case}/aprobar", data={"csrf_token": aud_token,
                                                         "confirmado": "1"}),
        aud.post(f"/analista/casos/{case}/enviar", data={"csrf_token": aud_token}),
        aud.post(f"/analista/casos/{case}/devolver", data={"csrf_token": aud_token}),
        c.post("/analista/importar", data={"csrf_token": token}),
    ]
    for answer, client in zip(answers, (aud, aud, aud, c), strict=True):
        assert answer.request.method == "POST" and answer.status_code < 500
        link = _lang_link(answer.text)
        assert "lang=en" in link
        other = client.get(link)
        assert other.status_code == 200, (answer.request.url, link, other.text[:200])
        assert '<html lang="en">' in other.text and "method_not_allowed" not in other.text
    # the search results: the switch posts the search again, which finds the same
    found = aud.post("/analista/buscar", data={"csrf_token": aud_token, "caso": case,
                                               "lang": "es"})
    assert re.search(r'<button[^>]*form="search-form"[^>]*name="idioma"[^>]*value="en"',
                     found.text)
    again = aud.post("/analista/buscar", data={**controls(found.text, "search-form"),
                                               "idioma": "en"})
    assert again.status_code == 200 and '<html lang="en">' in again.text
    assert 'id="results-title"' in again.text and "W-0001" in again.text


# --- the warning's "keep working" -----------------------------------------------------------

def test_keep_working_renews_the_session(wb):
    app, c = wb
    clock = app.state.clock
    sign_in(c, "ana")
    page = c.get("/analista/nuevo")
    # the page tells its script how long the session lasts and when to warn
    assert 'data-session-left="1800"' in page.text and 'data-session-warn="120"' in page.text
    assert 'role="alertdialog"' in page.text
    token = csrf_of(page.text)
    clock.now += IDLE - 60  # the warning is up
    r = c.post("/analista/sesion", data={"csrf_token": token})
    assert r.status_code == 200 and r.json() == {"seconds": IDLE, "extendable": True}
    clock.now += IDLE - 60  # without the renewal it would have ended by now
    assert c.get("/analista/nuevo").status_code == 200
    # no token, no renewal
    assert c.post("/analista/sesion", data={}).status_code == 403
    # too late: said, never a redirect the script would follow
    clock.now += IDLE + 1
    late = c.post("/analista/sesion", data={"csrf_token": token}, follow_redirects=False)
    assert late.status_code == 401 and late.json() == {"ended": True}


def test_near_its_length_the_session_cannot_be_extended_and_the_page_says_so(wb):
    app, c = wb
    sign_in(c, "ana")
    for _ in range(20):
        app.state.clock.now += 1750
        page = c.get("/analista/nuevo")
    left = 36000 - 20 * 1750
    assert f'data-session-left="{left}"' in page.text
    assert 'data-session-extendable="no"' in page.text
    r = c.post("/analista/sesion", data={"csrf_token": csrf_of(page.text)})
    assert r.json() == {"seconds": left, "extendable": False}


def test_a_form_given_back_is_spent_for_every_process_of_the_service(wb):
    """The kept form's random id, once given back, is refused by every
    process using the same database (it is recorded with the sign-outs)."""
    app, c = wb
    r = _typed_then_expired(app, c)
    envelope = _envelope(r.text)
    assert _sign_in_with(c, "ana", r.text, envelope).status_code == 200
    url = str(app.state.store.engine.url.render_as_string(hide_password=False))
    second = create_app(Settings(database_url=url, rate_limit_auth_failures="off",
                                 rate_limit_public="off"))
    with TestClient(second) as c2:
        second.state.workbench_sessions = Sessions("a test key", idle_seconds=IDLE,
                                                   max_seconds=36000, clock=app.state.clock)
        page = c2.get("/analista/entrar")
        again = _sign_in_with(c2, "ana", page.text, envelope)
        assert again.status_code == 303 and again.headers["location"] == "/analista"


# --- a page asked for after the end -----------------------------------------------------------

def test_a_page_asked_for_after_the_end_says_why_and_the_sign_in_leads_back_to_it(wb):
    app, c = wb
    sign_in(c, "ana")
    assert c.get("/analista?lista=returned").status_code == 200
    app.state.clock.now += IDLE + 1
    r = c.get("/analista?lista=returned", follow_redirects=False)
    assert r.status_code == 303
    location = r.headers["location"]
    assert "aviso=expired_idle" in location and "volver=%2Fanalista%3Flista%3Dreturned" in location
    page = c.get(location)
    assert "Su sesión terminó por inactividad" in page.text
    assert 'name="volver" value="/analista?lista=returned"' in page.text
    # its language link keeps why and where
    en = c.get(_lang_link(page.text))
    assert "after a time without activity" in en.text and 'name="volver"' in en.text
    back = c.post("/analista/entrar", data={
        "name": "ana", "password": PASSWORDS["ana"], "csrf_token": csrf_of(en.text),
        "lang": "en", "volver": "/analista?lista=returned"}, follow_redirects=False)
    assert back.status_code == 303
    assert back.headers["location"] == "/analista?lista=returned&lang=en"


def test_the_sign_in_leads_back_only_to_a_workbench_page(wb):
    app, c = wb
    for evil in ("//evil.example/analista", "https://evil.example/", "/analista/../admin",
                 "/analista\\@evil.example", "/analista?lista=x&next=//evil.example",
                 "/analista/entrar", "/analista/salir", "javascript:alert(1)", "/analistaX"):
        page = c.get("/analista/entrar", params={"volver": evil})
        assert 'name="volver"' not in page.text, evil
        r = c.post("/analista/entrar", data={
            "name": "ana", "password": PASSWORDS["ana"], "csrf_token": csrf_of(page.text),
            "volver": evil}, follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == "/analista", evil


def test_a_session_past_its_length_or_signed_out_is_said_as_such(wb):
    app, c = wb
    sign_in(c, "ana")
    for _ in range(21):  # active all day, past the 10 hours
        app.state.clock.now += 1790
        r = c.get("/analista", follow_redirects=False)
    assert r.status_code == 303 and "aviso=expired_length" in r.headers["location"]
    assert "duración máxima" in c.get(r.headers["location"]).text
    # a copy of a cookie signed out: not "por inactividad"
    c2 = TestClient(app)
    sign_in(c2, "ana")
    cookie = c2.cookies.get(COOKIE)
    c2.post("/analista/salir", data={"csrf_token": csrf_of(c2.get("/analista").text)})
    c2.cookies.set(COOKIE, cookie, path="/analista")
    r = c2.get("/analista", follow_redirects=False)
    assert "aviso=expired&" in r.headers["location"] or r.headers["location"].endswith(
        "aviso=expired")


def test_an_action_posted_after_the_end_leads_back_to_its_case_not_to_the_action(wb):
    app, c = wb
    case = _saved_by_ana(c)
    token = csrf_of(c.get(f"/analista/casos/{case}").text)
    app.state.clock.now += IDLE + 1
    r = c.post(f"/analista/casos/{case}/enviar", data={"csrf_token": token},
               follow_redirects=False)
    assert r.status_code == 303 and "aviso=expired_idle" in r.headers["location"]
    assert f"volver=%2Fanalista%2Fcasos%2F{case}" in r.headers["location"]
    assert "enviar" not in r.headers["location"]


@pytest.mark.parametrize("minutes, left, warn", [("2", 120, 60), ("0.5", 30, 20)])
def test_the_warning_follows_the_configured_lifetime(tmp_path, monkeypatch, minutes, left,
                                                      warn):
    """DIFERIDA_SESSION_IDLE_MINUTES, as an administrator sets it: the page
    tells its script that lifetime, and warns half of it before the end when
    that is under two minutes, never with less than 20 seconds to act."""
    monkeypatch.setenv("DIFERIDA_SESSION_IDLE_MINUTES", minutes)
    app = create_app(Settings(database_url=f"sqlite:///{tmp_path / 'wb.db'}",
                              rate_limit_public="off"))
    with TestClient(app) as c:
        add_users(app.state.store)
        sign_in(c, "ana")
        page = c.get("/analista/nuevo")
        assert f'data-session-left="{left}"' in page.text
        assert f'data-session-warn="{warn}"' in page.text


def test_asking_how_long_is_left_renews_nothing_and_sees_another_tabs_renewal(wb):
    app, c = wb
    clock = app.state.clock
    sign_in(c, "ana")
    c.get("/analista/nuevo")
    clock.now += 200
    r = c.get("/analista/sesion")
    assert r.status_code == 200 and r.json() == {"seconds": IDLE - 200, "extendable": True}
    assert "set-cookie" not in r.headers  # nothing renewed by asking
    clock.now += 100  # another tab loads a page: the session goes on
    c.get("/analista")
    assert c.get("/analista/sesion").json()["seconds"] == IDLE
    clock.now += IDLE + 1
    late = c.get("/analista/sesion")
    assert late.status_code == 401 and late.json() == {"ended": True}


def test_an_address_only_posted_to_asked_for_by_get_leads_to_its_page(wb):
    """The address of a page reached by a post, copied or bookmarked: a GET
    used to be answered with FastAPI's JSON "method not allowed"."""
    app, c = wb
    case = _saved_by_ana(c)
    for path, target in ((f"/analista/casos/{case}/enviar", f"/analista/casos/{case}"),
                         (f"/analista/casos/{case}/devolver", f"/analista/casos/{case}"),
                         ("/analista/buscar", "/analista"),
                         ("/analista/importar", "/analista/nuevo"),
                         ("/analista/salir", "/analista")):
        r = c.get(path + "?lang=en", follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == target + "?lang=en", path
        shown = c.get(r.headers["location"])
        assert shown.status_code == 200 and '<html lang="en">' in shown.text
    # nothing was done: the case is still a draft, and ana still signed in
    assert 'data-state="draft"' in c.get(f"/analista/casos/{case}").text


def test_a_wrong_password_keeps_the_kept_form_on_the_page(wb):
    app, c = wb
    r = _typed_then_expired(app, c)
    envelope = _envelope(r.text)
    wrong = c.post("/analista/entrar", data={
        "name": "ana", "password": "not it", "csrf_token": csrf_of(r.text), "lang": "es",
        "conservado": envelope}, follow_redirects=False)
    assert wrong.status_code == 401 and _envelope(wrong.text) == envelope
    back = _sign_in_with(c, "ana", wrong.text, envelope)
    assert back.status_code == 200 and controls(back.text)["note"] == TYPED["note"]


# --- the text typed for an action: a return's reason, a note of verification -----------------
#
# The finding: a supervisor types why a case goes back, or an analyst or a
# supervisor types the note saying the warnings were checked; the session ends;
# they press "Devolver", "Enviar" or "Aprobar". The post led back to the case
# (never to the action, rightly) but the text typed was gone. Now it is kept
# like the application form and given back on the page the form was on, in
# its box, with a line saying the action was not done; the action is never
# done from the envelope.

# rules §8 example 1, separated in 2020 with the 25 years served to 30 June
# 2013: a warning that asks for a check (Act 3-2013 froze accruals), so
# submission and approval need a note
CHECKED = {**APPLICATION, "participant_id": "W-0002", "separation_date": "2020-06-30",
           "creditable_service_years": "25"}
REASON = 'Falta la certificación de servicios <2013> & la "firma" del patrono\nsegunda línea'
NOTE_ANA = "Certificación del 30/06/2013 revisada: 25 años & <nada> después"
NOTE_SOL = 'Revisé la certificación con la nota de la analista "ana"'
NOT_DONE = ("Su sesión terminó; lo escrito se conservó. No se hizo la acción: revise y vuelva "
            "a enviarla.")


def _box(html: str, box_id: str) -> str | None:
    """What a textarea of the page holds, as the browser shows it."""
    found = re.search(rf'<textarea id="{box_id}"[^>]*>(.*?)</textarea>', html, re.S)
    return unescape(found.group(1)) if found else None


def _state_of(app, case: str) -> str:
    from diferida.service import workflow

    store = app.state.store
    return workflow.view(store, store.sign_in_record("aud")[0], int(case)).state


def _case_of(app, c, application: dict[str, str], *, submit: bool) -> str:
    """Ana opens a case (and submits it, with its note when it asks for one)."""
    sign_in(c, "ana")
    token = csrf_of(c.get("/analista/nuevo").text)
    made = c.post("/analista/nuevo", data={**application, "action": "save",
                                           "csrf_token": token}, follow_redirects=False)
    assert made.status_code == 303, made.text[:300]
    case = made.headers["location"].split("/")[3].split("?")[0]
    if submit:
        page = c.get(f"/analista/casos/{case}").text
        data = {"csrf_token": csrf_of(page)}
        if 'id="f-acknowledgement"' in page:
            data["acknowledgement"] = NOTE_ANA
        r = c.post(f"/analista/casos/{case}/enviar", data=data, follow_redirects=False)
        assert r.status_code == 303, r.text[:300]
    return case


def _expired_post(app, c, name: str, page: str, action: str, data: dict[str, str]):
    """`name` opens `page`, types, goes away past the idle time, presses the button."""
    c.cookies.clear()
    sign_in(c, name)
    token = csrf_of(c.get(page).text)
    app.state.clock.now += IDLE + 60
    return c.post(action, data={**data, "csrf_token": token, "lang": "es"},
                  follow_redirects=False)


def _sign_in_on(c, name: str, page_html: str, envelope: str):
    """Sign in on the page as a browser posts its form (every hidden field)."""
    data = {**controls(page_html, "signin-form"), "conservado": envelope}
    return c.post("/analista/entrar", data={**data, "name": name, "password": PASSWORDS[name]},
                  follow_redirects=False)


def _kept_notice(html: str) -> str:
    found = re.search(r'id="kept"[^>]*>\s*<p>([^<]*)', html)
    assert found, "the page does not say the text was kept"
    return unescape(found.group(1)).strip()


def test_a_return_reason_typed_before_the_end_is_given_back_on_the_case_not_done(wb):
    app, c = wb
    case = _case_of(app, c, APPLICATION, submit=True)
    page = f"/analista/casos/{case}"
    r = _expired_post(app, c, "sol", page, f"{page}/devolver", {"reason": REASON})
    # the sign-in page says why, and that the action was not done
    assert r.status_code == 200 and _state_of(app, case) == "submitted"
    assert "lo escrito se conservó y la acción no se hizo" in unescape(r.text)
    envelope = _envelope(r.text)
    assert all("certificación" not in v for v in r.headers.get_list("set-cookie"))
    back = _sign_in_on(c, "sol", r.text, envelope)
    # the case page, the reason back in its box, the action not done
    assert back.status_code == 200, back.text[:300]
    assert 'id="case-state"' in back.text and 'id="list-title"' not in back.text
    assert _kept_notice(back.text) == NOT_DONE
    assert _box(back.text, "f-return-reason") == REASON
    assert _state_of(app, case) == "submitted"
    # the language link leads to the case itself, not to the sign-in page
    assert _lang_link(back.text) == f"{page}?lang=en"
    # sent again from that page, by the user: now it is done
    again = c.post(f"{page}/devolver", data={"csrf_token": csrf_of(back.text),
                                             "reason": _box(back.text, "f-return-reason")},
                   follow_redirects=False)
    assert again.status_code == 303 and _state_of(app, case) == "returned"


def test_a_note_typed_at_submission_is_given_back_on_the_case_not_submitted(wb):
    app, c = wb
    case = _case_of(app, c, CHECKED, submit=False)
    page = f"/analista/casos/{case}"
    r = _expired_post(app, c, "ana", page, f"{page}/enviar", {"acknowledgement": NOTE_ANA})
    assert r.status_code == 200 and _state_of(app, case) == "draft"
    back = _sign_in_on(c, "ana", r.text, _envelope(r.text))
    assert back.status_code == 200 and 'id="case-state"' in back.text
    assert _kept_notice(back.text) == NOT_DONE
    assert _box(back.text, "f-acknowledgement") == NOTE_ANA
    assert 'href="#f-acknowledgement" id="kept-go"' in back.text
    assert _state_of(app, case) == "draft"


def test_a_note_typed_at_approval_is_given_back_on_the_confirmation_page_not_approved(wb):
    app, c = wb
    case = _case_of(app, c, CHECKED, submit=True)
    page = f"/analista/casos/{case}/aprobar"
    r = _expired_post(app, c, "sol", page, page,
                      {"confirmado": "1", "acknowledgement": NOTE_SOL})
    assert r.status_code == 200 and _state_of(app, case) == "submitted"
    back = _sign_in_on(c, "sol", r.text, _envelope(r.text))
    assert back.status_code == 200
    assert "Revise y confirme" in back.text and 'id="confirm-approve"' in back.text
    assert _kept_notice(back.text) == NOT_DONE
    assert _box(back.text, "f-acknowledgement") == NOTE_SOL
    assert _state_of(app, case) == "submitted"  # nothing approved, no letter stored
    assert _lang_link(back.text) == f"{page}?lang=en"
    # in English too, the notice in the page's language
    en = _expired_post(app, c, "sol", page + "?lang=en", page,
                       {"confirmado": "1", "acknowledgement": NOTE_SOL, "lang": "en"})
    back = c.post("/analista/entrar", data={
        "name": "sol", "password": PASSWORDS["sol"], "csrf_token": csrf_of(en.text),
        "lang": "en", "conservado": _envelope(en.text)}, follow_redirects=False)
    assert back.status_code == 200 and '<html lang="en">' in back.text
    assert _kept_notice(back.text) == ("Your session ended; what you typed was kept. The "
                                       "action was not done: check it and send it again.")
    assert _box(back.text, "f-acknowledgement") == NOTE_SOL


def test_another_user_never_gets_a_kept_reason_and_its_owner_gets_it_once(wb):
    app, c = wb
    case = _case_of(app, c, APPLICATION, submit=True)
    page = f"/analista/casos/{case}"
    r = _expired_post(app, c, "sol", page, f"{page}/devolver", {"reason": REASON})
    envelope = _envelope(r.text)
    # another supervisor signs in on that page: led to the case, without the reason
    other = _sign_in_on(c, "sam", r.text, envelope)
    assert other.status_code == 303 and other.headers["location"] == page
    shown = c.get(page).text
    assert "certificación de servicios" not in unescape(shown) and 'id="kept"' not in shown
    assert _box(shown, "f-return-reason") == ""
    # left for sol: she gets it, once
    c.cookies.clear()
    back = _sign_in_on(c, "sol", c.get("/analista/entrar").text, envelope)
    assert back.status_code == 200 and _box(back.text, "f-return-reason") == REASON
    c.cookies.clear()
    again = _sign_in_on(c, "sol", c.get("/analista/entrar").text, envelope)
    assert again.status_code == 303 and again.headers["location"] == "/analista"
    assert _box(c.get(page).text, "f-return-reason") == ""
    assert _state_of(app, case) == "submitted"


def test_a_kept_reason_never_after_a_sign_out_nor_after_the_idle_time(wb):
    app, c = wb
    case = _case_of(app, c, APPLICATION, submit=True)
    page = f"/analista/casos/{case}"
    # signed out, then the copy of the cookie posts: refused as before, nothing kept
    c.cookies.clear()
    sign_in(c, "sol")
    token = csrf_of(c.get(page).text)
    cookie = c.cookies.get(COOKIE)
    c.post("/analista/salir", data={"csrf_token": token})
    c.cookies.set(COOKIE, cookie, path="/analista")
    app.state.clock.now += IDLE + 1
    r = c.post(f"{page}/devolver", data={"csrf_token": token, "reason": REASON},
               follow_redirects=False)
    assert r.status_code == 303 and "conservado" not in r.text
    # kept, but signed in again too late: the case, without it
    r = _expired_post(app, c, "sol", page, f"{page}/devolver", {"reason": REASON})
    envelope = _envelope(r.text)
    app.state.clock.now += IDLE + 1
    late = _sign_in_on(c, "sol", r.text, envelope)
    assert late.status_code == 303 and late.headers["location"] == page
    assert _state_of(app, case) == "submitted"


def test_a_kept_note_for_an_approval_no_longer_possible_is_still_shown(wb):
    """Another supervisor approved the case while the session was over: the
    confirmation page is gone, the note typed is shown on the case, said."""
    app, c = wb
    case = _case_of(app, c, CHECKED, submit=True)
    page = f"/analista/casos/{case}/aprobar"
    r = _expired_post(app, c, "sol", page, page,
                      {"confirmado": "1", "acknowledgement": NOTE_SOL})
    sam = TestClient(app)
    app.state.clock.now += 60
    sign_in(sam, "sam")
    done = sam.post(page, data={"csrf_token": csrf_of(sam.get(page).text), "confirmado": "1",
                                "acknowledgement": "Revisado por Samuel"},
                    follow_redirects=False)
    assert done.status_code == 303 and _state_of(app, case) == "approved"
    back = _sign_in_on(c, "sol", r.text, _envelope(r.text))
    assert back.status_code == 403 and 'id="case-state"' in back.text
    assert _kept_notice(back.text) == NOT_DONE
    assert unescape(re.search(r'<blockquote id="kept-text">(.*?)</blockquote>', back.text,
                              re.S).group(1)) == NOTE_SOL
