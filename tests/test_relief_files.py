"""Relief files (a rules file's `[post_start]`, docs/relief.md): a bad one is
refused with the file's line and what is wrong, by the loader, by `diferida
rules show` and by `diferida compare` (exit 2, nothing written); `rules diff`
lists the relief's adjustments each with its citation, `rules show` shows
them.

"Dates before the base's": an adjustment dated before the day from which the
rules set applies (`meta.applies_from`, 1990-04-01 for Article 19 and every
reform of it that keeps its meta), or outside the schema's years."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from diferida.rules import RulesError, load_rules

from .conftest import cli_command

HEAD = '''base = "article19"

[meta]
name = "relief-test"
title = "Prueba"
illustrative = true

[post_start]
citation = "Test relief"
'''

FLOOR = '''
[[post_start.adjustments]]
kind = "floor"
date = "2026-07-01"
minimum_monthly = "500.00"
citation = "art. 1"
'''

RAISE = '''
[[post_start.adjustments]]
kind = "raise"
date = "2026-07-01"
rate = "0.10"
cap_monthly = "300.00"
citation = "art. 2"
'''


def write(tmp_path: Path, *blocks: str, name: str = "relief.toml") -> Path:
    path = tmp_path / name
    path.write_text(HEAD + "".join(blocks), encoding="utf-8")
    return path


def line_with(path: Path, text: str, nth: int = 1) -> int:
    """The 1-based number of the `nth` line of the file holding `text`."""
    hits = [i + 1 for i, line in enumerate(path.read_text("utf-8").splitlines())
            if text in line]
    return hits[nth - 1]


def refused(path: Path) -> str:
    with pytest.raises(RulesError) as exc:
        load_rules(path)
    return str(exc.value)


# each bad file: (its blocks, the text of the line the message must name (and
# which of the lines holding it), words the message must say)
BAD = {
    "unknown key": (
        [FLOOR, RAISE.replace('cap_monthly = "300.00"', 'cap_monthly = "300.00"\ncapp = "1"')],
        ("capp =", 1), ["'capp' is not a key", "post_start.adjustments[1]"]),
    "cap below zero": (
        [FLOOR, RAISE.replace('"300.00"', '"-1.00"')],
        ("cap_monthly", 1), ["cap_monthly", "must not be negative"]),
    "overlapping bands": (
        [RAISE, RAISE.replace('"0.10"', '"0.05"').replace("art. 2", "art. 3")
         .replace('cap_monthly = "300.00"', 'below_monthly = "1000.00"')],
        ("[[post_start.adjustments]]", 2),
        ["two raises on 2026-07-01", "overlap", "'art. 2' and 'art. 3'"]),
    "raise not on 1 July": (
        [FLOOR, RAISE.replace("2026-07-01", "2026-08-01")],
        ("2026-08-01", 1), ["a raise takes effect on a 1 July", "2026-08-01"]),
    "one_time not on the 1st": (
        [RAISE, '\n[[post_start.adjustments]]\nkind = "one_time"\ndate = "2026-12-02"\n'
                'amount = "1000.00"\ncitation = "art. 4"\n'],
        ("2026-12-02", 1), ["paid on the 1st of a month", "2026-12-02"]),
    "cola with rate and series": (
        [RAISE, '\n[[post_start.adjustments]]\nkind = "cola"\ndate = "2027-07-01"\n'
                'rate = "0.02"\nseries = [{year = 2028, rate = "0.03"}]\ncitation = "art. 3"\n'],
        ("[[post_start.adjustments]]", 2), ["either a rate", "not both"]),
    "cola with neither": (
        [RAISE, '\n[[post_start.adjustments]]\nkind = "cola"\ndate = "2027-07-01"\n'
                'citation = "art. 3"\n'],
        ("[[post_start.adjustments]]", 2), ["a cola needs a rate", "series_file"]),
    "series with a gap": (
        [RAISE, '\n[[post_start.adjustments]]\nkind = "cola"\ndate = "2027-07-01"\n'
                'series = [{year = 2028, rate = "0.03"}, {year = 2030, rate = "0.02"}]\n'
                'citation = "art. 3"\n'],
        ("series =", 1), ["without gaps or repeats", "FY2030 where FY2029 was due"]),
    "series with a repeat": (
        [RAISE, '\n[[post_start.adjustments]]\nkind = "cola"\ndate = "2027-07-01"\n'
                'series = [{year = 2028, rate = "0.03"}, {year = 2028, rate = "0.02"}]\n'
                'citation = "art. 3"\n'],
        ("series =", 1), ["without gaps or repeats", "FY2028 where FY2029 was due"]),
    "series starting a year late": (
        [RAISE, '\n[[post_start.adjustments]]\nkind = "cola"\ndate = "2027-07-01"\n'
                'series = [{year = 2029, rate = "0.03"}]\ncitation = "art. 3"\n'],
        ("series =", 1), ["from FY2028", "FY2029 where FY2028 was due"]),
    "date outside the years": (
        [FLOOR, RAISE.replace("2026-07-01", "2205-07-01")],
        ("2205-07-01", 1), ["2205-07-01 is outside the years 1990 .. 2200"]),
    "date before the rules apply": (
        [RAISE, '\n[[post_start.adjustments]]\nkind = "one_time"\ndate = "1990-03-01"\n'
                'amount = "10.00"\ncitation = "art. 9"\n'],
        ("1990-03-01", 1), ["1990-03-01 is before 1990-04-01", "meta.applies_from"]),
    "band upside down": (
        [RAISE.replace('cap_monthly = "300.00"',
                       'from_monthly = "1000.00"\nbelow_monthly = "500.00"')],
        ("below_monthly", 1), ["from_monthly (1000.00) must be below below_monthly (500.00)"]),
    "two colas": (
        ['\n[[post_start.adjustments]]\nkind = "cola"\ndate = "2027-07-01"\nrate = "0.01"\n'
         'citation = "art. 3"\n',
         '\n[[post_start.adjustments]]\nkind = "cola"\ndate = "2030-07-01"\nrate = "0.02"\n'
         'citation = "art. 4"\n'],
        ("[[post_start.adjustments]]", 2), ["one cola per rules set"]),
    "a key of another kind": (
        [FLOOR.replace('minimum_monthly = "500.00"', 'minimum_monthly = "500.00"\nrate = "0.1"')],
        ("[[post_start.adjustments]]", 1), ["a floor takes no rate"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_relief_file_is_refused_with_its_line_and_what_is_wrong(tmp_path, case):
    blocks, (text, nth), words = BAD[case]
    path = write(tmp_path, *blocks)
    message = refused(path)
    assert message.startswith(f"{path}, line {line_with(path, text, nth)}: "), message
    for w in words:
        assert w in message, (w, message)


def series_file(tmp_path: Path, csv: str | None) -> Path:
    if csv is not None:
        (tmp_path / "rates.csv").write_text(csv, encoding="utf-8")
    return write(tmp_path, RAISE, '\n[[post_start.adjustments]]\nkind = "cola"\n'
                                  'date = "2027-07-01"\nseries_file = "rates.csv"\n'
                                  'after_series = "0.02"\ncitation = "art. 3"\n')


@pytest.mark.parametrize(("csv", "csv_line", "words"), [
    ("year,rate\n2028,0.032\n2030,0.025\n", 3, "FY2030 follows FY2028"),
    ("year,rate\n2028,0.032\n2029,0.025\n2029,0.01\n", 4, "FY2029 follows FY2029"),
    ("year,rate\n2028,0.032\n2029,2.5%\n", 3, "is not a number"),
    ("year;rate\n2028;0.032\n", 1, "the header must be year,rate"),
])
def test_a_bad_series_file_names_the_csv_line_and_the_rules_file_line(tmp_path, csv,
                                                                      csv_line, words):
    path = series_file(tmp_path, csv)
    message = refused(path)
    assert message.startswith(f"{path}, line {line_with(path, 'series_file')}: "), message
    assert f"{tmp_path / 'rates.csv'}, line {csv_line}: " in message
    assert words in message


def test_a_series_file_that_does_not_exist_is_refused_at_its_line(tmp_path):
    path = series_file(tmp_path, None)
    message = refused(path)
    assert message.startswith(f"{path}, line {line_with(path, 'series_file')}: "), message
    assert "rates.csv" in message and "cannot be read" in message


def test_a_series_file_starting_a_year_late_is_refused(tmp_path):
    """The CSV's years follow each other, but begin after the fiscal year
    that the COLA's date begins: the schema's check of the series, at the
    series_file's line (the series is the file's content)."""
    path = series_file(tmp_path, "year,rate\n2029,0.032\n2030,0.025\n")
    message = refused(path)
    assert message.startswith(f"{path}, line {line_with(path, 'series_file')}: "), message
    assert "FY2029 where FY2028 was due" in message


def test_the_good_file_loads(tmp_path):
    """The cases above differ from a file that loads by their fault alone."""
    r = load_rules(write(tmp_path, FLOOR, RAISE))
    assert [a.kind for a in r.relief.ordered()] == ["raise", "floor"]
    r = load_rules(series_file(tmp_path, "year,rate\n2028,0.032\n2029,0.025\n"))
    cola = next(a for a in r.relief.adjustments if a.kind == "cola")
    assert [str(cola.cola_rate(y)) for y in (2027, 2028, 2029, 2030, 2050)] == [
        "None", "0.032", "0.025", "0.02", "0.02"]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cli_command(), *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


CENSUS = ("participant_id,birth_date,entry_date,separation_date,creditable_service_years,"
          "average_compensation,group,refund_requested,deferred_right_1960,"
          "requested_start_date\n"
          "P1,1960-03-15,1985-07-01,2010-06-30,25,30000.00,general,false,false,\n")


@pytest.mark.parametrize("case", ["unknown key", "cap below zero", "overlapping bands",
                                  "one_time not on the 1st", "series with a gap",
                                  "date before the rules apply"])
def test_compare_refuses_a_bad_relief_file_with_exit_2_and_writes_nothing(tmp_path, case):
    blocks, (text, nth), words = BAD[case]
    path = write(tmp_path, *blocks)
    (tmp_path / "census.csv").write_text(CENSUS, encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    proc = run("compare", "census.csv", "--rules", "article19", "--rules", str(path),
               "-o", str(out / "cmp.xlsx"), "--html", str(out / "cmp.html"),
               "--discount", "0.04", "--mortality", "none", "--as-of", "2026-06-30",
               cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert f"{path}, line {line_with(path, text, nth)}: " in proc.stderr
    assert words[0] in proc.stderr
    assert "Traceback" not in proc.stderr
    assert list(out.iterdir()) == []


def test_compare_refuses_a_bad_series_file_at_both_lines(tmp_path):
    path = series_file(tmp_path, "year,rate\n2028,0.032\n2030,0.025\n")
    (tmp_path / "census.csv").write_text(CENSUS, encoding="utf-8")
    proc = run("compare", "census.csv", "--rules", "article19", "--rules", str(path),
               "-o", "cmp.xlsx", "--as-of", "2026-06-30", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert f"{path}, line {line_with(path, 'series_file')}: " in proc.stderr
    assert "rates.csv, line 3: FY2030 follows FY2028" in proc.stderr
    assert not (tmp_path / "cmp.xlsx").exists()


def test_rules_show_refuses_a_bad_relief_file_with_exit_2(tmp_path):
    path = series_file(tmp_path, None)
    proc = run("rules", "show", str(path), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert f"{path}, line {line_with(path, 'series_file')}: " in proc.stderr


def test_rules_show_shows_the_relief_with_its_citations_and_series(tmp_path):
    path = series_file(tmp_path, "year,rate\n2028,0.032\n2029,0.025\n")
    proc = run("rules", "show", str(path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    post = json.loads(proc.stdout)["rules"]["post_start"]
    assert post["citation"] == "Test relief"
    assert [(a["kind"], a["citation"]) for a in post["adjustments"]] == [
        ("raise", "art. 2"), ("cola", "art. 3")]
    assert post["adjustments"][1]["series"] == [{"rate": "0.032", "year": 2028},
                                                {"rate": "0.025", "year": 2029}]
    assert "series_file" not in post["adjustments"][1]  # the rates themselves, not the name


def test_rules_diff_lists_each_adjustment_with_its_own_citation(tmp_path):
    path = series_file(tmp_path, "year,rate\n2028,0.032\n2029,0.025\n")
    proc = run("rules", "diff", "article19", str(path), "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["differences"]
    assert all(r["key"].startswith("post_start") for r in rows), rows
    cited = {(r["b"], r["citation"]) for r in rows}
    # every value of the relief on a line of its own, with its adjustment's citation
    assert {("0.10", "art. 2"), ("300.00", "art. 2"), ("0.02", "art. 3"),
            ("Test relief", "Test relief")} <= cited, rows
    series = [r for r in rows if r["key"].endswith(".series")]
    assert len(series) == 1 and series[0]["citation"] == "art. 3"
    assert "2028" in series[0]["b"] and "0.032" in series[0]["b"]
    assert "2029" in series[0]["b"] and "0.025" in series[0]["b"]
    assert all(r["a"] == "—" for r in rows)  # Article 19 has no relief
    # the table, in words
    proc = run("rules", "diff", "article19", str(path), "--lang", "en", cwd=tmp_path)
    assert proc.returncode == 0 and "art. 2" in proc.stdout and "art. 3" in proc.stdout


def test_rules_diff_of_two_reliefs_shows_only_what_changed(tmp_path):
    a = write(tmp_path, FLOOR, RAISE, name="a.toml")
    b = write(tmp_path, FLOOR, RAISE.replace('"300.00"', '"250.00"'), name="b.toml")
    proc = run("rules", "diff", str(a), str(b), "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["differences"]
    assert [(r["a"], r["b"], r["citation"]) for r in rows] == [("300.00", "250.00", "art. 2")]


@pytest.mark.parametrize(("extra", "words"), [
    ('series = [{year = 2028, rate = "0.03"}]\n', "a series or a series_file, not both"),
    (None, "series_file: must name a CSV file"),
])
def test_a_series_file_with_a_series_or_not_a_name_is_refused_at_its_line(tmp_path, extra,
                                                                          words):
    (tmp_path / "rates.csv").write_text("year,rate\n2028,0.032\n", encoding="utf-8")
    name = '"rates.csv"' if extra else "2028"
    path = write(tmp_path, RAISE, '\n[[post_start.adjustments]]\nkind = "cola"\n'
                                  f'date = "2027-07-01"\nseries_file = {name}\n'
                                  + (extra or "") + 'citation = "art. 3"\n')
    message = refused(path)
    assert message.startswith(f"{path}, line {line_with(path, 'series_file')}: "), message
    assert words in message
