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

from diferida.i18n import LANGS, fmt_date
from diferida.money import format_money

# Puerto Rico keeps Atlantic Standard Time all year (no daylight saving).
AST = timezone(timedelta(hours=-4), "AST")

# The application form, in its order: the applicant, the facts of rules §1,
# the application's own details.
PERSON_FIELDS = ("participant_id", "name", "address")
FACT_FIELDS = ("birth_date", "entry_date", "separation_date", "creditable_service_years",
               "average_compensation", "group", "refund_requested", "deferred_right_1960",
               "requested_start_date", "as_of")
CASE_FIELDS = ("application_date", "note")
FORM_FIELDS = (*PERSON_FIELDS, *FACT_FIELDS, *CASE_FIELDS)
CHOICES = {"group": ("general", "police", "firefighter"),
           "refund_requested": ("false", "true"),
           "deferred_right_1960": ("", "true", "false")}
TEXTAREAS = ("address", "note")


@cache
def words(lang: str) -> dict[str, Any]:
    """The workbench's own texts (i18n/<lang>/web/workbench.toml)."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}")
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
            value = date.fromisoformat(value)
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
