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


@dataclass(frozen=True, kw_only=True)
class Determination:
    """The one definition of a determination's shape: its fields, in the
    order of its JSON form (`to_dict`), which also gives the API's JSON schema
    (`service.schemas.Determination` is made from these fields): dates as
    YYYY-MM-DD, amounts as strings with two decimals. Each field's
    description in that schema is the catalogs' [help.api.determination]
    entry of its name (i18n/<lang>/help.toml)."""

    participant_id: str | None
    status: str
    reasons: list[str]
    regime: str
    eligibility_date: date | None
    route: str | None
    routes_met: list[str]
    start_date: date | None
    premature_request: bool
    annual_amount: Decimal | None
    monthly_amount: Decimal | None
    minimum_applied: bool
    warnings: list[str]
    rules_version: str
    rules_name: str = ""
    rules_title: str = ""
    # Regla 19.6's condition, and whether it was declared or derived (rules §6)
    deferred_right_1960: bool = False
    deferred_right_1960_source: str = "derived"
    as_of: date
    headline: str
    formula: Formula | None = None
    explanation: list[Finding] = field(default_factory=list)
    lang: str = "es"
    # the rules it was decided with (not part of its data: `rules_version` is)
    rules: Any = field(default=None, repr=False, compare=False,
                       metadata={"json": False})

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
