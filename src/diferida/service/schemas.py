"""Shapes of requests and responses, for the OpenAPI documentation at /docs.

The endpoints parse bodies themselves (exact decimals, every bad field named
at once, the core's own messages), so these models document; they do not
validate."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

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


class ParticipantFields(BaseModel):
    """The fields of SPEC §1. Dates as YYYY-MM-DD; decimals as strings or JSON
    numbers (read as exact decimals); booleans as true/false."""

    model_config = ConfigDict(extra="forbid",
                              json_schema_extra={"example": {**EXAMPLE_PARTICIPANT, "lang": "en"}})

    participant_id: str | None = Field(None, description="Participant id.")
    birth_date: str | None = Field(None, description="Birth date, YYYY-MM-DD (required).")
    entry_date: str | None = Field(None, description="First entry into the System (required).")
    separation_date: str | None = Field(None, description="Separation from service; empty "
                                        "or absent when still in service.")
    creditable_service_years: str | int | float | None = Field(
        None, description="Years of creditable service, ≥ 0, up to 4 decimals (required).")
    average_compensation: str | int | float | None = Field(
        None, description="Average compensation, dollars a year, > 0, up to 2 decimals "
        "(required).")
    group: str | None = Field(None, description="general | police | firefighter (required).")
    refund_requested: bool | str | None = Field(
        None, description="Whether a refund of contributions was requested (required).")
    deferred_right_1960: bool | str | None = Field(
        None, description="A member of the System, or holding a right to a deferred pension, "
        "on the cut-off date of Regla 19.6 (30 June 1960 in the default rules). Omitted or "
        "null: derived from entry_date, true exactly when the first entry is on or before that "
        "date; a declared value stands.")
    requested_start_date: str | None = Field(
        None, description="Date the participant asks the pension to start (Regla 19.3).")
    as_of: str | None = Field(None, description="Date the determination speaks for "
                              "(default: today).")
    lang: str | None = Field("es", description="Language of the explanation: es | en.")
    rules: str | None = Field(None, description="Built-in rules name: article19 (default) "
                              "or article19-strict-19_4.")


class CaseRequest(ParticipantFields):
    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "example": {**EXAMPLE_PARTICIPANT, "lang": "en", "note": "first determination"}})

    supersedes: int | None = Field(None, description="Id of the case this one corrects "
                                   "(required when the participant already has a case; it "
                                   "must be the current version).")
    note: str | None = Field(None, description="Why this case was recorded or corrected "
                             "(at most 2000 characters).")


class Problem(BaseModel):
    field: str | None
    code: str
    value: Any = None
    message: str
    row: int | None = None
    participant_id: str | None = None


class Errors(BaseModel):
    errors: list[Problem]


class Determination(BaseModel):
    """Determination.to_dict(): amounts as strings with two decimals."""

    participant_id: str | None
    status: str
    reasons: list[str]
    regime: str | None
    eligibility_date: str | None
    route: str | None
    routes_met: list[str]
    start_date: str | None
    premature_request: bool
    annual_amount: str | None
    monthly_amount: str | None
    minimum_applied: bool
    warnings: list[str]
    rules_version: str
    rules_name: str = Field(description="The rules set's name (article19, a variant, a file).")
    rules_title: str = Field(description="The rules set's title.")
    deferred_right_1960: bool = Field(description="Regla 19.6's condition, as applied.")
    deferred_right_1960_source: str = Field(description="declared | derived (from entry_date).")
    as_of: str
    headline: str
    formula: dict[str, Any] | None
    explanation: list[dict[str, Any]]
    lang: str


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
    identical: bool = Field(description="The recomputed determination equals the stored one "
                            "in every key, explanation texts included.")
    decision_identical: bool = Field(description="Status, dates, routes, amounts, formula and "
                                     "warnings are equal (explanation texts aside).")
    differences: list[Difference]
    added: list[str] = Field(default_factory=list, description="Keys of the determination "
                             "added by a later release, which the stored one lacks.")
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
    """`openapi_extra` documenting a JSON body that the endpoint reads itself."""
    return {"requestBody": {"required": True, "content": {
        "application/json": {"schema": model.model_json_schema()}}}}
