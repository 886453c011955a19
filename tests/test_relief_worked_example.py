"""docs/relief.md's worked example: the figures the page shows are what its
commands give (the census of bench/generate_census.py, compare against the
illustrative relief files)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from tests.conftest import run_in_process

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "relief.md"
OPTIONS = ["--as-of", "2026-06-30", "--discount", "0.04", "--mortality", "pub2010",
           "--lang", "en", "-q"]


def _shown(command: str) -> list[str]:
    """The lines the page shows after `$ command`, up to the next prompt or
    the end of the block."""
    text = PAGE.read_text("utf-8")
    after = text.split(f"$ {command}\n", 1)[1]
    return re.split(r"\n(?:\$ |```)", after, maxsplit=1)[0].splitlines()


def _cut(path: Path, rows: int) -> list[str]:
    """`head -N FILE | cut -d, -f1,5-7,10`."""
    with path.open(newline="") as f:
        lines = list(csv.reader(f))[:rows]
    return [",".join([r[0], *r[4:7], r[9]]) for r in lines]


@pytest.mark.slow
def test_the_pages_figures_are_what_its_commands_give(tmp_path):
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    from generate_census import census

    frame = census()
    path = tmp_path / "relief-census.csv"
    frame.write_csv(path)
    pay = frame.filter(frame["benefit_status"] == "in_pay")["monthly_in_pay"].cast(float)
    first = _shown("python bench/generate_census.py -o relief-census.csv")[0]
    assert f"{pay.len():,} in pay" in first and f"{(pay < 1000).sum():,} under $1,000" in first
    assert f"mean ${pay.mean():,.2f}" in first

    out = tmp_path / "relief.csv"
    proc = run_in_process("compare", str(path), "--rules", "article19", "--rules",
                          "relief-pc2038-illustrative", "-o", str(out), *OPTIONS)
    assert proc.returncode == 0, proc.stderr
    assert _cut(tmp_path / "relief.fiscal_years.csv", 11) == _shown(
        "head -11 relief.fiscal_years.csv | cut -d, -f1,5-7,10")
    summary = (tmp_path / "relief.summary.csv").read_text().splitlines()
    keys = re.compile(r"^(in_pay|members_compared|members_changed|payments_total|pv_0.04_total)")
    grep = _shown('grep -E "^(in_pay|members_compared|members_changed|payments_total|'
                  'pv_0.04_total)" relief.summary.csv')
    assert [line for line in summary if keys.match(line)] == grep

    assert (tmp_path / "relief.band_counts.csv").read_text().splitlines() == _shown(
        "cat relief.band_counts.csv")
    for table, pattern, shown in (
            ("bands", r"^(fiscal_year|FY2027|TOTAL),",
             'grep -E "^(fiscal_year|FY2027|TOTAL)," relief.bands.csv | cut -d, -f1,2,5,8'),
            ("payers", r"^(fiscal_year|FY2027|TOTAL),(employer|AG01|MU01|CP01),",
             'grep -E "^(fiscal_year|FY2027|TOTAL),(employer|AG01|MU01|CP01)," '
             'relief.payers.csv | cut -d, -f1,2,5,8')):
        lines = (tmp_path / f"relief.{table}.csv").read_text().splitlines()
        cut = [",".join(line.split(",")[i] for i in (0, 1, 4, 7))
               for line in lines if re.match(pattern, line)]
        assert cut == _shown(shown)
    counts = (tmp_path / "relief.payer_counts.csv").read_text().splitlines()
    assert [line for line in counts if re.match(r"^(employer|AG01|MU01|CP01|TOTAL),", line)] \
        == _shown('grep -E "^(employer|AG01|MU01|CP01|TOTAL)," relief.payer_counts.csv')

    bonus = tmp_path / "bonus.csv"
    proc = run_in_process("compare", str(path), "--rules", "article19", "--rules",
                          "relief-bonus-1000-illustrative", "-o", str(bonus), *OPTIONS)
    assert proc.returncode == 0, proc.stderr
    assert _cut(tmp_path / "bonus.fiscal_years.csv", 3) == _shown(
        "head -3 bonus.fiscal_years.csv | cut -d, -f1,5-7,10")
    rows = csv.reader((tmp_path / "bonus.band_counts.csv").read_text().splitlines())
    gain = {r[0]: r[4] for r in rows}
    assert gain["TOTAL"] == "97673" and "97,673 gain" in PAGE.read_text("utf-8")
