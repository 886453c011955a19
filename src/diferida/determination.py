"""The determination: what the engine decided for one participant, typed."""

from __future__ import annotations

from dataclasses import dataclass, field
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


def _d(value: date | None) -> str | None:
    return None if value is None else value.isoformat()


@dataclass(frozen=True)
class Determination:
    participant_id: str | None
    status: str  # eligible | not_yet_eligible | not_entitled
    reasons: list[str]
    regime: str  # pre1990 | new
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
    as_of: date
    headline: str
    rules_name: str = ""
    rules_title: str = ""
    # Regla 19.6's condition, and whether it was declared or derived (SPEC §6)
    deferred_right_1960: bool = False
    deferred_right_1960_source: str = "derived"  # derived | declared
    # the rules it was decided with (not part of its data: `rules_version` is)
    rules: Any = field(default=None, repr=False, compare=False)
    explanation: list[Finding] = field(default_factory=list)
    formula: Formula | None = None
    lang: str = "es"

    def to_dict(self) -> dict[str, Any]:
        """The determination as JSON-ready data; amounts as strings with 2 decimals."""
        return {
            "participant_id": self.participant_id,
            "status": self.status,
            "reasons": list(self.reasons),
            "regime": self.regime,
            "eligibility_date": _d(self.eligibility_date),
            "route": self.route,
            "routes_met": list(self.routes_met),
            "start_date": _d(self.start_date),
            "premature_request": self.premature_request,
            "annual_amount": None if self.annual_amount is None else f"{self.annual_amount:.2f}",
            "monthly_amount": None if self.monthly_amount is None else f"{self.monthly_amount:.2f}",
            "minimum_applied": self.minimum_applied,
            "warnings": list(self.warnings),
            "rules_version": self.rules_version,
            "rules_name": self.rules_name,
            "rules_title": self.rules_title,
            "deferred_right_1960": self.deferred_right_1960,
            "deferred_right_1960_source": self.deferred_right_1960_source,
            "as_of": _d(self.as_of),
            "headline": self.headline,
            "formula": None if self.formula is None else self.formula.to_dict(),
            "explanation": [f.to_dict() for f in self.explanation],
            "lang": self.lang,
        }
