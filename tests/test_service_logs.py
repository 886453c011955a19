"""No personal data in the service's logs: birth dates and compensation never
reach them, whether the request succeeds, fails validation, or breaks."""

from __future__ import annotations

import logging

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from diferida.service.errors import GuardMiddleware
from diferida.service.store import Store, make_engine
from diferida.service.testing import running_server

from .conftest import run_async

BIRTH = "1967-08-23"
BAD_BIRTH = "1967-08-32"
PAY = "48123.45"
PERSON = {"participant_id": "LOG-1", "birth_date": BIRTH, "entry_date": "1988-07-01",
          "separation_date": "2010-06-30", "creditable_service_years": "22",
          "average_compensation": PAY, "group": "general", "refund_requested": False}


@pytest.mark.slow
def test_a_birth_date_or_compensation_posted_never_appears_in_the_server_log(tmp_path):
    log = tmp_path / "server.log"
    url = f"sqlite:///{tmp_path / 'cases.db'}"
    store = Store(url)
    store.upgrade()
    token = store.add_user("ana", "analyst")[1]
    store.dispose()
    csv = ("participant_id,birth_date,entry_date,separation_date,creditable_service_years,"
           f"average_compensation,group,refund_requested\nLOG-2,{BIRTH},1988-07-01,"
           f"2010-06-30,22,{PAY},general,false\nLOG-3,{BAD_BIRTH},1988-07-01,2010-06-30,22,"
           f"{PAY},general,false\n")
    with running_server(url, log_path=log, log_level="debug") as base, \
            httpx.Client(base_url=base, timeout=30) as c:
        auth = {"Authorization": f"Bearer {token}"}
        assert c.post("/api/v1/determinations", json=PERSON).status_code == 200
        assert c.post("/api/v1/determinations",
                      json={**PERSON, "birth_date": BAD_BIRTH}).status_code == 422
        assert c.post("/api/v1/cases", json=PERSON, headers=auth).status_code == 201
        assert c.post("/api/v1/cases", json={**PERSON, "birth_date": BAD_BIRTH},
                      headers=auth).status_code == 422
        assert c.post("/api/v1/cases", json=PERSON, headers={
            "Authorization": "Bearer wrong"}).status_code == 401
        r = c.post("/api/v1/batches", files={"file": ("people.csv", csv.encode())})
        assert r.status_code == 200 and r.json()["summary"]["rows_rejected"] == 1
    text = log.read_text("utf-8", errors="replace")
    assert "POST /api/v1/determinations" in text and "POST /api/v1/cases" in text
    for secret in (BIRTH, BAD_BIRTH, PAY, "48123"):
        assert secret not in text


def test_an_unexpected_error_is_logged_by_type_and_place_never_by_its_message(caplog):
    app = FastAPI()

    @app.post("/boom")
    async def boom():
        person = dict(PERSON)
        raise ValueError(f"cannot handle {person}")

    app.add_middleware(GuardMiddleware, max_json_bytes=10_000, max_upload_bytes=10_000)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)

    async def call():
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            return await c.post("/boom", json=PERSON)

    with caplog.at_level(logging.DEBUG):
        r = run_async(call())
    assert r.status_code == 500 and r.json()["errors"][0]["code"] == "server_error"
    logged = "\n".join(rec.getMessage() for rec in caplog.records)
    assert "ValueError" in logged and "/boom" in logged
    assert BIRTH not in logged and PAY not in logged
    assert BIRTH not in caplog.text and PAY not in caplog.text


def test_database_errors_do_not_carry_the_stored_values_in_their_message(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}")
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE t (v TEXT UNIQUE)"))
        conn.execute(text("INSERT INTO t VALUES (:v)"), {"v": BIRTH})
    with pytest.raises(IntegrityError) as exc:
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO t VALUES (:v)"), {"v": BIRTH})
    assert BIRTH not in str(exc.value)
    engine.dispose()
