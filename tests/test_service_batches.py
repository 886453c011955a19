"""POST /api/v1/batches through real HTTP: CSV, Parquet and Excel uploads,
every row determined or rejected with its row number, and a size limit."""

from __future__ import annotations

import io
import json
from datetime import date
from importlib import resources

import httpx
import polars as pl
import pytest

import diferida
from diferida.service.testing import running_server

AS_OF = "2026-11-29"
LIMIT = 200_000
URL = "/api/v1/batches"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    folder = tmp_path_factory.mktemp("batches")
    with running_server(f"sqlite:///{folder / 'cases.db'}", log_path=folder / "server.log",
                        env={"DIFERIDA_MAX_UPLOAD_BYTES": str(LIMIT)}) as base, \
            httpx.Client(base_url=base, timeout=60) as c:
        yield c


def examples_csv() -> bytes:
    return (resources.files("diferida") / "data" / "spec_examples.csv").read_bytes()


def examples_frame() -> pl.DataFrame:
    return pl.read_csv(examples_csv(), infer_schema=False)


def post(client, name: str, data: bytes, **form):
    return client.post(URL, files={"file": (name, data)},
                       data={"as_of": AS_OF, "lang": "en", **form})


def test_a_csv_of_the_worked_examples_is_determined_row_by_row_as_the_core_does(client):
    r = post(client, "examples.csv", examples_csv())
    assert r.status_code == 200, r.text
    out = r.json()
    expected = diferida.evaluate_frame(examples_frame(), as_of=date.fromisoformat(AS_OF))
    assert out["summary"]["rows_in"] == 11 and out["summary"]["rows_rejected"] == 0
    assert out["rejects"] == []
    got = {d["participant_id"]: (d["status"], d["route"], d["annual_amount"])
           for d in out["determinations"]}
    want = {row["participant_id"]: (row["status"], row["route"],
                                     None if row["annual_amount"] is None
                                     else f"{row['annual_amount']:.2f}")
            for row in expected.determinations.iter_rows(named=True)}
    assert got == want
    assert got["spec-3"] == ("not_yet_eligible", "19.2", "5236.88")
    assert sum(out["summary"]["by_status"].values()) == 11


def test_rejected_rows_are_returned_with_their_line_number_field_and_reason(client):
    text = examples_csv().decode()
    lines = text.splitlines()
    lines[3] = lines[3].replace("1972-11-02", "1972-02-30")  # spec-3, line 4 of the file
    lines.append(lines[1])  # spec-1 again, line 13
    r = post(client, "members.csv", "\n".join(lines).encode())
    out = r.json()
    assert out["summary"]["rows_in"] == 12 and out["summary"]["rows_rejected"] == 2
    assert out["summary"]["rows_determined"] == 10
    rejects = {(x["row"], x["participant_id"], x["field"], x["code"]) for x in out["rejects"]}
    assert rejects == {(4, "spec-3", "birth_date", "not_a_date"),
                       (13, "spec-1", "participant_id", "duplicate_id")}


@pytest.mark.slow  # an .xlsx written and read back over HTTP
@pytest.mark.parametrize("kind", ["parquet", "xlsx"])
def test_parquet_and_excel_uploads_give_the_same_results_as_csv(client, kind):
    buf = io.BytesIO()
    frame = examples_frame()
    frame.write_parquet(buf) if kind == "parquet" else frame.write_excel(buf)
    r = post(client, f"members.{kind}", buf.getvalue())
    assert r.status_code == 200, r.text
    from_csv = post(client, "members.csv", examples_csv()).json()
    assert r.json()["determinations"] == from_csv["determinations"]


def test_a_file_that_cannot_be_read_is_a_422_naming_the_problem(client):
    r = post(client, "members.csv", b"name,age\nx,1\n")
    assert r.status_code == 422
    [p] = r.json()["errors"]
    assert p["field"] == "file" and p["code"] == "missing_columns"
    r = post(client, "members.xlsx", b"this is not a spreadsheet")
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "file"


def test_bad_options_and_a_missing_file_are_all_named(client):
    r = client.post(URL, data={"as_of": "29/11/2026", "lang": "fr", "rules": "nope"})
    assert r.status_code == 422
    assert {p["field"] for p in r.json()["errors"]} == {"as_of", "lang", "rules", "file"}


def test_a_file_over_the_configured_limit_is_refused_with_413(client):
    big = examples_csv() + b"".join(
        f"x-{i},1970-05-10,1988-07-01,2010-06-30,22,30000.00,general,false,false,\n".encode()
        for i in range(LIMIT // 60))
    assert len(big) > LIMIT
    r = post(client, "big.csv", big)
    assert r.status_code == 413 and r.json()["errors"][0]["code"] == "payload_too_large"
    assert post(client, "examples.csv", examples_csv()).status_code == 200


def test_amounts_and_dates_in_the_json_are_exact_text(client):
    out = post(client, "examples.csv", examples_csv()).json()
    row = next(d for d in out["determinations"] if d["participant_id"] == "spec-4")
    assert row["annual_amount"] == "13590.02" and row["monthly_amount"] == "1132.50"
    assert row["eligibility_date"] == "2025-06-20"
    assert json.loads(json.dumps(row)) == row
