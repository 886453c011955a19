"""The comparison's outputs: a workbook (a sheet per table, a native chart of
the fiscal years), CSV/Parquet tables, the assumptions as JSON, and a
self-contained HTML report in Spanish or English (report.py: the chart
embedded as SVG; no external assets). The tables keep their
machine-readable column names; only the HTML report puts them in words."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import date
from typing import Any

import polars as pl

from ..i18n import catalog, fmt_date
from .report import chart_svg, html_report  # noqa: F401  (the runner writes the page)

SHEETS = {"summary": "summary", "transitions": "transitions",
          "changed_members": "changed members", "eligibility_shifts": "eligibility shifts",
          "amount_changes": "amount changes", "fiscal_years": "fiscal years"}


def summary_frame(items: Iterable[tuple[str, Any]]) -> pl.DataFrame:
    rows = list(items)
    return pl.DataFrame({"item": [k for k, _ in rows],
                         "value": [("" if v is None else str(v)) for _, v in rows]},
                        schema={"item": pl.String, "value": pl.String})


def for_file(frame: pl.DataFrame) -> pl.DataFrame:
    return frame


def json_bytes(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n").encode()


def workbook(tables: dict[str, pl.DataFrame], assumptions: dict[str, Any], summary,
             lang: str = "en") -> bytes:
    """One sheet per table, laid out to print (diferida/workbook.py): the
    summary in words with its values as numbers (and each item's key), the
    tables under their machine-readable column names, the chart of the
    fiscal years on a page of its own, the assumptions in words."""
    from ..workbook import Book, fiscal_period, partial_note
    from .report import assumption_rows, summary_label

    w = catalog(lang)["workbook"]
    a, b = summary.rules_a, summary.rules_b
    book = Book(lang, w["compare_title"], w["subtitle_compare"].format(
        date=fmt_date(summary.as_of, lang),
        a=w["rules"].format(name=a.name, version=a.version),
        b=w["rules"].format(name=b.name, version=b.version)))
    for name, frame in tables.items():
        sheet = SHEETS[name]
        if name == "summary":
            rows = [(summary_label(k, lang), _typed(k, v, summary)) for k, v in summary.items()]
            book.pairs(sheet, (w["item"], w["value"]), rows,
                       keys=[k for k, _ in summary.items()], key_head=w["summary_sheet_item"])
            continue
        shown = frame
        valuation = summary.as_of
        if name == "fiscal_years" and "projection" in assumptions and frame.height:
            valuation = date.fromisoformat(assumptions["projection"]["valuation_date"])
            years = [int(y[2:]) for y in frame["fiscal_year"].to_list()[:-1]]
            periods = [fiscal_period(y, valuation, lang) for y in years]
            periods.append(w["period_total"].format(start=valuation.isoformat(),
                                                    end=date(years[-1], 6, 30).isoformat())
                           if years else None)
            shown = frame.with_columns(pl.Series(w["period_column"], periods, dtype=pl.String))
        book.table(sheet, shown, total_last=name == "fiscal_years",
                   widths={c: 60 for c in frame.columns if c.startswith("finding_under")})
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
            book.chart_sheet(w["chart_sheet"], chart, partial_note(
                first, int(first[2:]), valuation, lang) if "projection" in assumptions else None)
    book.pairs("assumptions", (w["item"], w["value"]),
               assumption_rows(assumptions, summary, lang))
    return book.data()


def _typed(item: str, v: Any, summary) -> Any:
    """A summary value as the workbook stores it: money and counts as
    numbers, the date as a date, the rest as text."""
    if item == "as_of":
        return summary.as_of
    if item.endswith("_note"):
        return str(v)
    if v is None:
        return "—"
    return v
