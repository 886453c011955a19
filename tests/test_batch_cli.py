"""`diferida batch` as an analyst runs it: outputs, rejects, the summary, exit
codes, and no half-written output when a run is stopped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from bench.generate import write
from click.testing import CliRunner

from diferida.cli import main

from .worked_examples import ONE

ROOT = Path(__file__).resolve().parents[1]
DIFERIDA = [sys.executable, "-m", "diferida.cli"]
HEADER = ("participant_id,birth_date,entry_date,separation_date,creditable_service_years,"
          "average_compensation,group,refund_requested,requested_start_date,office")
ROWS = [
    "spec-1,1970-05-10,1988-07-01,2010-06-30,22,30000.00,general,false,,San Juan",
    "spec-3,1972-11-02,1995-08-01,2015-07-31,12.25,28500.00,general,false,2030-01-01,Ponce",
    "spec-8,1976-01-01,1998-01-01,2006-01-01,8,30000.00,general,false,,Caguas",
    "bad-1,1970-13-01,1988-07-01,2010-06-30,-2,30000.00,general,false,,Ponce",
    "spec-1,1970-05-10,1988-07-01,2010-06-30,22,30000.00,general,false,,Arecibo",
]


@pytest.fixture
def members(tmp_path) -> Path:
    path = tmp_path / "members.csv"
    path.write_text("\n".join([HEADER, *ROWS]) + "\n", encoding="utf-8")
    return path


def batch(*args: str | Path):
    return CliRunner().invoke(main, ["batch", *map(str, args)])


def test_a_population_file_becomes_determinations_rejects_and_a_summary(members, tmp_path):
    out, rej = tmp_path / "determinations.parquet", tmp_path / "rejects.csv"
    res = batch(members, "-o", out, "--rejects", rej, "--as-of", "2026-11-29", "--lang", "en")
    assert res.exit_code == 0, res.output
    det = pl.read_parquet(out)
    assert det.columns[:2] == ["participant_id", "office"]
    assert det.select("participant_id", "status", "route", "premature_request",
                      pl.col("annual_amount", "monthly_amount").cast(pl.String)).rows() == [
        ("spec-1", "not_yet_eligible", ONE.route, False, ONE.annual_text, ONE.monthly_text),
        ("spec-3", "not_yet_eligible", "19.2", True, "5236.88", "436.41"),
        ("spec-8", "not_entitled", None, False, None, None),
    ]
    assert det["eligibility_date"].cast(pl.String).to_list() == [
        "2028-05-10", "2037-11-02", None]
    rejects = pl.read_csv(rej, infer_schema=False)
    assert rejects.columns == ["row", "participant_id", "field", "code", "value", "message"]
    assert rejects.select("row", "participant_id", "field", "code").rows() == [
        ("5", "bad-1", "birth_date", "not_a_date"),
        ("5", "bad-1", "creditable_service_years", "negative"),
        ("6", "spec-1", "participant_id", "duplicate_id"),
    ]
    assert "already appeared" in rejects["message"][2]
    assert "Rows read:         5" in res.output
    assert "Rejected:          2 (3 problems)" in res.output
    assert "Will be entitled to a deferred pension: 2" in res.output  # words, not codes


def test_rejects_speak_spanish_by_default(members, tmp_path):
    rej = tmp_path / "r.csv"
    assert batch(members, "-o", tmp_path / "o.csv", "--rejects", rej,
                 "--as-of", "2026-11-29").exit_code == 0
    assert pl.read_csv(rej)["message"][0] == (
        "fecha de nacimiento (birth_date): «1970-13-01» no es una fecha AAAA-MM-DD válida")


def test_strict_makes_any_reject_exit_1_but_still_writes_the_results(members, tmp_path):
    out = tmp_path / "o.csv"
    res = batch(members, "-o", out, "--as-of", "2026-11-29", "--strict", "--quiet")
    assert res.exit_code == 1
    assert pl.read_csv(out).height == 3


def test_a_clean_file_with_strict_exits_0(tmp_path):
    src = tmp_path / "m.csv"
    src.write_text("\n".join([HEADER, *ROWS[:3]]) + "\n")
    assert batch(src, "-o", tmp_path / "o.csv", "--strict", "-q").exit_code == 0


def test_an_unusable_file_exits_2_naming_file_and_line_and_writes_nothing(tmp_path):
    src = tmp_path / "m.csv"
    src.write_text("\n".join([HEADER, ROWS[0], ROWS[1].rsplit(",", 2)[0]]) + "\n")
    res = batch(src, "-o", tmp_path / "o.parquet", "--rejects", tmp_path / "r.csv", "--lang",
                "en")
    assert res.exit_code == 2
    assert f"{src}, line 3" in res.output and "8 values" in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.csv"]


def test_an_existing_output_needs_overwrite(members, tmp_path):
    out = tmp_path / "o.csv"
    out.write_text("previous results")
    assert batch(members, "-o", out, "-q").exit_code == 2
    assert out.read_text() == "previous results"
    assert batch(members, "-o", out, "-q", "--overwrite").exit_code == 0
    assert pl.read_csv(out).height == 3


def test_without_a_rejects_file_the_rejects_are_shown(members, tmp_path):
    res = batch(members, "-o", tmp_path / "o.csv", "--lang", "en", "--as-of", "2026-11-29")
    assert res.exit_code == 0
    assert "5: bad-1: birth date (birth_date)" in res.output
    assert "6: spec-1: participant id" in res.output


def test_quiet_prints_nothing_and_json_gives_the_accounts(members, tmp_path):
    res = batch(members, "-o", tmp_path / "o.csv", "--rejects", tmp_path / "r.csv", "-q")
    assert res.exit_code == 0 and res.output == ""
    res = batch(members, "-o", tmp_path / "o2.csv", "--rejects", tmp_path / "r2.csv", "--json")
    summary = json.loads(res.output)
    assert summary["rows_read"] == summary["rows_determined"] + summary["rows_rejected"] == 5
    assert summary["problems"] == 3 and summary["carried"] == ["office"]


def test_bad_options_exit_2(members, tmp_path):
    assert batch(members, "-o", tmp_path / "o.csv", "--as-of", "29/11/2026").exit_code == 2
    assert batch(members, "-o", tmp_path / "o.csv", "--rules", "no-such-rules").exit_code == 2
    assert batch(members, "-o", tmp_path / "o.json").exit_code == 2
    assert batch(members, "-o", tmp_path / "o.csv", "--separator", "ab").exit_code == 2
    assert not (tmp_path / "o.csv").exists()


def test_the_strict_19_4_variant_can_be_chosen_by_name(tmp_path):
    police_new = "p-1,1975-06-20,1996-02-01,2021-03-31,25.1667,36000.00,police,false,,Ponce"
    src = tmp_path / "m.csv"
    src.write_text(f"{HEADER}\n{police_new}\n")
    for rules, route in (("article19", "19.4(a)"), ("article19-strict-19_4", "19.2")):
        out = tmp_path / f"{rules}.csv"
        assert batch(src, "-o", out, "--rules", rules, "--as-of", "2026-11-29").exit_code == 0
        assert pl.read_csv(out, infer_schema=False)["route"].to_list() == [route]


# ----------------------------------------------------------------- stopped runs


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    return write(150_000, tmp_path_factory.mktemp("big") / "big.csv", invalid=0.01)


def _start(big: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [*DIFERIDA, "batch", str(big), "-o", str(out),
         "--rejects", str(out.with_suffix(".rej.csv")), "--chunk-rows", "500", "-q"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)


def _wait_for_part(folder: Path, proc: subprocess.Popen, delay: float = 0.3) -> None:
    deadline = time.monotonic() + 60
    while not any(p.name.endswith(".part") for p in folder.iterdir()):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    time.sleep(delay)  # stopped at the start, or once some chunks are written


@pytest.mark.parametrize("delay", [0.0, 0.5])
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.slow
def test_a_run_stopped_midway_leaves_no_output_and_no_temporary_file(big, tmp_path, how, delay):
    out = tmp_path / "determinations.parquet"
    proc = _start(big, out)
    _wait_for_part(tmp_path, proc, delay)
    proc.send_signal(how)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert list(tmp_path.iterdir()) == []


def test_a_run_killed_outright_leaves_no_file_under_the_output_name(big, tmp_path):
    out = tmp_path / "determinations.parquet"
    proc = _start(big, out)
    _wait_for_part(tmp_path, proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    names = [p.name for p in tmp_path.iterdir()]
    assert "determinations.parquet" not in names and "determinations.rej.csv" not in names
    assert all(n.startswith(".determinations.") and n.endswith(".part") for n in names)


@pytest.mark.slow
def test_a_progress_bar_shows_on_a_terminal_and_not_in_a_pipe(big, tmp_path):
    import pty

    cmd = [*DIFERIDA, "batch", str(big), "-o", str(tmp_path / "a.parquet"), "--chunk-rows",
           "20000", "--lang", "en"]
    piped = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert piped.returncode == 0
    assert "Evaluating" not in piped.stderr + piped.stdout

    cmd[cmd.index("-o") + 1] = str(tmp_path / "b.parquet")
    cmd[cmd.index("--chunk-rows") + 1] = "5000"  # 30 chunks: a run of over a second
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(cmd, stdin=secondary, stdout=secondary, stderr=secondary, cwd=ROOT)
    os.close(secondary)
    seen = b""
    while True:
        try:
            data = os.read(primary, 65536)
        except OSError:
            break
        if not data:
            break
        seen += data
    proc.wait(timeout=60)
    os.close(primary)
    assert proc.returncode == 0
    assert b"Evaluating" in seen
