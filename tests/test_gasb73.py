"""GASB Statement No. 73 in `diferida valuation` (liability/gasb73.py,
liability/history.py, runner.py `_gasb_options` / `_gasb_report`): the
recognition of an amount over its years adding up to the cent, a three-year
history worked by hand from the schedules' own figures (pension expense,
deferred outflows and inflows rolling from year to year, the schedule in
GASB's layout against the project's lines), immediate recognition by
default, the ten years of required supplementary information (years not
kept: not available, never invented), the history file (kept once, a figure
edited by hand found by its SHA-256, dates in order), each employer's
change of proportion as a base of its own, and the options' errors.

The hand computations below use Decimal on the reports' figures, never
gasb73's functions (but for `installments` itself, in its own tests)."""

from __future__ import annotations

import json
import shutil
from decimal import ROUND_HALF_UP, Decimal
from math import ceil

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diferida.liability.gasb73 import installments, remaining_service_life

from .test_liability import STATUS, run, write
from .test_valuation import A2

OPTS = ("--mortality", "none", "--cola", "0", "--lang", "en")
LIFE = ("--remaining-service-life", "2.5")

# the members: one in pay, one deferred (eligible 2030), one who joins in FY2025
P1 = "A1,1965-03-15,1985-01-01,2010-12-31,25,36000.00,general,false,in_pay,{amount},2020-04-01"
D2 = A2 + ",deferred,,"
J6 = "A6,1971-01-02,1995-08-01,2016-07-31,20,48500.00,general,false,deferred,,"
# year 1 (30 June 2024): A1 in pay at 1,000.00 and A2, at 4 %
Y1 = [P1.format(amount="1000.00"), D2]
# year 2 (30 June 2025): experience only — A6 joins and A1's pension is
# corrected to 1,050.00 (no COLA assumed: 1,000.00 expected); still 4 %
Y2 = [P1.format(amount="1050.00"), D2, J6]
# year 3 (30 June 2026): the same members, the discount raised from 4 % to
# 4.5 % (a change of assumptions that lowers the liability: an inflow)
Y3 = Y2

# the project's lines of the schedule of changes under each GASB line
# (docs/valuation.md "GASB 73"), written out here rather than read from gasb73
UNDER = {"start": "start", "end": "end", "interest": "interest",
         "payments": "benefit_payments", "payments_actual": "benefit_payments",
         "benefit_terms": "benefit_terms", "discount": "assumptions",
         "mortality": "assumptions", "claims": "assumptions", "other": "assumptions",
         "rejected_current": "other", "rejected_prior": "other"}
LAYOUT = ("service_cost", "interest", "benefit_terms", "experience", "assumptions",
          "benefit_payments", "other", "net_change", "start", "end")
SEVEN = LAYOUT[:7]


def c(text: str | None) -> int:
    """Dollars and cents as written in a report, in cents (exact)."""
    assert text is not None
    d = Decimal(text) * 100
    assert d == d.to_integral_value(), text
    return int(d)


def hu(x: Decimal) -> int:
    """Half up (away from zero on a tie), to the cent."""
    return int(x.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def over_2_5_years(cents: int) -> list[int]:
    """An amount recognised over 2.5 years, by hand: 1/2.5 = 2/5 of it the
    first year, 2/5 the second, the last half-year's 1/5 the third, each
    year the cumulative amount rounded half up less what went before."""
    first = hu(Decimal(cents) * 2 / 5)
    two = hu(Decimal(cents) * 4 / 5)
    return [first, two - first, cents - two]


def report_of(path) -> dict:
    return json.loads(path.read_text())


def valuation(tmp_path, census, as_of, *extra, out=None, prior=None, rows=None):
    """One `diferida valuation` run of `census` (rows written when given) at
    30 June of `as_of`'s year; the result and the output's path."""
    src = tmp_path / census
    if rows is not None:
        src = write(tmp_path, rows, STATUS, name=census)
    out = out or tmp_path / (census.replace(".csv", "") + ".json")
    args = [src, "-o", out, "--as-of", as_of, *OPTS, *extra, "--json"]
    if prior is not None:
        args += ["--prior", tmp_path / prior[0], "--prior-date", prior[1]]
    return run(*args), out


# -------------------------------------------------------------- installments


def test_installments_worked_by_hand():
    # 1,000.00 over 2.5 years: cumulative 1/2.5, 2/2.5, 2.5/2.5 of 100000 =
    # 40000, 80000, 100000 → 40000, 40000, 20000 (the half-year last)
    assert installments(100_000, Decimal("2.5")) == [40_000, 40_000, 20_000]
    # 100.01 over 3 years: cumulative 10001/3 = 3333.67 → 3334, 20002/3 =
    # 6667.33 → 6667, 10001 → 3334, 3333, 3334 (rounding the cumulative
    # amounts: no year's rounding is lost, the three add up to 10001)
    assert installments(10_001, Decimal(3)) == [3334, 3333, 3334]
    # a tie: 0.02 over 4 years: cumulative 0.5 → 1 (half up), 1, 1.5 → 2, 2
    assert installments(2, Decimal(4)) == [1, 0, 1, 0]
    # negative amounts round away from zero on a tie: the same figures negated
    assert installments(-2, Decimal(4)) == [-1, 0, -1, 0]
    # 1.01 years: two years, the second a hundredth of one: cumulative
    # 10100 × 1/1.01 = 10000, then 10100 → 10000, 100
    assert installments(10_100, Decimal("1.01")) == [10_000, 100]


@pytest.mark.parametrize("period", ["0", "0.5", "1", "1.00"])
def test_a_period_of_at_most_one_year_recognises_it_all_at_once(period):
    for cents in (0, 1, -1, 123_456_789, -98_765):
        assert installments(cents, Decimal(period)) == [cents]


@pytest.mark.parametrize("text, period", [
    ("2.5", "2.5"), ("2.50", "2.5"), (" 4.25 ", "4.25"), ("10.0", "10"), ("1e1", "10"),
    ("-0", "0"), ("0", "0"), ("50", "50")])
def test_a_period_is_written_one_way_whatever_its_spelling(text, period):
    assert remaining_service_life(text) == (Decimal(period), True)
    assert str(remaining_service_life(text)[0]) == period
    assert remaining_service_life(None) == (Decimal(0), False)


PERIODS = st.integers(0, 5000).map(lambda n: Decimal(n).scaleb(-2))


@given(cents=st.integers(-10**15, 10**15), period=PERIODS)
def test_installments_add_up_to_the_amount_exactly(cents, period):
    parts = installments(cents, period)
    assert sum(parts) == cents
    assert len(parts) == (1 if period <= 1 else ceil(period))
    if period > 1:
        # each year within a cent of its exact share (a whole year's
        # cents/period, the last the fraction left)
        for k, part in enumerate(parts):
            exact = Decimal(cents) * (min(Decimal(k + 1), period) - k) / period
            assert abs(part - exact) <= 1, (k, part, exact)
        # the same figures negated for the amount negated
        assert installments(-cents, period) == [-x for x in parts]


# ------------------------------------------------- three years, by hand


@pytest.fixture(scope="module")
def three_years(tmp_path_factory):
    """Three measurements kept in one history (created by the first run),
    recognition over 2.5 years: the JSON reports, the history's path."""
    d = tmp_path_factory.mktemp("gasb73")
    history = d / "history.jsonl"
    (d / "pa2026.toml").write_text('discount = "0.04"\n')
    reports, summaries, lines = [], [], []
    for census, rows, as_of, extra, prior in (
            ("c2024.csv", Y1, "2024-06-30", ("--discount", "0.04"), None),
            ("c2025.csv", Y2, "2025-06-30", ("--discount", "0.04"),
             ("c2024.csv", "2024-06-30")),
            ("c2026.csv", Y3, "2026-06-30",
             ("--discount", "0.045", "--prior-assumptions", d / "pa2026.toml"),
             ("c2025.csv", "2025-06-30"))):
        assert history.exists() == bool(reports)  # created by the first run
        r, out = valuation(d, census, as_of, *LIFE, "--history", history, *extra,
                           prior=prior, rows=rows)
        assert r.exit_code == 0, r.output
        reports.append(report_of(out))
        summaries.append(json.loads(r.output))
        lines.append(history.read_text().splitlines())
    return {"dir": d, "history": history, "reports": reports, "summaries": summaries,
            "lines": lines}


def by_source(report) -> dict[str, int]:
    """The deferred amounts of each source, outflows less inflows (cents)."""
    return {s: c(x["outflows"]) - c(x["inflows"])
            for s, x in report["gasb73"]["deferred"].items()}


def check_layout(report, prior_report):
    """The schedule in GASB's layout: each line the sum of the project's
    lines under it, the seven lines adding up to the net change, start + net
    change = end, the start last year's total and the end this year's."""
    g = report["gasb73"]["schedule"]
    want = dict.fromkeys(LAYOUT, 0)
    for ln in report["changes"]:
        key = "experience" if ln["line"].startswith("experience_") else UNDER[ln["line"]]
        want[key] += c(ln["amount"])
    want["net_change"] = sum(want[k] for k in SEVEN)
    assert {k: c(v) for k, v in g.items()} == want
    assert set(g) == set(LAYOUT)
    assert c(g["service_cost"]) == 0  # no member is active
    assert c(g["start"]) + c(g["net_change"]) == c(g["end"])
    assert c(g["start"]) == c(prior_report["liability"]["total"])
    assert c(g["end"]) == c(report["liability"]["total"])
    return {k: c(v) for k, v in g.items()}


def test_year_one_has_no_schedule_no_expense_and_nothing_deferred(three_years):
    g = three_years["reports"][0]["gasb73"]
    assert g["schedule"] is None and g["expense"] is None and g["bases"] == []
    assert all(c(x) == 0 for d in g["deferred"].values() for x in d.values())
    assert all(c(x["amount"]) == 0 for x in g["recognised_later"])
    assert g["history"]["records_before"] == 0
    assert g["history"]["this_measurement"] == "append"
    assert len(three_years["lines"][0]) == 1


def test_year_two_experience_recognised_over_two_and_a_half_years(three_years):
    r1, r2, _ = three_years["reports"]
    g = r2["gasb73"]
    lay = check_layout(r2, r1)
    lines = {ln["line"]: c(ln["amount"]) for ln in r2["changes"]}
    # what happened: A6 joined, A1's pension was raised; no assumption changed
    assert lines["experience_joined"] > 0 and lines["experience_changed"] > 0
    assert lay["assumptions"] == 0
    e = lay["experience"]
    parts = over_2_5_years(e)
    assert g["recognition_period"] == "2.5" and g["recognition_period_given"] is True
    assert [(b["fiscal_year"], b["source"], c(b["amount"]), b["period"]) for b in g["bases"]] \
        == [(2025, "experience", e, "2.5")]
    exp = {k: c(v) for k, v in g["expense"].items()}
    assert exp == {"service_cost": 0, "interest": lay["interest"],
                   "benefit_terms": lay["benefit_terms"], "other": lay["other"],
                   "recognised_experience": parts[0], "recognised_assumptions": 0,
                   "total": lay["interest"] + lay["benefit_terms"] + lay["other"] + parts[0]}
    assert (c(g["deferred"]["experience"]["outflows"]),
            c(g["deferred"]["experience"]["inflows"])) == (e - parts[0], 0)
    assert by_source(r2) == {"experience": e - parts[0], "assumptions": 0}
    assert [(x["fiscal_year"], c(x["amount"])) for x in g["recognised_later"]] == [
        ("2026", parts[1]), ("2027", parts[2]), ("2028", 0), ("2029", 0), ("2030", 0),
        ("later", 0)]
    assert g["history"] == {"file": str(three_years["history"]), "records_before": 1,
                            "this_measurement": "append"}


def test_year_three_expense_and_deferred_roll_from_year_two(three_years):
    _, r2, r3 = three_years["reports"]
    g2, g3 = r2["gasb73"], r3["gasb73"]
    lay2 = {k: c(v) for k, v in g2["schedule"].items()}
    lay3 = check_layout(r3, r2)
    lines = {ln["line"]: c(ln["amount"]) for ln in r3["changes"]}
    # what happened: the discount went from 4 % to 4.5 %, nothing else
    assert lines["discount"] < 0 and lay3["assumptions"] == lines["discount"]
    assert lay3["experience"] == 0
    old = over_2_5_years(lay2["experience"])  # year two's base, in its second year now
    new = over_2_5_years(lay3["assumptions"])  # this year's, in its first
    # the bases: year two's from the history, then this year's
    assert [(b["fiscal_year"], b["source"], c(b["amount"])) for b in g3["bases"]] == [
        (2025, "experience", lay2["experience"]), (2026, "assumptions", lay3["assumptions"])]
    # the expense: service cost (0) + interest + benefit terms + other + the
    # part of each base recognised this year, old and new
    exp = {k: c(v) for k, v in g3["expense"].items()}
    assert exp["recognised_experience"] == old[1]
    assert exp["recognised_assumptions"] == new[0]
    assert exp["total"] == 0 + lay3["interest"] + lay3["benefit_terms"] + lay3["other"] \
        + old[1] + new[0]
    # what year two said FY2026 would recognise of its bases is what it did
    assert c(g2["recognised_later"][0]["amount"]) == old[1]
    # the deferred balances roll: year two's less this year's recognition of
    # the old bases, plus what remains of this year's new ones
    d2, d3 = by_source(r2), by_source(r3)
    assert d3["experience"] == d2["experience"] - old[1] == old[2]
    assert d3["assumptions"] == d2["assumptions"] + (lay3["assumptions"] - new[0])
    # by sign: the experience still an outflow, the higher rate an inflow
    assert {s: (c(x["outflows"]), c(x["inflows"])) for s, x in g3["deferred"].items()} == {
        "experience": (old[2], 0), "assumptions": (0, -(new[1] + new[2]))}
    assert [(x["fiscal_year"], c(x["amount"])) for x in g3["recognised_later"]] == [
        ("2027", old[2] + new[1]), ("2028", new[2]), ("2029", 0), ("2030", 0), ("2031", 0),
        ("later", 0)]
    assert g3["history"]["records_before"] == 2


def test_the_json_summary_carries_the_report_gasb73_figures(three_years):
    for rep, summary in zip(three_years["reports"], three_years["summaries"], strict=True):
        assert summary["gasb73"] == rep["gasb73"]


def test_ten_years_three_kept_seven_not_available(three_years):
    reports = three_years["reports"]
    ten = reports[2]["gasb73"]["ten_years"]
    assert [y["fiscal_year"] for y in ten] == list(range(2026, 2016, -1))
    for y, rep in zip(ten[:3], reversed(reports), strict=True):
        assert y["available"] is True
        assert y["measurement_date"] == rep["measurement_date"]
        assert y["total_pension_liability"] == rep["liability"]["total"]
        assert y["schedule"] == rep["gasb73"]["schedule"]  # year one's: None
    assert ten[2]["schedule"] is None
    # the years kept before carry their line's SHA-256
    kept = [json.loads(x) for x in three_years["lines"][2]]
    assert [ten[2]["sha256"], ten[1]["sha256"]] == [k["sha256"] for k in kept[:2]]
    for y in ten[3:]:
        assert y["available"] is False
        assert {k: y[k] for k in ("measurement_date", "total_pension_liability", "schedule",
                                  "sha256")} == dict.fromkeys(
            ("measurement_date", "total_pension_liability", "schedule", "sha256"))


# ------------------------------------------------------- default period


def test_without_a_period_everything_is_recognised_at_once(tmp_path):
    # a year with both experience (A6 joins, A1 corrected) and a change of
    # assumptions (5 % → 4 %), the census's own period: 0
    write(tmp_path, Y1, STATUS, name="c2024.csv")
    (tmp_path / "pa.toml").write_text('discount = "0.05"\n')
    r, out = valuation(tmp_path, "c2025.csv", "2025-06-30", "--discount", "0.04",
                       "--prior-assumptions", tmp_path / "pa.toml",
                       prior=("c2024.csv", "2024-06-30"), rows=Y2)
    assert r.exit_code == 0, r.output
    rep = report_of(out)
    g = rep["gasb73"]
    lay = {k: c(v) for k, v in g["schedule"].items()}
    assert lay["experience"] > 0 and lay["assumptions"] > 0
    assert g["recognition_period"] == "0" and g["recognition_period_given"] is False
    assert g["history"] is None
    assert all(c(x) == 0 for d in g["deferred"].values() for x in d.values())
    assert all(c(x["amount"]) == 0 for x in g["recognised_later"])
    exp = {k: c(v) for k, v in g["expense"].items()}
    assert exp["recognised_experience"] == lay["experience"]
    assert exp["recognised_assumptions"] == lay["assumptions"]
    assert exp["total"] == lay["net_change"] - lay["benefit_payments"] == (
        lay["interest"] + lay["benefit_terms"] + lay["experience"] + lay["assumptions"]
        + lay["other"])
    assert {(b["source"], b["period"]) for b in g["bases"]} == {
        ("experience", "0"), ("assumptions", "0")}


# -------------------------------------------------------------- history


def copy_of(three_years, tmp_path):
    """The three years' censuses and history, copied to be changed."""
    for name in ("c2024.csv", "c2025.csv", "c2026.csv", "pa2026.toml", "history.jsonl"):
        shutil.copy(three_years["dir"] / name, tmp_path / name)
    return tmp_path / "history.jsonl"


def year_three(tmp_path, history, discount="0.045", out=None, life="2.5"):
    return valuation(tmp_path, "c2026.csv", "2026-06-30", "--remaining-service-life", life,
                     "--history", history,
                     "--discount", discount, "--prior-assumptions", tmp_path / "pa2026.toml",
                     prior=("c2025.csv", "2025-06-30"), out=out)


# the same period however written: 2.50 years is 2.5 (the history compares
# the bases' periods as written: "2.50" was refused as other figures)
@pytest.mark.parametrize("life", ["2.5", "2.50"])
def test_the_same_year_with_the_same_figures_is_kept_once(three_years, tmp_path, life):
    history = copy_of(three_years, tmp_path)
    before = history.read_bytes()
    r, out = year_three(tmp_path, history, life=life)
    assert r.exit_code == 0, r.output
    g = report_of(out)["gasb73"]
    assert g["recognition_period"] == "2.5"
    assert g["history"]["this_measurement"] == "kept"
    assert g["history"]["records_before"] == 2
    assert history.read_bytes() == before  # no line added
    # the figures are the first run's
    first = dict(three_years["reports"][2]["gasb73"])
    assert {k: v for k, v in g.items() if k != "history"} == \
        {k: v for k, v in first.items() if k != "history"}


def test_the_same_date_with_other_figures_stops_and_writes_nothing(three_years, tmp_path):
    history = copy_of(three_years, tmp_path)
    before = history.read_bytes()
    r, out = year_three(tmp_path, history, discount="0.05")
    assert r.exit_code == 2, r.output
    assert "2026-06-30" in r.output and "other figures" in r.output
    assert not out.exists()
    assert history.read_bytes() == before


def test_a_line_edited_by_hand_is_found_by_its_sha256(three_years, tmp_path):
    history = copy_of(three_years, tmp_path)
    lines = history.read_text().splitlines()
    rec = json.loads(lines[1])
    total = rec["total"]
    # one digit of an amount changed, nothing else touched
    digit = next(i for i, ch in enumerate(total) if ch.isdigit() and ch != "9")
    edited = total[:digit] + str(int(total[digit]) + 1) + total[digit + 1:]
    assert f'"total":"{total}"' in lines[1]
    lines[1] = lines[1].replace(f'"total":"{total}"', f'"total":"{edited}"', 1)
    history.write_text("\n".join(lines) + "\n")
    before = history.read_bytes()
    r, out = year_three(tmp_path, history, out=tmp_path / "again.json")
    assert r.exit_code == 2, r.output
    assert "line 2" in r.output and "SHA-256" in r.output and "--history" in r.output
    assert not out.exists()
    assert history.read_bytes() == before


def test_a_measurement_earlier_than_the_last_kept_stops(three_years, tmp_path):
    history = copy_of(three_years, tmp_path)
    before = history.read_bytes()
    r, out = valuation(tmp_path, "c2024.csv", "2023-06-30", *LIFE, "--history", history,
                       "--discount", "0.04", out=tmp_path / "y2023.json")
    assert r.exit_code == 2, r.output
    assert "2023-06-30" in r.output and "2026-06-30" in r.output and "earlier" in r.output
    assert not out.exists()
    assert history.read_bytes() == before


# ------------------------------------------------------------- employers


def test_each_employer_change_of_proportion_is_a_base_of_its_own(tmp_path):
    header = STATUS + ",employer"
    y1 = [Y1[0] + ",E1", Y1[1] + ",E2",
          "A5,1970-11-02,1995-08-01,2015-07-31,14,38500.00,general,false,deferred,,,E1"]
    # A6 joins E2: the proportions move from E1 to E2
    y2 = [Y2[0] + ",E1", Y2[1] + ",E2", y1[2], Y2[2] + ",E2"]
    write(tmp_path, y1, header, name="c2024.csv")
    history = tmp_path / "h.jsonl"
    r, out1 = valuation(tmp_path, "c2024.csv", "2024-06-30", *LIFE, "--history", history,
                        "--discount", "0.04")
    assert r.exit_code == 0, r.output
    r1 = report_of(out1)
    e1 = r1["gasb73"]["employers"]
    # no prior year kept: no change of proportion
    assert [(e["prior_proportion"], c(e["change_amount"])) for e in e1] == [(None, 0)] * 2
    assert sum(e["proportion"] for e in e1) == 1_000_000
    write(tmp_path, y2, header, name="c2025.csv")
    r, out2 = valuation(tmp_path, "c2025.csv", "2025-06-30", *LIFE, "--history", history,
                        "--discount", "0.04", prior=("c2024.csv", "2024-06-30"))
    assert r.exit_code == 0, r.output
    r2 = report_of(out2)
    g = r2["gasb73"]
    total = c(r2["liability"]["total"])
    prior = {e["employer"]: e["proportion"] for e in e1}
    # the prior proportions are the prior year's report's (its 6 decimals)
    assert prior == {e["employer"]: int(Decimal(e["proportion"]) * 1_000_000)
                     for e in r1["employers"]}
    rows = g["employers"]
    assert [e["employer"] for e in rows] == ["E1", "E2"]
    assert sum(e["proportion"] for e in rows) == 1_000_000
    exp_total = c(g["expense"]["total"])
    lay = {k: c(v) for k, v in g["schedule"].items()}
    parts = over_2_5_years(lay["experience"])
    # the collective figures are not touched by the proportions
    assert exp_total == lay["interest"] + lay["benefit_terms"] + lay["other"] + parts[0]
    own_bases = {}
    for e in rows:
        assert e["prior_proportion"] == prior[e["employer"]]
        change = hu(Decimal(e["proportion"] - e["prior_proportion"]) / 1_000_000 * total)
        assert change != 0
        assert c(e["change_amount"]) == change
        own = over_2_5_years(change)
        own_bases[e["employer"]] = change
        assert c(e["proportion_recognised"]) == own[0]
        assert c(e["expense"]) == c(e["collective_expense"]) + own[0]
        left = own[1] + own[2]
        # its own base's remainder on the side of its sign, with its share of
        # the collective deferred outflows (no collective inflows this year)
        assert c(e["deferred_inflows"]) == (-left if left < 0 else 0)
        e["_collective_out"] = c(e["deferred_outflows"]) - (left if left > 0 else 0)
    assert [(b["source"], b["employer"], c(b["amount"])) for b in g["bases"]
            if b["source"] == "proportion"] == [
        ("proportion", k, v) for k, v in own_bases.items()]
    # E1 lost proportion, E2 gained it
    assert own_bases["E1"] < 0 < own_bases["E2"]
    # the collective expense and deferred outflows shared to the cent
    assert sum(c(e["collective_expense"]) for e in rows) == exp_total
    coll_out = c(g["deferred"]["experience"]["outflows"])
    assert coll_out == lay["experience"] - parts[0]
    assert sum(e["_collective_out"] for e in rows) == coll_out
    # shared by proportion: each within a cent of its exact share
    for e in rows:
        q = Decimal(e["proportion"]) / 1_000_000
        assert abs(c(e["collective_expense"]) - exp_total * q) < 1
        assert abs(e["_collective_out"] - coll_out * q) < 1


# ---------------------------------------------------------- option errors


@pytest.mark.parametrize("extra, says", [
    (("--remaining-service-life", "-1"), "--remaining-service-life -1: give"),
    (("--remaining-service-life", "abc"), "--remaining-service-life abc: give"),
    (("--remaining-service-life", "51"), "--remaining-service-life 51: give"),
    (("--remaining-service-life", "nan"), "--remaining-service-life nan: give"),
    (("--payments-after", "1000.00"), "--payments-after and --payments-after-through"),
    (("--payments-after-through", "2026-01-31"),
     "--payments-after and --payments-after-through"),
    (("--payments-after", "1000.00", "--payments-after-through", "2025-06-30"),
     "--payments-after-through 2025-06-30 is not after the measurement date 2025-06-30"),
    (("--payments-after", "1000.00", "--payments-after-through", "2025-01-31"),
     "--payments-after-through 2025-01-31 is not after"),
    (("--discount-index-date", "2025-06-30"), "--discount-index-date: give --discount-index"),
])
def test_option_errors_exit_2_naming_the_option(tmp_path, extra, says):
    history = tmp_path / "h.jsonl"
    r, out = valuation(tmp_path, "c.csv", "2025-06-30", "--discount", "0.04",
                       "--history", history, *extra, rows=Y1)
    assert r.exit_code == 2, r.output
    assert says in r.output
    assert "Traceback" not in r.output
    assert not out.exists() and not history.exists()
