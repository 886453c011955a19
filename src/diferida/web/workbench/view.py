"""How the workbench shows what the workflow returns: times in Puerto Rico
time, amounts, the findings of a stored determination with a mark that is
never only a colour, and the application form's fields. No rule here."""

from __future__ import annotations

import tomllib
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal, InvalidOperation
from functools import cache
from importlib import resources
from typing import Any

from diferida.i18n import check_lang, fmt_date
from diferida.money import format_money

# Puerto Rico keeps Atlantic Standard Time all year (no daylight saving).
AST = timezone(timedelta(hours=-4), "AST")

# The application form, in its order: the applicant, the facts of rules §1,
# the application's own details.
PERSON_FIELDS = ("participant_id", "name", "address", "letter_lang")
FACT_FIELDS = ("birth_date", "entry_date", "separation_date", "creditable_service_years",
               "average_compensation", "group", "refund_requested", "deferred_right_1960",
               "requested_start_date", "as_of")
CASE_FIELDS = ("application_date", "note", "rules")
FORM_FIELDS = (*PERSON_FIELDS, *FACT_FIELDS, *CASE_FIELDS)
CHOICES = {"group": ("general", "police", "firefighter"),
           "refund_requested": ("false", "true"),
           "deferred_right_1960": ("", "true", "false"),
           # the addressee's language, the letter's: Spanish first, chosen
           # unless another is (an office in Puerto Rico writes in Spanish
           # or in English, as the member prefers)
           "letter_lang": ("es", "en")}
TEXTAREAS = ("address", "note")
# the rules set a case is decided under (rules_choices, below): the
# regulation as written unless the analyst chooses another
CHOICES["rules"] = ()


@cache
def words(lang: str) -> dict[str, Any]:
    """The workbench's own texts (i18n/<lang>/web/workbench.toml)."""
    check_lang(lang)
    path = resources.files("diferida") / "i18n" / lang / "web" / "workbench.toml"
    return tomllib.loads(path.read_text("utf-8"))


def ast_time(moment: datetime | None, lang: str) -> str:
    """A moment as Puerto Rico reads it: "2 de diciembre de 2026, 10:15 AST"."""
    if moment is None:
        return "—"
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    local = moment.astimezone(AST)
    return f"{fmt_date(local.date(), lang)}, {local:%H:%M} AST"


def day(value: date | str | None, lang: str) -> str:
    if value is None or value == "":
        return "—"
    if isinstance(value, str):
        try:
            return fmt_date(date.fromisoformat(value), lang)
        except ValueError:
            return value
    return fmt_date(value, lang)


def money(value: Any) -> str:
    if value is None or value == "":
        return "—"
    try:
        return format_money(Decimal(str(value)))
    except (InvalidOperation, ValueError):
        return str(value)


def mark(finding: dict[str, Any], warnings: list[str]) -> tuple[str, str]:
    """(symbol, key of its word in [marks]): a condition still pending is
    "…", never ✗."""
    condition, held = finding.get("condition"), finding.get("held")
    if condition in warnings:
        return "!", "warn"
    if held is True:
        return "✓", "held"
    if held is False and condition in ("route_applies", "minimum"):
        return "–", "na"
    if held is False and condition in ("age", "eligibility"):
        return "…", "pending"
    if held is False:
        return "✗", "not_held"
    return "i", "info"


def sections(result: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """A stored determination's findings in three lists: the findings, the
    warnings (their own heading) and the decisions of interpretation."""
    warnings = list(result.get("warnings") or [])
    findings, warned, decisions = [], [], []
    for f in result.get("explanation") or []:
        symbol, word = mark(f, warnings)
        item = {**f, "symbol": symbol, "word": word}
        if f.get("condition") in warnings:
            warned.append(item)
        elif f.get("condition", "").startswith("reading_"):
            decisions.append(item)
        else:
            findings.append(item)
    return {"findings": findings, "warnings": warned, "decisions": decisions}


def letter_rows(case: Any, lang: str) -> dict[str, Any] | None:
    """The decision and the facts relied on, in words, as the version's
    letter states them (`diferida.letter.view`: the same functions write
    the letter), or None when its letter cannot be written (the case page
    says so in its letter section)."""
    from diferida.letter import LetterError
    from diferida.letter.view import decision_rows, determination, facts_rows
    from diferida.service.workflow.letters import letter_facts

    facts = letter_facts(case, lang)
    try:
        d, rules = determination(facts)
        return {"headline": d.get("headline"), "decision": decision_rows(facts, d, rules),
                "facts": with_fields(facts_rows(facts, d, rules), case.inputs)}
    except (LetterError, KeyError, ValueError, TypeError):
        return None


def with_fields(rows: list[dict[str, Any]], inputs: dict[str, Any]) -> list[dict[str, Any]]:
    """The letter's facts, each with the application's field it states
    (`field`: the form's name for it, for "Cambiar"), in the letter's order:
    its facts (the participant id when there is one), the determination's
    date, the rules set. Rows in another order than that are left without."""
    from diferida.letter.view import FACT_FIELDS as LETTER_FACTS

    given = str(inputs.get("participant_id") or "").strip()
    names = [n for n in LETTER_FACTS if n != "participant_id" or given] + ["as_of", "rules"]
    if len(names) != len(rows):
        return rows
    return [{**row, "field": name} for row, name in zip(rows, names, strict=True)]


def barred_text(codes: tuple[str, ...] | list[str], lang: str) -> str:
    """Why a supervisor may not approve a version (`CaseView.barred`), in words."""
    c = words(lang)["case"]
    written = [code.split(":", 1)[1] for code in codes if code.startswith("version:")]
    parts = []
    if written:
        key = "barred_wrote_one" if len(written) == 1 else "barred_wrote_many"
        numbers = ", ".join(written[:-1]) + c["and"] + written[-1] if len(written) > 1 \
            else written[0]
        parts.append(c[key].format(versions=numbers))
    if "submitted" in codes:
        parts.append(c["barred_submitted"])
    return c["barred"].format(reasons=c["and"].join(parts))


def rules_choices(current: str | None = None) -> list[str]:
    """The rules sets a case may be decided under: the built-in ones that
    are law (an illustrative reform is the calculator's, never a case's),
    the regulation as written first; `current` kept when a stored case
    names another."""
    from diferida.rules import DEFAULT_RULES, builtin_names, illustrative

    names = [n for n in builtin_names() if not illustrative(n)]
    names.sort(key=lambda n: (n != DEFAULT_RULES, n))
    if current and current not in names:
        names.append(current)
    return names


CHOICES["rules"] = tuple(rules_choices())


def rules_title(name: str | None) -> str:
    """A rules set's title in words, as its letter names it (the rules'
    `meta.title`: a name, in Spanish), never its code; the code itself for a
    set that is not built in (one stored from elsewhere: no file is read for
    a name) or cannot be read."""
    from diferida.rules import RulesError, builtin_names, load_rules

    if not name:
        return "—"
    if name not in builtin_names():
        return name
    try:
        return load_rules(name).title or name
    except RulesError:
        return name


def queues_of(role: str) -> tuple[str, ...]:
    """The queues a role's tabs show: an auditor prepares and approves
    nothing, so has no drafts, nothing returned to them and nothing awaiting
    their approval; they see what was issued and what waits for a
    supervisor (their other tabs are the trail and the exports: `tabs`)."""
    if role == "auditor":
        return ("issued", "awaiting")
    return ("drafts", "returned", "awaiting", "issued")


def queue_title(kind: str, role: str, lang: str) -> str:
    """A queue's name in the tabs and as its list's heading: "awaiting" is
    "awaiting my approval" only for whoever may approve."""
    w = words(lang)
    if role == "auditor" and kind == "awaiting":
        return w["auditor"]["awaiting"]
    return w["queue"][kind]


def tabs(role: str, lang: str, href, base: str) -> list[dict[str, str]]:
    """The tabs of a role's pages: its queues and, for an auditor, the trail
    and the exports; each {key, href, text}."""
    out = [{"key": k, "href": href(base, lista=k), "text": queue_title(k, role, lang)}
           for k in queues_of(role)]
    if role == "auditor":
        a = words(lang)["auditor"]
        out += [{"key": "trail", "href": href(base + "/auditoria"), "text": a["trail"]},
                {"key": "exports", "href": href(base + "/auditoria/exportar"),
                 "text": a["exports"]}]
    return out


def event_name(action: str, lang: str) -> str:
    """An event of the audit trail in words (its code stays in the exports
    and the API): the catalog's words, else the code."""
    return words(lang)["audit"]["actions"].get(action, action)


def audit_actions(lang: str, chosen: str = "") -> list[tuple[str, str]]:
    """The action filter's choices, (code, words) in the catalog's order; a
    code typed elsewhere (an old address, the API's) kept as the last one."""
    names = list(words(lang)["audit"]["actions"].items())
    if chosen and chosen not in dict(names):
        names.append((chosen, chosen))
    return names


def outcome(status: int, lang: str) -> str:
    """An event's HTTP status in words."""
    o = words(lang)["audit"]["outcomes"]
    if 200 <= status < 400:
        return o["done"]
    return o.get(str(status), o["other"]).format(status=status)
