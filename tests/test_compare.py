"""`diferida compare`, `diferida rules diff` and `diferida evaluate --rules A
--rules B`: who changes between two rule sets, how, why, and what it costs."""

from __future__ import annotations

import json
import subprocess
from datetime import date
from decimal import Decimal
from importlib import resources
from pathlib import Path

import polars as pl
import pytest
from bench.generate import population

import diferida
from diferida.batch import evaluate_file
from diferida.compare import Projecting, compare_file, table_paths
from diferida.rules import RulesError, load_rules
from tests.conftest import AS_OF, cli_command, run_in_process
from tests.print_helpers import cells, numbers_as_text

STRICT = "article19-strict-19_4"
AGE67 = "reform-19_2-age-67"
EXAMPLES = Path(str(resources.files("diferida") / "data" / "spec_examples.csv"))


run_cli = run_in_process


def changed_csv(out: Path) -> pl.DataFrame:
    return pl.read_csv(table_paths(out)["changed_members"], infer_schema=False)


# ---- the rules §8 examples: who changes and why, known by hand -----------------


def test_strict_reading_moves_only_the_new_police_officer(tmp_path):
    out = tmp_path / "c.csv"
    s = compare_file(EXAMPLES, out, ["article19", STRICT], as_of=AS_OF, lang="en")
    assert (s.rows_read, s.rows_compared, s.rows_rejected, s.changed) == (11, 11, 0, 1)
    row = changed_csv(out).row(0, named=True)
    assert row["participant_id"] == "spec-4"
    assert (row["status_a"], row["route_a"], row["eligibility_date_a"]) == (
        "eligible", "19.4(a)", "2025-06-20")
    assert (row["status_b"], row["route_b"], row["eligibility_date_b"]) == (
        "not_yet_eligible", "19.2", "2040-06-20")
    assert row["row"] == "5"  # the human row number: header is row 1
    # the finding: 19.4(a) does not apply to new participants under B
    assert row["finding_condition"] == "route_applies"
    assert "3 L.P.R.A. § 766" in row["finding_rule"]
    # A's reading opens 19.4(a) to a new participant; B's does not
    assert "applies to new participants too" in row["finding_under_a"]
    assert "19.4(a)" in row["finding_under_b"]
    # the money does not change: the same scale, a later date
    assert s.totals.annual_a == s.totals.annual_b


def test_age_67_reform_moves_examples_3_and_7_by_two_years(tmp_path):
    out = tmp_path / "c.csv"
    s = compare_file(EXAMPLES, out, ["article19", AGE67], as_of=AS_OF, lang="en")
    got = {r["participant_id"]: r for r in changed_csv(out).iter_rows(named=True)}
    assert set(got) == {"spec-3", "spec-7"} and s.changed == 2
    assert (got["spec-3"]["eligibility_date_a"], got["spec-3"]["eligibility_date_b"]) == (
        "2037-11-02", "2039-11-02")
    assert (got["spec-7"]["eligibility_date_a"], got["spec-7"]["eligibility_date_b"]) == (
        "2025-01-01", "2027-01-01")
    assert (got["spec-7"]["status_a"], got["spec-7"]["status_b"]) == (
        "eligible", "not_yet_eligible")
    for r in got.values():
        assert r["eligibility_shift_months"] == "24"
        assert (r["finding_rule"], r["finding_condition"]) == ("Rule 19.2", "age")
        assert "65" in r["finding_under_a"] and "67" in r["finding_under_b"]
    shifts = pl.read_csv(table_paths(out)["eligibility_shifts"])
    assert shifts.rows() == [("later under B", 24, 2, 730, 730)]


def test_a_reform_that_changes_nothing_reports_zero_changes(tmp_path):
    same = tmp_path / "same.toml"
    same.write_text('base = "article19"\n[meta]\nname = "same"\n')
    out = tmp_path / "c.xlsx"
    s = compare_file(EXAMPLES, out, ["article19", same], as_of=AS_OF, lang="en")
    assert (s.changed, s.status_changed, s.route_changed, s.date_moved, s.amount_changed) == (
        0, 0, 0, 0, 0)
    changed = pl.read_excel(out, sheet_name="Changed members")
    assert changed.height == 0
    t = pl.read_excel(out, sheet_name="Status and route")
    assert t["Members"].sum() == 11 and set(t["Changes?"]) == {"no"}


# ---- the held generated population -----------------------------------------


@pytest.fixture(scope="module")
def people(tmp_path_factory) -> tuple[Path, pl.DataFrame]:
    frame = population(4000, invalid=0.05, seed=13)
    path = tmp_path_factory.mktemp("pop") / "members.csv"
    frame.write_csv(path)
    return path, frame


def test_every_row_is_accounted_for_once_with_the_same_rejects_as_batch(people, tmp_path):
    path, frame = people
    out, rej = tmp_path / "c.csv", tmp_path / "rej.csv"
    s = compare_file(path, out, ["article19", STRICT], rejects=rej, as_of=AS_OF, lang="en")
    assert s.rows_read == frame.height == s.rows_compared + s.rows_rejected
    assert s.rows_rejected > 0
    batch_rej = tmp_path / "batch-rej.csv"
    b = evaluate_file(path, tmp_path / "b.csv", batch_rej, as_of=AS_OF, lang="en")
    assert b.rows_rejected == s.rows_rejected
    assert pl.read_csv(rej).equals(pl.read_csv(batch_rej))
    t = pl.read_csv(table_paths(out)["transitions"])
    assert t["members"].sum() == s.rows_compared
    changed = changed_csv(out)
    moved = changed.filter((pl.col("status_a") != pl.col("status_b"))
                           | (pl.col("route_a").ne_missing(pl.col("route_b"))))
    assert t.filter(pl.col("changes"))["members"].sum() == moved.height
    # a changed member is listed once, and a rejected row is never listed
    assert changed["row"].n_unique() == changed.height == s.changed
    assert not set(changed["row"].cast(pl.Int64)) & set(pl.read_csv(rej)["row"])


def test_strict_reading_changes_only_new_police_and_firefighters_on_19_4(people, tmp_path):
    path, frame = people
    out = tmp_path / "c.csv"
    s = compare_file(path, out, ["article19", STRICT], as_of=AS_OF, lang="en")
    changed = changed_csv(out)
    assert changed.height == s.changed > 0
    groups: dict[str, str] = {}  # the first row of an id is the one evaluated (rules §1)
    for pid, group in zip(frame["participant_id"].to_list(), frame["group"].to_list()):
        groups.setdefault(pid.strip() if pid else pid, group)
    for r in changed.iter_rows(named=True):
        assert r["regime_a"] == "new"
        assert groups[r["participant_id"]].strip() in ("police", "firefighter")
        assert r["route_a"] in ("19.4(a)", "19.4(b)")
        assert r["route_b"] not in ("19.4(a)", "19.4(b)")
        assert r["finding_condition"] == "route_applies"
    # and the other way round: every new member on 19.4 under A changes
    a = diferida.evaluate_frame(pl.read_csv(path, infer_schema=False), as_of=AS_OF,
                                rules="article19").determinations
    on_19_4 = a.filter((pl.col("regime") == "new") & pl.col("route").is_in(["19.4(a)",
                                                                             "19.4(b)"]))
    assert set(on_19_4["participant_id"]) <= set(changed["participant_id"])


def test_age_67_moves_exactly_the_19_2_members_by_two_years(people, tmp_path):
    path, frame = people
    extra = pl.DataFrame({  # born on 29 February: 65 and 67 are reached on 28 February
        "participant_id": ["feb29"], "birth_date": ["1972-02-29"], "entry_date": ["1995-01-01"],
        "separation_date": ["2010-01-01"], "creditable_service_years": ["15"],
        "average_compensation": ["30000.00"], "group": ["general"],
        "refund_requested": ["false"], "deferred_right_1960": [""],
        "requested_start_date": [""], "office": ["x"]})
    both = pl.concat([pl.read_csv(path, infer_schema=False), extra.select(
        pl.read_csv(path, infer_schema=False).columns)])
    src = tmp_path / "m.csv"
    both.write_csv(src)
    out = tmp_path / "c.csv"
    compare_file(src, out, ["article19", AGE67], as_of=AS_OF, lang="en")
    changed = changed_csv(out)
    a = diferida.evaluate_frame(both, as_of=AS_OF, rules="article19",
                                inputs=("birth_date", "separation_date")).determinations
    on_19_2 = a.filter(pl.col("route") == "19.2")
    birthday = on_19_2.filter(
        pl.col("eligibility_date") == pl.col("birth_date").dt.offset_by("65y"))
    assert set(changed["participant_id"]) <= set(on_19_2["participant_id"])
    assert set(birthday["participant_id"]) <= set(changed["participant_id"])
    moved = changed.join(birthday.select("participant_id", "birth_date"), on="participant_id")
    assert moved.height == birthday.height > 50
    expected = moved["birth_date"].dt.offset_by("67y").cast(pl.String)
    assert moved["eligibility_date_b"].to_list() == expected.to_list()
    feb = changed.filter(pl.col("participant_id") == "feb29").row(0, named=True)
    assert (feb["eligibility_date_a"], feb["eligibility_date_b"]) == ("2037-02-28",
                                                                      "2039-02-28")


# ---- the money ----------------------------------------------------------------


@pytest.mark.slow
def test_money_totals_are_exact_and_the_fiscal_years_difference_is_b_minus_a(people, tmp_path):
    path, _ = people
    out = tmp_path / "c.xlsx"
    page = tmp_path / "c.html"
    s = compare_file(path, out, ["article19", AGE67], html=page, as_of=AS_OF, lang="en",
                     projecting=Projecting(discount="0.04", mortality="none"))
    a = diferida.evaluate_frame(pl.read_csv(path, infer_schema=False), as_of=AS_OF,
                                rules="article19").determinations
    total = sum((v for v in a["annual_amount"].to_list() if v is not None), Decimal("0"))
    assert s.totals.annual_a == total
    fy = pl.read_excel(out, sheet_name="Fiscal years")
    body = fy.filter(pl.col("Fiscal year") != "Total")
    for c in ("Expected payments", "Present value at 4%", "Pensions starting"):
        diff = (body[f"{c} under B"] - body[f"{c} under A"]).round(2)
        assert diff.to_list() == body[f"{c}: difference B − A"].round(2).to_list()
    # later ages pay later: B pays less in the first years
    assert body["Expected payments: difference B − A"].head(3).sum() < 0
    html = page.read_text()
    assert "<svg" in html and "illustrative reform, not law" in html
    assert 'src="http' not in html and 'href="http' not in html and "<link" not in html
    assert "<script" not in html


def test_workbook_sheets_and_columns(tmp_path):
    # the workbook is for people: sheets and headers in words, its last sheet
    # names each header's column in the CSV/Parquet tables (which keep codes)
    out = tmp_path / "c.xlsx"
    compare_file(EXAMPLES, out, ["article19", STRICT], as_of=AS_OF, lang="en",
                 projecting=Projecting(discount="0.04,0.06", mortality="none"))
    sheets = pl.read_excel(out, sheet_id=0)
    assert list(sheets) == ["Summary", "Status and route", "Changed members",
                            "Eligibility shifts", "Amount changes", "Fiscal years", "Chart",
                            "Assumptions", "Columns of the files"]
    keys = {(sheet, head): col for sheet, head, col in sheets["Columns of the files"].rows()}
    cm = {keys["Changed members", h]: h for h in sheets["Changed members"].columns}
    for c in ("participant_id", "status_a", "status_b", "route_a", "route_b",
              "eligibility_date_a", "eligibility_date_b", "annual_amount_a", "annual_amount_b",
              "finding_rule", "finding_under_a", "finding_under_b"):
        assert c in cm
    assert cm["status_a"] == "Status under A" and cm["route_b"] == "Route under B"
    fy = {keys["Fiscal years", h] for h in sheets["Fiscal years"].columns if h != "Period"}
    assert {"payments_a", "payments_b", "payments_difference", "pv_0.04_a", "pv_0.06_b",
            "pv_0.06_difference"} <= fy
    # the summary in words, each value stored as what it is (its key beside it)
    summary = cells(out, "Summary")
    keys = {v: ref[1:] for ref, (kind, v) in summary.items() if ref.startswith("C")}
    assert summary["B" + keys["members_changed"]] == ("n", "1")
    assert summary["A" + keys["members_changed"]] == ("s", "Members whose determination changes")
    assert summary["B" + keys["rules_b"]] == ("s", STRICT)
    assert numbers_as_text(out) == []
    a = dict(sheets["Assumptions"].iter_rows())
    assert a["Discount rates"].startswith("4% and 6%")


def test_csv_tables_are_written_all_together(tmp_path):
    out = tmp_path / "c.parquet"
    compare_file(EXAMPLES, out, ["article19", AGE67], as_of=AS_OF, lang="en")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(["c.summary.parquet", "c.transitions.parquet",
                            "c.changed_members.parquet", "c.eligibility_shifts.parquet",
                            "c.amount_changes.parquet", "c.assumptions.json"])
    info = json.loads((tmp_path / "c.assumptions.json").read_text())
    assert info["rules"]["b"]["illustrative"] is True
    assert info["rules"]["a"]["illustrative"] is False


def test_no_output_is_written_when_one_already_exists(tmp_path):
    out = tmp_path / "c.csv"
    table_paths(out)["transitions"].write_text("keep me")
    proc = run_cli("compare", str(EXAMPLES), "--rules", "article19", "--rules", STRICT,
                   "-o", str(out), "--as-of", "2026-11-29")
    assert proc.returncode == 2, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.transitions.csv"]
    assert table_paths(out)["transitions"].read_text() == "keep me"


# ---- bad input: refused before any member is read ---------------------------

BAD_RULES = {
    "no-base": ('[route_overrides."19.2"]\nage = 67\n', "names no base", 1),
    "fine-threshold": ('base = "article19"\n\n[route_overrides."19.2"]\nage = 67\n'
                       'min_service = "10.00001"\n', "more than 4 decimal places", 5),
    "rate-above-1": ('base = "article19"\n[amount.new]\ncitation = "Regla 19.5(b)"\n'
                     'brackets = [\n  { threshold = "0", rate = "0.015" },\n'
                     '  { threshold = "20", rate = "1.75" },\n]\n', "above 1", 6),
    "misspelt-key": ('base = "article19"\n[amout.new]\nrate = "0.0175"\n',
                     "not in the base rules", 2),
    "unknown-route-key": ('base = "article19"\n[route_overrides."19.2"]\nages = 67\n',
                          "a route has no 'ages'", 3),
}


@pytest.mark.parametrize("case", list(BAD_RULES))
def test_a_bad_reform_file_is_refused_with_file_line_and_reason(tmp_path, case):
    text, reason, line = BAD_RULES[case]
    path = tmp_path / "reform.toml"
    path.write_text(text)
    with pytest.raises(RulesError) as err:
        load_rules(path)
    assert f"{path}, line {line}: " in str(err.value) and reason in str(err.value)
    # on the command line: exit 2, before the member file (which does not exist) is read
    proc = run_cli("compare", str(tmp_path / "missing.parquet"), "--rules", "article19",
                   "--rules", str(path), "-o", str(tmp_path / "c.xlsx"))
    assert proc.returncode == 2
    assert f"line {line}" in proc.stderr and reason in proc.stderr
    assert "missing.parquet" not in proc.stderr
    assert not (tmp_path / "c.xlsx").exists()


def test_a_route_with_no_age_is_refused_with_its_line(tmp_path):
    text = (resources.files("diferida") / "rules" / "article19.toml").read_text()
    lines = text.splitlines()
    path = tmp_path / "noage.toml"
    path.write_text(text.replace("age = 65\n", "", 1))
    header = next(i for i, s in enumerate(lines) if s == 'id = "19.2"')  # 0-based: [[routes]]
    with pytest.raises(RulesError, match=rf"line {header}: .*missing 'age'"):
        load_rules(path)


@pytest.mark.parametrize("args, message", [
    (["--rules", "article99", "--rules", "article19"], "unknown rules 'article99'"),
    (["--rules", "article19"], "exactly two"),
    (["--rules", "article19", "--rules", STRICT, "--rules", AGE67], "exactly two"),
    (["--rules", "article19", "--rules", STRICT, "--discount", "0.04"], "go together"),
    (["--rules", "article19", "--rules", STRICT, "--cola", "0.02"], "projection options"),
])
def test_bad_options_exit_2_before_reading(tmp_path, args, message):
    proc = run_cli("compare", str(tmp_path / "missing.csv"), "-o", str(tmp_path / "c.xlsx"),
                   *args)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr


def test_the_command_line_compare_runs_and_prints_a_summary(tmp_path):
    proc = run_cli("compare", str(EXAMPLES), "--rules", "article19", "--rules", STRICT,
                   "-o", str(tmp_path / "c.xlsx"), "--as-of", "2026-11-29", "--json")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    assert (d["rows_read"], d["members_changed"], d["status_changed"]) == (11, 1, 1)


# ---- rules diff ---------------------------------------------------------------


def test_rules_diff_shows_the_changed_lines_with_their_citations():
    proc = run_cli("rules", "diff", "article19", AGE67, "--json")
    assert proc.returncode == 0
    d = json.loads(proc.stdout)
    assert d["differences"] == [{"key": "routes.19.2.age", "a": "65", "b": "67",
                                 "citation": "Regla 19.2"}]
    proc = run_cli("rules", "diff", "article19", STRICT)
    assert proc.returncode == 0
    assert "Regla 19.4(a)" in proc.stdout and "pre1990" in proc.stdout
    assert "3 L.P.R.A. § 766" in proc.stdout


def test_rules_diff_of_a_rate_and_minimum_reform(tmp_path):
    path = tmp_path / "r.toml"
    path.write_text('base = "article19"\n[meta]\nname = "r"\n[amount.new]\n'
                    'brackets = [{ threshold = "0", rate = "0.0175" }]\n'
                    '[minimum]\nrate = "0.35"\n[regime.deferred_right_cutoff]\n'
                    'value = "1965-12-31"\n')
    d = json.loads(run_cli("rules", "diff", "article19", str(path), "--json").stdout)
    got = {x["key"]: (x["a"], x["b"], x["citation"]) for x in d["differences"]}
    assert got["amount.new.brackets"][2] == "Regla 19.5(b)"
    assert got["minimum.rate"] == ("0.30", "0.35", "Regla 19.6")
    assert got["regime.deferred_right_cutoff.value"] == ("1960-06-30", "1965-12-31",
                                                         "Regla 19.6")


def test_rules_diff_of_the_same_rules_says_so():
    proc = run_cli("rules", "diff", "article19", "article19", "--lang", "en")
    assert proc.returncode == 0 and "No differences" in proc.stdout


def test_rules_diff_speaks_spanish_by_default():
    proc = run_cli("rules", "diff", "article19", AGE67)
    assert proc.returncode == 0
    assert "ILUSTRATIVA, NO ES LEY" in proc.stdout and "qué" in proc.stdout
    assert "ILLUSTRATIVE" not in proc.stdout
    same = run_cli("rules", "diff", "article19", "article19")
    assert "Sin diferencias: las dos reglas dicen lo mismo." in same.stdout


# ---- one person ---------------------------------------------------------------

POLICE = ["--birth-date", "1975-06-20", "--entry-date", "1996-02-01", "--separation-date",
          "2021-03-31", "--service", "25.1667", "--compensation", "36000.00", "--group",
          "police", "--no-refund", "--as-of", "2026-11-29", "--lang", "en"]


@pytest.mark.slow
def test_evaluate_with_two_rules_agrees_with_two_single_runs():
    both = json.loads(run_cli("evaluate", *POLICE, "--rules", "article19", "--rules", STRICT,
                              "--json").stdout)
    a = json.loads(run_cli("evaluate", *POLICE, "--rules", "article19", "--json").stdout)
    b = json.loads(run_cli("evaluate", *POLICE, "--rules", STRICT, "--json").stdout)
    assert both["a"] == a and both["b"] == b
    assert both["differences"]["route"] == {"a": "19.4(a)", "b": "19.2"}
    assert both["differences"]["eligibility_date"] == {"a": "2025-06-20", "b": "2040-06-20"}
    assert both["explaining_finding"]["condition"] == "route_applies"


def test_evaluate_with_two_rules_prints_what_differs_and_why():
    proc = run_cli("evaluate", *POLICE, "--rules", "article19", "--rules", STRICT)
    assert proc.returncode == 0
    out = proc.stdout
    assert "What differs" in out and "Route: Rule 19.4(a) → Rule 19.2" in out
    assert "Eligibility date: June 20, 2025 → June 20, 2040" in out and "Why" in out


def test_evaluate_with_one_rules_is_unchanged():
    one = run_cli("evaluate", *POLICE, "--rules", STRICT, "--json")
    assert json.loads(one.stdout)["route"] == "19.2"
    proc = run_cli("evaluate", *POLICE, "--rules", "a", "--rules", "b", "--rules", "c")
    assert proc.returncode == 2 and "two" in proc.stderr


def test_the_illustrative_reform_is_marked_and_not_offered_on_the_web_page(tmp_path):
    r = load_rules(AGE67)
    assert r.illustrative and "NOT LAW" in r.description
    assert not load_rules("article19").illustrative and not load_rules(STRICT).illustrative
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient
    from diferida.server import create_app
    from diferida.service.settings import Settings

    app = create_app(Settings(database_url=f"sqlite:///{tmp_path / 'web.db'}"))
    with TestClient(app) as c:
        page = c.get("/").text
        assert f'value="{STRICT}"' in page and f'value="{AGE67}"' not in page
        form = {"birth_date": "1972-11-02", "entry_date": "1995-08-01",
                "separation_date": "2015-07-31", "creditable_service_years": "12.25",
                "average_compensation": "28500.00", "group": "general",
                "refund_requested": "false", "as_of": "2026-11-29", "lang": "en"}
        answer = c.post("/calcular", data={**form, "rules": AGE67}).text
        assert 'id="e-rules"' in answer and "November 2, 2039" not in answer


def test_reform_can_change_what_the_issue_lists(tmp_path):
    # ages, service thresholds, rates, brackets, the 19.6 minimum and cut-off,
    # groups and regimes of a route: each one changes a determination
    path = tmp_path / "many.toml"
    path.write_text('base = "article19"\n[meta]\nname = "many"\n'
                    '[route_overrides."19.2"]\nage = 60\nmin_service = "12"\n'
                    'groups = ["general"]\n'
                    '[route_overrides."19.1(a)"]\nregimes = ["pre1990", "new"]\n'
                    '[amount.new]\nbrackets = [{ threshold = "0", rate = "0.0175" }]\n'
                    '[minimum]\nrate = "0.35"\n[regime.deferred_right_cutoff]\n'
                    'value = "1965-12-31"\n')
    r = load_rules(path)
    assert r.route("19.2").age == 60 and r.route("19.2").min_service == Decimal("12")
    assert r.route("19.2").groups == ("general",)
    assert r.route("19.1(a)").regimes == ("pre1990", "new")
    assert r.amount["new"].brackets[0].rate == Decimal("0.0175")
    assert r.minimum_rate == Decimal("0.35") and r.deferred_right_cutoff == date(1965, 12, 31)
    # citations are kept: the base's, for every changed line
    assert r.amount["new"].citation == "Regla 19.5(b)" and r.minimum_citation == "Regla 19.6"


HEADER = ("participant_id,birth_date,entry_date,separation_date,creditable_service_years,"
          "average_compensation,group,refund_requested,deferred_right_1960,"
          "requested_start_date\n")


def test_a_row_valid_under_one_rules_set_only_is_rejected_for_both(tmp_path):
    # A reform that moves the 19.6 cut-off to 1965: a declared right with an
    # entry in 1962 is valid under it and invalid under the article. And an
    # age of 67 leaves a birthday past 9999-12-31 for someone born in 9933.
    # Each such row is rejected once, for both sides, never a crash.
    reform = tmp_path / "late.toml"
    reform.write_text('base = "article19"\n[meta]\nname = "late"\n'
                      '[regime.deferred_right_cutoff]\nvalue = "1965-12-31"\n'
                      '[route_overrides."19.2"]\nage = 67\n')
    src = tmp_path / "m.csv"
    src.write_text(HEADER
                   + "ok,1960-01-01,1992-01-01,2010-01-01,18,30000,general,false,,\n"
                   + "1962,1935-01-01,1962-03-01,1990-01-01,27,20000,general,false,true,\n"
                   + "far,9933-06-01,9990-01-01,9999-12-31,5,30000,general,false,,\n")
    for a, b in (("article19", reform), (reform, "article19")):
        out, rej = tmp_path / "c.csv", tmp_path / "rej.csv"
        s = compare_file(src, out, [a, b], rejects=rej, as_of=AS_OF, lang="en", overwrite=True)
        assert (s.rows_read, s.rows_compared, s.rows_rejected) == (3, 1, 2)
        rejects = pl.read_csv(rej, infer_schema=False)
        assert rejects["participant_id"].to_list() == ["1962", "far"]
        assert rejects["field"].to_list() == ["deferred_right_1960", "birth_date"]


@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT"])
@pytest.mark.slow
def test_a_comparison_stopped_midway_leaves_no_output_and_no_temporary_file(tmp_path, how):
    import signal
    import time

    from bench.generate import write

    src = write(60_000, tmp_path / "in" / "big.csv", invalid=0.01)
    folder = tmp_path / "out"
    folder.mkdir()
    proc = subprocess.Popen(
        [*cli_command(), "compare", str(src), "--rules", "article19", "--rules", AGE67,
         "-o", str(folder / "c.xlsx"), "--rejects", str(folder / "rej.csv"),
         "--chunk-rows", "500", "--as-of", AS_OF.isoformat(), "-q", "--lang", "en"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not any(p.name.endswith(".part") for p in folder.iterdir()):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    time.sleep(0.3)
    proc.send_signal(getattr(signal, how))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Interrupted: no output was written" in err and "Traceback" not in err
    assert list(folder.iterdir()) == []
