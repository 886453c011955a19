"""The GASB 73 parts of the valuation report, in words, once: each part a
Section (a list of (label, value) rows or a table) that the workbook
(report.workbook: one sheet each) and the printed report (pdf.py) both
show as they are. Words: i18n/<lang>/gasb73.toml."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

import polars as pl

from ..i18n import catalog, fmt_date
from ..rules import Rules
from ..words import law_words, pct
from . import gasb73
from .curve import rate_words
from .parts import ReportParts

MONEY = pl.Decimal(20, 2)


@dataclass
class Section:
    key: str  # the sheet's and the anchor's name
    title: str
    rows: list[tuple[str, Any]] | None = None  # (label, value); value None: a heading
    table: pl.DataFrame | None = None
    paragraphs: list[str] = field(default_factory=list)  # before the rows or table
    total_last: bool = False
    sheet: str = ""  # the sheet's name (at most 31 characters)
    blank: str | None = None  # what an empty cell of the table says


def _m(c: int | None) -> Decimal | None:
    return None if c is None else Decimal(int(c)).scaleb(-2).quantize(Decimal("0.01"))


def _cents_col(name: str, values: Sequence[int | None]) -> pl.Series:
    return pl.Series(name, [_m(v) for v in values], dtype=MONEY)


def words(lang: str) -> dict[str, Any]:
    return catalog(lang)["gasb73"]


def schedule(g: Any, lines: list[Any] | None, prior_date: date | None, lang: str
             ) -> Section | None:
    """The schedule of changes in GASB's layout, the project's lines beneath,
    each with the GASB line it is added to."""
    rep: gasb73.Report = g.report
    if rep.layout is None or lines is None:
        return None
    t = words(lang)
    c = catalog(lang)["liability_changes"]
    v = rep.measurement_date
    rows: list[tuple[str, Any]] = [(t["layout_heading"], None)]
    for k in gasb73.LAYOUT:
        label = t[f"layout_{k}"].format(prior=fmt_date(prior_date, lang),
                                        date=fmt_date(v, lang))
        rows.append((label, _m(rep.layout[k])))
    rows.append((t["detail_heading"], None))
    for ln in lines:
        if ln.key in ("start", "end"):
            continue
        label = c[ln.key].format(prior=fmt_date(prior_date, lang), date=fmt_date(v, lang),
                                 rate=pct(Decimal(repr(round(g.interest_rate, 6)))))
        under = t[f"layout_{gasb73.layout_key(ln.key)}"]
        rows.append((t["detail_row"].format(line=label, under=under), _m(ln.cents)))
    return Section("schedule", t["schedule_title"], rows=rows,
                   paragraphs=[t["schedule_note"]], sheet=t["sheet_schedule"])


def expense(g: Any, lang: str) -> Section:
    t = words(lang)
    rep: gasb73.Report = g.report
    paragraphs = [period_words(rep, lang)]
    if rep.expense is None:
        return Section("expense", t["expense_title"], rows=[
            (t["expense_total"], t["not_available_first"])], paragraphs=paragraphs,
            sheet=t["sheet_expense"])
    e = rep.expense
    rows = [(t[f"expense_{k}"], _m(e[k])) for k in (
        "service_cost", "interest", "benefit_terms", "other", "recognised_experience",
        "recognised_assumptions")]
    rows.append((t["expense_total"], _m(e["total"])))
    paragraphs.append(t["expense_note"])
    return Section("expense", t["expense_title"], rows=rows, paragraphs=paragraphs,
                   sheet=t["sheet_expense"])


def period_words(rep: gasb73.Report, lang: str) -> str:
    t = words(lang)
    if not rep.period_given:
        return t["period_census"]
    return t["period_given"].format(years=f"{rep.period.normalize():f}")


def deferrals(g: Any, lang: str) -> Section:
    t = words(lang)
    rep: gasb73.Report = g.report
    names = [t[f"source_{s}"] for s in gasb73.SOURCES]
    outs = [rep.deferred[s].outflows for s in gasb73.SOURCES]
    ins = [rep.deferred[s].inflows for s in gasb73.SOURCES]
    table = pl.DataFrame([
        pl.Series(t["col_source"], [*names, t["total"]], dtype=pl.String),
        _cents_col(t["col_outflows"], [*outs, sum(outs)]),
        _cents_col(t["col_inflows"], [*ins, sum(ins)]),
    ])
    return Section("deferrals", t["deferrals_title"], table=table, total_last=True,
                   paragraphs=[t["deferrals_note"].format(date=fmt_date(
                       rep.measurement_date, lang)), period_words(rep, lang)],
                   sheet=t["sheet_deferrals"])


def recognition(g: Any, lang: str) -> Section:
    t = words(lang)
    rep: gasb73.Report = g.report
    years = [t["fy"].format(year=y) if y != "later" else t["later"] for y, _ in rep.future]
    amounts = [c for _, c in rep.future]
    table = pl.DataFrame([
        pl.Series(t["col_fiscal_year"], [*years, t["total"]], dtype=pl.String),
        _cents_col(t["col_recognised"], [*amounts, sum(amounts)]),
    ])
    return Section("recognition", t["recognition_title"], table=table, total_last=True,
                   paragraphs=[t["recognition_note"]], sheet=t["sheet_recognition"])


def bases(g: Any, lang: str) -> Section:
    """Every amount being recognised: its year, source, amount, period, what
    is recognised this year and what is left."""
    t = words(lang)
    rep: gasb73.Report = g.report
    fy = rep.fy
    bs = [b for b in rep.bases if b.source in gasb73.SOURCES]
    table = pl.DataFrame([
        pl.Series(t["col_arose"], [t["fy"].format(year=b.year) for b in bs] + [t["total"]],
                  dtype=pl.String),
        pl.Series(t["col_source"], [t[f"source_{b.source}"] for b in bs] + [None],
                  dtype=pl.String),
        _cents_col(t["col_base"], [b.cents for b in bs] + [sum(b.cents for b in bs)]),
        pl.Series(t["col_period"], [f"{b.period.normalize():f}" for b in bs] + [None],
                  dtype=pl.String),
        _cents_col(t["col_this_year"].format(fy=fy),
                   [b.in_year(fy) for b in bs] + [sum(b.in_year(fy) for b in bs)]),
        _cents_col(t["col_left"], [b.left_after(fy) for b in bs]
                   + [sum(b.left_after(fy) for b in bs)]),
    ])
    return Section("bases", t["bases_title"], table=table, total_last=True,
                   paragraphs=[t["bases_note"]], sheet=t["sheet_bases"])


def ten_years(g: Any, lang: str) -> Section:
    """The required supplementary information: the last RSI_YEARS fiscal
    years, most recent first, each from its measurement kept in the history
    (this one from the report); a year not kept: not available."""
    t = words(lang)
    rep: gasb73.Report = g.report
    kept = {r["measurement_date"][:4]: r for r in rep.history}
    kept[str(rep.fy)] = g.record
    years = [rep.fy - k for k in range(gasb73.RSI_YEARS)]
    cols: list[pl.Series] = [pl.Series(t["col_line"], [
        t[f"rsi_{k}"] if k in ("start", "end") else t[f"layout_{k}"] for k in gasb73.LAYOUT],
        dtype=pl.String)]
    for y in years:
        r = kept.get(str(y))
        lay = None if r is None else r.get("layout")
        values: list[int | None] = [None] * len(gasb73.LAYOUT)
        if lay is not None:
            values = [gasb73.cents(lay[k]) for k in gasb73.LAYOUT]
        elif r is not None:  # kept without a schedule (its first year): the ending only
            values[gasb73.LAYOUT.index("end")] = gasb73.cents(r["total"])
        cols.append(_cents_col(t["fy"].format(year=y), values))
    return Section("ten_years", t["ten_years_title"].format(n=gasb73.RSI_YEARS),
                   table=pl.DataFrame(cols), paragraphs=[
                       t["ten_years_note"].format(n=gasb73.RSI_YEARS,
                                                  kept=len(rep.history) + 1),
                       t["payroll_note"]], sheet=t["sheet_ten_years"],
                   blank=t["not_available"])


def _fmt(dollars: str | None, lang: str) -> str:
    """An amount kept as dollars, written as the report writes amounts (the
    same in both languages, as in Puerto Rico: 1,234.56; a minus sign)."""
    if dollars is None:
        return "—"
    return amount_text(Decimal(dollars))


def amount_text(d: Decimal) -> str:
    """An amount as the report writes it in every format's words: 1,234.56,
    a negative one with a minus sign (−1,234.56)."""
    return ("−" if d < 0 else "") + f"{abs(d):,.2f}"


def notes(g: Any, summary: Any, li: Any, basis: Any, rules: Rules, lang: str
          ) -> Section:
    """The note disclosures: plan description, benefit terms, members by
    category, the discount rate, its sensitivity, benefit payments after
    the measurement date."""
    t = words(lang)
    o = g.options
    rep: gasb73.Report = g.report
    c = summary.counts
    rows: list[tuple[str, Any]] = [
        (t["notes_plan"], None),
        (t["plan_description"], t["plan_description_value"]),
        (t["plan_trust"], t["plan_trust_value"]),
        (t["notes_terms"], None),
        *benefit_terms(rules, lang),
        (t["notes_members"], None),
        (t["members_receiving"], c["in_pay"]),
        (t["members_not_yet"], c["deferred"]),
        (t["members_active"], t["members_active_value"]),
        (t["notes_discount"], None),
        (t["discount_rate"], rate_words(basis, lang)),
        (t["discount_index"], o.index if o.index else t["index_not_given"]),
        (t["discount_index_date"], fmt_date(o.index_date, lang) if o.index_date
         else t["index_not_given"]),
        (t["notes_sensitivity"], None),
        (t["at_lower"].format(rate=rate_words(basis, lang, Decimal("-0.01"))),
         _m(li.lower) if li.lower is not None else t["not_measured"]),
        (t["at_rate"].format(rate=rate_words(basis, lang)), _m(li.total)),
        (t["at_higher"].format(rate=rate_words(basis, lang, Decimal("0.01"))), _m(li.higher)),
        (t["notes_after"], None),
        (t["paid_after"], t["paid_after_value"].format(
            amount=_fmt(gasb73.dollars(o.paid_after), lang),
            start=fmt_date(date.fromordinal(rep.measurement_date.toordinal() + 1), lang),
            through=fmt_date(o.paid_after_through, lang))
         if o.paid_after is not None else t["paid_after_not_given"]),
    ]
    return Section("notes", t["notes_title"], rows=rows, sheet=t["sheet_notes"])


def benefit_terms(rules: Rules, lang: str) -> list[tuple[str, Any]]:
    """The benefit terms in words, from the rules set: who is covered, each
    route to a deferred pension, the amount, the minimum."""
    t = words(lang)
    lw = law_words(rules, lang)
    regime = catalog(lang)["regime_plural"]
    groups = words(lang)["groups"]
    rows: list[tuple[str, Any]] = [
        (t["terms_covered"], t["terms_covered_value"].format(**lw)),
    ]
    for r in rules.routes:
        service = t["terms_service_range"].format(min=r.min_service, max=r.max_service) \
            if r.max_service is not None else t["terms_service_min"].format(min=r.min_service)
        rows.append((_cite(r.citation, lang), t["terms_route"].format(
            regimes=_and([regime[x] for x in r.regimes], lang),
            groups=_and([groups[x] for x in r.groups], lang), age=r.age, service=service)))
    for key, scale in rules.amount.items():
        parts = []
        br = list(scale.brackets)
        for i, b in enumerate(br):
            upper = br[i + 1].threshold if i + 1 < len(br) else None
            words_key = ("terms_bracket_all" if upper is None else "terms_bracket_first") \
                if b.threshold == 0 else \
                ("terms_bracket_above" if upper is None else "terms_bracket_between")
            parts.append(t[words_key].format(rate=pct(b.rate), start=b.threshold, end=upper))
        rows.append((_cite(scale.citation, lang), t["terms_amount"].format(
            regime=regime[key], brackets="; ".join(parts))))
    rows.append((_cite(rules.minimum_citation, lang), t["terms_minimum"].format(**lw)))
    rows.append((t["terms_adjustments"], t["terms_adjustments_value"]))
    return rows


def _cite(citation: str, lang: str) -> str:
    from ..words import cite
    return cite(citation, lang)


def _and(items: list[str], lang: str) -> str:
    word = " y " if lang == "es" else " and "
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + word + items[-1]


def employers(g: Any, names: dict[str, str] | None, lang: str) -> Section | None:
    rep: gasb73.Report = g.report
    if rep.employers is None:
        return None
    t = words(lang)
    rows = rep.employers
    prior_known = any(r["prior_proportion"] is not None for r in rows)

    def prop(q: int | None) -> str:
        return t["not_available"] if q is None else f"{q / 1_000_000:.6f}"

    def change(r: dict[str, Any]) -> str:
        if r["prior_proportion"] is None:
            return t["not_available"]
        return f"{(r['proportion'] - r['prior_proportion']) / 1_000_000:+.6f}"

    table = pl.DataFrame([
        pl.Series(t["col_employer"], [r["employer"] for r in rows], dtype=pl.String),
        pl.Series(t["col_name"], [(names or {}).get(r["employer"], "") for r in rows],
                  dtype=pl.String),
        pl.Series(t["col_proportion"], [prop(r["proportion"]) for r in rows], dtype=pl.String),
        pl.Series(t["col_prior_proportion"], [prop(r["prior_proportion"]) for r in rows],
                  dtype=pl.String),
        pl.Series(t["col_change"], [change(r) for r in rows], dtype=pl.String),
        _cents_col(t["col_share"], [r["liability"] for r in rows]),
        _cents_col(t["col_expense"], [r["expense"] for r in rows]),
        _cents_col(t["col_outflows"], [r["deferred_outflows"] for r in rows]),
        _cents_col(t["col_inflows"], [r["deferred_inflows"] for r in rows]),
    ])
    paragraphs = [t["employers_note"]]
    if not prior_known:
        paragraphs.append(t["employers_no_prior"])
    elif rep.proportions_from == "prior_census":
        paragraphs.append(t["employers_prior_census"])
    return Section("employers_gasb", t["employers_title"], table=table,
                   paragraphs=paragraphs, sheet=t["sheet_employers"],
                   blank=t["not_available"])


def roll_forward(rf: Any, v: date, lang: str) -> Section | None:
    """The actuarial valuation at its date rolled forward to the measurement
    date, step by step, and the same members valued at the measurement date."""
    if rf is None:
        return None
    t = words(lang)
    rows: list[tuple[str, Any]] = [
        (t["roll_start"].format(date=fmt_date(rf.valued_at, lang)), _m(rf.start[0])),
        (t["roll_interest"].format(rate=pct(Decimal(repr(round(rf.rates[0], 6))))),
         _m(rf.interest[0])),
        (t["roll_paid"], _m(-(rf.paid[0] or 0))),
        *((t["roll_adjustment"].format(label=lb), _m(c)) for lb, c in rf.adjustments),
        (t["roll_end"].format(date=fmt_date(v, lang)), _m(rf.end[0])),
        (t["roll_check_heading"], None),
        (t["roll_direct"].format(date=fmt_date(v, lang)), _m(rf.direct)),
        (t["roll_difference"], _m((rf.end[0] or 0) - rf.direct)),
    ]
    if rf.later is not None:
        c = rf.later_counts or {}
        rows += [(t["roll_later"].format(file=rf.later_file, date=fmt_date(v, lang)),
                  _m(rf.later)),
                 (t["roll_later_rows"], t["roll_later_rows_value"].format(
                     read=c.get("rows_read", 0), rejected=c.get("rows_rejected", 0),
                     deferred=c.get("deferred", 0), in_pay=c.get("in_pay", 0))),
                 (t["roll_later_difference"], _m(rf.later - (rf.end[0] or 0)))]
    return Section("roll_forward", t["roll_title"], rows=rows,
                   paragraphs=[t["roll_note"].format(valued=fmt_date(rf.valued_at, lang),
                                                     date=fmt_date(v, lang))],
                   sheet=t["sheet_roll"])


def sections(parts: ReportParts) -> list[Section]:
    """Every GASB 73 part of the report, in the order it is read."""
    g, lang = parts.gasb73, parts.lang
    out = [roll_forward(parts.roll_forward, parts.summary.measurement_date, lang),
           schedule(g, parts.lines, parts.prior_date, lang), expense(g, lang),
           deferrals(g, lang), recognition(g, lang), bases(g, lang), ten_years(g, lang),
           employers(g, parts.names, lang),
           notes(g, parts.summary, parts.liability, parts.basis, parts.rules,
                 lang)]
    return [s for s in out if s is not None]
