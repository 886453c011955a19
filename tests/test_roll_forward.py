"""Roll-forward (docs/valuation.md "Roll-forward"): an actuarial valuation
of a census at an earlier 30 June, rolled forward to the measurement date
with interest, less the expected payments between, plus stated adjustments.
With no experience it equals the valuation of a census dated at the
measurement date with the same members: to the cent with mortality off,
within 1 % with it (the year's expected deaths, which the roll-forward
takes out and a census of the same members, all alive, does not)."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from .test_first_cola import IN_PAY
from .test_liability import STATUS, run, write
from .test_valuation import A1, A2

# A1 eligible since 2020 (paid from the valuation date), A2 not yet, and one
# in pay: the roll-forward's year has payments of both kinds
ROWS = (A1 + ",deferred,,", A2 + ",deferred,,", IN_PAY)


def value(tmp_path, name, *args):
    src = write(tmp_path, list(ROWS), STATUS, name="census.csv")
    out = tmp_path / f"{name}.json"
    r = run(src, "-o", out, *args, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


@pytest.mark.parametrize("discount", ["0.035", "0.05"])
def test_without_mortality_the_roll_forward_is_the_valuation_at_the_later_date(
        tmp_path, discount):
    rolled = value(tmp_path, "rolled", "--as-of", "2025-06-30", "--measurement-date",
                   "2026-06-30", "--roll-forward-from", "2025-06-30", "--discount", discount)
    direct = value(tmp_path, "direct", "--as-of", "2026-06-30", "--discount", discount)
    for key in ("total", "rate_minus_1_point", "rate_plus_1_point"):
        assert rolled["liability"][key] == direct["liability"][key], key
    rf = rolled["roll_forward"]
    assert Decimal(rf["difference"]) == 0
    steps = rf["at_rate"]
    assert Decimal(steps["start"]) + Decimal(steps["interest"]) - Decimal(steps["paid"]) \
        == Decimal(steps["end"]) == Decimal(rolled["liability"]["total"])
    # the year's expected payments: A1 and the pension in pay, 12 months each
    a1 = Decimal(36000) * Decimal("0.015") * 20 / 12 + Decimal(36000) * Decimal("0.02") * 5 / 12
    assert Decimal(steps["paid"]) == 12 * (a1.quantize(Decimal("0.01")) + Decimal("1000.00"))


def test_with_mortality_the_roll_forward_takes_out_the_years_expected_deaths(tmp_path):
    common = ("--discount", "0.04", "--mortality", "pub2010")
    rolled = value(tmp_path, "rolled", "--as-of", "2025-06-30", "--measurement-date",
                   "2026-06-30", "--roll-forward-from", "2025-06-30", *common)
    direct = value(tmp_path, "direct", "--as-of", "2026-06-30", *common)
    r, d = Decimal(rolled["liability"]["total"]), Decimal(direct["liability"]["total"])
    assert r < d
    assert (d - r) / d < Decimal("0.01")
    assert Decimal(rolled["roll_forward"]["difference"]) == r - d


def test_adjustments_stated_are_added_to_the_rolled_forward_liability(tmp_path):
    base = ("--as-of", "2025-06-30", "--measurement-date", "2026-06-30",
            "--roll-forward-from", "2025-06-30", "--discount", "0.04")
    plain = value(tmp_path, "plain", *base)
    adjusted = value(tmp_path, "adjusted", *base, "--roll-forward-adjustment",
                     "Benefit change of 1 January=1000.50", "--roll-forward-adjustment",
                     "Correction=-0.25")
    assert Decimal(adjusted["liability"]["total"]) == \
        Decimal(plain["liability"]["total"]) + Decimal("1000.25")
    assert [a["label"] for a in adjusted["roll_forward"]["adjustments"]] == [
        "Benefit change of 1 January", "Correction"]
    assert Decimal(adjusted["liability"]["deferred"]) + \
        Decimal(adjusted["liability"]["in_pay"]) == Decimal(adjusted["liability"]["total"])


@pytest.mark.parametrize("args, words", [
    (("--roll-forward-from", "2025-12-31"), "--roll-forward-from 2025-12-31"),
    (("--roll-forward-from", "2026-06-30"), "before the measurement date"),
    (("--roll-forward-adjustment", "x=1"), "give --roll-forward-from too"),
    (("--roll-forward-from", "2025-06-30", "--roll-forward-adjustment", "1.00"),
     "LABEL=AMOUNT"),
    (("--roll-forward-from", "2025-06-30", "--roll-forward-adjustment", "x=1.001"),
     "LABEL=AMOUNT"),
])
def test_a_roll_forward_that_cannot_be_made_is_refused_naming_the_option(
        tmp_path, args, words):
    src = write(tmp_path, list(ROWS), STATUS)
    out = tmp_path / "v.json"
    r = run(src, "-o", out, "--as-of", "2025-06-30", "--measurement-date", "2026-06-30",
            "--discount", "0.04", *args)
    assert r.exit_code == 2, r.output
    assert words in r.output
    assert not out.exists()


def test_a_roll_forward_with_a_schedule_of_changes_is_refused(tmp_path):
    src = write(tmp_path, list(ROWS), STATUS)
    r = run(src, "-o", tmp_path / "v.json", "--as-of", "2025-06-30", "--measurement-date",
            "2026-06-30", "--discount", "0.04", "--roll-forward-from", "2025-06-30",
            "--prior", src, "--prior-date", "2025-06-30")
    assert r.exit_code == 2, r.output
    assert "--roll-forward-from and --prior" in r.output


def test_a_census_at_the_measurement_date_reconciles_the_roll_forward(tmp_path):
    # last year's census rolled forward to this 30 June, reconciled with this
    # year's census (a pension corrected, a member joined): the difference
    # is the year's experience, as the schedule of changes from one census
    # to the other measures it on the same basis
    from .test_valuation import A4

    before = write(tmp_path, list(ROWS), STATUS, name="before.csv")
    now_rows = [ROWS[0], ROWS[1], IN_PAY.replace(",1000.00,", ",1100.00,"), A4 + ",deferred,,"]
    now = write(tmp_path, now_rows, STATUS, name="now.csv")
    basis = ("--discount", "0.04", "--mortality", "none")
    r = run(before, "-o", tmp_path / "rolled.json", "--as-of", "2025-06-30",
            "--measurement-date", "2026-06-30", "--roll-forward-from", "2025-06-30",
            "--reconcile-census", now, *basis, "--json")
    assert r.exit_code == 0, r.output
    later = json.loads(r.output)["roll_forward"]["later_census"]
    assert later["counts"]["rows_read"] == 4 and later["counts"]["rows_rejected"] == 0
    s = run(now, "-o", tmp_path / "schedule.json", "--as-of", "2026-06-30", *basis,
            "--prior", before, "--prior-date", "2025-06-30", "--json")
    assert s.exit_code == 0, s.output
    out = json.loads(s.output)
    assert later["total"] == out["liability"]["total"]
    experience = sum(Decimal(ln["amount"]) for ln in out["changes"]
                     if ln["line"].startswith("experience_"))
    assert experience != 0
    assert Decimal(later["difference"]) == experience
