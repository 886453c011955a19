"""The input fields of rules §1: one participant."""

from __future__ import annotations

from dataclasses import dataclass

SERVICE_PLACES = 4  # rules §1: service in years, at most 4 decimal places
SERVICE_UNITS = 10**SERVICE_PLACES  # service is held as an integer of 1/10,000 years
MONEY_PLACES = 2  # compensation in dollars and cents
# Whole digits a value may have. Service cannot exceed a person's age (at most
# 9,998 years between the years 0001 and 9999); 12 digits of dollars a year
# (under a trillion) is far beyond any compensation, and keeps every amount
# the rules can compute (a rules file's rates are at most the whole
# compensation a year, rules.py) within 64-bit cents.
SERVICE_DIGITS = 5
MONEY_DIGITS = 12
# rules §1: the groups a participant belongs to, and the two regimes the entry
# date puts them in (the rules file says where the line is, and which routes
# each group and regime has: rules_schema.py)
GROUPS = ("general", "police", "firefighter")
REGIMES = ("pre1990", "new")


@dataclass(frozen=True)
class Field:
    name: str
    kind: str  # text | date | decimal | bool | group
    required: bool
    places: int | None = None
    digits: int | None = None  # whole digits allowed, for decimals


FIELDS: tuple[Field, ...] = (
    Field("participant_id", "text", False),  # required in files (batch)
    Field("birth_date", "date", True),
    Field("entry_date", "date", True),
    Field("separation_date", "date", False),  # empty = still in service
    Field("creditable_service_years", "decimal", True, SERVICE_PLACES, SERVICE_DIGITS),
    Field("average_compensation", "decimal", True, MONEY_PLACES, MONEY_DIGITS),
    Field("group", "group", True),
    Field("refund_requested", "bool", True),
    Field("deferred_right_1960", "bool", False),  # empty: derived from entry_date
    Field("requested_start_date", "date", False),
    Field("as_of", "date", False),  # default: the evaluation's as_of (today)
)
FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in FIELDS)
BY_NAME = {f.name: f for f in FIELDS}
