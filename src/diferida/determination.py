"""The determination: what the engine decided for one participant, typed."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import date
from decimal import Decimal
from typing import Any


def plain(d: Decimal) -> str:
    """A decimal without exponent or trailing zeros: Decimal("20.00") -> "20"."""
    return f"{d.normalize():f}"


@dataclass(frozen=True)
class Finding:
    """One condition checked: which rule, what was compared, whether it held,
    and the sentence that says so in the chosen language. `held` is None for
    a finding that only informs (the scope note, the amount)."""

    rule: str
    condition: str
    values: dict[str, Any]
    held: bool | None
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "condition": self.condition, "values": self.values,
                "held": self.held, "text": self.text}


@dataclass(frozen=True)
class Bracket:
    citation: str
    from_years: Decimal
    to_years: Decimal | None
    years: Decimal
    rate: Decimal
    amount: Decimal  # this bracket's part, rounded to the cent for display

    def to_dict(self) -> dict[str, Any]:
        return {"from_years": plain(self.from_years),
                "to_years": None if self.to_years is None else plain(self.to_years),
                "years": plain(self.years), "rate": plain(self.rate),
                "amount": f"{self.amount:.2f}"}


@dataclass(frozen=True)
class Formula:
    citation: str
    average_compensation: Decimal
    brackets: tuple[Bracket, ...]
    formula_amount: Decimal  # the scale's result, rounded once
    minimum_citation: str | None
    minimum_amount: Decimal | None  # 19.6, when the participant has that right
    minimum_applied: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "citation": self.citation,
            "average_compensation": f"{self.average_compensation:.2f}",
            "brackets": [b.to_dict() for b in self.brackets],
            "formula_amount": f"{self.formula_amount:.2f}",
            "minimum_citation": self.minimum_citation,
            "minimum_amount": None if self.minimum_amount is None else f"{self.minimum_amount:.2f}",
            "minimum_applied": self.minimum_applied,
        }


def _doc(text: str, **more: Any) -> dict[str, Any]:
    """A field's metadata: its description in the JSON schema (and `json`:
    False for a field that is not part of the determination's data)."""
    return {"doc": text, **more}


@dataclass(frozen=True, kw_only=True)
class Determination:
    """The one definition of a determination's shape: its fields, in the
    order of its JSON form (`to_dict`), which also gives the API's JSON schema
    (`service.schemas.Determination` is made from these fields): dates as
    YYYY-MM-DD, amounts as strings with two decimals."""

    participant_id: str | None = field(metadata=_doc("The participant's id, if given."))
    status: str = field(metadata=_doc("eligible | not_yet_eligible | not_entitled"))
    reasons: list[str] = field(metadata=_doc(
        "For not_entitled: not_covered, not_separated, refund_requested, insufficient_service "
        "(those that apply, in that order)."))
    regime: str = field(metadata=_doc("pre1990 | new"))
    eligibility_date: date | None = field(metadata=_doc("The earliest opening of a route."))
    route: str | None = field(metadata=_doc("The route of the eligibility date."))
    routes_met: list[str] = field(metadata=_doc("Every route whose conditions hold."))
    start_date: date | None = field(metadata=_doc(
        "The requested start, when on or after the eligibility date (Regla 19.3)."))
    premature_request: bool = field(metadata=_doc("A requested start before eligibility."))
    annual_amount: Decimal | None = field(metadata=_doc("Dollars a year, two decimals."))
    monthly_amount: Decimal | None = field(metadata=_doc("Dollars a month, two decimals."))
    minimum_applied: bool = field(metadata=_doc("Regla 19.6's minimum is paid."))
    warnings: list[str] = field(metadata=_doc("Warning codes, in their order (rules §7)."))
    rules_version: str = field(metadata=_doc("The rules set's name and content hash."))
    rules_name: str = field(default="", metadata=_doc(
        "The rules set's name (article19, a variant, a file)."))
    rules_title: str = field(default="", metadata=_doc("The rules set's title."))
    # Regla 19.6's condition, and whether it was declared or derived (rules §6)
    deferred_right_1960: bool = field(default=False, metadata=_doc(
        "Regla 19.6's condition, as applied."))
    deferred_right_1960_source: str = field(default="derived", metadata=_doc(
        "declared | derived (from entry_date)."))
    as_of: date = field(metadata=_doc("The date the determination speaks for."))
    headline: str = field(metadata=_doc("The answer in one sentence, in `lang`."))
    formula: Formula | None = field(default=None, metadata=_doc(
        "The amount's parts (for entitled participants)."))
    explanation: list[Finding] = field(default_factory=list, metadata=_doc(
        "Each condition checked, with its rule, values and sentence."))
    lang: str = field(default="es", metadata=_doc("es | en"))
    # the rules it was decided with (not part of its data: `rules_version` is)
    rules: Any = field(default=None, repr=False, compare=False,
                       metadata=_doc("", json=False))

    def to_dict(self) -> dict[str, Any]:
        """The determination as JSON-ready data, field by field."""
        return {f.name: _json(getattr(self, f.name)) for f in json_fields()}


def json_fields() -> list[Any]:
    """The fields of a determination's JSON form, in order."""
    return [f for f in fields(Determination) if f.metadata.get("json", True)]


def _json(value: Any) -> Any:
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):  # an amount
        return f"{value:.2f}"
    if isinstance(value, (Formula, Finding)):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    raise TypeError(f"no JSON form for {type(value).__name__}")
