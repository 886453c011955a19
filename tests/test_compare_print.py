"""The comparison's workbook as LibreOffice prints it (`slow`: each test
converts a workbook to PDF): every page readable (its text at 8 points or
more), nothing printed over anything else (no two words' boxes overlap),
the page header on its own lines, the changed members' listing printed as
one summary page while the whole listing stays in its sheet, and the wide
tables (fiscal years, sensitivity) printed in blocks of whole measures."""

from __future__ import annotations

import re
import statistics
import subprocess
from datetime import date
from pathlib import Path

import polars as pl
import pytest
from bench.generate import population

from diferida.compare import Projecting, compare_file
from diferida.compare.output import PRINT_SCALE, PRINTED_ROWS
from diferida.i18n import catalog

from .print_helpers import PDFTOTEXT, SOFFICE, page_setup, sheet_names, to_pdf

pytestmark = pytest.mark.slow
AS_OF = date(2026, 11, 29)
AGE67 = "reform-19_2-age-67"
# the pages of the 600 members of `members` (seed 5), two rates, the sensitivity
# grid: summary 2, status and route 1, changed members 1, shifts 1, amounts 1,
# fiscal years 6 (3 across x 2 down), chart 1, sensitivity 4 (one across
# for the options, then one for each measure), assumptions 1, file columns 3
PAGES = {"en": 21, "es": 21}
# a word's box is about 1.3 times the size of its font
BOX_PER_POINT = 1.3
READABLE_POINTS = 8


@pytest.fixture(scope="module")
def members(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("print") / "members.csv"
    population(600, seed=5).write_csv(path)
    return path


@pytest.fixture(scope="module")
def printed(members, tmp_path_factory):
    """{lang: (workbook, the PDF's text by page, the PDF's words by page)}."""
    if SOFFICE is None or PDFTOTEXT is None:
        pytest.skip("LibreOffice (soffice) and pdftotext are needed to print workbooks")
    out = {}
    for lang in ("en", "es"):
        folder = tmp_path_factory.mktemp(lang)
        book = folder / "c.xlsx"
        compare_file(members, book, ["article19", AGE67], as_of=AS_OF, lang=lang,
                     projecting=Projecting(discount="0.04,0.0625", mortality="none",
                                           sensitivity=True))
        pages = to_pdf(book)
        out[lang] = (book, pages, words(folder / "pdf" / "c.pdf"))
    return out


def words(pdf: Path) -> list[list[tuple[float, float, float, float, str]]]:
    """Each page's words with their boxes (x0, y0, x1, y1, text), in points."""
    html = subprocess.run([PDFTOTEXT, "-bbox", str(pdf), "-"], capture_output=True, text=True,
                          check=True, timeout=120).stdout
    found = re.compile(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" '
                       r'yMax="([\d.]+)">([^<]*)</word>')
    return [[(float(a), float(b), float(c), float(d), t) for a, b, c, d, t in found.findall(p)]
            for p in html.split("<page ")[1:]]


def overprinted(page: list[tuple[float, float, float, float, str]]) -> list[tuple[str, str]]:
    """Pairs of words printed over each other: their boxes share more than a
    point across and more than 40 % of a line's height (the boxes of two
    lines one under the other touch, a word over another overlaps)."""
    out = []
    ordered = sorted(page)
    for i, a in enumerate(ordered):
        for b in ordered[i + 1:]:
            if b[0] >= a[2]:
                break
            across = min(a[2], b[2]) - max(a[0], b[0])
            down = min(a[3], b[3]) - max(a[1], b[1])
            if across > 1 and down > 0.4 * min(a[3] - a[1], b[3] - b[1]):
                out.append((a[4], b[4]))
    return out


def test_the_overprint_check_sees_two_words_over_each_other():
    line = [(10.0, 10.0, 50.0, 24.0, "Members"), (10.0, 24.5, 40.0, 38.5, "change")]
    assert overprinted(line) == []  # one line under another
    assert overprinted([*line, (30.0, 12.0, 70.0, 26.0, "whose")]) == [("Members", "whose")]


@pytest.mark.parametrize("lang", ["en", "es"])
def test_every_page_is_readable_and_nothing_prints_over_anything(printed, lang):
    book, pages, boxes = printed[lang]
    assert len(pages) == PAGES[lang]
    title = catalog(lang)["compare_report"]["chart"]["title"]
    chart_page = [i for i, p in enumerate(pages) if title in p]
    assert len(chart_page) == 1
    for i, page in enumerate(boxes):
        assert overprinted(page) == [], (i + 1, overprinted(page)[:5])
        if i in chart_page:  # the chart's own labels are the chart's
            continue
        size = statistics.median(y1 - y0 for _, y0, _, y1, _ in page) / BOX_PER_POINT
        assert size >= READABLE_POINTS, (i + 1, size)


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_page_header_is_whole_on_every_page(printed, lang):
    _, pages, _ = printed[lang]
    subtitle = {"en": "Date: November 29, 2026 · Rules A: article19 · Rules B: reform-19_2-age-67",
                "es": "Fecha: 29 de noviembre de 2026 · Reglas A: article19 · Reglas B: "
                      "reform-19_2-age-67"}[lang]
    for i, page in enumerate(pages):
        if "Page" in page or "Página" in page:
            lines = [x.strip() for x in page.splitlines() if x.strip()]
            assert lines[1] == subtitle, (i + 1, lines[:3])


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_changed_members_print_one_summary_page_and_stay_whole_in_the_sheet(printed,
                                                                                 lang):
    book, pages, _ = printed[lang]
    listed = [i for i, p in enumerate(pages) if re.search(r"P0000\d{5}", p)]
    assert len(listed) == 1  # one page of members, whatever their number
    page = pages[listed[0]]
    ids = re.findall(r"P0000\d{5}", page)
    assert len(ids) == PRINTED_ROWS
    note = {"en": f"Printed: {PRINTED_ROWS} of 101 changed members (main columns); the "
                  "whole listing is in this sheet.",
            "es": f"Se imprimen {PRINTED_ROWS} de 101 miembros que cambian (columnas "
                  "principales); la lista completa está en esta hoja."}[lang]
    assert " ".join(note.split()) in " ".join(page.split())
    sheet = sheet_names(book)[2]
    listing = pl.read_excel(book, sheet_name=sheet)
    # every member, every column (but the finding's condition code, the files' own)
    assert listing.height == 101 and listing.width == 26
    # the printed columns: who moves, by how much, and why; the long texts last
    first = listing.columns[:7]
    heads = {"en": ["Row of the file", "Participant id", "Eligibility date under A",
                    "Eligibility date under B", "Months the eligibility date moves",
                    "Change of the annual amount", "Rule that explains the change"],
             "es": ["Fila del archivo", "Identificador", "Fecha de elegibilidad según A",
                    "Fecha de elegibilidad según B",
                    "Meses que se mueve la fecha de elegibilidad",
                    "Cambio de la pensión anual", "Regla que explica el cambio"]}[lang]
    assert first == heads
    assert listing.columns[-2:] == {"en": ["Explanation under A", "Explanation under B"],
                                    "es": ["Explicación según A",
                                           "Explicación según B"]}[lang]


def test_the_wide_tables_print_in_blocks_of_whole_measures(printed):
    book, pages, _ = printed["en"]
    chart = catalog("en")["compare_report"]["chart"]["title"]
    # not the files' columns nor the chart
    pages = [p for p in pages if "Name of the column" not in p and chart not in p]
    for sheet in ("Fiscal years", "Sensitivity"):
        setup = page_setup(book, sheet)
        assert setup["fitToPage"] == "0" and setup["scale"] == str(PRINT_SCALE), sheet
    # each measure's A, B and B − A on the same page, its rows' names beside them
    for table, first in (("Fiscal", r"FY20\d\d"), ("Scenario", "Discount rate 1 point")):
        on = [p for p in pages if table in p and re.search(first, p)]
        assert len(on) == {"Fiscal": 6, "Scenario": 4}[table]
        for p in on:
            flat = " ".join(p.split())
            a, b = flat.count("under A"), flat.count("under B")
            assert a == b == flat.count("difference"), (a, b, flat[:300])
        assert sum(" ".join(p.split()).count("under A") for p in on) == {
            "Fiscal": 2 * 4, "Scenario": 3}[table]  # each measure once (down the pages)
    period = [p for p in pages if "Period" in p]
    assert period and all("(partial year: from the valuation date)" in p or "FY2067" in p
                          for p in period)
