"""`diferida project` on files: the same reading, deciding and rejects as the
batch, the accounting, the outputs, the tables, and bad input (exit 2)."""

from __future__ import annotations

import json
import zipfile
from datetime import date
from decimal import Decimal

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diferida.cli import main
from diferida.core import evaluate_frame
from diferida.projection import load_csv_table, project_file, resolve
from diferida.projection.mortality import TableError

from .conftest import examples
from .print_helpers import numbers_as_text
from .projection_helpers import add_months, first_first, fy, gompertz_table, table_csv

V = "2026-11-29"
HEADER = ("participant_id,birth_date,entry_date,separation_date,creditable_service_years,"
          "average_compensation,group,refund_requested")
ROWS = [
    "A1,1965-03-15,1985-01-01,2010-12-31,25,36000.00,general,false",  # eligible 2020
    "A2,1972-11-02,1995-08-01,2015-07-31,12.25,28500.00,police,false",
    "A3,1980-03-15,2000-01-01,2015-12-31,15,30000,general,false",  # not entitled
    "A4,1970-05-10,1988-07-01,2010-06-30,22,30000.00,general,false",
    "A5,1963-07-19,1990-01-01,2012-12-31,20,41000.55,firefighter,false",
]


def write(tmp_path, rows, header=HEADER, name="members.csv"):
    p = tmp_path / name
    p.write_text(header + "\n" + "\n".join(rows) + "\n")
    return p


def run(*args):
    args = [*map(str, args)]
    if "--lang" not in args:  # these tests read the English headers
        args += ["--lang", "en"]
    return CliRunner().invoke(main, ["project", *args], catch_exceptions=False)


def test_exact_to_the_cent_without_mortality_discount_or_cola(tmp_path):
    src = write(tmp_path, ROWS)
    out = tmp_path / "flows.csv"
    r = run(src, "-o", out, "--as-of", V, "--discount", "0", "--mortality", "none",
            "--cola", "0", "--per-member", tmp_path / "m.csv")
    assert r.exit_code == 0, r.output
    table = pl.read_csv(out, schema_overrides={"payments": pl.String, "pv_0": pl.String})
    # independent: the exact monthly amounts of the determinations, times the
    # 1sts of each fiscal year from the first payment to age 120
    det = evaluate_frame(pl.read_csv(src, infer_schema=False),
                         as_of=date.fromisoformat(V)).determinations
    expected: dict[int, Decimal] = {}
    for d in det.filter(pl.col("status") != "not_entitled").iter_rows(named=True):
        birth = date.fromisoformat(next(x for x in ROWS if x.startswith(d["participant_id"]))
                                   .split(",")[1])
        pay = first_first(max(date.fromisoformat(V), d["start_date"] or d["eligibility_date"]))
        last = date(birth.year + 120, birth.month, 1)
        while pay <= last:
            expected[fy(pay)] = expected.get(fy(pay), Decimal(0)) + d["monthly_amount"]
            pay = add_months(pay, 1)
    got = {int(row[0][2:]): Decimal(row[1]) for row in
           table.select("fiscal_year", "payments").iter_rows() if row[0] != "TOTAL"}
    assert {k: v for k, v in got.items() if v} == expected
    total = table.filter(pl.col("fiscal_year") == "TOTAL")
    assert Decimal(total["payments"][0]) == sum(expected.values())
    assert Decimal(total["pv_0"][0]) == sum(expected.values())
    side = json.loads((tmp_path / "flows.assumptions.json").read_text())
    assert side["counts"] == {**side["counts"], "rows_read": 5, "projected": 4,
                              "not_entitled": 1, "rows_rejected": 0}
    a = side["assumptions"]
    assert a["valuation_date"] == V and a["discount_rates"] == ["0"] and a["cola"] == "0"
    assert a["mortality"]["table"] == "none" and a["start_rule"].startswith("eligibility")
    assert a["rules"]["name"] == "article19"
    members = pl.read_csv(tmp_path / "m.csv")
    assert members.height == 4
    assert members.columns == ["participant_id", "status", "start_date", "first_payment",
                               "monthly_amount", "payments", "pv_0"]


def test_sex_column_validated_and_rejected_like_any_field(tmp_path):
    rows = [r + s for r, s in zip(ROWS, [",F", ",M", ",", ", x ", ",f"], strict=True)]
    src = write(tmp_path, rows, HEADER + ",sex")
    rej = tmp_path / "rej.csv"
    r = run(src, "-o", tmp_path / "f.csv", "--as-of", V, "--discount", "0.04", "--mortality",
            "none", "--rejects", rej)
    assert r.exit_code == 0, r.output
    bad = pl.read_csv(rej)
    assert bad.select("row", "participant_id", "field", "code", "value").rows() == [
        (5, "A4", "sex", "unknown_sex", "x"), (6, "A5", "sex", "unknown_sex", "f")]
    assert "'x' is not F or M" in bad["message"][0]
    side = json.loads((tmp_path / "f.assumptions.json").read_text())["counts"]
    assert (side["rows_read"], side["projected"], side["not_entitled"],
            side["rows_rejected"]) == (5, 2, 1, 2)


def test_a_row_with_a_bad_field_and_a_bad_sex_lists_both(tmp_path):
    rows = ["B1,1965-13-15,1985-01-01,2010-12-31,25,36000.00,general,false,Q"]
    src = write(tmp_path, rows, HEADER + ",sex")
    rej = tmp_path / "rej.csv"
    r = run(src, "-o", tmp_path / "f.csv", "--as-of", V, "--discount", "0.04", "--mortality",
            "none", "--rejects", rej)
    assert r.exit_code == 0, r.output
    assert pl.read_csv(rej)["field"].to_list() == ["birth_date", "sex"]


def test_sex_column_by_column_map(tmp_path):
    src = write(tmp_path, [r + ",M" for r in ROWS], HEADER + ",Gender")
    cmap = tmp_path / "map.toml"
    cmap.write_text('[columns]\n"Gender" = "sex"\n')
    table = tmp_path / "t.csv"
    table_csv(table, gompertz_table())
    r = run(src, "-o", tmp_path / "f.csv", "--as-of", V, "--discount", "0.04", "--mortality",
            table, "--columns", cmap, "--json")
    assert r.exit_code == 0, r.output
    side = json.loads((tmp_path / "f.assumptions.json").read_text())
    assert side["counts"]["sex_given"] == 4 and side["counts"]["sex_blended"] == 0


@settings(max_examples=examples(15), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(st.sampled_from(range(9)), min_size=1, max_size=25))
@pytest.mark.slow
def test_every_row_is_accounted_for(tmp_path_factory, picks):
    tmp = tmp_path_factory.mktemp("acc")
    variants = [*[r + ",F" for r in ROWS],
                "C1,1965-03-15,1985-01-01,2010-12-31,-25,36000.00,general,false,M",
                "C2,1965-03-15,1985-01-01,2010-12-31,25,36000.00,general,false,X",
                "A1,1965-03-15,1985-01-01,2010-12-31,25,36000.00,general,false,",
                "C3,1965-03-15,1985-01-01,2010-12-31,25,36000.00,navy,maybe,?"]
    rows = [variants[i].replace(variants[i].split(",")[0], f"{variants[i].split(',')[0]}-{n}")
            if i not in (7,) else variants[i] for n, i in enumerate(picks)]
    src = write(tmp, rows, HEADER + ",sex")
    s = project_file(src, tmp / "f.parquet", tmp / "r.csv", discount="0.03", lang="en",
                     mortality="none", as_of=date(2026, 11, 29), chunk_rows=4)
    assert s.rows_read == len(rows)
    assert s.rows_read == s.projected + s.not_entitled + s.rows_rejected
    rejected = pl.read_csv(tmp / "r.csv", infer_schema=False)
    assert rejected["row"].n_unique() == s.rows_rejected


@pytest.mark.slow
def test_xlsx_has_the_table_a_native_chart_and_the_assumptions(tmp_path):
    src = write(tmp_path, ROWS)
    out = tmp_path / "flows.xlsx"
    r = run(src, "-o", out, "--as-of", V, "--discount", "0.04,0.0625", "--mortality",
            "pub2010", "--chart", tmp_path / "c.png", "--per-member", tmp_path / "m.xlsx")
    assert r.exit_code == 0, r.output
    names = zipfile.ZipFile(out).namelist()
    assert "xl/charts/chart1.xml" in names
    t = pl.read_excel(out, sheet_name="projection")
    # the printed workbook adds the days each fiscal year covers, the first labelled partial
    assert t.columns == ["fiscal_year", "starts", "members_in_pay", "payments", "pv_0.04",
                         "pv_0.0625", "period"]
    assert t["fiscal_year"][0] == "FY2027" and t["fiscal_year"][-1] == "TOTAL"
    assert t["period"][0] == "2026-11-29 to 2027-06-30 (partial year: from the valuation date)"
    assert t["period"][1] == "2027-07-01 to 2028-06-30"
    body = t.slice(0, t.height - 1)
    assert body["pv_0.0625"].sum() < body["pv_0.04"].sum() < body["payments"].sum()
    # the assumptions in words (the record's keys stay in the JSON sidecar of CSV/Parquet)
    a = dict(pl.read_excel(out, sheet_name="assumptions").rows())
    assert a["Mortality"] == "Table pub2010; improvement: mp2020."
    assert a["Members projected"] == "4"
    assert numbers_as_text(out) == []  # every number is stored as a number
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not (tmp_path / "flows.assumptions.json").exists()


def test_spanish_headers_are_a_choice(tmp_path):
    src = write(tmp_path, ROWS)
    r = run(src, "-o", tmp_path / "f.csv", "--as-of", V, "--discount", "0.04", "--mortality",
            "none", "--lang", "es", "--chart", tmp_path / "c.svg")
    assert r.exit_code == 0, r.output
    t = pl.read_csv(tmp_path / "f.csv")
    assert t.columns == ["año_fiscal", "inicios", "en_pago", "pagos", "vp_0.04"]
    assert t["año_fiscal"][0] == "AF2027"
    assert (tmp_path / "c.svg").read_text().lstrip().startswith("<?xml")


def test_horizon_and_start_age(tmp_path):
    src = write(tmp_path, ROWS)
    r = run(src, "-o", tmp_path / "f.csv", "--as-of", V, "--discount", "0", "--mortality",
            "none", "--horizon", "3", "--start", "age:65", "--per-member", tmp_path / "m.csv")
    assert r.exit_code == 0, r.output
    t = pl.read_csv(tmp_path / "f.csv")
    assert t["fiscal_year"].to_list() == ["FY2027", "FY2028", "FY2029", "TOTAL"]
    m = pl.read_csv(tmp_path / "m.csv", try_parse_dates=True)
    a1 = m.filter(pl.col("participant_id") == "A1").row(0, named=True)
    assert a1["start_date"] == date(2030, 3, 15)  # age 65, after eligibility (2020)
    assert a1["first_payment"] is None  # beyond the 3 years: no payment within the horizon


@pytest.mark.slow
def test_pub2010_tables_come_from_pymort():
    t = resolve("pub2010", None)
    assert t.q[("general", "F", "before")][18] == pytest.approx(0.00013)  # PubG-2010 F emp.
    assert t.q[("general", "M", "after")][120] == pytest.approx(1.0)
    assert t.improvement is not None and t.improvement.name == "mp2020"
    assert t.improvement.rates["F"].shape[0] == 121
    for name in ("mp2014", "mp2015", "mp2016", "mp2017", "mp2018", "mp2019"):
        assert resolve("pub2010", name).improvement.name == name
    # improvement lowers the rates of later cohorts
    q1950 = t.cohort_rates("general", "M", "after", np.array([1950]))[0]
    q1990 = t.cohort_rates("general", "M", "after", np.array([1990]))[0]
    assert q1990[70] < q1950[70]


@pytest.mark.parametrize("args, says", [
    (["--discount", "-0.01"], "--discount: -0.01 is negative"),
    (["--discount", "1.5"], "--discount: 1.5 is outside"),
    (["--discount", "0.04,,0.05"], "--discount"),
    (["--discount", "abc"], "--discount: 'abc' is not a number"),
    # the hint is made from what was typed: the rate the user meant
    (["--discount", "4%"], "'4%' is not a number (a rate is written as a fraction: 4% is 0.04)"),
    (["--discount", "6.25"], "6.25 is outside the range 0 .. 0.20 (a rate is written as a "
                             "fraction: 6.25% is 0.0625)"),
    (["--cola", "-0.01"], "--cola"),
    (["--cola", "2"], "--cola"),
    (["--mortality", "gam83"], "--mortality: unknown table 'gam83'"),
    (["--improvement", "mp2099"], "--improvement: unknown scale"),
    (["--start", "age:abc"], "--start"),
    (["--horizon", "0"], "--horizon"),
    (["--sex-blend", "1.2"], "--sex-blend"),
    (["--chart", "c.gif"], "c.gif"),
])
def test_bad_options_exit_2_and_write_nothing(tmp_path, args, says):
    src = write(tmp_path, ROWS)
    base = {"--discount": "0.04", "--mortality": "none"}
    given_opts = dict(zip(args[::2], args[1::2]))
    opts = [x for k, v in {**base, **given_opts}.items() for x in (k, v)]
    r = run(src, "-o", tmp_path / "f.csv", "--as-of", V, *opts)
    assert r.exit_code == 2
    assert says in r.output
    assert not (tmp_path / "f.csv").exists()


def test_improvement_needs_a_table_with_a_base_year(tmp_path):
    table = tmp_path / "t.csv"
    table_csv(table, gompertz_table())
    r = run(write(tmp_path, ROWS), "-o", tmp_path / "f.csv", "--discount", "0.04",
            "--mortality", table, "--improvement", "mp2020")
    assert r.exit_code == 2 and "needs a table with a base year" in r.output


@pytest.mark.parametrize("body, says", [
    ("age,sex,qx\n" + "".join(f"{a},F,0.01\n{a},M,0.01\n" for a in range(50, 121)
                              if a != 77), "gaps: no age 77"),
    ("age,sex,qx\n" + "".join(f"{a},F,0.01\n" for a in range(0, 121)), "no rates for M"),
    ("age,sex,qx\n50,F,0.01\n50,F,0.02\n", "line 3: age 50 (F) is repeated"),
    ("age,sex,qx\n50,F,1.5\n", "line 2: qx 1.5 is not a probability"),
    ("age,sex,qx\n50,F,-0.1\n", "line 2: qx -0.1 is not a probability"),
    ("age,sex,qx\n50,X,0.1\n", "line 2: sex 'X' is not F or M"),
    ("age,sex,qx\n50.5,F,0.1\n", "line 2: age '50.5'"),
    ("age,sex\n50,F\n", "line 1: the header needs"),
    ("", "the file is empty"),
    ("age,sex,qx,phase\n" + "".join(f"{a},{s},0.01,before\n" for a in range(121)
                                    for s in "FM"), "no rates for F, after"),
    ("age,sex,qx\n" + "".join(f"{a},{s},0.01\n" for a in range(110) for s in "FM"),
     "end at age 109"),
])
def test_bad_tables_are_named_with_their_line(tmp_path, body, says):
    p = tmp_path / "t.csv"
    p.write_text(body)
    with pytest.raises(TableError, match="--mortality"):
        load_csv_table(p)
    r = run(write(tmp_path, ROWS), "-o", tmp_path / "f.csv", "--discount", "0.04",
            "--mortality", p)
    assert r.exit_code == 2
    assert says in r.output, r.output


def test_a_phased_csv_table_and_ages_below_its_first(tmp_path):
    p = tmp_path / "t.csv"
    table_csv(p, gompertz_table(before_scale=0.5), phased=True)
    t = load_csv_table(p)
    assert t.phased and t.source["sha256"]
    lines = p.read_text().splitlines()
    p.write_text("\n".join([lines[0], *[ln for ln in lines[1:] if int(ln.split(",")[0]) >= 20]]))
    t = load_csv_table(p)
    assert t.q[("general", "F", "after")][5] == t.q[("general", "F", "after")][20]
    assert any("below 20" in n for n in t.notes)


def test_empty_and_header_only_files_exit_2(tmp_path):
    for body, says in (("", "empty"), (HEADER + "\n", "no rows")):
        p = tmp_path / "e.csv"
        p.write_text(body)
        r = run(p, "-o", tmp_path / "f.csv", "--discount", "0.04", "--mortality", "none")
        assert r.exit_code == 2 and says in r.output


def test_all_outputs_or_none(tmp_path):
    src = write(tmp_path, ROWS)
    (tmp_path / "m.csv").write_text("already here")
    r = run(src, "-o", tmp_path / "f.csv", "--discount", "0.04", "--mortality", "none",
            "--per-member", tmp_path / "m.csv", "--chart", tmp_path / "c.png")
    assert r.exit_code == 2 and "already exists" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.csv", "members.csv"]
    assert (tmp_path / "m.csv").read_text() == "already here"


def test_rules_option_works(tmp_path):
    src = write(tmp_path, ROWS)
    r = run(src, "-o", tmp_path / "f.csv", "--discount", "0.04", "--mortality", "none",
            "--rules", "article19-strict-19_4", "--as-of", V)
    assert r.exit_code == 0, r.output
    side = json.loads((tmp_path / "f.assumptions.json").read_text())
    assert side["assumptions"]["rules"]["name"] == "article19-strict-19_4"
    r = run(src, "-o", tmp_path / "g.csv", "--discount", "0.04", "--mortality", "none",
            "--rules", "nope")
    assert r.exit_code == 2 and "--rules" in r.output
