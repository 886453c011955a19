"""`diferida valuation`: the total pension liability at a measurement date,
against figures worked out here by hand (exact amounts, a yield curve, its
single equivalent rate, the duration), against `diferida project` runs with
the same options, the schedule of changes on a case small enough to follow,
and the employers' schedule adding up to the cent."""

from __future__ import annotations

import json
import math
from datetime import date
from decimal import Decimal

import polars as pl
import pytest
from click.testing import CliRunner

from diferida.cli import main
from diferida.liability import value_file
from diferida.liability.measure import apportion
from diferida.projection import project_file

from .projection_helpers import add_months, gompertz_table, table_csv
from .test_valuation import A1, A2, A3, A4, HEADER, monthly

C = date(2026, 6, 30)  # the measurement date: a fiscal year's end
P = date(2025, 6, 30)
STATUS = HEADER + ",benefit_status,monthly_in_pay,in_pay_since"


def write(tmp_path, rows, header=STATUS, name="census.csv"):
    p = tmp_path / name
    p.write_text(header + "\n" + "\n".join(rows) + "\n")
    return p


def cents(text: str) -> int:
    return int(Decimal(text) * 100)


def run(*args):
    args = [*map(str, args)]
    if "--lang" not in args:
        args += ["--lang", "en"]
    return CliRunner().invoke(main, ["valuation", *args], catch_exceptions=False)


def months(first: date, last: date) -> int:
    return (last.year - first.year) * 12 + last.month - first.month + 1


CENSUS = [A1 + ",deferred,,", A2 + ",deferred,,", A3 + ",deferred,,",
          A4 + ",in_pay,1000.00,2012-06-01",
          "D1,1960-01-01,1985-01-01,2010-12-31,25,36000.00,general,false,deceased,,",
          "R1,1961-01-01,1985-01-01,2010-12-31,25,36000.00,general,false,refunded,,"]


# ------------------------------------------------------ exact, by hand


def test_without_mortality_discount_or_cola_the_liability_is_the_exact_amounts(tmp_path):
    # A1 (born 1965-03-15, eligible since 2020) is paid from 1 July 2026 to
    # March 2085, the month it reaches 120; A4, in pay at $1,000.00, to May
    # 2070; A2 (police, born 1972-11-02, eligible on 2 November 2030, the
    # determination says) from 1 December 2030 to November 2092; A3 is not
    # entitled; D1 and R1 are left out
    src = write(tmp_path, CENSUS)
    out = tmp_path / "v.json"
    r = run(src, "-o", out, "--as-of", "2026-06-30", "--discount", "0", "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.output)
    a1 = cents(str(monthly(A1, "2026-06-30"))) * months(date(2026, 7, 1), date(2085, 3, 1))
    a4 = 100_000 * months(date(2026, 7, 1), date(2070, 5, 1))
    report = json.loads(out.read_text())
    assert s["counts"] == {"rows_read": 6, "deferred": 2, "in_pay": 1, "deceased": 1,
                           "refunded": 1, "not_entitled": 1, "rows_rejected": 0}
    li = s["liability"]
    assert cents(li["in_pay"]) == a4
    deferred = cents(li["deferred"])
    a2 = deferred - a1
    # A2's share: its own monthly amount times its months, from its first 1st
    m2 = cents(str(monthly(A2, "2026-06-30")))
    assert a2 % m2 == 0 and a2 // m2 == months(date(2030, 12, 1), date(2092, 11, 1))
    assert cents(li["total"]) == a1 + a2 + a4
    # a measurement on 30 June projects from the next fiscal year: FY2027 first
    assert report["fiscal_years"][0]["fiscal_year"] == 2027
    assert cents(report["fiscal_years"][0]["payments"]) == \
        12 * cents(str(monthly(A1, "2026-06-30"))) + 12 * 100_000
    assert cents(li["payments_next_fiscal_year"]) == cents(report["fiscal_years"][0]["payments"])


def test_no_rate_is_assumed(tmp_path):
    src = write(tmp_path, CENSUS)
    r = run(src, "-o", tmp_path / "v.xlsx", "--as-of", "2026-06-30")
    assert r.exit_code == 2
    assert "--discount" in r.output and "--yield-curve" in r.output
    assert "municipal bond" in r.output
    assert not (tmp_path / "v.xlsx").exists()


def test_measurement_date_defaults_to_the_last_30_june(tmp_path):
    src = write(tmp_path, CENSUS)
    for as_of, expected in (("2026-11-29", "2026-06-30"), ("2026-06-30", "2026-06-30"),
                            ("2026-06-29", "2025-06-30")):
        r = run(src, "-o", tmp_path / f"v{as_of}.json", "--as-of", as_of, "--discount",
                "0.04", "--json")
        assert r.exit_code == 0, r.output
        assert json.loads(r.output)["measurement_date"] == expected


# ------------------------------------------------ the same as `project`


@pytest.mark.parametrize("cola", ["0", "0.02"])
def test_liability_and_sensitivity_equal_project_runs(tmp_path, cola):
    # in pay, deceased and refunded members, claim rates, a mortality scale:
    # the liability is project's TOTAL at the rate, the sensitivity rows
    # project's TOTAL at the rate -/+ one point, the next fiscal year's
    # payments project's first row
    src = write(tmp_path, CENSUS + [A1.replace("A1,", "A5,") + ",deferred,,"])
    table = tmp_path / "q.csv"
    table_csv(table, gompertz_table(), phased=False)
    claims = tmp_path / "claims.csv"
    claims.write_text("age,rate\n60,0.3\n61,0.5\n62,1\n")
    common = dict(mortality=str(table), mortality_scale="1.1", claim_rates=str(claims),
                  cola=cola, as_of=date(2026, 11, 29))
    s = value_file(src, tmp_path / "v.json", discount="0.0381", measurement_date=C,
                   lang="en", **common)
    totals = {}
    for rate in ("0.0281", "0.0381", "0.0481"):
        p = project_file(src, tmp_path / f"p{rate}.csv", discount=rate, valuation_date=C,
                         lang="en", **common)
        totals[rate] = p.totals[rate]
        if rate == "0.0381":
            first = pl.read_csv(tmp_path / f"p{rate}.csv", infer_schema=False).row(0)
    li = s.liability
    assert li["total"] == totals["0.0381"]
    assert li["rate_minus_1_point"] == totals["0.0281"]
    assert li["rate_plus_1_point"] == totals["0.0481"]
    assert first[0] == "FY2027"
    assert li["payments_next_fiscal_year"] == first[3]
    assert cents(li["deferred"]) + cents(li["in_pay"]) == cents(li["total"])


# ------------------------------------------------ yield curve, by hand


def _stream(first: date, last: date, amount: float, v: date) -> list[tuple[float, float]]:
    out, d = [], first
    while d <= last:
        out.append(((d - v).days / 365.25, amount))
        d = add_months(d, 1)
    return out


def _bisect(stream, pv) -> float:
    lo, hi = 0.0, 0.5
    for _ in range(200):
        mid = (lo + hi) / 2
        if sum(c * (1 + mid) ** -t for t, c in stream) > pv:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def test_yield_curve_single_equivalent_rate_and_duration_by_hand(tmp_path):
    # one member in pay ($1,000.00, born 1950-05-10: paid to May 2070),
    # no mortality; spot rates 2% in year 1, 3% in year 2, 4% after
    src = write(tmp_path, [A4 + ",in_pay,1000.00,2012-06-01"])
    curve = tmp_path / "curve.csv"
    curve.write_text("year,rate\n1,0.02\n2,0.03\n3,0.04\n")
    r = run(src, "-o", tmp_path / "v.json", "--as-of", "2026-06-30", "--yield-curve", curve,
            "--json")
    assert r.exit_code == 0, r.output
    li = json.loads(r.output)["liability"]
    stream = _stream(date(2026, 7, 1), date(2070, 5, 1), 1000.0, C)

    def spot(t):
        return (0.02, 0.03, 0.04)[min(max(math.ceil(t), 1), 3) - 1]

    by_year: dict[int, float] = {}
    for t, c in stream:
        d = C.toordinal() + round(t * 365.25)
        y = date.fromordinal(d)
        fy = y.year + (y.month >= 7)
        by_year[fy] = by_year.get(fy, 0.0) + c * 100 * (1 + spot(t)) ** -t
    pv = sum(math.floor(v + 0.5) for v in by_year.values())
    assert cents(li["total"]) == pv
    exact = sum(c * (1 + spot(t)) ** -t for t, c in stream)
    ser = _bisect(stream, exact)
    assert abs(float(li["single_equivalent_rate"]) - ser) < 1e-6
    # Macaulay duration at the single equivalent rate
    w = [(t, c * (1 + ser) ** -t) for t, c in stream]
    mac = sum(t * x for t, x in w) / sum(x for _, x in w)
    assert abs(float(li["macaulay_duration"]) - mac) < 1e-3
    assert abs(float(li["modified_duration"]) - mac / (1 + ser)) < 1e-3
    # each rate of the curve one point lower and higher
    for key, shift in (("rate_minus_1_point", -0.01), ("rate_plus_1_point", 0.01)):
        by: dict[int, float] = {}
        for t, c in stream:
            y = date.fromordinal(C.toordinal() + round(t * 365.25))
            fy = y.year + (y.month >= 7)
            by[fy] = by.get(fy, 0.0) + c * 100 * (1 + spot(t) + shift) ** -t
        assert cents(li[key]) == sum(math.floor(v + 0.5) for v in by.values())


def test_a_flat_curve_is_the_single_rate(tmp_path):
    src = write(tmp_path, CENSUS)
    curve = tmp_path / "flat.csv"
    curve.write_text("year,rate\n" + "".join(f"{k},0.04\n" for k in range(1, 31)))
    a = json.loads(run(src, "-o", tmp_path / "a.json", "--as-of", "2026-06-30",
                       "--yield-curve", curve, "--json").output)["liability"]
    b = json.loads(run(src, "-o", tmp_path / "b.json", "--as-of", "2026-06-30",
                       "--discount", "0.04", "--json").output)["liability"]
    for k in ("total", "deferred", "in_pay", "rate_minus_1_point", "rate_plus_1_point",
              "payments_next_fiscal_year"):
        assert a[k] == b[k], k
    assert abs(float(a["single_equivalent_rate"]) - 0.04) < 1e-9


def test_duration_of_a_single_rate_by_hand(tmp_path):
    src = write(tmp_path, [A4 + ",in_pay,1000.00,2012-06-01"])
    li = json.loads(run(src, "-o", tmp_path / "v.json", "--as-of", "2026-06-30",
                        "--discount", "0.05", "--json").output)["liability"]
    stream = _stream(date(2026, 7, 1), date(2070, 5, 1), 1000.0, C)
    w = [(t, c * 1.05 ** -t) for t, c in stream]
    mac = sum(t * x for t, x in w) / sum(x for _, x in w)
    assert li["macaulay_duration"] == f"{mac:.4f}"
    assert li["modified_duration"] == f"{mac / 1.05:.4f}"
    assert li["single_equivalent_rate"] == "0.050000"


# ------------------------------------------------ the schedule of changes


def test_schedule_of_a_member_in_pay_who_died(tmp_path):
    # last year one member in pay ($1,000.00 a month), no mortality, 5%; this
    # year the member is deceased: the liability goes from A to 0 through
    # interest, the year's twelve payments, nothing expected (no mortality)
    # and the death
    prior = write(tmp_path, [A4 + ",in_pay,1000.00,2012-06-01"], name="prior.csv")
    now = write(tmp_path, [A4 + ",deceased,,"], name="now.csv")
    r = run(now, "-o", tmp_path / "v.json", "--as-of", "2026-06-30", "--discount", "0.05",
            "--prior", prior, "--prior-date", "2025-06-30", "--json")
    assert r.exit_code == 0, r.output
    lines = {ln["line"]: cents(ln["amount"]) for ln in json.loads(r.output)["changes"]}
    a = project_file(prior, tmp_path / "a.csv", discount="0.05", valuation_date=P,
                     as_of=P, lang="en")
    assert lines["start"] == cents(a.totals["0.05"])
    assert lines["payments"] == -12 * 100_000
    assert lines["experience_expected"] == 0
    # the member valued at this date, alive: what the death takes away
    t0 = project_file(prior, tmp_path / "t0.csv", discount="0.05", valuation_date=C, as_of=P,
                      lang="en")
    assert lines["experience_died"] == -cents(t0.totals["0.05"])
    assert lines["end"] == 0
    # interest: on A for the year, less on each payment for the rest of the year
    tau = (C - P).days / 365.25
    paid = [(add_months(date(2025, 7, 1), k) - P).days / 365.25 for k in range(12)]
    interest = lines["start"] * (1.05 ** tau - 1) - sum(
        100_000 * (1.05 ** (tau - t) - 1) for t in paid)
    assert abs(lines["interest"] - interest) <= 50  # cents: each year rounded on its own
    assert sum(v for k, v in lines.items() if k != "end") == lines["end"]


def test_schedule_lines_add_up_and_assumption_lines_are_separate_runs(tmp_path):
    prior = write(tmp_path, CENSUS[:4], name="prior.csv")
    joined = "J1,1962-04-01,1985-01-01,2010-12-31,26,40000.00,general,false"
    now = write(tmp_path, [A1 + ",deferred,,", A2 + ",deceased,,", A3 + ",deferred,,",
                           A4 + ",in_pay,1010.00,2012-06-01", joined + ",deferred,,"],
                name="now.csv")
    table = tmp_path / "q.csv"
    table_csv(table, gompertz_table())
    old = tmp_path / "old.toml"
    old.write_text('discount = "0.045"\nmortality = "none"\n')
    s = value_file(now, tmp_path / "v.json", discount="0.0381", mortality=str(table),
                   as_of=C, prior=prior, prior_date=P, prior_assumptions=old, lang="en")
    lines = {ln["line"]: cents(ln["amount"]) for ln in s.changes}
    assert sum(v for k, v in lines.items() if k != "end") == lines["end"]
    assert lines["end"] == cents(s.liability["total"])

    def total(**kw):
        return cents(value_file(now, tmp_path / f"r{len(kw)}{kw.get('discount')}.json",
                                as_of=C, lang="en", **kw).liability["total"])

    y0 = total(discount="0.045")
    y2 = total(discount="0.0381")
    y3 = total(discount="0.0381", mortality=str(table))
    assert lines["discount"] == y2 - y0
    assert lines["mortality"] == y3 - y2
    assert lines["benefit_terms"] == lines["claims"] == lines["other"] == 0
    counts = s.to_dict()
    assert counts["prior_counts"]["rows_read"] == 4


# ------------------------------------------------ employers


def test_employer_schedule_adds_up_to_the_totals_to_the_cent(tmp_path):
    rows = []
    for i in range(40):
        b = date(1955 + i % 20, 1 + i % 12, 1 + i % 27).isoformat()
        st = "in_pay,1234.56,2019-03-01" if i % 5 == 0 else "deferred,,"
        rows.append(f"M{i:03d},{b},1985-01-01,2010-12-31,{12 + i % 15},{30000 + 997 * i}.00,"
                    f"{('general', 'police')[i % 2]},false,{st},E{i % 3}")
    src = write(tmp_path, rows, header=STATUS + ",employer")
    names = tmp_path / "names.csv"
    names.write_text("employer,name\nE0,Hacienda\nE1,Educación\nE2,Ponce\n")
    out = tmp_path / "v.json"
    s = value_file(src, out, discount="0.0381", mortality="pub2010", as_of=C,
                   employer_names=names, lang="en")
    report = json.loads(out.read_text())
    total = cents(s.liability["total"])
    assert sum(cents(e["liability"]) for e in s.employers) == total
    assert sum(Decimal(e["proportion"]) for e in s.employers) == 1
    assert [e["name"] for e in s.employers] == ["Hacienda", "Educación", "Ponce"]
    years = [cents(y["payments"]) for y in report["fiscal_years"]]
    per = report["employer_payments"]
    for k, paid in enumerate(years):
        assert sum(cents(per[e][k]) for e in per) == paid


def test_apportion_is_the_largest_remainder():
    assert apportion([1, 1, 1], 100).tolist() == [34, 33, 33]
    # quotas 3.5, 1.75, 1.75: floors 3, 1, 1; the two cents left to the 0.75s
    assert apportion([0.5, 0.25, 0.25], 7).tolist() == [3, 2, 2]
    assert apportion([2.0, 1.0], 0).tolist() == [0, 0]


# ------------------------------------------------ actual payments of the year


def test_actual_payments_of_the_census_replace_the_expected_and_the_difference_is_experience(
        tmp_path):
    # the census gives what each member was paid in the year ending at the
    # measurement date (every row counts, the deceased's too); the schedule
    # shows it as the benefit payments and the difference from the expected
    # ones as experience; every other line is as without the column
    prior = write(tmp_path, CENSUS[:4], name="prior.csv")
    rows = [A1 + ",deferred,,,0", A2 + ",deferred,,,0.00", A3 + ",deferred,,,0",
            A4 + ",in_pay,1000.00,2012-06-01,12000.00",
            "D1,1960-01-01,1985-01-01,2010-12-31,25,36000.00,general,false,deceased,,,3000.50"]
    paid = write(tmp_path, rows, header=STATUS + ",paid_in_year", name="paid.csv")
    plain = write(tmp_path, [r.rsplit(",", 1)[0] for r in rows], name="plain.csv")
    common = ("--as-of", "2026-06-30", "--discount", "0.05", "--prior", prior,
              "--prior-date", "2025-06-30", "--json")
    with_paid = json.loads(run(paid, "-o", tmp_path / "a.json", *common).output)
    without = json.loads(run(plain, "-o", tmp_path / "b.json", *common).output)
    a = {ln["line"]: cents(ln["amount"]) for ln in with_paid["changes"]}
    b = {ln["line"]: cents(ln["amount"]) for ln in without["changes"]}
    assert a["payments_actual"] == -(1_200_000 + 300_050)
    assert a["experience_payments"] == 1_500_050 + b["payments"]  # actual − expected
    assert "payments" not in a and "payments_actual" not in b
    for key in set(a) & set(b):
        assert a[key] == b[key], key
    assert sum(v for k, v in a.items() if k != "end") == a["end"]


@pytest.mark.parametrize("value", ["", "\"12,00\"", "-5", "1.234", "abc"])
def test_a_bad_payment_of_the_year_rejects_the_row_naming_the_field(tmp_path, value):
    rows = [A1 + ",deferred,,,0", A4 + f",in_pay,1000.00,2012-06-01,{value}"]
    src = write(tmp_path, rows, header=STATUS + ",paid_in_year")
    rej = tmp_path / "rej.csv"
    r = run(src, "-o", tmp_path / "v.json", "--as-of", "2026-06-30", "--discount", "0.04",
            "--rejects", rej, "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.output)
    assert s["counts"]["rows_rejected"] == 1 and s["counts"]["rows_read"] == 2
    line = pl.read_csv(rej, infer_schema=False).row(0, named=True)
    assert (line["participant_id"], line["field"]) == ("A4", "paid_in_year")
