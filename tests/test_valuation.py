"""`diferida project` as a valuation: benefit status (in pay, deceased,
refunded), claim rates, a valuation date apart from --as-of, the mortality
scale, the breakdown and the sensitivity grid, each against figures worked
out here by hand or by an independent loop."""

from __future__ import annotations

import json
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diferida.cli import main
from diferida.core import evaluate_frame
from diferida.projection import project_file

from .conftest import examples
from .print_helpers import numbers_as_text
from .projection_helpers import (
    add_months,
    constant_table,
    first_first,
    fy,
    gompertz_table,
    reference,
    table_csv,
)

V = "2026-11-29"
HEADER = ("participant_id,birth_date,entry_date,separation_date,creditable_service_years,"
          "average_compensation,group,refund_requested")
A1 = "A1,1965-03-15,1985-01-01,2010-12-31,25,36000.00,general,false"  # eligible 2020
A2 = "A2,1972-11-02,1995-08-01,2015-07-31,12.25,28500.00,police,false"  # not yet eligible
A3 = "A3,1980-03-15,2000-01-01,2015-12-31,15,30000,general,false"  # not entitled
A4 = "A4,1950-05-10,1968-07-01,2000-06-30,22,30000.00,general,false"


def write(tmp_path, rows, header=HEADER, name="members.csv"):
    p = tmp_path / name
    p.write_text(header + "\n" + "\n".join(rows) + "\n")
    return p


def run(*args):
    args = [*map(str, args)]
    if "--lang" not in args:
        args += ["--lang", "en"]
    return CliRunner().invoke(main, ["project", *args], catch_exceptions=False)


def monthly(row: str, as_of: str = V) -> Decimal:
    """The determination's exact monthly amount of one member row."""
    det = evaluate_frame(pl.read_csv((HEADER + "\n" + row + "\n").encode(), infer_schema=False),
                         as_of=date.fromisoformat(as_of)).determinations
    return det["monthly_amount"][0]


def years(path) -> dict[str, Decimal]:
    t = pl.read_csv(path, infer_schema=False)
    return {r["fiscal_year"]: Decimal(r["payments"]) for r in t.iter_rows(named=True)}


def half_up(x: Decimal) -> Decimal:
    return x.quantize(Decimal("0.01"), ROUND_HALF_UP)


# --------------------------------------------------------------- benefit status


def test_in_pay_is_projected_from_its_amount_with_cola_on_the_current_amount(tmp_path):
    h = HEADER + ",benefit_status,monthly_in_pay,in_pay_since"
    rows = [A4 + ",in_pay,1000.00,2012-06-01", A1 + ",deceased,,", A2 + ",refunded,,",
            A3 + ",deferred,,"]
    src = write(tmp_path, rows, header=h)
    out = tmp_path / "flows.csv"
    r = run(src, "-o", out, "--as-of", V, "--discount", "0", "--mortality", "none",
            "--cola", "0.02", "--horizon", "3", "--json")
    assert r.exit_code == 0, r.output
    got = years(out)
    # by hand: Dec 2026 .. Jun 2027 = 7 payments of 1,000.00; then 1 July 2027
    # 1,000.00 x 1.02 = 1,020.00 (12 payments); 1 July 2028 1,020.00 x 1.02 = 1,040.40
    assert got["FY2027"] == Decimal("7000.00")
    assert got["FY2028"] == Decimal("12240.00")
    assert got["FY2029"] == Decimal("12484.80")
    assert got["TOTAL"] == Decimal("31724.80")
    s = json.loads(r.output)
    assert (s["rows_read"], s["projected"], s["in_pay"], s["deceased"], s["refunded"],
            s["not_entitled"], s["rows_rejected"]) == (4, 0, 1, 1, 1, 1, 0)
    t = pl.read_csv(out, infer_schema=False)
    assert t["starts"].to_list() == ["0", "0", "0", "0"]  # in pay: never a start


def test_in_pay_and_deferred_exact_to_the_cent_without_mortality_discount_or_cola(tmp_path):
    h = HEADER + ",benefit_status,monthly_in_pay,in_pay_since"
    rows = [A4 + ",in_pay,1234.57,2020-01-01", A1 + ",deferred,,"]
    src = write(tmp_path, rows, header=h)
    out = tmp_path / "flows.csv"
    r = run(src, "-o", out, "--as-of", V, "--discount", "0", "--mortality", "none")
    assert r.exit_code == 0, r.output
    expected: dict[str, Decimal] = {}
    for birth, amount in ((date(1950, 5, 10), Decimal("1234.57")),
                          (date(1965, 3, 15), monthly(A1))):
        d = first_first(date.fromisoformat(V))
        while d <= date(birth.year + 120, birth.month, 1):
            key = f"FY{fy(d)}"
            expected[key] = expected.get(key, Decimal(0)) + amount
            d = add_months(d, 1)
    got = years(out)
    assert {k: v for k, v in got.items() if k != "TOTAL" and v} == expected
    assert got["TOTAL"] == sum(expected.values())


@pytest.mark.parametrize("status,amount,since,field,says", [
    ("", "", "", "benefit_status", "empty"),
    ("retired", "", "", "benefit_status", "'retired' is not deferred"),
    ("in_pay", "", "2020-01-01", "monthly_in_pay", "missing"),
    ("in_pay", "12.345", "2020-01-01", "monthly_in_pay", "not an amount"),
    ("in_pay", "0", "2020-01-01", "monthly_in_pay", "not more than 0"),
    ("in_pay", "100", "", "in_pay_since", "missing"),
    ("in_pay", "100", "01/02/2020", "in_pay_since", "not a date"),
    ("in_pay", "100", "2027-01-01", "in_pay_since", "after the as-of date"),
    ("in_pay", "100", "1940-01-01", "in_pay_since", "before the birth date"),
    ("deferred", "100", "", "monthly_in_pay", "only a member in_pay"),
    ("refunded", "", "2020-01-01", "in_pay_since", "only a member in_pay"),
    # lengths that overflowed the parse of the amounts and failed the whole run
    ("in_pay", "1" * 35, "2020-01-01", "monthly_in_pay", "not an amount"),
    ("in_pay", "9" * 36 + ".50", "2020-01-01", "monthly_in_pay", "not an amount"),
    ("in_pay", "+" + "5" * 35, "2020-01-01", "monthly_in_pay", "not an amount"),
])
def test_bad_status_values_are_rejected_naming_field_row_and_id(tmp_path, status, amount,
                                                                since, field, says):
    """Beside a member in pay, whose amount is read: the one row refused."""
    h = HEADER + ",benefit_status,monthly_in_pay,in_pay_since"
    rows = [A1 + ",in_pay,850.00,2020-01-01",
            A4.replace("A4", "B7") + f",{status},{amount},{since}"]
    src = write(tmp_path, rows, header=h)
    rej = tmp_path / "rej.csv"
    r = run(src, "-o", tmp_path / "f.csv", "--as-of", V, "--discount", "0", "--mortality",
            "none", "--rejects", rej, "--json")
    assert r.exit_code == 0, r.output
    bad = pl.read_csv(rej, infer_schema=False)
    assert bad["row"].to_list() == ["3"] and bad["participant_id"].to_list() == ["B7"]
    assert bad["field"].to_list() == [field]
    assert says in bad["message"][0]
    s = json.loads(r.output)
    assert s["rows_read"] == 2 == s["projected"] + s["in_pay"] + s["deceased"] + \
        s["refunded"] + s["not_entitled"] + s["rows_rejected"]
    assert s["rows_rejected"] == 1 and s["in_pay"] == 1


def test_no_status_column_means_deferred_and_the_summary_is_as_before(tmp_path):
    src = write(tmp_path, [A1, A2, A3])
    r = run(src, "-o", tmp_path / "f.csv", "--as-of", V, "--discount", "0", "--mortality",
            "none", "--json")
    s = json.loads(r.output)
    assert (s["projected"], s["not_entitled"]) == (2, 1)
    assert "in_pay" not in s  # no valuation option or column: the summary of before


# ------------------------------------------------------------------ claim rates


@pytest.mark.parametrize("table", ["age,rate\n61,0.5\n62,1\n",
                                   "years_since_eligibility,rate\n0,0\n1,0\n2,0\n3,0\n4,0\n"
                                   "5,0\n6,0.5\n7,1\n"])
def test_claim_rates_two_ages_by_hand(tmp_path, table):
    # A1 is 61 on V (born 1965-03-15) and eligible since 2020-03-15 (6 years):
    # half claim on V (first payment 1 Dec 2026), the other half on 29 Nov 2027
    # (age 62, 7 years: rate 1; first payment 1 Dec 2027)
    rates = tmp_path / "claims.csv"
    rates.write_text(table)
    src = write(tmp_path, [A1])
    out = tmp_path / "flows.csv"
    r = run(src, "-o", out, "--as-of", V, "--discount", "0", "--mortality", "none",
            "--claim-rates", rates, "--horizon", "3", "--json")
    assert r.exit_code == 0, r.output
    m = monthly(A1)
    got = years(out)
    assert got["FY2027"] == half_up(m * 7 / 2)
    assert got["FY2028"] == half_up(m * 12 / 2 + m * 7 / 2)
    assert got["FY2029"] == half_up(m * 12)
    t = pl.read_csv(out)
    assert t["starts"].to_list()[:3] == [0.5, 0.5, 0.0]
    s = json.loads(r.output)
    assert s["starts_first_year"] == 0.5
    side = json.loads((tmp_path / "flows.assumptions.json").read_text())
    assert "claim by yearly rates" in side["assumptions"]["claim"]


def test_default_claim_rule_is_stated(tmp_path):
    src = write(tmp_path, [A1, A2])
    out = tmp_path / "flows.xlsx"
    r = run(src, "-o", out, "--as-of", V, "--discount", "0", "--mortality", "none",
            "--valuation-date", V, "--json")
    assert r.exit_code == 0, r.output
    # the assumptions sheet states each item in words (no record keys)
    a = dict(pl.read_excel(out, sheet_name="assumptions").rows())
    assert "start at the valuation date" in a["When the eligible claim"]
    assert "Other recorded items" not in a
    assert json.loads(r.output)["starts_first_year"] == 1  # A1 starts in FY2027


@pytest.mark.parametrize("lang", ["es", "en"])
def test_every_valuation_assumption_is_stated_in_words(tmp_path, lang):
    from diferida.projection.statement import statement, unstated

    table = tmp_path / "g.csv"
    table_csv(table, gompertz_table(), phased=True)
    rates = tmp_path / "claims.csv"
    rates.write_text("age,rate\n61,0.5\n62,1\n")
    header = HEADER + ",benefit_status,monthly_in_pay,in_pay_since"
    src = write(tmp_path, [A1 + ",deferred,,", A2 + ",deferred,,",
                           A4 + ",in_pay,1500.00,2015-06-01", A3 + ",deceased,,"], header)
    s = project_file(src, tmp_path / "f.xlsx", discount="0.04", mortality="none",
                     cola="0.015", as_of=date.fromisoformat(V),
                     valuation_date=date(2026, 6, 30), claim_rates=rates,
                     mortality_scale="1.1", by="group,age_band", sensitivity=True,
                     lang=lang)
    s2 = project_file(src, tmp_path / "f2.csv", discount="0.04", mortality=str(table),
                      as_of=date.fromisoformat(V), claim_rates=rates, mortality_scale="1.1",
                      lang=lang)
    for info in (s.assumptions, s2.assumptions):
        assert unstated(info) == []  # no record key left for a reader to decode
    rows = statement(s2.assumptions, lang)
    values = [v for _, v in rows]
    assert 1.1 in values  # the mortality scale, a number
    assert date(2026, 11, 29) in values  # the determinations' date, a date
    texts = " ".join(str(v) for v in values)
    assert "claims.csv" in texts and s2.assumptions["assumptions"]["claim_rates"]["sha256"] \
        in texts
    sheet = "supuestos" if lang == "es" else "assumptions"
    a = dict(pl.read_excel(tmp_path / "f.xlsx", sheet_name=sheet).rows())
    counts = {"es": ("Miembros en pago (proyectados desde el importe que se paga)",
                     "Fallecidos (contados y excluidos)"),
              "en": ("Members in pay (projected from the amount being paid)",
                     "Deceased (counted and left out)")}[lang]
    assert a[counts[0]] == "1" and a[counts[1]] == "1"
    assert numbers_as_text(tmp_path / "f.xlsx") == []


@pytest.mark.parametrize("body,says", [
    ("age,qx\n60,1\n", "header must be"),
    ("age,rate\n60,0.5\n62,1\n", "gaps: no age 61"),
    ("age,rate\n60,0.5\n60,1\n", "line 3: age 60 is repeated"),
    ("age,rate\n60,1.5\n", "line 2: rate 1.5 is not a probability"),
    ("age,rate\n60,0.5\n61,0.9\n", "must be 1"),
    ("age,rate\nsixty,1\n", "line 2: age 'sixty'"),
    ("years_since_eligibility,rate\n1,1\n", "must start at 0"),
])
def test_bad_claim_tables_are_named_with_their_line(tmp_path, body, says):
    rates = tmp_path / "claims.csv"
    rates.write_text(body)
    src = write(tmp_path, [A1])
    r = run(src, "-o", tmp_path / "f.csv", "--as-of", V, "--discount", "0", "--mortality",
            "none", "--claim-rates", rates)
    assert r.exit_code == 2
    assert "--claim-rates" in r.output and says in r.output
    assert not (tmp_path / "f.csv").exists()


# ------------------------------------------------------- --valuation-date


def test_valuation_date_apart_from_as_of(tmp_path):
    # determinations as of 29 Nov 2026, measured from 30 June 2026: A1 is paid
    # from 1 July 2026, each payment discounted from 30 June 2026; a valuation
    # at a fiscal year's end projects from the next fiscal year (no one-day
    # FY2026 of zeros)
    src = write(tmp_path, [A1])
    out = tmp_path / "flows.csv"
    r = run(src, "-o", out, "--as-of", V, "--valuation-date", "2026-06-30", "--discount",
            "0.05", "--mortality", "none", "--horizon", "2", "--json")
    assert r.exit_code == 0, r.output
    m = monthly(A1)
    t = pl.read_csv(out, infer_schema=False)
    assert t["fiscal_year"].to_list() == ["FY2027", "FY2028", "TOTAL"]
    pv = 0.0
    d = date(2026, 7, 1)
    while d <= date(2027, 6, 1):
        pv += float(m) * 1.05 ** (-(d - date(2026, 6, 30)).days / 365.25)
        d = add_months(d, 1)
    row = t.row(0, named=True)
    assert Decimal(row["payments"]) == m * 12
    assert Decimal(row["pv_0.05"]) == half_up(Decimal(repr(pv)))
    side = json.loads((tmp_path / "flows.assumptions.json").read_text())["assumptions"]
    assert (side["valuation_date"], side["determinations_as_of"]) == ("2026-06-30", V)
    assert json.loads(r.output)["starts_first_year"] == 1


def test_determinations_speak_for_as_of_not_the_valuation_date(tmp_path):
    # A2 (born 1972-11-02) under --as-of and under --valuation-date: the status
    # is the determination's as of --as-of whatever the valuation date
    src = write(tmp_path, [A2])
    for as_of in ("2026-11-29", "2040-01-01"):
        pm = tmp_path / f"m{as_of}.csv"
        r = run(src, "-o", tmp_path / f"f{as_of}.csv", "--as-of", as_of, "--valuation-date",
                V, "--discount", "0", "--mortality", "none", "--per-member", pm)
        assert r.exit_code == 0, r.output
        status = pl.read_csv(pm, infer_schema=False)["status"][0]
        det = evaluate_frame(pl.read_csv((HEADER + "\n" + A2 + "\n").encode(),
                                         infer_schema=False),
                             as_of=date.fromisoformat(as_of)).determinations
        assert status == det["status"][0]


# --------------------------------------------------------- --mortality-scale


def test_mortality_scale_against_an_independent_loop(tmp_path):
    table = tmp_path / "q.csv"
    table_csv(table, constant_table(0.04))
    src = write(tmp_path, [A1])
    out = tmp_path / "flows.csv"
    r = run(src, "-o", out, "--as-of", V, "--discount", "0.03", "--mortality", table,
            "--mortality-scale", "0.5", "--horizon", "5")
    assert r.exit_code == 0, r.output
    q = np.full(121, 0.04 * 0.5)
    cents = int(monthly(A1) * 100)
    ref = reference(date(1965, 3, 15), date(2020, 3, 15), cents, date.fromisoformat(V), q, q,
                    rate=0.03, horizon=5)
    t = pl.read_csv(out, infer_schema=False)
    for row in t.iter_rows(named=True):
        if row["fiscal_year"] == "TOTAL":
            continue
        pay, pv = ref[int(row["fiscal_year"][2:])]
        assert abs(Decimal(row["payments"]) * 100 - Decimal(repr(float(pay)))) <= Decimal("0.51")
        assert abs(Decimal(row["pv_0.03"]) * 100 - Decimal(repr(float(pv)))) <= Decimal("0.51")


def test_mortality_scale_is_capped_at_one(tmp_path):
    src = write(tmp_path, [A1])
    outs = []
    for q, scale in ((0.6, "2"), (1.0, "1")):
        table = tmp_path / f"q{q}.csv"
        table_csv(table, constant_table(q))
        out = tmp_path / f"f{q}.csv"
        r = run(src, "-o", out, "--as-of", V, "--discount", "0", "--mortality", table,
                "--mortality-scale", scale)
        assert r.exit_code == 0, r.output
        outs.append(out.read_text())
    assert outs[0] == outs[1]


# ------------------------------------------------------------------- --by


def test_by_group_and_eligible_now(tmp_path):
    h = HEADER + ",benefit_status,monthly_in_pay,in_pay_since"
    rows = [A1 + ",deferred,,", A2 + ",deferred,,", A3 + ",deferred,,",
            A4 + ",in_pay,900.00,2015-01-01"]
    src = write(tmp_path, rows, header=h)
    out = tmp_path / "flows.csv"
    r = run(src, "-o", out, "--as-of", V, "--discount", "0", "--mortality", "none",
            "--by", "group,eligible_now", "--per-member", tmp_path / "m.csv")
    assert r.exit_code == 0, r.output
    by = pl.read_csv(tmp_path / "flows.by.csv", infer_schema=False)
    members = pl.read_csv(tmp_path / "m.csv", infer_schema=False)
    assert by["group"].to_list() == ["general", "general", "police", "TOTAL"]
    assert by["eligible_now"].to_list() == ["in_pay", "yes", "no", None]
    assert by["members"].to_list() == ["1", "1", "1", "3"]
    for g, e, pid in (("general", "in_pay", "A4"), ("general", "yes", "A1"),
                      ("police", "no", "A2")):
        row = by.filter((pl.col("group") == g) & (pl.col("eligible_now") == e))
        want = members.filter(pl.col("participant_id") == pid)["pv_0"][0]
        assert Decimal(row["pv_0"][0]) == Decimal(want)
    total = pl.read_csv(out, infer_schema=False).filter(pl.col("fiscal_year") == "TOTAL")
    assert Decimal(by["pv_0"][-1]) == Decimal(total["pv_0"][0])  # exact: no mortality


# ----------------------------------------------------------- --sensitivity


def test_each_sensitivity_row_equals_a_separate_run(tmp_path):
    pytest.importorskip("pymort")
    src = write(tmp_path, [A1, A2, A3, A4])
    out = tmp_path / "flows.csv"
    common = dict(as_of=date.fromisoformat(V), overwrite=True, lang="en")
    project_file(src, out, discount="0.04,0.0625", mortality="pub2010", cola="0.015",
                 sensitivity=True, **common)
    grid = pl.read_csv(tmp_path / "flows.sensitivity.csv", infer_schema=False)
    assert grid["scenario"].to_list() == ["base", "discount -1 point", "discount +1 point",
                                          "mortality x0.9", "mortality x1.1",
                                          "no improvement", "COLA 0"]
    for row in grid.iter_rows(named=True):
        # the rates the row says it is at, the base rates shifted by its step
        shift = Decimal(row["discount_shift"])
        rates = [row[f"rate_used_for_{x}"] for x in ("0.04", "0.0625")]
        assert [Decimal(x) for x in rates] == [Decimal(x) + shift for x in ("0.04", "0.0625")]
        one = project_file(src, tmp_path / "one.csv", discount=",".join(rates),
                           mortality="pub2010", improvement=row["improvement"],
                           cola=row["cola"], mortality_scale=row["mortality_scale"],
                           **common)
        assert Decimal(one.totals["payments"]) == Decimal(row["payments"]), row["scenario"]
        assert Decimal(one.totals[rates[0]]) == Decimal(row["pv_0.04"]), row["scenario"]
        assert Decimal(one.totals[rates[1]]) == Decimal(row["pv_0.0625"]), row["scenario"]


def test_sensitivity_factors_read_as_written_and_each_row_states_its_rate(tmp_path):
    """The mortality factors are decimal products (1.1 x 0.9 = 0.99, not the
    binary 0.9900000000000001) in the CSV, the workbook and the record; each
    row states the discount rate its present value is at (3% in "discount
    -1 point" of 4%) in words beside the value."""
    from diferida.projection.mortality import scaled

    assert scaled(scaled(gompertz_table(), 1.1), 0.9).scale == 0.99
    assert scaled(scaled(gompertz_table(), 1.1), Decimal("1.1")).scale == 1.21
    table = tmp_path / "g.csv"
    table_csv(table, gompertz_table(), phased=True)
    src = write(tmp_path, [A1, A2, A4])
    for out in (tmp_path / "flows.csv", tmp_path / "flows.xlsx"):
        r = run(src, "-o", out, "--as-of", V, "--discount", "0.005,0.04", "--mortality", table,
                "--mortality-scale", "1.1", "--sensitivity")
        assert r.exit_code == 0, r.output
    text = (tmp_path / "flows.sensitivity.csv").read_text()
    assert "0.9900000000000001" not in text and "1.2100000000000002" not in text
    grid = pl.read_csv(tmp_path / "flows.sensitivity.csv", infer_schema=False)
    by = {row["scenario"]: row for row in grid.iter_rows(named=True)}
    assert [by[f"mortality x{f}"]["mortality_scale"] for f in ("0.9", "1.1")] == ["0.99", "1.21"]
    assert by["base"]["rate_used_for_0.04"] == "0.04"
    assert by["discount -1 point"]["rate_used_for_0.04"] == "0.03"
    # a shifted rate below 0 is stated, and its present value is blank
    assert by["discount -1 point"]["rate_used_for_0.005"] == "-0.005"
    assert by["discount -1 point"]["pv_0.005"] is None
    assert by["discount +1 point"]["rate_used_for_0.005"] == "0.015"
    assert json.loads((tmp_path / "flows.assumptions.json").read_text())[
        "assumptions"]["mortality"]["scale"] == "1.1"
    book = pl.read_excel(tmp_path / "flows.xlsx", sheet_name="sensitivity")
    row = book.filter(pl.col("scenario") == "mortality x0.9").row(0, named=True)
    assert row["mortality_scale"] == 0.99 and row["rate_used_for_0.04"] == 0.04
    assert numbers_as_text(tmp_path / "flows.xlsx") == []


def test_sensitivity_and_by_sheets_in_the_workbook(tmp_path):
    table = tmp_path / "g.csv"
    table_csv(table, gompertz_table(), phased=True)
    src = write(tmp_path, [A1, A2, A4])
    out = tmp_path / "flows.xlsx"
    r = run(src, "-o", out, "--as-of", V, "--discount", "0.005,0.04", "--mortality", table,
            "--sensitivity", "--by", "age_band")
    assert r.exit_code == 0, r.output
    grid = pl.read_excel(out, sheet_name="sensitivity")
    # a rate below one point has no "-1 point" value (a negative rate is not a run)
    down = grid.filter(pl.col("scenario") == "discount -1 point")
    assert down["pv_0.005"][0] is None and down["pv_0.04"][0] > grid["pv_0.04"][0]
    by = pl.read_excel(out, sheet_name="by")
    assert by["age_band"].to_list()[:-1] == ["50-54", "60-64", "75-79"]


# ----------------------------------------- survival computed once per birth month


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from([1940, 1952, 1968, 1975]), st.integers(1, 12),
                          st.sampled_from([1, 2, 15, 28, 29, 30, 31]),
                          st.integers(0, 365 * 30)), min_size=2, max_size=6))
def test_members_of_one_birth_month_match_a_loop_day_by_day(rows):
    # the survival of a birth month's key plus (day - 1) x its slope equals
    # each member's own exact ages (29 February, the 1st and the 31st included)
    import calendar

    from diferida.projection import Assumptions, Members, project
    from diferida.projection.engine import day_number

    from .projection_helpers import gompertz_q

    births = []
    for y, m, d, _ in rows:
        d = min(d, calendar.monthrange(y, m)[1])
        births.append(date(y, m, d))
    starts = [date.fromordinal(b.toordinal() + 55 * 365 + w) for b, (*_, w) in
              zip(births, rows, strict=True)]
    members = Members(np.array([day_number(b) for b in births]),
                      np.array([day_number(s) for s in starts]),
                      np.full(len(births), 100_000), np.ones(len(births), dtype=np.int8),
                      np.zeros(len(births), dtype=np.int8))
    v = date(2026, 11, 29)
    p = project(members, Assumptions(v, [0.04], gompertz_table(before_scale=0.6), horizon=40),
                per_member=True)
    for i, (b, s) in enumerate(zip(births, starts, strict=True)):
        ref = reference(b, s, 100_000, v, gompertz_q("M", 0.6), gompertz_q("M"), rate=0.04,
                        horizon=40)
        assert p.member_payments[i] == pytest.approx(sum(x[0] for x in ref.values()),
                                                     rel=1e-9, abs=1e-6)
        assert p.member_pv[0][i] == pytest.approx(sum(x[1] for x in ref.values()),
                                                  rel=1e-9, abs=1e-6)


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.dates(date(1930, 1, 1), date(1990, 12, 31)),
                          st.integers(-365 * 20, 365 * 30), st.integers(1, 500_000),
                          st.sampled_from([-1, 0, 1]), st.sampled_from([0, 1]),
                          st.sampled_from([1.0, 0.25])), min_size=1, max_size=12),
       st.sampled_from([None, 3, 30]), st.sampled_from(["0", "0.02"]),
       st.sampled_from(["gompertz", "none"]))
def test_totals_by_key_equal_the_sums_member_by_member(rows, horizon, cola, mortality):
    # the fiscal-year totals alone (added up per key) and with each member's
    # values (member by member) are the same sums
    from fractions import Fraction

    from diferida.projection import Assumptions, Members, project
    from diferida.projection.engine import day_number
    from diferida.projection.mortality import no_mortality

    v = date(2026, 11, 29)
    members = Members(
        np.array([day_number(b) for b, *_ in rows]),
        np.array([day_number(v) + d for _, d, *_ in rows]),
        np.array([c for _, _, c, *_ in rows]),
        np.array([x[3] for x in rows], dtype=np.int8),
        np.array([x[4] for x in rows], dtype=np.int8),
        weight=np.array([x[5] for x in rows]),
        in_pay=np.array([i % 2 == 0 for i in range(len(rows))]))
    table = gompertz_table(before_scale=0.6) if mortality == "gompertz" else no_mortality()
    a = Assumptions(v, [0.0, 0.04], table, Fraction(cola), horizon, 0.3)
    one, many = project(members, a, per_member=False), project(members, a, per_member=True)
    for got, want in ((one.payments, many.payments), (one.pv, many.pv),
                      (one.in_pay, many.in_pay), (one.starts, many.starts)):
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-6)


# --------------------------------------- in pay: the COLA between the two dates


def test_in_pay_amount_raised_by_each_july_between_as_of_and_valuation_date(tmp_path):
    # the census states $1,000.00 in pay as of 29 Nov 2026; valued on
    # 30 Sep 2028 with COLA 3%: 1 July 2027 and 1 July 2028 fall between,
    # so the first projected payment (1 Oct 2028) is 1,000 -> 1,030.00 ->
    # 1,060.90, and 1 July 2029 raises it again to 1,092.73 (half up)
    h = HEADER + ",benefit_status,monthly_in_pay,in_pay_since"
    src = write(tmp_path, [A4 + ",in_pay,1000.00,2012-06-01"], header=h)
    out = tmp_path / "f.csv"
    r = run(src, "-o", out, "--as-of", V, "--valuation-date", "2028-09-30", "--discount",
            "0", "--mortality", "none", "--cola", "0.03", "--horizon", "2")
    assert r.exit_code == 0, r.output
    y = years(out)
    # FY2029: October 2028 .. June 2029 = 9 payments; FY2030: 12 at the raised amount
    assert y["FY2029"] == Decimal("1060.90") * 9
    assert y["FY2030"] == Decimal("1092.73") * 12
    # valued on the as-of date itself, the amount is the census's until 1 July 2027
    out2 = tmp_path / "g.csv"
    r = run(src, "-o", out2, "--as-of", V, "--discount", "0", "--mortality", "none",
            "--cola", "0.03", "--horizon", "2")
    assert r.exit_code == 0, r.output
    y = years(out2)
    assert y["FY2027"] == Decimal("1000.00") * 7
    assert y["FY2028"] == Decimal("1030.00") * 12


def test_in_pay_since_after_the_valuation_date_is_before_start_mortality_until_then(
        tmp_path):
    # paid since 1 Oct 2026, valued on 30 June 2026: until the payments began
    # the member was not yet paid, so before-start rates apply to it (as for
    # a deferred member), after-start rates from 1 Oct 2026 (docs/project.md)
    h = HEADER + ",benefit_status,monthly_in_pay,in_pay_since,sex"
    src = write(tmp_path, [A4 + ",in_pay,1000.00,2026-10-01,F"], header=h)
    table = tmp_path / "phased.csv"
    lines = ["age,sex,qx,phase"]
    for sex in "FM":
        for phase, q in (("before", "0"), ("after", "0.5")):
            lines += [f"{a},{sex},{q},{phase}" for a in range(0, 121)]
    table.write_text("\n".join(lines) + "\n")
    out = tmp_path / "f.csv"
    r = run(src, "-o", out, "--as-of", V, "--valuation-date", "2026-06-30", "--discount",
            "0", "--mortality", table, "--horizon", "1")
    assert r.exit_code == 0, r.output
    # before-start q = 0 up to 1 Oct 2026: the October payment is certain
    # (survival 1), whatever the after-start rate
    y = years(out)
    assert y["FY2027"] > Decimal("1000.00")
    pm = tmp_path / "m.csv"
    r = run(src, "-o", tmp_path / "f2.csv", "--as-of", V, "--valuation-date", "2026-06-30",
            "--discount", "0", "--mortality", table, "--horizon", "1", "--per-member", pm)
    first = pl.read_csv(pm, infer_schema=False).row(0, named=True)
    assert first["first_payment"] == "2026-10-01"


def test_in_pay_since_as_a_workbook_date_cell_is_a_date(tmp_path):
    # a spreadsheet program saves in_pay_since as a date cell: the workbook's
    # reader gives it as midnight; it is the same date as the CSV's text
    h = HEADER + ",benefit_status,monthly_in_pay,in_pay_since"
    src = write(tmp_path, [A4 + ",in_pay,1000.00,2012-06-01", A1 + ",deferred,,"], header=h)
    frame = pl.read_csv(src, infer_schema=False).with_columns(
        pl.col("in_pay_since").str.to_date(), pl.col("birth_date").str.to_date())
    book = tmp_path / "members.xlsx"
    frame.write_excel(book)
    outs = []
    for name, path in (("csv", src), ("xlsx", book)):
        out = tmp_path / f"{name}.csv"
        r = run(path, "-o", out, "--as-of", V, "--discount", "0", "--mortality", "none",
                "--horizon", "2", "--json")
        assert r.exit_code == 0, r.output
        s = json.loads(r.output)
        assert (s["rows_rejected"], s["in_pay"]) == (0, 1), r.output
        outs.append(out.read_text())
    assert outs[0] == outs[1]
