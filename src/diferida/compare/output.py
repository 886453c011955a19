"""The comparison's outputs: a workbook (a sheet per table, a native chart of
the fiscal years), CSV/Parquet tables, the assumptions as JSON, and a
self-contained HTML report (the chart embedded as SVG; no external assets)."""

from __future__ import annotations

import html
import io
import json
from collections.abc import Iterable
from datetime import date
from decimal import Decimal
from typing import Any

import polars as pl

from ..batch.io import Sink
from ..projection.output import assumptions_rows

SHEETS = {"summary": "summary", "transitions": "transitions",
          "changed_members": "changed members", "eligibility_shifts": "eligibility shifts",
          "amount_changes": "amount changes", "fiscal_years": "fiscal years"}


class BytesSink(Sink):
    """An output made whole in memory (a workbook, JSON, a page), written to
    the temporary file when completed."""

    def __init__(self, path, overwrite: bool):
        super().__init__(path, overwrite)
        self.data: bytes | None = None

    def _close(self) -> None:
        if self.data is not None:
            data, self.data = self.data, None
            self.tmp.write_bytes(data)


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, Decimal):
        return f"{v:,.2f}" if v.as_tuple().exponent == -2 else str(v)
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


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


def chart_svg(fiscal: pl.DataFrame, subtitle: str) -> str:
    """Payments by fiscal year under A and B, and B - A, as an SVG (matplotlib)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    body = fiscal.filter(pl.col("fiscal_year") != "TOTAL")
    years = body["fiscal_year"].to_list()
    a = [float(v) for v in body["payments_a"].to_list()]
    b = [float(v) for v in body["payments_b"].to_list()]
    d = [float(v) for v in body["payments_difference"].to_list()]
    fig = Figure(figsize=(11, 5.6), dpi=100)
    ax, ax2 = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1.3]})
    x = list(range(len(years)))
    ax.bar([i - 0.2 for i in x], a, width=0.4, color="#1f4e79", label="rules A")
    ax.bar([i + 0.2 for i in x], b, width=0.4, color="#c55a11", label="rules B")
    ax.legend(frameon=False)
    ax2.bar(x, d, color=["#2e7d32" if v < 0 else "#b71c1c" for v in d], width=0.75)
    ax2.axhline(0, color="#444444", linewidth=0.8)
    peak = max([*a, *b, *[abs(v) for v in d]], default=0)
    scale, unit = (1e6, " M") if peak >= 1e6 else (1.0, "")
    for axis in (ax, ax2):
        axis.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / scale:,.0f}{unit}"))
        axis.grid(axis="y", color="#dddddd")
        axis.set_axisbelow(True)
        for side in ("top", "right"):
            axis.spines[side].set_visible(False)
    step = max(1, len(years) // 20)
    ax2.set_xticks(x[::step], years[::step], rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("payments (USD)")
    ax2.set_ylabel("B - A")
    ax2.set_xlabel("fiscal year")
    ax.set_title("Expected deferred pension payments by fiscal year", fontsize=12)
    fig.text(0.5, 0.005, subtitle, ha="center", fontsize=8, color="#444444")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    svg = buf.getvalue()
    return svg[svg.index("<svg"):]


_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;
max-width:72rem;padding:0 1rem;color:#1b1b1b;line-height:1.45}
h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f2f2f2}
.note{background:#fff4e5;border-left:4px solid #c55a11;padding:.5rem 1rem}
figure{margin:1rem 0}svg{max-width:100%;height:auto}
@media print{body{margin:0}h2{break-after:avoid}}
"""


def _table(frame: pl.DataFrame, limit: int | None = None) -> str:
    cols = frame.columns
    shown = frame.head(limit) if limit is not None else frame
    out = ["<table><thead><tr>", *[f"<th scope=col>{html.escape(c)}</th>" for c in cols],
           "</tr></thead><tbody>"]
    for row in shown.iter_rows():
        out.append("<tr>")
        for v in row:
            cls = ' class="n"' if isinstance(v, int | float | Decimal) and \
                not isinstance(v, bool) else ""
            out.append(f"<td{cls}>{html.escape(_text(v))}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    if limit is not None and frame.height > limit:
        out.append(f"<p>The first {limit:,} of {frame.height:,} rows; every row is in the "
                   "workbook or the tables.</p>")
    return "".join(out)


def html_report(tables: dict[str, pl.DataFrame], assumptions: dict[str, Any], summary,
                lang: str, changed_rows: int = 200) -> bytes:
    """One page, no external assets: the summary, the tables, the chart."""
    a, b = summary.rules_a, summary.rules_b
    e = html.escape
    parts = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        "<meta name=viewport content='width=device-width,initial-scale=1'>",
        f"<title>Comparison: {e(a.name)} and {e(b.name)}</title><style>{_STYLE}</style>",
        "</head><body>",
        f"<h1>Who changes under {e(b.name)} instead of {e(a.name)}</h1>",
        f"<p>Members of <code>{e(summary.input)}</code> as of {summary.as_of.isoformat()}. "
        f"Rules A: {e(a.title)} (<code>{e(a.version)}</code>). Rules B: {e(b.title)} "
        f"(<code>{e(b.version)}</code>).</p>",
    ]
    for label, r in (("A", a), ("B", b)):
        if r.illustrative:
            parts.append(f"<p class=note>Rules {label} ({e(r.name)}) are an illustrative "
                         "reform, not law.</p>")
    parts.append("<h2>Summary</h2>" + _table(tables["summary"]))
    if "fiscal_years" in tables:
        proj = assumptions.get("projection", {})
        mort = proj.get("mortality", {})
        sub = (f"Valuation date {summary.as_of.isoformat()}; mortality {mort.get('table')} "
               f"({mort.get('improvement')}); discount {', '.join(proj.get('discount_rates', []))}")
        parts.append("<h2>Fiscal years</h2><figure>" + chart_svg(tables["fiscal_years"], sub)
                     + "<figcaption>Expected payments under rules A and B (top) and their "
                     "difference B - A (bottom).</figcaption></figure>")
        parts.append(_table(tables["fiscal_years"]))
    parts.append("<h2>Transitions (status and route, A to B)</h2>"
                 + _table(tables["transitions"]))
    parts.append("<h2>Eligibility dates that move</h2>" + _table(tables["eligibility_shifts"]))
    parts.append("<h2>Annual amounts that change</h2>" + _table(tables["amount_changes"]))
    cm = tables["changed_members"]
    keep = [c for c in ("row", "participant_id", "status_a", "status_b", "route_a", "route_b",
                        "eligibility_date_a", "eligibility_date_b", "annual_amount_a",
                        "annual_amount_b", "finding_rule", "finding_under_a",
                        "finding_under_b") if c in cm.columns]
    parts.append("<h2>Changed members</h2>" + _table(cm.select(keep), changed_rows))
    rows = assumptions_rows(assumptions)
    parts.append("<h2>Assumptions</h2>" + _table(pl.DataFrame(
        {"item": [k for k, _ in rows], "value": [v for _, v in rows]})))
    parts.append("</body></html>\n")
    return "".join(parts).encode("utf-8")
