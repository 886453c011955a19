"""From a parsed JSON body to the core's inputs: the rules §1 fields, the
request's options (lang, rules, …), and every problem found on the way."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ValidationError

from ..core import InputError, evaluate
from ..determination import Determination
from ..errors import DiferidaError
from ..fields import FIELD_NAMES
from ..i18n import DEFAULT_LANG, LANGS
from ..rules import Rules, builtin_names, load_rules
from ..words import field_label
from . import messages
from .errors import problem
from .schemas import NOTE_LIMIT, ParticipantBody, body_error

# JSON numbers are read as exact decimals; a number written with an absurd
# exponent is left in its written form for validation to refuse, rather than
# expanded into millions of digits.
MAX_EXPONENT = 30


def field_problem(lang: str, name: str, code: str, value: Any = None, **kw: Any) -> dict:
    label = field_label(lang, name)
    prefix = f"{label} ({name})" if label != name else name
    shown = "" if value is None else value
    return problem(name, code, f"{prefix}: {messages.text(lang, code, name, value=shown, **kw)}",
                   value if value is None or isinstance(value, str | int | bool) else str(value))


def input_value(value: Any) -> Any:
    """A JSON value as the core reads it (decimals as their exact text)."""
    if isinstance(value, Decimal):
        if not value.is_finite() or abs(value.as_tuple().exponent) > MAX_EXPONENT:
            return str(value)
        return format(value, "f")
    return value


@dataclass
class Parsed:
    fields: dict[str, Any]
    options: dict[str, Any]
    lang: str
    rules: Rules
    problems: list[dict[str, Any]] = field(default_factory=list)


def parse(body: dict[str, Any], model: type[BaseModel] = ParticipantBody) -> Parsed:
    """Validate a body (read by `errors.parse_json_object`) with its model
    (`schemas.ParticipantBody`, `schemas.CaseBody`): the JSON type of every
    field and the options; every problem is named in the request's language.
    The fields' values are the core's to validate."""
    raw_lang = body.get("lang")
    lang = raw_lang if raw_lang in LANGS else DEFAULT_LANG
    refused: dict[str, str] = {}
    try:
        model.model_validate(body)  # strict: nothing converted
    except ValidationError as exc:
        for e in exc.errors():
            refused.setdefault(str(e["loc"][0]), e["type"])
    problems: list[dict[str, Any]] = []
    # the language and the rules first, then the rest in the order given
    place = {k: i for i, k in enumerate(body)}
    for key in sorted(refused, key=lambda k: (k not in ("lang", "rules"), k != "lang",
                                              place.get(k, 0))):
        code, shown = body_error(model, key, refused[key])
        kw = {"names": ", ".join(builtin_names())} if code == "unknown_rules" else {}
        if code == "too_long":
            kw["limit"] = NOTE_LIMIT
        problems.append(field_problem(lang, key, code, body[key] if shown else None, **kw))
    # a name the model accepted is a built-in one
    named = body.get("rules") if "rules" not in refused else None
    rules = load_rules(named)
    options_in = set(model.model_fields) - set(FIELD_NAMES) - {"lang", "rules"}
    # the types are strict, so the values the model accepted are those given:
    # they are taken from the body, in its order (a case's inputs are stored so)
    fields: dict[str, Any] = {}
    options: dict[str, Any] = {}
    for key, value in body.items():
        if key in ("lang", "rules") or key in refused:
            continue
        if key in options_in:
            options[key] = value
        else:
            fields[key] = input_value(value)
    pid = fields.get("participant_id")
    bad = id_problem(lang, pid) if isinstance(pid, str) else None
    if bad is not None:
        problems.append(bad)
        del fields["participant_id"]
    return Parsed(fields, options, lang, rules, problems)


# Unicode's control characters (category Cc): C0, DEL and C1.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def control_character(text: str) -> str | None:
    """The first control character in `text`, written U+XXXX; None when
    there is none."""
    m = _CONTROL.search(text)
    return None if m is None else f"U+{ord(m.group()):04X}"


def id_problem(lang: str, value: str, name: str = "participant_id") -> dict | None:
    """Why a participant id given as text cannot be one; None when it can.
    NUL is stored by no database (PostgreSQL refuses it); no control character
    (a tab or a line break inside the id, an escape sequence) is a
    meaningful part of an id either, and one would show in a printed
    determination, a log line or an audit event as something other than it
    is. The spaces around an id are not part of it (they are trimmed)."""
    if "\x00" in value:
        return field_problem(lang, name, "nul_character")
    char = control_character(normalised_id(value) or "")
    if char is not None:
        return field_problem(lang, name, "control_character", char=char)
    return None


def normalised_id(value: Any) -> str | None:
    """A participant id as the core reads it: text with surrounding whitespace
    removed (the same strip as `validation._raw`); None when blank."""
    import polars as pl

    if value is None:
        return None
    text = value if isinstance(value, str) else input_value(value)
    if isinstance(text, bool):
        text = "true" if text else "false"
    stripped = pl.Series([str(text)], dtype=pl.String).str.strip_chars().item()
    return stripped or None


def determine(parsed: Parsed) -> Determination:
    """Evaluate the participant; InputError names every bad field, the
    request's own problems included."""
    try:
        d = evaluate(parsed.fields, rules=parsed.rules, lang=parsed.lang)
    except InputError as exc:
        raise _with_request_problems(parsed, [p.to_dict() for p in exc.problems]) from None
    if parsed.problems:
        raise _with_request_problems(parsed, [])
    return d


class RequestProblems(DiferidaError):
    def __init__(self, problems: list[dict[str, Any]]):
        super().__init__(f"{len(problems)} problems")
        self.problems = problems


def _with_request_problems(parsed: Parsed, core: list[dict[str, Any]]) -> RequestProblems:
    flagged = {p["field"] for p in parsed.problems}
    for p in core:
        # the core leaves `row` for files; one participant has no row
        p.pop("row", None)
    # a field refused here for its JSON type reaches the core as absent: its
    # "missing" would say the same thing twice
    core = [p for p in core if p["field"] not in flagged]
    return RequestProblems([*parsed.problems, *core])
