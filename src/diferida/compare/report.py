"""The comparison's HTML report: one self-contained page (styles inline, the
chart as inline SVG, no script, no external asset) that reads as a report of
the Retirement System in Spanish or English.

The tables of the comparison keep their machine-readable column names and
codes (`status_a`, `not_yet_eligible`, ISO dates) in the workbook, CSV and
Parquet outputs; here every column has a label and every value is written
as a reader writes it: statuses, regimes and routes in the catalogs' words,
dates with `fmt_date`, money with `format_money`, counts with thousands
separators, booleans as sí/no or yes/no. The words are in the message
catalogs (`[compare_report]` of i18n/es.toml and en.toml). A column without
a label is an error (`ReportLabelError`), not a raw name on the page.
"""

from __future__ import annotations

import html
import io
import re
from datetime import date
from decimal import Decimal
from typing import Any

import polars as pl

from ..axes import round_axis
from ..core import codes
from ..errors import DiferidaError
from ..explain import cite, listing, pct, regime_text
from ..i18n import catalog, fmt_date
from ..money import format_money
from ..rules import Rules
from . import engine as cmp
from .bands import text as relief_text

SIDES = ("a", "b", "difference")
# the changed-members columns the page shows (every column is in the workbook)
CHANGED_SHOWN = ("row", "participant_id", "status_a", "status_b", "route_a", "route_b",
                 "eligibility_date_a", "eligibility_date_b", "eligibility_shift_months",
                 "annual_amount_a", "annual_amount_b", "annual_change", "finding_rule",
                 "finding_under_a", "finding_under_b")
# the engine's words for how an eligibility date moves, and their catalog keys
SHIFT_KEYS = {"later under B": "later", "earlier under B": "earlier",
              "gains a date under B": "gains", "loses its date under B": "loses"}
_SIDED = re.compile(r"^(?P<base>.+)_(?P<side>a|b|difference)$")
_PV = re.compile(r"^pv_(?P<rate>[0-9.]+)$")
_PV_TOTAL = re.compile(r"^pv_(?P<rate>[0-9.]+)_total$")


class ReportLabelError(DiferidaError, KeyError):
    """A column, summary item or value of the report with no words in the
    catalog (a table grew a column the report does not know yet)."""


def words(lang: str) -> dict[str, Any]:
    return catalog(lang)["compare_report"]


def _rate(label: str) -> str:
    return pct(Decimal(label))


def _field(base: str, lang: str) -> str | None:
    fields = words(lang)["fields"]
    if base in fields:
        return fields[base]
    for pattern, key in ((_PV, "pv"), (_PV_TOTAL, "pv_total")):
        m = pattern.match(base)
        if m:
            return fields[key].format(rate=_rate(m["rate"]))
    return None


def column_label(column: str, lang: str) -> str:
    """The words for a column of any table of the comparison: "status_a" ->
    "Situación según A"; a present value's column -> its words with the
    discount rate of the run's assumptions as a percentage. Raises
    ReportLabelError for a column with none."""
    return _label(column, "columns", "column", lang)


def summary_label(item: str, lang: str) -> str:
    """The words for an item of the summary ("members_changed",
    "annual_amount_total_difference", "pv_0.04_total_a", ...)."""
    return _label(item, "summary", "summary item", lang)


def _label(name: str, section: str, what_it_is: str, lang: str) -> str:
    """Its own words in `section`, or a field's words with its side (A, B,
    the difference); ReportLabelError when it has neither."""
    w = words(lang)
    if name in w[section]:
        return w[section][name]
    own = relief_text(lang).get(section, {})  # the band and payer tables'
    if name in own:
        return own[name]
    m = _SIDED.match(name)
    if m:
        what = _field(m["base"], lang)
        if what is not None:
            return w["sides"][m["side"]].format(what=what)
    raise ReportLabelError(f"the report has no {lang} label for the {what_it_is} {name!r}: "
                           f"add it to [compare_report] of i18n/{lang}.toml")


# ---- values as a reader writes them ---------------------------------------------


def money_text(v: Decimal | None) -> str:
    """$1,234.50; -$1,234.50 for a negative difference; — for none."""
    if v is None:
        return "—"
    return "-" + format_money(-v) if v < 0 else format_money(v)


def count_text(v: int | None) -> str:
    return "—" if v is None else f"{v:,}"


def yes_no(v: bool | None, lang: str) -> str:
    return "—" if v is None else catalog(lang)["yes" if v else "no"]


def fiscal_year_text(name: str, lang: str) -> str:
    """The projection's FY2027 (1 July 2026 - 30 June 2027) as the language
    names it; TOTAL as a word."""
    if name == "TOTAL":
        return words(lang)["total"]
    m = re.fullmatch(r"FY(\d{4})", name)
    if m is None:
        raise ReportLabelError(f"not a fiscal year: {name!r}")
    end = int(m[1])
    return words(lang)["fiscal_year"].format(start=end - 1, end=end)


def route_text(route: str | None, rules: Rules, other: Rules, lang: str) -> str:
    if route is None:
        return "—"
    for r in (rules, other):
        try:
            return cite(r.route(route).citation, lang)
        except KeyError:
            continue
    raise ReportLabelError(f"route {route!r} is in neither rules set")


def _bin_money(text: str) -> str:
    return money_text(Decimal(text.replace(",", "")))


def amount_bin_text(label: str, lang: str) -> str:
    """The engine's bins of the change ("≤ -10,000", "-1,000 to -100",
    "> 10,000") in words, as money."""
    w = words(lang)["amount_bin"]
    if label == "0":
        return w["zero"]
    if label.startswith("≤ "):
        return w["at_most"].format(hi=_bin_money(label[2:]))
    if label.startswith("> "):
        return w["above"].format(lo=_bin_money(label[2:]))
    lo, sep, hi = label.partition(" to ")
    if not sep:
        raise ReportLabelError(f"not a bin of the amount changes: {label!r}")
    return w["between"].format(lo=_bin_money(lo), hi=_bin_money(hi))


class Values:
    """How each column's values are written, for one comparison and language."""

    def __init__(self, ra: Rules, rb: Rules, lang: str):
        self.ra, self.rb, self.lang = ra, rb, lang
        self.c = catalog(lang)

    def text(self, column: str, v: Any) -> str:
        lang = self.lang
        if v is None:
            return "—"
        m = _SIDED.match(column)
        base, side = (m["base"], m["side"]) if m else (column, None)
        rules, other = (self.rb, self.ra) if side == "b" else (self.ra, self.rb)
        if base == "status":
            return self.c["status"][v]
        if base == "regime":
            return regime_text(v, rules, lang)
        if base == "route":
            return route_text(v, rules, other, lang)
        if base == "reasons":
            found = codes(v)
            return "; ".join(self.c["reasons"][r].format(**_law(rules, lang))
                             for r in found) if found else "—"
        if column == "shift":
            return words(lang)["shift"][SHIFT_KEYS[v]]
        if column == "change":
            return amount_bin_text(v, lang)
        if column == "fiscal_year":
            return fiscal_year_text(v, lang)
        if column == "scenario":
            return scenario_text(v, lang)
        if column == "band":
            from .bands import band_text
            return band_text(v, lang)
        if column == "employer" and v == "TOTAL":  # the payers' total row
            return words(lang)["total"]
        if column in ("discount_shift", "cola") and isinstance(v, float):
            return pct(Decimal(str(v)))
        if column == "mortality_scale" and isinstance(v, float):
            return f"{v:g}"
        if column == "finding_condition":
            return str(v)
        if isinstance(v, bool):
            return yes_no(v, lang)
        if isinstance(v, date):
            return fmt_date(v, lang)
        if isinstance(v, Decimal):
            return money_text(v)
        if isinstance(v, int):
            return count_text(v)
        return str(v)


def scenario_text(code: str, lang: str) -> str:
    """A sensitivity scenario's code in words: "mortality_x0.9" -> "Mortality
    rates times 0.9"."""
    w = words(lang)["scenario"]
    if code.startswith("mortality_x"):
        return w["mortality"].format(scale=code[len("mortality_x"):])
    return w[code]


def _law(rules: Rules, lang: str) -> dict[str, str]:
    from ..explain import law_words
    return law_words(rules, lang)


# ---- the page -------------------------------------------------------------------

_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;
max-width:72rem;padding:0 1rem;color:#1b1b1b;line-height:1.45}
h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem}
caption{text-align:left;font-style:italic;padding:.25rem 0;color:#444}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
th{background:#f2f2f2}th[scope=row]{font-weight:normal}
.note{background:#fff4e5;border-left:4px solid #c55a11;padding:.5rem 1rem}
figure{margin:1rem 0}svg{max-width:100%;height:auto}
.wide{overflow-x:auto;max-width:100%}
.wide td:first-child,.wide th:first-child{position:sticky;left:0;background:#fff}
.wide thead th:first-child{background:#f2f2f2}
@media print{body{margin:0;max-width:none}h2{break-after:avoid}.wide{overflow:visible}
table{font-size:.65rem}td.n{white-space:normal}th,td{padding:.1rem .25rem}
.wide td:first-child,.wide th:first-child{position:static}}
"""

e = html.escape


def _numeric(v: Any) -> bool:
    return isinstance(v, int | float | Decimal) and not isinstance(v, bool)


def table_html(frame: pl.DataFrame, caption: str, values: Values,
               limit: int | None = None) -> str:
    """A table with a caption, a header of words (`<th scope=col>`) and
    every value written for the reader."""
    lang = values.lang
    cols = frame.columns
    heads = [column_label(c, lang) for c in cols]
    shown = frame.head(limit) if limit is not None else frame
    # a table wider than the page scrolls inside its own box (which the
    # keyboard can reach), its first column kept in view
    out = [f"<div class=wide tabindex=0 role=region aria-label=\"{e(caption)}\">"
           f"<table><caption>{e(caption)}</caption><thead><tr>",
           *[f"<th scope=col>{e(h)}</th>" for h in heads], "</tr></thead><tbody>"]
    for row in shown.iter_rows():
        out.append("<tr>")
        for c, v in zip(cols, row, strict=True):
            cls = ' class="n"' if _numeric(v) else ""
            out.append(f"<td{cls}>{e(values.text(c, v))}</td>")
        out.append("</tr>")
    if not shown.height:
        out.append(f"<tr><td colspan={len(cols)}>{e(words(lang)['none'])}</td></tr>")
    out.append("</tbody></table></div>")
    if limit is not None and frame.height > limit:
        out.append("<p>" + e(words(lang)["first_rows"].format(
            shown=count_text(limit), total=count_text(frame.height))) + "</p>")
    return "".join(out)


def _pairs_html(rows: list[tuple[str, str]], caption: str, lang: str) -> str:
    """A two-column table (item, value) with the item as a row header."""
    w = words(lang)["columns"]
    out = [f"<table><caption>{e(caption)}</caption><thead><tr>"
           f"<th scope=col>{e(w['item'])}</th><th scope=col>{e(w['value'])}</th>"
           "</tr></thead><tbody>"]
    for k, v in rows:
        out.append(f"<tr><th scope=row>{e(k)}</th><td>{e(v)}</td></tr>")
    out.append("</tbody></table>")
    return "".join(out)


def summary_rows(summary, lang: str) -> list[tuple[str, str]]:
    """The summary's items (`CompareSummary.items()`), in words."""
    w = words(lang)["summary"]
    out = []
    for item, v in summary.items():
        if item == "as_of":
            text = fmt_date(summary.as_of, lang)
        elif item == "valuation_date":
            text = fmt_date(summary.valuation_date, lang)
        elif item.endswith("_note"):
            text = w["note_illustrative"]
        elif isinstance(v, date):
            text = fmt_date(v, lang)
        elif isinstance(v, Decimal):
            text = money_text(v)
        elif isinstance(v, int) and not isinstance(v, bool):
            text = count_text(v)
        else:
            text = "—" if v is None else str(v)
        out.append((summary_label(item, lang), text))
    return out


def assumption_rows(assumptions: dict[str, Any], summary, lang: str) -> list[tuple[str, str]]:
    """The assumptions a reader needs, in words (all of them, as recorded,
    are in the workbook and assumptions.json)."""
    w = words(lang)["assumptions"]
    fields = words(lang)["fields"]
    out = []
    for side, r in (("A", summary.rules_a), ("B", summary.rules_b)):
        key = "illustrative_value" if r.illustrative else "rules_value"
        out.append((w["rules"].format(side=side),
                    w[key].format(name=r.name, title=r.title, version=r.version)))
    out.append((w["as_of"], fmt_date(summary.as_of, lang)))
    compared = [_lower_first(fields[f]) for f in cmp.COMPARED]
    out.append((w["changed"], w["changed_value"].format(fields=_any_of(compared, lang))))
    out.append((w["explaining"], w["explaining_value"]))
    proj = assumptions.get("projection")
    if proj:
        mort = proj["mortality"]
        last_age = mort["last_age"]
        out.append((w["valuation_date"], fmt_date(date.fromisoformat(proj["valuation_date"]),
                                                  lang)))
        out.append((w["fiscal_year"], w["fiscal_year_value"]))
        out.append((w["payments"], w["payments_value"].format(last_age=last_age)))
        rule = str(proj["start_rule"])
        start = (w["start_age"].format(age=int(rule[4:].split()[0])) if rule.startswith("age:")
                 else w["start_eligibility"])
        out.append((w["start"], start))
        horizon = proj.get("horizon_fiscal_years")
        out.append((w["horizon"], w["horizon_none"].format(last_age=last_age) if horizon is None
                    else w["horizon_years"].format(years=count_text(int(horizon)))))
        out.append((w["mortality"], _mortality_text(mort, lang)))
        out.append((w["sex"], _sex_text(proj, lang)))
        rates = listing([_rate(x) for x in proj["discount_rates"]], lang)
        out.append((w["discount"], w["discount_value"].format(rates=rates)))
        cola = Decimal(str(proj["cola"]))
        out.append((w["cola"], w["cola_none"] if cola == 0
                    else w["cola_value"].format(cola=pct(cola))))
        out.append((w["rounding"], w["rounding_value"]))
        out += _valuation_rows(proj, summary, lang)
        if "bands" in proj:
            from .bands import assumption_rows as band_rows
            out += band_rows(proj["bands"], lang)
    return out


def _valuation_rows(proj: dict[str, Any], summary, lang: str) -> list[tuple[str, str]]:
    """The valuation basis in words: benefit status, the determinations'
    date when the valuation date differs, the claim rule, the mortality
    scale, the sensitivity grid."""
    w = words(lang)["assumptions"]
    out = [(w["benefit_status"], w["benefit_status_value"] if summary.has_status
            else w["benefit_status_none"])]
    if proj.get("valuation_date") != summary.as_of.isoformat():
        out.append((w["determinations_as_of"], fmt_date(summary.as_of, lang)))
    rates = proj.get("claim_rates")
    if rates is None:
        out.append((w["claim"], w["claim_valuation"]))
    else:
        basis = w["claim_basis_age"] if rates["basis"] == "age" else w["claim_basis_years"]
        out.append((w["claim"], w["claim_rates"].format(file=rates["file"], basis=basis)))
    scale = proj["mortality"].get("scale", "1")
    if proj["mortality"]["table"] != "none" and scale != "1":
        out.append((w["mortality_scale"], w["mortality_scale_value"].format(scale=scale)))
    if "sensitivity" in proj:
        from ..projection.options import SENSITIVITY_MORTALITY
        scales = listing([f"{f}" for f in SENSITIVITY_MORTALITY], lang)
        out.append((w["sensitivity"], w["sensitivity_value"].format(scales=scales)))
    return out


def _lower_first(text: str) -> str:
    """"Situación" -> "situación"; a citation ("Rule 19.6 ...") stays."""
    words_ = text.split(" ")
    if len(words_) > 1 and words_[1][:1].isdigit():
        return text
    return text[0].lower() + text[1:]


def _any_of(items: list[str], lang: str) -> str:
    """"a, b or c"."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + words(lang)["or"] + items[-1]


def _mortality_text(mort: dict[str, Any], lang: str) -> str:
    w = words(lang)["assumptions"]
    if mort["table"] == "none":
        return w["mortality_none"].format(last_age=mort["last_age"])
    imp = mort.get("improvement")
    return w["mortality_table"].format(
        table=mort["table"], improvement=w["improvement_none"] if imp in (None, "none") else imp)


def _mortality_short(mort: dict[str, Any], lang: str) -> str:
    if mort.get("table", "none") == "none":
        return words(lang)["chart"]["mortality_none"]
    imp = mort.get("improvement")
    return mort["table"] if imp in (None, "none") else f"{mort['table']} ({imp})"


_BLEND = re.compile(r"blended (?P<f>[0-9.]+) F / (?P<m>[0-9.]+) M")


def _sex_text(proj: dict[str, Any], lang: str) -> str:
    w = words(lang)["assumptions"]
    if proj["mortality"]["table"] == "none":
        return w["sex_not_used"]
    m = _BLEND.search(str(proj["sex"]))
    if m is None:
        raise ReportLabelError(f"the projection's sex assumption is not understood: "
                               f"{proj['sex']!r}")
    female, male = (pct(Decimal(m[k])) for k in ("f", "m"))
    key = "sex_column" if str(proj["sex"]).startswith("from the file") else "sex_blended"
    return w[key].format(female=female, male=male)


def chart_svg(fiscal: pl.DataFrame, summary, assumptions: dict[str, Any], lang: str) -> str:
    """Payments by fiscal year under A and B, and B - A, as an accessible SVG
    (matplotlib; text kept as text, a <title> and a <desc> in the language)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure

    w = words(lang)["chart"]
    body = fiscal.filter(pl.col("fiscal_year") != "TOTAL")
    total = fiscal.filter(pl.col("fiscal_year") == "TOTAL").row(0, named=True)
    years = [fiscal_year_text(y, lang) for y in body["fiscal_year"].to_list()]
    a = [float(v) for v in body["payments_a"].to_list()]
    b = [float(v) for v in body["payments_b"].to_list()]
    d = [float(v) for v in body["payments_difference"].to_list()]
    ra, rb = summary.rules_a, summary.rules_b
    proj = assumptions.get("projection", {})
    mort = proj.get("mortality", {})
    subtitle = w["subtitle"].format(
        as_of=fmt_date(summary.as_of, lang), mortality=_mortality_short(mort, lang),
        discount=listing([_rate(x) for x in proj.get("discount_rates", [])], lang))
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "diferida"}):
        fig = Figure(figsize=(11, 5.6), dpi=100)
        ax, ax2 = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1.3]})
        x = list(range(len(years)))
        ax.bar([i - 0.2 for i in x], a, width=0.4, color="#1f4e79",
               label=w["legend"].format(side="A", name=ra.name))
        ax.bar([i + 0.2 for i in x], b, width=0.4, color="#c55a11",
               label=w["legend"].format(side="B", name=rb.name))
        ax.legend(frameon=False, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2)
        ax2.bar(x, d, color=["#2e7d32" if v < 0 else "#b71c1c" for v in d], width=0.75)
        ax2.axhline(0, color="#444444", linewidth=0.8)
        # each axis in its own round unit (USD, thousands, millions), ticks at
        # 1, 2, 2.5 or 5 times a power of ten, written with the decimals they need
        units = {}
        for axis, values in ((ax, [*a, *b]), (ax2, d)):
            units[axis] = round_axis(axis, values)
        for axis in (ax, ax2):
            axis.grid(axis="y", color="#dddddd")
            axis.set_axisbelow(True)
            for side in ("top", "right"):
                axis.spines[side].set_visible(False)
        step = max(1, len(years) // 20)
        ax2.set_xticks(x[::step], years[::step], rotation=45, ha="right", fontsize=8)
        suffix = {"": "", "thousands": "_thousands", "millions": "_millions"}
        ax.set_ylabel(w["y" + suffix[units[ax]]])
        ax2.set_ylabel(w["y_difference" + suffix[units[ax2]]])
        ax2.set_xlabel(w["x"])
        ax.set_title(w["title"], fontsize=12, pad=24)
        fig.text(0.5, 0.005, subtitle, ha="center", fontsize=8, color="#444444")
        fig.tight_layout(rect=(0, 0.03, 1, 1))
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]
    desc = w["description"].format(
        first=years[0] if years else "—", last=years[-1] if years else "—",
        a=ra.name, b=rb.name, total_a=money_text(total["payments_a"]),
        total_b=money_text(total["payments_b"]),
        total_difference=money_text(total["payments_difference"]))
    head, rest = svg.split(">", 1)
    return (f'{head} role="img" aria-labelledby="chart-title chart-desc">'
            f'<title id="chart-title">{e(w["title"])}</title>'
            f'<desc id="chart-desc">{e(desc)}</desc>{rest}')


def relief_html(tables: dict[str, pl.DataFrame], summary, values: Values,
                years_shown: int = 5) -> str:
    """The relief's cost by band and by payer, in words then in tables: the
    headcounts, the cost over the horizon and in the first fiscal years
    (every year is in the workbook and the CSV tables)."""
    lang = values.lang
    m = relief_text(lang)
    heads, caps = m["headings"], m["captions"]
    t = summary.relief_totals
    fiscal = tables["fiscal_years"]
    total = fiscal.filter(pl.col("fiscal_year") == "TOTAL").row(0, named=True)
    pv = [c for c in fiscal.columns if c.startswith("pv_") and c.endswith("_difference")]
    found = _PV.match(pv[0][:-len("_difference")]) if pv else None
    rate = found["rate"] if found else None
    out = [f"<h2>{e(heads['relief'])}</h2>"]
    lead = m["text"]["lead"].format(
        members=count_text(t["relief_members"]), gain=count_text(t["relief_gain"]),
        date=fmt_date(t["relief_reference_date"], lang),
        average=money_text(t["relief_average_monthly_gain"]),
        payments=money_text(total["payments_difference"]))
    if rate is not None:
        lead += " " + m["text"]["lead_pv"].format(pv=money_text(total[pv[0]]), rate=_rate(rate))
    out.append("<p>" + e(lead) + "</p>")
    out.append("<p>" + e(m["text"]["lead_under"].format(
        a=count_text(t["relief_under_threshold_a"]), b=count_text(t["relief_under_threshold_b"]),
        date=fmt_date(t["relief_reference_date"], lang))) + "</p>")
    out.append("<p>" + e(m["text"]["lead_rounding"]) + "</p>")
    for key, money_name, counts_name in (("band", "bands", "band_counts"),
                                         ("payer", "payers", "payer_counts")):
        if counts_name not in tables:
            continue
        frame = tables[money_name]
        out.append(f"<h3>{e(heads[key])}</h3>")
        out.append(table_html(tables[counts_name], caps[counts_name], values))
        horizon = frame.filter(pl.col("fiscal_year") == "TOTAL").drop("fiscal_year")
        out.append(table_html(horizon, caps[f"{money_name}_horizon"], values))
        body = frame.filter(pl.col("fiscal_year") != "TOTAL")
        keys = horizon.height
        out.append(table_html(body, caps[money_name], values, limit=years_shown * keys))
    return "".join(out)


def html_report(tables: dict[str, pl.DataFrame], assumptions: dict[str, Any], summary,
                lang: str, changed_rows: int = 200) -> bytes:
    """One page, no external assets, in `lang` (es or en): the summary, the
    chart and the tables, every header and value in words."""
    w = words(lang)
    heads, caps = w["headings"], w["captions"]
    a, b = summary.rules_a, summary.rules_b
    values = Values(a, b, lang)
    parts = [
        f"<!doctype html><html lang={lang}><head><meta charset=utf-8>",
        "<meta name=viewport content='width=device-width,initial-scale=1'>",
        f"<title>{e(w['title'].format(a=a.name, b=b.name))}</title><style>{_STYLE}</style>",
        "</head><body><main>",
        f"<h1>{e(w['heading'].format(a=a.name, b=b.name))}</h1>",
        "<p>" + e(w["intro"].format(input=summary.input, as_of=fmt_date(summary.as_of, lang)))
        + "</p>",
    ]
    for side, r in (("A", a), ("B", b)):
        parts.append("<p>" + e(w["rules_line"].format(side=side, title=r.title, name=r.name,
                                                      version=r.version)) + "</p>")
    for side, r in (("A", a), ("B", b)):
        if r.illustrative:
            parts.append("<p class=note>" + e(w["illustrative"].format(side=side, name=r.name))
                         + "</p>")
    parts.append("<p>" + e(w["lead"].format(
        read=count_text(summary.rows_read), rejected=count_text(summary.rows_rejected),
        compared=count_text(summary.rows_compared), changed=count_text(summary.changed)))
        + "</p>")
    if summary.has_status:
        parts.append("<p>" + e(w["lead_status"].format(
            in_pay=count_text(summary.in_pay), deceased=count_text(summary.deceased),
            refunded=count_text(summary.refunded))) + "</p>")
    parts.append(f"<h2>{e(heads['summary'])}</h2>"
                 + _pairs_html(summary_rows(summary, lang), caps["summary"], lang))
    if "fiscal_years" in tables:
        fiscal = tables["fiscal_years"]
        parts.append(f"<h2>{e(heads['fiscal_years'])}</h2><figure>"
                     + chart_svg(fiscal, summary, assumptions, lang)
                     + f"<figcaption>{e(caps['figure'])}</figcaption></figure>")
        parts.append(table_html(fiscal, caps["fiscal_years"], values))
    if "sensitivity" in tables:
        parts.append(f"<h2>{e(heads['sensitivity'])}</h2>"
                     + table_html(tables["sensitivity"], caps["sensitivity"], values))
    if "band_counts" in tables:
        parts.append(relief_html(tables, summary, values))
    for name in ("transitions", "eligibility_shifts", "amount_changes"):
        parts.append(f"<h2>{e(heads[name])}</h2>" + table_html(tables[name], caps[name], values))
    cm = tables["changed_members"]
    keep = [c for c in CHANGED_SHOWN if c in cm.columns]
    parts.append(f"<h2>{e(heads['changed_members'])}</h2>"
                 + table_html(cm.select(keep), caps["changed_members"], values, changed_rows))
    parts.append(f"<h2>{e(heads['assumptions'])}</h2>"
                 + _pairs_html(assumption_rows(assumptions, summary, lang), caps["assumptions"],
                               lang)
                 + "<p>" + e(w["assumptions"]["full"]) + "</p>")
    parts.append("</main></body></html>\n")
    return "".join(parts).encode("utf-8")
