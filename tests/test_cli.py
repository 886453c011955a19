"""The command line: exit 0 with a determination, exit 2 naming every bad
option on stderr. The installed program is run as a user runs it (a
subprocess) where the process is what is tested (`run_installed`: a
determination, a refusal, the worked examples); the rest of what the
command says is read in process (`run`, click's runner: the same command,
its exit code, its stdout and stderr, without starting Python each time)."""

from __future__ import annotations

import json
import subprocess

import pytest

from .conftest import cli_command, run_in_process
from .worked_examples import ONE

EXAMPLE_1 = ["--birth-date", "1970-05-10", "--entry-date", "1988-07-01",
             "--separation-date", "2010-06-30", "--service", "22",
             "--compensation", "30000.00", "--no-refund", "--as-of", "2026-11-29"]


def run_installed(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*cli_command(), *args], capture_output=True, text=True, timeout=60)


run = run_in_process


def with_option(option: str, value: str | None) -> list[str]:
    """EXAMPLE_1 with one option changed (value None removes it)."""
    args = list(EXAMPLE_1)
    i = args.index(option)
    del args[i:i + 2]
    return args if value is None else [*args, option, value]


def test_evaluate_prints_the_determination_and_its_explanation_in_spanish():
    proc = run_installed("evaluate", *EXAMPLE_1)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "19.1(a)" in out
    assert "10 de mayo de 2028" in out
    assert "2028-05-10" not in out  # ISO dates and codes belong to --json
    assert ONE.annual_shown in out and ONE.monthly_shown in out
    assert "Regla 19.1(a)" in out
    assert "Ley 3-2013" in out


def test_evaluate_in_english():
    proc = run("evaluate", *EXAMPLE_1, "--lang", "en")
    assert proc.returncode == 0, proc.stderr
    assert ("Will be entitled to a deferred pension: it may be requested from May 10, 2028 "
            "or any later date (Rule 19.3).") in proc.stdout
    assert "Act 3-2013" in proc.stdout


@pytest.mark.parametrize(
    "option, value, field",
    [
        ("--service", "-1", "creditable_service_years"),
        ("--service", "10.00001", "creditable_service_years"),
        ("--service", "abc", "creditable_service_years"),
        ("--compensation", "0", "average_compensation"),
        ("--compensation", "30000.001", "average_compensation"),
        ("--birth-date", "1970-02-30", "birth_date"),
        ("--separation-date", "30/06/2010", "separation_date"),
        ("--as-of", "2026-11-31", "as_of"),
    ],
)
def test_bad_option_exits_2_naming_the_option(option, value, field):
    proc = run("evaluate", *with_option(option, value))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"{option}: ")
    assert field in proc.stderr
    assert proc.stdout == ""


def test_bad_group_exits_2_naming_the_option():
    proc = run("evaluate", *EXAMPLE_1, "--group", "sheriff")
    assert proc.returncode == 2
    assert "--group: " in proc.stderr and "sheriff" in proc.stderr


def test_missing_required_option_exits_2_naming_it():
    proc = run("evaluate", *with_option("--birth-date", None))
    assert proc.returncode == 2
    assert "--birth-date: " in proc.stderr


def test_missing_refund_answer_exits_2_naming_both_forms_of_the_option():
    args = [a for a in EXAMPLE_1 if a != "--no-refund"]
    proc = run("evaluate", *args)
    assert proc.returncode == 2
    assert "--refund/--no-refund: " in proc.stderr


def test_every_bad_option_is_named_at_once():
    args = with_option("--service", "-3")
    args = [*args, "--birth-date", "1970-02-30", "--compensation", "0", "--group", "sheriff",
            "--start", "soon"]
    proc = run_installed("evaluate", *args)
    assert proc.returncode == 2
    named = {line.split(": ")[0] for line in proc.stderr.strip().splitlines()}
    assert named == {"--service", "--birth-date", "--compensation", "--group", "--start"}


def test_bad_input_with_json_prints_the_errors_as_json_and_exits_2():
    proc = run("evaluate", *with_option("--service", "-1"), "--json")
    assert proc.returncode == 2
    errors = json.loads(proc.stdout)["errors"]
    assert [(e["field"], e["code"], e["option"], e["value"]) for e in errors] == [
        ("creditable_service_years", "negative", "--service", "-1")]


def test_deferred_right_after_1960_names_the_option():
    proc = run("evaluate", *EXAMPLE_1, "--deferred-right-1960")
    assert proc.returncode == 2
    assert proc.stderr.startswith("--deferred-right-1960: ")


def test_premature_start_is_not_an_error():
    proc = run("evaluate", *EXAMPLE_1, "--start", "2027-01-01", "--json")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    assert d["premature_request"] is True and d["start_date"] is None


def test_strict_rules_by_name():
    proc = run("evaluate", "--birth-date", "1975-06-20", "--entry-date", "1996-02-01",
               "--separation-date", "2021-03-31", "--service", "25.1667",
               "--compensation", "36000.00", "--group", "police", "--no-refund",
               "--as-of", "2026-11-29", "--rules", "article19-strict-19_4", "--json")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    assert d["route"] == "19.2" and d["eligibility_date"] == "2040-06-20"
    assert d["rules_version"].startswith("article19-strict-19_4@")


def test_unknown_rules_exit_2_naming_the_option():
    proc = run("evaluate", *EXAMPLE_1, "--rules", "article99")
    assert proc.returncode == 2
    assert proc.stderr.startswith("--rules: ")
    assert "article99" in proc.stderr


def test_examples_command_evaluates_every_worked_example():
    proc = run_installed("examples", "--as-of", "2026-11-29")
    assert proc.returncode == 0, proc.stderr
    for n in range(1, 11):
        assert f"spec-{n}" in proc.stdout
    assert "$13,590.02" in proc.stdout and "$5,236.88" in proc.stdout


@pytest.mark.parametrize("lang", ["es", "en"])
def test_examples_summary_speaks_words_and_shows_every_example_whole(lang):
    # the attack: the summary was a Polars table of codes (not_yet_eligible,
    # 19.1(a), 2028-05-10, null) that hid example 6 behind a row of "…"
    import re

    from diferida.i18n import catalog

    proc = run("examples", "--as-of", "2026-11-29", "--lang", lang)
    assert proc.returncode == 0, proc.stderr
    words = catalog(lang)["examples"]
    summary = proc.stdout.split(words["summary"] + "\n", 1)[1]
    assert "…" not in summary and "null" not in summary
    for code in ("not_yet_eligible", "not_entitled", "eligible", "participant_id", "annual_amount"):
        assert not re.search(rf"\b{code}\b", summary), code
    assert not re.search(r"\d{4}-\d{2}-\d{2}", summary)
    entries = re.split(r"\n  (?=\S)", "\n" + summary)[1:]
    assert [e.split(":", 1)[0] for e in entries] == [
        words["title"].format(n=n, id=f"spec-{n}") for n in range(1, 12)]
    six = " ".join(entries[5].split())
    status = catalog(lang)["status"]
    if lang == "es":
        labels = catalog(lang)["render_labels"]
        assert six == (f"Ejemplo 6 (spec-6): {status['eligible']}; {labels['route']}: "
                       f"Regla 19.1(a); {labels['eligibility_date']}: 1 de enero de 2018; "
                       f"{labels['annual']}: $3,000.00; {labels['monthly']}: $250.00.")
        assert " ".join(entries[7].split()) == f"Ejemplo 8 (spec-8): {status['not_entitled']}."
    else:
        assert "Eligibility date: January 1, 2018" in six and "Rule 19.1(a)" in six
    assert all(len(line) <= 78 for line in summary.splitlines())


def test_rules_list_and_show():
    listed = run("rules", "list")
    assert listed.returncode == 0
    assert "article19 " in listed.stdout and "article19-strict-19_4" in listed.stdout
    shown = run("rules", "show", "article19-strict-19_4")
    assert shown.returncode == 0
    data = json.loads(shown.stdout)
    assert data["version"].startswith("article19-strict-19_4@")
    assert [r["regimes"] for r in data["rules"]["routes"] if r["id"].startswith("19.4")] == [
        ["pre1990"], ["pre1990"]]
