"""The API against its own OpenAPI document: generated requests (schemathesis,
data that fits the schema and data that does not), anonymous and with each
role, through a real server. No answer is a 5xx, every answer has a status
the document lists and the shape it promises. And the document tells the
truth: required fields are marked, booleans are booleans, /docs needs no
other site."""

from __future__ import annotations

import json
import os

import httpx
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from diferida.service.store import Store
from diferida.service.testing import running_server

from .conftest import examples
from .workbench_helpers import signer

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]
# Per operation, identity and mode (7 operations x 3 identities x 2 modes);
# DIFERIDA_SCHEMATHESIS_EXAMPLES=200 for a deeper run outside `make test`.
EXAMPLES = int(os.environ.get("DIFERIDA_SCHEMATHESIS_EXAMPLES", "12"))
OPERATIONS = [("POST", "/api/v1/determinations"), ("POST", "/api/v1/batches"),
              ("POST", "/api/v1/cases"), ("GET", "/api/v1/cases"),
              ("GET", "/api/v1/cases/{case_id}"), ("GET", "/api/v1/cases/{case_id}/reproduce"),
              ("GET", "/api/v1/audit")]
# every other operation of the document (the workbench's among them), with
# fewer examples each; `test_every_operation_of_the_document_is_generated`
# holds the two lists to the document, so a new route cannot be left out
MORE_EXAMPLES = int(os.environ.get("DIFERIDA_SCHEMATHESIS_MORE_EXAMPLES", "5"))
MORE_OPERATIONS = [
    ("GET", "/health"), ("GET", "/api/v1/cases/{case_id}/print"),
    ("POST", "/api/v1/workbench/preview"), ("POST", "/api/v1/workbench/cases"),
    ("POST", "/api/v1/workbench/imports"),
    ("POST", "/api/v1/workbench/cases/{case_id}/corrections"),
    ("POST", "/api/v1/workbench/cases/{case_id}/submit"),
    ("POST", "/api/v1/workbench/cases/{case_id}/approve"),
    ("POST", "/api/v1/workbench/cases/{case_id}/return"),
    ("GET", "/api/v1/workbench/queues/{kind}"), ("GET", "/api/v1/workbench/search"),
    ("GET", "/api/v1/workbench/cases/{case_id}"),
    ("GET", "/api/v1/workbench/cases/{case_id}/history"),
    ("GET", "/api/v1/workbench/cases/{case_id}/letter"),
    ("GET", "/api/v1/workbench/audit"), ("GET", "/api/v1/workbench/audit/verify"),
    ("GET", "/api/v1/workbench/exports/{kind}.{fmt}")]
IDENTITIES = ["anonymous", "analyst", "supervisor", "auditor"]
LANGS = ("es", "en")
# a real server and about a thousand generated requests: `make test`, not the loop
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("schemathesis")
    url = f"sqlite:///{folder / 'cases.db'}"
    store = Store(url)
    store.upgrade()
    users, tokens = {}, {}
    for role in ("analyst", "supervisor", "auditor"):
        users[role], tokens[role] = store.add_user(
            role, role, **({} if role == "auditor" else signer(role)))
    _seed_cases(store, users)
    store.dispose()
    # generated requests come from one client far faster than any person:
    # the limits are tested on their own (test_hardening_api_abuse.py)
    env = {"DIFERIDA_RATE_LIMIT_PUBLIC": "off", "DIFERIDA_RATE_LIMIT_AUTH_FAILURES": "off"}
    with running_server(url, log_path=folder / "server.log", env=env) as base:
        schema = schemathesis.openapi.from_url(f"{base}/openapi.json")
        yield base, schema, tokens, folder / "server.log"
    log = (folder / "server.log").read_text("utf-8", errors="replace")
    assert "unhandled" not in log and "Traceback" not in log


def _seed_cases(store: Store, users: dict) -> None:
    """Cases 1 to 4 in each state (draft, submitted, approved with its
    letter, returned), so that generated case ids meet real cases."""
    from datetime import date

    from diferida.service import workflow as wf

    person = {"birth_date": "1970-05-10", "entry_date": "1988-07-01",
              "separation_date": "2010-06-30", "creditable_service_years": "22",
              "average_compensation": "30000.00", "group": "general",
              "refund_requested": "false", "name": "Ana Prueba",
              "letter_lang": "es", "address": "Calle 1\nSan Juan, PR 00901",
              "application_date": "2026-10-01"}
    a, sup = users["analyst"], users["supervisor"]
    ids = [wf.open_draft(store, a, {**person, "participant_id": f"S-{i}"}, lang="es",
                         as_of=date(2026, 11, 29)).case_id for i in range(4)]
    for cid in ids[1:]:
        wf.submit(store, a, cid)
    wf.approve(store, sup, ids[2])
    wf.return_case(store, sup, ids[3], reason="Revise")


def test_every_operation_of_the_document_is_generated(server):
    _, schema, _, _ = server
    doc = schema.raw_schema
    listed = {(m.upper(), p) for p, item in doc["paths"].items() for m in item
              if m in ("get", "post", "put", "patch", "delete")}
    assert listed == set(OPERATIONS) | set(MORE_OPERATIONS)


# an operation without parameters has no request that breaks its schema
NO_PARAMETERS = {("GET", "/health")}
GENERATED = [(method, path, mode) for method, path in OPERATIONS + MORE_OPERATIONS
             for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
             if mode is GenerationMode.POSITIVE or (method, path) not in NO_PARAMETERS]


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("method, path, mode", GENERATED)
def test_generated_requests_get_no_5xx_and_answers_match_the_document(server, method, path,
                                                                      identity, mode):
    base, schema, tokens, _ = server
    operation = schema[path][method]
    headers = {} if identity == "anonymous" else {"Authorization": f"Bearer {tokens[identity]}"}
    session = requests.Session()
    sent: list[str] = []

    @settings(max_examples=examples(EXAMPLES if (method, path) in OPERATIONS
                                    else MORE_EXAMPLES),
              deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(case=operation.as_strategy(mode))
    def check(case):
        given_headers = {k.lower() for k in (case.headers or {})}
        if identity != "anonymous" and "authorization" not in given_headers:
            case.headers = {**(case.headers or {}), **headers}
        if "accept-language" not in given_headers:  # both languages, in turn
            case.headers = {**(case.headers or {}), "Accept-Language": LANGS[len(sent) % 2]}
        sent.append(case.headers["Accept-Language"] if "Accept-Language" in case.headers
                    else "?")
        case.call_and_validate(base_url=base, session=session, checks=CHECKS)

    try:
        check()
    finally:
        session.close()
    # requests were sent, in both languages (each got no 5xx and matched the document)
    # (an operation with no parameters, such as /health, has one request to make)
    assert sent and (len(sent) == 1 or {"es", "en"} <= set(sent)), sent


def _body_schema(doc: dict, path: str) -> dict:
    return doc["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]


def test_the_document_marks_required_fields_and_types_booleans_as_booleans(server):
    base, *_ = server
    doc = httpx.get(f"{base}/openapi.json").json()
    one = _body_schema(doc, "/api/v1/determinations")
    assert set(one["required"]) == {"birth_date", "entry_date", "creditable_service_years",
                                    "average_compensation", "group", "refund_requested"}
    case = _body_schema(doc, "/api/v1/cases")
    assert set(case["required"]) == set(one["required"]) | {"participant_id"}
    for body in (one, case):
        for name in ("refund_requested", "deferred_right_1960"):
            kinds = [s.get("type") for s in body["properties"][name]["anyOf"]]
            assert kinds[0] == "boolean", name
        assert body["properties"]["group"]["enum"] == ["general", "police", "firefighter"]
        assert body["additionalProperties"] is False
    # every error answer has the one shape of the API
    text = json.dumps(doc)
    assert "HTTPValidationError" not in text
    for path, ops in doc["paths"].items():
        for op in ops.values():
            for status in ("422", "429"):
                if status in op["responses"]:
                    ref = op["responses"][status]["content"]["application/json"]["schema"]
                    assert ref == {"$ref": "#/components/schemas/Errors"}, (path, status)


def test_a_body_missing_a_required_field_still_gets_422_naming_it(server):
    base, *_ = server
    r = httpx.post(f"{base}/api/v1/determinations", json={"birth_date": "1970-05-10"})
    assert r.status_code == 422
    named = {e["field"] for e in r.json()["errors"]}
    assert {"entry_date", "group", "refund_requested"} <= named


def test_the_docs_page_loads_nothing_from_another_site(server):
    base, *_ = server
    for page in ("/docs", "/redoc"):
        html = httpx.get(f"{base}{page}").text
        assert "cdn." not in html and "https://" not in html.split("</head>")[0], page
    r = httpx.get(f"{base}/docs")
    scripts = [part.split('"')[1] for part in r.text.split("src=")[1:]]
    assert scripts and all(s.startswith("/") for s in scripts)
    for s in scripts:
        asset = httpx.get(f"{base}{s}")
        assert asset.status_code == 200 and len(asset.content) > 100_000  # the real bundle


def test_a_405_lists_every_method_of_the_path(server):
    base, *_ = server
    r = httpx.delete(f"{base}/api/v1/cases")
    assert r.status_code == 405
    assert sorted(m.strip() for m in r.headers["allow"].split(",")) == ["GET", "POST"]
    r = httpx.put(f"{base}/api/v1/determinations")
    assert r.status_code == 405 and r.headers["allow"] == "POST"
