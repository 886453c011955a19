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
from .report import chart_svg, html_report  # noqa: F401  (the runner writes the page)

# the workbook's sheets, in order; their names in words are in the catalogs'
# [workbook.compare_sheets] (an Excel sheet name: at most 31 characters)
SHEETS = ("summary", "transitions", "changed_members", "eligibility_shifts", "amount_changes",
          "fiscal_years", "sensitivity")
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


def workbook(tables: dict[str, pl.DataFrame], assumptions: dict[str, Any], summary,
             lang: str = "en") -> bytes:
    """One sheet per table, laid out to print (diferida/workbook.py), for
    people, in `lang`: the summary in words with its values as numbers (and
    each item's key), every table under headers in words with its coded
    values in words (`for_people`), dates as date cells in the language's
    format, the chart of the fiscal years on a page of its own, the
    assumptions in words, and last the column names of the CSV/Parquet
    tables beside each header."""
    from ..workbook import Book, fiscal_period, partial_note
    from .report import Values, assumption_rows, column_label, fiscal_year_text, summary_label

    w = catalog(lang)["workbook"]
    names = w["compare_sheets"]
    a, b = summary.rules_a, summary.rules_b
    book = Book(lang, w["compare_title"], w["subtitle_compare"].format(
        date=fmt_date(summary.as_of, lang),
        a=w["rules"].format(name=a.name, version=a.version),
        b=w["rules"].format(name=b.name, version=b.version)), date_format=w["date_format"])
    values = Values(a, b, lang)
    keys: list[tuple[str, str, str]] = []  # (sheet, header, column in the files)
    for name in SHEETS:
        if name not in tables:
            continue
        frame, sheet = tables[name], names[name]
        if name == "summary":
            rows = [(summary_label(k, lang), _typed(k, v, summary, lang))
                    for k, v in summary.items()]
            book.pairs(sheet, (w["item"], w["value"]), rows,
                       keys=[k for k, _ in summary.items()], key_head=w["summary_sheet_item"])
            keys += [(sheet, w["summary_sheet_item"], "item"), (sheet, w["value"], "value")]
            continue
        if name == "changed_members":
            frame = starts_in_words(frame, summary.as_of, lang)
        shown = for_people(frame, values)
        heads = {c: column_label(c, lang) for c in shown.columns}
        keys += [(sheet, heads[c], c) for c in shown.columns]
        shown = shown.rename(heads)
        valuation = summary.as_of
        if name == "fiscal_years" and "projection" in assumptions and frame.height:
            valuation = date.fromisoformat(assumptions["projection"]["valuation_date"])
            years = [int(y[2:]) for y in frame["fiscal_year"].to_list()[:-1]]
            periods = [fiscal_period(y, valuation, lang, written=True) for y in years]
            periods.append(w["period_total"].format(
                start=fmt_date(valuation, lang), end=fmt_date(date(years[-1], 6, 30), lang))
                if years else None)
            shown = shown.with_columns(pl.Series(w["period_heading"], periods, dtype=pl.String))
        book.table(sheet, shown, total_last=name == "fiscal_years",
                   widths={heads[c]: 60 if c.startswith("finding_under") else 40
                           for c in heads if c.startswith(("finding_under", "start_date_"))},
                   percent=tuple(heads[c] for c in ("discount_shift", "cola") if c in heads))
        if name == "fiscal_years" and frame.height > 1:
            last = frame.height - 1  # rows 1..last are years; the TOTAL row is not charted
            cols = frame.columns
            chart = book.wb.add_chart({"type": "column"})
            legend = catalog(lang)["compare_report"]["chart"]["legend"]
            for col, colour, side, r in (("payments_a", "#1f4e79", "A", a),
                                         ("payments_b", "#c55a11", "B", b)):
                c = cols.index(col)
                chart.add_series({"name": legend.format(side=side, name=r.name),
                                  "categories": [sheet, 1, 0, last, 0],
                                  "values": [sheet, 1, c, last, c],
                                  "fill": {"color": colour}, "gap": 40})
            chart.set_title({"name": catalog(lang)["compare_report"]["chart"]["title"]})
            chart.set_x_axis({"name": catalog(lang)["compare_report"]["chart"]["x"],
                              "num_font": {"rotation": -45},
                              "interval_unit": max(1, last // 30)})
            chart.set_y_axis({"name": catalog(lang)["compare_report"]["chart"]["y"],
                              "num_format": "#,##0"})
            chart.set_legend({"position": "top"})
            first = frame["fiscal_year"][0]
            book.chart_sheet(names["chart"], chart, partial_note(
                fiscal_year_text(first, lang), int(first[2:]), valuation, lang)
                if "projection" in assumptions else None)
    book.pairs(names["assumptions"], (w["item"], w["value"]),
               assumption_rows(assumptions, summary, lang))
    book.table(names["keys"], pl.DataFrame(
        keys, schema={w["keys_sheet"]: pl.String, w["keys_header"]: pl.String,
                      w["keys_column"]: pl.String}, orient="row"))
    return book.data()


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
        if base in CODED or col in ("shift", "change", "fiscal_year", "scenario") \
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
