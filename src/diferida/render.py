"""Plain-text rendering of a determination, for the terminal and for print."""

from __future__ import annotations

from .determination import Determination, plain
from .explain import pct, reason_texts
from .i18n import catalog, fmt_date
from .money import format_money

LABELS = {
    "es": {"status": "Estado", "regime": "Régimen", "eligibility_date": "Fecha de elegibilidad",
           "route": "Vía", "routes_met": "Vías que se cumplen", "start_date": "Comienzo",
           "premature": "Solicitud prematura", "annual": "Pensión anual",
           "monthly": "Pensión mensual", "formula": "Cómputo", "minimum": "Mínimo 19.6 aplicado",
           "warnings": "Advertencias", "reasons": "Razones", "explanation": "Explicación",
           "rules": "Versión de las reglas", "as_of": "Fecha de la determinación"},
    "en": {"status": "Status", "regime": "Regime", "eligibility_date": "Eligibility date",
           "route": "Route", "routes_met": "Routes met", "start_date": "Start",
           "premature": "Premature request", "annual": "Annual pension",
           "monthly": "Monthly pension", "formula": "Computation",
           "minimum": "19.6 minimum applied", "warnings": "Warnings", "reasons": "Reasons",
           "explanation": "Explanation", "rules": "Rules version",
           "as_of": "Determination date"},
}


def render_text(d: Determination) -> str:
    lang = d.lang
    L, c = LABELS[lang], catalog(lang)
    yn = lambda b: c["yes"] if b else c["no"]  # noqa: E731
    lines = [d.headline, ""]
    rows = [
        (L["status"], f"{d.status} — {c['status'][d.status]}"),
        (L["regime"], f"{d.regime} — {c['regime'][d.regime]}"),
    ]
    if d.reasons:
        rows.append((L["reasons"], "; ".join(f"{r} ({t})" for r, t in
                                              zip(d.reasons, reason_texts(d.reasons, lang)))))
    if d.status != "not_entitled":
        rows += [
            (L["eligibility_date"], f"{d.eligibility_date} ({fmt_date(d.eligibility_date, lang)})"),
            (L["route"], d.route or "—"),
            (L["routes_met"], ", ".join(d.routes_met)),
            (L["start_date"], str(d.start_date) if d.start_date else "—"),
            (L["premature"], yn(d.premature_request)),
            (L["annual"], format_money(d.annual_amount)),
            (L["monthly"], format_money(d.monthly_amount)),
            (L["minimum"], yn(d.minimum_applied)),
        ]
        if d.formula:
            ac = format_money(d.formula.average_compensation)
            parts = " + ".join(f"{pct(b.rate)} × {ac} × {plain(b.years)} = {format_money(b.amount)}"
                               for b in d.formula.brackets)
            rows.append((L["formula"], f"{d.formula.citation}: {parts}"))
    if d.warnings:
        rows.append((L["warnings"], ", ".join(d.warnings)))
    rows += [(L["as_of"], str(d.as_of)), (L["rules"], d.rules_version)]
    width = max(len(k) for k, _ in rows)
    lines += [f"{k:<{width}}  {v}" for k, v in rows]
    lines += ["", L["explanation"] + ":"]
    for f in d.explanation:
        mark = {True: "✓", False: "✗", None: "·"}[f.held]
        lines.append(f"  {mark} [{f.rule}] {f.text}")
    return "\n".join(lines)
