"""The comparison's outputs: a workbook (a sheet per table, a native chart of
the fiscal years), CSV/Parquet tables, the assumptions as JSON, and a
self-contained HTML report in Spanish or English (report.py: the chart
embedded as SVG; no external assets).

Who reads what: the CSV and Parquet tables (and assumptions.json) are for
programs and keep the machine-readable column names and codes
(`status_a`, `not_yet_eligible`, `later under B`, ISO dates). The workbook
and the HTML report are for people, in the language of the run: sheet
names, column headers and coded values in words (the report's catalog,
`report.Values`), dates as real date cells shown in the language's own
format, money and counts as numbers; the workbook's last sheet names each
header's column in the CSV/Parquet tables."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import date
from typing import Any

import polars as pl

from ..i18n import catalog, fmt_date
from .bands import text as relief_text
from .report import chart_svg, html_report  # noqa: F401  (the runner writes the page)

# the workbook's sheets, in order; their names in words are in the catalogs'
# [workbook.compare_sheets] (an Excel sheet name: at most 31 characters)
SHEETS = ("summary", "transitions", "changed_members", "eligibility_shifts", "amount_changes",
          "fiscal_years", "sensitivity", "band_counts", "bands", "payer_counts", "payers")
# the band and payer tables' sheets (bands.py): names in [compare_relief.sheets]
RELIEF_SHEETS = ("band_counts", "bands", "payer_counts", "payers")
# the workbook's columns whose values are codes the catalogs put in words
CODED = ("status", "regime", "route", "reasons")
# columns left to the CSV/Parquet tables: a code with no words of its own
# (the rule that explains a change, and its explanation, are in words beside it)
FILE_ONLY = ("finding_condition",)
# what the changed members' table carries for the workbook's starts in words
# only (`starts_in_words`); the CSV/Parquet tables keep `start_date_a/_b` as
# ISO dates and leave these out
START_HIDDEN = ("_requested_start_date", "_premature_request_a", "_premature_request_b")


def summary_frame(items: Iterable[tuple[str, Any]]) -> pl.DataFrame:
    rows = list(items)
    return pl.DataFrame({"item": [k for k, _ in rows],
                         "value": [("" if v is None else str(v)) for _, v in rows]},
                        schema={"item": pl.String, "value": pl.String})


def for_file(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.drop([c for c in START_HIDDEN if c in frame.columns])


def starts_in_words(frame: pl.DataFrame, as_of: date, lang: str) -> pl.DataFrame:
    """The changed members' start under A and under B as the determination's
    start row says it (render.say_start, rules §5 Decision): a past start is
    said as asked for, a premature request as premature, never a bare past
    date in a date cell; "—" for a member not entitled on that side."""
    from ..render import say_start

    if not all(c in frame.columns for c in START_HIDDEN):
        return for_file(frame)
    requested = frame["_requested_start_date"].to_list()
    said = {}
    for side in ("a", "b"):
        said[f"start_date_{side}"] = pl.Series(f"start_date_{side}", [
            "—" if status == "not_entitled" else say_start(
                lang, status=status, premature=bool(premature), requested=req, start=start,
                eligibility=eligibility, as_of=as_of)
            for status, premature, req, start, eligibility in zip(
                frame[f"status_{side}"].to_list(), frame[f"_premature_request_{side}"].to_list(),
                requested, frame[f"start_date_{side}"].to_list(),
                frame[f"eligibility_date_{side}"].to_list(), strict=True)], dtype=pl.String)
    return for_file(frame.with_columns(*said.values()))


def json_bytes(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n").encode()


def _chart(book: Any, sheet: str, chart_sheet: str, frame: pl.DataFrame, summary: Any,
           valuation: date, projected: bool, lang: str) -> None:
    """The payments of A and B by fiscal year as columns, on a page of its own
    (the TOTAL row not charted)."""
    from ..workbook import partial_note
    from .report import fiscal_year_text

    a, b = summary.rules_a, summary.rules_b
    words = catalog(lang)["compare_report"]["chart"]
    last = frame.height - 1  # rows 1..last are years
    cols = frame.columns
    chart = book.wb.add_chart({"type": "column"})
    for col, colour, side, r in (("payments_a", "#1f4e79", "A", a),
                                 ("payments_b", "#c55a11", "B", b)):
        c = cols.index(col)
        chart.add_series({"name": words["legend"].format(side=side, name=r.name),
                          "categories": [sheet, 1, 0, last, 0],
                          "values": [sheet, 1, c, last, c],
                          "fill": {"color": colour}, "gap": 40})
    chart.set_title({"name": words["title"]})
    chart.set_x_axis({"name": words["x"], "num_font": {"rotation": -45},
                      "interval_unit": max(1, last // 30)})
    chart.set_y_axis({"name": words["y"], "num_format": "#,##0"})
    chart.set_legend({"position": "top"})
    first = frame["fiscal_year"][0]
    book.chart_sheet(chart_sheet, chart, partial_note(
        fiscal_year_text(first, lang), int(first[2:]), valuation, lang) if projected else None)


def workbook(tables: dict[str, pl.DataFrame], assumptions: dict[str, Any], summary,
             lang: str = "en") -> bytes:
    """One sheet per table, laid out to print (diferida/workbook.py), for
    people, in `lang`: the summary in words with its values as numbers (and
    each item's key), every table under headers in words with its coded
    values in words (`for_people`), dates as date cells in the language's
    format, the chart of the fiscal years on a page of its own, the
    assumptions in words, and last the column names of the CSV/Parquet
    tables beside each header."""
    from ..workbook import Book, fiscal_period
    from .report import Values, assumption_rows, column_label, summary_label

    w = catalog(lang)["workbook"]
    names = {**w["compare_sheets"], **relief_text(lang)["sheets"]}
    a, b = summary.rules_a, summary.rules_b
    # the page header names the rules; their versions are in the summary and
    # the assumptions (with them, the header ran over two lines into the table)
    book = Book(lang, w["compare_title"], w["subtitle_compare"].format(
        date=fmt_date(summary.as_of, lang), a=a.name, b=b.name), date_format=w["date_format"])
    values = Values(a, b, lang)
    keys: list[tuple[str, str, str]] = []  # (sheet, header, column in the files)
    for name in SHEETS:
        if name not in tables:
            continue
        frame, sheet = tables[name], names[name]
        if name == "summary":
            rows = [(summary_label(k, lang), _typed(k, v, summary, lang))
                    for k, v in summary.items()]
            ws = book.pairs(sheet, (w["item"], w["value"]), rows, label_width=SUMMARY_WIDTHS[0],
                            value_width=SUMMARY_WIDTHS[1],
                            keys=[k for k, _ in summary.items()],
                            key_head=w["summary_sheet_item"])
            # printed: the items in words and their values (the keys are for programs)
            ws.print_area(0, 0, len(rows), 1)
            keys += [(sheet, w["summary_sheet_item"], "item"), (sheet, w["value"], "value")]
            continue
        if name == "changed_members":
            frame = starts_in_words(frame, summary.as_of, lang)
            # the columns of the printed page first (print_changed_members)
            frame = frame.select([c for c in PRINTED if c in frame.columns]
                                 + [c for c in frame.columns if c not in PRINTED + LONG]
                                 + [c for c in LONG if c in frame.columns])
        shown = for_people(frame, values)
        heads = {c: column_label(c, lang) for c in shown.columns}
        keys += [(sheet, heads[c], c) for c in shown.columns]
        shown = shown.rename(heads)
        valuation = summary.as_of
        if name == "fiscal_years" and "projection" in assumptions and frame.height:
            valuation = date.fromisoformat(assumptions["projection"]["valuation_date"])
            years = [int(y[2:]) for y in frame["fiscal_year"].to_list()[:-1]]
            periods: list[str | None] = [fiscal_period(y, valuation, lang, written=True)
                                         for y in years]
            periods.append(w["period_total"].format(
                start=fmt_date(valuation, lang), end=fmt_date(date(years[-1], 6, 30), lang))
                if years else None)
            shown = shown.with_columns(pl.Series(w["period_heading"], periods, dtype=pl.String))
        wrap_over, widths = _layout(name, shown, heads, w, lang)
        ws = book.table(sheet, shown, total_last=name in ("fiscal_years", "band_counts",
                                                          "payer_counts"), widths=widths,
                        wrap_over=wrap_over,
                        percent=tuple(heads[c] for c in ("discount_shift", "cola")
                                      if c in heads))
        header_height(ws, shown.columns, widths)
        if name == "changed_members":
            print_changed_members(ws, shown.height, sum(c in frame.columns for c in PRINTED),
                                  w)
        elif name in ("fiscal_years", "sensitivity", "bands", "payers"):
            print_in_blocks(ws, [widths[c] for c in shown.columns],
                            _groups(name, frame.columns, shown.width))

        if name == "fiscal_years" and frame.height > 1:
            _chart(book, sheet, names["chart"], frame, summary, valuation,
                   "projection" in assumptions, lang)
    book.pairs(names["assumptions"], (w["item"], w["value"]),
               assumption_rows(assumptions, summary, lang), value_width=ASSUMPTIONS_WIDTH)
    book.table(names["keys"], pl.DataFrame(
        keys, schema={w["keys_sheet"]: pl.String, w["keys_header"]: pl.String,
                      w["keys_column"]: pl.String}, orient="row"))
    return book.data()


# ---- printing -----------------------------------------------------------------
#
# Every sheet prints landscape on Letter (diferida/workbook.py). Two kinds of
# sheet would print too small to read if fitted to one page wide:
# * the changed members (27 columns, a row per member): their printed page
#   is a summary, the first PRINTED_ROWS members with the PRINTED columns
#   (who moves, by how much, and the rule that explains it; their statuses
#   are counted on the "Status and route" sheet), the footer saying so; the
#   whole listing stays in the sheet, outside the print area, a member a
#   line (the long texts, the starts in words and the explanations, are the
#   last columns, unwrapped, each whole in its cell);
# * the fiscal years and the sensitivity grid (A, B and B - A of each
#   measure): printed at PRINT_SCALE % in blocks of whole measures, as many
#   as fit a page across, the first column repeated on each page.

# the changed members' printed columns, in this order (the sheet's first columns)
PRINTED = ("row", "participant_id", "eligibility_date_a", "eligibility_date_b",
           "eligibility_shift_months", "annual_change", "finding_rule")
# the changed members' long texts: the sheet's last columns
LONG = ("start_date_a", "start_date_b", "finding_under_a", "finding_under_b")
PRINTED_ROWS = 35
# the summary's item and value, the assumptions' value: widths that print at
# PRINT_SCALE or larger (the value wraps, its row as tall as its lines)
SUMMARY_WIDTHS = (50, 60)
ASSUMPTIONS_WIDTH = 80
PRINT_SCALE = 80
# a landscape Letter page less the margins (0.4 in each side), in inches
PAGE_INCHES = 11 - 0.8
# long dates in words ("September 30, 2037", "30 de septiembre de 2037")
DATE_WIDTH = {"es": 28, "en": 22}
TEXT_WRAP = 45  # texts longer than this wrap in their column (not the changed members')
NO_WRAP = 1 << 20


def column_inches(width: float) -> float:
    """A column's printed width, at most a tenth of an inch a character (the
    widest of the fonts LibreOffice prints the default font with)."""
    return (width + 1) / 10


def _layout(name: str, shown: pl.DataFrame, heads: dict[str, str], w: dict[str, Any],
            lang: str) -> tuple[int, dict[str, int]]:
    """(the length over which a text wraps, every column's width) for a table
    sheet: long dates wide enough for their words, the changed members a
    line each, the fiscal years' period on one line."""
    from ..workbook import fit_width

    wrap_over = NO_WRAP if name == "changed_members" else TEXT_WRAP
    widths = {}
    for c, head in heads.items():
        if c.startswith("finding_under"):
            widths[head] = 60
        elif c.startswith("start_date_"):
            widths[head] = TEXT_WRAP
        elif shown.schema[head] == pl.Date:
            widths[head] = DATE_WIDTH[lang]
    if name == "fiscal_years" and w["period_heading"] in shown.columns:
        # every period on one line, the first (partial) one too: a wrapped
        # text would stand above its year's figures
        longest = int(shown[w["period_heading"]].str.len_chars().max() or 0)
        wrap_over = longest + 1
        widths[w["period_heading"]] = longest + 2
    for c in shown.columns:
        if c in widths:
            continue
        widths[c] = fit_width(shown, c, min(wrap_over, TEXT_WRAP))
        kind = shown.schema[c]
        if name in ("fiscal_years", "sensitivity", "bands", "payers", "band_counts",
                    "payer_counts") and (isinstance(kind, pl.Decimal)
                                                         or kind.is_numeric()):
            # a figure's column as wide as its figures, its header on up to three lines
            top = shown[c].cast(pl.Float64).abs().max()
            figures = len(f"{top if isinstance(top, float) else 0.0:,.2f}") + 3
            words_ = max((len(x) for x in c.split()), default=0) + 2
            widths[c] = max(8, figures, words_, -(-len(c) // 3) + 2)
    return wrap_over, widths


def header_height(ws: Any, heads: list[str], widths: dict[str, int]) -> None:
    """The header row as tall as its most wrapped header (words wrapped at
    the column's width), so that no header loses a line."""
    most = 1
    for head in heads:
        room, lines, used = max(1, widths[head] - 2), 1, 0
        for word in head.split():
            if used and used + 1 + len(word) > room:
                lines, used = lines + 1, len(word)
            else:
                used += len(word) + (1 if used else 0)
        most = max(most, lines)
    ws.set_row(0, 15 * most)


def print_changed_members(ws: Any, total: int, k: int, w: dict[str, Any]) -> None:
    """The changed members' printed page: the first PRINTED_ROWS members,
    the first `k` columns (PRINTED), on one page; the footer says how many of
    how many are printed and that every member and column is in the sheet."""
    n = min(total, PRINTED_ROWS)
    ws.print_area(0, 0, n, k - 1)
    ws.fit_to_pages(1, 1)
    note = (w["compare_printed_first"].format(shown=f"{n:,}", total=f"{total:,}")
            if total > n else w["compare_printed_all"].format(total=f"{total:,}"))
    page = w["page"].replace("&", "&&").replace("{page}", "&P").replace("{pages}", "&N")
    ws.set_footer(f"&L{note.replace('&', '&&')}&R{page}", {"margin": 0.3})


def _groups(name: str, columns: list[str], width: int) -> list[list[int]]:
    """The sheet's columns (by index) in the blocks printed together: the
    first column alone (repeated on every page); for the sensitivity grid the
    scenario's options; then each measure's A, B and B - A; a last column
    with no side (the fiscal years' period) on its own."""
    groups: list[list[int]] = [[0]]
    i = 1
    if name in ("bands", "payers"):  # the fiscal year and the band (payer) together
        groups, i = [[0, 1]], 2
    if name == "sensitivity":
        opts = [j for j, c in enumerate(columns) if j > 0 and not c.endswith(
            ("_a", "_b", "_difference"))]
        groups.append(opts)
        i = max(opts, default=0) + 1
    sided = [j for j in range(i, len(columns)) if columns[j].endswith(("_a", "_b",
                                                                       "_difference"))]
    if name == "fiscal_years":
        # pensions starting and payments together, then each present value
        starts = [j for j in sided if columns[j].startswith("starts_")]
        pay = [j for j in sided if columns[j].startswith("payments_")]
        groups.append(starts + pay)
        sided = [j for j in sided if j not in starts and j not in pay]
    for k in range(0, len(sided), 3):
        groups.append(sided[k:k + 3])
    groups += [[j] for j in range(len(columns), width)]  # the period, added for people
    return [g for g in groups if g]


def print_in_blocks(ws: Any, widths: list[float], groups: list[list[int]]) -> None:
    """Print at PRINT_SCALE %, the blocks of columns `groups[1:]` packed into
    as few pages across as fit, a page break between pages, the first block
    (the row's name) repeated on each page."""
    room = PAGE_INCHES * 100 / PRINT_SCALE
    first = sum(column_inches(widths[j]) for j in groups[0])
    breaks, used = [], first
    for g in groups[1:]:
        need = sum(column_inches(widths[j]) for j in g)
        if used > first and used + need > room:
            breaks.append(g[0])
            used = first
        used += need
    ws.set_print_scale(PRINT_SCALE)
    ws.set_v_pagebreaks(breaks)
    ws.repeat_columns(groups[0][0], groups[0][-1])


def for_people(frame: pl.DataFrame, values: Any) -> pl.DataFrame:
    """A table of the comparison as the workbook shows it: each coded value
    (statuses, regimes, routes, reasons, how a date moves, the bins of the
    amount changes, the fiscal years, yes/no) in words by `report.Values`,
    each distinct value written once; dates, money and counts kept as they
    are (the workbook stores them as dates and numbers); the columns with
    no words of their own (FILE_ONLY) left to the CSV/Parquet tables."""
    from .report import _SIDED

    out = []
    for col in frame.columns:
        if col in FILE_ONLY:
            continue
        s = frame.get_column(col)
        m = _SIDED.match(col)
        base = m["base"] if m else col
        if base in CODED or col in ("shift", "change", "fiscal_year", "scenario", "band",
                                    "employer") \
                or s.dtype == pl.Boolean:
            seen = s.unique().to_list()
            said = {v: values.text(col, v) for v in seen}
            out.append(pl.Series(col, [said[v] for v in s.to_list()], dtype=pl.String))
        else:
            out.append(s)
    return pl.DataFrame(out, schema={s.name: s.dtype for s in out}) if out else frame.clear()


def _typed(item: str, v: Any, summary, lang: str) -> Any:
    """A summary value as the workbook stores it: money and counts as
    numbers, the date as a date, the rest as text (a note in words)."""
    if item == "as_of":
        return summary.as_of
    if item == "valuation_date":
        return summary.valuation_date
    if item.endswith("_note"):
        return catalog(lang)["compare_report"]["summary"]["note_illustrative"]
    if v is None:
        return "—"
    return v
