"""The first COLA of a pension in pay: one convention, whatever the census
date within its fiscal year (docs/project.md, docs/relief.md). A COLA goes
to the pensions in pay before its 1 July; a pension whose first payment
falls on that 1 July is paid its determined amount, and raised from the
next. So one member at $1,000.00 a month, `--cola 0.10`, measured on
30 June 2026, is paid 13,200.00 in FY2027 whether the census is dated
1 July 2025, 29 June or 30 June 2026; a census dated 1 July 2026 already
carries that day's raise."""

from __future__ import annotations

import json
from datetime import date, timedelta
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import TIER
from .test_liability import STATUS, run, write
from .test_valuation import A1

IN_PAY = "P1,1960-01-01,1985-01-01,2010-12-31,25,36000.00,general,false,in_pay,1000.00,2012-06-01"
ARGS = ("--cola", "0.10", "--mortality", "none", "--discount", "0",
        "--measurement-date", "2026-06-30", "--json")


def first_year(tmp_path, as_of: str, rows=(IN_PAY,)) -> tuple[Decimal, dict]:
    src = write(tmp_path, list(rows), STATUS, name=f"census-{as_of}.csv")
    out = tmp_path / f"v-{as_of}.json"
    r = run(src, "-o", out, "--as-of", as_of, *ARGS)
    assert r.exit_code == 0, r.output
    report = json.loads(out.read_text())
    fy = report["fiscal_years"][0]
    assert fy["fiscal_year"] == 2027
    return Decimal(fy["payments"]), json.loads(r.output)["liability"]


@pytest.mark.parametrize("as_of", ["2025-07-01", "2025-12-31", "2026-06-29", "2026-06-30"])
def test_any_census_date_of_the_fiscal_year_gives_the_raise_of_the_next_1_july(
        tmp_path, as_of):
    paid, _ = first_year(tmp_path, as_of)
    assert paid == Decimal("13200.00")


def test_the_liability_is_the_same_for_every_census_date_of_the_fiscal_year(tmp_path):
    both = (IN_PAY, A1 + ",deferred,,")
    seen = {as_of: first_year(tmp_path, as_of, both)[1]
            for as_of in ("2025-07-01", "2026-03-15", "2026-06-30")}
    assert len({json.dumps(v, sort_keys=True) for v in seen.values()}) == 1, seen


def test_a_census_dated_on_the_1_july_already_carries_its_raise(tmp_path):
    paid, _ = first_year(tmp_path, "2026-07-01")
    assert paid == Decimal("12000.00")


def test_a_pension_first_paid_on_a_1_july_takes_no_relief_cola_that_day(tmp_path):
    # born 1 July 1969: Regla 19.1(a) at 58 opens on 1 July 2027, the day of
    # the illustrative relief's first COLA (3.2 % for FY2028). The relief's
    # raise (+10 %, `who = "all"`, 1 July 2026) reaches it; the COLA of the
    # day its payments begin does not (paid its amount, raised from the next
    # 1 July), as the --cola assumption
    row = "J1,1969-07-01,1990-01-01,2010-12-31,15,30000.00,general,false,deferred,,"
    src = write(tmp_path, [row], STATUS)
    out = tmp_path / "relief.json"
    r = run(src, "-o", out, "--as-of", "2026-06-30", "--mortality", "none", "--discount", "0",
            "--measurement-date", "2026-06-30", "--rules", "relief-pc2038-illustrative",
            "--json")
    assert r.exit_code == 0, r.output
    years = {y["fiscal_year"]: Decimal(y["payments"])
             for y in json.loads(out.read_text())["fiscal_years"]}
    monthly = Decimal("562.50") + Decimal("56.25")  # 30,000 × 1.5 % × 15 / 12, then +10 %
    assert years[2028] == 12 * monthly
    assert years[2029] == 12 * (monthly * Decimal("1.025")).quantize(Decimal("0.01"))


@pytest.mark.parametrize("as_of", ["2026-06-30", "2026-03-31"])
def test_unchanged_members_under_unchanged_assumptions_give_no_experience(tmp_path, as_of):
    # last year's census and this year's hold the same members: one deferred
    # pension still to start (2030) and one in pay, this year's amount being
    # last year's raised by the one 1 July 2025 COLA between the censuses
    # (3 %: 1,000.00 then 1,030.00). Nothing happened: every experience line
    # is 0, whatever this census's date in its fiscal year (a member eligible
    # but not yet paid is another matter: expected to start, still deferred)
    from .test_valuation import A2

    options = ("--cola", "0.03", "--mortality", "none", "--discount", "0.05")
    prior = write(tmp_path, [A2 + ",deferred,,", IN_PAY], STATUS, name="prior.csv")
    now = write(tmp_path, [A2 + ",deferred,,", IN_PAY.replace(",1000.00,", ",1030.00,")],
                STATUS, name="now.csv")
    r = run(now, "-o", tmp_path / "v.json", "--as-of", as_of, *options,
            "--measurement-date", "2026-06-30", "--prior", prior, "--prior-date",
            "2025-06-30", "--json")
    assert r.exit_code == 0, r.output
    lines = {ln["line"]: Decimal(ln["amount"]) for ln in json.loads(r.output)["changes"]}
    experience = {k: v for k, v in lines.items() if k.startswith("experience_")}
    assert experience and all(v == 0 for v in experience.values()), experience
    assert sum(v for k, v in lines.items() if k != "end") == lines["end"]


@pytest.mark.parametrize("as_of", ["2026-06-30", "2026-03-31"])
def test_the_changes_line_counts_the_members_whose_row_changed(tmp_path, as_of):
    # four members in both files: three took only the year's COLA (or are
    # deferred, unchanged), one pension was corrected (1,030.00 → 1,100.00):
    # the line "changes of in-pay amounts and data" counts that one member,
    # not every survivor
    from .test_valuation import A2

    options = ("--cola", "0.03", "--mortality", "none", "--discount", "0.05")
    p2, p3 = IN_PAY.replace("P1,", "P2,"), IN_PAY.replace("P1,", "P3,")
    prior = write(tmp_path, [A2 + ",deferred,,", IN_PAY, p2, p3], STATUS, name="prior.csv")
    now = write(tmp_path, [A2 + ",deferred,,", IN_PAY.replace(",1000.00,", ",1030.00,"),
                           p2.replace(",1000.00,", ",1030.00,"),
                           p3.replace(",1000.00,", ",1100.00,")], STATUS, name="now.csv")
    out = tmp_path / "v.json"
    r = run(now, "-o", out, "--as-of", as_of, *options, "--measurement-date", "2026-06-30",
            "--prior", prior, "--prior-date", "2025-06-30", "--json")
    assert r.exit_code == 0, r.output
    report = json.loads(out.read_text())
    assert report["changes_basis"]["members"]["changed"] == 1
    lines = {ln["line"]: Decimal(ln["amount"]) for ln in report["changes"]}
    assert lines["experience_changed"] > 0


def _raised(monthly: Decimal, cola: Decimal) -> Decimal:
    from decimal import ROUND_HALF_UP
    return (monthly * (1 + cola)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


@st.composite
def unchanged_members(draw):
    """Members alike in both censuses: deferred ones not eligible before
    2028 (born 1970–1975, 10–24 years: Regla 19.1(a) at 58), so that none
    is expected to start in the year, and pensions in pay since before the
    prior census; a COLA; two census dates of the same fiscal year."""
    n = draw(st.integers(1, 5))
    rows = []
    for k in range(n):
        if draw(st.booleans()):
            y = draw(st.integers(1970, 1975))
            service = draw(st.integers(10, 24))
            rows.append(("deferred", f"D{k},{y}-0{draw(st.integers(1, 9))}-15,1995-01-01,"
                         f"{1995 + service}-01-01,{service},{draw(st.integers(20, 60))}000.00,"
                         "general,false", None))
        else:
            cents = draw(st.integers(30_000, 300_000))
            rows.append(("in_pay", f"P{k},1955-05-05,1980-01-01,2005-12-31,25,40000.00,general,"
                         "false", Decimal(cents).scaleb(-2)))
    cola = draw(st.sampled_from([Decimal(0), Decimal("0.015"), Decimal("0.03")]))
    day = st.integers(0, 364).map(lambda d: (date(2025, 7, 1) + timedelta(days=d)).isoformat())
    return rows, cola, draw(day), draw(day)


@settings(max_examples=12, derandomize=TIER != "full",
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(unchanged_members())
def test_property_unchanged_members_give_no_experience_on_any_census_date(tmp_path, case):
    # the prior census on its measurement date, this year's census on either
    # of two dates of the next fiscal year (its amounts in pay raised by the
    # one COLA of 1 July 2025): every experience line 0, and the liability
    # and every line the same for both dates
    rows, cola, day_1, day_2 = case

    def census(name, raised):
        lines = []
        for status, row, monthly in rows:
            if status == "deferred":
                lines.append(row + ",deferred,,")
            else:
                amount = _raised(monthly, cola) if raised else monthly
                lines.append(f"{row},in_pay,{amount},2012-06-01")
        return write(tmp_path, lines, STATUS, name=name)

    prior, now = census("prior.csv", False), census("now.csv", True)
    seen = []
    for as_of in (day_1, day_2):
        r = run(now, "-o", tmp_path / "v.json", "--overwrite", "--as-of", as_of,
                "--cola", str(cola), "--mortality", "none", "--discount", "0.04",
                "--measurement-date", "2026-06-30", "--prior", prior, "--prior-date",
                "2025-06-30", "--json")
        assert r.exit_code == 0, r.output
        out = json.loads(r.output)
        lines = {ln["line"]: ln["amount"] for ln in out["changes"]}
        assert all(Decimal(v) == 0 for k, v in lines.items() if k.startswith("experience_")), \
            lines
        seen.append((out["liability"], lines))
    assert seen[0] == seen[1]
