"""A rules set's relief is stated with the projection's assumptions (the
record of the sidecar, and in words on the workbook's assumptions sheet);
a rules set without one states none."""

from __future__ import annotations

import json

from click.testing import CliRunner

from diferida.cli import main
from diferida.projection.statement import statement

from .test_valuation import A1, A4, HEADER

RELIEF = '''base = "article19"

[meta]
name = "relief-test"
illustrative = true

[post_start]
citation = "Test relief"

[[post_start.adjustments]]
kind = "raise"
date = "2027-07-01"
rate = "0.10"
cap_monthly = "300.00"
citation = "art. 2"

[[post_start.adjustments]]
kind = "floor"
date = "2027-07-01"
minimum_monthly = "1200.00"
who = "in_pay"
citation = "art. 3"
'''


def test_the_relief_is_stated_with_the_assumptions(tmp_path):
    rules = tmp_path / "relief.toml"
    rules.write_text(RELIEF)
    src = tmp_path / "m.csv"
    src.write_text(HEADER + ",benefit_status,monthly_in_pay,in_pay_since\n"
                   + A1 + ",deferred,,\n" + A4 + ",in_pay,1000.00,2012-06-01\n")
    for name, has in ((str(rules), True), ("article19", False)):
        out = tmp_path / f"f{has}.csv"
        r = CliRunner().invoke(main, ["project", str(src), "-o", str(out), "--as-of",
                                      "2026-06-30", "--discount", "0", "--mortality", "none",
                                      "--rules", name, "--lang", "en"])
        assert r.exit_code == 0, r.output
        info = json.loads((tmp_path / f"f{has}.assumptions.json").read_text())
        assert ("relief" in info["assumptions"]) is has
        words = dict((k, v) for k, v in statement(info, "en") if v is not None)
        if has:
            kinds = [a["kind"] for a in info["assumptions"]["relief"]["adjustments"]]
            assert kinds == ["raise", "floor"]  # on one date: raises, then the floor
            text = words["Post-start adjustments (relief)"]
            assert "a raise of 10%, at most $300.00 a month" in text
            assert "a floor of $1200.00 a month" in text and "(art. 3)" in text
        else:
            assert "Post-start adjustments (relief)" not in words
