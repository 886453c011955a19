"""The census review as one self-contained HTML page (styles inline, bars
drawn with HTML, no script, no external asset), in Spanish or English."""

from __future__ import annotations

import html
from decimal import Decimal
from typing import Any

import polars as pl

from ..i18n import fmt_date
from ..money import format_money
from ..rules import Rules
from .book import named, outlier_frame, summary_rows, threshold_rows
from .profile import Review, field_names, thresholds, words

e = html.escape

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;
max-width:72rem;padding:0 1rem;color:#1b1b1b;line-height:1.45}
h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ccc}
h3{font-size:1rem}
table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem}
caption{text-align:left;font-style:italic;padding:.25rem 0;color:#444}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
th{background:#f2f2f2}th[scope=row]{font-weight:normal}
.wide{overflow-x:auto;max-width:100%}
.wide td:first-child,.wide th:first-child{position:sticky;left:0;background:#fff}
.wide thead th:first-child{background:#f2f2f2}
.bar{display:inline-block;height:.8rem;background:#1f4e79;vertical-align:middle}
td.b{width:24rem;min-width:8rem}.grid th[scope=row]{white-space:nowrap}
.note{background:#fff4e5;border-left:4px solid #c55a11;padding:.5rem 1rem}
.grid{display:flex;flex-wrap:wrap;gap:0 2rem}
@media print{body{margin:0;max-width:none}.wide{overflow:visible}h2{break-after:avoid}
table{break-inside:auto;font-size:.7rem}td.n{white-space:normal}
.wide td:first-child,.wide th:first-child{position:static}}
"""


def _value(v: Any) -> tuple[str, bool]:
    if v is None:
        return "—", False
    if isinstance(v, Decimal):
        return format_money(v), True
    if isinstance(v, bool):
        return str(v), False
    if isinstance(v, int):
        return f"{v:,}", True
    if isinstance(v, float):
        return f"{v:,.2f}", True
    return str(v), False


def table(frame: pl.DataFrame, caption: str, lang: str, limit: int | None = None,
          percent: tuple[str, ...] = ()) -> str:
    w = words(lang)
    plain = (w["columns"]["row"], w["columns"]["prior_row"])  # row numbers: no separator
    shown = frame.head(limit) if limit is not None else frame
    out = [f"<div class=wide tabindex=0 role=region aria-label=\"{e(caption)}\">"
           f"<table><caption>{e(caption)}</caption><thead><tr>",
           *[f"<th scope=col>{e(c)}</th>" for c in frame.columns], "</tr></thead><tbody>"]
    for row in shown.iter_rows():
        out.append("<tr>")
        for c, v in zip(frame.columns, row, strict=True):
            if v is not None and c in percent:
                text, num = f"{v:.1%}", True
            elif v is not None and c in plain:
                text, num = str(v), True
            else:
                text, num = _value(v)
            out.append(f"<td{' class=n' if num else ''}>{e(text)}</td>")
        out.append("</tr>")
    if not shown.height:
        out.append(f"<tr><td colspan={len(frame.columns)}>{e(w['none'])}</td></tr>")
    out.append("</tbody></table></div>")
    if limit is not None and frame.height > limit:
        out.append("<p>" + e(w["first_rows"].format(shown=f"{limit:,}",
                                                     total=f"{frame.height:,}")) + "</p>")
    return "".join(out)


def bars(frame: pl.DataFrame, caption: str, lang: str) -> str:
    """A distribution: value, members, share, and a bar as long as the share
    of the largest value."""
    cols = words(lang)["columns"]
    top = max(frame["members"].max() or 0, 1)
    out = [f"<div class=wide><table><caption>{e(caption)}</caption><thead><tr>"
           f"<th scope=col>{e(cols['value'])}</th><th scope=col>{e(cols['members'])}</th>"
           f"<th scope=col>{e(cols['share'])}</th><th scope=col aria-hidden=true></th>"
           "</tr></thead><tbody>"]
    for value, members, share in frame.select("value", "members", "share").iter_rows():
        width = 100 * members / top
        out.append(f"<tr><th scope=row>{e(value)}</th><td class=n>{members:,}</td>"
                   f"<td class=n>{share:.1%}</td><td class=b aria-hidden=true>"
                   f"<span class=bar style='width:{width:.1f}%'></span></td></tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def pairs(rows: list[tuple[str, Any]], caption: str, heads: tuple[str, str]) -> str:
    out = [f"<table><caption>{e(caption)}</caption><thead><tr><th scope=col>{e(heads[0])}"
           f"</th><th scope=col>{e(heads[1])}</th></tr></thead><tbody>"]
    for k, v in rows:
        if v is None:  # a section's heading: the rows under it are a group of their own
            out.append(f"</tbody><tbody><tr><th colspan=2 scope=rowgroup>{e(k)}</th></tr>")
            continue
        text, num = _value(v)
        out.append(f"<tr><th scope=row>{e(k)}</th><td{' class=n' if num else ''}>"
                   f"{e(text)}</td></tr>")
    out.append("</tbody></table>")
    return "".join(out)


def html_report(review: Review, summary, rules: Rules, lang: str) -> bytes:
    w = words(lang)
    hd, dn, cols = w["headings"], w["distributions"], w["columns"]
    listed = int(thresholds()["report"]["listed"])
    c = summary.current
    rules_text = f"{rules.name} ({rules.version})"
    parts = [
        f"<!doctype html><html lang={lang}><head><meta charset=utf-8>",
        "<meta name=viewport content='width=device-width,initial-scale=1'>",
        f"<title>{e(w['title'].format(input=summary.input))}</title><style>{STYLE}</style>",
        "</head><body><main>",
        f"<h1>{e(w['heading'].format(input=summary.input))}</h1>",
        "<p>" + e(w["intro"].format(input=summary.input, date=fmt_date(summary.as_of, lang),
                                    rules=rules_text)) + "</p>",
        "<p>" + e(w["lead"].format(read=f"{c.rows_read:,}", members=f"{c.members:,}",
                                   rejected=f"{c.rows_rejected:,}",
                                   problems=f"{c.problems:,}")) + "</p>",
    ]
    if summary.prior is not None:
        p = summary.prior
        parts.append("<p>" + e(w["lead_prior"].format(
            input=p.input, read=f"{p.rows_read:,}", members=f"{p.members:,}",
            rejected=f"{p.rows_rejected:,}")) + "</p>")
    if not review.has_status:
        parts.append(f"<p class=note>{e(w['note_no_status'])}</p>")
    parts.append(f"<h2>{e(hd['summary'])}</h2>" + pairs(
        summary_rows(review, summary, lang, rules), hd["summary"], (w["item"], w["value"])))
    parts.append(f"<h2>{e(hd['distributions'])}</h2><div class=grid>")
    for key, frame in review.distributions.items():
        parts.append("<section>" + bars(frame, dn[key], lang) + "</section>")
    parts.append("</div>")
    parts.append(f"<h2>{e(hd['backlog'])}</h2>"
                 + table(named(review.backlog, lang), hd["backlog"], lang,
                         percent=(cols["share"],))
                 + table(named(review.backlog_members, lang), hd["backlog"], lang, listed))
    parts.append(f"<h2>{e(hd['outliers'])}</h2>"
                 + table(named(outlier_frame(review, lang), lang), hd["outliers"], lang,
                         listed))
    parts.append(f"<h2>{e(hd['thresholds'])}</h2>"
                 + pairs(threshold_rows(review, lang), hd["thresholds"],
                         (cols["check"], cols["reason"])))
    if review.joiners is not None:
        assert review.leavers is not None and review.changes is not None  # set together
        fields = field_names(rules, lang)
        parts.append(f"<h2>{e(hd['changes'])}</h2>"
                     + f"<h3>{e(hd['joiners'])}</h3>"
                     + table(named(review.joiners, lang), hd["joiners"], lang, listed)
                     + f"<h3>{e(hd['leavers'])}</h3>"
                     + table(named(review.leavers, lang), hd["leavers"], lang, listed)
                     + f"<h3>{e(hd['changed'])}</h3>"
                     + table(named(review.changes.with_columns(
                         pl.col("field").replace_strict(dict(fields), return_dtype=pl.String)),
                         lang), hd["changed"], lang, listed))
    parts.append("</main></body></html>\n")
    return "".join(parts).encode("utf-8")
