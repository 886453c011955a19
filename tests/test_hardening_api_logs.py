"""No personal data in any log: marker values (an id, a person's name, a
birth date, a separation date, a compensation) are sent through every
endpoint, every web page and every link or form those pages offer, in
bodies and in query strings, good and bad; the server's whole output
(uvicorn's access and error loggers, the app's own) is then searched for
them. And one unexpected error is one line; a client that goes away is not
an error."""

from __future__ import annotations

import re
import socket
from html.parser import HTMLParser
from urllib.parse import urlsplit

import httpx
import pytest

from diferida.service.store import Store
from diferida.service.testing import running_server

PID = "MRKPID-7Q3Z"
NAME = "Zacarias Marcador Ruiz"
BIRTH = "1961-07-19"
SEPARATION = "2009-03-17"
PAY = "48123.45"
MARKERS = (PID, NAME, "Zacarias", "Marcador", BIRTH, SEPARATION, PAY, "48123",
           "1961-07", "2009-03-17")
PERSON = {"participant_id": PID, "birth_date": BIRTH, "entry_date": "1985-02-01",
          "separation_date": SEPARATION, "creditable_service_years": "22",
          "average_compensation": PAY, "group": "general", "refund_requested": "false"}


class Forms(HTMLParser):
    """Every form of a page with its fields, and every link."""

    def __init__(self):
        super().__init__()
        self.forms: list[dict] = []
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.forms.append({"action": a.get("action"), "method": a.get("method", "get"),
                               "fields": {}, "buttons": []})
        elif tag == "input" and self.forms and a.get("name"):
            if a.get("type") not in ("checkbox", "radio") or "checked" in a:
                self.forms[-1]["fields"][a["name"]] = a.get("value") or ""
        elif tag == "button" and self.forms and a.get("name"):
            self.forms[-1]["buttons"].append((a["name"], a.get("value", "")))
        for key in ("href", "src", "action", "formaction"):
            if a.get(key):
                self.links.append(a[key])


def _redirected(c: httpx.Client, r: httpx.Response) -> tuple[httpx.Response, int]:
    """Follow a post/redirect/get answer; its address carries no marker."""
    hops = 0
    while r.status_code == 303:
        location = r.headers["location"]
        assert not any(m in location for m in MARKERS), location
        r = c.get(location)
        hops += 1
    return r, hops


def _follow_everything(c: httpx.Client, html: str, seen: set, depth: int = 0,
                       skip: tuple[str, ...] = ()) -> int:
    """Submit every form and open every same-site link of a page, recursively
    (bounded); returns how many requests were made. No URL a page offers may
    carry a marker. Forms and links to the paths of `skip` are left alone
    (signing out, which would end the walk)."""
    page = Forms()
    page.feed(html)
    for link in page.links:
        assert not any(m in link for m in MARKERS), link
    sent = 0
    if depth > 3:
        return sent
    for form in page.forms:
        presses = form["buttons"] or [None]
        for press in presses:
            data = dict(form["fields"])
            if press:
                data[press[0]] = press[1]
            key = (form["action"], tuple(sorted(data.items())))
            if key in seen or form["action"] is None or form["action"] in skip:
                continue
            seen.add(key)
            if form["method"].lower() == "post":
                r = c.post(form["action"], data=data)
            else:
                r = c.get(form["action"], params=data)
            sent += 1
            r, hops = _redirected(c, r)
            sent += hops
            assert r.status_code < 500
            if r.headers.get("content-type", "").startswith("text/html"):
                sent += _follow_everything(c, r.text, seen, depth + 1, skip)
    for link in page.links:
        parts = urlsplit(link)
        if parts.netloc or not parts.path.startswith("/") or link in seen or \
                parts.path in skip:
            continue
        seen.add(link)
        assert c.get(link).status_code < 500
        sent += 1
    return sent


@pytest.mark.slow
def test_marker_values_sent_everywhere_never_reach_the_server_output(tmp_path):
    log = tmp_path / "server.log"
    url = f"sqlite:///{tmp_path / 'cases.db'}"
    store = Store(url)
    store.upgrade()
    analyst = store.add_user("ana", "analyst")[1]
    auditor = store.add_user("aud", "auditor")[1]
    store.dispose()
    as_analyst = {"Authorization": f"Bearer {analyst}"}
    as_auditor = {"Authorization": f"Bearer {auditor}"}
    bad = {**PERSON, "birth_date": BIRTH.replace("-19", "-39")}  # not a date, still a marker
    csv = ",".join(PERSON) + "\n" + ",".join(PERSON.values()) + "\n" + \
        ",".join(bad.values()).replace(PID, PID + "-2") + "\n"
    sent = 0
    with running_server(url, log_path=log, log_level="debug") as base, \
            httpx.Client(base_url=base, timeout=60) as c:
        api = {**PERSON, "refund_requested": False}
        calls = [
            c.post("/api/v1/determinations", json=api),
            c.post("/api/v1/determinations", json={**api, "birth_date": bad["birth_date"]}),
            c.post("/api/v1/determinations", content=f'{{"participant_id": "{PID}", '.encode()),
            c.post("/api/v1/determinations", content=(
                f'{{"participant_id": "{PID}\\ud800", "birth_date": "{BIRTH}"}}').encode(),
                headers={"content-type": "application/json"}),
            c.post(f"/api/v1/determinations?participant_id={PID}&birth_date={BIRTH}", json=api),
            c.post("/api/v1/batches", files={"file": ("people.csv", csv.encode())}),
            c.post(f"/api/v1/batches?name={NAME}", files={"file": (f"{PID}.csv", b"\x00\x01")}),
            c.post("/api/v1/cases", json=api, headers=as_analyst),
            c.post("/api/v1/cases", json={**api, "note": NAME}, headers=as_analyst),
            c.post("/api/v1/cases", json={**api, "birth_date": bad["birth_date"]},
                   headers=as_analyst),
            c.post("/api/v1/cases", json={**api, "participant_id": PID + "\x00"},
                   headers=as_analyst),
            c.post("/api/v1/cases", json=api),
            c.post("/api/v1/cases", json=api, headers={"Authorization": f"Bearer {PID}"}),
            c.get("/api/v1/cases", params={"participant_id": PID}, headers=as_analyst),
            c.get("/api/v1/cases", params={"participant_id": PID}),
            c.get("/api/v1/cases", params={"participant_id": PID, "offset": 2**63}),
            c.get("/api/v1/cases/1", headers=as_auditor),
            c.get("/api/v1/cases/1/reproduce", headers=as_auditor),
            c.get(f"/api/v1/cases/{PID}", headers=as_auditor),
            c.get("/api/v1/audit", params={"participant_id": PID, "user": NAME},
                  headers=as_auditor),
            c.get("/api/v1/audit", params={"participant_id": PID}, headers=as_analyst),
            c.get(f"/api/v1/nothing/{PID}", params={"birth_date": BIRTH}),
            c.get("/", params={**PERSON, "lang": "en"}),
            c.get("/determinacion/imprimir", params=PERSON),
        ]
        sent += len(calls)
        assert all(r.status_code < 500 for r in calls), [r.status_code for r in calls]
        # the web pages, and everything they link to or post
        for lang in ("es", "en"):
            for path in ("/calcular", "/calcular/fragmento", "/determinacion/imprimir"):
                r = c.post(path, data={**PERSON, "participant_id": NAME, "lang": lang})
                r, hops = _redirected(c, r)  # an answer has a page of its own
                assert r.status_code == 200 and NAME in r.text
                sent += 1 + hops + _follow_everything(c, r.text, set())
            r = c.post("/calcular", data={**bad, "participant_id": NAME, "lang": lang})
            assert r.status_code == 422
            sent += 1 + _follow_everything(c, r.text, set())
    text = log.read_text("utf-8", errors="replace")
    # the log was captured: requests are in it, with their paths
    assert 'POST /api/v1/determinations HTTP/1.1" 200' in text
    assert 'POST /determinacion/imprimir HTTP/1.1" 303' in text
    assert 'GET /resultado/{token}/imprimir HTTP/1.1" 200' in text  # the route, no token
    assert "GET /api/v1/cases HTTP/1.1" in text
    hits = [line for line in text.splitlines() if any(m in line for m in MARKERS)]
    assert hits == [], hits
    # no query string at all in the access log
    assert not re.search(r'"(GET|POST) [^" ]*\?', text)
    assert sent > 40


def test_the_printable_page_and_language_switch_are_posted_not_linked(tmp_path):
    from fastapi.testclient import TestClient

    from diferida.server import create_app
    from diferida.service.settings import Settings

    app = create_app(Settings(database_url=f"sqlite:///{tmp_path / 'c.db'}"))
    with TestClient(app) as c:
        # post/redirect/get: the answer's address is a random token
        answer = c.post("/calcular", data={**PERSON, "participant_id": NAME},
                        follow_redirects=False)
        assert answer.status_code == 303
        assert not any(m in answer.headers["location"] for m in MARKERS)
        page = c.get(answer.headers["location"]).text
        forms = Forms()
        forms.feed(page)
        assert not any(m in link for link in forms.links for m in MARKERS)
        printing = [link for link in forms.links if link.endswith("/imprimir")]
        assert printing == [answer.headers["location"] + "/imprimir"]
        printed = c.get(printing[0])
        assert printed.status_code == 200 and NAME in printed.text
        forms = Forms()
        forms.feed(printed.text)
        actions = {(f["action"], f["method"]) for f in forms.forms}
        # back to the calculator and the language switch are posted forms
        assert actions == {("/calcular", "post"), ("/determinacion/imprimir", "post")}
        assert not any(m in link for link in forms.links for m in MARKERS)
        # a URL with a person's details is not read: the calculator is empty
        r = c.get("/", params={**PERSON, "lang": "en"})
        assert r.status_code == 200 and BIRTH not in r.text and 'lang="en"' in r.text
        # a GET of the posted-only printout goes back to the empty calculator
        r = c.get("/determinacion/imprimir", params=PERSON, follow_redirects=False)
        assert r.status_code == 303 and not any(m in r.headers["location"] for m in MARKERS)
        r = c.get(r.headers["location"])
        assert r.status_code == 200 and BIRTH not in r.text


@pytest.mark.slow
def test_an_unexpected_error_is_one_line_and_a_gone_client_is_not_an_error(tmp_path):
    log = tmp_path / "server.log"
    url = f"sqlite:///{tmp_path / 'cases.db'}"
    with running_server(url, log_path=log, log_level="info") as base:
        host, port = urlsplit(base).hostname, urlsplit(base).port
        # a body announced and never sent: the client hangs up half-way
        for _ in range(5):
            with socket.create_connection((host, port)) as s:
                s.sendall(b"POST /api/v1/determinations HTTP/1.1\r\nHost: x\r\n"
                          b"Content-Type: application/json\r\nContent-Length: 5000\r\n\r\n"
                          b'{"participant_id": "' + PID.encode())
        httpx.get(f"{base}/health")
    text = log.read_text("utf-8", errors="replace")
    assert "Traceback" not in text and "ERROR" not in text
    assert text.count("client disconnected during POST /api/v1/determinations") == 5
    assert PID not in text


def test_an_exception_reaching_uvicorn_is_logged_as_one_line_without_its_message():
    import logging

    from diferida.service.logs import OneLineErrors

    def boom():
        raise ValueError(f"cannot handle {BIRTH}")

    try:
        boom()
    except ValueError:
        import sys

        record = logging.LogRecord("uvicorn.error", logging.ERROR, __file__, 1,
                                   "Exception in ASGI application\n", None, sys.exc_info())
    assert OneLineErrors().filter(record)
    line = logging.Formatter().format(record)
    assert "\n" not in line and BIRTH not in line
    assert "ValueError" in line and "test_hardening_api_logs.py" in line


@pytest.mark.slow
def test_marker_values_through_the_workbench_never_reach_the_server_output(tmp_path):
    """The workbench (/analista): sign-in (a wrong password and a right one),
    an application with a person's name, address and dates, its preview, its
    save, an import with a bad row, a search, every form and link of every
    page reached (submit, approve, return, correct, the letters, the audit
    and its exports), as each role. No marker, and no password, in any line."""
    from .workbench_helpers import PASSWORDS, add_users, csrf_of

    log = tmp_path / "server.log"
    url = f"sqlite:///{tmp_path / 'cases.db'}"
    store = Store(url)
    store.upgrade()
    add_users(store)
    store.dispose()
    wrong = "MRK-WRONG-PASSWORD-51"
    secrets_ = (*MARKERS, "Calle Marcador", "00987", wrong, *PASSWORDS.values())
    application = {"participant_id": PID, "name": NAME, "letter_lang": "es",
                   "address": "Calle Marcador 7\nPR 00987",
                   "application_date": "2026-11-02", "note": NAME, "birth_date": BIRTH,
                   "entry_date": "1985-02-01", "separation_date": SEPARATION,
                   "creditable_service_years": "22", "average_compensation": PAY,
                   "group": "general", "refund_requested": "false", "as_of": "2026-11-29"}
    rows = [application, {**application, "participant_id": PID + "-2",
                          "birth_date": BIRTH.replace("-19", "-39")}]
    csv = ",".join(application) + "\n" + "".join(
        ",".join(f'"{v}"' for v in r.values()) + "\n" for r in rows)
    sent = 0
    skip = ("/analista/salir",)
    with running_server(url, log_path=log, log_level="debug") as base:
        for who in ("ana", "sol", "aud"):
            with httpx.Client(base_url=base, timeout=60) as c:
                page = c.get("/analista/entrar")
                r = c.post("/analista/entrar", data={"name": who, "password": wrong,
                                                     "csrf_token": csrf_of(page.text)})
                assert r.status_code == 401
                r = c.post("/analista/entrar", data={"name": who, "password": PASSWORDS[who],
                                                     "csrf_token": csrf_of(r.text)})
                r, hops = _redirected(c, r)
                assert r.status_code == 200
                token = csrf_of(r.text)
                sent += 3 + hops + _follow_everything(c, r.text, set(), skip=skip)
                for action in ("preview", "save"):
                    r = c.post("/analista/nuevo", data={**application, "action": action,
                                                        "csrf_token": token})
                    r, hops = _redirected(c, r)
                    assert r.status_code < 500
                    sent += 1 + hops + _follow_everything(c, r.text, set(), skip=skip)
                r = c.post("/analista/nuevo", data={**application, "birth_date": "19/07/1961x",
                                                    "action": "preview", "csrf_token": token})
                assert r.status_code in (403, 422)
                r = c.post("/analista/importar", data={"csrf_token": token},
                           files={"archivo": (f"{PID}.csv", csv.encode())})
                assert r.status_code < 500
                r = c.post("/analista/buscar", data={"participante": PID, "csrf_token": token})
                assert r.status_code == 200
                r = c.post("/analista/buscar", data={"participante": NAME, "csrf_token": token})
                assert r.status_code == 200
                r = c.post("/analista/auditoria", data={"quien": NAME, "caso": PID,
                                                        "desde": BIRTH, "csrf_token": token})
                assert r.status_code < 500
                sent += 5 + _follow_everything(c, r.text, set(), skip=skip)
                r = c.post("/analista/salir", data={"csrf_token": token})
                assert r.status_code == 303
    text = log.read_text("utf-8", errors="replace")
    assert 'POST /analista/nuevo HTTP/1.1" 303' in text
    assert "GET /analista/casos/" in text and "POST /analista/entrar" in text
    hits = [line for line in text.splitlines() if any(m in line for m in secrets_)]
    assert hits == [], hits
    assert not re.search(r'"(GET|POST) [^" ]*\?', text)
    assert sent > 40
    # nor in any column of the audit trail: what was typed into a search or a
    # filter is recorded as its kind; the case's participant id is there by
    # design (who read which case), nothing else that was typed
    from sqlalchemy import select

    from diferida.service.store.models import AuditEvent

    store = Store(url)
    try:
        with store.engine.connect() as conn:
            rows = conn.execute(select(AuditEvent.__table__)).all()
    finally:
        store.dispose()
    typed = [m for m in secrets_ if m != PID]
    # not the chain's hexadecimal hashes, where a marker of digits ("48123",
    # "00987") stands by chance in about one run of two hundred
    hashes = ("prev_hash", "row_hash")
    assert [r for r in rows if any(m in str(v) for k, v in r._mapping.items()
                                   if k not in hashes for m in typed)] == []
    assert len(rows) > 40
