"""`diferida census`: the report's counts against a file built here, the
rows accounted for (read = reviewed + rejected), the outliers named by
member, the backlog, and the changes since a prior file."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import polars as pl
import pytest
from click.testing import CliRunner

import diferida
from diferida.census import census_file
from diferida.census.profile import thresholds
from diferida.cli import main

from .print_helpers import cells, numbers_as_text, sheet_names

AS_OF = date(2026, 11, 29)
HEADER = ("participant_id,birth_date,entry_date,separation_date,creditable_service_years,"
          "average_compensation,group,refund_requested,deferred_right_1960,"
          "requested_start_date,benefit_status,monthly_in_pay,in_pay_since")
BENEFIT = ["benefit_status", "monthly_in_pay", "in_pay_since"]


def ordinary(i: int, pay: str = "30000.00", status: str = "deferred") -> str:
    return f"M{i:02d},1975-03-10,1998-01-05,2015-06-30,17.5,{pay},general,false,,,{status}"


_ROWS = [
    # eligible since the 1990s, never claimed: in the backlog, and an outlier (unclaimed)
    "OLD1,1940-05-01,1960-07-01,1985-06-30,25,28000.00,general,false,,,deferred",
    # 106 years old: over the age limit (and eligible long ago, unclaimed too)
    "AGED,1920-01-15,1950-02-01,1980-01-31,30,25000.00,police,false,,,deferred",
    # the same history, but in pay: not in the backlog
    "PAID,1940-05-01,1960-07-01,1985-06-30,25,28000.00,general,false,,,in_pay",
    "GONE,1940-05-01,1960-07-01,1985-06-30,25,28000.00,general,false,,,deceased",
    "BACK,1975-03-10,1998-01-05,2015-06-30,17.5,31000.00,firefighter,true,,,refunded",
    # 20 years of service in a 10-year span: service longer than the span
    "SPAN,1970-01-01,2000-01-01,2010-01-01,20,33000.00,general,false,,,deferred",
    # a salary far above the file's own
    "RICH,1975-03-10,1998-01-05,2015-06-30,17.5,950000.00,general,false,,,deferred",
    *[ordinary(i, f"{29000 + 250 * i}.00") for i in range(12)],
    # rejected: a status that is not one, an empty status, a bad date, a repeated id
    "BAD1,1975-03-10,1998-01-05,2015-06-30,17.5,30000.00,general,false,,,paid",
    "BAD2,1975-03-10,1998-01-05,2015-06-30,17.5,30000.00,general,false,,,",
    "BAD3,1975-13-10,1998-01-05,2015-06-30,17.5,30000.00,general,false,,,deferred",
    "M03,1975-03-10,1998-01-05,2015-06-30,17.5,30000.00,general,false,,,deferred",
]
# in pay: the amount being paid and since when (checked as `diferida project` checks them)
ROWS = [r + (",2100.00,2005-06-01" if r.startswith("PAID") else ",,") for r in _ROWS]
REJECTED = {"BAD1", "BAD2", "BAD3", "M03"}


def write(path, rows, header=HEADER):
    path.write_text(header + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def census(tmp_path):
    src = write(tmp_path / "members.csv", ROWS)
    # last year: OLD1's pay and SPAN's separation differ, LEFT has left, RICH is new
    prior_rows = [r for r in ROWS[:-4] if not r.startswith("RICH")]
    prior_rows = [r.replace("28000.00", "27000.00") if r.startswith("OLD1") else r
                  for r in prior_rows]
    prior_rows = [r.replace("2010-01-01", "2011-01-01") if r.startswith("SPAN") else r
                  for r in prior_rows]
    prior_rows.append("LEFT,1960-01-01,1980-01-01,2000-01-01,20,20000.00,general,false,,,"
                      "deferred,,")
    prior = write(tmp_path / "last-year.csv", prior_rows)
    out, page, rej = tmp_path / "c.xlsx", tmp_path / "c.html", tmp_path / "r.csv"
    s = census_file(src, out, page, rej, prior=prior, as_of=AS_OF, lang="en", chunk_rows=5)
    return s, out, page, rej, src


def expected_statuses(src) -> pl.DataFrame:
    det = diferida.evaluate_frame(pl.read_csv(src, infer_schema=False).drop(BENEFIT),
                                  as_of=AS_OF).determinations
    return det.filter(~pl.col("participant_id").is_in(list(REJECTED))
                      | (pl.col("participant_id") == "M03"))


def test_every_row_is_accounted_for_and_the_rejects_named(census):
    s, _, _, rej, _ = census
    assert s.rows_read == len(ROWS)
    assert s.rows_rejected == len(REJECTED)
    assert s.current.members == len(ROWS) - len(REJECTED)
    assert s.rows_read == s.current.members + s.rows_rejected
    r = pl.read_csv(rej, infer_schema=False)
    assert set(r["participant_id"]) == REJECTED
    status = r.filter(pl.col("field") == "benefit_status")
    assert sorted(status["participant_id"]) == ["BAD1", "BAD2"]
    assert "'paid' is not deferred" in status.filter(
        pl.col("participant_id") == "BAD1")["message"][0]
    # the row numbers are the file's lines (header = line 1)
    assert r.filter(pl.col("participant_id") == "BAD3")["row"].to_list() == [str(len(ROWS))]


def test_distributions_and_counts_agree_with_the_file(census):
    s, out, _, _, src = census
    kept = pl.read_csv(src, infer_schema=False).head(len(ROWS) - 4)
    n = kept.height
    det = diferida.evaluate_frame(kept.drop(BENEFIT), as_of=AS_OF).determinations
    want_status = dict(det["status"].value_counts().iter_rows())
    assert s.figures["counts"]["status"] == want_status
    assert s.figures["counts"]["group"] == {"general": n - 2, "police": 1, "firefighter": 1}
    assert s.figures["counts"]["benefit_status"] == {"deferred": n - 3, "in_pay": 1,
                                                     "deceased": 1, "refunded": 1}
    # the workbook's distributions: every table adds up to the members reviewed
    d = pl.read_excel(out, sheet_name="distributions", has_header=False)
    heads = [i for i, v in enumerate(d[:, 0].to_list()) if v == "value"]
    assert len(heads) == 8  # age, service, pay, group, regime, status, benefit status, years
    for i in heads[:-1]:  # the last: years since eligibility, eligible members only
        block = []
        for v, m in zip(d[i + 1:, 0].to_list(), d[i + 1:, 1].to_list(), strict=True):
            if v is None or m is None:  # the next table's heading
                break
            block.append(int(m))
        assert sum(block) == n
    ages = dict(zip(d[heads[0] + 1:, 0].to_list(), d[heads[0] + 1:, 1].to_list(),
                    strict=True))
    assert ages["100 or more"] == "1"  # AGED, 106
    assert ages["50–54"] == str(12 + 2)  # born 1975 (51): the 12 ordinary, BACK and RICH
    # the changes sheet holds each field's values as the files wrote them (text)
    assert numbers_as_text(out, allow=("changes",)) == []


def test_backlog_is_the_eligible_members_not_claiming(census):
    s, out, page, _, src = census
    det = expected_statuses(src).filter(pl.col("status") == "eligible")
    claimed = {"PAID", "GONE", "BACK"}
    want = sorted(set(det["participant_id"]) - claimed)
    got = pl.read_excel(out, sheet_name="backlog members")
    assert sorted(got["participant_id"]) == want
    assert s.figures["backlog"] == len(want)
    amounts = det.filter(pl.col("participant_id").is_in(want))["annual_amount"]
    assert Decimal(s.figures["backlog_annual_amount"]) == sum(amounts.to_list(), Decimal(0))
    summary = {k: v for k, v in pl.read_excel(out, sheet_name="summary").rows()}
    assert summary["Eligible and not claimed (backlog)"] == len(want)


def test_outliers_are_named_by_member(census):
    s, out, page, _, _ = census
    o = pl.read_excel(out, sheet_name="outliers")
    found = {(r["participant_id"], r["check"].split(" ")[0]) for r in o.iter_rows(named=True)}
    limit = thresholds()["outliers"]
    assert ("AGED", "Older") in found
    assert ("OLD1", "Eligible") in found and ("AGED", "Eligible") in found
    assert ("PAID", "Eligible") not in found  # in pay: claimed
    assert ("SPAN", "Creditable") in found
    assert ("RICH", "Average") in found
    assert {p for p, _ in found} == {"AGED", "OLD1", "SPAN", "RICH"}
    assert f"Older than {limit['age_over']['years']} on the census date" in set(o["check"])
    html = page.read_text(encoding="utf-8")
    for who in ("AGED", "OLD1", "SPAN", "RICH"):
        assert f"<td>{who}</td>" in html
    assert "<script" not in html and "http" not in html.split("<main>")[0]


def test_changes_since_the_prior_file_field_by_field(census):
    s, out, _, _, _ = census
    assert s.prior.rows_read == len(ROWS) - 4 - 1 + 1
    assert s.figures["joiners"] == 1 and s.figures["leavers"] == 1
    assert pl.read_excel(out, sheet_name="joiners")["participant_id"].to_list() == ["RICH"]
    assert pl.read_excel(out, sheet_name="leavers")["participant_id"].to_list() == ["LEFT"]
    ch = pl.read_excel(out, sheet_name="changes", infer_schema_length=0)
    got = {(r["participant_id"], r["field"], r["before"], r["after"])
           for r in ch.iter_rows(named=True)}
    assert got == {("OLD1", "average compensation", "27000.00", "28000.00"),
                   ("SPAN", "separation date", "2011-01-01", "2010-01-01")}
    assert s.figures["changes_by_field"]["average_compensation"] == 1
    assert s.figures["members_changed"] == 2


def test_a_file_without_status_takes_everyone_as_deferred(tmp_path):
    rows = [",".join(r.split(",")[:-3]) for r in ROWS if not r.startswith(("BAD1", "BAD2"))]
    src = write(tmp_path / "m.csv", rows, HEADER.rsplit(",", 3)[0])
    s = census_file(src, html=tmp_path / "c.html", as_of=AS_OF, lang="es")
    assert s.rows_read == len(rows) and s.rows_rejected == 2  # BAD3 and the repeated id
    assert s.figures["counts"]["benefit_status"] == {"deferred": len(rows) - 2}
    html = (tmp_path / "c.html").read_text(encoding="utf-8")
    assert "no tiene columna benefit_status" in html and "<html lang=es>" in html


def test_the_command_line(tmp_path):
    src = write(tmp_path / "members.csv", ROWS)
    r = CliRunner().invoke(main, ["census", str(src), "-o", str(tmp_path / "c.xlsx"),
                                  "--html", str(tmp_path / "c.html"), "--as-of", "2026-11-29",
                                  "--lang", "en", "--strict"])
    assert r.exit_code == 1, r.output  # rows rejected and --strict
    assert "rows read:         23" in r.output
    assert sheet_names(tmp_path / "c.xlsx")[:3] == ["summary", "distributions", "charts 1"]
    r = CliRunner().invoke(main, ["census", str(src), "--as-of", "2026-11-29"])
    assert r.exit_code == 2 and "--html" in r.output
    assert cells(tmp_path / "c.xlsx", "summary")["B2"] == ("n", str(len(ROWS)))


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_cutoff_in_a_field_name_is_the_rules_own_date(lang):
    from diferida.census.profile import field_names, words
    from diferida.i18n import fmt_date
    from diferida.rules import load_rules

    rules = load_rules()
    assert "1960" not in words(lang)["fields"]["deferred_right_1960"]
    name = field_names(rules, lang)["deferred_right_1960"]
    assert name.endswith(fmt_date(rules.deferred_right_cutoff, lang))


def _in_pay_rows(amounts: dict[int, str], since: dict[int, str], paid: set[int]) -> list[str]:
    """20 ordinary members; those in `paid` in pay with their amount and start date."""
    out = []
    for i in range(20):
        if i in paid:
            out.append(ordinary(i, status="in_pay") + f",{amounts.get(i, '1850.00')},"
                       f"{since.get(i, '2016-07-01')}")
        else:
            out.append(ordinary(i) + ",,")
    return out


def test_changes_of_the_amount_in_pay_its_start_and_the_status_are_reported(tmp_path):
    # last year: M00..M14 in pay; this year M00..M09 paid another amount (status unchanged),
    # M10 and M11 paid since another date, and M15..M17 newly in pay
    before = write(tmp_path / "before.csv", _in_pay_rows({}, {}, set(range(15))))
    now_amounts = {i: f"{1900 + i}.50" for i in range(10)}
    now_since = {10: "2016-08-01", 11: "2017-01-01"}
    now = write(tmp_path / "now.csv",
                _in_pay_rows(now_amounts, now_since, set(range(15)) | {15, 16, 17}))
    out = tmp_path / "c.xlsx"
    s = census_file(now, out, tmp_path / "c.html", prior=before, as_of=AS_OF, lang="en")
    by = s.figures["changes_by_field"]
    assert by["monthly_in_pay"] == 10 + 3 and by["in_pay_since"] == 2 + 3
    assert by["benefit_status"] == 3
    assert s.figures["benefit_status_changes"] == [
        {"before": "deferred", "after": "in_pay", "members": 3}]
    ch = pl.read_excel(out, sheet_name="changes", infer_schema_length=0)
    got = {(r["participant_id"], r["field"], r["before"], r["after"])
           for r in ch.iter_rows(named=True)}
    for i in range(10):  # each planted change, named by member, before and after
        assert (f"M{i:02d}", "monthly amount in pay", "1850.00", now_amounts[i]) in got
    assert ("M10", "in pay since", "2016-07-01", "2016-08-01") in got
    assert ("M11", "in pay since", "2016-07-01", "2017-01-01") in got
    for i in (15, 16, 17):
        assert (f"M{i}", "benefit status", "deferred", "in_pay") in got
        assert (f"M{i}", "monthly amount in pay", None, "1850.00") in got
    assert len(got) == 10 + 2 + 3 * 3
    # counted on the summary page, in words
    summary = dict(pl.read_excel(out, sheet_name="summary").rows())
    assert summary["monthly amount in pay"] == 13 and summary["in pay since"] == 5
    assert summary["Deferred (not yet in pay) → In pay"] == 3
    assert summary["Members with a changed field"] == 10 + 2 + 3
    html = (tmp_path / "c.html").read_text(encoding="utf-8")
    assert "monthly amount in pay" in html and "Deferred (not yet in pay) → In pay" in html
    r = CliRunner().invoke(main, ["census", str(now), "--prior", str(before), "--html",
                                  str(tmp_path / "d.html"), "--as-of", "2026-11-29"])
    assert r.exit_code == 0, r.output
    assert "cambiaron 3 estados, 13 pensiones mensuales y 5 fechas de comienzo" in r.output


def test_benefit_columns_are_not_compared_with_a_file_without_them(tmp_path):
    # a prior file without benefit_status takes everyone as deferred: comparing it
    # would report every pensioner as a change, so the three are not compared (and said so)
    rows = _in_pay_rows({}, {}, {0, 1})
    before = write(tmp_path / "before.csv", [",".join(r.split(",")[:10]) for r in rows],
                   HEADER.rsplit(",", 3)[0])
    now = write(tmp_path / "now.csv", rows)
    out = tmp_path / "c.xlsx"
    s = census_file(now, out, prior=before, as_of=AS_OF, lang="es")
    assert s.figures["benefit_compared"] is False
    assert s.figures["members_changed"] == 0
    assert "benefit_status" not in s.figures["changes_by_field"]
    summary = dict(pl.read_excel(out, sheet_name="resumen").rows())
    assert summary["Estado del beneficio, pensión mensual en pago, en pago desde"] \
        .startswith("No se comparan")


def test_pay_fences_on_the_logarithm_flag_a_tiny_salary_and_no_ordinary_one(tmp_path):
    from bench.generate import population

    # 600 ordinary members (pay log-normal around $32,000) and one paid $123.45: fences in
    # dollars (Q1 - 3 IQR) fall below zero and let it pass; on the logarithm they do not
    frame = population(600, seed=5)
    tiny = frame.head(1).with_columns(pl.lit("TINY").alias("participant_id"),
                                      pl.lit("123.45").alias("average_compensation"))
    src = tmp_path / "m.csv"
    pl.concat([frame, tiny]).write_csv(src)
    out = tmp_path / "c.xlsx"
    s = census_file(src, out, as_of=AS_OF, lang="en")
    o = pl.read_excel(out, sheet_name="outliers")
    pay = o.filter(pl.col("check").str.starts_with("Average compensation"))
    assert pay["participant_id"].to_list() == ["TINY"]
    assert s.figures["outliers"].get("pay_high", 0) == 0
    # the rule in the output's words, with this file's quartiles and fences
    kept = pl.read_csv(src, infer_schema=False)["average_compensation"].cast(pl.Float64)
    q1, q3 = kept.quantile(0.25, "linear"), kept.quantile(0.75, "linear")
    lo, hi = q1 / (q3 / q1) ** 3, q3 * (q3 / q1) ** 3
    assert 0 < lo < 123.45 * 100 and hi > kept.filter(kept > 200).max()
    assert pay["check"][0] == f"Average compensation below ${lo:,.2f}, the file's lower fence"
    assert pay["limit"][0] == pytest.approx(round(lo, 2))
    rules = dict(pl.read_excel(out, sheet_name="thresholds").rows())
    low = rules[pay["check"][0]]
    assert f"${q1:,.2f} ÷ (${q3:,.2f} ÷ ${q1:,.2f})³" in low
    assert "logarithm" in rules[f"Average compensation above ${hi:,.2f}, the file's upper fence"]


def test_labels_say_what_they_mean(census):
    _, out, page, _, _ = census
    o = pl.read_excel(out, sheet_name="outliers")
    span = o.filter(pl.col("participant_id") == "SPAN")
    # the check names the tolerance, the limit column the member's own limit (10 years + 0.0833)
    assert span["check"][0] == ("Creditable service longer than the time from entry to "
                                "separation (or to the census date) plus 0.0833 years")
    assert span["limit"][0] == pytest.approx(10.08, abs=0.01) and span["value"][0] == 20
    assert "tolerance" not in page.read_text(encoding="utf-8")
    # a band of one whole year is written as what it holds, never "0–0" or "1–1"
    d = pl.read_excel(out, sheet_name="distributions", has_header=False)
    labels = [v for v in d[:, 0].to_list() if v]
    assert "0–0" not in labels and "1–1" not in labels
    start = labels.index("Years since eligibility (members eligible now)")
    assert labels[start + 2:start + 5] == ["under 1", "1 to under 2", "2–4"]


def test_the_summary_is_the_same_run_after_run(tmp_path):
    # counts and outliers in the values' order, not a hash table's: the JSON
    # summary of one file is the same bytes every time (an auditor compares them)
    src = write(tmp_path / "members.csv", ROWS)
    runs = []
    for k in range(4):
        s = census_file(src, tmp_path / f"c{k}.xlsx", None, None, as_of=AS_OF, lang="en")
        runs.append(s.figures)
        for counts in s.figures["counts"].values():
            assert list(counts) == sorted(counts)
        assert list(s.figures["outliers"]) == sorted(s.figures["outliers"])
    assert all(r == runs[0] and list(r["counts"]["group"]) == list(runs[0]["counts"]["group"])
               for r in runs)
