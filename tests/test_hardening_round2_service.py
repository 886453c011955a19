"""Hardening, round two, in the service and the calculator's pages (issue 19):

* a case without its participant id is a 422 in Spanish too, naming the
  field with the catalog's words (the Spanish "missing" agrees with the
  field's gender), on SQLite and PostgreSQL;
* a participant id holding a control character (NUL included) is a 422
  naming the field wherever an id is accepted: a case, a determination, the
  filters of /api/v1/cases and /api/v1/audit (NUL was a PostgreSQL-only 500).
"""

from __future__ import annotations

import re

import httpx
import pytest

from diferida.fields import FIELD_NAMES
from diferida.i18n import LANGS, catalog
from diferida.service import messages
from diferida.service.schemas import ID_PATTERN
from diferida.service.store import AuditQuery, Store
from diferida.service.testing import database_for_tests, running_server

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
