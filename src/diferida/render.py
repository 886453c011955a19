"""Plain-text rendering of a determination, for the terminal and for print.

The text speaks the reader's language only: dates written out, statuses,
regimes and warnings as sentences. The codes (`not_yet_eligible`,
`pre1990`, ISO dates) belong to the JSON form, beside their texts.
"""

from __future__ import annotations

from datetime import date

from .determination import Determination, plain
from .explain import cite, pct, reason_texts, regime_text
from .i18n import LANGS, catalog, fmt_date
from .money import format_money
from .outcomes import WARNINGS
from .rules import Rules, load_rules

LABELS = {lang: catalog(lang)["render_labels"] for lang in LANGS}  # i18n/<lang>/cli.toml


def rules_line(d: Determination) -> str:
    """The rules set by name and title, with its version hash."""
    title = f" — {d.rules_title}" if d.rules_title else ""
    return f"{d.rules_name}{title} ({d.rules_version})"


def rules_of(d: Determination) -> Rules:
    return d.rules if d.rules is not None else load_rules(d.rules_name or None)


def regime_line(d: Determination) -> str:
    """The regime in words; a participant Article 19 does not cover has none of its regimes."""
    regime = "not_covered" if "not_covered" in d.reasons else d.regime
    return regime_text(regime, rules_of(d), d.lang)


def render_text(d: Determination) -> str:
    lang = d.lang
    L, c = LABELS[lang], catalog(lang)
    rules = rules_of(d)
    lines = [d.headline, ""]
    rows = [(L["status"], c["status"][d.status]), (L["regime"], regime_line(d))]
    if d.reasons:
        rows.append((L["reasons"], "; ".join(reason_texts(d.reasons, rules, lang))))
    if d.status != "not_entitled":
        if d.premature_request:
            start = L["premature"].format(date=_requested(d))
        elif d.start_date:
            start = fmt_date(d.start_date, lang)
        else:
            start = L["start_open"]
        route = rules.route(d.route)
        minimum = L["minimum_none"]
        if d.formula and d.formula.minimum_amount is not None:
            minimum = (f"{format_money(d.formula.minimum_amount)}, "
                       + L["minimum_paid" if d.minimum_applied else "minimum_not_paid"])
        rows += [
            (L["eligibility_date"], fmt_date(d.eligibility_date, lang)),
            (L["route"], cite(route.citation, lang)),
            (L["routes_met"], ", ".join(cite(rules.route(r).citation, lang)
                                        for r in d.routes_met)),
            (L["start_date"], start),
            (L["annual"], format_money(d.annual_amount)),
            (L["monthly"], format_money(d.monthly_amount)),
            (L["minimum"].format(rule=cite(rules.minimum_citation, lang)), minimum),
        ]
        if d.formula:
            ac = format_money(d.formula.average_compensation)
            parts = " + ".join(f"{pct(b.rate)} × {ac} × {plain(b.years)} = {format_money(b.amount)}"
                               for b in d.formula.brackets)
            rows.append((L["formula"], f"{cite(d.formula.citation, lang)}: {parts}"))
    rows += [(L["as_of"], fmt_date(d.as_of, lang)), (L["rules"], rules_line(d))]
    width = max(len(k) for k, _ in rows)
    lines += [f"{k:<{width}}  {v}" for k, v in rows]
    warnings = [f for f in d.explanation if f.condition in WARNINGS]
    if warnings:
        lines += ["", L["warnings"] + ":"]
        lines += [f"  ! {f.text}" for f in warnings]
    lines += ["", L["explanation"] + ":"]
    for f in d.explanation:
        if f.condition in WARNINGS:
            continue
        mark = {True: "✓", False: "✗", None: "·"}[f.held]
        if f.held is False and f.condition in ("age", "eligibility"):
            mark = "…"  # a date still to come, not a condition failed
        lines.append(f"  {mark} {f.text}")
    return "\n".join(lines)


def _requested(d: Determination) -> str:
    start = next((f for f in d.explanation if f.condition == "start"), None)
    value = start.values.get("requested_start_date") if start else None
    return fmt_date(date.fromisoformat(value), d.lang) if value else "—"
