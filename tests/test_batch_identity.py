"""A file evaluated in chunks gives what it gives in one piece, and every
output row is what `diferida.evaluate` says for that participant alone."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from bench.generate import population

import diferida
from diferida.batch import evaluate_file
from diferida.fields import FIELD_NAMES
from tests.conftest import AS_OF

RESULT = ("status", "reasons", "regime", "eligibility_date", "route", "routes_met", "start_date",
          "premature_request", "annual_amount", "monthly_amount", "minimum_applied", "warnings",
          "rules_version")


def _run(tmp_path: Path, src: Path, tag: str, **kw) -> tuple[bytes, bytes, object]:
    out, rej = tmp_path / f"out-{tag}.parquet", tmp_path / f"rej-{tag}.csv"
    summary = evaluate_file(src, out, rej, as_of=AS_OF, **kw)
    return out.read_bytes(), rej.read_bytes(), summary


@pytest.mark.parametrize("seed", [3, 11])
@pytest.mark.slow
def test_a_file_read_a_few_rows_at_a_time_gives_exactly_what_it_gives_in_one_piece(
        tmp_path, seed):
    people = population(120, invalid=0.15, seed=seed)
    # duplicates far apart land in different chunks: the first is evaluated, later ones not
    people = people.with_columns(
        pl.when(pl.int_range(pl.len()).is_in([60, 110]))
        .then(pl.lit("P000000002")).otherwise("participant_id").alias("participant_id"))
    src = tmp_path / "members.csv"
    people.write_csv(src)
    whole = _run(tmp_path, src, "whole")
    for rows in (2, 7, 50):
        chunked = _run(tmp_path, src, f"chunk{rows}", chunk_rows=rows)
        assert pl.read_parquet(chunked[0]).equals(pl.read_parquet(whole[0]))
        assert chunked[1] == whole[1]
        assert chunked[2].to_dict()["by_status"] == whole[2].to_dict()["by_status"]
    rejects = pl.read_csv(whole[1], infer_schema=False)
    codes = set(rejects.select("row", "code").iter_rows())
    assert {("62", "duplicate_id"), ("112", "duplicate_id")} <= codes
    assert ("3", "duplicate_id") not in codes  # the first row with the id


def test_a_parquet_file_read_in_batches_matches_the_same_rows_as_csv(tmp_path):
    people = population(120, invalid=0.2, seed=5)
    people.write_csv(tmp_path / "m.csv")
    people.write_parquet(tmp_path / "m.parquet")
    a = _run(tmp_path, tmp_path / "m.csv", "csv")
    b = _run(tmp_path, tmp_path / "m.parquet", "pq", chunk_rows=9)
    assert pl.read_parquet(a[0]).equals(pl.read_parquet(b[0]))
    ra, rb = pl.read_csv(a[1]), pl.read_csv(b[1])
    # CSV numbers lines from 2 (after the header), Parquet rows from 1
    assert ra.with_columns(pl.col("row") - 1).equals(rb)


def _alone(row: dict) -> dict:
    return {k: v for k, v in row.items() if k in FIELD_NAMES and v is not None}


@pytest.mark.parametrize("seed", [21, 22])
@pytest.mark.slow
def test_every_output_row_is_what_evaluate_says_for_that_participant_alone(tmp_path, seed):
    people = population(150, invalid=0.2, seed=seed)
    src = tmp_path / "members.csv"
    people.write_csv(src)
    out, rej = tmp_path / "out.parquet", tmp_path / "rej.csv"
    summary = evaluate_file(src, out, rej, as_of=AS_OF, lang="en", chunk_rows=40)
    determined = pl.read_parquet(out)
    rejects = pl.read_csv(rej, infer_schema=False)
    assert summary.rows_read == people.height == determined.height + summary.rows_rejected
    assert summary.rows_rejected > 0

    by_id = {r["participant_id"]: r for r in determined.iter_rows(named=True)}
    rejected_lines = {int(r) for r in rejects["row"]}
    for line, person in enumerate(people.iter_rows(named=True), start=2):
        if line in rejected_lines:
            continue
        got = by_id[person["participant_id"]]
        assert got["office"] == person["office"]
        d = diferida.evaluate(_alone(person), as_of=AS_OF, lang="en")
        assert got["status"] == d.status
        assert got["reasons"] == ";".join(d.reasons)
        assert got["regime"] == d.regime
        assert got["eligibility_date"] == d.eligibility_date
        assert got["route"] == d.route
        assert got["routes_met"] == ";".join(d.routes_met)
        assert got["start_date"] == d.start_date
        assert got["premature_request"] == d.premature_request
        assert got["annual_amount"] == d.annual_amount
        assert got["monthly_amount"] == d.monthly_amount
        assert got["minimum_applied"] == d.minimum_applied
        assert got["warnings"] == ";".join(d.warnings)
        assert got["rules_version"] == d.rules_version

    for line in sorted(rejected_lines):
        person = people.row(line - 2, named=True)
        mine = rejects.filter(pl.col("row") == str(line))
        file_only = mine.filter(pl.col("code") == "duplicate_id")
        expected = mine.filter(pl.col("code") != "duplicate_id")
        if expected.height == 0:  # a repeated id is the only fault: alone, it is valid
            assert file_only.height == 1
            diferida.evaluate(_alone(person), as_of=AS_OF)
            continue
        with pytest.raises(diferida.InputError) as exc:
            diferida.evaluate(_alone(person), as_of=AS_OF, lang="en")
        assert [(p.field, p.code, p.message) for p in exc.value.problems] == list(
            expected.select("field", "code", "message").iter_rows())
        assert set(mine["participant_id"]) == {person["participant_id"]}
