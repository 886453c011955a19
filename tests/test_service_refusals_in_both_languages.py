"""Hardening, round two, in the service and the calculator's pages (issue 19):

* a case without its participant id is a 422 in Spanish too, naming the
  field with the catalog's words (the Spanish "missing" agrees with the
  field's gender), on SQLite and PostgreSQL;
* a participant id holding a control character (NUL included) is a 422
  naming the field wherever an id is accepted: a case, a determination, the
  filters of /api/v1/cases and /api/v1/audit (NUL was a PostgreSQL-only 500);
* the calculator keeps no value longer than a person types (each field
  bounded, a message naming it) and its answers within a bound in bytes;
* X-Forwarded-For names the client only when a configured proxy sends it,
  so a spoofed address neither escapes a rate limit nor borrows another's;
* /docs and /redoc carry a Content-Security-Policy (frame-ancestors
  included), nosniff and no-referrer, and still work under it in a browser.
"""

from __future__ import annotations

import base64
import hashlib
import re
import time
import warnings

import httpx
import pytest

from diferida.fields import FIELD_NAMES
from diferida.i18n import LANGS, catalog
from diferida.service import messages
from diferida.service.proxies import forwarded_client, parse_proxies
from diferida.service.schemas import ID_PATTERN
from diferida.service.settings import Settings
from diferida.service.store import AuditQuery, Store
from diferida.service.testing import database_for_tests, running_server
from diferida.web import drafts as drafts_module
from diferida.web.drafts import MAX_VALUE_CHARS, Drafts, DraftTooLarge, size_of

from .conftest import EXAMPLE_1

PERSON = {"participant_id": "R2-1", "birth_date": "1970-05-10", "entry_date": "1988-07-01",
          "separation_date": "2010-06-30", "creditable_service_years": "22",
          "average_compensation": "30000.00", "group": "general", "refund_requested": False,
          "as_of": "2026-11-29"}
CASES = "/api/v1/cases"
AUDIT = "/api/v1/audit"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def svc(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    with database_for_tests(request.param, folder) as url:
        store = Store(url)
        store.upgrade()
        analyst = store.add_user("ana", "analyst")[1]
        auditor = store.add_user("aud", "auditor")[1]
        env = {"DIFERIDA_RATE_LIMIT_PUBLIC": "off", "DIFERIDA_RATE_LIMIT_AUTH_FAILURES": "off",
               "DIFERIDA_AUDIT_COLLAPSE_SECONDS": "0"}
        log = folder / "server.log"
        with running_server(url, log_path=log, env=env) as base, \
                httpx.Client(base_url=base, timeout=60) as http:
            yield http, {"Authorization": f"Bearer {analyst}"}, \
                {"Authorization": f"Bearer {auditor}"}, store
        store.dispose()
        text = log.read_text("utf-8", errors="replace")
        assert "unhandled" not in text and "Traceback" not in text


def _errors(r: httpx.Response) -> dict[str, dict]:
    return {e["field"]: e for e in r.json()["errors"]}


# ---- 2. a case without its participant id: 422 in the default language --------------

@pytest.mark.parametrize("body", [
    {},
    {k: v for k, v in PERSON.items() if k != "participant_id"},
    {**PERSON, "participant_id": ""},
    {**PERSON, "participant_id": "   "},
    {**PERSON, "participant_id": None},
], ids=["empty", "absent", "empty-text", "spaces", "null"])
def test_a_case_without_its_participant_id_is_422_in_spanish_naming_the_field(svc, body):
    http, analyst, _, store = svc
    before = len(store.cases(None, 1000, 0))
    r = http.post(CASES, json=body, headers=analyst)  # no lang, no Accept-Language: Spanish
    assert r.status_code == 422, r.text
    pid = _errors(r)["participant_id"]
    assert pid["code"] == "missing"
    assert pid["message"] == "identificador (participant_id): es obligatorio: indíquelo"
    if not body:  # the other required fields too, each with its own agreement
        named = _errors(r)
        assert named["birth_date"]["message"].endswith("es obligatoria: indíquela")
        assert named["creditable_service_years"]["message"].endswith(
            "son obligatorios: indíquelos")
    english = http.post(CASES, json={**body, "lang": "en"}, headers=analyst)
    assert english.status_code == 422
    assert _errors(english)["participant_id"]["message"] == \
        "participant id (participant_id): is required"
    assert len(store.cases(None, 1000, 0)) == before  # nothing stored
    refused = store.audit_events(AuditQuery(action="case.create", limit=1000))
    assert refused[-1].status_code == 422 and "participant_id:missing" in refused[-1].detail


def test_every_catalog_message_of_every_field_can_be_worded_in_both_languages():
    """The service words the core's field errors itself (a case's missing id):
    no code of the catalog, for no field, in no language, fails to format."""
    for lang in LANGS:
        for code in catalog(lang)["errors"]:
            for field in (*FIELD_NAMES, "note", "supersedes", None):
                text = messages.text(lang, code, field, value="X")
                assert isinstance(text, str) and text and "{value}" not in text, (lang, code)


# ---- 3. control characters in ids: 422 naming the field, on both databases -------------

@pytest.mark.parametrize("raw, code", [
    ("\x00", "nul_character"), ("AB\x00", "nul_character"), ("\x01", "control_character"),
    ("A\tB", "control_character"), ("A\nB", "control_character"),
    ("\x1b[31mAB", "control_character"), ("AB\x7f", "control_character"),
    ("AB\x85C", "control_character"),
], ids=["nul", "nul-inside", "soh", "tab", "newline", "escape", "del", "c1"])
def test_an_id_filter_with_a_control_character_is_422_naming_the_field(svc, raw, code):
    http, analyst, auditor, _ = svc
    for path, headers in ((CASES, analyst), (AUDIT, auditor)):
        r = http.get(path, params={"participant_id": raw}, headers=headers)
        assert r.status_code == 422, (path, r.text)
        e = _errors(r)["participant_id"]
        assert e["code"] == code
        assert e["message"].startswith("identificador (participant_id): no puede contener")
        en = http.get(path, params={"participant_id": raw, "lang": "en"}, headers=headers)
        assert _errors(en)["participant_id"]["message"].startswith(
            "participant id (participant_id): must not contain")


def test_the_nul_filter_of_the_issue_sent_as_written_is_422(svc):
    http, analyst, auditor, _ = svc
    assert http.get(f"{CASES}?participant_id=%00", headers=analyst).status_code == 422
    assert http.get(f"{AUDIT}?participant_id=%00", headers=auditor).status_code == 422
    # spaces around an id are still only spaces: trimmed, as when it was recorded
    ok = http.get(CASES, params={"participant_id": " \tR2-none \n"}, headers=analyst)
    assert ok.status_code == 200 and ok.json()["participant_id"] == "R2-none"


@pytest.mark.parametrize("raw", ["R2\x07X", "R2\r\nX", "R2\tX", "\x1b[2JR2"])
def test_a_posted_id_with_a_control_character_is_422_and_nothing_is_stored(svc, raw):
    http, analyst, _, store = svc
    before = len(store.cases(None, 1000, 0))
    r = http.post(CASES, json={**PERSON, "participant_id": raw}, headers=analyst)
    assert r.status_code == 422, r.text
    e = _errors(r)["participant_id"]
    assert e["code"] == "control_character" and "U+00" in e["message"]
    assert e["message"].startswith("identificador (participant_id): ")
    assert len(store.cases(None, 1000, 0)) == before
    d = http.post("/api/v1/determinations", json={**PERSON, "participant_id": raw, "lang": "en"})
    assert d.status_code == 422 and _errors(d)["participant_id"]["code"] == "control_character"
    # surrounding tabs and line breaks are spaces: trimmed, not refused
    fine = http.post("/api/v1/determinations", json={**PERSON, "participant_id": "\tR2-X\r\n"})
    assert fine.status_code == 200 and fine.json()["participant_id"] == "R2-X"


def test_the_documented_id_pattern_says_what_is_refused():
    pattern = re.compile(ID_PATTERN)
    for good in ("AB-1", " AB 1 ", "\tAB-1\n", "Peña", "1"):
        assert pattern.fullmatch(good), good
    for bad in ("", "   ", "\x00", "A\tB", "A\x00B", "A\x7f", "A\x85B", "\x1b[31m"):
        assert not pattern.fullmatch(bad), bad


# ---- 4. the calculator's answers: every field and the whole store bounded ---------------

@pytest.fixture(scope="module")
def web(tmp_path_factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    from diferida.server import create_app

    db = tmp_path_factory.mktemp("web") / "web.db"
    app = create_app(Settings(database_url=f"sqlite:///{db}", rate_limit_public="off"))
    with TestClient(app) as c:
        yield c


BIG = "7" * 1_000_000  # what one field of a multipart body can carry


@pytest.mark.parametrize("path", ["/calcular", "/calcular/fragmento", "/determinacion/imprimir"])
def test_megabyte_fields_are_refused_naming_each_and_nothing_is_kept(web, path):
    kept = len(drafts_module.DRAFTS), drafts_module.DRAFTS.bytes
    fields = {**EXAMPLE_1, "participant_id": BIG, "svc_years": BIG, "svc_months": BIG}
    r = web.post(path, files={k: (None, v) for k, v in fields.items()}, follow_redirects=False)
    assert r.status_code in (200, 422) and "location" not in r.headers, r.status_code
    assert len(r.content) < 100_000  # nothing posted is sent back
    page = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", r.text))
    message = "Tiene más de 200 caracteres y no se ha guardado"
    for label in ("Referencia", "¿Tiene el dato en años y meses? Años",
                  "¿Tiene el dato en años y meses? Meses (0 a 11)"):
        assert f"{label}: {message}" in page, label
    assert (len(drafts_module.DRAFTS), drafts_module.DRAFTS.bytes) == kept


def test_an_over_long_date_is_named_once_in_english_and_a_value_at_the_bound_is_kept(web):
    r = web.post("/calcular", data={**EXAMPLE_1, "birth_date": "1" * (MAX_VALUE_CHARS + 1),
                                    "lang": "en"}, follow_redirects=False)
    assert r.status_code == 422
    page = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", r.text))
    assert page.count("Date of birth: Is longer than 200 characters and was not kept") == 1
    assert "is required" not in page  # the core's "missing" would say it twice
    at_bound = web.post("/calcular", data={**EXAMPLE_1, "participant_id": "R" * MAX_VALUE_CHARS},
                        follow_redirects=False)
    assert at_bound.status_code == 303
    token = at_bound.headers["location"].rsplit("/", 1)[1]
    assert drafts_module.DRAFTS.get(token).values["participant_id"] == "R" * MAX_VALUE_CHARS


def test_converting_an_over_long_number_of_years_is_refused_with_its_message(web):
    r = web.post("/calcular", data={"svc_years": "2" * 300, "svc_months": "3",
                                    "action": "convert"})
    page = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", r.text))
    assert r.status_code == 422 and "Años: Tiene más de 200 caracteres" in page
    assert "2" * 201 not in r.text


def test_a_reference_with_a_control_character_is_refused_on_the_page_too(web):
    r = web.post("/calcular", data={**EXAMPLE_1, "participant_id": "Ana\tMarker"},
                 follow_redirects=False)
    page = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", r.text))
    assert r.status_code == 422
    assert "Referencia: Contiene un carácter de control (U+0009)" in page


def test_the_store_keeps_at_most_its_bytes_dropping_the_oldest_first():
    one = {**EXAMPLE_1, "participant_id": "x" * MAX_VALUE_CHARS}
    size = size_of(one)
    store = Drafts(max_items=10_000, max_bytes=size * 5 + size // 2)
    tokens = [store.put(one, "es") for _ in range(12)]
    assert len(store) == 5 and store.bytes == 5 * size <= store.max_bytes
    assert [store.get(t) is not None for t in tokens] == [False] * 7 + [True] * 5
    # expiry gives the bytes back
    clock = [0.0]
    timed = Drafts(ttl=10, max_bytes=size * 3, clock=lambda: clock[0])
    timed.put(one, "es")
    clock[0] = 11
    timed.put({"x": "1"}, "es")
    assert len(timed) == 1 and timed.bytes == size_of({"x": "1"})


def test_the_store_refuses_an_answer_beyond_one_answers_bounds():
    store = Drafts()
    with pytest.raises(DraftTooLarge):
        store.put({"participant_id": "x" * (MAX_VALUE_CHARS + 1)}, "es")
    with pytest.raises(DraftTooLarge):
        store.put({f"k{i}": "1" for i in range(drafts_module.MAX_VALUES + 1)}, "es")
    assert len(store) == 0 and store.bytes == 0
    # the worst answer the form can keep is small: the default bound holds
    # thousands of them, and never more than MAX_BYTES in all
    worst = {name: "\U0001f600" * MAX_VALUE_CHARS for name in
             (*FIELD_NAMES, "rules", "compare", "svc_years", "svc_months")}
    assert size_of(worst) * 500 < drafts_module.MAX_BYTES


def test_many_posts_of_big_fields_leave_the_store_within_its_bound(web):
    """The issue's measure: 120 posts of about 1 MB a field added 349 MB to
    a worker. Now the fields are refused and the store does not grow; and
    posts of the longest values kept keep it under MAX_BYTES."""
    before = drafts_module.DRAFTS.bytes
    for _ in range(20):
        web.post("/calcular", files={k: (None, v) for k, v in
                                     {**EXAMPLE_1, "svc_years": BIG}.items()},
                 follow_redirects=False)
    assert drafts_module.DRAFTS.bytes == before
    longest = {**EXAMPLE_1, "participant_id": "p" * MAX_VALUE_CHARS,
               "svc_years": "1" * MAX_VALUE_CHARS, "svc_months": "2" * MAX_VALUE_CHARS}
    for _ in range(30):
        r = web.post("/calcular", data=longest, follow_redirects=False)
        assert r.status_code == 303
    assert drafts_module.DRAFTS.bytes <= drafts_module.MAX_BYTES
    # each post keeps one answer: what was posted, a whole date kept as its
    # three boxes (day, month, year: more keys than the one posted)
    kept = {k: v for k, v in longest.items() if not k.endswith("_date")}
    kept |= {f"{k}-{part}": "0000" for k in longest if k.endswith("_date")
             for part in ("day", "month", "year")}
    assert drafts_module.DRAFTS.bytes - before <= 30 * size_of(kept)


# ---- 8a. X-Forwarded-For only from a configured proxy -------------------------------------

def test_the_client_is_the_peer_unless_the_peer_is_a_trusted_proxy():
    none = parse_proxies("X", "")
    proxies = parse_proxies("X", "127.0.0.1, 10.0.0.0/8 ::1")
    assert none == ()
    assert forwarded_client("127.0.0.1", ["6.6.6.6"], none) == "127.0.0.1"
    assert forwarded_client("192.0.2.7", ["6.6.6.6"], proxies) == "192.0.2.7"
    assert forwarded_client("127.0.0.1", ["203.0.113.9"], proxies) == "203.0.113.9"
    # what the client wrote to the left of what the proxy appended is never read
    assert forwarded_client("127.0.0.1", ["6.6.6.6, 203.0.113.9"], proxies) == "203.0.113.9"
    # past the trusted hops (two proxies, one header given twice)
    assert forwarded_client("127.0.0.1", ["6.6.6.6, 198.51.100.4", "10.1.2.3"],
                            proxies) == "198.51.100.4"
    assert forwarded_client("::1", ["[2001:db8::5]:4711"], proxies) == "2001:db8::5"
    assert forwarded_client("127.0.0.1", ["203.0.113.9:8080"], proxies) == "203.0.113.9"
    # not an address: as far as the trusted hops vouch
    assert forwarded_client("127.0.0.1", ["10.0.0.9, nonsense"], proxies) == "127.0.0.1"
    assert forwarded_client("127.0.0.1", ["nonsense, 10.0.0.9"], proxies) == "10.0.0.9"


def test_a_mistyped_trusted_proxy_stops_the_start(monkeypatch):
    monkeypatch.setenv("DIFERIDA_TRUSTED_PROXIES", "127.0.0.1, proxy.example")
    with pytest.raises(ValueError, match="DIFERIDA_TRUSTED_PROXIES.*proxy.example"):
        Settings(database_url="sqlite://")
    monkeypatch.setenv("DIFERIDA_TRUSTED_PROXIES", "127.0.0.1, 10.0.0.0/8")
    assert len(Settings(database_url="sqlite://").proxy_networks) == 2
    monkeypatch.delenv("DIFERIDA_TRUSTED_PROXIES")
    assert Settings(database_url="sqlite://").proxy_networks == ()


def _limited_server(tmp_path, **env):
    url = f"sqlite:///{tmp_path / 'cases.db'}"
    store = Store(url)
    store.upgrade()
    token = store.add_user("ana", "analyst")[1]
    store.dispose()
    env = {"DIFERIDA_RATE_LIMIT_PUBLIC": "3/minute",
           "DIFERIDA_RATE_LIMIT_AUTH_FAILURES": "2/minute", **env}
    return token, running_server(url, log_path=tmp_path / "server.log", env=env)


@pytest.mark.slow
def test_a_spoofed_forwarded_address_does_not_escape_the_limit(tmp_path):
    """`diferida serve` on loopback, no proxy configured: every request comes
    from 127.0.0.1, whatever X-Forwarded-For says."""
    token, server = _limited_server(tmp_path)
    with server as base, httpx.Client(base_url=base) as http:
        codes = [http.get("/", headers={"X-Forwarded-For": f"198.51.100.{i}"}).status_code
                 for i in range(6)]
        assert codes == [200, 200, 200, 429, 429, 429]
        # nor can anyone lock an analyst out by failing in the analyst's name:
        # the failures count against the sender
        for _ in range(3):
            http.get(CASES, headers={"Authorization": "Bearer wrong",
                                     "X-Forwarded-For": "203.0.113.50"})
        blocked = http.get(CASES, headers={"Authorization": f"Bearer {token}"})
        assert blocked.status_code == 429  # the sender, 127.0.0.1, is the one blocked


@pytest.mark.slow
def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_limit(tmp_path):
    token, server = _limited_server(tmp_path, DIFERIDA_TRUSTED_PROXIES="127.0.0.1")
    with server as base, httpx.Client(base_url=base) as http:
        a = {"X-Forwarded-For": "198.51.100.1"}
        assert [http.get("/", headers=a).status_code for _ in range(4)] == [200] * 3 + [429]
        assert http.get("/", headers={"X-Forwarded-For": "198.51.100.2"}).status_code == 200
        # a client writing someone else's address before its own is still itself
        spoof = {"X-Forwarded-For": "198.51.100.2, 198.51.100.1"}
        assert http.get("/", headers=spoof).status_code == 429
        # failed sign-ins from one client do not lock out an analyst at another
        for _ in range(3):
            http.get(CASES, headers={"Authorization": "Bearer wrong",
                                     "X-Forwarded-For": "203.0.113.50"})
        assert http.get(CASES, headers={"Authorization": "Bearer x", "X-Forwarded-For":
                                        "203.0.113.50"}).status_code == 429
        ok = http.get(CASES, headers={"Authorization": f"Bearer {token}",
                                      "X-Forwarded-For": "198.51.100.77"})
        assert ok.status_code == 200


# ---- 8b. the documentation pages' headers ------------------------------------------------

def _inline_script_hashes(html: str) -> set[str]:
    scripts = re.findall(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", html, re.DOTALL)
    return {"'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
            for s in scripts}


@pytest.mark.parametrize("path", ["/docs", "/redoc", "/docs/oauth2-redirect"])
def test_the_documentation_pages_carry_the_security_headers(web, path):
    r = web.get(path)
    assert r.status_code == 200
    csp = {d.split()[0]: d.split()[1:] for d in
           (x.strip() for x in r.headers["content-security-policy"].split(";")) if d}
    assert csp["frame-ancestors"] == ["'none'"] and csp["default-src"] == ["'self'"]
    assert csp["object-src"] == ["'none'"] and csp["base-uri"] == ["'none'"]
    # scripts: this site's files and the page's own inline script, by its hash only
    assert "'unsafe-inline'" not in csp["script-src"] and "'unsafe-eval'" not in csp["script-src"]
    assert set(csp["script-src"]) == {"'self'", *_inline_script_hashes(r.text)}
    assert all(s in ("'self'", "'unsafe-inline'", "data:", "blob:", "'none'")
               for v in csp.values() for s in v if not s.startswith("'sha256-"))
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["referrer-policy"] == "no-referrer"
    for asset in re.findall(r'(?:src|href)="(/static-offline-docs/[^"]+)"', r.text):
        assert web.get(asset).headers["x-content-type-options"] == "nosniff"


def test_swagger_ui_and_redoc_work_under_their_policy_in_a_browser(browser, base_url):
    """Rendered, "Try it out" answered, ReDoc's search working; the only
    thing the policy blocks is what would come from another site (ReDoc's
    logo from its CDN), never something of this site's or the page's own."""
    for path, ready in (("/docs", ".opblock"), ("/redoc", "[data-section-id]")):
        context = browser.new_context(base_url=base_url)
        page = context.new_page()
        problems: list[str] = []
        page.on("pageerror", lambda e, out=problems: out.append(f"page error: {e}"))
        page.add_init_script(
            "document.addEventListener('securitypolicyviolation', e => "
            "console.warn('CSP ' + e.violatedDirective + ' ' + e.blockedURI))")
        page.on("console", lambda m, out=problems: out.append(m.text)
                if m.text.startswith("CSP ") else None)
        page.goto(path)
        page.wait_for_selector(ready, timeout=30_000)
        assert page.locator(ready).count() >= 5
        if path == "/docs":
            page.click("#operations-service-health_health_get .opblock-summary")
            page.click("button.try-out__btn")
            page.click("button.execute")
            page.wait_for_selector(".live-responses-table", timeout=10_000)
            assert '"status": "ok"' in page.locator(".live-responses-table").inner_text()
        else:
            page.fill("input[placeholder='Search...']", "audit")
            page.wait_for_selector("[role=search] li", timeout=10_000)
        time.sleep(0.3)
        context.close()
        ours = [p for p in problems if not re.match(r"CSP \S+ https?://(?!127\.0\.0\.1)", p)]
        assert ours == [], (path, problems)
