"""The census's long listings, written column-wise (census/listing.py), hold
the same cells as xlsxwriter writes a cell at a time (Book.table): the same
values, kinds and formats, text escaped, and Polars reads them back."""

from __future__ import annotations

import zipfile
from datetime import date
from decimal import Decimal

import polars as pl
import pytest

from diferida.census.listing import Listings
from diferida.workbook import Book

from .print_helpers import cells

FRAME = pl.DataFrame({
    "participant_id": ["A<1>", "B & C", None, "  D", "E\x01", "F"],
    "row": [2, 3, 4, 5, 6, 1_000_007],
    "when": [date(2001, 1, 31), None, date(1960, 2, 29), date(2026, 11, 29),
             date(1900, 3, 1), date(2099, 12, 31)],
    "amount": pl.Series([Decimal("28000.00"), Decimal("0.01"), None, Decimal("1234567.89"),
                         Decimal("5"), Decimal("-3.50")], dtype=pl.Decimal(20, 2)),
    "years": [0, 1, 25, None, 7, 3],
    "value": [20.0, 10.0833, 0.30000000000000004, 1e-7, 123456.5, None],
    "flag": [True, False, None, True, False, True],
    "check": ["a long text " * 8, "short", "x", "y", "z", "w"],
})


def _both(tmp_path):
    """The listing written by Book.table (a cell at a time) and by Listings."""
    slow = Book("en", "t", "s")
    slow.table("listing", FRAME, plain=("row",))
    (tmp_path / "slow.xlsx").write_bytes(slow.data())
    fast = Listings(Book("en", "t", "s"))
    fast.table("listing", FRAME, plain=("row",), wrap=("check",))
    fast.table("two", FRAME.head(2), plain=("row",))  # two rows: xlsxwriter writes them
    (tmp_path / "fast.xlsx").write_bytes(fast.fill(fast.book.data()))
    return tmp_path / "slow.xlsx", tmp_path / "fast.xlsx"


def test_the_cells_are_those_xlsxwriter_writes(tmp_path):
    slow, fast = _both(tmp_path)
    s, f = cells(slow, "listing"), cells(fast, "listing")
    assert s.keys() == f.keys()
    for ref in s:
        assert s[ref][0] == f[ref][0], ref
        if s[ref][0] == "n":
            # xlsxwriter keeps 16 significant digits, the listing every digit of the double
            assert float(s[ref][1]) == pytest.approx(float(f[ref][1]), rel=1e-15), ref
        else:
            assert s[ref][1] == f[ref][1], ref
    assert f["A2"] == ("s", "A<1>") and f["A3"] == ("s", "B & C") and f["A5"] == ("s", "  D")
    assert "A4" not in f and "C3" not in f and "F7" not in f  # missing stays missing
    assert f["A6"] == ("s", "E_x0001_")  # a control character, escaped as xlsxwriter does
    assert f["C2"] == ("n", "36922")  # 2001-01-31 as the spreadsheet's day number
    assert f["G2"] == ("b", "1")


def test_formats_extent_and_reading_back(tmp_path):
    _, fast = _both(tmp_path)
    with zipfile.ZipFile(fast) as z:
        xml = z.read("xl/worksheets/sheet1.xml").decode()
    assert '<dimension ref="A1:H7"/>' in xml
    # each column's format is the one of the row xlsxwriter wrote (money, date, ...)
    import re

    styles = [dict(re.findall(r'<c r="([A-Z])(?:\d+)" s="(\d+)"', row))
              for row in re.findall(r"<row [^>]*>.*?</row>", xml)[1:]]
    for col in ("C", "D", "E", "F", "H"):
        assert len({s.get(col) for s in styles if col in s}) == 1, col
    back = pl.read_excel(fast, sheet_name="listing")
    assert back["participant_id"].to_list()[:2] == ["A<1>", "B & C"]
    assert back["row"].to_list() == FRAME["row"].to_list()
    assert back["amount"].to_list()[0] == 28000.0


def test_a_listing_longer_than_a_sheet_keeps_its_first_rows_and_says_so(tmp_path, monkeypatch):
    import diferida.census.listing as listing

    monkeypatch.setattr(listing, "SHEET_ROWS", 4)  # a sheet of 4 rows, for the test
    note = {"first": "first {shown} of {total}", "all": "all {total}",
            "capped": "first {shown} of {total}; the sheet holds {kept}"}
    lb = Listings(Book("en", "t", "s"))
    lb.table("listing", FRAME, plain=("row",), note=note)
    path = tmp_path / "capped.xlsx"
    path.write_bytes(lb.fill(lb.book.data()))
    assert pl.read_excel(path, sheet_name="listing")["row"].to_list() == [2, 3, 4, 5]
    with zipfile.ZipFile(path) as z:
        xml = z.read("xl/worksheets/sheet1.xml").decode()
    assert "first 4 of 6; the sheet holds 4" in xml
