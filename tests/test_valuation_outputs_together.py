"""A valuation's outputs — the report, its rejects and the prior census's
rejects — are put in place together or not at all: a write that fails last
leaves none of them (and no history line)."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import pytest

from diferida.batch import outputs
from diferida.batch.errors import FileProblem
from diferida.liability import value_file

from .test_liability import STATUS, write
from .test_valuation import A1, A2

BAD = "B9,1965-13-40,1985-01-01,2010-12-31,25,36000.00,general,false,deferred,,"


@pytest.mark.parametrize("fails", ["valuation.json", "rejects.csv", "prior-rejects.csv"])
def test_a_failure_of_any_rename_leaves_nothing_written(tmp_path, monkeypatch, fails):
    rows = [A1 + ",deferred,,", A2 + ",deferred,,"] + [
        A1.replace("A1,", f"X{k},") + ",deferred,," for k in range(200)]
    now = write(tmp_path, [*rows, BAD], STATUS, name="now.csv")
    prior = write(tmp_path, [*rows, BAD], STATUS, name="prior.csv")
    report = tmp_path / "valuation.json"
    rejects, prior_rejects = tmp_path / "rejects.csv", tmp_path / "prior-rejects.csv"
    history = tmp_path / "history.jsonl"
    real_replace, real_link = os.replace, os.link

    def failing(src, dst, *a, **kw):  # one of the three outputs cannot be placed
        if Path(dst).name == fails:
            raise PermissionError(13, "Permission denied", str(dst))
        return (real_link if failing.link else real_replace)(src, dst, *a, **kw)

    def link(src, dst, *a, **kw):
        failing.link = True
        try:
            return failing(src, dst, *a, **kw)
        finally:
            failing.link = False

    failing.link = False
    monkeypatch.setattr(outputs.os, "replace", failing)
    monkeypatch.setattr(outputs.os, "link", link)
    with pytest.raises(FileProblem, match="cannot be written"):
        value_file(now, report, rejects, discount="0.04", as_of=date(2026, 6, 30),
                   prior=prior, prior_date=date(2025, 6, 30), prior_rejects=prior_rejects,
                   history=history, lang="en")
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == ["now.csv", "prior.csv"], left


def test_without_a_failure_every_output_is_in_place(tmp_path):
    rows = [A1 + ",deferred,,", A2 + ",deferred,,"] + [
        A1.replace("A1,", f"X{k},") + ",deferred,," for k in range(200)]
    now = write(tmp_path, [*rows, BAD], STATUS, name="now.csv")
    prior = write(tmp_path, [*rows, BAD], STATUS, name="prior.csv")
    s = value_file(now, tmp_path / "valuation.json", tmp_path / "rejects.csv",
                   discount="0.04", as_of=date(2026, 6, 30), prior=prior,
                   prior_date=date(2025, 6, 30), prior_rejects=tmp_path / "prior-rejects.csv",
                   history=tmp_path / "history.jsonl", lang="en")
    assert s.rows_rejected == 1 and s.prior_counts["rows_rejected"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "history.jsonl", "now.csv", "prior-rejects.csv", "prior.csv", "rejects.csv",
        "valuation.json"]
