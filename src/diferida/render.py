"""Plain-text rendering of a determination, for the terminal and for print.

The text speaks the reader's language only: dates written out, statuses,
regimes and warnings as sentences. The codes (`not_yet_eligible`,
`pre1990`, ISO dates) belong to the JSON form, beside their texts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

from .determination import Determination, plain
from .explain import cite, pct, reason_texts, regime_text
from .i18n import LANGS, Keep, catalog, fmt_date
from .money import format_money
from .outcomes import WARNINGS
from .rules import Rules, illustrative, load_rules

LABELS = {lang: catalog(lang)["render_labels"] for lang in LANGS}  # i18n/<lang>/cli.toml


def rules_line(d: Determination) -> str:
    """The rules set by name and title, with its version hash."""
    title = rules_title(d)
    title = f" — {title}" if title else ""
    return f"{d.rules_name}{title} ({d.rules_version})"


def rules_title(d: Determination) -> str:
    """The rules set's title in the text's language: an illustrative reform
    (not law) is named in words of the catalog ([rules_titles]); any other
    set keeps its own title (the Regulation's is a name, in Spanish)."""
    titles = catalog(d.lang).get("rules_titles", {})
    if d.rules_name in titles and illustrative(d.rules_name):
        # the numbers in the title are the rules file's, never the catalog's
        return titles[d.rules_name].format_map(Keep(title_words(rules_of(d))))
    return d.rules_title


def title_words(rules: Rules) -> dict[str, str]:
    """What an illustrative rules set's title quotes, from its file: each
    route's age (`age_19_2`) and each relief adjustment's rate, cap, amount
    and band (`raise_rate`, `raise_cap`, `one_time_amount`, `one_time_below`,
    …; the first adjustment of a kind)."""
    out = {f"age_{r.id.replace('.', '_').replace('(', '').replace(')', '')}": str(r.age)
           for r in rules.routes}
    if rules.relief is not None:
        for a in rules.relief.ordered():
            for name, value, say in (("rate", a.rate, pct), ("cap", a.cap_monthly, format_money),
                                     ("amount", a.amount, format_money),
                                     ("below", a.below_monthly, format_money),
                                     ("minimum", a.minimum_monthly, format_money)):
                if value is not None:
                    out.setdefault(f"{a.kind}_{name}", say(value))
    return out


def rules_of(d: Determination) -> Rules:
    return d.rules if d.rules is not None else load_rules(d.rules_name or None)


def relief_note(rules: Rules, lang: str) -> str | None:
    """One sentence where the rules set carries a relief ([post_start]),
    which no determination applies: the amount a determination states is
    Article 19's, without it (a relief never changes a determination,
    docs/relief.md); its source in the text's language ([relief_citations]).
    None for a rules set without one. Said once, beside the rules set's
    name, in the text, the web answer and the letter."""
    if rules.relief is None:
        return None
    c = catalog(lang)
    said = c.get("relief_citations", {}).get(rules.name)
    return c["rules_relief"]["note"].format(
        citation=said if said is not None else cite(rules.relief.citation, lang))


def regime_line(d: Determination) -> str:
    """The regime in words; a participant Article 19 does not cover has none
    of its regimes, and is named by the program of their entry date (rules
    §2 Decision, the wording: Act 3-2013's hybrid program from its date)."""
    covered = next((f for f in d.explanation if f.condition == "covered"), None)
    return regime_words(d.regime, d.reasons, covered.values if covered is not None else {},
                        rules_of(d), d.lang)


def regime_words(regime: str | None, reasons: Sequence[str], covered: Mapping[str, Any],
                 rules: Rules, lang: str) -> str:
    """regime_line from a determination's parts (as stored: the letter's):
    its regime, its reasons and the values of its `covered` finding."""
    if "not_covered" not in reasons:
        return regime_text(str(regime), rules, lang)
    entry = covered.get("entry_date")
    if entry is not None and date.fromisoformat(str(entry)) >= rules.hybrid_program_from:
        return catalog(lang)["regime"]["not_covered_hybrid"].format(
            law=cite(rules.hybrid_program_citation, lang))
    return regime_text("not_covered", rules, lang)


def start_text(d: Determination, L: dict[str, str]) -> str:
    """The start row (rules §5 Decision): no date it offers as the start or
    the earliest start is before the determination's date; a past date asked
    for is said as asked for, never bare."""
    return say_start(d.lang, status=d.status, premature=d.premature_request,
                     requested=_requested_date(d), start=d.start_date,
                     eligibility=d.eligibility_date, as_of=d.as_of, labels=L)


def say_start(lang: str, *, status: str, premature: bool, requested: date | None,
              start: date | None, eligibility: date | None, as_of: date,
              labels: dict[str, str] | None = None) -> str:
    """The start of a participant entitled under the rules (status not
    `not_entitled`), in words: the one wording of every place a start is
    said to people (the determination's start row, `evaluate` with two rule
    sets, the comparison's workbook)."""
    L = LABELS[lang] if labels is None else labels
    now = status == "eligible"
    if premature:
        return L["premature_now" if now else "premature"].format(
            requested=fmt_date(requested, lang) if requested else "—",
            date=fmt_date(eligibility, lang))
    if start is not None and start < as_of:
        return L["start_past"].format(requested=fmt_date(start, lang),
                                      as_of=fmt_date(as_of, lang))
    if start is not None:
        return fmt_date(start, lang)
    if now:
        return L["start_open_now"]
    return L["start_open"].format(date=fmt_date(eligibility, lang))


def render_text(d: Determination) -> str:
    lang = d.lang
    L, c = LABELS[lang], catalog(lang)
    rules = rules_of(d)
    lines = [d.headline, ""]
    rows = [(L["status"], c["status"][d.status]), (L["regime"], regime_line(d))]
    if d.reasons:
        rows.append((L["reasons"], "; ".join(reason_texts(d.reasons, rules, lang))))
    if d.status != "not_entitled":
        start = start_text(d, L)
        assert d.route is not None  # an entitled member's route
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
    note = relief_note(rules, lang)
    if note is not None:
        lines += ["", note]
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


def _requested_date(d: Determination) -> date | None:
    start = next((f for f in d.explanation if f.condition == "start"), None)
    value = start.values.get("requested_start_date") if start else None
    return date.fromisoformat(value) if value else None
