"""An application as typed or imported: parsed field by field
(`_parse_application`, every bad field named), evaluated by the engine
(`_evaluate`), or shown before saving (`preview`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from ...determination import Determination
from ...i18n import DEFAULT_LANG, LANGS
from ..participant import control_character, field_problem, normalised_id, parse
from ..schemas import ApplicationBody
from ..store import (
    Application,
)
from .common import LIMITS, Refused, _text

# -- the application ------------------------------------------------------------


@dataclass
class _Parsed:
    fields: dict[str, Any]
    application: Application
    rules: Any
    problems: list[dict[str, Any]]


def _parse_application(application: Mapping[str, Any], lang: str,
                       today: date | None = None) -> _Parsed:
    body = {k: v for k, v in application.items() if k not in ("lang",)}
    parsed = parse(body, ApplicationBody)
    problems = [p for p in parsed.problems if p.get("field") != "lang"]
    texts: dict[str, str | None] = {}
    for name in ("name", "address", "note"):
        value = parsed.options.get(name)
        if isinstance(value, str):
            value = value.strip() or None
        if value is None:
            texts[name] = None
            continue
        if not isinstance(value, str):
            problems.append(_app_problem(lang, name, "not_text"))
            continue
        allowed = value.replace("\n", "").replace("\r", "") if name != "name" else value
        char = control_character(allowed)
        if "\x00" in value:
            problems.append(_app_problem(lang, name, "nul_character"))
        elif char is not None:
            problems.append(_app_problem(lang, name, "control_character", char=char))
        elif len(value) > LIMITS[name]:
            problems.append(_app_problem(lang, name, "too_long", limit=LIMITS[name]))
        else:
            texts[name] = value.replace("\r\n", "\n").replace("\r", "\n")
    applied: date | None = None
    raw = parsed.options.get("application_date")
    if isinstance(raw, str):
        raw = raw.strip() or None
    if isinstance(raw, date) and not isinstance(raw, datetime):
        applied = raw
    elif raw is not None:
        try:
            applied = date.fromisoformat(raw) if isinstance(raw, str) and len(raw) == 10 \
                else None
        except ValueError:
            applied = None
        if applied is None:
            problems.append(_app_problem(lang, "application_date", "not_a_date", str(raw)))
    if applied is not None and applied > (today or date.today()):
        problems.append(_app_problem(lang, "application_date", "in_future",
                                     applied.isoformat()))
        applied = None
    letter_lang = _letter_lang(parsed.options.get("letter_lang"), lang, problems)
    app = Application(name=texts.get("name"), address=texts.get("address"),
                      application_date=applied, note=texts.get("note"),
                      letter_lang=letter_lang)
    if getattr(parsed.rules, "illustrative", False):
        # a case is decided, and its letter issued, under law: an illustrative
        # reform is the calculator's and the comparisons', never a case's
        from ...rules import builtin_names, illustrative

        lawful = [n for n in builtin_names() if not illustrative(n)]
        problems.append({"field": "rules", "code": "illustrative_rules",
                         "value": parsed.rules.name,
                         "message": _text(lang, "illustrative_rules", value=parsed.rules.name,
                                          names=", ".join(lawful))})
    return _Parsed(dict(parsed.fields), app, parsed.rules, problems)


def _letter_lang(raw: Any, lang: str, problems: list[dict[str, Any]]) -> str | None:
    """The addressee's language (es, en), as given; None when not given (a
    draft may be saved without it; it is required before submission,
    `letters.requirements`). Anything else is named, never guessed."""
    value = raw.strip() if isinstance(raw, str) else raw
    if value is None or value == "":
        return None
    if isinstance(value, str) and value.lower() in LANGS:
        return value.lower()
    problems.append({"field": "letter_lang", "code": "not_a_language", "value": str(value)[:40],
                     "message": _text(lang, "letter_lang_invalid",
                                      value=str(value)[:40])})
    return None


def _app_problem(lang: str, name: str, code: str, value: Any = None, **kw: Any) -> dict:
    label = _text(lang, f"fields.{name}")
    if code == "in_future":
        message = _text(lang, "in_future", value=value)
    else:
        from .. import messages

        message = messages.text(lang, code, name, value="" if value is None else value, **kw)
    return {"field": name, "code": code, "message": f"{label} ({name}): {message}",
            "value": value}


def _evaluate(parsed: _Parsed, lang: str, as_of: date | None) -> Determination:
    """The engine's answer, or Refused("invalid") naming every bad field."""
    from ...core import InputError, evaluate

    core: list[dict[str, Any]] = []
    d = None
    try:
        d = evaluate(parsed.fields, as_of=as_of, rules=parsed.rules, lang=lang)
    except InputError as exc:
        core = [p.to_dict() for p in exc.problems]
        for p in core:
            p.pop("row", None)
            p.pop("participant_id", None)
    flagged = {p["field"] for p in parsed.problems}
    problems = [*parsed.problems, *(p for p in core if p["field"] not in flagged)]
    pid = normalised_id(parsed.fields.get("participant_id"))
    if pid is None and not any(p["field"] == "participant_id" for p in problems):
        problems.append(field_problem(lang, "participant_id", "missing"))
    elif pid is not None and len(pid) > 200:
        problems.append(field_problem(lang, "participant_id", "too_long", None, limit=200))
    if problems or d is None:
        raise Refused("invalid", problems=problems)
    return d


def preview(application: Mapping[str, Any], *, lang: str,
            as_of: date | None = None) -> Determination | Refused:
    """The engine's answer for an application before saving: the
    Determination, or a Refused("invalid") naming every bad field (returned,
    not raised). Nothing is stored or logged."""
    lang = lang if lang in LANGS else DEFAULT_LANG
    try:
        return _evaluate(_parse_application(application, lang), lang, as_of)
    except Refused as refusal:
        return refusal
