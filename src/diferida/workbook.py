"""Workbooks a budget office prints: the page set-up, number formats and
sheet shapes that `project`, `compare` and `census` share (xlsxwriter).

Every printed sheet is landscape on US Letter, one page wide (as many tall
as the rows need), its header row repeated on every page, a page header
with the report's title over the valuation date and the rules set (two
lines on the left: side by side they overprint on a narrow sheet, which
prints unscaled), and a footer "page N of M". Wrapped text gets the row
height its lines need (LibreOffice does not size the rows of a written
workbook), and a text column right of a number column starts one indent
in, so a right-aligned figure never touches the words after it. A table
starts in cell A1 (its header row), so a program that reads the workbook
(Polars, pandas) finds the columns where it expects them; the title is on
every printed page instead. Money is `#,##0.00`,
counts `#,##0`, dates `yyyy-mm-dd`, and every number is stored as a number.
A chart has a sheet of its own, fitted whole to one landscape page.
"""

from __future__ import annotations

import io
import textwrap
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import polars as pl

from .i18n import catalog, fmt_date

MONEY = "#,##0.00"
COUNT = "#,##0"
RATIO = "#,##0.00"
# a share or a rate: the spreadsheet's built-in percent with two decimals
# (format 10 of every spreadsheet program), so a rate given to a hundredth of
# a percent shows whole (the rates themselves come from the rules file)
PERCENT = 10
DATE = "yyyy-mm-dd"
# the chart's size on its page: a landscape Letter page less the margins, in pixels
CHART_SIZE = {"width": 1150, "height": 720}
LETTER = 1  # xlsxwriter's paper code for US Letter (8.5 x 11 in)
# a factor (a mortality scale): "×0.99", a number all the same
FACTOR = '"×"0.00'
LINE_POINTS = 15  # the height of one line of 11-point text
# characters of a line per unit of column width (the width of one "0"): plain
# text runs about 1.25 to a unit, bold about 1.05; a row is sized a little
# tall rather than short (a line too few overprints the next row)
PLAIN_PER_UNIT = 1.1
BOLD_PER_UNIT = 0.9


class Year(int):
    """A calendar year: a number, printed without a thousands separator."""


def words(lang: str) -> dict[str, Any]:
    return catalog(lang)["workbook"]


def lines(text: str, width: float, per_unit: float = PLAIN_PER_UNIT) -> int:
    """The lines `text` wraps to in a column `width` wide (its own line
    breaks kept), at least 1."""
    room = max(1, int(width * per_unit))
    return sum(max(1, len(textwrap.wrap(part, room))) for part in text.split("\n"))


def _header_text(text: str) -> str:
    """Text for a page header: '&' doubled (a code otherwise), at most the
    255 characters Excel allows."""
    return text.replace("&", "&&")[:200]


class Book:
    """One workbook being written; `data()` closes it and returns its bytes."""

    def __init__(self, lang: str, title: str, subtitle: str, date_format: str = DATE):
        """`date_format`: how date cells show (they stay dates); the
        comparison's workbook, for people, shows them in the language's words."""
        import xlsxwriter

        self.lang, self.title, self.subtitle = lang, title, subtitle
        self._buf = io.BytesIO()
        wb = self.wb = xlsxwriter.Workbook(self._buf, {"in_memory": True})
        wb.set_properties({"title": title, "subject": subtitle, "author": "diferida",
                           "created": datetime(2000, 1, 1)})  # the same run, the same bytes
        f = wb.add_format
        self.head = f({"bold": True, "bottom": 1, "text_wrap": True, "valign": "bottom",
                       "bg_color": "#f2f2f2"})
        self.money = f({"num_format": MONEY})
        self.count = f({"num_format": COUNT})
        self.ratio = f({"num_format": RATIO})
        self.date = f({"num_format": date_format})
        self.wrap = f({"text_wrap": True, "valign": "top"})
        self.label = f({"bold": True, "text_wrap": True, "valign": "top"})
        self.bold = f({"bold": True, "top": 1})
        self.bold_money = f({"num_format": MONEY, "bold": True, "top": 1})
        self.bold_count = f({"num_format": COUNT, "bold": True, "top": 1})
        self.bold_ratio = f({"num_format": RATIO, "bold": True, "top": 1})
        self.percent = f({"num_format": PERCENT})
        self.key = f({"font_color": "#666666", "valign": "top"})
        self.section = f({"bold": True, "font_size": 12, "bottom": 1})
        self.money_top = f({"num_format": MONEY, "valign": "top", "align": "left"})
        self.count_top = f({"num_format": COUNT, "valign": "top", "align": "left"})
        self.year_top = f({"num_format": "0", "valign": "top", "align": "left"})
        self.date_top = f({"num_format": date_format, "valign": "top", "align": "left"})
        self.factor = f({"num_format": FACTOR})
        # a text column right of a number column: one indent in (`table`)
        # (an indent counts only with the alignment written out)
        self.head_pad = f({"bold": True, "bottom": 1, "text_wrap": True, "valign": "bottom",
                           "bg_color": "#f2f2f2", "align": "left", "indent": 1})
        self.pad = f({"align": "left", "indent": 1})
        self.wrap_pad = f({"text_wrap": True, "valign": "top", "align": "left", "indent": 1})
        self.bold_pad = f({"bold": True, "top": 1, "align": "left", "indent": 1})

    # ---- page set-up ---------------------------------------------------------

    def printed(self, ws, *, header_row: int | None = 0, rows_tall: int = 0) -> None:
        """Landscape Letter, one page wide (`rows_tall` pages tall, 0 = as
        many as needed), the header row repeated, title and page numbers."""
        w = words(self.lang)
        ws.set_landscape()
        ws.set_paper(LETTER)
        ws.set_margins(left=0.4, right=0.4, top=0.75, bottom=0.6)
        ws.fit_to_pages(1, rows_tall)
        if header_row is not None:
            ws.repeat_rows(header_row)
        ws.set_header(f"&L&B{_header_text(self.title)}&B\n{_header_text(self.subtitle)}",
                      {"margin": 0.25})
        ws.set_footer("&C" + _header_text(w["page"]).replace("{page}", "&P")
                      .replace("{pages}", "&N"), {"margin": 0.3})

    # ---- sheets ----------------------------------------------------------------

    def table(self, name: str, frame: pl.DataFrame, *, total_last: bool = False,
              widths: dict[str, int] | None = None, wrap_over: int = 60,
              percent: tuple[str, ...] = (), plain: tuple[str, ...] = (),
              factor: tuple[str, ...] = ()) -> Any:
        """A sheet holding `frame`: its header in row 1, each value by its
        type (Decimal money, integers counts, floats two decimals, dates,
        text as text, never a formula); the last row in bold when it is a
        total. `percent`, `plain`, `factor`: number columns shown as a
        percent, as written, as a factor ("×0.99")."""
        ws = self.wb.add_worksheet(name)
        cols = frame.columns
        kinds = [frame.schema[c] for c in cols]
        numeric = [isinstance(k, pl.Decimal) or k.is_numeric() or k == pl.Date for k in kinds]
        padded = [c > 0 and kinds[c] == pl.String and numeric[c - 1] for c in range(len(cols))]
        for c, col in enumerate(cols):
            ws.write_string(0, c, col, self.head_pad if padded[c] else self.head)
        width = [(widths or {}).get(col) or fit_width(frame, col, wrap_over) + 2 * padded[c]
                 for c, col in enumerate(cols)]
        last = frame.height
        for r, row in enumerate(frame.iter_rows(), start=1):
            total = total_last and r == last
            tall = 1
            for c, v in enumerate(row):
                if cols[c] in percent and v is not None:
                    ws.write_number(r, c, v, self.percent)
                elif cols[c] in plain and v is not None:
                    ws.write_number(r, c, v)
                elif cols[c] in factor and v is not None:
                    ws.write_number(r, c, v, self.factor)
                elif padded[c] and isinstance(v, str):
                    wrapped = len(v) > wrap_over and not total
                    ws.write_string(r, c, v, self.bold_pad if total else
                                    self.wrap_pad if wrapped else self.pad)
                    if wrapped:
                        tall = max(tall, lines(v, width[c] - 2))
                else:
                    self.cell(ws, r, c, v, kinds[c], total, wrap_over)
                    if isinstance(v, str) and len(v) > wrap_over:
                        tall = max(tall, lines(v, width[c]))
            if tall > 1:
                ws.set_row(r, LINE_POINTS * tall)
        for c in range(len(cols)):
            ws.set_column(c, c, width[c])
        ws.freeze_panes(1, 1 if cols and kinds[0] == pl.String else 0)
        self.printed(ws)
        return ws

    def cell(self, ws, r: int, c: int, v: Any, kind: Any = None, total: bool = False,
             wrap_over: int = 60) -> None:
        if v is None:
            if total:
                ws.write_blank(r, c, None, self.bold)
            return
        if isinstance(v, bool):
            ws.write_boolean(r, c, v)
        elif isinstance(v, Decimal) or isinstance(kind, pl.Decimal):
            ws.write_number(r, c, float(v), self.bold_money if total else self.money)
        elif isinstance(v, int):
            ws.write_number(r, c, v, self.bold_count if total else self.count)
        elif isinstance(v, float):
            ws.write_number(r, c, v, self.bold_ratio if total else self.ratio)
        elif isinstance(v, date):
            ws.write_datetime(r, c, datetime(v.year, v.month, v.day), self.date)
        else:
            text = str(v)
            ws.write_string(r, c, text, self.bold if total else
                            (self.wrap if len(text) > wrap_over else None))

    def pairs(self, name: str, heads: tuple[str, str], rows: list[tuple[str, Any]],
              *, label_width: int = 40, value_width: int = 100,
              keys: list[str] | None = None, key_head: str = "") -> Any:
        """A two-column sheet (what, its value): the label in bold, the
        value wrapped to the column's width; numbers and dates as such. A
        row whose value is None is a section heading. `keys`: a third
        column with each row's machine-readable name."""
        ws = self.wb.add_worksheet(name)
        ws.write_string(0, 0, heads[0], self.head)
        ws.write_string(0, 1, heads[1], self.head)
        if keys is not None:
            ws.write_string(0, 2, key_head, self.head)
            for r, k in enumerate(keys, start=1):
                ws.write_string(r, 2, k, self.key)
            ws.set_column(2, 2, max(12, *(len(k) + 2 for k in keys)))
        for r, (label, v) in enumerate(rows, start=1):
            if v is None:
                ws.write_string(r, 0, label, self.section)
                ws.write_blank(r, 1, None, self.section)
                continue
            ws.write_string(r, 0, label, self.label)
            # the row as tall as the wrapped label (bold) or the wrapped value needs
            tall = lines(label, label_width, BOLD_PER_UNIT)
            if isinstance(v, bool) or not isinstance(v, Decimal | int | float | date):
                text = str(v)
                ws.write_string(r, 1, text, self.wrap)
                tall = max(tall, lines(text, value_width))
            elif isinstance(v, Decimal):
                ws.write_number(r, 1, float(v), self.money_top)
            elif isinstance(v, Year):
                ws.write_number(r, 1, v, self.year_top)
            elif isinstance(v, int):
                ws.write_number(r, 1, v, self.count_top)
            elif isinstance(v, float):
                ws.write_number(r, 1, v, self.money_top)
            else:
                ws.write_datetime(r, 1, datetime(v.year, v.month, v.day), self.date_top)
            if tall > 1:
                ws.set_row(r, LINE_POINTS * tall)
        ws.set_column(0, 0, label_width)
        ws.set_column(1, 1, value_width)
        ws.freeze_panes(1, 0)
        self.printed(ws)
        return ws

    def chart_sheet(self, name: str, chart: Any, note: str | None = None) -> Any:
        """A sheet of its own for a chart, fitted whole to one landscape
        page, with a line of text under it (`note`, or the report's title:
        a sheet with no cell would stop a program reading every sheet)."""
        ws = self.wb.add_worksheet(name)
        chart.set_size(CHART_SIZE)
        ws.insert_chart(0, 0, chart, {"object_position": 3})
        ws.write_string(37, 0, note or self.title)
        self.printed(ws, header_row=None, rows_tall=1)
        ws.hide_gridlines(2)
        return ws

    def data(self) -> bytes:
        self.wb.close()
        return self._buf.getvalue()


def fit_width(frame: pl.DataFrame, col: str, cap: int = 60) -> int:
    """A column wide enough for its header (wrapped on two lines at most)
    and its values as formatted (money with separators), at most `cap`."""
    s = frame.get_column(col)
    head = max(len(col) // 2 + 2, max((len(w) for w in col.split()), default=0) + 2)
    if s.dtype == pl.String:
        most = s.str.len_chars().max()
        longest = most if isinstance(most, int) else 0
    elif isinstance(s.dtype, pl.Decimal) or s.dtype.is_numeric():
        top = s.cast(pl.Float64).abs().max()
        digits = len(f"{top if isinstance(top, float) else 0.0:,.2f}") + 1
        longest = digits
    elif s.dtype == pl.Date:
        longest = 10
    else:
        longest = 8
    return max(8, min(cap, max(head, longest + 2)))


def partial_note(fy_label: str, end_year: int, valuation: date, lang: str) -> str | None:
    """"FY2027 is a partial year: ..." when the valuation date is not 1 July."""
    if valuation <= date(end_year - 1, 7, 1):
        return None
    return words(lang)["partial_note"].format(fy=fy_label, start=fmt_date(valuation, lang),
                                              end=fmt_date(date(end_year, 6, 30), lang))


def fiscal_period(end_year: int, valuation: date, lang: str, written: bool = False) -> str:
    """The days a fiscal year covers, from the valuation date in the first
    (partial) year: "2026-11-29 – 2027-06-30 (partial year)"; `written`:
    the dates in words ("29 de noviembre de 2026 a 30 de junio de 2027")."""
    w = words(lang)
    start, stop = date(end_year - 1, 7, 1), date(end_year, 6, 30)
    show = (lambda d: fmt_date(d, lang)) if written else date.isoformat
    if valuation > start:
        return w["period_partial"].format(start=show(valuation), end=show(stop))
    return w["period"].format(start=show(start), end=show(stop))
