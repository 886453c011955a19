"""A relief's adjustments applied to the payments, checked by hand
(projection/adjust.py, docs/relief.md): each figure below is worked out in
the comment beside it, in cents, with no mortality and no discount so that
a fiscal year's payments are its payment dates times the monthly amount.

The valuation date is 1 July 2026: the first projected payment of a member
in pay is that day's, the first of fiscal year 2027 (1 July 2026 .. 1 June
2027, twelve payments)."""

from __future__ import annotations

import csv
import subprocess
from datetime import date
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diferida.projection import adjust, engine
from diferida.projection.engine import day_number
from diferida.projection.mortality import no_mortality
from diferida.relief import Adjustment, Relief
from diferida.rules import load_rules

from .conftest import cli_command, examples

V = date(2026, 7, 1)
LONG_AGO = date(2015, 7, 1)  # in pay since


def members(rows: list[tuple[date, int]], v: date = V) -> engine.Members:
    """Members (start, monthly cents), born 1 January 1960."""
    n = len(rows)
    return engine.Members(
        birth=np.full(n, day_number(date(1960, 1, 1)), dtype=np.int64),
        start=np.array([day_number(s) for s, _ in rows], dtype=np.int64),
        monthly_cents=np.array([c for _, c in rows], dtype=np.int64),
        sex=np.ones(n, dtype=np.int64), kind=np.zeros(n, dtype=np.int64),
        in_pay=np.array([s <= v for s, _ in rows]))


def payments(rows: list[tuple[date, int]], relief: Relief | None, *, years: int = 3,
             cola: str = "0", v: date = V) -> list[int]:
    """The payments (cents) of each fiscal year from the valuation date's."""
    a = engine.Assumptions(as_of=v, rates=[0.0], table=no_mortality(),
                           cola=Fraction(cola), horizon=years)
    p = adjust.project(members(rows, v), a, relief)
    assert list(p.fiscal_years) == list(range(v.year + 1 if v.month >= 7 else v.year,
                                              (v.year + 1 if v.month >= 7 else v.year) + years))
    out = [int(x) for x in p.payments]
    assert out == [x for x in p.payments]  # whole cents
    assert [int(x) for x in p.pv[0]] == out  # discount 0
    return out


def one(kind: str, when: date, **kw) -> Adjustment:
    fields = {k: (Decimal(v) if isinstance(v, str) and k != "who" else v)
              for k, v in kw.items()}
    who = fields.pop("who", "in_pay" if kind in ("cola", "one_time") else "all")
    return Adjustment(kind=kind, date=when, citation=f"art. {kind}", who=who, **fields)


def relief(*adjustments: Adjustment) -> Relief:
    return Relief("test", tuple(adjustments))


JULY_26 = date(2026, 7, 1)
JULY_27 = date(2027, 7, 1)


# ---- a raise with a cap, across the cap -------------------------------------

@pytest.mark.parametrize(("monthly", "after"), [
    (299994, 329993),  # 10% = 29999.4 -> 29999 (below the cap)
    (299995, 329995),  # 10% = 29999.5 -> 30000, half up: the cap exactly, as rounded
    (300000, 330000),  # 10% = 30000: the cap
    (300004, 330004),  # 10% = 30000.4 -> 30000: the cap
    (300005, 330005),  # 10% = 30000.5 -> 30001, capped to 30000
    (500000, 530000),  # 10% = 50000, capped
    (12345, 13580),    # 10% = 1234.5 -> 1235, half up
])
def test_a_raise_with_a_cap_across_the_cap(monthly, after):
    r = relief(one("raise", JULY_26, rate="0.10", cap_monthly="300.00"))
    assert payments([(LONG_AGO, monthly)], None) == [12 * monthly] * 3
    assert payments([(LONG_AGO, monthly)], r) == [12 * after] * 3


# ---- a floor and a raise on the same date: COLA, raises, floor ----------------

@pytest.mark.parametrize(("monthly", "after"), [
    (90000, 100000),  # raise 99000, then the floor 100000 (floor first: 110000)
    (95000, 104500),  # raise 104500, above the floor (floor first: 110000)
    (50000, 100000),  # raise 55000, floor
    (100000, 110000),  # at the floor: raise only
])
def test_a_floor_and_a_raise_on_the_same_date_raise_first(monthly, after):
    # the floor first in the file: the order on one date is the kinds', not the file's
    both = relief(one("floor", JULY_26, minimum_monthly="1000.00"),
                  one("raise", JULY_26, rate="0.10"))
    assert payments([(LONG_AGO, monthly)], both, years=2) == [12 * after] * 2
    # the same two a year apart, floor then raise: what the order on one date avoids
    apart = relief(one("floor", JULY_26, minimum_monthly="1000.00"),
                   one("raise", JULY_27, rate="0.10"))
    floored = max(monthly, 100000)
    raised = floored + (floored + 5) // 10  # 10%, half up
    assert payments([(LONG_AGO, monthly)], apart, years=2) == [12 * floored, 12 * raised]
    if monthly < 100000:
        assert 12 * raised != 12 * after


@pytest.mark.parametrize(("monthly", "after"), [
    (90000, 100000),  # COLA 91800, raise +9180 capped at 5000: 96800, floor 100000
    (95000, 101900),  # COLA 96900, raise +9690 capped: 101900 (raise then COLA: 102000)
    (200000, 209000),  # COLA 204000, raise +20400 capped: 209000
])
def test_cola_raise_and_floor_on_one_date_in_that_order(monthly, after):
    r = relief(one("floor", JULY_26, minimum_monthly="1000.00"),
               one("raise", JULY_26, rate="0.10", cap_monthly="50.00"),
               one("cola", JULY_26, rate="0.02"))
    assert payments([(LONG_AGO, monthly)], r, years=1) == [12 * after]


def test_two_raises_on_one_date_in_the_files_order_each_in_its_band():
    """Two raises, one for amounts under $1,000 and one from $1,000: the
    second's band is read after the first (the amount just before it)."""
    r = relief(one("raise", JULY_26, rate="0.10", below_monthly="1000.00"),
               one("raise", JULY_26, rate="0.05", from_monthly="1000.00"))
    # 95000 -> 104500 by the first, then in the second's band: +5225 -> 109725
    assert payments([(LONG_AGO, 95000)], r, years=1) == [12 * 109725]
    # 100000: not in the first's band; the second: 105000
    assert payments([(LONG_AGO, 100000)], r, years=1) == [12 * 105000]
    # 80000 -> 88000 by the first, still under 1,000: not the second's
    assert payments([(LONG_AGO, 80000)], r, years=1) == [12 * 88000]


# ---- a one-time payment at the band's edge ------------------------------------

DEC_26 = date(2026, 12, 1)


def test_a_one_time_payment_at_the_bands_edge():
    bonus = relief(one("one_time", DEC_26, amount="1000.00", below_monthly="1000.00"))
    # exactly at below_monthly: not in the band
    assert payments([(LONG_AGO, 100000)], bonus, years=2) == [1200000, 1200000]
    # a cent below: the bonus, once, in the fiscal year of 1 December 2026
    assert payments([(LONG_AGO, 99999)], bonus, years=2) == [12 * 99999 + 100000, 12 * 99999]
    # both: one bonus
    assert payments([(LONG_AGO, 100000), (LONG_AGO, 99999)], bonus, years=1) == [
        12 * 100000 + 12 * 99999 + 100000]


@pytest.mark.parametrize(("monthly", "paid"), [
    (90908, True),   # raise: 10% = 9090.8 -> 9091: 99999 on 1 December, in the band
    (90909, False),  # raise: 10% = 9090.9 -> 9091: 100000 on 1 December, at the edge
])
def test_a_one_time_payments_band_is_read_after_the_relief_up_to_its_date(monthly, paid):
    r = relief(one("raise", JULY_26, rate="0.10"),
               one("one_time", DEC_26, amount="1000.00", below_monthly="1000.00"))
    raised = monthly + (monthly + 5) // 10
    assert payments([(LONG_AGO, monthly)], r, years=1) == [
        12 * raised + (100000 if paid else 0)]


def test_a_one_time_payment_goes_to_those_in_pay_on_its_date():
    bonus = relief(one("one_time", DEC_26, amount="1000.00", below_monthly="1000.00"))
    # starting on 1 December 2026 (7 payments in FY2027): in pay on the date
    assert payments([(DEC_26, 50000)], bonus, years=1) == [7 * 50000 + 100000]
    # starting on 1 January 2027 (6 payments): not
    assert payments([(date(2027, 1, 1), 50000)], bonus, years=1) == [6 * 50000]


def test_a_one_time_payment_dated_before_the_valuation_date_is_not_paid():
    bonus = relief(one("one_time", date(2026, 6, 1), amount="1000.00"))
    assert payments([(LONG_AGO, 50000)], bonus, years=1) == [12 * 50000]


# ---- a COLA series shorter than the horizon -----------------------------------

def cola_file(tmp_path: Path, after: str | None) -> Relief:
    (tmp_path / "rates.csv").write_text("year,rate\n2028,0.03\n2029,0.02\n", encoding="utf-8")
    path = tmp_path / "relief.toml"
    path.write_text(
        'base = "article19"\n\n[meta]\nname = "cola-test"\n\n[post_start]\n'
        'citation = "test"\n\n[[post_start.adjustments]]\nkind = "cola"\n'
        'date = "2027-07-01"\nseries_file = "rates.csv"\ncitation = "art. 3"\n'
        + (f'after_series = "{after}"\n' if after else ""), encoding="utf-8")
    r = load_rules(path).relief
    assert r is not None
    return r


def test_a_cola_series_shorter_than_the_horizon_without_a_rate_after_it(tmp_path):
    r = cola_file(tmp_path, None)
    # FY2027 100000; FY2028 x1.03 = 103000; FY2029 x1.02 = 105060; then no COLA
    assert payments([(LONG_AGO, 100000)], r, years=5) == [
        12 * 100000, 12 * 103000, 12 * 105060, 12 * 105060, 12 * 105060]


def test_a_cola_series_shorter_than_the_horizon_then_after_series(tmp_path):
    r = cola_file(tmp_path, "0.01")
    # ... FY2030 105060 x 1.01 = 106110.6 -> 106111; FY2031 x 1.01 = 107172.11 -> 107172
    assert payments([(LONG_AGO, 100000)], r, years=5) == [
        12 * 100000, 12 * 103000, 12 * 105060, 12 * 106111, 12 * 107172]


# ---- a member starting after the effective date: who ----------------------------

LATER = date(2027, 3, 1)  # 4 payments in FY2027


@pytest.mark.parametrize(("who", "a", "b", "c"), [
    ("in_pay", 110000, 110000, 100000),
    ("later", 100000, 100000, 110000),
    ("all", 110000, 110000, 110000),
])
def test_who_a_raise_reaches(who, a, b, c):
    """A in pay long before the raise's date, B starting on it (in pay on
    it), C starting after it."""
    r = relief(one("raise", JULY_26, rate="0.10", who=who))
    assert payments([(LONG_AGO, 100000)], r, years=2) == [12 * a] * 2
    assert payments([(JULY_26, 100000)], r, years=2) == [12 * b] * 2
    assert payments([(LATER, 100000)], r, years=2) == [4 * c, 12 * c]


def test_a_relief_cola_reaches_a_later_pension_from_the_first_1_july_after_its_start():
    r = relief(one("cola", JULY_26, rate="0.02"))
    # in pay: 102000 from 1 July 2026, 104040 from 1 July 2027
    assert payments([(LONG_AGO, 100000)], r, years=2) == [12 * 102000, 12 * 104040]
    # starting 1 March 2027: 100000 (no COLA before its start), 102000 from 1 July 2027
    assert payments([(LATER, 100000)], r, years=2) == [4 * 100000, 12 * 102000]


def test_a_later_start_in_a_later_fiscal_year_takes_the_raise_at_its_first_payment():
    """A deferred member starting in FY2029: a raise of 2026 `later` (or
    `all`) applies at the first payment; one `in_pay` never does."""
    start = date(2028, 9, 1)  # 10 payments in FY2029
    for who, monthly in (("later", 110000), ("all", 110000), ("in_pay", 100000)):
        r = relief(one("raise", JULY_26, rate="0.10", who=who))
        assert payments([(start, 100000)], r, years=3) == [0, 0, 10 * monthly], who


# ---- a relief in force before the valuation date --------------------------------

def test_a_relief_effective_before_the_valuation_date_applies_at_the_first_payment():
    r = relief(one("raise", date(2024, 7, 1), rate="0.10", cap_monthly="300.00"),
               one("one_time", date(2025, 12, 1), amount="1000.00"))
    # raised from 1 July 2026, the first projected payment; no arrears, no
    # bonus of December 2025
    assert payments([(LONG_AGO, 100000)], r, years=2) == [12 * 110000] * 2
    # a pension that began after the raise's date (in_pay: not raised; later: raised)
    began = date(2025, 3, 1)
    inpay = relief(one("raise", date(2024, 7, 1), rate="0.10", who="in_pay"))
    later = relief(one("raise", date(2024, 7, 1), rate="0.10", who="later"))
    assert payments([(began, 100000)], inpay, years=1) == [12 * 100000]
    assert payments([(began, 100000)], later, years=1) == [12 * 110000]


def test_colas_in_force_before_the_valuation_date_compound_to_the_first_payment():
    r = relief(one("cola", date(2024, 7, 1), rate="0.02"),
               one("raise", date(2024, 7, 1), rate="0.10"))
    # 1 July 2024: COLA 102000, raise +10200: 112200; 1 July 2025: x1.02 = 114444;
    # 1 July 2026: x1.02 = 116732.88 -> 116733; 1 July 2027: 119067.66 -> 119068
    assert payments([(LONG_AGO, 100000)], r, years=2) == [12 * 116733, 12 * 119068]


# ---- rounding half up at each step ----------------------------------------------

def test_each_step_is_rounded_half_up_to_the_cent():
    r = relief(one("cola", JULY_26, rate="0.025"))
    # 10020 x 1.025 = 10270.5 -> 10271 (half up; to even: 10270);
    # 10271 x 1.025 = 10527.775 -> 10528 (unrounded twice over: 10527.27 -> 10527)
    assert payments([(LONG_AGO, 10020)], r, years=2) == [12 * 10271, 12 * 10528]
    # the COLA assumption the same way, a year later
    assert payments([(LONG_AGO, 10020)], None, years=3, cola="0.025") == [
        12 * 10020, 12 * 10271, 12 * 10528]


# ---- with the COLA assumption: the assumption first, then the relief's -----------

def test_the_cola_assumption_comes_before_the_reliefs_adjustments_on_1_july():
    r = relief(one("raise", JULY_27, rate="0.10", cap_monthly="50.00"))
    # FY2028: assumption 102000, then +10200 capped at 5000: 107000 (the other
    # way round 107100); FY2029: x1.02 = 109140
    assert payments([(LONG_AGO, 100000)], r, years=3, cola="0.02") == [
        12 * 100000, 12 * 107000, 12 * 109140]


def test_the_cola_assumption_and_a_relief_cola_both_apply_assumption_first():
    r = relief(one("cola", JULY_27, rate="0.01"))
    # FY2028: 102000 x 1.01 = 103020; FY2029: x1.02 = 105080.4 -> 105080,
    # x1.01 = 106130.8 -> 106131
    assert payments([(LONG_AGO, 100000)], r, years=3, cola="0.02") == [
        12 * 100000, 12 * 103020, 12 * 106131]


def test_a_floor_with_the_cola_assumption_holds_each_year_until_overtaken():
    r = relief(one("floor", JULY_27, minimum_monthly="1000.00"))
    # FY2028: 95000 x1.02 = 96900, floor 100000; FY2029: x1.02 = 102000
    assert payments([(LONG_AGO, 95000)], r, years=3, cola="0.02") == [
        12 * 95000, 12 * 100000, 12 * 102000]


# ---- through diferida compare: a census with status --------------------------------

HEADER = ("participant_id,birth_date,entry_date,separation_date,creditable_service_years,"
          "average_compensation,group,refund_requested,deferred_right_1960,"
          "requested_start_date,benefit_status,monthly_in_pay,in_pay_since,employer")
CENSUS = [
    # in pay: below, at and above the cap's edge, and under $1,000
    "P01,1955-03-15,1980-07-01,2010-06-30,25,30000.00,general,false,false,,in_pay,"
    "2999.94,2012-07-01,AG01",
    "P02,1956-03-15,1980-07-01,2010-06-30,25,30000.00,general,false,false,,in_pay,"
    "3000.05,2013-07-01,AG02",
    "P03,1957-03-15,1980-07-01,2010-06-30,25,30000.00,general,false,false,,in_pay,"
    "999.99,2014-07-01,AG01",
    "P04,1958-03-15,1980-07-01,2010-06-30,25,30000.00,general,false,false,,in_pay,"
    "1000.00,2015-07-01,MUN01",
    # deferred, their pensions starting within the horizon (pre-1990 entry, 19.1(a) at 58)
    "P05,1962-03-15,1985-07-01,2005-06-30,15,24000.00,general,false,false,,deferred,,,AG02",
    "P06,1969-10-15,1986-07-01,2008-06-30,20,36000.00,general,false,false,,deferred,,,MUN01",
    "P07,1970-01-15,1988-07-01,2009-06-30,12,18000.00,general,false,false,,deferred,,,AG01",
]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cli_command(), *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def compare(tmp_path: Path, relief_toml: str, *more: str, horizon: int = 4
            ) -> dict[str, list[dict[str, str]]]:
    (tmp_path / "census.csv").write_text("\n".join([HEADER, *CENSUS]) + "\n", encoding="utf-8")
    (tmp_path / "relief.toml").write_text(relief_toml, encoding="utf-8")
    (tmp_path / "out").mkdir()
    proc = run("compare", "census.csv", "--rules", "article19", "--rules", "relief.toml",
               "-o", "out/cmp.csv", "--as-of", "2026-06-30", "--mortality", "none",
               "--horizon", str(horizon), "--lang", "en", *more, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = {}
    for f in (tmp_path / "out").glob("cmp.*.csv"):
        with f.open(encoding="utf-8") as fh:
            out[f.name.split(".")[1]] = list(csv.DictReader(fh))
    return out


RELIEF_HEAD = ('base = "article19"\n\n[meta]\nname = "relief-test"\nillustrative = true\n\n'
               '[post_start]\ncitation = "test"\n')


def block(**kv: str) -> str:
    return "\n[[post_start.adjustments]]\n" + "".join(
        f'{k} = "{v}"\n' for k, v in kv.items())


def test_compare_costs_a_capped_raise_fiscal_year_by_fiscal_year(tmp_path):
    """The added payments, by hand: P01 2999.94 -> +299.99, P02 3000.05 ->
    +300.00 (capped), P03 999.99 -> +100.00, P04 1000.00 -> +100.00; P05,
    deferred, eligible since 2020 (its start before the raise's date: in pay
    on it, `in_pay`), 19.5(a) 24,000 x 1.5% x 15 = 5,400 a year, 450.00 a
    month -> +45.00: 844.99 a month, 10,139.88 a fiscal year. P06 starts on
    1 November 2027 (900.00 a month), P07 on 1 February 2028 (19.1(a) at 58:
    18,000 x 1.5% x 12 / 12 = 270.00 a month): after the raise's date, not
    raised."""
    t = RELIEF_HEAD + block(kind="raise", date="2026-07-01", rate="0.10",
                            cap_monthly="300.00", who="in_pay", citation="art. 2")
    out = compare(tmp_path, t, "--discount", "0")
    years = [r for r in out["fiscal_years"] if r["fiscal_year"] != "TOTAL"]
    assert [r["fiscal_year"] for r in years] == ["FY2027", "FY2028", "FY2029", "FY2030"]
    # P01..P05: 12 x 8,449.98 = 101,399.76; P06 from November 2027: 8 x 900.00,
    # then 12 x 900.00; P07 from February 2028: 5 x 270.00, then 12 x 270.00
    assert [Decimal(r["payments_a"]) for r in years] == [
        Decimal("101399.76"), Decimal("109949.76"), Decimal("115439.76"),
        Decimal("115439.76")]
    for r in years:
        assert r["payments_difference"] == "10139.88", r
        assert r["pv_0_difference"] == "10139.88"
        assert Decimal(r["payments_b"]) - Decimal(r["payments_a"]) == Decimal("10139.88")
    assert out["fiscal_years"][-1]["payments_difference"] == "40559.52"
    assert [r["starts_a"] for r in years] == ["1", "2", "0", "0"]  # P05; P06 and P07
    assert out["summary"]


def test_project_applies_the_relief_of_its_rules(tmp_path):
    """`diferida project --rules relief.toml`: the same payments as compare's
    side B, the base's plus 10,139.88 a fiscal year (above)."""
    t = RELIEF_HEAD + block(kind="raise", date="2026-07-01", rate="0.10",
                            cap_monthly="300.00", who="in_pay", citation="art. 2")
    (tmp_path / "census.csv").write_text("\n".join([HEADER, *CENSUS]) + "\n", encoding="utf-8")
    (tmp_path / "relief.toml").write_text(t, encoding="utf-8")
    got = {}
    for name, rules in (("base", "article19"), ("relief", "relief.toml")):
        proc = run("project", "census.csv", "--rules", rules, "-o", f"{name}.csv",
                   "--as-of", "2026-06-30", "--mortality", "none", "--discount", "0",
                   "--horizon", "4", "--lang", "en", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        with (tmp_path / f"{name}.csv").open(encoding="utf-8") as fh:
            got[name] = {r["fiscal_year"]: Decimal(r["payments"]) for r in csv.DictReader(fh)}
    assert got["base"]["FY2027"] == Decimal("101399.76")
    assert {k: got["relief"][k] - got["base"][k] for k in got["base"]} == {
        "FY2027": Decimal("10139.88"), "FY2028": Decimal("10139.88"),
        "FY2029": Decimal("10139.88"), "FY2030": Decimal("10139.88"),
        "TOTAL": Decimal("40559.52")}


def test_compare_costs_a_one_time_payment_at_the_bands_edge(tmp_path):
    """999.99 a month (P03) gets the $1,000 of 1 December 2026; 1000.00 (P04)
    does not; P05, paid from 1 July 2026 (450.00), does; P06, starting in
    November 2027, does not."""
    t = RELIEF_HEAD + block(kind="one_time", date="2026-12-01", amount="1000.00",
                            below_monthly="1000.00", citation="art. 4")
    out = compare(tmp_path, t, "--discount", "0")
    diffs = [r["payments_difference"] for r in out["fiscal_years"]]
    assert diffs == ["2000.00", "0.00", "0.00", "0.00", "2000.00"]


ZERO = (RELIEF_HEAD
        + block(kind="raise", date="2026-07-01", rate="0", cap_monthly="300.00", who="all",
                citation="art. 1")
        + block(kind="floor", date="2026-07-01", minimum_monthly="0.00", citation="art. 2")
        + block(kind="cola", date="2027-07-01", rate="0", citation="art. 3")
        + block(kind="one_time", date="2026-12-01", amount="0.00", below_monthly="1000.00",
                citation="art. 4")
        + block(kind="raise", date="2028-07-01", rate="0.10", cap_monthly="0.00",
                citation="art. 5"))


@pytest.mark.parametrize("more", [
    ("--discount", "0"),
    ("--discount", "0.04,0.0625", "--cola", "0.015"),
])
def test_a_relief_equal_to_the_base_differs_by_zero_to_the_cent(tmp_path, more):
    """A raise of rate 0, a floor of 0.00, a COLA of 0, a bonus of 0.00 and a
    raise capped at 0.00: every difference of every fiscal year is 0.00, and
    so is every band's and payer's."""
    out = compare(tmp_path, ZERO, *more, horizon=30)
    years = out["fiscal_years"]
    assert len(years) == 31 and years[-1]["fiscal_year"] == "TOTAL"
    assert Decimal(years[-1]["payments_a"]) > 0
    for name in ("fiscal_years", "bands", "payers"):
        rows = out.get(name, [])
        assert rows or name != "fiscal_years"
        for r in rows:
            for k, v in r.items():
                if k.endswith("_difference"):
                    assert v in ("0", "0.00"), (name, r)
            for k in r:
                if k.endswith("_a") and k[:-2] + "_b" in r:
                    assert r[k] == r[k[:-2] + "_b"], (name, k, r)


# ---- a relief never lowers a payment (property) -------------------------------------

DATES = st.integers(2000, 2035)


@st.composite
def censuses(draw):
    n = draw(st.integers(1, 10))
    rows = []
    for _ in range(n):
        if draw(st.booleans()):  # in pay since
            start = date(draw(st.integers(2000, 2026)), draw(st.integers(1, 12)), 1)
            start = min(start, V)
        else:  # starting later (some on a 1 July)
            start = date(draw(st.integers(2026, 2035)), draw(st.integers(1, 12)), 1)
        rows.append((start, draw(st.integers(1, 900000))))
    return rows


MONEY = st.integers(0, 500000).map(lambda c: Decimal(c) / 100)
RATES = st.integers(0, 2000).map(lambda r: Decimal(r) / 10000)


@st.composite
def reliefs(draw):
    from diferida.rules import _relief
    from diferida.rules_schema import PostStart

    adjustments = []
    july = st.integers(2020, 2034).map(lambda y: date(y, 7, 1))
    for kind in draw(st.lists(st.sampled_from(["raise", "floor", "one_time"]), max_size=5)):
        when = draw(july) if kind != "one_time" else date(draw(st.integers(2020, 2034)),
                                                         draw(st.integers(1, 12)), 1)
        a: dict = {"kind": kind, "date": when.isoformat(), "citation": f"art. {kind}"}
        if kind == "raise":
            a["rate"] = str(draw(RATES))
            if draw(st.booleans()):
                a["cap_monthly"] = str(draw(MONEY))
        elif kind == "floor":
            a["minimum_monthly"] = str(draw(MONEY))
        else:
            a["amount"] = str(draw(MONEY))
        if kind != "one_time" and draw(st.booleans()):
            a["who"] = draw(st.sampled_from(["in_pay", "later", "all"]))
        lo, hi = sorted([draw(st.integers(0, 600000)), draw(st.integers(0, 600000))])
        if draw(st.booleans()) and lo < hi:
            a["from_monthly"], a["below_monthly"] = str(Decimal(lo) / 100), str(Decimal(hi) / 100)
        adjustments.append(a)
    if draw(st.booleans()):
        start = draw(july)
        cola: dict = {"kind": "cola", "date": start.isoformat(), "citation": "art. cola"}
        if draw(st.booleans()):
            cola["rate"] = str(draw(RATES))
        else:
            rates = draw(st.lists(RATES, min_size=1, max_size=6))
            cola["series"] = [{"year": start.year + 1 + i, "rate": str(r)}
                              for i, r in enumerate(rates)]
            if draw(st.booleans()):
                cola["after_series"] = str(draw(RATES))
        adjustments.append(cola)
    if not adjustments:
        adjustments.append({"kind": "floor", "date": "2026-07-01", "minimum_monthly": "0",
                            "citation": "art. 0"})
    # two raises (or floors) on one date are kept only where their bands are apart
    seen: dict = {}
    kept = []
    for a in adjustments:
        band = (Decimal(a.get("from_monthly", "0")),
                Decimal(a["below_monthly"]) if "below_monthly" in a else None)
        clash = any((hi is None or band[0] < hi) and (band[1] is None or lo < band[1])
                    for lo, hi in seen.get((a["kind"], a["date"]), []))
        if not clash:
            seen.setdefault((a["kind"], a["date"]), []).append(band)
            kept.append(a)
    return _relief(PostStart.model_validate({"citation": "test", "adjustments": kept}))


@settings(max_examples=examples(100), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(rows=censuses(), r=reliefs(), cola=st.sampled_from(["0", "0.02", "0.035"]),
       years=st.integers(1, 12))
def test_a_relief_never_lowers_a_payment(rows, r, cola, years):
    a = engine.Assumptions(as_of=V, rates=[0.0, 0.05], table=no_mortality(),
                           cola=Fraction(cola), horizon=years)
    m = members(rows)
    base = adjust.project(m, a, None, per_member=True)
    with_relief = adjust.project(m, a, r, per_member=True)
    assert (with_relief.payments >= base.payments).all()
    assert (with_relief.pv >= base.pv).all()
    assert (with_relief.member_payments >= base.member_payments).all()
    # each member, fiscal year by fiscal year
    for row in rows:
        one_base = adjust.project(members([row]), a, None, per_member=False)
        one_relief = adjust.project(members([row]), a, r, per_member=False)
        assert (one_relief.payments >= one_base.payments).all(), (row, r)
