"""Workbooks a budget office prints and reports it reads: the page set-up of
every sheet (landscape, one page wide, the header row repeated), numbers
stored as numbers, the chart whole on a page of its own (LibreOffice
converts each workbook to PDF: `slow`), the HTML charts' axes in round
units, and wide tables that scroll inside the page (a real browser)."""

from __future__ import annotations

import re
import zipfile
from datetime import date

import pytest
from bench.generate import population

from diferida.census import census_file
from diferida.compare import Projecting, compare_file
from diferida.projection import project_file

from .conftest import need_part
from .print_helpers import (
    PDFTOTEXT,
    SOFFICE,
    cells,
    numbers_as_text,
    page_setup,
    pdf_words,
    sheet_names,
    to_pdf,
)

AS_OF = date(2026, 11, 29)
AGE67 = "reform-19_2-age-67"
# the pages LibreOffice prints for the 600 members of `members` (seed 5): a change
# of layout that moves them is seen here
# the tables in words, the sheet naming the files' columns, and the fiscal years
# printed at 80 % in blocks of whole measures, two pages across (tests/test_compare_print.py)
COMPARE_PAGES = 15
CENSUS_PAGES = 12  # each listing of members: its header and first 30 rows, on one page


@pytest.fixture(scope="module")
def members(tmp_path_factory):
    path = tmp_path_factory.mktemp("print") / "members.csv"
    population(600, seed=5).write_csv(path)
    return path


@pytest.fixture(scope="module")
def books(members, tmp_path_factory):
    """The workbooks, each in a folder of its own, in English; `valuation`:
    a projection with the breakdown and the sensitivity grid."""
    base = tmp_path_factory.mktemp("books")
    out = {}
    for name in ("project", "compare", "census", "valuation"):
        (base / name).mkdir()
        out[name] = base / name / f"{name}.xlsx"
    project_file(members, out["project"], discount="0.04,0.0625", mortality="none",
                 as_of=AS_OF, lang="en")
    compare_file(members, out["compare"], ["article19", AGE67], as_of=AS_OF, lang="en",
                 projecting=Projecting(discount="0.04", mortality="none"))
    census_file(members, out["census"], as_of=AS_OF, lang="en")
    project_file(members, out["valuation"], discount="0.04,0.0625", mortality="none",
                 cola="0.015", by="group,regime,age_band,eligible_now", sensitivity=True,
                 valuation_date=date(2026, 6, 30), as_of=AS_OF, lang="en")
    return out


def _defined_names(path) -> str:
    with zipfile.ZipFile(path) as z:
        return z.read("xl/workbook.xml").decode()


@pytest.mark.parametrize("name", ["project", "compare", "census", "valuation"])
def test_every_sheet_prints_landscape_one_page_wide(books, name):
    path = books[name]
    names = _defined_names(path)
    for sheet in sheet_names(path):
        setup = page_setup(path, sheet)
        assert setup["orientation"] == "landscape", sheet
        if name == "compare" and setup["fitToPage"] == "0":
            # a wide table of the comparison: at a readable scale, in blocks of columns
            assert int(setup["scale"]) >= 80, sheet
            assert setup["paperSize"] == "1", sheet
            continue
        assert setup["fitToPage"] == "1", sheet
        assert setup.get("fitToWidth", "1") == "1", sheet
        assert setup["paperSize"] == "1", sheet  # US Letter
    # the header row of each table sheet is repeated on every page
    assert "_xlnm.Print_Titles" in names


@pytest.mark.parametrize("mortality", ["none", pytest.param("pub2010", marks=pytest.mark.slow)])
def test_every_recorded_assumption_is_stated_in_words(members, tmp_path, mortality):
    from diferida.projection.statement import statement, unstated

    s = project_file(members, tmp_path / "f.csv", discount="0.04", mortality=mortality,
                     horizon=40, cola="0.015", as_of=AS_OF, lang="es")
    assert unstated(s.assumptions) == []  # no key left for a reader to decode
    rows = dict(statement(s.assumptions, "es"))
    assert rows["Miembros proyectados"] == s.projected  # a count, stored as a number
    assert rows["Fecha de valoración"] == AS_OF
    assert "1.5%" in rows["Ajuste por costo de vida"]
    assert rows["Horizonte"] == "40 años fiscales: el último pago es el de junio de 2066."


def test_the_html_axes_read_in_round_units():
    import matplotlib

    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure

    from diferida.axes import round_axis

    for values, unit in (([0, -250_000, -980_000, -40_000], "thousands"),
                         ([0, -1_250_000, -3_000, 120_000], "millions"),
                         ([6_500_000, 7_100_000, 12_000], "millions"),
                         ([0.0, 0.0], ""), ([3, -7, 12], "")):
        fig = Figure()
        ax = fig.add_subplot()
        ax.bar(range(len(values)), values)
        assert round_axis(ax, values) == unit
        fig.canvas.draw()
        labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
        assert len(labels) == len(set(labels)) >= 2, labels  # no two ticks read alike
        assert "−0" not in labels and "-0" not in labels, labels
        for text in labels:
            assert re.fullmatch(r"−?[0-9][0-9,]*(\.[0-9]+)?", text), labels
        # the steps are 1, 2, 2.5 or 5 times a power of ten
        ticks = [float(t.replace("−", "-").replace(",", "")) for t in labels]
        step = ticks[1] - ticks[0]
        mantissa = step / 10 ** __import__("math").floor(__import__("math").log10(step))
        assert min(abs(mantissa - m) for m in (1, 2, 2.5, 5, 10)) < 1e-6, labels


# ---- LibreOffice: each workbook converted to PDF -------------------------------------

def _need_office() -> None:
    need_part(SOFFICE is not None, "LibreOffice (soffice)",
              "install Debian's package: apt-get install libreoffice-calc-nogui")
    need_part(PDFTOTEXT is not None, "pdftotext",
              "install Debian's package: apt-get install poppler-utils")


def _pages_with(pages: list[str], text: str) -> list[int]:
    return [i for i, p in enumerate(pages) if text in p]


@pytest.mark.slow
def test_the_projection_workbook_prints_with_its_chart_whole_on_one_page(books):
    _need_office()
    pages = to_pdf(books["project"])
    # the table (1 July 2026 .. age 120 of the youngest: about 80 fiscal years) on two
    # pages, the chart on one, the assumptions on two (each wrapped row as tall as
    # its lines)
    assert len(pages) == 5, [p[:200] for p in pages]
    title = "Expected deferred pension payments by fiscal year"
    chart = _pages_with(pages, title)
    assert len(chart) == 1
    page = pages[chart[0]]
    assert "fiscal year" in page and "payments (USD)" in page
    assert "FY2027 is a partial year" in page
    assert "pv_0.04" not in page  # nothing of the table on the chart's page
    for p in pages:  # the title, valuation date and rules set on every page
        assert "Deferred pensions: expected payments by fiscal year" in p
        assert "Valuation date: November 29, 2026" in p and "article19" in p
    # the header row on every page of the table, every column on the page
    table = _pages_with(pages, "fiscal_year")
    assert len(table) == 2
    for i in table:
        assert "pv_0.0625" in pages[i] and "period" in pages[i]
    assert "Method" in pages[-2] and "Discount rates" in pages[-2]
    assert "Expected payments in total" in pages[-1]


def test_the_valuation_sheets_are_tables_laid_out_like_the_others(books):
    path = books["valuation"]
    assert sheet_names(path)[-2:] == ["by", "sensitivity"]
    names = _defined_names(path)
    for sheet in ("by", "sensitivity"):
        assert f"'{sheet}'!$1:$1" in names or f"{sheet}!$1:$1" in names, names  # header
    assert numbers_as_text(path) == []  # every number stored as a number
    by = cells(path, "by")
    assert by["A1"] == ("s", "group") and by["E1"] == ("s", "members")
    assert by["E2"][0] == "n" and by["F2"][0] == "n"  # a count and an amount, numbers
    grid = cells(path, "sensitivity")
    assert grid["A1"] == ("s", "scenario")
    assert [grid[f"A{r}"][1] for r in range(2, 6)] == [
        "base", "discount -1 point", "discount +1 point", "COLA 0"]
    assert grid["B3"] == ("n", "-0.01") and grid["E5"] == ("n", "0")  # shift, COLA


@pytest.mark.slow
def test_the_valuation_sheets_print_one_page_wide_with_their_header(books):
    _need_office()
    pages = to_pdf(books["valuation"])
    by = _pages_with(pages, "eligible_now")
    grid = _pages_with(pages, "discount -1 point")
    assert by and grid and not set(by) & set(grid)
    for i in by:  # every column on each page, the header repeated, the title
        assert "members" in pages[i] and "pv_0.0625" in pages[i]
        assert "Deferred pensions: expected payments by fiscal year" in pages[i]
    assert "TOTAL" in pages[by[-1]]
    page = pages[grid[0]]
    assert "-1.00%" in page and "1.50%" in page and "pv_0.0625" in page
    assert "Valuation date: June 30, 2026" in page


@pytest.mark.slow
def test_the_compare_workbook_prints_with_its_chart_whole_on_one_page(books):
    _need_office()
    pages = to_pdf(books["compare"])
    title = "Expected deferred pension payments by fiscal year"
    chart = _pages_with(pages, title)
    assert len(chart) == 1
    assert "payments_a" not in pages[chart[0]]
    summary = _pages_with(pages, "Members whose determination changes")
    assert len(summary) == 1
    sheets = sheet_names(books["compare"])
    assert sheets[-3:] == ["Chart", "Assumptions", "Columns of the files"]
    assert len(pages) == COMPARE_PAGES


@pytest.mark.slow
def test_the_census_workbook_prints_each_chart_whole(books):
    _need_office()
    pages = to_pdf(books["census"])
    for title in ("Age on the census date (completed years)", "Years of creditable service",
                  "Average annual compensation (USD)", "Group", "Regime",
                  "Years since eligibility (members eligible now)"):
        # each chart's title on one page of the charts sheet, beside its bars' axis
        hits = [i for i, p in enumerate(pages) if title in p and "members" in p
                and "share" not in p]
        assert len(hits) == 1, title
    assert len(pages) == CENSUS_PAGES
    assert "Older than 100 on the census date" in pages[-1]  # the thresholds, last


# ---- the valuation workbook as printed: nothing overprints, nothing runs together ----

# a figure as a cell prints it: 1,234.50, 1.50%, ×0.99
FIGURE = re.compile(r"^[×−-]?[0-9][0-9,]*\.[0-9]{2}%?$")
# the table (2; in Spanish 3: its narrower periods print less reduced), the chart,
# the assumptions (2), by (2), sensitivity
VALUATION_PAGES = {"en": 8, "es": 9}


@pytest.fixture(scope="module", params=["en", "es"])
def valuation_pub(members, tmp_path_factory, request):
    """A valuation with the SOA tables and their improvement scale, a
    mortality scale of 1.1 (the sensitivity's x0.9 is a factor 0.99), the
    breakdown and the grid, from a 30 June valuation date; (workbook, lang)."""
    pytest.importorskip("pymort")
    out = tmp_path_factory.mktemp(f"valuation_pub_{request.param}") / "valuation.xlsx"
    project_file(members, out, discount="0.04,0.0625", mortality="pub2010",
                 mortality_scale="1.1", cola="0.015", by="group,regime,age_band,eligible_now",
                 sensitivity=True, valuation_date=date(2026, 6, 30), as_of=AS_OF,
                 lang=request.param)
    return out, request.param


def overprinted(words) -> list[tuple[str, str]]:
    """Pairs of words printed over each other: their boxes overlap across and
    by more than a third of a line down (a line's box touches the next)."""
    out = []
    for i, a in enumerate(words):
        for b in words[i + 1:]:
            across = min(a[2], b[2]) - max(a[0], b[0])
            down = min(a[3], b[3]) - max(a[1], b[1])
            if across > 0.5 and down > 0.3 * min(a[3] - a[1], b[3] - b[1]):
                out.append((a[4], b[4]))
    return out


def touching(words) -> list[tuple[str, str]]:
    """A figure and the word after it on its line closer than 0.3 of the
    line's height: a right-aligned number run into the next cell's text (a
    space within a sentence is about 0.28; between cells it is far more).
    The word after is to the right of the figure: a label at the left of the
    same row whose baseline rounds to the figure's is not "after" it."""
    line = sorted(words, key=lambda w: (round(w[1]), w[0]))
    return [(a[4], b[4]) for a, b in zip(line, line[1:], strict=False)
            if abs(a[1] - b[1]) < 1 and FIGURE.match(a[4]) and re.match(r"\w", b[4])
            and 0 <= b[0] - a[2] + 1 and b[0] - a[2] < 0.3 * (a[3] - a[1])]


@pytest.mark.slow
def test_the_valuation_workbook_prints_without_overprinting(valuation_pub):
    _need_office()
    book, lang = valuation_pub
    pages = to_pdf(book)
    assert len(pages) == VALUATION_PAGES[lang], [p[:300] for p in pages]
    for n, words in enumerate(pdf_words(book), start=1):
        # wrapped labels of the assumptions over the next row; the page header's
        # title over the valuation date on the narrow `by` sheet (printed unscaled)
        assert overprinted(words) == [], n
        # pv_0.0625's figures and the period; the factor x1.10 and mp2020
        assert touching(words) == [], n
    assert "0.9900000000000001" not in "".join(pages)
    if lang == "es":
        for p in pages:
            assert "Pensiones diferidas: pagos esperados por año fiscal" in p
            assert "Fecha de valoración: 30 de junio de 2026 · Reglas: article19 (versión" in p
        return
    for p in pages:  # the title, the valuation date and the rules set on every page
        assert "Deferred pensions: expected payments by fiscal year" in p
        assert "Valuation date: June 30, 2026 · Rules: article19 (version" in p
    grid = pages[_pages_with(pages, "discount -1 point")[0]]
    rows = {line.split("  ")[0].strip(): line.split() for line in grid.splitlines()
            if line.strip()}
    # each row says the rate its present value is at, beside it
    assert rows["base"][-4] == "4.00%" and rows["base"][-2] == "6.25%"
    down = rows["discount -1 point"]
    assert down[-4] == "3.00%" and down[-2] == "5.25%"
    assert "rate_used_for_0.04" in grid and "rate_used_for_0.0625" in grid
    # the factors as written: x0.99 (not 0.9900000000000001), then the scale's name
    assert rows["mortality x0.9"][3:5] == ["×0.99", "mp2020"], rows["mortality x0.9"]
    assert "1.2100000000000002" not in grid


# ---- the HTML reports in a real browser -----------------------------------------------

@pytest.mark.browser
def test_wide_tables_scroll_inside_the_page_at_1280_pixels(browser, members, tmp_path):
    compare_file(members, tmp_path / "c.xlsx", ["article19", AGE67], html=tmp_path / "c.html",
                 as_of=AS_OF, lang="en",
                 projecting=Projecting(discount="0.04,0.0625", mortality="none"))
    census_file(members, html=tmp_path / "census.html", as_of=AS_OF, lang="en")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        for name in ("c.html", "census.html"):
            page.goto((tmp_path / name).as_uri())
            found = page.evaluate("""() => ({
              page: document.documentElement.scrollWidth, view: window.innerWidth,
              boxes: [...document.querySelectorAll('table')].map(t => {
                const box = t.closest('.wide');
                return {inBox: !!box, wide: t.getBoundingClientRect().width,
                        room: (box || t.parentElement).clientWidth,
                        scrolls: box ? getComputedStyle(box).overflowX : '',
                        focusable: box ? box.tabIndex : -1};
              })})""")
            assert found["page"] <= found["view"], (name, found)  # nothing cut at the edge
            for box in found["boxes"]:
                if box["wide"] > box["room"] + 1:  # too wide: it scrolls in its own box
                    assert box["inBox"] and box["scrolls"] == "auto", (name, box)
                    assert box["focusable"] == 0, (name, box)
    finally:
        page.close()

