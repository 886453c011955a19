"""The projection's outputs: the fiscal-year table (CSV, Parquet, or .xlsx
with a native chart and an assumptions sheet), the per-member file, the
assumptions sidecar and the chart picture (PNG or SVG, with matplotlib)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from datetime import date
from typing import Any

import numpy as np
import polars as pl

from ..i18n import LANGS, catalog, fmt_date
from .engine import Projection

MONEY = pl.Decimal(20, 2)
HEADERS = {lang: catalog(lang)["project_headers"] for lang in LANGS}  # i18n/<lang>/cli.toml
PICTURES = {".png": "png", ".svg": "svg"}


def cents(x: np.ndarray) -> np.ndarray:
    """Float cents rounded half up to whole cents (the values are never negative)."""
    return np.floor(np.asarray(x, dtype=np.float64) + 0.5).astype(np.int64)


def money(name: str, whole_cents: np.ndarray | list[int]) -> pl.Series:
    s = pl.Series(name, whole_cents, dtype=pl.Int64)
    return (s.cast(MONEY) / 100).cast(MONEY)


def table_frame(p: Projection, labels: list[str], lang: str) -> pl.DataFrame:
    """One row per fiscal year, then TOTAL (sums of the rows shown, so the
    column adds up to the cent)."""
    h = HEADERS[lang]
    pay = cents(p.payments)
    pvs = [cents(p.pv[i]) for i in range(len(labels))]
    names = [f"{h['fy']}{y}" for y in p.fiscal_years] + [h["total"]]
    cols: dict[str, pl.Series] = {
        h["fiscal_year"]: pl.Series(h["fiscal_year"], names, dtype=pl.String),
        h["starts"]: pl.Series(h["starts"],
                               [*p.starts.tolist(), np.round(p.starts.sum(), 2).item()],
                               dtype=pl.Int64 if p.starts.dtype.kind == "i" else pl.Float64),
        h["members_in_pay"]: pl.Series(h["members_in_pay"],
                                       [*np.round(p.in_pay, 2).tolist(), None],
                                       dtype=pl.Float64),
        h["payments"]: money(h["payments"], [*pay.tolist(), int(pay.sum())]),
    }
    for label, v in zip(labels, pvs, strict=True):
        name = f"{h['pv']}{label}"
        cols[name] = money(name, [*v.tolist(), int(v.sum())])
    return pl.DataFrame(list(cols.values()))


def member_frame(ids: pl.Series, status: pl.Series, start: pl.Series, monthly: pl.Series,
                 p: Projection, labels: list[str], lang: str) -> pl.DataFrame:
    h = HEADERS[lang]
    first = pl.Series(h["first_payment"], p.first_payment, dtype=pl.Int64)
    cols = [
        ids.alias(h["participant_id"]), status.alias(h["status"]),
        start.alias(h["start_date"]),
        pl.select(pl.when(first >= 0).then(first).cast(pl.Int32).cast(pl.Date)
                  .alias(h["first_payment"])).to_series(),
        monthly.alias(h["monthly_amount"]),
        money(h["payments"], cents(p.member_payments)),
        *[money(f"{h['pv']}{label}", cents(p.member_pv[i])) for i, label in enumerate(labels)],
    ]
    return pl.DataFrame(cols)


def workbook(table: pl.DataFrame, assumptions: dict[str, Any], lang: str,
             more_sheets: Callable[[Any], None] | None = None) -> bytes:
    """The table (with the days each fiscal year covers, the first one
    labelled when partial), a native column chart of payments by fiscal
    year on a page of its own, and the assumptions in words; laid out to
    print (diferida/workbook.py). `more_sheets(book)` adds the valuation's
    own sheets after them (with `Book.table`)."""
    from ..workbook import Book, fiscal_period, partial_note
    from .statement import rules_text, statement

    h = HEADERS[lang]
    w = catalog(lang)["workbook"]
    a = assumptions["assumptions"]
    valuation = date.fromisoformat(a["valuation_date"])
    subtitle = w["subtitle"].format(date=fmt_date(valuation, lang),
                                    rules=rules_text(a["rules"], lang))
    book = Book(lang, w["project_title"], subtitle)
    years = [int(y[len(h["fy"]):]) for y in table[h["fiscal_year"]].to_list()[:-1]]
    periods: list[str | None] = [fiscal_period(y, valuation, lang) for y in years]
    if years:
        periods.append(w["period_total"].format(start=valuation.isoformat(),
                                                end=date(years[-1], 6, 30).isoformat()))
    else:
        periods.append(None)
    shown = table.with_columns(pl.Series(w["period_column"], periods, dtype=pl.String))
    book.table(h["sheet"], shown, total_last=True)
    last = table.height - 1
    if last > 0:
        pay_col = table.columns.index(h["payments"])
        chart = book.wb.add_chart({"type": "column"})
        chart.add_series({
            "name": h["payments"],
            "categories": [h["sheet"], 1, 0, last, 0],
            "values": [h["sheet"], 1, pay_col, last, pay_col],
            "fill": {"color": "#1f4e79"}, "gap": 30,
        })
        chart.set_title({"name": h["chart_title"]})
        chart.set_x_axis({"name": h["chart_x"], "num_font": {"rotation": -45},
                          "interval_unit": max(1, last // 30)})
        chart.set_y_axis({"name": h["chart_y"], "num_format": "#,##0"})
        chart.set_legend({"none": True})
        book.chart_sheet(w["chart_sheet"], chart,
                         partial_note(f"{h['fy']}{years[0]}", years[0], valuation, lang))
    book.pairs(h["assumptions"], (w["item"], w["value"]), statement(assumptions, lang))
    if more_sheets is not None:
        more_sheets(book)
    return book.data()


def picture(table: pl.DataFrame, kind: str, lang: str, subtitle: str) -> bytes:
    """The chart of payments by fiscal year as PNG or SVG (matplotlib, no display)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure

    from ..axes import round_axis

    h = HEADERS[lang]
    body = table.slice(0, table.height - 1)
    years = body[h["fiscal_year"]].to_list()
    pay = [float(v) for v in body[h["payments"]].to_list()]
    fig = Figure(figsize=(11, 4.8), dpi=100)
    ax = fig.add_subplot()
    ax.bar(range(len(years)), pay, color="#1f4e79", width=0.75)
    step = max(1, len(years) // 20)
    ax.set_xticks(range(0, len(years), step), years[::step], rotation=45, ha="right",
                  fontsize=8)
    unit = round_axis(ax, pay)
    ax.set_ylabel(h["chart_y"] + (catalog(lang)["workbook"][f"unit_{unit}"] if unit else ""))
    ax.set_xlabel(h["chart_x"])
    ax.set_title(h["chart_title"], fontsize=12)
    fig.text(0.5, 0.005, subtitle, ha="center", fontsize=8, color="#444444")
    ax.grid(axis="y", color="#dddddd")
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    buf = io.BytesIO()
    # no timestamps in the files: the same run gives the same bytes
    meta = {"png": {"Software": None}, "svg": {"Date": None}}[kind]
    fig.savefig(buf, format=kind, metadata=meta)
    return buf.getvalue()


def sidecar_json(assumptions: dict[str, Any]) -> bytes:
    return (json.dumps(assumptions, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
