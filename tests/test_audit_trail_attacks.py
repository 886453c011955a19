"""The audit trail and the auditor's page, attacked.

1. What staff type into a search or the auditor's filters is recorded as
   its kind ("by participant id", "filters: who, since"), never as its
   text: a name or a birth date typed there is in no column of
   `audit_events`, nor in a log line. The marker test sends marker values
   through every workbench form and API route that takes typed text (sign
   in, search, the audit filters, new case: preview and save, correction,
   return, import) on SQLite and PostgreSQL and then reads the whole trail
   and the server's whole output.
2. The auditor's page does not verify the chains when it is opened: it
   shows the last verification recorded (`audit.verify` in the trail, kept
   across a restart) and verifies when "Verificar ahora" is posted (CSRF,
   auditors only).
3. Every filter the store cannot take (a NUL or other control character,
   too long, a date out of range, a case number beyond the column's
   integers) is refused naming the filter, in Spanish and English: 422 and
   the page again on the web, 422 in the API's error shape; never a 500.
"""

from __future__ import annotations

import re
from html import unescape

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from diferida.server import create_app
from diferida.service.settings import Settings
from diferida.service.store import Store
from diferida.service.store.chain import VerifyReport
from diferida.service.store.models import AuditEvent
from diferida.service.testing import database_for_tests, running_server

from .workbench_helpers import APPLICATION, PASSWORDS, add_users, csrf_of, sign_in, signer

W = "/api/v1/workbench"
# what staff type: a participant's name and birth date (in three shapes)
NAME = "Zuleyka Quiñonez"
TYPED = (NAME, "Zuleyka", "Quiñonez", "Quinonez", "17/07/1931", "1931-07-17", "17071931")


@pytest.fixture(params=["sqlite", "postgresql"])
def site(request, tmp_path):
    """The application on a fresh store, the workbench's users (with
    passwords) and three API tokens: analyst, supervisor, auditor."""
    with database_for_tests(request.param, tmp_path) as url:
        schema = Store(url)
        schema.upgrade()
        schema.dispose()
        app = create_app(Settings(database_url=url, rate_limit_public="off",
                                  rate_limit_auth_failures="off"))
        with TestClient(app) as c:
            store = app.state.store
            add_users(store)
            tokens = {role: store.add_user(f"api-{role}", role, **(
                {} if role == "auditor" else signer(f"api-{role}")))[1]
                for role in ("analyst", "supervisor", "auditor")}
            app.state.test_tokens = tokens
            yield app, c


def _bearer(app, role: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {app.state.test_tokens[role]}"}


def _client(app, name: str, lang: str = "es") -> tuple[TestClient, str]:
    c = TestClient(app)
    sign_in(c, name, lang=lang)
    return c, csrf_of(c.get("/analista" + ("?lang=en" if lang == "en" else "")).text)


def _trail(store) -> list[dict]:
    """Every row of audit_events, every column."""
    with store.engine.connect() as conn:
        return [dict(r) for r in conn.execute(select(AuditEvent.__table__)
                                              .order_by(AuditEvent.id)).mappings()]


# the chain's hashes are hexadecimal digits, which a marker of digits alone
# ("48123") meets by chance in about one run of two hundred
HASHES = ("prev_hash", "row_hash")


def _found_in_trail(store, markers) -> list[dict]:
    return [row for row in _trail(store)
            if any(m in str(v) for k, v in row.items() if k not in HASHES for m in markers)]


def _events(store, action: str, *columns: str) -> list[tuple]:
    """The `columns` of the trail's events of `action`, oldest first."""
    return [tuple(row[c] for c in columns) for row in _trail(store) if row["action"] == action]


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def _open_case(app, name: str = "sol", pid: str = "W-0001") -> int:
    c, token = _client(app, name)
    r = c.post("/analista/nuevo", data={**APPLICATION, "participant_id": pid,
                                        "action": "save", "csrf_token": token},
               follow_redirects=False)
    assert r.status_code == 303, r.text[:300]
    return int(re.match(r"^/analista/casos/(\d+)", r.headers["location"]).group(1))


# --- 1. no typed text in the audit trail -------------------------------------------------

def test_a_search_records_its_kind_and_the_case_found_never_the_text_typed(site):
    app, _ = site
    store = app.state.store
    number = _open_case(app)
    ana, token = _client(app, "ana")
    # the name typed where a participant id goes; a birth date as a case number
    r = ana.post("/analista/buscar", data={"participante": NAME, "csrf_token": token})
    assert r.status_code == 200
    r = ana.post("/analista/buscar", data={"caso": "17071931", "csrf_token": token})
    assert r.status_code == 200
    h = _bearer(app, "analyst")
    assert ana.get(f"{W}/search", params={"participant_id": NAME}, headers=h).status_code == 200
    assert ana.get(f"{W}/search", params={"case_id": 17071931}, headers=h).status_code == 200
    assert _found_in_trail(store, TYPED) == []
    # a search that finds the case: its kind and the case number found
    r = ana.post("/analista/buscar", data={"participante": "W-0001", "csrf_token": token})
    assert r.status_code == 200 and f"/analista/casos/{number}" in r.text
    r = ana.get(f"{W}/search", params={"case_id": number}, headers=h)
    assert r.status_code == 200 and r.json()["total"] == 1
    assert _events(store, "workflow.search", "case_id", "participant_id", "detail") == [
        (None, None, "by participant id: 0 found"),
        (None, None, "by case number: 0 found"),
        (None, None, "by participant id: 0 found"),
        (None, None, "by case number: 0 found"),
        (number, None, "by participant id: 1 found"),
        (number, None, "by case number: 1 found"),
    ]


def test_the_auditors_filters_are_recorded_as_their_kinds_never_their_text(site):
    app, _ = site
    store = app.state.store
    aud, token = _client(app, "aud")
    r = aud.post("/analista/auditoria", data={"quien": NAME, "accion": "17/07/1931",
                                              "desde": "17/07/1931", "csrf_token": token})
    assert r.status_code == 200
    r = aud.post("/analista/auditoria", data={"caso": "17071931", "hasta": "17/07/1931",
                                              "csrf_token": token})
    assert r.status_code == 200
    h = _bearer(app, "auditor")
    r = aud.get(f"{W}/audit", params={"who": NAME, "action": "17/07/1931",
                                      "since": "1931-07-17T00:00:00", "case_id": 17071931},
                headers=h)
    assert r.status_code == 200
    # the service's older trail and case list (/api/v1): the same rule
    r = aud.get("/api/v1/audit", params={"participant_id": NAME, "user": NAME,
                                         "since": "1931-07-17T00:00:00"}, headers=h)
    assert r.status_code == 200
    r = aud.get("/api/v1/cases", params={"participant_id": NAME}, headers=h)
    assert r.status_code == 200 and r.json()["cases"] == []
    # a name typed into an address of the API, with and without a token
    for headers in ({}, h):
        r = aud.get(f"{W}/cases/{NAME}", headers=headers)
        assert r.status_code in (401, 422)
    assert _found_in_trail(store, TYPED) == []
    assert _events(store, "workflow.audit", "detail", "case_id") == [
        # the page folds the reads unless an action is asked for (said in the record)
        ("filters: who, action, since", None), ("filters: case_id, until, reads folded", None),
        ("filters: who, action, case_id, since", None)]
    assert _events(store, "audit.read", "detail") == [("filters: user, participant_id, since",)]


# --- 2. the auditor's page answers without verifying; verification on request ----------

class _Counted:
    """Store.verify, counted."""

    def __init__(self, store, report: VerifyReport | None = None):
        self.calls = 0
        self.real = store.verify
        self.report = report

    def __call__(self, *a, **kw):
        self.calls += 1
        return self.report if self.report is not None else self.real(*a, **kw)


def test_the_auditors_page_shows_the_last_verification_and_verifies_only_when_asked(site):
    app, _ = site
    store = app.state.store
    counted = _Counted(store)
    store.verify = counted
    aud, token = _client(app, "aud")
    page = aud.get("/analista/auditoria")
    assert page.status_code == 200 and counted.calls == 0
    assert 'id="verify-none"' in page.text and 'id="verify-now"' in page.text
    # the filters and their pages do not verify either
    r = aud.post("/analista/auditoria", data={"quien": "sol", "csrf_token": token})
    assert r.status_code == 200 and counted.calls == 0
    # "Verificar ahora": every chain read, the full report shown, the result recorded
    r = aud.post("/analista/auditoria", data={"verificar": "1", "csrf_token": token})
    assert r.status_code == 200 and counted.calls == 1
    assert 'data-intact="yes"' in r.text and "audit_events:" in r.text
    # the result, then each chain's rows, state and anchor (read back by the page)
    [(who, status, detail)] = _events(store, "audit.verify", "user_name", "status_code",
                                      "detail")
    assert (who, status) == ("aud", 200)
    assert detail.startswith("intact; 0 findings; chains: cases=")
    # arriving again: the last result, its time and who asked, without verifying
    page = aud.get("/analista/auditoria")
    assert counted.calls == 1
    last = re.search(r'<p[^>]*id="verify-last"[^>]*>(.*?)</p>', page.text, re.S)
    assert last and 'data-intact="yes"' in last.group(0)
    assert "aud" in last.group(1) and "AST" in _text(last.group(1))
    # kept across a restart: a new application on the same store says the same
    url = store.url
    with TestClient(create_app(Settings(database_url=url, rate_limit_public="off"))) as c2:
        sign_in(c2, "aud")
        again = c2.get("/analista/auditoria").text
        assert 'id="verify-last"' in again and 'data-intact="yes"' in again
    # a broken store: said as broken, with the number of findings
    counted.report = VerifyReport(findings=["cases id 3: changed", "users id 2: re-enabled"])
    r = aud.post("/analista/auditoria", data={"verificar": "1", "csrf_token": token})
    assert 'data-intact="no"' in r.text and "cases id 3: changed" in r.text
    page = aud.get("/analista/auditoria")
    last = re.search(r'<p[^>]*id="verify-last"[^>]*>(.*?)</p>', page.text, re.S)
    assert 'data-intact="no"' in last.group(0) and "2" in _text(last.group(1))
    assert _events(store, "audit.verify", "detail")[-1] == ("TAMPERING DETECTED; 2 findings",)
    english = aud.get("/analista/auditoria?lang=en").text
    assert "Verify now" in english and "findings" in _text(english)
    assert counted.calls == 2


def test_verify_now_needs_the_forms_token_and_the_auditors_role(site):
    app, _ = site
    store = app.state.store
    counted = _Counted(store)
    store.verify = counted
    aud, token = _client(app, "aud")
    r = aud.post("/analista/auditoria", data={"verificar": "1", "csrf_token": "forged"})
    assert r.status_code == 403 and counted.calls == 0
    r = aud.post("/analista/auditoria", data={"verificar": "1"})
    assert r.status_code == 403 and counted.calls == 0
    for who in ("ana", "sol"):
        c, t = _client(app, who)
        r = c.post("/analista/auditoria", data={"verificar": "1", "csrf_token": t})
        assert r.status_code == 403 and 'id="refusal"' in r.text
    assert counted.calls == 0
    assert _events(store, "audit.verify", "id") == []
    # the API's verification is a request to verify: it verifies and is recorded
    r = aud.get(f"{W}/audit/verify", headers=_bearer(app, "auditor"))
    assert r.status_code == 200 and r.json()["intact"] is True and counted.calls == 1
    assert r.json()["findings"] == 0 and r.json()["at"]
    [(who, detail)] = _events(store, "audit.verify", "user_name", "detail")
    assert who == "api-auditor" and detail.startswith("intact; 0 findings; chains: ")
    r = aud.get(f"{W}/audit/verify", headers=_bearer(app, "supervisor"))
    assert r.status_code == 403 and counted.calls == 1


# --- 3. filters the store cannot take: refused, named, never a 500 ----------------------

# (form field, value typed, the filter's label as the page says it, es and en)
BAD_PAGE_FILTERS = [
    ("hasta", "31/12/9999", "Hasta", "Until"),
    ("desde", "31/12/9999", "Desde", "From"),
    ("desde", "1/1/0001", "Desde", "From"),
    ("hasta", "1/1/1899", "Hasta", "Until"),
    ("quien", "sol\x00", "Usuario", "User"),
    ("quien", "so\x07l", "Usuario", "User"),
    ("accion", "workflow.open\x00", "Acción", "Action"),
    ("accion", "workflow.\x1bopen", "Acción", "Action"),
    ("quien", "s" * 101, "Usuario", "User"),
    ("accion", "a" * 41, "Acción", "Action"),
    ("caso", "9223372036854775808", "Caso", "Case"),
    ("caso", "99999999999999999999999", "Caso", "Case"),
    ("caso", "0", "Caso", "Case"),
]


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_auditors_page_refuses_a_filter_the_store_cannot_take_naming_it(site, lang):
    app, _ = site
    aud, token = _client(app, "aud", lang=lang)
    for key, value, label_es, label_en in BAD_PAGE_FILTERS:
        r = aud.post("/analista/auditoria", data={key: value, "csrf_token": token,
                                                  "lang": lang})
        assert r.status_code == 422, (key, value, r.status_code)
        error = re.search(rf'<p class="error" id="e-{key}">(.*?)</p>', r.text, re.S)
        assert error, (key, value)
        label = label_es if lang == "es" else label_en
        assert label in _text(error.group(1)), (key, value, error.group(1))
        # the page again, the filters as typed, nothing listed
        assert 'id="audit-events"' not in r.text and 'class="wb-filters"' in r.text
    # the limits are the store's: at them, the filter is taken
    for data in ({"quien": "s" * 100}, {"accion": "a" * 40}, {"desde": "1/1/1900"},
                 {"hasta": "31/12/2999"}, {"caso": "9223372036854775807"}):
        r = aud.post("/analista/auditoria", data={**data, "csrf_token": token, "lang": lang})
        assert r.status_code == 200, (data, r.status_code)


BAD_API_FILTERS = [
    ({"who": "sol\x00"}, "who"),
    ({"who": "so\x07l"}, "who"),
    ({"action": "workflow.open\x00"}, "action"),
    ({"action": "workflow.\x1bopen"}, "action"),
    ({"who": "s" * 101}, "who"),
    ({"action": "a" * 41}, "action"),
    ({"case_id": str(2**63)}, "case_id"),
    ({"case_id": "0"}, "case_id"),
    ({"since": "0001-01-01T00:00:00+05:00"}, "since"),
    ({"since": "1899-12-31T23:59:59Z"}, "since"),
    ({"until": "9999-12-31T23:59:59"}, "until"),
    ({"until": "9999-12-31T23:59:59-04:00"}, "until"),
]


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_audit_api_refuses_a_filter_the_store_cannot_take_naming_it(site, lang):
    app, c = site
    h = {**_bearer(app, "auditor"), "Accept-Language": lang}
    for params, name in BAD_API_FILTERS:
        r = c.get(f"{W}/audit", params=params, headers=h)
        assert r.status_code == 422, (params, r.status_code, r.text[:300])
        errors = r.json()["errors"]
        assert [e["field"] for e in errors] == [name], errors
        # the filter named in the message too, in the language asked for
        quoted = f"«{name}»" if lang == "es" else f"'{name}'"
        assert quoted in errors[0]["message"], errors[0]["message"]
        assert ("filtro" in errors[0]["message"]) == (lang == "es")
    for params in ({"who": "s" * 100}, {"action": "a" * 40}, {"since": "1900-01-01T00:00Z"},
                   {"until": "3000-12-31T23:59:59Z"}, {"case_id": str(2**63 - 1)}):
        r = c.get(f"{W}/audit", params=params, headers=h)
        assert r.status_code == 200, (params, r.text[:300])


def test_a_refused_filter_is_recorded_without_its_value(site):
    app, c = site
    store = app.state.store
    aud, token = _client(app, "aud")
    r = aud.post("/analista/auditoria", data={"quien": NAME + "\x00", "csrf_token": token})
    assert r.status_code == 422
    r = c.get(f"{W}/audit", params={"who": NAME + "\x07"}, headers=_bearer(app, "auditor"))
    assert r.status_code == 422
    assert _events(store, "workflow.audit", "detail") == [
        ("refused: invalid who:filter_control",)] * 2
    assert _found_in_trail(store, TYPED) == []


# --- the marker test: every form and route that takes typed text ------------------------

PID = "MRK3-PID-4Q"               # the case's participant id: a case's, in the trail by design
NOT_A_PID = "MRK3-NOCASE-77"      # typed into a search: nobody's
MARK_NAME = "Zuleyka Quiñonez Marcadora"
ADDRESS = "Calle Marcadora 771"
NOTE = "nota marcadora 5521"
REASON = "motivo marcador 6632"
BIRTH = "1931-07-17"
PAY = "48123.45"
WRONG = "MRK3-WRONG-PASSWORD-8"
# what must be in no column of audit_events and no line of the log
SECRET = (MARK_NAME, "Zuleyka", "Quiñonez", "Marcador", ADDRESS, NOTE, REASON, BIRTH,
          "17/07/1931", "17071931", "1931-07", PAY, "48123", NOT_A_PID, WRONG,
          *PASSWORDS.values())


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_marker_values_typed_anywhere_reach_neither_the_audit_trail_nor_the_log(kind, tmp_path):
    log = tmp_path / "server.log"
    with database_for_tests(kind, tmp_path) as url:
        store = Store(url)
        store.upgrade()
        add_users(store)
        tokens = {role: store.add_user(f"api-{role}", role, **(
            {} if role == "auditor" else signer(f"api-{role}")))[1]
            for role in ("analyst", "supervisor", "auditor")}
        store.dispose()
        _walk(url, log, tokens)
        store = Store(url)
        try:
            trail = _found_in_trail(store, SECRET)
            actions = {row["action"] for row in _trail(store)}
        finally:
            store.dispose()
    assert trail == [], trail
    # the walk reached every kind of event it meant to
    assert {"auth.unauthorized", "auth.signin", "workflow.open", "workflow.search",
            "workflow.correct", "workflow.import", "workflow.submit", "workflow.return",
            "workflow.audit", "audit.verify", "audit.read", "case.list"} <= actions, actions
    text = log.read_text("utf-8", errors="replace")
    assert "POST /analista/auditoria HTTP/1.1" in text and f"GET {W}/audit HTTP/1.1" in text
    hits = [line for line in text.splitlines() if any(m in line for m in (*SECRET, PID))]
    assert hits == [], hits


def _walk(url: str, log, tokens: dict[str, str]) -> None:
    """Every workbench form and API route that takes typed text, with markers."""
    application = {**APPLICATION, "participant_id": PID, "name": MARK_NAME,
                   "letter_lang": "es", "address": f"{ADDRESS}\nSan Juan", "note": NOTE,
                   "birth_date": BIRTH,
                   "average_compensation": PAY}
    rows = [application, {**application, "participant_id": PID + "-2",
                          "birth_date": "17/07/1931x"}]
    csv = ",".join(application) + "\n" + "".join(
        ",".join(f'"{v}"' for v in r.values()) + "\n" for r in rows)
    api_app = {**{k: v for k, v in application.items() if k != "as_of"},
               "participant_id": PID + "-api", "refund_requested": False}
    opened: list[httpx.Client] = []
    with running_server(url, log_path=log, log_level="debug") as base:
        try:
            _pages_and_api(base, opened, tokens, application, csv, api_app)
        finally:
            for c in opened:
                c.close()


def _pages_and_api(base, opened, tokens, application, csv, api_app) -> None:
    def web(who: str) -> tuple[httpx.Client, str]:
        c = httpx.Client(base_url=base, timeout=60)
        opened.append(c)
        page = c.get("/analista/entrar")
        r = c.post("/analista/entrar", data={"name": who, "password": PASSWORDS[who],
                                             "csrf_token": csrf_of(page.text)})
        assert r.status_code == 303
        return c, csrf_of(c.get("/analista").text)

    # sign-in: a name and a password typed, both wrong
    with httpx.Client(base_url=base, timeout=60) as c:
        page = c.get("/analista/entrar")
        r = c.post("/analista/entrar", data={"name": MARK_NAME, "password": WRONG,
                                             "csrf_token": csrf_of(page.text)})
        assert r.status_code == 401
    ana, t = web("ana")
    for action in ("preview", "save"):
        r = ana.post("/analista/nuevo", data={**application, "action": action,
                                              "csrf_token": t})
        assert r.status_code in (200, 303), r.status_code
    case = int(r.headers["location"].split("/")[3].split("?")[0])
    r = ana.post("/analista/nuevo", data={**application, "birth_date": "17/07/1931x",
                                          "action": "preview", "csrf_token": t})
    assert r.status_code == 422
    for data in ({"participante": MARK_NAME}, {"participante": NOT_A_PID},
                 {"caso": "17071931"}, {"participante": PID},
                 {"participante": MARK_NAME + "\x00"}, {"caso": MARK_NAME}):
        r = ana.post("/analista/buscar", data={**data, "csrf_token": t})
        assert r.status_code < 500
    for action in ("preview", "save"):
        r = ana.post(f"/analista/casos/{case}/corregir", data={
            **application, "average_compensation": "48123.46", "reason": REASON,
            "action": action, "csrf_token": t})
        assert r.status_code in (200, 303), r.status_code
    case = int(r.headers["location"].split("/")[3].split("?")[0])
    r = ana.post(f"/analista/casos/{case}/corregir", data={
        **application, "reason": REASON + "\x07", "action": "save", "csrf_token": t})
    assert r.status_code == 422
    r = ana.post("/analista/importar", data={"csrf_token": t},
                 files={"archivo": (f"{MARK_NAME}.csv", csv.encode())})
    assert r.status_code == 200
    assert ana.post(f"/analista/casos/{case}/enviar",
                    data={"csrf_token": t}).status_code == 303
    sol, t = web("sol")
    r = sol.post(f"/analista/casos/{case}/devolver",
                 data={"reason": REASON + "\x07", "csrf_token": t})
    assert r.status_code == 422
    r = sol.post(f"/analista/casos/{case}/devolver",
                 data={"reason": REASON, "csrf_token": t})
    assert r.status_code == 303
    aud, t = web("aud")
    for data in ({"quien": MARK_NAME, "accion": NOTE, "desde": "17/07/1931",
                  "hasta": "17/07/1931"},
                 {"caso": "17071931"}, {"quien": MARK_NAME + "\x00"},
                 {"accion": REASON + "\x07"}, {"quien": MARK_NAME * 10},
                 {"caso": MARK_NAME}, {"desde": BIRTH + "x"},
                 {"hasta": "31/12/9999"}, {"verificar": "1"}):
        r = aud.post("/analista/auditoria", data={**data, "csrf_token": t})
        assert r.status_code in (200, 422), (data, r.status_code)
    # the API: every route that takes typed text
    h = {role: {"Authorization": f"Bearer {token}"} for role, token in tokens.items()}
    with httpx.Client(base_url=base, timeout=60) as c:
        assert c.post(f"{W}/preview", json=api_app, headers=h["analyst"]).status_code == 200
        assert c.post(f"{W}/preview", json={**api_app, "birth_date": "1931-07-32"},
                      headers=h["analyst"]).status_code == 422
        r = c.post(f"{W}/cases", json=api_app, headers=h["analyst"])
        assert r.status_code == 201, r.text
        api_case = r.json()["case_id"]
        assert c.post(f"{W}/cases", json={**api_app, "participant_id": MARK_NAME + "\x00"},
                      headers=h["analyst"]).status_code == 422
        r = c.post(f"{W}/imports", files={"file": (f"{MARK_NAME}.csv", csv.encode())},
                   headers=h["analyst"])
        assert r.status_code == 200
        r = c.post(f"{W}/cases/{api_case}/corrections", headers=h["analyst"],
                   json={**api_app, "reason": REASON})
        assert r.status_code == 201
        api_case = r.json()["case_id"]
        assert c.post(f"{W}/cases/{api_case}/corrections", headers=h["analyst"],
                      json={**api_app, "reason": REASON + "\x00"}).status_code == 422
        assert c.post(f"{W}/cases/{api_case}/submit",
                      headers=h["analyst"]).status_code == 200
        assert c.post(f"{W}/cases/{api_case}/return", headers=h["supervisor"],
                      json={"reason": REASON + "\x07"}).status_code == 422
        assert c.post(f"{W}/cases/{api_case}/return", headers=h["supervisor"],
                      json={"reason": REASON}).status_code == 200
        for params in ({"participant_id": MARK_NAME}, {"participant_id": NOT_A_PID},
                       {"case_id": "17071931"}, {"participant_id": MARK_NAME + "\x00"},
                       {"case_id": MARK_NAME}):
            assert c.get(f"{W}/search", params=params,
                         headers=h["analyst"]).status_code < 500
        for params in ({"who": MARK_NAME, "action": NOTE, "since": BIRTH,
                        "until": BIRTH + "T23:00:00"},
                       {"who": MARK_NAME + "\x00"}, {"action": REASON + "\x07"},
                       {"who": MARK_NAME * 10}, {"since": BIRTH + "x"},
                       {"case_id": "17071931"}, {"until": "9999-12-31T23:59:59-04:00"}):
            r = c.get(f"{W}/audit", params=params, headers=h["auditor"])
            assert r.status_code in (200, 422), (params, r.status_code)
        assert c.get(f"{W}/audit/verify", headers=h["auditor"]).status_code == 200
        for headers in ({}, h["auditor"], {"Authorization": "Bearer Zuleyka"}):
            assert c.get(f"{W}/cases/{MARK_NAME}", headers=headers).status_code < 500
        assert c.get("/api/v1/audit", params={"participant_id": MARK_NAME,
                                              "user": MARK_NAME},
                     headers=h["auditor"]).status_code == 200
        assert c.get("/api/v1/cases", params={"participant_id": NOT_A_PID},
                     headers=h["auditor"]).status_code == 200
