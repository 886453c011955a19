"""Long listings (a row per member: the backlog, the outliers, the changes)
written into the census workbook column-wise.

xlsxwriter writes a cell at a time from Python, about 10 µs a cell: the
backlog of 10^6 members alone is 1.5 million cells, most of a census's time.
So a listing's sheet is laid out by xlsxwriter as any other (its header row,
column widths, formats, panes, page set-up), with its first and last data
rows written cell by cell (so the sheet's extent and each column's format
are xlsxwriter's own), and, once the workbook is closed, every data row of
the sheet's XML is replaced by rows built from the table's columns at once
(Polars string expressions): the same cells, the same formats, each value by
its type (numbers and dates as numbers, text as inline text). Readers
(Excel, LibreOffice, Polars/fastexcel) read inline text as they read shared
text; `tests/test_census_listing.py` holds the sheets equal, cell by cell,
to the sheets xlsxwriter writes alone.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

import polars as pl

from ..workbook import LINE_POINTS, Book, fit_width, lines
from ..workbook import words as book_words

# 1900-based serial day of 1970-01-01 (Excel counts 1900-01-00 as day 0 and
# 1900-02-29 as a day, so every date after February 1900 is 25,569 + epoch days)
EPOCH_SERIAL = 25_569
# a listing prints its header and its first PRINTED rows on one page (the sheet's print
# area); the whole listing stays in the sheet, and the page's footer says so
PRINTED = 30
# a sheet's rows in Excel and LibreOffice (1,048,576), less the header row: a longer
# listing keeps its first rows, and its footer says how many of how many
SHEET_ROWS = 1_048_575
# characters XML 1.0 does not allow, written as the _xHHHH_ escapes spreadsheets read
_CONTROL = [chr(c) for c in (*range(0, 9), 11, 12, *range(14, 32))]
_ROW_OF_CELL = re.compile(r'<c r="([A-Z]+)(\d+)"(?: s="(\d+)")?')


def _letters(c: int) -> str:
    name = ""
    c += 1
    while c:
        c, rem = divmod(c - 1, 26)
        name = chr(65 + rem) + name
    return name


@dataclass
class Pending:
    sheet: str
    frame: pl.DataFrame
    formats: list[Any]  # per column: the xlsxwriter format (None: the default)
    tall: dict[str, dict[str, int]]  # per wrapped column: the lines each text takes


@dataclass
class Listings:
    """The listings of one workbook, filled in after it is closed."""

    book: Book
    pending: list[Pending] = field(default_factory=list)

    def table(self, name: str, frame: pl.DataFrame, *, plain: tuple[str, ...] = (),
              percent: tuple[str, ...] = (), widths: dict[str, int] | None = None,
              wrap: tuple[str, ...] = (), cap: int = 60, note: dict[str, str] | None = None
              ) -> Any:
        """A sheet holding `frame` as Book.table lays it out (header row,
        widths, panes, page set-up); `wrap`: text columns wrapped at the
        column's width, each row as tall as its text needs (a column of few
        distinct texts: the lines are counted once a text); `plain`: whole
        numbers without a thousands separator (row numbers). Printed: the
        header and the first PRINTED rows on one page, and the footer says
        how many of how many (`note`: its texts, `first` and `all`, each
        with {shown} and {total})."""
        b = self.book
        ws = b.wb.add_worksheet(name)
        total = frame.height
        frame = frame.head(SHEET_ROWS)
        cols = frame.columns
        formats: list[Any] = []
        kinds = [frame.schema[c] for c in cols]
        numeric = [isinstance(k, pl.Decimal) or k.is_numeric() or k == pl.Date for k in kinds]
        # a text column right of a number column: one indent in, as Book.table does
        padded = [c > 0 and kinds[c] == pl.String and numeric[c - 1] for c in range(len(cols))]
        width = {col: (widths or {}).get(col) or fit_width(frame, col, cap) + 2 * padded[c]
                 for c, col in enumerate(cols)}
        tall = {col: {t: lines(t, width[col] - 2 * padded[cols.index(col)])
                      for t in frame.get_column(col).drop_nulls().unique().to_list()}
                for col in wrap}
        for c, col in enumerate(cols):
            ws.write_string(0, c, col, b.head_pad if padded[c] else b.head)
            kind = kinds[c]
            if padded[c]:
                formats.append(b.wrap_pad if col in wrap else b.pad)
            elif col in plain:
                formats.append(None)
            elif col in percent:
                formats.append(b.percent)
            elif isinstance(kind, pl.Decimal):
                formats.append(b.money)
            elif kind.is_integer():
                formats.append(b.count)
            elif kind.is_float():
                formats.append(b.ratio)
            elif kind == pl.Date:
                formats.append(b.date)
            elif kind == pl.String and col in wrap:
                formats.append(b.wrap)
            else:
                formats.append(None)
            ws.set_column(c, c, width[col])
        # the first and the last data rows by xlsxwriter: the sheet's extent, and each
        # column's format index in the written XML (a blank cell where a value is missing)
        for r in {1, frame.height} if frame.height else ():
            for c, v in enumerate(frame.row(r - 1)):
                f = formats[c]
                if v is None:
                    if f is not None:  # a blank cell, so that the column's style shows
                        ws.write_blank(r, c, None, f)
                elif isinstance(v, bool):
                    ws.write_boolean(r, c, v, f)
                elif isinstance(v, int | float | Decimal):
                    ws.write_number(r, c, float(v), f)
                elif hasattr(v, "year"):
                    ws.write_datetime(r, c, datetime(v.year, v.month, v.day), f)
                else:
                    ws.write_string(r, c, str(v), f)
            # (the rows' heights, by xlsxwriter here too: the first and the last)
            if wrap:
                most = max((tall[col].get(frame.item(r - 1, col), 1) for col in wrap), default=1)
                if most > 1:
                    ws.set_row(r, LINE_POINTS * most)
        ws.freeze_panes(1, 1 if cols and frame.schema[cols[0]] == pl.String else 0)
        b.printed(ws)
        self.print_first(ws, total, len(cols), note)
        if frame.height > 2:
            self.pending.append(Pending(name, frame, formats, tall))
        return ws

    def print_first(self, ws: Any, total: int, k: int, note: dict[str, str] | None) -> None:
        """The printed page of a listing: its header and first PRINTED rows,
        fitted to one page, the footer saying how many of how many."""
        n = min(total, PRINTED, SHEET_ROWS)
        ws.print_area(0, 0, max(n, 1), k - 1)
        ws.fit_to_pages(1, 1)
        if note is None:
            return
        key = "capped" if total > SHEET_ROWS else "first" if total > n else "all"
        text = note[key].format(shown=f"{n:,}", total=f"{total:,}", kept=f"{SHEET_ROWS:,}")
        page = book_words(self.book.lang)["page"].replace("&", "&&") \
            .replace("{page}", "&P").replace("{pages}", "&N")
        ws.set_footer(f"&L{text.replace('&', '&&')}&R{page}", {"margin": 0.3})

    def fill(self, data: bytes) -> bytes:
        """The closed workbook with every listing's rows in place."""
        if not self.pending:
            return data
        src = zipfile.ZipFile(io.BytesIO(data))
        files = _sheet_files(src)
        by_file = {files[p.sheet]: p for p in self.pending}
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
            for info in src.infolist():
                body = src.read(info.filename)
                if info.filename in by_file:
                    body = _filled(body.decode("utf-8"), by_file[info.filename]).encode("utf-8")
                    dst.writestr(info, body, zipfile.ZIP_DEFLATED, 1)  # large: fast level
                else:
                    dst.writestr(info, body, zipfile.ZIP_DEFLATED)
        return out.getvalue()


def _sheet_files(z: zipfile.ZipFile) -> dict[str, str]:
    """Sheet name → its XML file in the package."""
    from xml.etree import ElementTree as ET

    main = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
    rel = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
    book = ET.fromstring(z.read("xl/workbook.xml"))
    rels = ET.fromstring(z.read("xl/_rels/workbook.xml.rels"))
    target = {r.get("Id"): r.get("Target") for r in rels}
    sheets = book.find(f"{main}sheets")
    assert sheets is not None  # every workbook has its list of sheets
    return {str(s.get("name")): "xl/" + str(target[s.get(rel)]).lstrip("/")
            .removeprefix("xl/") for s in sheets}


def _filled(xml: str, p: Pending) -> str:
    start = xml.index("<sheetData>") + len("<sheetData>")
    end = xml.index("</sheetData>")
    rows = xml[start:end]
    header_end = rows.index("</row>") + len("</row>")
    # each column's style index, as xlsxwriter wrote it in the first data row
    first = rows[header_end:rows.index("</row>", header_end)]
    styles = {col: s for col, row, s in _ROW_OF_CELL.findall(first) if row == "2"}
    return xml[:start] + rows[:header_end] + _rows(p, styles) + xml[end:]


def _escaped(text: pl.Expr) -> pl.Expr:
    return text.str.replace_all("&", "&amp;", literal=True) \
        .str.replace_all("<", "&lt;", literal=True).str.replace_all(">", "&gt;", literal=True)


def _rows(p: Pending, styles: dict[str, str]) -> str:
    """Rows 2.. of the sheet, one string, built column by column."""
    frame = p.frame
    r = pl.int_range(2, frame.height + 2, dtype=pl.Int64).cast(pl.String)
    cells = []
    for c, col in enumerate(frame.columns):
        letter = _letters(c)
        s = styles.get(letter)
        head = pl.concat_str(pl.lit(f'<c r="{letter}'), r,
                             pl.lit(f'" s="{s}"' if s is not None else '"'))
        kind = frame.schema[col]
        x = pl.col(col)
        if kind == pl.Boolean:
            cell = pl.concat_str(head, pl.lit(' t="b"><v>'), x.cast(pl.Int8).cast(pl.String),
                                 pl.lit("</v></c>"))
        elif kind == pl.Date:
            cell = pl.concat_str(head, pl.lit("><v>"),
                                 (x.cast(pl.Int32) + EPOCH_SERIAL).cast(pl.String),
                                 pl.lit("</v></c>"))
        elif isinstance(kind, pl.Decimal) or kind.is_numeric():
            v = x.cast(pl.Float64) if kind.is_float() else x
            if kind.is_float():  # not a number or infinite: no cell (xlsx has no such value)
                v = pl.when(v.is_finite()).then(v)
            cell = pl.concat_str(head, pl.lit("><v>"), v.cast(pl.String), pl.lit("</v></c>"))
        else:
            text = x.cast(pl.String)
            if frame.select(text.str.contains("[\x00-\x08\x0b\x0c\x0e-\x1f]").any()).item():
                for ch in _CONTROL:
                    text = text.str.replace_all(ch, f"_x{ord(ch):04X}_", literal=True)
            cell = pl.concat_str(head, pl.lit(' t="inlineStr"><is><t xml:space="preserve">'),
                                 _escaped(text), pl.lit("</t></is></c>"))
        cells.append(cell.fill_null(""))
    # a row with wrapped text as tall as its longest text's lines
    most = [pl.col(col).replace_strict(lines_of, default=1, return_dtype=pl.Int32)
            for col, lines_of in p.tall.items()]
    height = (pl.max_horizontal(most) if most else pl.lit(1, pl.Int32))
    attrs = pl.when(height > 1).then(pl.concat_str(
        pl.lit('" ht="'), (height * LINE_POINTS).cast(pl.String), pl.lit('" customHeight="1">')
    )).otherwise(pl.lit('">'))
    line = pl.concat_str(pl.lit('<row r="'), r, attrs, *cells, pl.lit("</row>"))
    return frame.select(line.alias("x")).get_column("x").str.join("").item()
