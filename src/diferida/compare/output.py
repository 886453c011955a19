"""The comparison's outputs: a workbook (a sheet per table, a native chart of
the fiscal years), CSV/Parquet tables, the assumptions as JSON, and a
self-contained HTML report in Spanish or English (report.py: the chart
embedded as SVG; no external assets). The tables keep their
machine-readable column names; only the HTML report puts them in words."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from datetime import date
from typing import Any

import polars as pl

from ..projection.output import assumptions_rows
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


def workbook(tables: dict[str, pl.DataFrame], assumptions: dict[str, Any], summary) -> bytes:
    """One sheet per table, then the assumptions; the fiscal-year sheet has
    a native column chart of the payments under A and under B."""
    import xlsxwriter

    buf = io.BytesIO()
    wb = xlsxwriter.Workbook(buf, {"in_memory": True})
    head = wb.add_format({"bold": True, "bottom": 1, "text_wrap": True, "valign": "top"})
    money_fmt = wb.add_format({"num_format": "#,##0.00"})
    count_fmt = wb.add_format({"num_format": "#,##0"})
    date_fmt = wb.add_format({"num_format": "yyyy-mm-dd"})
    wrap = wb.add_format({"text_wrap": True, "valign": "top"})
    for name, frame in tables.items():
        ws = wb.add_worksheet(SHEETS[name])
        _sheet(ws, frame, head, money_fmt, count_fmt, date_fmt, wrap)
        if name == "fiscal_years" and frame.height > 1:
            last = frame.height - 1  # rows 1..last are years; the TOTAL row is not charted
            cols = frame.columns
            chart = wb.add_chart({"type": "column"})
            for col, colour in (("payments_a", "#1f4e79"), ("payments_b", "#c55a11")):
                c = cols.index(col)
                chart.add_series({"name": [SHEETS[name], 0, c],
                                  "categories": [SHEETS[name], 1, 0, last, 0],
                                  "values": [SHEETS[name], 1, c, last, c],
                                  "fill": {"color": colour}, "gap": 40})
            chart.set_title({"name": "Expected payments by fiscal year: rules A and rules B"})
            chart.set_x_axis({"name": "fiscal year", "num_font": {"rotation": -45}})
            chart.set_y_axis({"name": "payments (USD)", "num_format": "#,##0"})
            chart.set_size({"width": 960, "height": 420})
            ws.insert_chart(1, len(cols) + 1, chart)
    wa = wb.add_worksheet("assumptions")
    wa.write_string(0, 0, "item", head)
    wa.write_string(0, 1, "value", head)
    for r, (k, v) in enumerate(assumptions_rows(assumptions), start=1):
        wa.write_string(r, 0, k)
        wa.write_string(r, 1, v)
    wa.set_column(0, 0, 40)
    wa.set_column(1, 1, 100)
    wb.close()
    return buf.getvalue()


def _sheet(ws, frame: pl.DataFrame, head, money_fmt, count_fmt, date_fmt, wrap) -> None:
    cols = frame.columns
    for c, name in enumerate(cols):
        ws.write_string(0, c, name, head)
    kinds = [frame.schema[c] for c in cols]
    for r, row in enumerate(frame.iter_rows(), start=1):
        for c, v in enumerate(row):
            if v is None:
                continue
            k = kinds[c]
            if isinstance(k, pl.Decimal):
                ws.write_number(r, c, float(v), money_fmt)
            elif k.is_integer():
                ws.write_number(r, c, v, count_fmt)
            elif k == pl.Boolean:
                ws.write_boolean(r, c, v)
            elif k == pl.Date:
                ws.write_datetime(r, c, _dt(v), date_fmt)
            else:
                # text is written as text: never a formula
                ws.write_string(r, c, str(v), wrap if len(str(v)) > 60 else None)
    for c, name in enumerate(cols):
        width = 60 if name.startswith("finding_under") else max(12, min(28, len(name) + 2))
        ws.set_column(c, c, width)
    ws.freeze_panes(1, 0)
    if frame.height:
        ws.autofilter(0, 0, frame.height, len(cols) - 1)


def _dt(d: date):
    from datetime import datetime
    return datetime(d.year, d.month, d.day)
