"""POST /api/v1/determinations through real HTTP against uvicorn: the same
answers as the core, exact money, every bad field named, and a service that
keeps serving whatever it is sent."""

from __future__ import annotations

import csv
import json
from datetime import date
from importlib import resources

import httpx
import pytest

import diferida
from diferida.service.store import AuditQuery, Store
from diferida.service.testing import running_server

from .worked_examples import ONE

AS_OF = "2026-11-29"
EXAMPLE_1 = {"birth_date": "1970-05-10", "entry_date": "1988-07-01",
             "separation_date": "2010-06-30", "creditable_service_years": "22",
             "average_compensation": "30000.00", "group": "general",
             "refund_requested": False, "as_of": AS_OF}
URL = "/api/v1/determinations"


@pytest.fixture(scope="module")
def db_url(tmp_path_factory):
    return f"sqlite:///{tmp_path_factory.mktemp('db') / 'cases.db'}"


@pytest.fixture(scope="module")
def client(db_url, tmp_path_factory):
    log = tmp_path_factory.mktemp("log") / "server.log"
    with running_server(db_url, log_path=log) as base, httpx.Client(base_url=base,
                                                                      timeout=30) as c:
        yield c


def spec_examples() -> list[dict[str, str]]:
    text = (resources.files("diferida") / "data" / "spec_examples.csv").read_text("utf-8")
    return [{k: v for k, v in row.items() if v != ""} for row in csv.DictReader(text.splitlines())]


@pytest.mark.parametrize("row", spec_examples(), ids=lambda r: r["participant_id"])
def test_each_worked_example_gets_over_http_the_determination_the_core_gives(client, row):
    r = client.post(URL, json={**row, "as_of": AS_OF, "lang": "en"})
    assert r.status_code == 200, r.text
    expected = diferida.evaluate(row, as_of=date.fromisoformat(AS_OF), lang="en").to_dict()
    assert r.json() == expected


def test_example_1_gets_the_route_and_amounts_of_rules_8(client):
    d = client.post(URL, json=EXAMPLE_1).json()
    assert (d["route"], d["eligibility_date"]) == (ONE.route, ONE.eligibility.isoformat())
    assert (d["annual_amount"], d["monthly_amount"]) == (ONE.annual_text, ONE.monthly_text)
    assert d["lang"] == "es" and d["rules_version"] == diferida.load_rules().version


def test_answers_carrying_personal_data_are_not_kept_by_caches(client):
    r = client.post(URL, json=EXAMPLE_1)
    assert r.headers["cache-control"] == "no-store"
    assert r.headers["x-content-type-options"] == "nosniff"


def test_json_numbers_for_money_are_read_as_their_exact_decimal_text(client):
    body = json.dumps({**EXAMPLE_1, "average_compensation": "X", "creditable_service_years": "Y"})
    # written by hand so the numbers reach the server exactly as typed
    body = body.replace('"X"', "30000.10").replace('"Y"', "12.2500")
    d = client.post(URL, content=body, headers={"content-type": "application/json"}).json()
    expected = diferida.evaluate({**EXAMPLE_1, "average_compensation": "30000.10",
                                  "creditable_service_years": "12.25"}).to_dict()
    assert d["annual_amount"] == expected["annual_amount"]
    assert d["formula"]["average_compensation"] == "30000.10"


def test_a_compensation_with_fractions_of_a_cent_is_refused_not_rounded(client):
    body = json.dumps({**EXAMPLE_1, "average_compensation": "X"}).replace('"X"', "30000.005")
    r = client.post(URL, content=body)
    assert r.status_code == 422
    [p] = r.json()["errors"]
    assert (p["field"], p["code"], p["value"]) == ("average_compensation", "too_many_decimals",
                                                   "30000.005")


def test_every_bad_field_is_named_at_once_with_http_422(client):
    r = client.post(URL, json={**EXAMPLE_1, "birth_date": "1970-13-40", "group": "navy",
                               "refund_requested": "perhaps", "salary": 1, "lang": "en"})
    assert r.status_code == 422
    named = {(p["field"], p["code"]) for p in r.json()["errors"]}
    assert named == {("birth_date", "not_a_date"), ("group", "unknown_group"),
                     ("refund_requested", "not_a_boolean"), ("salary", "unknown_field")}
    assert all(p["message"] for p in r.json()["errors"])


def test_missing_required_fields_are_each_named(client):
    r = client.post(URL, json={"lang": "en"})
    assert r.status_code == 422
    missing = {p["field"] for p in r.json()["errors"] if p["code"] == "missing"}
    assert missing == {"birth_date", "entry_date", "creditable_service_years",
                       "average_compensation", "group", "refund_requested"}


def test_wrong_json_types_unknown_language_and_unknown_rules_are_named(client):
    r = client.post(URL, json={**EXAMPLE_1, "group": ["general"], "entry_date": {"y": 1988},
                               "lang": "fr", "rules": "../../etc/passwd"})
    assert r.status_code == 422
    named = {(p["field"], p["code"]) for p in r.json()["errors"]}
    assert named == {("group", "not_a_scalar"), ("entry_date", "not_a_scalar"),
                     ("lang", "unknown_lang"), ("rules", "unknown_rules")}


def test_the_strict_19_4_variant_can_be_asked_for_by_name(client):
    police_new = {**EXAMPLE_1, "birth_date": "1975-06-20", "entry_date": "1996-02-01",
                  "separation_date": "2021-03-31", "creditable_service_years": "25.1667",
                  "average_compensation": "36000.00", "group": "police"}
    broad = client.post(URL, json=police_new).json()
    strict = client.post(URL, json={**police_new, "rules": "article19-strict-19_4"}).json()
    assert broad["route"] == "19.4(a)"
    assert strict["route"] == "19.2" and strict["rules_version"].startswith(
        "article19-strict-19_4@")


@pytest.mark.parametrize("body", [
    b"{bad json", b"[1, 2, 3]", b'"text"', b"", b'{"average_compensation": NaN}',
    b'{"birth_date": "1970-05-10", "birth_date": "1971-01-01"}', b"\xff\xfe{}",
    b"[" * 100000,
], ids=["broken", "array", "string", "empty", "nan", "duplicate-key", "not-utf8", "deep"])
def test_a_body_that_is_not_a_json_object_of_fields_gets_a_clear_422(client, body):
    r = client.post(URL, content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422
    assert r.json()["errors"][0]["code"] in {"invalid_json", "not_an_object", "duplicate_key"}
    assert client.post(URL, json=EXAMPLE_1).status_code == 200


def test_an_absurd_exponent_is_refused_without_expanding_it(client):
    body = json.dumps({**EXAMPLE_1, "average_compensation": "X"}).replace('"X"', "1e999999999")
    r = client.post(URL, content=body, timeout=5)
    assert r.status_code == 422
    assert r.json()["errors"][0]["field"] == "average_compensation"


def test_a_huge_body_is_refused_with_413_whether_its_length_is_declared_or_not(client):
    big = b'{"x": "' + b"a" * (2 * 1024 * 1024) + b'"}'
    assert client.post(URL, content=big).status_code == 413

    def chunks():
        for i in range(0, len(big), 65536):
            yield big[i:i + 65536]

    r = client.post(URL, content=chunks())
    assert r.status_code == 413 and r.json()["errors"][0]["code"] == "payload_too_large"
    assert client.post(URL, json=EXAMPLE_1).status_code == 200


def test_a_determination_stores_nothing_and_writes_no_audit_event(client, db_url):
    assert client.post(URL, json={**EXAMPLE_1, "participant_id": "NOSTORE"}).status_code == 200
    store = Store(db_url)
    try:
        assert store.count_cases() == 0
        assert store.audit_events(AuditQuery()) == []
    finally:
        store.dispose()


def test_health_names_the_database_and_the_schema_revision(client):
    r = client.get("/health")
    assert r.status_code == 200
    assert r.json()["status"] == "ok" and r.json()["database"] == "sqlite"
    assert r.json()["schema_revision"]


def test_the_openapi_documentation_lists_every_endpoint(client):
    assert client.get("/docs").status_code == 200
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/api/v1/determinations", "/api/v1/batches", "/api/v1/cases",
            "/api/v1/cases/{case_id}", "/api/v1/cases/{case_id}/reproduce", "/api/v1/audit",
            "/health"} <= set(paths)
    body = paths["/api/v1/determinations"]["post"]["requestBody"]["content"]
    assert "birth_date" in body["application/json"]["schema"]["properties"]


def test_an_unknown_path_gets_a_json_404(client):
    r = client.get("/api/v1/nothing-here")
    assert r.status_code == 404 and r.json()["errors"][0]["code"] == "not_found_path"


def test_the_same_service_serves_the_web_calculator_at_the_root(client):
    r = client.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
