"""The valuation report: a workbook laid out to print (diferida/workbook.py)
or JSON, in the run's language (i18n/<lang>/liability.toml)."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from typing import Any

import polars as pl

from ..i18n import catalog, fmt_date
from ..projection.engine import first_fiscal_year
from ..projection.statement import method_rows, rules_text
from ..words import pct
from .curve import YieldCurve, rate_words
from .measure import Basis, Liability, Line
from .parts import ReportParts

MONEY = pl.Decimal(20, 2)


def _money(cents: int | None) -> Decimal | None:
    return None if cents is None else Decimal(int(cents)).scaleb(-2).quantize(Decimal("0.01"))


def discount_rows(basis: Basis, li: Liability, lang: str) -> list[tuple[str, Any]]:
    t = catalog(lang)["liability"]
    d = basis.discount
    if isinstance(d, YieldCurve):
        return [(t["discount"], t["discount_curve"].format(
            file=d.source.get("file", ""), years=len(d.spot), sha256=d.source.get("sha256"),
            last=pct(Decimal(repr(d.spot[-1]))), rate=pct(_round6(li.equivalent_rate))))]
    return [(t["discount"], t["discount_rate"].format(rate=pct(d)))]


def _round6(x: float) -> Decimal:
    return Decimal(repr(x)).quantize(Decimal("0.000001"))


def liability_rows(summary: Any, li: Liability, basis: Basis, step: Decimal, lang: str
                   ) -> list[tuple[str, Any]]:
    t = catalog(lang)["liability"]
    v = summary.measurement_date
    c = summary.counts
    fy = first_fiscal_year(v)
    rows: list[tuple[str, Any]] = [
        *rejected_rows(summary, lang),
        (t["section_liability"].format(date=fmt_date(v, lang)), None),
        (t["total"], _money(li.total)),
        (t["deferred"], _money(li.deferred)),
        (t["in_pay"], _money(li.in_pay)),
        (t["split_rule"], t["split_rule_value"]),
        *discount_rows(basis, li, lang),
        (t["section_members"], None),
        (t["members_deferred"], c["deferred"]),
        (t["members_in_pay"], c["in_pay"]),
        (t["members_deceased"], c["deceased"]),
        (t["members_refunded"], c["refunded"]),
        (t["members_not_entitled"], c["not_entitled"]),
        (t["members_rejected"], c["rows_rejected"]),
        (t["rows_read"], c["rows_read"]),
        (t["section_sensitivity"], None),
        (t["at_lower"].format(rate=rate_words(basis, lang, -step)),
         _money(li.lower) if li.lower is not None else t["not_a_run"]),
        (t["at_rate"].format(rate=rate_words(basis, lang)), _money(li.total)),
        (t["at_higher"].format(rate=rate_words(basis, lang, step)), _money(li.higher)),
        (t["section_cash"], None),
        (t["next_payments"].format(fy=fy), _money(li.next_year_payments)),
        (t["equivalent_rate"], t["equivalent_rate_value"].format(
            rate=pct(_round6(li.equivalent_rate)))),
        (t["macaulay"], t["years_value"].format(n=f"{li.macaulay:.2f}")),
        (t["modified"], t["years_value"].format(n=f"{li.modified:.2f}")),
        (t["duration_rule"], t["duration_rule_value"]),
    ]
    return rows


def rejected_rows(summary: Any, lang: str) -> list[tuple[str, Any]]:
    """The first rows of the first sheet when a schedule of changes was made
    over a census with rejected rows: how many in each census, the members
    matched to a rejected row of the other one, and how the schedule treats
    them (runner.rejects_note)."""
    note = summary.rejected_rows
    if note is None or not (note["census"]["rows_rejected"] or note["prior"]["rows_rejected"]):
        return []
    t = catalog(lang)["liability"]
    rows: list[tuple[str, Any]] = [
        (t["section_rejected"], None),
        (t["rejected_census"], t["rejected_of"].format(
            rejected=note["census"]["rows_rejected"], read=note["census"]["rows_read"])),
        (t["rejected_prior"], t["rejected_of"].format(
            rejected=note["prior"]["rows_rejected"], read=note["prior"]["rows_read"])),
        (t["rejected_now"], note["prior_members_whose_row_was_rejected"]),
        (t["rejected_then"], note["members_whose_prior_row_was_rejected"]),
        (t["rejected_rule"], t["rejected_rule_value"]),
    ]
    if note["over_share_allowed"]:
        rows.append((t["rejected_share"], t["rejected_share_value"].format(
            share=pct(Decimal(note["max_share"])))))
    return rows


def change_frame(lines: list[Line], info: dict[str, Any], prior_date: date, v: date,
                 lang: str) -> pl.DataFrame:
    t = catalog(lang)["liability_changes"]
    words = [t[ln.key].format(prior=fmt_date(prior_date, lang), date=fmt_date(v, lang),
                              rate=pct(_round6(info["interest_rate"])))
             for ln in lines]
    how = [t.get(ln.how or f"how_{ln.key}", "") for ln in lines]
    counts = [info["counts"].get(ln.key.removeprefix("experience_")) for ln in lines]
    return pl.DataFrame({
        t["col_line"]: words,
        t["col_amount"]: pl.Series([int(ln.cents) for ln in lines]).cast(MONEY) / 100,
        t["col_members"]: pl.Series(counts, dtype=pl.Int64),
        t["col_how"]: how,
    }).with_columns(pl.col(t["col_amount"]).cast(MONEY))


def years_frame(li: Liability, v: date, lang: str) -> pl.DataFrame:
    from ..workbook import fiscal_period
    t = catalog(lang)["liability"]
    fys = [int(y) for y in li.fiscal_years]
    return pl.DataFrame({
        t["col_fy"]: [t["fy"].format(year=y) for y in fys] + [t["total_row"]],
        t["col_payments"]: pl.Series([*li.payments.tolist(), int(li.payments.sum())])
        .cast(MONEY) / 100,
        t["col_pv"]: pl.Series([*li.pv.tolist(), int(li.pv.sum())]).cast(MONEY) / 100,
        t["col_period"]: [fiscal_period(y, v, lang) for y in fys] + [None],
    }).with_columns(pl.col(t["col_payments"]).cast(MONEY), pl.col(t["col_pv"]).cast(MONEY))


def employer_frames(employers: tuple, names: dict[str, str] | None, li: Liability,
                    members: dict[str, int], lang: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    t = catalog(lang)["liability"]
    codes, pay, share, prop = employers
    fy0 = int(li.fiscal_years[0]) if len(li.fiscal_years) else first_fiscal_year(date.today())
    summary = pl.DataFrame({
        t["col_employer"]: [*codes, t["total_row"]],
        t["col_name"]: [*((names or {}).get(c, "") for c in codes), None],
        t["col_members"]: pl.Series([*(members.get(c, 0) for c in codes),
                                     sum(members.get(c, 0) for c in codes)], dtype=pl.Int64),
        t["col_share"]: pl.Series([*share.tolist(), int(share.sum())]).cast(MONEY) / 100,
        t["col_proportion"]: [*(int(q) / 1_000_000 for q in prop), int(prop.sum()) / 1_000_000],
        t["col_next"].format(fy=fy0): pl.Series(
            [*(pay[:, 0].tolist() if pay.shape[1] else [0] * len(codes)),
             int(pay[:, 0].sum()) if pay.shape[1] else 0]).cast(MONEY) / 100,
    })
    summary = summary.with_columns(pl.col(t["col_share"]).cast(MONEY),
                                   pl.col(t["col_next"].format(fy=fy0)).cast(MONEY))
    # the pay-as-you-go charges: employers by the next fiscal years, then
    # the later years together, then the total (each column shared to the cent)
    n_fy = pay.shape[1]
    shown = min(n_fy, CHARGE_YEARS)
    cols: dict[str, pl.Series] = {
        t["col_employer"]: pl.Series(t["col_employer"], [*codes, t["total_row"]],
                                     dtype=pl.String)}
    for k in range(shown):
        name = t["fy"].format(year=int(li.fiscal_years[k]))
        cols[name] = _cents_column(name, [*pay[:, k].tolist(), int(pay[:, k].sum())])
    if n_fy > shown:
        later = pay[:, shown:].sum(axis=1)
        name = t["col_later"].format(fy=int(li.fiscal_years[shown]))
        cols[name] = _cents_column(name, [*later.tolist(), int(later.sum())])
    whole = pay.sum(axis=1)
    cols[t["col_all_years"]] = _cents_column(t["col_all_years"],
                                             [*whole.tolist(), int(whole.sum())])
    long = pl.DataFrame(list(cols.values()))
    return summary, long


CHARGE_YEARS = 10  # fiscal years shown one by one in the employers' charges


def _cents_column(name: str, values: list[int]) -> pl.Series:
    return (pl.Series(name, values, dtype=pl.Int64).cast(MONEY) / 100).cast(MONEY)


def assumption_rows(parts: ReportParts) -> list[tuple[str, Any]]:
    lang = parts.lang
    t = catalog(lang)["liability"]
    w = catalog(lang)["workbook"]["assumptions"]
    a = parts.assumptions["assumptions"]
    summary = parts.summary
    rows: list[tuple[str, Any]] = [
        (t["section_measurement"], None),
        (t["measurement_date"], fmt_date(summary.measurement_date, lang)),
        (t["measurement_rule"], t["measurement_rule_value"]),
        (t["census_as_of"], fmt_date(summary.as_of, lang)),
        *discount_rows(parts.basis, parts.liability, lang),
        (t["sensitivity_rule"], t["sensitivity_rule_value"]),
    ]
    # the projection's method in words, but its discount row (stated above)
    rows += [r for r in method_rows(a, lang) if r[0] != w.get("discount")]
    schedule = parts.schedule()
    if schedule is not None:
        info = schedule[1]
        pb: Basis = parts.prior_basis
        rows += [(t["section_prior"], None),
                 (t["prior_date"], fmt_date(parts.prior_date, lang)),
                 (t["prior_rules"], rules_text({"name": parts.prior_rules.name,
                                                "version": parts.prior_rules.version},
                                               lang)),
                 *[(f"{t['prior_prefix']} {k}", v) for k, v in discount_rows(
                     pb, parts.liability, lang)],
                 (t["prior_mortality"], _mortality_words(pb, lang)),
                 (t["prior_claims"], pb.claims.source.get("file") if pb.claims else
                  t["prior_claims_none"]),
                 (t["prior_cola"], pct(Decimal(pb.cola.numerator) /
                                       Decimal(pb.cola.denominator))),
                 (t["interest_rule"], t["interest_rule_value"].format(
                     rate=pct(_round6(info["interest_rate"])))),
                 (t["order_rule"], t["order_rule_value"])]
    if parts.employers is not None:
        rows += [(t["section_employers"], None), (t["employer_rule"], t["employer_rule_value"])]
    return rows


def _mortality_words(b: Basis, lang: str) -> str:
    t = catalog(lang)["liability"]
    tb = b.table
    if tb.none:
        return t["mortality_none"]
    imp = t["improvement_scale"].format(name=tb.improvement.name.upper()) if tb.improvement \
        else t["improvement_none"]
    scale = "" if tb.scale == 1 else t["mortality_scaled"].format(factor=f"{tb.scale:g}")
    return t["mortality_words"].format(table=tb.name, improvement=imp, scale=scale)


def workbook(parts: ReportParts) -> bytes:
    from ..workbook import Book, fit_width
    lang = parts.lang
    t = catalog(lang)["liability"]
    summary, li = parts.summary, parts.liability
    v = summary.measurement_date
    subtitle = t["subtitle"].format(date=fmt_date(v, lang), rules=rules_text(
        {"name": parts.rules.name, "version": parts.rules.version}, lang))
    book = Book(lang, t["title"], subtitle)
    from ..projection.options import SENSITIVITY_STEP
    book.pairs(t["sheet_liability"], (t["item"], t["value"]),
               liability_rows(summary, li, parts.basis, SENSITIVITY_STEP, lang),
               label_width=52, value_width=60)
    schedule = parts.schedule()
    if schedule is not None:
        frame = change_frame(*schedule, v, lang)
        # one page at PRINT_SCALE: a label longer than its column, and the runs
        # it is the difference of, wrap onto a second line in a taller row
        widths = {frame.columns[0]: CHANGE_LABEL_WIDTH, frame.columns[1]: 18,
                  frame.columns[2]: 10, frame.columns[3]: CHANGE_HOW_WIDTH}
        ws = book.table(t["sheet_changes"], frame, total_last=True, widths=widths,
                        wrap_over=CHANGE_HOW_WIDTH - 2)
        _top_rows(book, ws, frame, widths)
    years = years_frame(li, v, lang)
    book.table(t["sheet_years"], years, total_last=True)
    if parts.employers is not None:
        members = _members_by_employer(parts)
        emp, long = employer_frames(parts.employers, parts.names, li, members, lang)
        ws = book.table(t["sheet_employers"], emp, total_last=True,
                        plain=(t["col_proportion"],))
        at = emp.columns.index(t["col_proportion"])
        ws.set_column(at, at, 12, book.wb.add_format({"num_format": "0.000000"}))
        ws = book.table(t["sheet_employer_payments"], long, total_last=True)
        _print_in_blocks(ws, [fit_width(long, c) for c in long.columns])
    if parts.gasb73 is not None:
        _gasb_sheets(book, parts)
    book.pairs(t["sheet_assumptions"], (t["item"], t["value"]), assumption_rows(parts),
               label_width=45, value_width=95)
    return book.data()


def _gasb_sheets(book: Any, parts: ReportParts) -> None:
    """The GASB 73 sections (gasb_report.py), a sheet each: the rows as
    label and value, or the table; the section's paragraphs below it."""
    from ..workbook import lines as wrapped_lines
    from .gasb_report import sections
    t = catalog(parts.lang)["liability"]
    f = book.wb.add_format({"text_wrap": True, "valign": "top"})
    for s in sections(parts):
        if s.rows is not None:
            rows = [*s.rows, *(("", p) for p in s.paragraphs)]
            book.pairs(s.sheet, (t["item"], t["value"]), rows, label_width=60,
                       value_width=80)
            continue
        assert s.table is not None
        ws = _gasb_table(book, s)
        at = s.table.height + 2
        for p in s.paragraphs:
            ws.merge_range(at, 0, at, min(len(s.table.columns), 6) - 1, p, f)
            ws.set_row(at, 15 * wrapped_lines(p, 100))
            at += 1


def _gasb_table(book: Any, s: Any) -> Any:
    """A GASB 73 table as a sheet: a cell with no figure says so (s.blank,
    right-aligned like the figures, its column wide enough for the words);
    a table wider than the page prints in blocks of columns at PRINT_SCALE %
    (its first column on each, longer texts wrapped at WIDE_WRAP), never
    squeezed to one page width in a type too small to read."""
    from ..workbook import fit_width
    frame = s.table
    empty = {c for c in frame.columns if frame.get_column(c).null_count()}
    wide = sum(fit_width(frame, c) + 3 for c in frame.columns) / 10 > PAGE_INCHES
    cap = WIDE_WRAP if wide else 60
    widths = {c: fit_width(frame, c, cap) for c in frame.columns}
    if s.blank is not None:
        widths.update({c: max(widths[c], len(s.blank) + 2) for c in empty})
    ws = book.table(s.sheet, frame, total_last=s.total_last, widths=widths, wrap_over=cap)
    if s.blank is not None and empty:
        right = book.wb.add_format({"align": "right"})
        for r, row in enumerate(frame.iter_rows(), start=1):
            for c, v in enumerate(row):
                if v is None:
                    ws.write_string(r, c, s.blank, right)
    if wide:
        _print_in_blocks(ws, list(widths.values()))
    return ws


CHANGE_LABEL_WIDTH = 60  # the schedule's labels (longer ones wrap: en 1, es 2)
CHANGE_HOW_WIDTH = 32  # "T0 (prior census at this date) − E ..." on two lines
WIDE_WRAP = 34  # a wide GASB 73 table's texts (its lines, employers' names), wrapped
PRINT_SCALE = 85  # the employers' charges, printed in blocks of fiscal years
PAGE_INCHES = 11 - 0.8  # landscape Letter less the margins


def _print_in_blocks(ws: Any, widths: list[int]) -> None:
    """The employers' charges at PRINT_SCALE %, as many pages across as the
    fiscal years need (a page break between whole columns), the employer
    column repeated on each: one page wide would print them in a type too
    small to read (about 5 points for the ten years, the later years and
    the total). A column prints at most a tenth of an inch a character."""
    room = PAGE_INCHES * 100 / PRINT_SCALE
    inches = [(w + 1) / 10 for w in widths]
    breaks, used = [], inches[0]
    for j in range(1, len(widths)):
        if used > inches[0] and used + inches[j] > room:
            breaks.append(j)
            used = inches[0]
        used += inches[j]
    ws.set_print_scale(PRINT_SCALE)
    ws.set_v_pagebreaks(breaks)
    ws.repeat_columns(0, 0)


def _members_by_employer(parts: ReportParts) -> dict[str, int]:
    return parts.employer_members or {}


def _top_rows(book: Any, ws: Any, frame: pl.DataFrame, widths: dict[str, int]) -> None:
    """The schedule's rows that wrap onto more lines: as tall as their text
    (LibreOffice does not size them itself) and every cell of the row, the
    amount and the count too, written again at the top of the row, so that a
    line's words and its figures print level."""
    from ..workbook import COUNT, LINE_POINTS, MONEY, lines
    f = book.wb.add_format
    money = f({"num_format": MONEY, "valign": "top"})
    count = f({"num_format": COUNT, "valign": "top"})
    words = f({"text_wrap": True, "valign": "top"})
    pad = f({"text_wrap": True, "valign": "top", "align": "left", "indent": 1})
    label, amount, members, how = frame.columns
    for r, row in enumerate(frame.iter_rows(named=True), start=1):
        if r == frame.height:  # the total: one line, in bold
            break
        tall = max(lines(row[label], widths[label]), lines(row[how], widths[how] - 2))
        if tall == 1:
            continue
        ws.set_row(r, LINE_POINTS * tall)
        ws.write_string(r, 0, row[label], words)
        ws.write_number(r, 1, float(row[amount]), money)
        if row[members] is not None:
            ws.write_number(r, 2, row[members], count)
        ws.write_string(r, 3, row[how], pad)


def report_json(parts: ReportParts) -> bytes:
    summary = parts.summary
    li = parts.liability
    d = summary.to_dict()
    d["fiscal_years"] = [{"fiscal_year": int(y), "payments": str(_money(p)),
                          "present_value": str(_money(q))}
                         for y, p, q in zip(li.fiscal_years, li.payments, li.pv, strict=True)]
    if parts.employers is not None:
        codes, pay, _, _ = parts.employers
        d["employer_payments"] = {c: [str(_money(x)) for x in pay[i]]
                                  for i, c in enumerate(codes)}
    if parts.info is not None:
        d["changes_basis"] = {"interest_rate": f"{parts.info['interest_rate']:.6f}",
                              "members": parts.info["counts"]}
    if parts.gasb73 is not None:
        d["gasb73"]["ten_years"] = _ten_years_json(parts)
    d["assumptions"] = parts.assumptions["assumptions"]
    d["assumptions"]["discount"] = d["liability"]["discount"]
    d["assumptions"].pop("discount_rates", None)
    return (json.dumps(d, ensure_ascii=False, indent=2, default=str) + "\n").encode("utf-8")


def _ten_years_json(parts: ReportParts) -> list[dict[str, Any]]:
    """The required supplementary information by fiscal year, most recent
    first: the schedule in GASB's layout of each measurement kept (null: not
    available)."""
    from .gasb73 import RSI_YEARS
    g = parts.gasb73
    kept = {r["measurement_date"][:4]: r for r in g.report.history}
    kept[str(g.report.fy)] = g.record
    out = []
    for k in range(RSI_YEARS):
        y = g.report.fy - k
        r = kept.get(str(y))
        out.append({"fiscal_year": y, "available": r is not None,
                    "measurement_date": r["measurement_date"] if r else None,
                    "total_pension_liability": r["total"] if r else None,
                    "schedule": r.get("layout") if r else None,
                    "covered_employee_payroll": "not applicable",
                    "sha256": r.get("sha256") if r else None})
    return out


__all__ = ["report_json", "workbook"]
