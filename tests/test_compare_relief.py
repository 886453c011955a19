"""`diferida compare` costs a relief by monthly pension band and by payer,
with headcounts (compare/bands.py, docs/compare.md "Cost by band and by
payer"): the band and payer tables add up to the fiscal-year table to the
cent, a relief equal to the base costs nothing, a raise never lowers anyone's
payment, the headcounts as counted by hand, a bad --bands refused."""

from __future__ import annotations

import re
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diferida.compare import Projecting, compare_file, table_paths
from diferida.compare.bands import BandsError, band_codes, parse_bands
from diferida.compare.bands import text as relief_text
from tests.conftest import AS_OF, run_in_process

HEADER = ("participant_id,birth_date,entry_date,separation_date,creditable_service_years,"
          "average_compensation,group,refund_requested,sex,benefit_status,monthly_in_pay,"
          "in_pay_since,employer")
# deferred members (entitled under Article 19, each its own amount), one not
# entitled (5 years of service), and the in-pay rows the tests add
DEFERRED = [
    "def-1,1970-05-10,1988-07-01,2010-06-30,22,30000.00,general,false,F,deferred,,,AG01",
    "def-2,1965-03-15,1985-01-15,2012-12-31,27.5,42000.00,general,false,M,deferred,,,MUN7",
    "def-3,1976-01-01,1998-01-01,2006-01-01,8,30000.00,general,false,M,deferred,,,AG01",
    "none-1,1980-01-01,2005-01-01,2010-01-01,5,30000.00,general,false,F,deferred,,,AG02",
]

RELIEF_HEAD = '''base = "article19"

[meta]
name = "relief-test"
title = "Prueba"
illustrative = true

[post_start]
citation = "Test relief"
bands_monthly = ["500.00", "1000.00", "2000.00"]
'''


def in_pay(pid: str, monthly: str, employer: str, birth: str = "1955-05-10",
           since: str = "2015-07-01", sex: str = "F") -> str:
    return (f"{pid},{birth},1975-07-01,2010-06-30,25,40000.00,general,false,{sex},in_pay,"
            f"{monthly},{since},{employer}")


def census(tmp_path: Path, rows: list[str], name: str = "census.csv") -> Path:
    p = tmp_path / name
    p.write_text(HEADER + "\n" + "\n".join(rows) + "\n")
    return p


def relief_file(tmp_path: Path, *blocks: str, name: str = "relief.toml") -> Path:
    p = tmp_path / name
    p.write_text(RELIEF_HEAD + "".join(blocks), encoding="utf-8")
    return p


def raise_block(rate: str, cap: str | None = None, day: str = "2027-07-01",
                who: str = "all") -> str:
    cap_line = f'cap_monthly = "{cap}"\n' if cap is not None else ""
    return (f'\n[[post_start.adjustments]]\nkind = "raise"\ndate = "{day}"\nrate = "{rate}"\n'
            f'{cap_line}who = "{who}"\ncitation = "art. 1"\n')


def floor_block(minimum: str, day: str = "2027-07-01") -> str:
    return (f'\n[[post_start.adjustments]]\nkind = "floor"\ndate = "{day}"\n'
            f'minimum_monthly = "{minimum}"\nwho = "all"\ncitation = "art. 2"\n')


def bonus_block(amount: str, below: str, day: str = "2027-12-01") -> str:
    return (f'\n[[post_start.adjustments]]\nkind = "one_time"\ndate = "{day}"\n'
            f'amount = "{amount}"\nbelow_monthly = "{below}"\ncitation = "art. 3"\n')


def run(tmp_path: Path, src: Path, rules_b: str | Path, *, bands: str | None = None,
        discount: str = "0.04", cola: str = "0", out_name: str = "cmp.csv",
        rules_a: str | Path = "article19") -> dict[str, pl.DataFrame]:
    out = tmp_path / out_name
    compare_file(src, out, [rules_a, rules_b], as_of=AS_OF, lang="en", overwrite=True,
                 projecting=Projecting(discount=discount, mortality="pub2010", cola=cola,
                                       bands=bands))
    paths = table_paths(out, bands=True, payers=True)
    return {name: pl.read_csv(p, infer_schema=False) for name, p in paths.items()
            if p.exists()}


def money(frame: pl.DataFrame, col: str) -> list[Decimal]:
    return [Decimal(v) for v in frame[col].to_list()]


def value_columns(frame: pl.DataFrame) -> list[str]:
    return [c for c in frame.columns if c.startswith(("payments_", "pv_"))]


def assert_sums(tables: dict[str, pl.DataFrame]) -> None:
    """Each fiscal year's band rows (and payer rows) add up to the fiscal-year
    table's row to the cent, for A, B and B - A; TOTAL too."""
    fiscal = tables["fiscal_years"]
    for name, key in (("bands", "band"), ("payers", "employer")):
        if name not in tables:
            continue
        t = tables[name]
        cols = value_columns(t)
        for row in fiscal.iter_rows(named=True):
            part = t.filter(pl.col("fiscal_year") == row["fiscal_year"])
            assert part.height == t[key].n_unique(), (name, row["fiscal_year"])
            for c in cols:
                assert sum(money(part, c), Decimal(0)) == Decimal(row[c]), (name, c,
                                                                           row["fiscal_year"])
        # a key's TOTAL is the sum of its years
        for k in t[key].unique().to_list():
            rows = t.filter(pl.col(key) == k)
            body, total = rows.filter(pl.col("fiscal_year") != "TOTAL"), \
                rows.filter(pl.col("fiscal_year") == "TOTAL")
            for c in cols:
                assert sum(money(body, c), Decimal(0)) == money(total, c)[0]


ROWS = [*DEFERRED,
        in_pay("pay-400", "400.00", "AG01"),
        in_pay("pay-950", "950.00", "MUN7", sex="M"),
        in_pay("pay-1000", "1000.00", "AG01"),
        in_pay("pay-2500", "2500.00", "AG02", birth="1950-01-15", since="2012-07-01")]


# ---- a relief equal to the base costs nothing ---------------------------------


@pytest.mark.parametrize("which", ["raise_of_zero", "base_twice"])
def test_relief_equal_to_base_every_difference_zero(tmp_path, which):
    src = census(tmp_path, ROWS)
    rules_b = relief_file(tmp_path, raise_block("0")) if which == "raise_of_zero" \
        else "article19"
    tables = run(tmp_path, src, rules_b, bands="500,1000,2000")
    assert {"bands", "band_counts", "payers", "payer_counts"} <= set(tables)
    for name in ("bands", "payers", "fiscal_years"):
        for c in tables[name].columns:
            if c.endswith("_difference"):
                assert set(money(tables[name], c)) == {Decimal(0)}, (name, c)
    for name in ("band_counts", "payer_counts"):
        t = tables[name]
        assert set(t["gain"].cast(pl.Int64).to_list()) == {0}
        assert set(t["lose"].cast(pl.Int64).to_list()) == {0}
        assert set(money(t, "average_monthly_gain")) == {Decimal(0)}
        assert t["under_threshold_a"].to_list() == t["under_threshold_b"].to_list()
    assert_sums(tables)


# ---- headcounts by hand --------------------------------------------------------


def test_headcounts_by_hand(tmp_path):
    """+10%, at most $100, from 1 July 2027 to all, no COLA assumption: the
    amounts read on 1 July 2027 (the relief's date, after the valuation
    date); for the deferred, at their first payment. In pay: 400 -> 440
    (+40), 950 -> 1,045 (+95), 1,000 -> 1,100 (+100), 2,500 -> 2,600 (+100,
    the cap). Bands by A's amount: under $500: 400; $500-$999.99: 950;
    $1,000-$1,999.99: 1,000; $2,000 and more: 2,500."""
    src = census(tmp_path, ROWS)
    rules_b = relief_file(tmp_path, raise_block("0.10", "100.00"))
    tables = run(tmp_path, src, rules_b)
    counts = tables["band_counts"]
    by_band = {r["band"]: r for r in counts.iter_rows(named=True)}
    codes = band_codes([50000, 100000, 200000])
    assert list(by_band) == [*codes[:-1], "TOTAL"]  # nobody without a pension under A
    # the deferred members' amounts under Article 19 (as of AS_OF)
    from diferida.core import evaluate_pair

    frame = pl.read_csv(src, infer_schema=False).filter(
        pl.col("benefit_status") == "deferred")
    det, _ = evaluate_pair(frame.drop("sex", "benefit_status", "monthly_in_pay",
                                      "in_pay_since", "employer"),
                           as_of=AS_OF, rules_a="article19", rules_b="article19", lang="en")
    det = det.determinations
    entitled = det.filter(pl.col("status") != "not_entitled")
    deferred_monthly = dict(zip(entitled["participant_id"].to_list(),
                                entitled["monthly_amount"].to_list(), strict=True))
    assert set(deferred_monthly) == {"def-1", "def-2"}  # def-3, none-1: 8 and 5 years

    def band(m: Decimal) -> str:
        return codes[sum(m >= Decimal(x) for x in (500, 1000, 2000))]

    def gain(m: Decimal) -> Decimal:
        return min((m * Decimal("0.10")).quantize(Decimal("0.01"), ROUND_HALF_UP),
                   Decimal(100))

    expect: dict[str, dict[str, object]] = {
        c: {"members": 0, "in_pay": 0, "deferred": 0, "gain": 0, "sum": Decimal(0),
            "under_a": 0, "under_b": 0} for c in codes[:-1]}
    people = [(Decimal(x), True) for x in ("400", "950", "1000", "2500")] + \
        [(Decimal(str(m)), False) for m in deferred_monthly.values()]
    for m, paid in people:
        e = expect[band(m)]
        e["members"] += 1
        e["in_pay" if paid else "deferred"] += 1
        e["gain"] += 1
        e["sum"] += gain(m)
        e["under_a"] += m < 1000
        e["under_b"] += m + gain(m) < 1000
    for c, e in expect.items():
        r = by_band[c]
        assert int(r["members"]) == e["members"], c
        assert int(r["in_pay"]) == e["in_pay"], c
        assert int(r["deferred"]) == e["deferred"], c
        assert int(r["gain"]) == e["gain"], c
        assert int(r["lose"]) == 0
        avg = (e["sum"] / e["gain"]).quantize(Decimal("0.01"), ROUND_HALF_UP) \
            if e["gain"] else Decimal(0)
        assert Decimal(r["average_monthly_gain"]) == avg, c
        assert int(r["under_threshold_a"]) == e["under_a"], c
        assert int(r["under_threshold_b"]) == e["under_b"], c
    # the in-pay members by hand: 400 and 950 under $1,000 under A, only 440 under B
    assert int(by_band[codes[0]]["under_threshold_b"]) >= 1
    total = by_band["TOTAL"]
    assert int(total["members"]) == 6 and int(total["in_pay"]) == 4
    assert int(total["gain"]) == 6
    # by payer: AG01 has pay-400, pay-1000, def-1; MUN7 pay-950, def-2; AG02
    # pay-2500 (def-3 and none-1 are not entitled: no pension on either side)
    payers = {r["employer"]: r for r in tables["payer_counts"].iter_rows(named=True)}
    assert {k: int(v["members"]) for k, v in payers.items()} == {
        "AG01": 3, "AG02": 1, "MUN7": 2, "TOTAL": 6}
    assert Decimal(payers["AG02"]["average_monthly_gain"]) == Decimal("100.00")
    assert int(payers["AG01"]["under_threshold_a"]) == 1 + (deferred_monthly["def-1"] < 1000)
    assert_sums(tables)


def test_member_without_a_pension_under_a_is_a_band_of_its_own(tmp_path):
    """A reform that entitles a member A does not: the member is counted in
    `no_pension_a` (A's amount is 0), gains, and the tables still add up."""
    src = census(tmp_path, [*ROWS[:4], in_pay("pay-1", "700.00", "AG01")])
    # Article 19 with a strict reading vs the base: use the age-67 reform the
    # other way round: B = article19, A = the reform that moves some out
    tables = run(tmp_path, src, "article19", rules_a="reform-19_2-age-67", bands="800")
    assert_sums(tables)
    assert "TOTAL" in tables["band_counts"]["band"].to_list()


# ---- property: the tables add up; a raise never lowers a payment ---------------


AMOUNTS = st.integers(min_value=1, max_value=600_000).map(lambda c: f"{c // 100}.{c % 100:02d}")
PAYERS = st.sampled_from(["AG01", "AG02", "MUN7", "CORP3"])


@st.composite
def censuses(draw) -> list[str]:
    rows = [r.rsplit(",", 1)[0] + "," + draw(PAYERS) for r in
            draw(st.lists(st.sampled_from(DEFERRED), max_size=4, unique=True))]
    n = draw(st.integers(min_value=1, max_value=6))
    for i in range(n):
        year = draw(st.integers(min_value=1940, max_value=1966))
        since = draw(st.sampled_from(["2005-07-01", "2015-01-01", "2026-06-01"]))
        rows.append(in_pay(f"pay-{i}", draw(AMOUNTS), draw(PAYERS), birth=f"{year}-03-10",
                           since=since, sex=draw(st.sampled_from(["F", "M"]))))
    return rows


@st.composite
def reliefs(draw) -> list[str]:
    rate = draw(st.sampled_from(["0", "0.01", "0.05", "0.10", "0.333333"]))
    cap = draw(st.sampled_from([None, "0.00", "25.00", "300.00"]))
    blocks = [raise_block(rate, cap, day=draw(st.sampled_from(["2027-07-01",
                                                                "2026-07-01"])))]
    if draw(st.booleans()):
        blocks.append(floor_block(draw(st.sampled_from(["500.00", "1000.00"])),
                                  day="2028-07-01"))
    if draw(st.booleans()):
        blocks.append(bonus_block(draw(st.sampled_from(["100.00", "1000.00"])),
                                  draw(st.sampled_from(["1000.00", "1500.00"]))))
    return blocks


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(rows=censuses(), blocks=reliefs(),
       bands=st.sampled_from(["500,1000,2000", "1000", "250.50,999.99,1000,4000"]),
       cola=st.sampled_from(["0", "0.015"]), discount=st.sampled_from(["0.04", "0.03,0.07"]))
def test_tables_add_up_and_a_raise_never_lowers_a_payment(tmp_path, rows, blocks, bands,
                                                           cola, discount):
    src = census(tmp_path, rows)
    rules_b = relief_file(tmp_path, *blocks)
    tables = run(tmp_path, src, rules_b, bands=bands, cola=cola, discount=discount)
    assert_sums(tables)
    # a raise, a floor and a bonus never lower a payment: nobody loses, no
    # band, payer or year costs less under B
    for name in ("band_counts", "payer_counts"):
        assert set(tables[name]["lose"].cast(pl.Int64).to_list()) == {0}
    for name in ("bands", "payers"):
        for c in value_columns(tables[name]):
            if c.endswith("_difference"):
                assert min(money(tables[name], c)) >= 0, (name, c)
    counts = tables["band_counts"]
    total = counts.filter(pl.col("band") == "TOTAL").row(0, named=True)
    body = counts.filter(pl.col("band") != "TOTAL")
    for c in ("members", "in_pay", "deferred", "gain", "under_threshold_a", "under_threshold_b"):
        assert sum(int(v) for v in body[c].to_list()) == int(total[c])
    # B's amounts are A's or more: fewer (or as many) under $1,000
    assert int(total["under_threshold_b"]) <= int(total["under_threshold_a"])


# ---- --bands -----------------------------------------------------------------------


@pytest.mark.parametrize("value, named", [
    ("500,abc,0,400", ["value 2, \"abc\"", "value 3, \"0\"", "value 4, \"400\""]),
    ("1000,500", ["value 2, \"500\""]),
    ("500,,1000", ["value 2 is empty"]),
    ("500.001", ["value 1, \"500.001\""]),
    ("-5", ["value 1, \"-5\""]),
    ("1000000", ["value 1, \"1000000\""]),
])
def test_bad_bands_refused_each_value_named(tmp_path, value, named):
    with pytest.raises(BandsError) as e:
        parse_bands(value, "en")
    for n in named:
        assert n in str(e.value)
    src = census(tmp_path, ROWS)
    out = tmp_path / "cmp.csv"
    r = run_in_process("compare", str(src), "--rules", "article19", "--rules", "article19",
                       "-o", str(out), "--as-of", AS_OF.isoformat(), "--discount", "0.04",
                       "--mortality", "pub2010", "--bands", value, "--lang", "en")
    assert r.returncode == 2, r.stderr
    assert "--bands" in r.stderr and named[0] in r.stderr
    assert list(tmp_path.iterdir()) == [src]  # nothing written


def test_bad_bands_in_spanish(tmp_path):
    with pytest.raises(BandsError) as e:
        parse_bands("1000,500", "es")
    assert "el valor 2, «500», tiene que ser mayor que el valor anterior (1,000.00)" \
        in str(e.value)


def test_bands_without_the_projection_refused(tmp_path):
    src = census(tmp_path, ROWS)
    r = run_in_process("compare", str(src), "--rules", "article19", "--rules", "article19",
                       "-o", str(tmp_path / "cmp.csv"), "--as-of", AS_OF.isoformat(),
                       "--bands", "500")
    assert r.returncode == 2 and "--bands" in r.stderr
    assert list(tmp_path.iterdir()) == [src]


def test_no_band_tables_without_a_relief_or_bands(tmp_path):
    """Two rules sets without a relief and no --bands: the comparison's
    outputs as before (no band or payer table, the employer column not read)."""
    src = census(tmp_path, ROWS)
    tables = run(tmp_path, src, "reform-19_2-age-67")
    assert "bands" not in tables and "payers" not in tables


def test_no_payer_tables_without_an_employer_column(tmp_path):
    rows = [",".join(r.split(",")[:-1]) for r in ROWS]
    p = tmp_path / "census.csv"
    p.write_text(HEADER.rsplit(",", 1)[0] + "\n" + "\n".join(rows) + "\n")
    tables = run(tmp_path, p, relief_file(tmp_path, raise_block("0.05")))
    assert "bands" in tables and "payers" not in tables
    assert_sums(tables)


def test_json_summary_keys(tmp_path):
    src = census(tmp_path, ROWS)
    rules_b = relief_file(tmp_path, raise_block("0.10", "100.00"))
    r = run_in_process("compare", str(src), "--rules", "article19", "--rules", str(rules_b),
                       "-o", str(tmp_path / "cmp.csv"), "--as-of", AS_OF.isoformat(),
                       "--discount", "0.04", "--mortality", "pub2010", "--json", "--quiet")
    assert r.returncode == 0, r.stderr
    import json

    d = json.loads(r.stdout)
    assert d["relief_reference_date"] == date(2027, 7, 1).isoformat()
    assert d["relief_members"] == 6 and d["relief_gain"] == 6 and d["relief_lose"] == 0
    assert d["relief_under_threshold_a"] >= d["relief_under_threshold_b"]
    assert Decimal(d["relief_average_monthly_gain"]) > 0
    assert any(f.endswith("cmp.bands.csv") for f in d["files"])
    assert any(f.endswith("cmp.payer_counts.csv") for f in d["files"])


# ---- the workbook and the HTML report, in words ----------------------------------


@pytest.mark.parametrize("lang", ["es", "en"])
def test_workbook_sheets_and_report_section_in_words(tmp_path, lang):
    from diferida.i18n import catalog

    from .print_helpers import sheet_names

    src = census(tmp_path, ROWS)
    rules_b = relief_file(tmp_path, raise_block("0.10", "100.00"))
    book, page = tmp_path / "c.xlsx", tmp_path / "c.html"
    compare_file(src, book, ["article19", rules_b], as_of=AS_OF, lang=lang, html=page,
                 projecting=Projecting(discount="0.04", mortality="pub2010"))
    m = relief_text(lang)  # the catalog, its reporting threshold written in
    names = sheet_names(book)
    for key in ("band_counts", "bands", "payer_counts", "payers"):
        assert m["sheets"][key] in names
    counts = pl.read_excel(book, sheet_name=m["sheets"]["band_counts"])
    under = {"es": "Menos de $500.00", "en": "Under $500.00"}[lang]
    assert counts[m["columns"]["band"]].to_list()[0] == under
    assert counts[m["columns"]["under_threshold_a"]].to_list()[-1] == 3  # 400, 950 and def-1
    total = catalog(lang)["compare_report"]["total"]
    payers = pl.read_excel(book, sheet_name=m["sheets"]["payer_counts"])
    assert payers[m["columns"]["employer"]].to_list() == ["AG01", "AG02", "MUN7", total]
    cost = pl.read_excel(book, sheet_name=m["sheets"]["bands"])
    assert cost.height == pl.read_csv(
        run(tmp_path, src, rules_b, out_name="same.csv")["bands"].write_csv().encode()).height
    text = page.read_text("utf-8")
    assert m["headings"]["relief"] in text
    lead = {"es": "De 6 miembros, 6 reciben más según B; al 1 de julio de 2027, quienes "
                  "reciben más cobran en promedio",
            "en": "Of 6 members, 6 receive more under B; on July 1, 2027, those who gain are "
                  "paid on average"}[lang]
    assert lead in text
    under_text = {"es": "3 miembros cobran menos de $1,000 mensuales según A y 2 según B",
                  "en": "3 members are paid under $1,000 a month under A and 2 under B"}[lang]
    assert under_text in text
    assert under in text and "AG01" in text


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["es", "en"])
def test_band_and_payer_sheets_print_readably(tmp_path, lang):
    """LibreOffice prints the four sheets with nothing over anything else,
    text of 8 points or more, the header on every page and the fiscal year
    and the band (payer) at the left of every page of the cost."""
    import statistics

    from diferida.i18n import catalog

    from .print_helpers import PDFTOTEXT, SOFFICE, pdf_words, to_pdf
    from .test_compare_print import BOX_PER_POINT, READABLE_POINTS, overprinted

    if SOFFICE is None or PDFTOTEXT is None:
        pytest.skip("LibreOffice (soffice) and pdftotext are needed to print workbooks")
    src = census(tmp_path, ROWS)
    rules_b = relief_file(tmp_path, raise_block("0.10", "100.00"))
    book = tmp_path / "c.xlsx"
    compare_file(src, book, ["article19", rules_b], as_of=AS_OF, lang=lang,
                 projecting=Projecting(discount="0.04,0.06", mortality="pub2010"))
    pages = to_pdf(book)
    boxes = pdf_words(book)
    m = relief_text(lang)  # the catalog, its reporting threshold written in
    under = {"es": "Menos de $500.00", "en": "Under $500.00"}[lang]
    counted = m["columns"]["average_monthly_gain"].split()[0]  # the headcounts' header
    # the last sheet (the files' column names: under_threshold_a, ...) left out,
    # and the summary and assumptions (item, value)
    item = catalog(lang)["workbook"]["item"]
    sheets = [(i, p) for i, p in enumerate(pages) if "under_threshold_a" not in p
              and not p.split("\n", 3)[-1].lstrip().startswith(item)]
    counts_pages = [i for i, p in sheets if counted in p]
    cost_pages = [i for i, p in sheets if under in p and counted not in p]
    payer_pages = [i for i, p in sheets if "MUN7" in p and counted not in p]
    assert len(counts_pages) == 2  # by band, by payer: a page each
    # the cost: payments and each present value in blocks across, the year
    # and the band (payer) repeated at the left of every page
    assert len(cost_pages) > 2 and len(payer_pages) > 2
    for i in [*counts_pages, *cost_pages, *payer_pages]:
        assert overprinted(boxes[i]) == [], (i + 1, overprinted(boxes[i])[:5])
        size = statistics.median(y1 - y0 for _, y0, _, y1, _ in boxes[i]) / BOX_PER_POINT
        assert size >= READABLE_POINTS, (i + 1, size)
        assert "AG01" in pages[i] or under in pages[i]



def test_nobody_with_a_pension_writes_empty_tables(tmp_path):
    """A census where nobody is entitled on either side: the tables are
    written, every count 0 (it crashed on an empty list of payers)."""
    src = census(tmp_path, [DEFERRED[2], DEFERRED[3]])
    rules_b = relief_file(tmp_path, raise_block("0.10", "100.00"))
    compare_file(src, tmp_path / "c.xlsx", ["article19", rules_b], as_of=AS_OF, lang="es",
                 html=tmp_path / "c.html",
                 projecting=Projecting(discount="0.04", mortality="pub2010"))
    tables = run(tmp_path, src, rules_b)
    total = tables["band_counts"].filter(pl.col("band") == "TOTAL").row(0, named=True)
    assert int(total["members"]) == 0 and int(total["gain"]) == 0
    assert tables["payers"].height == 0 and tables["payer_counts"]["employer"].to_list() == [
        "TOTAL"]


def test_with_claim_rates_a_valuation_date_and_the_sensitivity(tmp_path):
    """The valuation basis in full (claim rates: a member several entries of
    the engine, each in its member's band; a valuation date after --as-of;
    a COLA; the sensitivity grid): the tables still add up to the cent."""
    src = census(tmp_path, ROWS)
    claims = tmp_path / "claims.csv"
    claims.write_text("years_since_eligibility,rate\n0,0.4\n1,0.5\n2,1\n")
    rules_b = relief_file(tmp_path, raise_block("0.10", "100.00"),
                          bonus_block("500.00", "1000.00"))
    out = tmp_path / "c.csv"
    compare_file(src, out, ["article19", rules_b], as_of=AS_OF, lang="en",
                 projecting=Projecting(discount="0.04,0.06", mortality="pub2010", cola="0.02",
                                       claim_rates=claims,
                                       valuation_date=date(2027, 6, 30), sensitivity=True))
    tables = {name: pl.read_csv(p, infer_schema=False)
              for name, p in table_paths(out, sensitivity=True, bands=True,
                                         payers=True).items()}
    assert_sums(tables)
    assert set(tables["band_counts"]["lose"].cast(pl.Int64).to_list()) == {0}


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_report_section_has_no_raw_code_and_is_well_formed(tmp_path, lang, monkeypatch):
    """The HTML section is for readers: no column identifier, band code,
    TOTAL or ISO date in its visible text; every table with a caption and
    headers with scope; the page well formed."""
    from tests import test_web_htmlcheck as htmlcheck
    from tests.test_compare_report import svg_of, visible

    src = census(tmp_path, [*ROWS[:4], in_pay("pay-1", "700.00", "AG01")])
    rules_b = relief_file(tmp_path, raise_block("0.10", "100.00"))
    page = tmp_path / "c.html"
    # A: a reform that entitles fewer, so that the no-pension-under-A band shows
    compare_file(src, tmp_path / "c.csv", ["reform-19_2-age-67", rules_b], as_of=AS_OF,
                 lang=lang, html=page, overwrite=True,
                 projecting=Projecting(discount="0.04", mortality="pub2010", bands="800"))
    html = page.read_text("utf-8")
    section = html[html.index("<h2>", html.index(
        {"es": "Costo por banda", "en": "Cost by monthly"}[lang]) - 10):]
    section = section[:section.index("<h2>", 5)]
    v = visible(section)
    assert v.tables == 6 and v.captions == v.tables
    assert all(a.get("scope") in ("col", "row") for a in v.th)
    tables = {name: pl.read_csv(p, infer_schema=False) for name, p in
              table_paths(tmp_path / "c.csv", bands=True, payers=True).items()}
    # (the one-word ones, "members", "band", are English words too)
    identifiers = {c for name in ("bands", "band_counts", "payers", "payer_counts")
                   for c in tables[name].columns if "_" in c}
    assert {"under_threshold_a", "average_monthly_gain", "pv_0.04_difference"} <= identifiers
    raw = [i for i in identifiers if re.search(rf"(?<![\w.]){re.escape(i)}(?![\w])", v.text)]
    assert not raw, raw
    for code in ("TOTAL", "no_pension_a", "0.00-799.99", "800.00+"):
        assert code not in v.text, code
    assert not re.findall(r"\b\d{4}-\d{2}-\d{2}\b", v.text)
    monkeypatch.setattr(htmlcheck, "KNOWN", htmlcheck.KNOWN | {"style", "figure",
                                                                "figcaption", "h3"})
    assert htmlcheck.problems(html.replace(svg_of(html), "")) == []


# ---- the bands by default: the relief's rules file's ------------------------------

def _relief_without_bands(tmp_path: Path, *blocks: str) -> Path:
    head = RELIEF_HEAD.replace('bands_monthly = ["500.00", "1000.00", "2000.00"]\n', "")
    p = tmp_path / "plain.toml"
    p.write_text(head + "".join(blocks), encoding="utf-8")
    return p


def test_without_bands_the_relief_s_rules_file_gives_them(tmp_path):
    """No --bands: the bands the relief's file names (bands_monthly), else the
    limits of the amounts its adjustments reach, else one band of every
    amount; B's relief before A's, none without a relief."""
    from diferida.compare.bands import rules_bands
    from diferida.rules import load_rules

    base = load_rules("article19")
    named = load_rules(relief_file(tmp_path, raise_block("0.10", "100.00"), name="n.toml"))
    assert rules_bands(base, named) == [50000, 100000, 200000]
    limited = load_rules(_relief_without_bands(tmp_path, bonus_block("500.00", "1000.00")))
    assert rules_bands(base, limited) == [100000]
    assert rules_bands(limited, named) == [50000, 100000, 200000]  # B's first
    assert rules_bands(limited, base) == [100000]  # A's when B has none
    plain = load_rules(_relief_without_bands(tmp_path, raise_block("0.10", "100.00")))
    assert rules_bands(base, plain) == [] and band_codes([]) == ["0.00+", "no_pension_a"]
    assert rules_bands(base, base) == []
    for shipped in ("relief-pc2038-illustrative", "relief-bonus-1000-illustrative"):
        assert rules_bands(base, load_rules(shipped)) == [50000, 100000, 200000]


def test_a_relief_with_one_band_reports_every_member_in_it(tmp_path):
    """A raise reaching every amount, its file naming no bands: one band, the
    members and the cost all in it, adding up to the fiscal-year table."""
    src = census(tmp_path, ROWS)
    tables = run(tmp_path, src, _relief_without_bands(tmp_path, raise_block("0.10", "100.00")))
    counts = tables["band_counts"]
    assert counts["band"].to_list() == ["0.00+", "TOTAL"]
    assert counts["members"].to_list() == ["6", "6"]  # every member, in the one band
    cost = tables["bands"].filter(pl.col("band") == "0.00+")
    fiscal = tables["fiscal_years"].select("fiscal_year", "payments_a", "payments_b")
    assert cost.select("fiscal_year", "payments_a", "payments_b").equals(
        fiscal.filter(pl.col("fiscal_year").is_in(cost["fiscal_year"].to_list())))
    assert cost.height == fiscal.height  # each fiscal year and the TOTAL


@pytest.mark.parametrize("bands, said", [('["1000.00", "500.00"]', "bands_monthly"),
                                         ('["0.00"]', "bands_monthly")])
def test_bands_of_a_rules_file_out_of_order_are_refused_naming_the_key(tmp_path, bands, said):
    from diferida.rules import RulesError, load_rules

    p = tmp_path / "bad.toml"
    p.write_text(RELIEF_HEAD.replace('["500.00", "1000.00", "2000.00"]', bands)
                 + raise_block("0.10"), encoding="utf-8")
    with pytest.raises(RulesError, match=said):
        load_rules(p)
