"""Abuse is bounded and bad input is a 4xx: per-client limits on public
requests and failed sign-ins (429 with Retry-After), repeated anonymous
failures collapsed in the audit trail with their count, and the same
answer on SQLite and PostgreSQL for ids and notes no database can store,
ids given with spaces, and ids or offsets beyond 2^63."""

from __future__ import annotations

import httpx
import pytest

from diferida.service.store import AuditQuery, NewEvent, Store
from diferida.service.testing import database_for_tests, running_server
from diferida.service.throttle import FailureDigest

PERSON = {"participant_id": "AB-1", "birth_date": "1970-05-10", "entry_date": "1988-07-01",
          "separation_date": "2010-06-30", "creditable_service_years": "22",
          "average_compensation": "30000.00", "group": "general", "refund_requested": False,
          "as_of": "2026-11-29", "lang": "en"}
CASES = "/api/v1/cases"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def svc(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    with database_for_tests(request.param, folder) as url:
        store = Store(url)
        store.upgrade()
        token = store.add_user("ana", "analyst")[1]
        auditor = store.add_user("aud", "auditor")[1]
        env = {"DIFERIDA_RATE_LIMIT_PUBLIC": "off", "DIFERIDA_RATE_LIMIT_AUTH_FAILURES": "off",
               "DIFERIDA_AUDIT_COLLAPSE_SECONDS": "0"}
        with running_server(url, log_path=folder / "server.log", env=env) as base, \
                httpx.Client(base_url=base, timeout=60) as http:
            yield http, {"Authorization": f"Bearer {token}"}, \
                {"Authorization": f"Bearer {auditor}"}, store
        store.dispose()


@pytest.mark.parametrize("body, field, code", [
    ({"participant_id": "x" * 201}, "participant_id", "too_long"),
    ({"participant_id": "NUL\x00ID"}, "participant_id", "nul_character"),
    ({"note": "a note\x00"}, "note", "nul_character"),
])
def test_what_no_database_stores_is_422_naming_the_field_on_both(svc, body, field, code):
    http, analyst, _, _ = svc
    r = http.post(CASES, json={**PERSON, **body}, headers=analyst)
    assert r.status_code == 422, r.text
    assert (field, code) in {(e["field"], e["code"]) for e in r.json()["errors"]}


def test_a_lone_surrogate_in_a_value_or_a_key_is_422(svc):
    http, analyst, _, _ = svc
    for path, headers in (("/api/v1/determinations", {}), (CASES, analyst)):
        for raw in (b'{"participant_id": "\\ud800"}', b'{"\\udfff": 1}'):
            r = http.post(path, content=raw, headers={**headers,
                                                      "content-type": "application/json"})
            assert r.status_code == 422 and r.json()["errors"][0]["code"] == "not_unicode"


def test_an_id_with_spaces_is_the_same_participant(svc):
    http, analyst, _, _ = svc
    first = http.post(CASES, json={**PERSON, "participant_id": "TRIM-1"}, headers=analyst)
    assert first.status_code == 201
    again = http.post(CASES, json={**PERSON, "participant_id": " TRIM-1 \t"}, headers=analyst)
    assert again.status_code == 409 and again.json()["errors"][0]["code"] == "case_exists"
    fixed = http.post(CASES, json={**PERSON, "participant_id": "TRIM-1 ",
                                   "supersedes": first.json()["id"]}, headers=analyst)
    assert fixed.status_code == 201 and fixed.json()["participant_id"] == "TRIM-1"
    assert fixed.json()["version"] == 2
    listed = http.get(CASES, params={"participant_id": "  TRIM-1 "}, headers=analyst).json()
    assert [c["version"] for c in listed["cases"]] == [1, 2]
    blank = http.post(CASES, json={**PERSON, "participant_id": "   "}, headers=analyst)
    assert blank.status_code == 422 and blank.json()["errors"][0]["field"] == "participant_id"
    assert http.get(CASES, params={"participant_id": "  "},
                    headers=analyst).status_code == 422


def test_ids_and_offsets_beyond_2_63_get_4xx_and_anonymous_attempts_are_audited(svc):
    http, analyst, auditor, _ = svc
    big = 2**63
    r = http.get(f"{CASES}/{big}")
    assert r.status_code == 401
    assert http.get(f"{CASES}/{big}", headers=analyst).status_code == 422
    assert http.get(f"{CASES}/{big}/reproduce", headers=analyst).status_code == 422
    assert http.get(CASES, params={"offset": big}, headers=analyst).status_code == 422
    assert http.get("/api/v1/audit", params={"offset": big}, headers=auditor).status_code == 422
    assert http.get(f"{CASES}/%00").status_code == 401
    assert http.get("/api/v1/audit", params={"since": "0001-01-01T00:00:00+05:00"},
                    headers=auditor).status_code == 422
    events = http.get("/api/v1/audit", params={"action": "auth.unauthorized", "limit": 1000},
                      headers=auditor).json()["events"]
    assert any(e["path"] == f"{CASES}/{big}" for e in events)
    # a path parameter that is no number: its route's template, not what was typed
    assert any(e["path"] == f"{CASES}/{{case_id}}" for e in events)


def _server(tmp_path, env):
    url = f"sqlite:///{tmp_path / 'cases.db'}"
    store = Store(url)
    store.upgrade()
    token = store.add_user("ana", "analyst")[1]
    return url, store, token, running_server(url, log_path=tmp_path / "server.log", env=env)


@pytest.mark.slow
def test_public_requests_beyond_the_limit_get_429_with_retry_after(tmp_path):
    url, store, token, server = _server(tmp_path, {"DIFERIDA_RATE_LIMIT_PUBLIC": "5/minute"})
    with server as base, httpx.Client(base_url=base) as http:
        codes = [http.post("/api/v1/determinations", json=PERSON).status_code
                 for _ in range(5)]
        assert codes == [200] * 5
        r = http.post("/api/v1/determinations", json=PERSON)
        assert r.status_code == 429 and r.json()["errors"][0]["code"] == "too_many_requests"
        assert 1 <= int(r.headers["retry-after"]) <= 60
        assert http.post("/calcular", data={"lang": "en"}).status_code == 429
        # the health check and signed-in work are not public requests
        assert http.get("/health").status_code == 200
        auth = {"Authorization": f"Bearer {token}"}
        assert http.post(CASES, json=PERSON, headers=auth).status_code == 201
        assert http.get("/api/v1/workbench/queues/drafts", headers=auth).status_code == 200
        assert http.get("/analista", follow_redirects=False).status_code != 429
    store.dispose()


@pytest.mark.slow
def test_failed_sign_ins_beyond_the_limit_get_429_and_every_one_is_counted(tmp_path):
    env = {"DIFERIDA_RATE_LIMIT_AUTH_FAILURES": "3/minute",
           "DIFERIDA_AUDIT_COLLAPSE_SECONDS": "3600"}
    url, store, token, server = _server(tmp_path, env)
    with server as base, httpx.Client(base_url=base) as http:
        codes = [http.get(f"{CASES}/{i}").status_code for i in range(1, 11)]
        assert codes == [401] * 3 + [429] * 7
        r = http.get(f"{CASES}/1", headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 429  # this client is refused before its token is read
    # on shutdown the open windows are written: the first of each kind in full,
    # then one event with how many more there were
    events = store.audit_events(AuditQuery(limit=1000))
    store.dispose()
    unauthorized = [e for e in events if e.action == "auth.unauthorized"]
    limited = [e for e in events if e.action == "auth.rate_limited"]
    assert len(unauthorized) == 2 and unauthorized[0].case_id == 1
    assert "2 more like this" in unauthorized[1].detail
    assert unauthorized[1].path == f"{CASES}/{{case_id}}"
    # 7 refused in the loop and 1 with a token: the first in full, 7 counted
    assert len(limited) == 2 and limited[0].status_code == 429
    assert limited[1].detail.startswith("too many failed attempts from this client; "
                                        "7 more like this")


def test_the_digest_writes_the_first_failure_and_then_the_count():
    now = [0.0]
    digest = FailureDigest(60, clock=lambda: now[0])
    event = NewEvent("auth.unauthorized", "GET", "/api/v1/cases/5", 401, detail="no token",
                     case_id=5)
    assert digest.note(event, "/api/v1/cases/{case_id}") == [event]
    for i in range(41):
        assert digest.note(NewEvent("auth.unauthorized", "GET", f"/api/v1/cases/{i}", 401,
                                    detail="no token"), "/api/v1/cases/{case_id}") == []
    other = NewEvent("auth.unauthorized", "GET", "/api/v1/audit", 401, detail="no token")
    assert digest.note(other, "/api/v1/audit") == [other]
    now[0] = 61.0
    summary, = digest.flush()
    assert summary.action == "auth.unauthorized" and summary.status_code == 401
    assert summary.detail.startswith("no token; 41 more like this")
    assert digest.flush() == [] and digest.flush(force=True) == []
    # an event that could not be written is handed out again, not lost
    digest.restore(summary)
    assert digest.flush() == [summary]
    assert FailureDigest(0).note(event, "x") == [event]


def test_counting_a_request_starts_no_thread_and_expired_counts_are_swept(monkeypatch):
    import threading
    import time

    from limits import parse

    from diferida.service.throttle import Limiter

    limiter = Limiter(parse("3/second"), parse("2/minute"))
    started: list[threading.Thread] = []
    real_start = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start",
                        lambda self: (started.append(self), real_start(self))[1])
    assert [limiter.hit_public("10.0.0.1") for _ in range(3)] == [None, None, None]
    assert limiter.hit_public("10.0.0.1") == 1  # over the limit: wait a second
    limiter.hit_auth_failure("10.0.0.2")
    assert started == []
    store = limiter._limiter.storage
    assert store.events  # the counts are held...
    later = time.time() + 120
    monkeypatch.setattr(time, "time", lambda: later)
    store._next_sweep = 0.0  # a sweep is due
    assert limiter.hit_public("10.0.0.3") is None
    # ...and swept once they are past their window: only the newest remains
    assert [k for k, v in store.events.items() if v] == [
        k for k in store.events if "10.0.0.3" in k]
    assert started == []
