"""`diferida compare` on the valuation basis: the census's benefit status
(in pay, deceased, refunded), --claim-rates, --valuation-date,
--mortality-scale and --sensitivity, as `diferida project` reads them. Each
side of a comparison is the `project` run of that side's rules with the
same options, to the cent."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from diferida.compare import Projecting, compare_file, table_paths
from diferida.projection import project_file
from tests.conftest import AS_OF, run_in_process

AGE67 = "reform-19_2-age-67"
STRICT = "article19-strict-19_4"
HEADER = ("participant_id,birth_date,entry_date,separation_date,creditable_service_years,"
          "average_compensation,group,refund_requested,sex,benefit_status,monthly_in_pay,"
          "in_pay_since")
# deferred members that the reforms move (spec-3 and spec-7 by the age-67
# reform, spec-4 by the strict reading), members already eligible, not yet
# eligible and not entitled; then two in pay, one deceased, one refunded
ROWS = [
    "spec-1,1970-05-10,1988-07-01,2010-06-30,22,30000.00,general,false,F,deferred,,",
    "spec-2,1965-03-15,1985-01-15,2012-12-31,27.5,42000.00,general,false,M,deferred,,",
    "spec-3,1972-11-02,1995-08-01,2015-07-31,12.25,28500.00,general,false,,deferred,,",
    "spec-4,1975-06-20,1996-02-01,2021-03-31,25.1667,36000.00,police,false,M,deferred,,",
    "spec-5,1968-02-29,1989-09-01,2009-08-31,20,25000.00,general,false,F,deferred,,",
    "spec-6,1960-01-01,1990-04-01,2000-03-31,10,20000.00,general,false,,deferred,,",
    "spec-7,1960-01-01,1990-04-02,2000-04-01,10,20000.00,general,false,F,deferred,,",
    "spec-8,1976-01-01,1998-01-01,2006-01-01,8,30000.00,general,false,M,deferred,,",
    "spec-10,1975-01-01,2000-01-01,2010-01-01,10,30000.00,general,false,,deferred,,",
    # in pay: the amount being paid, never recomputed (the rules would give another)
    "pay-1,1950-05-10,1968-07-01,2000-06-30,22,30000.00,general,false,F,in_pay,1000.00,"
    "2012-06-01",
    "pay-2,1958-09-12,1980-01-01,2008-12-31,25,45000.00,police,false,M,in_pay,1834.17,"
    "2018-10-01",
    # left out: they would be entitled if they were projected
    "dead-1,1962-05-10,1982-07-01,2010-06-30,22,40000.00,general,false,M,deceased,,",
    "refd-1,1964-05-10,1984-07-01,2011-06-30,22,41000.00,general,false,F,refunded,,",
]
CLAIMS = "years_since_eligibility,rate\n0,0.4\n1,0.5\n2,1\n"


def census(tmp_path: Path, rows=ROWS) -> Path:
    p = tmp_path / "census.csv"
    p.write_text(HEADER + "\n" + "\n".join(rows) + "\n")
    return p


def project_totals(src: Path, out: Path, rules: str, **options) -> dict[str, Decimal]:
    s = project_file(src, out, rules=rules, as_of=AS_OF, lang="en", **options)
    return {k: Decimal(v) for k, v in s.totals.items()}


def years_of(path: Path) -> dict[str, Decimal]:
    t = pl.read_csv(path, infer_schema=False)
    return {r["fiscal_year"]: Decimal(r["payments"]) for r in t.iter_rows(named=True)}


BASIS = [
    # the valuation basis in full: claim rates, a valuation date after --as-of,
    # a mortality scale, COLA, two rates
    {"discount": "0.04,0.0625", "mortality": "pub2010", "cola": "0.02",
     "mortality_scale": "1.15", "valuation_date": date(2027, 3, 15), "claim_rates": True},
    # a valuation date before --as-of, the start at an age, no improvement
    {"discount": "0.05", "mortality": "pub2010", "improvement": "none",
     "valuation_date": date(2026, 7, 1), "start": "age:62", "mortality_scale": "0.9"},
    # the plain options: the census's status alone
    {"discount": "0.04", "mortality": "pub2010"},
]


@pytest.mark.parametrize("basis", BASIS)
@pytest.mark.parametrize("reform", [AGE67, STRICT])
def test_each_side_equals_a_project_run_with_the_same_options(tmp_path, basis, reform):
    src = census(tmp_path)
    opts = dict(basis)
    if opts.pop("claim_rates", False):
        claims = tmp_path / "claims.csv"
        claims.write_text(CLAIMS)
        opts["claim_rates"] = claims
    out = tmp_path / "c.csv"
    s = compare_file(src, out, ["article19", reform], as_of=AS_OF, lang="en",
                     projecting=Projecting(**opts))
    fiscal = pl.read_csv(table_paths(out)["fiscal_years"], infer_schema=False)
    rates = opts["discount"].split(",")
    differ = False
    for side, rules in (("a", "article19"), ("b", reform)):
        flows = tmp_path / f"{side}.csv"
        want = project_totals(src, flows, rules, **opts)
        assert s.fiscal[f"payments_total_{side}"] == want["payments"]
        for r in rates:
            assert s.fiscal[f"pv_{r}_total_{side}"] == want[r]
        # and year by year
        got = {row["fiscal_year"]: Decimal(row[f"payments_{side}"])
               for row in fiscal.iter_rows(named=True)}
        assert {k: v for k, v in got.items() if v} == {
            k: v for k, v in years_of(flows).items() if v}
    for r in ["payments", *[f"pv_{x}" for x in rates]]:
        key = f"{r}_total" if r == "payments" else f"{r}_total"
        assert s.fiscal[f"{key}_difference"] == s.fiscal[f"{key}_b"] - s.fiscal[f"{key}_a"]
        differ = differ or s.fiscal[f"{key}_difference"] != 0
    assert differ  # the reform costs something: the test compares real figures
    # counted as project counts them, and accounted for
    assert (s.rows_read, s.in_pay, s.deceased, s.refunded, s.rows_rejected) == (13, 2, 1, 1, 0)
    assert s.rows_compared == 9  # the deferred members alone are decided under A and B


def test_payments_equal_projects_on_a_census_with_status(tmp_path):
    """The census of 13 members, with the command line's defaults: the
    payments of each side are `project`'s (in-pay members from the amount
    being paid, deceased and refunded left out), not a recomputation."""
    src = census(tmp_path)
    got = json.loads(run_in_process(
        "compare", str(src), "--rules", "article19", "--rules", "article19",
        "-o", str(tmp_path / "c.csv"), "--as-of", AS_OF.isoformat(), "--discount", "0.04",
        "--mortality", "pub2010", "--json", "--lang", "en").stdout)
    want = json.loads(run_in_process(
        "project", str(src), "-o", str(tmp_path / "p.csv"), "--as-of", AS_OF.isoformat(),
        "--discount", "0.04", "--mortality", "pub2010", "--json", "--lang", "en").stdout)
    assert got["payments_total_a"] == got["payments_total_b"] == \
        want["present_values"]["payments"]
    assert got["pv_0.04_total_a"] == want["present_values"]["0.04"]
    assert (got["in_pay"], got["deceased"], got["refunded"]) == (2, 1, 1)
    # and not what the same members give when every one of them is projected
    # from the rules as if deferred
    (tmp_path / "all").mkdir()
    deferred = census(tmp_path / "all", [",".join(r.split(",")[:9]) + ",deferred,,"
                                         for r in ROWS])
    every = project_file(deferred, tmp_path / "all" / "p.csv", discount="0.04",
                         mortality="pub2010", as_of=AS_OF)
    assert Decimal(every.totals["payments"]) != Decimal(want["present_values"]["payments"])


def test_an_in_pay_member_is_paid_the_same_under_a_and_b(tmp_path):
    # alone in the file: whatever the rules say of them, both sides pay the amount in pay
    src = census(tmp_path, ROWS[9:11])
    s = compare_file(src, tmp_path / "c.csv", ["article19", AGE67], as_of=AS_OF, lang="en",
                     projecting=Projecting(discount="0", mortality="none", horizon=1))
    # FY2027 from 1 December 2026: 7 payments of each amount
    assert s.fiscal["payments_total_a"] == s.fiscal["payments_total_b"] == \
        7 * (Decimal("1000.00") + Decimal("1834.17"))
    assert (s.rows_read, s.rows_compared, s.in_pay, s.changed) == (2, 0, 2, 0)


def test_bad_status_is_rejected_as_project_rejects_it(tmp_path):
    rows = [*ROWS[:2], "bad-1,1950-05-10,1968-07-01,2000-06-30,22,30000.00,general,false,,"
            "in_pay,,2012-06-01", "bad-2,1950-05-10,1968-07-01,2000-06-30,22,30000.00,"
            "general,false,,retired,,"]
    src = census(tmp_path, rows)
    cr, pr = tmp_path / "c.rejects.csv", tmp_path / "p.rejects.csv"
    s = compare_file(src, tmp_path / "c.csv", ["article19", AGE67], as_of=AS_OF, lang="en",
                     rejects=cr)
    project_file(src, tmp_path / "p.csv", pr, discount="0", mortality="none", as_of=AS_OF,
                 lang="en")
    assert (s.rows_read, s.rows_compared, s.rows_rejected) == (4, 2, 2)
    got, want = pl.read_csv(cr, infer_schema=False), pl.read_csv(pr, infer_schema=False)
    assert got.select("row", "participant_id", "field", "message").rows() == \
        want.select("row", "participant_id", "field", "message").rows()
    assert set(got["field"].to_list()) == {"monthly_in_pay", "benefit_status"}


def test_sensitivity_grid_of_each_side_equals_projects(tmp_path):
    src = census(tmp_path)
    opts = {"discount": "0.04", "mortality": "pub2010", "cola": "0.01",
            "valuation_date": date(2027, 6, 30)}
    out = tmp_path / "c.csv"
    compare_file(src, out, ["article19", AGE67], as_of=AS_OF, lang="en",
                 projecting=Projecting(**opts, sensitivity=True))
    grid = pl.read_csv(table_paths(out, sensitivity=True)["sensitivity"], infer_schema=False)
    assert grid["scenario"].to_list() == ["base", "discount_down", "discount_up",
                                          "mortality_x0.9", "mortality_x1.1",
                                          "no_improvement", "no_cola"]
    for side, rules in (("a", "article19"), ("b", AGE67)):
        project_file(src, tmp_path / f"{side}.csv", rules=rules, as_of=AS_OF, lang="en",
                     sensitivity=True, **opts)
        want = pl.read_csv(tmp_path / f"{side}.sensitivity.csv", infer_schema=False)
        assert grid[f"payments_{side}"].to_list() == want["payments"].to_list()
        assert grid[f"pv_0.04_{side}"].to_list() == want["pv_0.04"].to_list()
    for c in ("payments", "pv_0.04"):
        assert [Decimal(d) for d in grid[f"{c}_difference"]] == [
            Decimal(b) - Decimal(a) for a, b in zip(grid[f"{c}_a"], grid[f"{c}_b"],
                                                    strict=True)]
    # the base row is the fiscal years' TOTAL
    total = pl.read_csv(table_paths(out)["fiscal_years"], infer_schema=False).row(
        -1, named=True)
    assert grid.row(0, named=True)["payments_a"] == total["payments_a"]


def test_sensitivity_in_the_workbook_and_the_page_in_words(tmp_path):
    src = census(tmp_path)
    out, page = tmp_path / "c.xlsx", tmp_path / "c.html"
    compare_file(src, out, ["article19", AGE67], as_of=AS_OF, lang="es", html=page,
                 projecting=Projecting(discount="0.04", mortality="pub2010",
                                       sensitivity=True, mortality_scale="1.1"))
    sheets = pl.read_excel(out, sheet_id=0)
    grid = sheets["Sensibilidad"]
    assert grid["Escenario"].to_list()[:3] == [
        "Base", "Tasa de descuento un punto más baja", "Tasa de descuento un punto más alta"]
    assert "Pagos esperados: diferencia B − A" in grid.columns
    summary = dict(zip(sheets["Resumen"]["Concepto"], sheets["Resumen"]["Valor"],
                       strict=True))
    assert summary["Miembros fallecidos (se excluyen)"] == "1"
    said = dict(zip(sheets["Supuestos"]["Concepto"], sheets["Supuestos"]["Valor"],
                    strict=True))
    assert "Solo se comparan los miembros con pensión diferida" in said["Estado del beneficio"]
    assert "1.1" in said["Factor de las tasas de mortalidad"]
    assert "0.9 y 1.1" in said["Sensibilidad"]
    text = page.read_text()
    assert "<h2>Sensibilidad</h2>" in text and "Tasas de mortalidad multiplicadas por 0.9" in text
    assert ("No se comparan los miembros que cobran pensión (2; se proyectan con la cantidad "
            "que se les paga, igual según A y según B), los fallecidos (1) ni los que "
            "recibieron reembolso de aportaciones (1); estos dos grupos se excluyen.") in text


@pytest.mark.parametrize("option", [["--sensitivity"], ["--mortality-scale", "1.1"],
                                    ["--valuation-date", "2027-06-30"],
                                    ["--claim-rates", "x.csv"]])
def test_valuation_options_without_a_projection_are_refused(tmp_path, option):
    src = census(tmp_path)
    r = run_in_process("compare", str(src), "--rules", "article19", "--rules", AGE67,
                       "-o", str(tmp_path / "c.csv"), *option)
    assert r.returncode == 2 and "--discount and --mortality" in r.stderr
    assert not (tmp_path / "c.summary.csv").exists()


def test_bad_valuation_options_are_refused_as_project_refuses_them(tmp_path):
    src = census(tmp_path)
    bad = tmp_path / "claims.csv"
    bad.write_text("years_since_eligibility,rate\n0,0.4\n1,0.5\n")
    for option, says in ((["--mortality-scale", "-1"], "--mortality-scale"),
                         (["--claim-rates", str(bad)], "--claim-rates"),
                         (["--valuation-date", "2027-13-01"], "--valuation-date")):
        r = run_in_process("compare", str(src), "--rules", "article19", "--rules", AGE67,
                           "-o", str(tmp_path / "c.csv"), "--discount", "0.04",
                           "--mortality", "none", *option)
        assert r.returncode == 2 and says in r.stderr, (option, r.stderr)
        assert not (tmp_path / "c.summary.csv").exists()
