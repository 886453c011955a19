"""Hardening, round four (issue 42): the server reads each query and path
parameter as the OpenAPI document says, never more loosely.

Pydantic's lax mode read `until=0.5` as half a second after 1970-01-01 UTC
where the document says a date-time, and " 1", "1_000" or "1.0" as whole
numbers. Every integer parameter of the document and every date-time one is
sent what its type refuses: 422, the parameter named (as `field` and in the
message, in the request's language). The document states what is accepted
(the date-times' pattern, the integers' bounds as minimum and maximum), and
it has no boolean or number parameter, whose loose readings ("yes", "1e3")
this test would otherwise have to try. And the note of an acknowledgement,
and a reason, are documented with the bounds the server holds them to."""

from __future__ import annotations

import re

import pytest

from diferida.service import workflow

from .workbench_helpers import workbench_app

# what each declared type refuses, and pydantic's lax mode once accepted
# (or, for "0.5" and "1e3" as integers, refused in its own words)
NOT_INTEGERS = ["0.5", "1e3", "1.0", " 1", "1_0", "+1", "0x10", "１", "٣", "1 "]
NOT_DATETIMES = ["0.5", "12", "-1", "1e3", "1700000000", "2024-01-01_00:00",
                 "2024-01-01T00:00:00Z ", "yesterday"]
# the shapes of a time the server reads, each in the document's pattern
DATETIMES = ["2024-01-01", "2024-01-01T00:00", "2024-01-01T00:00:00Z",
             "2024-01-01t00:00:00z", "2024-01-01 08:30:00-04:00",
             "2024-01-01T00:00:00.123456+0500", "2024-01-01T00:00:00,5Z"]
MESSAGES = {"es": ("no es un número entero", "no es una fecha y hora ISO 8601 válida"),
            "en": ("is not a whole number", "is not a valid ISO 8601 date-time")}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with workbench_app("sqlite", tmp_path_factory.mktemp("params")) as (app, c):
        token = app.state.store.add_user("api-auditor", "auditor")[1]
        doc = c.get("/openapi.json").json()
        yield c, {"Authorization": f"Bearer {token}"}, doc


def _parameters(doc):
    """(method, path, parameter, its schema without the null) of every
    operation of the document."""
    for path, operations in doc["paths"].items():
        for method, op in operations.items():
            for p in op.get("parameters", []):
                schema = p["schema"]
                kinds = [s for s in schema.get("anyOf", [schema]) if s.get("type") != "null"]
                assert len(kinds) == 1, (path, p["name"], schema)
                yield method, path, p, kinds[0]


def _url(doc, path: str, given: dict[str, str]) -> str:
    """`path` with its path parameters filled: `given`, else a value each
    parameter takes."""
    def fill(m):
        name = m.group(1)
        if name in given:
            return given[name]
        for op in doc["paths"][path].values():
            for p in op.get("parameters", []):
                if p["name"] == name and p["in"] == "path":
                    s = p["schema"]
                    if s.get("type") == "integer":
                        return "1"
                    return re.match(r"\^\(([a-z]+)", s["pattern"]).group(1)
        raise AssertionError(name)
    return re.sub(r"\{([a-z_]+)\}", fill, path)


def _refused(c, headers, method, url, params, name, lang, words):
    r = c.request(method.upper(), url, params=params,
                  headers={**headers, "Accept-Language": lang})
    assert r.status_code == 422, (method, url, params, r.status_code, r.text[:300])
    errors = r.json()["errors"]
    assert [e["field"] for e in errors] == [name], (url, params, errors)
    message = errors[0]["message"]
    assert message.startswith(f"{name}: ") and words in message, message
    return errors[0]


def test_every_integer_parameter_takes_only_a_whole_number_as_written(site):
    c, headers, doc = site
    seen = set()
    for method, path, p, schema in _parameters(doc):
        if schema.get("type") != "integer":
            continue
        seen.add((path, p["name"]))
        # the document states the bounds as minimum and maximum, or none
        assert not {"ge", "le", "gt", "lt"} & set(schema), (path, p["name"], schema)
        for lang in ("es", "en"):
            for value in NOT_INTEGERS:
                if p["in"] == "path":
                    url, params = _url(doc, path, {p["name"]: value.strip() or "x"}), {}
                    if value != value.strip():
                        continue  # a path's spaces are part of another address
                else:
                    url, params = _url(doc, path, {}), {p["name"]: value}
                e = _refused(c, headers, method, url, params, p["name"], lang,
                             MESSAGES[lang][0])
                assert e["code"] == "not_an_integer"
    # the parameters the finding named, among them
    assert {("/api/v1/audit", "limit"), ("/api/v1/audit", "offset"),
            ("/api/v1/workbench/audit", "case_id"), ("/api/v1/workbench/queues/{kind}", "page"),
            ("/api/v1/workbench/cases/{case_id}/letter", "version"),
            ("/api/v1/cases/{case_id}", "case_id")} <= seen


def test_every_date_time_parameter_takes_only_a_time_as_written(site):
    c, headers, doc = site
    seen = set()
    for method, path, p, schema in _parameters(doc):
        if schema.get("format") != "date-time":
            continue
        seen.add((path, p["name"]))
        pattern = re.compile(schema["pattern"])
        for lang in ("es", "en"):
            for value in NOT_DATETIMES:
                assert pattern.search(value) is None, value  # the document refuses it
                e = _refused(c, headers, method, _url(doc, path, {}), {p["name"]: value},
                             p["name"], lang, MESSAGES[lang][1])
                assert e["code"] == "not_a_datetime" and e["value"] == value
        for value in DATETIMES:  # what the document accepts, the server reads
            assert pattern.search(value), value
            r = c.request(method.upper(), _url(doc, path, {}), params={p["name"]: value},
                          headers=headers)
            assert r.status_code == 200, (path, p["name"], value, r.text[:300])
    assert seen == {("/api/v1/audit", "since"), ("/api/v1/audit", "until"),
                    ("/api/v1/workbench/audit", "since"), ("/api/v1/workbench/audit", "until")}


def test_the_finding_until_half_a_second_is_refused_naming_it(site):
    c, headers, _ = site
    for path in ("/api/v1/audit", "/api/v1/workbench/audit"):
        for name in ("until", "since"):
            r = c.get(path, params={name: "0.5"}, headers=headers)
            assert r.status_code == 422
            assert [(e["field"], e["code"]) for e in r.json()["errors"]] == [
                (name, "not_a_datetime")]


def test_no_parameter_is_a_boolean_or_a_number_read_loosely(site):
    """Pydantic reads "yes", "on" or "t" as true and "1e3" as a number: the
    document has no such parameter; one added must be read strictly and
    tried here as the integers and times are."""
    _, _, doc = site
    kinds = {(schema.get("type"), schema.get("format")) for *_, schema in _parameters(doc)}
    assert kinds <= {("integer", None), ("string", None), ("string", "date-time")}, kinds


def test_the_notes_are_documented_with_the_bounds_the_server_holds(site):
    _, _, doc = site
    limit = workflow.LIMITS["reason"]
    for action in ("submit", "approve"):
        body = doc["paths"][f"/api/v1/workbench/cases/{{case_id}}/{action}"]["post"]
        note = body["requestBody"]["content"]["application/json"]["schema"]["properties"][
            "acknowledgement"]
        text = next(s for s in note["anyOf"] if s["type"] == "string")
        assert text["minLength"] == workflow.MIN_VISIBLE["acknowledgement"] == 10
        assert text["maxLength"] == limit and {"type": "null"} in note["anyOf"]
        assert "10 letters or digits" in note["description"]
    for path in ("/api/v1/workbench/cases/{case_id}/return",
                 "/api/v1/workbench/cases/{case_id}/corrections"):
        schema = doc["paths"][path]["post"]["requestBody"]["content"]["application/json"][
            "schema"]
        reason = schema["properties"]["reason"]
        assert (reason["minLength"], reason["maxLength"]) == (1, limit)
