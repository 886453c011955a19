"""Shapes of requests and responses: the request bodies the API validates
(`ParticipantBody`, `CaseBody`) and the answers documented at /docs.

A JSON body is read in two steps. `errors.parse_json_object` reads the raw
JSON (see why there), then a body model checks the JSON type of every field
and the request's options (`lang`, `rules`, `supersedes`, `note`). The
values of the rules §1 fields are the core's to validate (a real calendar
date, a birth before entry, exact decimals, ...: every bad field named at
once, in the core's words); the models say what is required and what each
field accepts, and they are the request schemas of the OpenAPI document."""

from __future__ import annotations

import copy
import re
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    InstanceOf,
    StrictBool,
    StrictInt,
    StrictStr,
    WithJsonSchema,
    create_model,
)
from pydantic_core import PydanticCustomError

from ..i18n import HELP_LANG, fmt_date, help_text

Scalar = str | int | float | bool | None

EXAMPLE_PARTICIPANT = {
    "participant_id": "P-0001",
    "birth_date": "1970-05-10",
    "entry_date": "1988-07-01",
    "separation_date": "2010-06-30",
    "creditable_service_years": "22",
    "average_compensation": "30000.00",
    "group": "general",
    "refund_requested": False,
    "as_of": "2026-11-29",
}


# What each kind of rules §1 field accepts in JSON. The core reads every value
# as text with surrounding spaces removed, so a JSON number or true/false is
# read as its text; these schemas say so, and mark the required fields.
_SPACE = r"\s*"
# A participant id: something besides spaces, and no control character (NUL,
# a tab or a line break inside it, ...: service/participant.py); the spaces
# around it (tabs and line breaks included) are trimmed.
_TRIMMED = r"[\t\n\v\f\r ]*"
_NOT_CONTROL = r"[^\x00-\x1f\x7f-\x9f]"
ID_PATTERN = (rf"^{_TRIMMED}{_NOT_CONTROL}*[^\s\x00-\x1f\x7f-\x9f]{_NOT_CONTROL}*"
              rf"{_TRIMMED}$")
_DATE = {"type": "string", "pattern": rf"^{_SPACE}\d{{4}}-\d{{2}}-\d{{2}}{_SPACE}$",
         "description": help_text("api.date_kind"), "examples": ["1970-05-10"]}
_BOOL = {"anyOf": [{"type": "boolean"},
                   {"type": "string",
                    "pattern": rf"^{_SPACE}([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]){_SPACE}$"}],
         "description": help_text("api.bool_kind")}


def _decimal(places: int) -> dict[str, Any]:
    return {"anyOf": [{"type": "string", "pattern": rf"^{_SPACE}\+?\d{{1,15}}(\.\d*)?{_SPACE}$"},
                      {"type": "number", "minimum": 0}],
            "description": help_text("api.decimal_kind", places=places)}


def field_description(name: str, rules: Any = None) -> str:
    """The API's description of a rules §1 field (catalog [help.api.fields]);
    the 19.6 cut-off date is the one of `rules` (default: the default rules),
    so the document says what the engine applies."""
    from ..rules import load_rules

    r = load_rules(rules)
    return help_text(f"api.fields.{name}", cutoff=fmt_date(r.deferred_right_cutoff, HELP_LANG),
                     rules=r.name)


def _field_schema(f, id_limit: int | None, rules: Any = None) -> dict[str, Any]:
    from ..rules import GROUPS

    if f.kind == "date":
        schema = copy.deepcopy(_DATE)
    elif f.kind == "bool":
        schema = copy.deepcopy(_BOOL)
    elif f.kind == "decimal":
        schema = _decimal(f.places or 0)
    elif f.kind == "group":
        schema = {"type": "string", "enum": list(GROUPS)}
    else:
        text: dict[str, Any] = {"type": "string", "pattern": ID_PATTERN}
        if id_limit:
            text["maxLength"] = id_limit
        schema = {"anyOf": [text, {"type": "integer"}]}
    schema["description"] = " ".join(
        x for x in (field_description(f.name, rules), schema.get("description")) if x)
    optional = not f.required and not (f.name == "participant_id" and id_limit)
    if optional:  # null reads as absent
        if "anyOf" in schema:
            schema["anyOf"].append({"type": "null"})
        else:
            inner = {k: v for k, v in schema.items() if k != "description"}
            schema = {"anyOf": [inner, {"type": "null"}], "description": schema["description"]}
    return schema


NOTE_LIMIT = 2000
MAX_DB_ID = 2**63 - 1
# A rules §1 field as JSON: text, a whole number, true/false, a number with a
# fraction (read as an exact Decimal by parse_json_object, never a float) or
# null; what the value means is the core's to check.
JsonScalar = StrictStr | StrictInt | StrictBool | InstanceOf[Decimal] | None


class _Body(BaseModel):
    """A request body: a key that is no field of the body still has to be a
    JSON scalar; the core then refuses it by name (unknown_field)."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, JsonScalar] = Field(init=False)


def _body_model(name: str, *, case: bool, rules: Any = None) -> type[BaseModel]:
    """The model of a request body: the rules §1 fields and the options. For a
    case, the participant id is required too (and `supersedes`, `note`). Every
    field may be absent in Python: a missing field is named by the core, with
    every other bad field; the document marks the required ones. `rules`:
    the rules the descriptions name (default: the default rules)."""
    from ..fields import FIELDS
    from ..i18n import LANGS
    from ..rules import builtin_names

    id_limit = 200 if case else None
    langs, names = tuple(LANGS), tuple(builtin_names())
    fields: dict[str, Any] = {
        f.name: (Annotated[JsonScalar, WithJsonSchema(_field_schema(f, id_limit, rules))], None)
        for f in FIELDS}
    fields["lang"] = (Annotated[Literal[langs] | None, WithJsonSchema(  # type: ignore[valid-type]
        {"type": "string", "enum": list(langs),
         "description": help_text("api.lang")})],
                      Field(None, json_schema_extra={"default": "es"}))
    fields["rules"] = (Annotated[Literal[names] | None, WithJsonSchema(  # type: ignore[valid-type]
        {"type": "string", "enum": list(names),
         "description": help_text("api.rules")})], None)
    required = [f.name for f in FIELDS if f.required]
    example: dict[str, Any] = {**EXAMPLE_PARTICIPANT, "lang": "en"}
    if case:
        fields["supersedes"] = (Annotated[StrictInt, Field(ge=1, le=MAX_DB_ID)] | None, Field(
            None, description=help_text("api.supersedes")))
        fields["note"] = (Annotated[StrictStr, Field(max_length=NOTE_LIMIT,
                                                     pattern=r"^[^\x00]*$")] | None,
                          Field(None, description=help_text("api.note")))
        required = ["participant_id", *required]
        example["note"] = "first determination"

    def document(schema: dict[str, Any]) -> None:
        for prop in schema["properties"].values():
            prop.pop("title", None)
            if "default" in prop and prop["default"] is None:
                del prop["default"]  # absent, not null: the core's default
        schema.pop("title", None)
        # any other key is refused, by the core, naming it (unknown_field)
        schema.update(required=required, additionalProperties=False, example=example)

    # the document's finishing touches, where the model is configured
    base = type(f"_{name}", (_Body,), {"model_config": ConfigDict(
        extra="allow", json_schema_extra=document)})
    return create_model(name, __base__=base, **fields)


# What a body model's error means, in the API's codes (service.toml): per
# field, pydantic's error type -> (code, whether the message shows the value).
# Any other field that is not a JSON scalar: not_a_scalar.
BODY_ERRORS: dict[str, dict[str | None, tuple[str, bool]]] = {
    "lang": {None: ("unknown_lang", True)},
    "rules": {None: ("unknown_rules", True)},
    "supersedes": {None: ("not_an_integer", True)},
    "note": {None: ("not_text", False), "string_too_long": ("too_long", False),
             "string_pattern_mismatch": ("nul_character", False)},
}


def body_error(model: type[BaseModel], field: str, error_type: str) -> tuple[str, bool]:
    """The API's code for an error of a body model on `field`, and whether
    its message shows the value given."""
    codes = BODY_ERRORS.get(field) if field in model.model_fields else None
    if codes is None:
        return "not_a_scalar", False
    return codes.get(error_type, codes[None])


ParticipantBody = _body_model("ParticipantBody", case=False)
CaseBody = _body_model("CaseBody", case=True)
# The workbench's application (service/workflow/): a participant's body and
# the fields a case needs that a determination is not about. Their values are
# checked by the workflow, whose messages name them (not_text, too_long, ...).
APPLICATION_FIELDS = ("name", "address", "application_date", "note", "letter_lang")
ApplicationBody = create_model(
    "ApplicationBody", __base__=ParticipantBody,
    **{name: (JsonScalar, None) for name in APPLICATION_FIELDS})


class Problem(BaseModel):
    field: str | None
    code: str
    value: Any = None
    message: str
    row: int | None = None
    participant_id: str | None = None


class Errors(BaseModel):
    errors: list[Problem]


def said(key: str) -> str:
    """What the API document says of an answer (catalog [help.api.responses])."""
    return help_text(f"api.responses.{key}")


def refusal(key: str) -> dict[str, Any]:
    """An operation's refusal in the document: the one error shape, described."""
    return {"model": Errors, "description": said(key)}


def _json_type(hint: Any) -> Any:
    """The JSON type of a field of `determination.Determination` (see its
    `to_dict`): dates and amounts are strings; the formula and the findings
    are objects."""
    import types
    import typing
    from datetime import date
    from decimal import Decimal

    from ..determination import Finding, Formula

    args = typing.get_args(hint)
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        inner = [_json_type(a) for a in args]
        out = inner[0]
        for t in inner[1:]:
            out = out | t
        return out
    if hint in (date, Decimal):
        return str
    if hint in (Formula, Finding):
        return dict[str, Any]
    if typing.get_origin(hint) is list:
        return list[_json_type(args[0])]
    return hint


def _determination_model() -> type[BaseModel]:
    """The JSON schema of a determination, made from the one definition of
    its fields (`determination.Determination`), in the same order."""
    import typing

    from pydantic import create_model

    from .. import determination

    hints = typing.get_type_hints(determination.Determination)
    return create_model(
        "Determination",
        __doc__="A determination (Determination.to_dict()): dates as YYYY-MM-DD, amounts as "
                "strings with two decimals.",
        **{f.name: (_json_type(hints[f.name]),
                    Field(description=help_text(f"api.determination.{f.name}")))
           for f in determination.json_fields()},
    )


Determination = _determination_model()


class CaseOut(BaseModel):
    id: int
    participant_id: str
    version: int
    supersedes: int | None
    superseded_by: int | None
    current: bool
    inputs: dict[str, Any]
    result: Determination
    rules_version: str
    as_of: str
    lang: str
    author: str
    note: str | None
    created_at: str


class CaseList(BaseModel):
    participant_id: str | None
    cases: list[CaseOut]


class Difference(BaseModel):
    key: str
    stored: Any
    recomputed: Any


class Reproduction(BaseModel):
    case_id: int
    rules_version: str
    as_of: str
    identical: bool = Field(description=help_text("api.reproduce_identical"))
    decision_identical: bool = Field(description=help_text("api.reproduce_decision_identical"))
    differences: list[Difference]
    added: list[str] = Field(default_factory=list,
                             description=help_text("api.reproduce_added"))
    recomputed: Determination | None
    problem: str | None = None


class AuditEventOut(BaseModel):
    id: int
    at: str
    user: str | None
    role: str | None
    action: str
    case_id: int | None
    participant_id: str | None
    method: str
    path: str
    status_code: int
    detail: str | None


class AuditList(BaseModel):
    events: list[AuditEventOut]
    limit: int
    offset: int


class BatchSummary(BaseModel):
    filename: str
    rows_in: int
    rows_determined: int
    rows_rejected: int
    by_status: dict[str, int]
    blank_rows_skipped: int
    rules_version: str
    as_of: str
    lang: str


class BatchOut(BaseModel):
    summary: BatchSummary
    determinations: list[dict[str, Any]]
    rejects: list[dict[str, Any]]


class Health(BaseModel):
    status: str
    database: str
    schema_revision: str | None
    version: str


def request_body(model: type[BaseModel]) -> dict[str, Any]:
    """`openapi_extra` documenting a JSON body by its model. The endpoint reads
    the raw body first (`errors.parse_json_object`), then validates it with the
    model (`participant.parse`), so FastAPI is not asked to parse it."""
    return {"requestBody": {"required": True, "content": {"application/json": {
        "schema": model.model_json_schema()}}}}


def complete_responses(openapi: dict[str, Any]) -> dict[str, Any]:
    """Every answer an operation can give, in the one error shape: 422 for
    bad input (FastAPI would document its own shape), 413 for a body over
    the limit, 429 when a client is over its rate limit."""
    errors = {"$ref": "#/components/schemas/Errors"}

    def answer(text: str) -> dict[str, Any]:
        return {"description": text, "content": {"application/json": {"schema": errors}}}

    for path, operations in openapi.get("paths", {}).items():
        for method, op in operations.items():
            responses = op.setdefault("responses", {})
            if op.get("parameters") or op.get("requestBody") or "422" in responses:
                responses["422"] = answer(said("bad_input"))
            if method == "post":
                responses.setdefault("413", answer(said("body_too_large")))
            if path != "/health":
                responses["429"] = answer(said("too_many"))
    schemas = openapi.get("components", {}).get("schemas", {})
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    return openapi


# -- query and path parameters ------------------------------------------------------
#
# Read as the OpenAPI document says, never more loosely. Pydantic's lax mode
# reads a bare number ("0.5", "12") as a time, that many seconds after
# 1970-01-01 UTC, and " 1", "+1", "1_000" or "1.0" as whole numbers, where the
# document says a date-time or an integer. Such a value is refused (422)
# naming the parameter, with the message of its code in service.toml
# (`errors.install_error_handlers` words the errors marked `catalog`).

# A whole number as a query or path writes one: ASCII digits, a minus sign
# at most; nothing around them.
INTEGER_TEXT = re.compile(r"-?[0-9]+")
# A time as ISO 8601 writes it: a date, or a date and a time to the minute or
# the second (a fraction of a second after "." or ","), with Z or an offset
# or no zone (then UTC); "T", "t" or a space between date and time.
DATETIME_PATTERN = (r"^[0-9]{4}-[0-9]{2}-[0-9]{2}"
                    r"([Tt ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.,][0-9]+)?)?"
                    r"([Zz]|[+-][0-9]{2}:?[0-9]{2})?)?$")
_DATETIME_TEXT = re.compile(DATETIME_PATTERN)


def _refused(code: str) -> PydanticCustomError:
    return PydanticCustomError(code, code, {"catalog": True})


def _integer_text(value: Any) -> Any:
    if isinstance(value, str) and not INTEGER_TEXT.fullmatch(value):
        raise _refused("not_an_integer")
    return value


def _datetime_text(value: Any) -> Any:
    if isinstance(value, str) and not _DATETIME_TEXT.fullmatch(value):
        raise _refused("not_a_datetime")
    return value


# A whole number's check, before its bounds: Annotated[int, Field(ge=..,
# le=..), WHOLE_NUMBER, Query(...)] (the bounds given in Field, before the
# check, so that the document states them as minimum and maximum).
WHOLE_NUMBER = BeforeValidator(_integer_text)
ParamInt = Annotated[int, WHOLE_NUMBER]
ParamDateTime = Annotated[datetime, BeforeValidator(_datetime_text), WithJsonSchema(
    {"type": "string", "format": "date-time", "pattern": DATETIME_PATTERN})]
