"""The census review as a workbook laid out to print (diferida/workbook.py):
the summary, the distributions with a native bar chart each (two charts a
page), the backlog, the outliers named by member, the thresholds and their
reasons, and with a prior file the joiners, leavers and changed fields."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import polars as pl

from ..i18n import fmt_date
from ..money import format_money
from ..rules import Rules
from ..workbook import Book
from .listing import Listings
from .profile import Review, field_names, words

CHART_ROWS = 19  # rows a chart takes on a charts sheet (two a sheet, a sheet a page)


def subtitle(summary, rules: Rules, lang: str) -> str:
    w = words(lang)
    return w["subtitle"].format(date=fmt_date(summary.as_of, lang),
                                rules=f"{rules.name} ({rules.version})")


def summary_rows(review: Review, summary, lang: str, rules: Rules | None = None
                 ) -> list[tuple[str, Any]]:
    """The summary's lines (a value None: a section's heading); with a prior
    file, the members changed field by field and the benefit status's moves
    (`rules`: for the fields' names)."""
    w = words(lang)
    s = w["summary"]
    c = summary.current
    rows: list[tuple[str, Any]] = [
        (s["rows_read"], c.rows_read), (s["members"], c.members),
        (s["rows_rejected"], c.rows_rejected), (s["problems"], c.problems)]
    status = review.counts["status"]
    rows += [(s[k], status.get(k, 0)) for k in ("eligible", "not_yet_eligible", "not_entitled")]
    rows.append((s["backlog"], review.backlog_members.height))
    rows.append((s["backlog_annual_amount"], review.backlog_amount()))
    rows.append((s["outliers"], review.outliers["participant_id"].n_unique()))
    if summary.prior is not None:
        p = summary.prior
        # a prior file's review has the three (changes_between)
        assert review.joiners is not None and review.leavers is not None \
            and review.changes is not None
        rows += [(s["prior_rows_read"], p.rows_read), (s["prior_rows_rejected"], p.rows_rejected),
                 (s["joiners"], review.joiners.height), (s["leavers"], review.leavers.height),
                 (s["members_changed"], review.changes["participant_id"].n_unique())]
        names = field_names(rules, lang) if rules is not None else {}
        rows.append((s["changed_by_field"], None))
        rows += [(names.get(f, f), n) for f, n in review.changes_by_field.items()]
        if review.benefit_compared:
            assert review.status_moves is not None  # set with the changes
            rows.append((s["status_moves"], None))
            st = w["benefit_statuses"]
            rows += [(s["status_move"].format(before=st.get(b, b), after=st.get(a, a)), n)
                     for b, a, n in review.status_moves.iter_rows()]
            if not review.status_moves.height:
                rows.append((s["no_status_moves"], 0))
        else:
            rows.append((s["benefit_not_compared"], s["benefit_not_compared_why"]))
    return rows


def _exponent(k: float) -> str:
    """³ for 3: a whole exponent in superscript digits, any other after ^."""
    if float(k).is_integer():
        return str(int(k)).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"^{k:g}"


def _plain(x: float) -> str:
    """A limit as the thresholds file writes it: 100, 0.0833, 6,140.12."""
    return f"{x:,.4f}".rstrip("0").rstrip(".")


def check_texts(review: Review, lang: str) -> dict[str, str]:
    """Each check in words, with the limit every member is held to (the
    service check's limit is each member's own: it is in the `limit`
    column, the text names the tolerance added to it)."""
    from .profile import thresholds

    w = words(lang)["checks"]
    o = thresholds()["outliers"]
    lo, hi = review.fences
    return {
        "age_over": w["age_over"].format(limit=o["age_over"]["years"]),
        "unclaimed": w["unclaimed"].format(limit=o["unclaimed"]["years"]),
        "pay_high": w["pay_high"].format(limit=format_money(Decimal(f"{hi:.2f}"))),
        "pay_low": w["pay_low"].format(limit=format_money(Decimal(f"{lo:.2f}"))),
        "service_over_span": w["service_over_span"].format(
            tolerance=_plain(float(o["service_over_span"]["tolerance_years"]))),
    }


def outlier_frame(review: Review, lang: str) -> pl.DataFrame:
    return review.outliers.with_columns(pl.col("check").replace_strict(
        check_texts(review, lang), return_dtype=pl.String))


def threshold_rows(review: Review, lang: str) -> list[tuple[str, str]]:
    """Each check and why, the pay fences with this file's quartiles."""
    from .profile import thresholds

    w = words(lang)
    o = thresholds()["outliers"]
    text = check_texts(review, lang)
    q1, q3 = (format_money(Decimal(f"{q:.2f}")) for q in review.quartiles)
    k = float(o["pay"]["iqr_factor"])
    pay = {"q1": q1, "q3": q3, "k": f"{k:g}", "power": _exponent(k)}
    return [(text["age_over"], w["reasons"]["age_over"]),
            (text["unclaimed"], w["reasons"]["unclaimed"]),
            (text["pay_high"], w["reasons"]["pay_high"].format(**pay)),
            (text["pay_low"], w["reasons"]["pay_low"].format(**pay)),
            (text["service_over_span"], w["reasons"]["service_over_span"])]


def named(frame: pl.DataFrame, lang: str) -> pl.DataFrame:
    """The columns in words, and the determination's status too."""
    from ..i18n import catalog

    cols = words(lang)["columns"]
    if "status" in frame.columns:
        frame = frame.with_columns(pl.col("status").replace_strict(
            dict(catalog(lang)["status"]), default=pl.col("status"), return_dtype=pl.String))
    return frame.rename({c: cols[c] for c in frame.columns if c in cols})


def workbook(review: Review, summary, rules: Rules, lang: str) -> bytes:
    w = words(lang)
    sh, dn = w["sheets"], w["distributions"]
    book = Book(lang, w["workbook_title"], subtitle(summary, rules, lang))
    book.pairs(sh["summary"], (w["item"], w["value"]),
               summary_rows(review, summary, lang, rules), label_width=52, value_width=60)

    # the distributions, one under the other, each with a chart on the charts sheet
    ws = book.wb.add_worksheet(sh["distributions"])
    cols = w["columns"]
    r = 0
    charts: Any = None  # the sheet of the next two charts
    for i, (key, frame) in enumerate(review.distributions.items()):
        ws.write_string(r, 0, dn[key], book.section)
        ws.write_blank(r, 1, None, book.section)
        ws.write_blank(r, 2, None, book.section)
        ws.write_string(r + 1, 0, cols["value"], book.head)
        ws.write_string(r + 1, 1, cols["members"], book.head)
        ws.write_string(r + 1, 2, cols["share"], book.head)
        first = r + 2
        for j, (value, members, share) in enumerate(frame.select(
                "value", "members", "share").iter_rows()):
            ws.write_string(first + j, 0, value)
            ws.write_number(first + j, 1, members, book.count)
            ws.write_number(first + j, 2, share, book.percent)
        last = first + frame.height - 1
        chart = book.wb.add_chart({"type": "column"})
        chart.add_series({"name": dn[key],
                          "categories": [sh["distributions"], first, 0, last, 0],
                          "values": [sh["distributions"], first, 1, last, 1],
                          "fill": {"color": "#1f4e79"}, "gap": 40,
                          "data_labels": {"value": True, "num_format": "#,##0"}})
        chart.set_title({"name": dn[key], "name_font": {"size": 12}})
        chart.set_y_axis({"name": cols["members"], "num_format": "#,##0"})
        chart.set_legend({"none": True})
        chart.set_size({"width": 1100, "height": 340})
        if i % 2 == 0:  # two charts a sheet, each sheet fitted whole to one page
            charts = book.wb.add_worksheet(f"{sh['charts']} {i // 2 + 1}")
            charts.write_string(2 * CHART_ROWS, 0, book.title)
            book.printed(charts, header_row=None, rows_tall=1)
            charts.hide_gridlines(2)
        charts.insert_chart((i % 2) * CHART_ROWS, 0, chart, {"object_position": 3})
        r = last + 2
    ws.set_column(0, 0, 48)
    ws.set_column(1, 2, 14)
    book.printed(ws, header_row=None)

    pct = (cols["share"],)
    rows = (cols["row"], cols["prior_row"])  # a row's number, not a quantity: no separator
    book.table(sh["backlog"], named(review.backlog, lang), percent=pct)
    # the listings, a row per member: written column-wise (listing.py)
    # (each prints its header and first rows on one page; the footer says how many)
    listings = Listings(book)
    note = w["printed"]
    listings.table(sh["backlog_members"], named(review.backlog_members, lang), plain=rows,
                   note=note)
    listings.table(sh["outliers"], named(outlier_frame(review, lang), lang), widths={
        cols["check"]: 60}, plain=rows, wrap=(cols["check"],), note=note)
    book.pairs(sh["thresholds"], (cols["check"], cols["reason"]), threshold_rows(review, lang),
               label_width=60, value_width=90)
    if review.joiners is not None:
        assert review.leavers is not None and review.changes is not None  # set together
        listings.table(sh["joiners"], named(review.joiners, lang), plain=rows, note=note)
        listings.table(sh["leavers"], named(review.leavers, lang), plain=rows, note=note)
        fields = field_names(rules, lang)
        listings.table(sh["changes"], named(review.changes.with_columns(
            pl.col("field").replace_strict(dict(fields), return_dtype=pl.String)), lang),
            plain=rows, note=note)
    return listings.fill(book.data())
