"""The census workbook as it prints: a census of 10,000 members and a prior
file prints in at most 20 pages (LibreOffice: `slow`), the long listings
each on one page, their header and first rows, the footer saying how many of
how many; every member stays in the sheet; rows of wrapped text are as tall
as their lines."""

from __future__ import annotations

import re
import zipfile
from datetime import date

import polars as pl
import pytest
from bench.bench_census import prior_of, with_status
from bench.generate import population

from diferida.census import census_file
from diferida.census.listing import PRINTED

from .conftest import need_part
from .print_helpers import PDFTOTEXT, SOFFICE, to_pdf

AS_OF = date(2026, 11, 29)


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """10,000 members with the benefit columns, a prior file, the workbook in English."""
    base = tmp_path_factory.mktemp("census-print")
    frame = with_status(population(10_000, seed=5), seed=7)
    now, before = base / "members.csv", base / "prior.csv"
    frame.write_csv(now)
    prior_of(frame, seed=11).write_csv(before)
    out = base / "census.xlsx"
    s = census_file(now, out, prior=before, as_of=AS_OF, lang="en")
    return s, out


def _sheet_xml(path, index: int) -> str:
    with zipfile.ZipFile(path) as z:
        return z.read(f"xl/worksheets/sheet{index}.xml").decode()


def test_every_member_stays_in_the_listings(big):
    s, out = big
    f = s.figures
    for sheet, n in (("backlog members", f["backlog"]),
                     ("outliers", sum(f["outliers"].values())),
                     ("joiners", f["joiners"]), ("leavers", f["leavers"])):
        assert n > PRINTED, sheet  # each longer than its printed page
        assert pl.read_excel(out, sheet_name=sheet).height == n, sheet


def test_a_listing_prints_its_first_rows_on_one_page(big):
    _, out = big
    with zipfile.ZipFile(out) as z:
        book = z.read("xl/workbook.xml").decode()
    areas = dict(re.findall(r'<definedName name="_xlnm.Print_Area" localSheetId="(\d+)">'
                            r"([^<]*)</definedName>", book))
    names = re.findall(r'<sheet name="([^"]+)"', book)
    for sheet in ("backlog members", "outliers", "joiners", "leavers", "changes"):
        i = names.index(sheet)
        assert areas[str(i)].endswith(f"${PRINTED + 1}"), (sheet, areas[str(i)])
        xml = _sheet_xml(out, i + 1)
        assert 'fitToHeight="1"' in xml or "fitToHeight" not in xml  # one page tall
        assert "Printed: the first 30 of " in xml and "the whole listing is in this sheet" in xml


def test_wrapped_text_rows_are_as_tall_as_their_lines(tmp_path):
    # the service check's text wraps in its column: its row is two lines tall, the others one
    from .test_census import AS_OF as AT
    from .test_census import ROWS, write

    src = write(tmp_path / "m.csv", ROWS)
    out = tmp_path / "c.xlsx"
    census_file(src, out, as_of=AT, lang="en")
    o = pl.read_excel(out, sheet_name="outliers")
    with zipfile.ZipFile(out) as z:
        book = z.read("xl/workbook.xml").decode()
    i = re.findall(r'<sheet name="([^"]+)"', book).index("outliers")
    rows = re.findall(r'<row r="(\d+)"([^>]*)>', _sheet_xml(out, i + 1))
    tall = {int(r) for r, attrs in rows if 'ht="30"' in attrs}
    span = {k + 2 for k, p in enumerate(o["participant_id"]) if p == "SPAN"}
    assert span and tall == span


@pytest.mark.slow
def test_a_census_of_10000_prints_in_at_most_20_pages(big):
    need_part(SOFFICE is not None, "LibreOffice (soffice)",
              "install Debian's package: apt-get install libreoffice-calc-nogui")
    need_part(PDFTOTEXT is not None, "pdftotext",
              "install Debian's package: apt-get install poppler-utils")
    s, out = big
    pages = to_pdf(out)
    assert len(pages) <= 20, len(pages)
    assert "Rows read" in pages[0] and "Members with a changed field" in pages[0]
    notes = [p for p in pages if "Printed: the first 30 of" in p]
    assert len(notes) == 5  # backlog members, outliers, joiners, leavers, changes
    outliers = sum(s.figures["outliers"].values())
    assert any(f"Printed: the first 30 of {outliers:,} rows" in p for p in notes)
    for p in notes:  # 30 rows (a member each, or a field changed), nothing of the next sheet
        assert len([line for line in p.splitlines() if re.search(r"\b[PL]\d{9}\b", line)]) \
            == PRINTED
