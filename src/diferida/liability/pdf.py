"""The valuation report as a printed document (`-o report.pdf`): the same
parts as the workbook, in the order an auditor reads them — the liability,
the project's schedule of changes, every GASB 73 section (gasb_report.py),
the fiscal years, the employers, the assumptions — with a table of
contents and "page N of M" on every page, in the run's language. HTML and
CSS (report.html, report.css) rendered by WeasyPrint, as the letter is.
Wide tables go on landscape pages; nothing is cut off."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from functools import cache
from importlib import resources
from typing import Any

import polars as pl

from ..i18n import catalog, fmt_date
from ..projection.options import SENSITIVITY_STEP
from ..projection.statement import rules_text
from .gasb_report import amount_text
from .parts import ReportParts

WIDE_COLUMNS = 6  # a table of more columns than this prints on a landscape page
PIECE_COLUMNS = 7  # at most this many columns besides the first across a landscape page
FIGURE = re.compile(r"^[−+-]?[0-9][0-9,]*(\.[0-9]+)?%?$")  # a figure written as text


@dataclass
class Piece:
    """A table or one block of its columns: the headings, the rows in words,
    and which columns are figures (right-aligned, never broken)."""

    head: list[str]
    body: list[list[str]]
    numeric: list[bool]


@dataclass
class Block:
    """One part of the printed report: a heading with its anchor, then its
    paragraphs, then label-value rows or a table (cells already in words)."""

    anchor: str
    title: str
    paragraphs: list[str] = field(default_factory=list)
    rows: list[tuple[str, str | None]] | None = None  # value None: a sub-heading
    # a table: one piece, or several of a few columns each (its first column
    # on every piece) when it has more than fit across a page
    pieces: list[Piece] = field(default_factory=list)
    total_last: bool = False
    wide: bool = False
    new_page: bool = True  # False: follows the part before it on its page


def _text(v: Any, blank: str = "") -> str:
    if v is None:
        return blank
    if isinstance(v, bool):
        return "✓" if v else "—"
    if isinstance(v, Decimal):
        return amount_text(v)
    if isinstance(v, int):
        return ("−" if v < 0 else "") + f"{abs(v):,}"
    if isinstance(v, float):
        return f"{v:.6f}".rstrip("0").rstrip(".") if abs(v) < 1 else f"{v:,.2f}"
    if isinstance(v, date):
        return v.isoformat()
    return str(v)


def _rows(rows: list[tuple[str, Any]], lang: str) -> list[tuple[str, str | None]]:
    return [(label, None if v is None else _text(v)) for label, v in rows]


def _figures(frame: pl.DataFrame, col: str, blank: str) -> bool:
    """A column of figures: a number type, or text every cell of which is a
    figure (a proportion, a signed change) or says there is none."""
    kind = frame.schema[col]
    if isinstance(kind, pl.Decimal) or kind.is_numeric():
        return True
    if kind != pl.String:
        return False
    cells = [v for v in frame.get_column(col).to_list() if v not in (None, "", blank)]
    return bool(cells) and all(FIGURE.match(v) for v in cells)


def pieces(head: list[str], body: list[list[str]], numeric: list[bool]) -> list[Piece]:
    """The table in blocks of at most PIECE_COLUMNS columns besides the first,
    as even as can be, the first column (what each row is) on every block."""
    rest = len(head) - 1
    if rest <= PIECE_COLUMNS:
        return [Piece(head, body, numeric)]
    n = math.ceil(rest / PIECE_COLUMNS)
    size = math.ceil(rest / n)
    out = []
    for start in range(1, len(head), size):
        cols = [0, *range(start, min(start + size, len(head)))]
        out.append(Piece([head[c] for c in cols], [[row[c] for c in cols] for row in body],
                         [numeric[c] for c in cols]))
    return out


def table_block(anchor: str, title: str, frame: pl.DataFrame, *, paragraphs=(),
                total_last: bool = False, blank: str = "") -> Block:
    numeric = [_figures(frame, c, blank) for c in frame.columns]
    body = [[_text(v, blank) for v in row] for row in frame.iter_rows()]
    return Block(anchor, title, list(paragraphs),
                 pieces=pieces(list(frame.columns), body, numeric), total_last=total_last,
                 wide=len(frame.columns) > WIDE_COLUMNS)


def blocks(parts: ReportParts) -> list[Block]:
    """Every part of the report, in order, in words."""
    from .gasb_report import sections
    from .report import assumption_rows, change_frame, employer_frames, liability_rows, years_frame
    lang = parts.lang
    t = catalog(lang)["liability"]
    summary, li = parts.summary, parts.liability
    v = summary.measurement_date
    out = [Block("liability", t["section_liability"].format(date=fmt_date(v, lang)),
                 rows=_rows(liability_rows(summary, li, parts.basis, SENSITIVITY_STEP,
                                           lang)[:], lang))]
    schedule = parts.schedule()
    if schedule is not None:
        frame = change_frame(*schedule, v, lang)
        out.append(table_block("changes", catalog(lang)["gasb73"]["project_schedule_title"],
                               frame, total_last=True))
    flowing = {"expense", "deferrals", "recognition", "bases"}
    for s in sections(parts):
        if s.rows is not None:
            out.append(Block(s.key, s.title, list(s.paragraphs), rows=_rows(s.rows, lang)))
        else:
            assert s.table is not None
            out.append(table_block(s.key, s.title, s.table, paragraphs=s.paragraphs,
                                   total_last=s.total_last, blank=s.blank or ""))
    out.append(table_block("fiscal_years", t["sheet_years"].capitalize(),
                           years_frame(li, v, lang), total_last=True))
    if parts.employers is not None:
        emp, long = employer_frames(parts.employers, parts.names, li,
                                    parts.employer_members or {}, lang)
        out.append(table_block("employers", t["sheet_employers"].capitalize(), emp,
                               total_last=True))
        out.append(table_block("employer_payments", t["sheet_employer_payments"].capitalize(),
                               long, total_last=True))
    out.append(Block("assumptions", t["sheet_assumptions"].capitalize(),
                     rows=_rows(assumption_rows(parts), lang)))
    for b in out:
        if b.anchor in flowing:
            b.new_page = False
    return out


@cache
def _template():
    from jinja2 import Environment, select_autoescape

    text = (resources.files("diferida.liability") / "report.html").read_text("utf-8")
    return Environment(autoescape=select_autoescape(default=True)).from_string(text)


def _css_string(text: str) -> str:
    """A text as a CSS string's contents (the page's margin boxes)."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def report_html(parts: ReportParts) -> str:
    from markupsafe import Markup

    lang = parts.lang
    g = catalog(lang)["gasb73"]
    summary = parts.summary
    title = g["report_title"]
    subtitle = g["report_subtitle"].format(
        date=fmt_date(summary.measurement_date, lang),
        rules=rules_text({"name": parts.rules.name, "version": parts.rules.version},
                         lang))
    page = _css_string(g["page_of"]).replace("{page}", '" counter(page) "').replace(
        "{pages}", '" counter(pages) "')
    css = (resources.files("diferida.liability") / "report.css").read_text("utf-8")
    css += (f'\n@page {{ @top-left {{ content: "{_css_string(title)}"; }}'
            f' @top-right {{ content: "{_css_string(subtitle)}"; }}'
            f' @bottom-center {{ content: "{page}"; }} }}\n')
    return _template().render(lang=lang, title=title, subtitle=subtitle,
                              contents=g["contents"], blocks=blocks(parts), css=Markup(css))


def report_pdf(parts: ReportParts) -> bytes:
    """The report as PDF (tagged, no creation time: the same report gives the
    same bytes)."""
    from weasyprint import HTML

    return HTML(string=report_html(parts), base_url=None).write_pdf(pdf_tags=True)
