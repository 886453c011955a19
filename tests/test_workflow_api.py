"""The workbench's API (/api/v1/workbench): a role matrix over every route
(anonymous, a disabled user, analyst, supervisor, auditor), refusals in the
API's one error shape (never a 500), the issued PDF served byte for byte
(also by /api/v1/cases/{id}/print), OpenAPI documentation, and no personal
data in any line of the server's log."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

import httpx
import pytest
from fastapi.testclient import TestClient

from diferida.server import create_app
from diferida.service import workflow as wf
from diferida.service.settings import Settings
from diferida.service.store import Store
from diferida.service.testing import running_server

from .workbench_helpers import signer

AS_OF = date(2026, 11, 29)
W = "/api/v1/workbench"
APPLICATION = {"participant_id": "A-0", "birth_date": "1970-05-10", "entry_date": "1988-07-01",
               "separation_date": "2010-06-30", "creditable_service_years": "22",
               "average_compensation": "30000.00", "group": "general",
               "refund_requested": False, "name": "Juana del Pueblo",
               "letter_lang": "es", "address": "Calle Luna 12\nSan Juan, PR 00901",
               "application_date": "2026-10-01"}
ROLES = ("anonymous", "disabled", "analyst", "supervisor", "auditor")
WHO = {"analyst": "ana", "supervisor": "pedro", "auditor": "ines", "disabled": "old"}


@dataclass
class Office:
    client: TestClient
    store: Store
    tokens: dict[str, str]
    users: dict[str, object]
    issued: int
    n: int = 0

    def headers(self, role: str) -> dict[str, str]:
        return {} if role == "anonymous" else {
            "Authorization": f"Bearer {self.tokens[WHO[role]]}"}

    def case(self, state: str = "draft") -> int:
        """A fresh case of ana's, in `state`."""
        self.n += 1
        v = wf.open_draft(self.store, self.users["ana"],
                          {**APPLICATION, "participant_id": f"A-{self.n}"}, lang="es",
                          as_of=AS_OF)
        if state == "submitted":
            wf.submit(self.store, self.users["ana"], v.case_id)
        return v.case_id


@pytest.fixture(scope="module")
def office(tmp_path_factory):
    db = tmp_path_factory.mktemp("workbench") / "cases.db"
    # the matrix makes many refused calls from one client: no 429 in between
    app = create_app(Settings(database_url=f"sqlite:///{db}", rate_limit_auth_failures="off"))
    with TestClient(app) as client:
        store: Store = app.state.store
        tokens, users = {}, {}
        for name, role in (("ana", "analyst"), ("sofia", "supervisor"),
                           ("pedro", "supervisor"), ("ines", "auditor"), ("old", "analyst")):
            users[name], tokens[name] = store.add_user(
                name, role, **({} if role == "auditor" else signer(name)))
        store.disable_user("old")
        issued = wf.open_draft(store, users["ana"], {**APPLICATION, "participant_id": "A-ISS"},
                               lang="es", as_of=AS_OF).case_id
        wf.submit(store, users["ana"], issued)
        wf.approve(store, users["sofia"], issued)
        yield Office(client, store, tokens, users, issued)


CSV = ("participant_id,birth_date,entry_date,separation_date,creditable_service_years,"
       "average_compensation,group,refund_requested,name\n"
       "{pid},1970-05-10,1988-07-01,2010-06-30,22,30000.00,general,false,Ana Uno\n")

# route: (how to call it, the status each role gets)
Call = Callable[[Office, dict[str, str]], httpx.Response]


def _post_case(o: Office, h):
    o.n += 1
    return o.client.post(f"{W}/cases", json={**APPLICATION, "participant_id": f"N-{o.n}"},
                         headers=h)


def _import(o: Office, h):
    o.n += 1
    return o.client.post(f"{W}/imports", headers=h, files={
        "file": ("solicitudes.csv", CSV.format(pid=f"I-{o.n}").encode())})


ROUTES: dict[str, tuple[Call, tuple[int, ...]]] = {
    "POST preview": (lambda o, h: o.client.post(f"{W}/preview", json=APPLICATION, headers=h),
                     (401, 401, 200, 200, 200)),
    "POST cases": (_post_case, (401, 401, 201, 201, 403)),
    "POST imports": (_import, (401, 401, 200, 200, 403)),
    "POST corrections": (lambda o, h: o.client.post(
        f"{W}/cases/{o.case()}/corrections", headers=h,
        json={**APPLICATION, "creditable_service_years": "23", "reason": "Años revisados"}),
        (401, 401, 201, 201, 403)),
    "POST submit": (lambda o, h: o.client.post(f"{W}/cases/{o.case()}/submit", headers=h),
                    (401, 401, 200, 200, 403)),
    "POST approve": (lambda o, h: o.client.post(f"{W}/cases/{o.case('submitted')}/approve",
                                                headers=h),
                     (401, 401, 403, 200, 403)),
    "POST return": (lambda o, h: o.client.post(f"{W}/cases/{o.case('submitted')}/return",
                                               json={"reason": "Revise"}, headers=h),
                    (401, 401, 403, 200, 403)),
    "GET queue": (lambda o, h: o.client.get(f"{W}/queues/drafts", headers=h),
                  (401, 401, 200, 200, 200)),
    "GET search": (lambda o, h: o.client.get(f"{W}/search", params={"participant_id": "A-ISS"},
                                             headers=h),
                   (401, 401, 200, 200, 200)),
    "GET case": (lambda o, h: o.client.get(f"{W}/cases/{o.issued}", headers=h),
                 (401, 401, 200, 200, 200)),
    "GET history": (lambda o, h: o.client.get(f"{W}/cases/{o.issued}/history", headers=h),
                    (401, 401, 200, 200, 200)),
    "GET letter": (lambda o, h: o.client.get(f"{W}/cases/{o.issued}/letter", headers=h),
                   (401, 401, 200, 200, 200)),
    "GET audit": (lambda o, h: o.client.get(f"{W}/audit", headers=h),
                  (401, 401, 403, 403, 200)),
    "GET audit verify": (lambda o, h: o.client.get(f"{W}/audit/verify", headers=h),
                         (401, 401, 403, 403, 200)),
    "GET export": (lambda o, h: o.client.get(f"{W}/exports/cases.csv", headers=h),
                   (401, 401, 403, 200, 200)),
}


def test_the_matrix_covers_every_workbench_route(office):
    paths = {(m, r.path) for r in office.client.app.state.route_table if r.path
             .startswith(W) for m in r.methods}
    assert len(paths) == len(ROUTES)


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("route", ROUTES)
def test_each_role_gets_what_its_role_allows_on_every_route(office, route, role):
    call, statuses = ROUTES[route]
    r = call(office, office.headers(role))
    expected = statuses[ROLES.index(role)]
    assert r.status_code == expected, r.text
    if expected >= 400:
        errors = r.json()["errors"]
        assert errors and all(e["message"] for e in errors)
        if expected == 401:
            assert r.headers["www-authenticate"] == "Bearer"


def test_refusals_are_answers_with_a_message_never_a_500(office):
    h = office.headers("supervisor")
    own = office.client.post(f"{W}/cases", json={**APPLICATION, "participant_id": "OWN-1"},
                             headers=h).json()["case_id"]
    assert office.client.post(f"{W}/cases/{own}/submit", headers=h).status_code == 200
    r = office.client.post(f"{W}/cases/{own}/approve", headers=h, params={"lang": "en"})
    assert r.status_code == 403
    assert r.json()["errors"][0]["code"] == "own_case"
    assert "Another supervisor" in r.json()["errors"][0]["message"]
    es = office.client.post(f"{W}/cases/{own}/approve", headers=h)
    assert "Otro supervisor" in es.json()["errors"][0]["message"]
    answers = [
        office.client.post(f"{W}/cases/{own}/return", json={"reason": ""}, headers=h),
        office.client.post(f"{W}/cases/{own}/return", json=["x"], headers=h),
        office.client.post(f"{W}/cases/{own}/return", content=b"{", headers=h),
        office.client.post(f"{W}/cases/999999/submit", headers=h),
        office.client.post(f"{W}/cases/{office.issued}/submit", headers=h),
        office.client.post(f"{W}/cases", json={**APPLICATION, "birth_date": "1970-02-30",
                                               "participant_id": "BAD-1"}, headers=h),
        office.client.post(f"{W}/cases", json={**APPLICATION, "participant_id": "A-ISS"},
                           headers=h),
        office.client.post(f"{W}/imports", headers=h, files={"file": ("x.pdf", b"%PDF")}),
        office.client.get(f"{W}/queues/mine", headers=h),
        office.client.get(f"{W}/search", headers=h),
        office.client.get(f"{W}/cases/0", headers=h),
    ]
    assert [a.status_code for a in answers] == [422, 422, 422, 404, 409, 422, 409, 422, 422,
                                                422, 422]
    assert all(a.json()["errors"][0]["message"] for a in answers)


def test_an_approved_version_is_printed_as_the_letter_issued_byte_for_byte(office):
    h = office.headers("auditor")
    v = office.client.get(f"{W}/cases/{office.issued}", headers=h).json()
    letter = office.client.get(f"{W}/cases/{office.issued}/letter", headers=h)
    assert letter.headers["content-type"] == "application/pdf"
    assert hashlib.sha256(letter.content).hexdigest() == v["letter_sha256"]
    printed = office.client.get(f"/api/v1/cases/{office.issued}/print", headers=h)
    assert printed.headers["content-type"] == "application/pdf"
    assert printed.content == letter.content
    # a version not approved prints as its draft letter, a correction with its reason
    draft = office.case()
    page = office.client.get(f"/api/v1/cases/{draft}/print", headers=h)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    v2 = wf.correct(office.store, office.users["ana"], draft, APPLICATION,
                    reason="Dirección corregida", lang="es", as_of=AS_OF)
    page = office.client.get(f"/api/v1/cases/{v2.case_id}/print", headers=h)
    assert page.status_code == 200 and "Dirección corregida" in page.text


def test_the_openapi_document_describes_every_workbench_route(office):
    doc = office.client.get("/openapi.json").json()
    ops = {(m.upper(), p) for p, item in doc["paths"].items() if p.startswith(W) for m in item}
    assert len(ops) == len(ROUTES)
    for path, item in doc["paths"].items():
        if path.startswith(W):
            for op in item.values():
                assert op["description"] or op["summary"]
                assert {"401", "403"} <= set(op["responses"])


PID = "MRKWB-7Q3Z"
NAME = "Zacarias Marcador Ruiz"
ADDRESS = "Calle Marcadora 771"
BIRTH = "1961-07-19"
PAY = "48123.45"
MARKERS = (PID, NAME, "Zacarias", "Marcador", ADDRESS, "Marcadora", BIRTH, PAY, "48123",
           "1961-07")


@pytest.mark.slow
def test_no_name_address_birth_date_or_amount_reaches_the_server_log(tmp_path):
    log = tmp_path / "server.log"
    url = f"sqlite:///{tmp_path / 'cases.db'}"
    store = Store(url)
    store.upgrade()
    tokens = {n: store.add_user(n, r, **({} if r == "auditor" else signer(n)))[1]
              for n, r in (("ana", "analyst"), ("sofia", "supervisor"), ("ines", "auditor"))}
    store.dispose()
    person = {**APPLICATION, "participant_id": PID, "name": NAME, "birth_date": BIRTH,
              "letter_lang": "es", "address": f"{ADDRESS}\nSan Juan", "average_compensation": PAY,
              "note": f"nota de {NAME}"}
    csv = ("participant_id,birth_date,entry_date,separation_date,creditable_service_years,"
           "average_compensation,group,refund_requested,name,address\n"
           f"{PID}-2,{BIRTH},1988-07-01,2010-06-30,22,{PAY},general,false,{NAME},{ADDRESS}\n"
           f"{PID}-3,1961-07-32,1988-07-01,2010-06-30,22,{PAY},general,false,{NAME},x\n")
    with running_server(url, log_path=log, log_level="debug") as base, \
            httpx.Client(base_url=base, timeout=60) as c:
        ana, sofia, ines = ({"Authorization": f"Bearer {tokens[n]}"}
                            for n in ("ana", "sofia", "ines"))
        assert c.post(f"{W}/preview", json=person, headers=ana).status_code == 200
        assert c.post(f"{W}/preview", json={**person, "birth_date": "1961-07-32"},
                      headers=ana).status_code == 422
        r = c.post(f"{W}/cases", json=person, headers=ana)
        assert r.status_code == 201, r.text
        case = r.json()["case_id"]
        assert c.post(f"{W}/cases", json={**person, "name": 7}, headers=ana).status_code == 422
        r = c.post(f"{W}/imports", files={"file": ("a.csv", csv.encode())}, headers=ana)
        assert r.status_code == 200 and r.json()["rows_rejected"] == 1
        r = c.post(f"{W}/cases/{case}/corrections", headers=ana, json={
            **person, "average_compensation": "48123.46", "reason": f"dijo {NAME}"})
        assert r.status_code == 201
        case = r.json()["case_id"]
        assert c.post(f"{W}/cases/{case}/submit", headers=ana).status_code == 200
        assert c.post(f"{W}/cases/{case}/approve", headers=ana).status_code == 403
        assert c.post(f"{W}/cases/{case}/return", headers=sofia,
                      json={"reason": f"falta {ADDRESS}"}).status_code == 200
        r = c.post(f"{W}/cases/{case}/corrections", headers=ana,
                   json={**person, "reason": "ok"})
        case = r.json()["case_id"]
        assert c.post(f"{W}/cases/{case}/submit", headers=ana).status_code == 200
        assert c.post(f"{W}/cases/{case}/approve", headers=sofia).status_code == 200
        for path in (f"{W}/queues/issued", f"{W}/cases/{case}", f"{W}/cases/{case}/history",
                     f"{W}/cases/{case}/letter", f"/api/v1/cases/{case}/print",
                     f"{W}/exports/cases.csv", f"{W}/exports/events.xlsx",
                     f"{W}/audit/verify"):
            assert c.get(path, headers=ines).status_code == 200, path
        assert c.get(f"{W}/search", params={"participant_id": PID},
                     headers=ines).status_code == 200
        assert c.get(f"{W}/audit", params={"who": NAME}, headers=ines).status_code == 200
    text = log.read_text("utf-8", errors="replace")
    assert f"POST {W}/cases" in text and "/approve" in text
    for marker in MARKERS:
        assert marker not in text, marker
