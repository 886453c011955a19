"""The cells of the workbench's exports (CSV and Excel): a text is never read
as a formula or a link by the spreadsheet that opens it.

A participant id, a user name or any other text of an export came from
outside (an imported file, a form). A spreadsheet program opening a CSV
reads a cell that begins with `=`, `+`, `-` or `@` as a formula
(`=HYPERLINK("http://evil.example","ver")`, `+cmd|' /C calc'!A0`), and a TAB
or a carriage return before one of them hides it. OWASP's rule for CSV
injection: such a cell is written with a single quote `'` before it, which
the spreadsheet shows and does not run. The rule applies to every text cell
of both formats, so the two say the same; a number (an id, a count, a
negative number of days) stays a number and is never prefixed.

The Excel workbook also writes every text as a text: not as a formula, and
not as a live link (xlsxwriter would make `http://…` a hyperlink)."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

# the first characters that make a spreadsheet read a cell as a formula
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"
_STARTS_PATTERN = "^[=+\\-@\t\r]"


def neutral(text: str | None) -> str | None:
    """`text` as a cell: with a `'` before it when it begins as a formula would."""
    if text and text.startswith(FORMULA_STARTS):
        return QUOTE + text
    return text


def neutral_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` with every text column's cells neutralised (`neutral`); the
    columns of numbers, dates, times and true/false are left as they are."""
    import polars as pl

    texts = [c for c, t in frame.schema.items() if t == pl.String]
    return frame.with_columns(
        pl.when(pl.col(c).str.contains(_STARTS_PATTERN))
        .then(pl.lit(QUOTE) + pl.col(c)).otherwise(pl.col(c)).alias(c)
        for c in texts)


def csv_bytes(frame: pl.DataFrame) -> bytes:
    return neutral_frame(frame).write_csv().encode("utf-8")


def xlsx_bytes(frame: pl.DataFrame, worksheet: str) -> bytes:
    """The frame as one worksheet of an Excel workbook, its texts neutralised
    and written as texts (Polars' own workbook options, with no text turned
    into a formula or a link)."""
    import xlsxwriter

    out = io.BytesIO()
    book = xlsxwriter.Workbook(out, {
        "strings_to_formulas": False, "strings_to_urls": False, "strings_to_numbers": False,
        "nan_inf_to_errors": True, "default_date_format": "yyyy-mm-dd;@"})
    try:
        neutral_frame(frame).write_excel(book, worksheet=worksheet)
    finally:
        book.close()
    return out.getvalue()
