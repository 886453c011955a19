"""Recorded cases and the audit trail through real HTTP, on SQLite and on
PostgreSQL: append-only versions, reproduction, roles, and a trail of who
did what."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta

import httpx
import pytest

import diferida
from diferida.service.store import NewEvent, Store
from diferida.service.testing import database_for_tests, running_server

from .worked_examples import ONE

AS_OF = "2026-11-29"
EXAMPLE_1 = {"participant_id": "P-1", "birth_date": "1970-05-10", "entry_date": "1988-07-01",
             "separation_date": "2010-06-30", "creditable_service_years": "22",
             "average_compensation": "30000.00", "group": "general",
             "refund_requested": False, "as_of": AS_OF, "lang": "en"}
CASES = "/api/v1/cases"


class Service:
    def __init__(self, base: str, store: Store):
        self.base, self.store = base, store
        self.tokens = {}
        for name, role in (("ana", "analyst"), ("beto", "analyst"), ("aud", "auditor")):
            self.tokens[name] = store.add_user(name, role)[1]
        self.http = httpx.Client(base_url=base, timeout=60)

    def as_user(self, name: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[name]}"} if name else {}

    def post(self, name, body, **kw):
        return self.http.post(CASES, json=body, headers=self.as_user(name), **kw)

    def get(self, name, path, **kw):
        return self.http.get(path, headers=self.as_user(name), **kw)

    def audit(self, **params):
        r = self.get("aud", "/api/v1/audit", params={"limit": 1000, **params})
        assert r.status_code == 200, r.text
        return r.json()["events"]


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def svc(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    with database_for_tests(request.param, folder) as url:
        store = Store(url)
        store.upgrade()
        # every refused attempt written on its own, none refused for its rate:
        # collapsing and limits are tested in test_hardening_api_abuse.py
        with running_server(url, log_path=folder / "server.log", env={
                "DIFERIDA_AUDIT_COLLAPSE_SECONDS": "0",
                "DIFERIDA_RATE_LIMIT_AUTH_FAILURES": "off"}) as base:
            s = Service(base, store)
            yield s
            s.http.close()
        store.dispose()


def new_pid(prefix: str = "P") -> str:
    new_pid.n = getattr(new_pid, "n", 0) + 1
    return f"{prefix}-{new_pid.n}"


def test_an_analyst_records_a_case_and_the_server_evaluates_it_itself(svc):
    pid = new_pid()
    r = svc.post("ana", {**EXAMPLE_1, "participant_id": pid, "note": "first look"})
    assert r.status_code == 201, r.text
    case = r.json()
    assert r.headers["location"] == f"/api/v1/cases/{case['id']}"
    assert (case["participant_id"], case["version"], case["supersedes"]) == (pid, 1, None)
    assert case["author"] == "ana" and case["current"] and case["note"] == "first look"
    inputs = {k: v for k, v in EXAMPLE_1.items() if k != "lang"} | {"participant_id": pid}
    expected = diferida.evaluate(inputs, lang="en").to_dict()
    assert case["result"] == expected and case["inputs"] == inputs
    assert case["result"]["annual_amount"] == ONE.annual_text
    assert case["rules_version"] == diferida.load_rules().version
    assert datetime.fromisoformat(case["created_at"]) > datetime.now(UTC) - timedelta(minutes=5)
    assert svc.get("aud", f"{CASES}/{case['id']}").json() == case


def test_a_result_sent_by_the_client_is_not_accepted(svc):
    r = svc.post("ana", {**EXAMPLE_1, "participant_id": new_pid(), "status": "eligible",
                         "annual_amount": "99999.00"})
    assert r.status_code == 422
    assert {p["field"] for p in r.json()["errors"]} == {"status", "annual_amount"}


def test_a_correction_is_a_new_version_that_points_to_the_one_it_replaces(svc):
    pid = new_pid()
    first = svc.post("ana", {**EXAMPLE_1, "participant_id": pid}).json()
    second = svc.post("beto", {**EXAMPLE_1, "participant_id": pid, "supersedes": first["id"],
                               "creditable_service_years": "27.5",
                               "note": "service corrected"}).json()
    assert (second["version"], second["supersedes"], second["author"]) == (2, first["id"], "beto")
    assert second["result"]["route"] == "19.1(b)"
    listed = svc.get("aud", CASES, params={"participant_id": pid}).json()["cases"]
    assert [(c["id"], c["version"], c["current"]) for c in listed] == [
        (first["id"], 1, False), (second["id"], 2, True)]
    old = svc.get("ana", f"{CASES}/{first['id']}").json()
    assert old["superseded_by"] == second["id"]
    assert old["result"] == first["result"] and old["inputs"] == first["inputs"]


def test_the_api_offers_no_way_to_change_or_delete_a_case(svc):
    case = svc.post("ana", {**EXAMPLE_1, "participant_id": new_pid()}).json()
    path = f"{CASES}/{case['id']}"
    for method in ("PUT", "PATCH", "DELETE"):
        r = svc.http.request(method, path, headers=svc.as_user("ana"), json=EXAMPLE_1)
        assert r.status_code == 405, method
    assert svc.get("ana", path).json() == case


def test_a_second_case_without_naming_the_current_version_is_refused_with_409(svc):
    pid = new_pid()
    first = svc.post("ana", {**EXAMPLE_1, "participant_id": pid}).json()
    r = svc.post("ana", {**EXAMPLE_1, "participant_id": pid})
    assert r.status_code == 409
    [p] = r.json()["errors"]
    assert p["code"] == "case_exists" and p["current_case_id"] == first["id"]
    svc.post("ana", {**EXAMPLE_1, "participant_id": pid, "supersedes": first["id"]})
    stale = svc.post("ana", {**EXAMPLE_1, "participant_id": pid, "supersedes": first["id"]})
    assert stale.status_code == 409 and stale.json()["errors"][0]["code"] == "stale_version"
    assert len(svc.get("ana", CASES, params={"participant_id": pid}).json()["cases"]) == 2


def test_bad_case_input_is_refused_whole_and_nothing_is_half_written(svc):
    pid = new_pid()
    before = svc.store.count_cases()
    bad = [
        {**EXAMPLE_1, "participant_id": pid, "birth_date": "1970-02-30"},
        {**EXAMPLE_1, "participant_id": pid, "supersedes": "seven"},
        {**EXAMPLE_1, "participant_id": pid, "supersedes": 10**30},
        {**EXAMPLE_1, "participant_id": pid, "note": {"text": "x"}},
        {**EXAMPLE_1, "participant_id": None},
        {**EXAMPLE_1, "participant_id": pid, "supersedes": 987654321},
    ]
    codes = []
    for body in bad:
        r = svc.post("ana", body)
        assert r.status_code == 422, r.text
        codes.append({(p["field"], p["code"]) for p in r.json()["errors"]})
    assert codes == [{("birth_date", "not_a_date")}, {("supersedes", "not_an_integer")},
                     {("supersedes", "not_an_integer")}, {("note", "not_text")},
                     {("participant_id", "missing")}, {("supersedes", "no_such_case")}]
    r = svc.http.post(CASES, content=b'{"participant_id": "x",', headers=svc.as_user("ana"))
    assert r.status_code == 422
    refused = [e for e in svc.audit(user="ana", action="case.create") if e["status_code"] == 422]
    assert refused[-1]["detail"] == "refused: invalid_json"
    assert any(e["participant_id"] == pid and "birth_date:not_a_date" in e["detail"]
               for e in refused)
    assert svc.store.count_cases() == before
    assert svc.post("ana", {**EXAMPLE_1, "participant_id": pid}).status_code == 201


def test_reproducing_a_case_recomputes_it_identically_with_its_stored_rules(svc):
    pid = new_pid()
    case = svc.post("ana", {**EXAMPLE_1, "participant_id": pid, "group": "police",
                            "rules": "article19-strict-19_4", "as_of": "2020-01-01"}).json()
    r = svc.get("aud", f"{CASES}/{case['id']}/reproduce")
    assert r.status_code == 200
    out = r.json()
    assert out["identical"] and out["decision_identical"] and out["differences"] == []
    assert out["recomputed"] == case["result"] and out["as_of"] == "2020-01-01"
    assert out["rules_version"] == diferida.load_rules("article19-strict-19_4").version


def test_an_old_case_stays_reproducible_after_the_rules_change(svc):
    """A case decided under rules that are no longer shipped: the stored
    content, not today's rules file, is what it is recomputed with."""
    resolved = json.loads(json.dumps(diferida.load_rules().resolved))
    for route in resolved["routes"]:
        if route["id"] == "19.1(a)":
            route["age"] = 60  # a fictitious amendment, to tell the versions apart
    old_rules = diferida.rules.rules_from_resolved(resolved)
    inputs = {k: v for k, v in EXAMPLE_1.items() if k != "lang"} | {"participant_id": new_pid()}
    d = diferida.evaluate(inputs, rules=old_rules, lang="en")
    user = svc.store.users()[0]
    case = svc.store.record_case(
        participant_id=inputs["participant_id"], inputs=inputs, result=d.to_dict(),
        rules_version=old_rules.version, rules_name=old_rules.name, rules_content=resolved,
        as_of=d.as_of, lang="en", author=user, supersedes=None, note=None,
        event=lambda c: NewEvent("case.create", "POST", CASES, 201, user=user, case_id=c.id))
    assert d.eligibility_date.isoformat() == "2030-05-10"
    out = svc.get("ana", f"{CASES}/{case.id}/reproduce").json()
    assert out["identical"], out["differences"]
    assert out["recomputed"]["eligibility_date"] == "2030-05-10"
    assert out["rules_version"] != diferida.load_rules().version


def test_missing_or_wrong_tokens_get_401_and_a_wrong_role_403_all_recorded(svc):
    pid = new_pid()
    case = svc.post("ana", {**EXAMPLE_1, "participant_id": pid}).json()
    path = f"{CASES}/{case['id']}"
    assert svc.http.get(path).status_code == 401
    r = svc.http.get(path, headers={"Authorization": "Bearer not-a-token"})
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    assert svc.http.get(path, headers={"Authorization": "Basic YTpi"}).status_code == 401
    assert svc.post("aud", {**EXAMPLE_1, "participant_id": pid}).status_code == 403
    assert svc.get("ana", "/api/v1/audit").status_code == 403
    denied = svc.audit(action="auth.unauthorized", case_id=case["id"])
    assert len(denied) == 3 and all(e["status_code"] == 401 and e["user"] is None
                                    for e in denied)
    forbidden = [e for e in svc.audit(action="auth.forbidden")
                 if e["path"] in (CASES, "/api/v1/audit")]
    assert {(e["user"], e["path"]) for e in forbidden} >= {("aud", CASES),
                                                           ("ana", "/api/v1/audit")}
    assert len(svc.get("ana", CASES, params={"participant_id": pid}).json()["cases"]) == 1


def test_the_audit_trail_says_who_created_corrected_and_read_which_case_and_when(svc):
    pid = new_pid()
    start = datetime.now(UTC)
    first = svc.post("ana", {**EXAMPLE_1, "participant_id": pid}).json()
    second = svc.post("beto", {**EXAMPLE_1, "participant_id": pid,
                               "supersedes": first["id"]}).json()
    svc.get("aud", f"{CASES}/{first['id']}")
    svc.get("ana", f"{CASES}/{second['id']}/reproduce")
    events = svc.audit(participant_id=pid)
    assert [(e["action"], e["user"], e["case_id"]) for e in events] == [
        ("case.create", "ana", first["id"]), ("case.correct", "beto", second["id"]),
        ("case.read", "aud", first["id"]), ("case.reproduce", "ana", second["id"])]
    assert all(start - timedelta(seconds=5) <= datetime.fromisoformat(e["at"])
               <= datetime.now(UTC) for e in events)
    assert [e["action"] for e in svc.audit(case_id=first["id"])] == ["case.create",
                                                                     "case.read"]
    assert {e["case_id"] for e in svc.audit(user="beto", action="case.correct")} >= {
        second["id"]}
    later = svc.audit(participant_id=pid, since=events[2]["at"])
    assert [e["action"] for e in later] == ["case.read", "case.reproduce"]
    earlier = svc.audit(participant_id=pid, until=events[1]["at"])
    assert [e["action"] for e in earlier] == ["case.create"]
    # reading the trail is itself in the trail
    assert svc.audit(action="audit.read")[-1]["user"] == "aud"


def test_bad_audit_filters_are_named_with_422(svc):
    r = svc.get("aud", "/api/v1/audit", params={"since": "yesterday", "case_id": "x",
                                                "limit": 0})
    assert r.status_code == 422
    assert {p["field"] for p in r.json()["errors"]} == {"since", "case_id", "limit"}


def test_a_case_that_does_not_exist_is_a_404_and_the_attempt_is_recorded(svc):
    r = svc.get("aud", f"{CASES}/99999999")
    assert r.status_code == 404 and r.json()["errors"][0]["code"] == "not_found"
    assert svc.audit(case_id=99999999)[-1]["status_code"] == 404


@pytest.mark.slow
def test_fifty_concurrent_clients_each_record_cases_and_none_is_lost_or_duplicated(svc):
    """50 clients at once over HTTP: each records a case of its own and then a
    version of one of three shared participants, answering 409 by reading the
    current version and correcting it. Every 201 is stored exactly once and
    each participant's versions form one unbroken chain."""
    tag = new_pid("conc")
    shared = [f"{tag}-shared-{i}" for i in range(3)]
    created: list[dict] = []
    failures: list[str] = []
    lock = threading.Lock()
    barrier = threading.Barrier(50)

    def client(n: int) -> None:
        with httpx.Client(base_url=svc.base, timeout=120,
                          headers=svc.as_user("ana" if n % 2 else "beto")) as c:
            barrier.wait()
            r = c.post(CASES, json={**EXAMPLE_1, "participant_id": f"{tag}-own-{n}"})
            if r.status_code != 201:
                failures.append(r.text)
                return
            with lock:
                created.append(r.json())
            pid = shared[n % 3]
            for _ in range(200):
                versions = c.get(CASES, params={"participant_id": pid}).json()["cases"]
                body = {**EXAMPLE_1, "participant_id": pid}
                if versions:
                    body["supersedes"] = versions[-1]["id"]
                r = c.post(CASES, json=body)
                if r.status_code == 201:
                    with lock:
                        created.append(r.json())
                    return
                if r.status_code != 409:
                    failures.append(r.text)
                    return
            failures.append("gave up after 200 conflicts")

    threads = [threading.Thread(target=client, args=(n,)) for n in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[:3]
    assert len(created) == 100
    ids = [c["id"] for c in created]
    assert len(set(ids)) == 100
    for pid in {c["participant_id"] for c in created}:
        stored = svc.get("aud", CASES, params={"participant_id": pid}).json()["cases"]
        assert sorted(c["id"] for c in stored) == sorted(
            c["id"] for c in created if c["participant_id"] == pid)
        assert [c["version"] for c in stored] == list(range(1, len(stored) + 1))
        assert [c["supersedes"] for c in stored] == [None] + [c["id"] for c in stored[:-1]]
    assert sum(len(svc.get("aud", CASES, params={"participant_id": p}).json()["cases"])
               for p in shared) == 50
    assert svc.http.get("/health").status_code == 200


def test_the_analysts_determination_prints_from_the_store_with_its_case_id_and_version(svc):
    pid = new_pid()
    first = svc.post("ana", {**EXAMPLE_1, "participant_id": pid, "lang": "es"}).json()
    second = svc.post("beto", {**EXAMPLE_1, "participant_id": pid, "lang": "es",
                               "creditable_service_years": "23", "note": "servicio corregido",
                               "supersedes": first["id"]}).json()
    r = svc.get("aud", f"{CASES}/{first['id']}/print")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    page = " ".join(r.text.split())
    # the letter (diferida.letter), a draft until approved, with the facts it
    # relied on and the time in Puerto Rico, never an API path
    for words in ("Determinación de pensión diferida", f"Caso {first['id']} · versión 1",
                  "BORRADOR — sin validez", pid, "ana", ONE.annual_shown,
                  "La Regla 19.1(a) exige", first["rules_version"].rpartition("@")[2],
                  "Reglamento del Sistema de Retiro", "Datos en que se basa",
                  "Advertencias", "Preparada por", "AST, UTC−4"):
        assert words in page, words
    assert "/api/" not in page and " UTC<" not in page
    # the record, not the public estimate (the letter's salutation aside)
    assert "estimado" not in page.lower().replace("estimado(a)", "")
    latest = " ".join(svc.get("ana", f"{CASES}/{second['id']}/print").text.split())
    # named by the case number (its first version's id), as the issued letter is
    assert f"Caso {first['id']} · versión 2" in latest and "servicio corregido" in latest
    assert "Esta versión corrige la versión 1 de este caso." in latest
    english = svc.get("ana", f"{CASES}/{second['id']}/print", params={"lang": "en"})
    assert english.status_code == 200 and "DRAFT — not valid" in english.text
    assert "$10,800.00" in english.text and "Facts this determination relies on" in (
        english.text)
    assert svc.get("ana", f"{CASES}/{second['id']}/print",
                   params={"lang": "fr"}).status_code == 422
    assert svc.http.get(f"{CASES}/{first['id']}/print").status_code == 401
    assert svc.get("ana", f"{CASES}/999999/print").status_code == 404
    printed = [e for e in svc.audit(case_id=first["id"]) if e["action"] == "case.print"]
    assert [e["user"] for e in printed] == ["aud"]
