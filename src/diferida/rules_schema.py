"""The shape of a rules table (a rules file, resolved against its base), as a
schema: every key, its type and its bounds.

A rules file is input like any other. The bounds keep every number the engine
computes with exact: a rate has at most `RATE_PLACES` decimal places and is at
most 1 (the whole compensation a year), so an amount's exact numerator (cents
× rate × service units) stays inside the 128-bit integers of `money.EXACT`
for any compensation and service rules §1 accepts (`EXACT_BOUND` below, and
tests/test_rules_bounds.py, hold that). Ages, years, counts and texts are
bounded too, so no rules file can make a run slow or deep.

Errors are pydantic's, with this project's wording (`message_of`); the loader
(`rules.py`) turns an error's location into the line of the file."""

from __future__ import annotations

import re
import tomllib
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from importlib import resources
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StringConstraints,
    model_validator,
)
from pydantic_core import ErrorDetails, PydanticCustomError

from .fields import GROUPS, MONEY_DIGITS, MONEY_PLACES, REGIMES, SERVICE_DIGITS, SERVICE_PLACES

# ---- the bounds (data/rules_bounds.toml) -----------------------------------

_BOUNDS = tomllib.loads(
    (resources.files("diferida") / "data" / "rules_bounds.toml").read_text("utf-8"))
RATE_PLACES = int(_BOUNDS["rate_places"])
MAX_RATE = Decimal(_BOUNDS["max_rate"])
MAX_YEARS = Decimal(_BOUNDS["max_years"])
MAX_AGE = int(_BOUNDS["max_age"])
MAX_ENTRY_AGE = int(_BOUNDS["max_entry_age"])
MAX_MONTHLY = Decimal(_BOUNDS["max_monthly"])
MAX_COLA_RATE = Decimal(_BOUNDS["max_cola_rate"])
MAX_BRACKETS = int(_BOUNDS["max_brackets"])
MAX_ROUTES = int(_BOUNDS["max_routes"])
MAX_TEXT = int(_BOUNDS["max_text"])
MAX_NAME = int(_BOUNDS["max_name"])

# The largest exact numerator of an amount (money.round_half_up doubles it
# and adds the denominator; the monthly amount's denominator is 12 times the
# annual one): below 2**127, the largest 128-bit integer.
_MAX_CENTS = 10 ** (MONEY_DIGITS + MONEY_PLACES) - 1
_MAX_SERVICE_UNITS = 10 ** (SERVICE_DIGITS + SERVICE_PLACES) - 1
EXACT_BOUND = (2 * _MAX_CENTS * 10**RATE_PLACES * _MAX_SERVICE_UNITS
               + 12 * 10**RATE_PLACES * 10**SERVICE_PLACES)
assert EXACT_BOUND < 2**127 - 1, "RATE_PLACES too large for exact 128-bit amounts"

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _fail(message: str, **ctx: Any) -> PydanticCustomError:
    return PydanticCustomError("rules", message, ctx)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "…"


def decimal_places(d: Decimal) -> int:
    """The decimal places a finite decimal needs (its trailing zeros dropped),
    counted from its digits: `Decimal.normalize` would round it to the
    context's 28 significant digits first, so that '0.3000000000000000000000000000001'
    (31 places) would count as 1."""
    _, digits, exponent = d.as_tuple()
    assert isinstance(exponent, int), "a finite decimal"
    if not any(digits):
        return 0
    written = "".join(map(str, digits))
    return max(-(exponent + len(written) - len(written.rstrip("0"))), 0)


def _decimal(places: int, most: Decimal, what: str, *, unit: str = ""):
    """A decimal written as a string or an integer (never a binary float), finite,
    from 0 to `most`, with at most `places` decimal places."""

    def check(value: Any) -> Decimal:
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise _fail(f"write numbers as strings or integers, got {_shown(value)}")
        if isinstance(value, str) and len(value) > 60:
            raise _fail(f"not a number: {_shown(value)}")
        try:
            d = Decimal(value) if isinstance(value, str) else Decimal(value)
        except (InvalidOperation, ValueError):
            raise _fail(f"not a number: {_shown(value)}") from None
        if not d.is_finite():
            raise _fail(f"not a finite number: {_shown(value)}")
        if d < 0:
            raise _fail(f"must not be negative: {_shown(value)}")
        if d > most:
            above = (f"is above {MAX_RATE} (the whole compensation a year): not a pension rate"
                     if what == "rate" else
                     f"is above {most} a year, the most a relief's COLA may be (a typo "
                     "guard, and what keeps its amounts exact over the whole horizon)"
                     if what == "cola_rate" else f"is more than {most}{unit}")
            raise _fail(f"'{value}' {above}")
        if decimal_places(d) > places:
            raise _fail(f"'{value}' has more than {places} decimal places, {what_finer[what]}")
        return d

    return BeforeValidator(check)


what_finer = {
    "rate": "more than exact amounts can carry",
    "cola_rate": "more than exact amounts can carry",
    "years": "finer than service is measured",
    "money": "finer than a cent",
}

Rate = Annotated[Decimal, _decimal(RATE_PLACES, MAX_RATE, "rate")]
ColaRate = Annotated[Decimal, _decimal(RATE_PLACES, MAX_COLA_RATE, "cola_rate")]
Years = Annotated[Decimal, _decimal(SERVICE_PLACES, MAX_YEARS, "years", unit=" years")]
Monthly = Annotated[Decimal, _decimal(MONEY_PLACES, MAX_MONTHLY, "money", unit=" dollars")]


def _day(value: Any) -> date:
    if isinstance(value, datetime):
        raise _fail(f"not a YYYY-MM-DD date: {_shown(value)} has a time")
    if isinstance(value, date):
        return value
    if not isinstance(value, str) or not _ISO_DATE.fullmatch(value):
        raise _fail(f"not a YYYY-MM-DD date: {_shown(value)}")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise _fail(f"not a YYYY-MM-DD date: {_shown(value)}") from None


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise _fail(f"must be text, got {_shown(value)}")
    if _CONTROL.search(value):
        raise _fail("must not hold control characters")
    return value


Day = Annotated[date, BeforeValidator(_day)]
Text = Annotated[str, BeforeValidator(_text), StringConstraints(max_length=MAX_TEXT)]
Label = Annotated[str, BeforeValidator(_text), StringConstraints(min_length=1,
                                                                 max_length=MAX_TEXT)]
Name = Annotated[str, BeforeValidator(_text), StringConstraints(min_length=1,
                                                                max_length=MAX_NAME)]
# the codes of fields.py, read once: Literal[("a", "b")] is Literal["a", "b"]
Regime = Literal[REGIMES]  # type: ignore[valid-type]
Group = Literal[GROUPS]  # type: ignore[valid-type]


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Meta(_Table):
    name: Name
    title: Text = ""
    description: Text = ""
    applies_from: Day | None = None  # the day from which the rules speak
    illustrative: StrictBool = False


class Cutoff(_Table):
    value: Day
    citation: Label
    description: Text = ""


class Laws(_Table):
    pre1990: Label
    new: Label
    not_covered: Label


class RegimeTable(_Table):
    new_participant_after: Cutoff
    not_covered_from: Cutoff
    hybrid_program_from: Cutoff
    deferred_right_cutoff: Cutoff
    laws: Laws


class Citations(_Table):
    conditions_pre1990: Label
    conditions_new: Label
    start: Label
    retirement_annuity: Label  # pre-1990 participants
    retirement_annuity_new: Label


class RouteTable(_Table):
    id: Name
    citation: Label
    regimes: Annotated[list[Regime], Field(min_length=1, max_length=len(REGIMES))]
    groups: Annotated[list[Group], Field(min_length=1, max_length=len(GROUPS))]
    age: Annotated[StrictInt, Field(ge=0, le=MAX_AGE)]
    min_service: Years
    max_service: Years | None = None
    regimes_source: Label | None = None

    @model_validator(mode="after")
    def _service_range(self) -> RouteTable:
        if self.max_service is not None and self.max_service <= self.min_service:
            raise _fail("max_service must be above min_service")
        return self


class BracketTable(_Table):
    threshold: Years
    rate: Rate


class ScaleTable(_Table):
    citation: Label
    brackets: Annotated[list[BracketTable], Field(min_length=1, max_length=MAX_BRACKETS)]

    @model_validator(mode="after")
    def _thresholds(self) -> ScaleTable:
        if self.brackets[0].threshold != 0:
            raise _fail("the first bracket must start at threshold 0")
        if any(a.threshold >= b.threshold for a, b in zip(self.brackets, self.brackets[1:])):
            raise _fail("thresholds must increase")
        return self


class AmountTable(_Table):
    pre1990: ScaleTable
    new: ScaleTable


class MinimumTable(_Table):
    citation: Label
    rate: Rate


class Reading194(_Table):
    citation: Label
    routes: Annotated[list[Name], Field(min_length=1, max_length=MAX_ROUTES)]
    reading: Literal["both_regimes", "pre1990_only"]
    statute_pre1990: Label
    statute_new: Label
    other_reading: Name


class Decisions(_Table):
    route_19_4_regimes: Reading194


class Act3(_Table):
    name: Label
    citation: Label
    accruals_frozen_after: Day
    ages_changed_after: Day
    minimum_monthly: Monthly


class Act106(_Table):
    name: Label
    citation: Label


class LaterLaws(_Table):
    act_3_2013: Act3
    act_106_2017: Act106


class DataChecks(_Table):
    min_entry_age: Annotated[StrictInt, Field(ge=0, le=MAX_ENTRY_AGE)]


# ---- post-start adjustments (a relief: what happens to a pension once paid) ----

ADJUSTMENT_KINDS = ("raise", "floor", "one_time", "cola")
WHO = ("in_pay", "later", "all")
MAX_ADJUSTMENTS = int(_BOUNDS["max_adjustments"])
MAX_SERIES_YEARS = int(_BOUNDS["max_series_years"])
FIRST_ADJUSTMENT_YEAR = int(_BOUNDS["first_adjustment_year"])
LAST_ADJUSTMENT_YEAR = int(_BOUNDS["last_adjustment_year"])
# the keys each kind takes (besides kind, date, citation, description)
ADJUSTMENT_KEYS = {
    "raise": ({"rate"}, {"cap_monthly", "who", "from_monthly", "below_monthly"}),
    "floor": ({"minimum_monthly"}, {"who", "from_monthly", "below_monthly"}),
    "one_time": ({"amount"}, {"from_monthly", "below_monthly"}),
    "cola": (set(), {"rate", "series", "after_series"}),
}


class ColaYear(_Table):
    year: Annotated[StrictInt, Field(ge=FIRST_ADJUSTMENT_YEAR, le=LAST_ADJUSTMENT_YEAR)]
    rate: ColaRate


class AdjustmentTable(_Table):
    """One post-start adjustment: `date` it takes effect (raise, floor, cola:
    a 1 July, when a fiscal year and its payments begin; one_time: the 1st of
    the month it is paid), to whom (`who`: in pay on that date, starting
    later, or all; a COLA goes each year to those in pay on its 1 July), the
    band of monthly amount it applies to (`from_monthly` <= amount <
    `below_monthly`, the amount just before it)."""

    kind: Literal[ADJUSTMENT_KINDS]  # type: ignore[valid-type]
    date: Day
    citation: Label
    description: Text = ""
    who: Literal[WHO] | None = None  # type: ignore[valid-type]
    rate: Rate | None = None
    cap_monthly: Monthly | None = None
    minimum_monthly: Monthly | None = None
    amount: Monthly | None = None
    from_monthly: Monthly | None = None
    below_monthly: Monthly | None = None
    series: Annotated[list[ColaYear], Field(min_length=1, max_length=MAX_SERIES_YEARS)] | None \
        = None
    after_series: ColaRate | None = None

    @model_validator(mode="after")
    def _shape(self) -> AdjustmentTable:
        need, may = ADJUSTMENT_KEYS[self.kind]
        given = {k for k in ("who", "rate", "cap_monthly", "minimum_monthly", "amount",
                             "from_monthly", "below_monthly", "series", "after_series")
                 if getattr(self, k) is not None}
        missing = sorted(need - given)
        if missing:
            raise _fail(f"a {self.kind} needs {', '.join(missing)}")
        extra = sorted(given - need - may)
        if extra:
            raise _fail(f"a {self.kind} takes no {', '.join(extra)}")
        if not FIRST_ADJUSTMENT_YEAR <= self.date.year <= LAST_ADJUSTMENT_YEAR:
            raise _fail(f"date {self.date} is outside the years {FIRST_ADJUSTMENT_YEAR} .. "
                        f"{LAST_ADJUSTMENT_YEAR}", key="date")
        if self.kind == "one_time":
            if self.date.day != 1:
                raise _fail(f"a one_time payment is paid on the 1st of a month, not on "
                            f"{self.date}", key="date")
        elif (self.date.month, self.date.day) != (7, 1):
            raise _fail(f"a {self.kind} takes effect on a 1 July (a fiscal year's first "
                        f"payment), not on {self.date}", key="date")
        if self.from_monthly is not None and self.below_monthly is not None \
                and self.from_monthly >= self.below_monthly:
            raise _fail(f"from_monthly ({self.from_monthly}) must be below below_monthly "
                        f"({self.below_monthly}): the band is from_monthly <= amount < "
                        "below_monthly", key="below_monthly")
        if self.kind == "cola":
            if self.rate is not None and self.rate > MAX_COLA_RATE:
                raise _fail(f"'{self.rate}' is above {MAX_COLA_RATE} a year, the most a "
                            "relief's COLA may be (a typo guard, and what keeps its amounts "
                            "exact over the whole horizon)", key="rate")
            if self.rate is not None and self.series is not None:
                raise _fail("a cola has either a rate (every year) or a series of rates "
                            "by year, not both")
            if self.rate is None and self.series is None:
                raise _fail("a cola needs a rate (every year) or a series of rates by year "
                            "(series, or series_file naming a CSV year,rate)")
            if self.rate is not None and self.after_series is not None:
                raise _fail("after_series goes with a series (the rate after its last "
                            "year), not with a rate", key="after_series")
            if self.series is not None:
                years = [y.year for y in self.series]
                first = self.date.year + 1  # the fiscal year that begins on the date
                expected = list(range(first, first + len(years)))
                if years != expected:
                    bad = next(i for i, (a, b) in enumerate(zip(years, expected, strict=True))
                               if a != b)
                    raise _fail(f"the series runs by fiscal year from FY{first} (the year "
                                f"that begins on {self.date}) without gaps or repeats: "
                                f"FY{years[bad]} where FY{expected[bad]} was due",
                                key="series")
        return self


class PostStart(_Table):
    """A relief: the adjustments, applied on each date in a fixed order (the
    COLA, then the raises in the file's order, then the floor; then a
    one-time payment on its date), each step rounded half up to the cent."""

    citation: Label
    description: Text = ""
    adjustments: Annotated[list[AdjustmentTable], Field(min_length=1,
                                                        max_length=MAX_ADJUSTMENTS)]
    # the monthly amounts the relief's cost is reported by (diferida compare's
    # band tables; --bands replaces them): increasing
    bands_monthly: Annotated[list[Monthly], Field(min_length=1, max_length=MAX_ADJUSTMENTS)] \
        | None = None

    @model_validator(mode="after")
    def _bands(self) -> PostStart:
        b = self.bands_monthly or []
        if any(x <= 0 for x in b) or any(y <= x for x, y in zip(b, b[1:], strict=False)):
            raise _fail("bands_monthly: amounts above 0, each larger than the one before")
        seen: dict[tuple[str, date], list[tuple[Decimal, Decimal | None, str]]] = {}
        for i, a in enumerate(self.adjustments):
            band = (a.from_monthly or Decimal(0), a.below_monthly)
            for lo, hi, cite in seen.get((a.kind, a.date), []):
                if (hi is None or band[0] < hi) and (band[1] is None or lo < band[1]):
                    raise _fail(f"two {a.kind}s on {a.date} whose bands of monthly amount "
                                f"overlap ({cite!r} and {a.citation!r}): give each band "
                                "once", adjustment=i)
            seen.setdefault((a.kind, a.date), []).append((*band, a.citation))
        colas = [i for i, a in enumerate(self.adjustments) if a.kind == "cola"]
        if len(colas) > 1:
            raise _fail("one cola per rules set (a series may change the rate year by year)",
                        adjustment=colas[1])
        return self


class RulesTable(_Table):
    """A complete rules table: a rules file resolved against its base."""

    meta: Meta
    regime: RegimeTable
    citations: Citations
    routes: Annotated[list[RouteTable], Field(min_length=1, max_length=MAX_ROUTES)]
    amount: AmountTable
    minimum: MinimumTable
    decisions: Decisions
    later_laws: LaterLaws
    data_checks: DataChecks
    post_start: PostStart | None = None  # a relief; absent from the law as it stands

    @model_validator(mode="after")
    def _route_ids(self) -> RulesTable:
        ids = [r.id for r in self.routes]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise _fail(f"route ids must differ: {', '.join(repeated)} repeated")
        unknown = sorted(set(self.decisions.route_19_4_regimes.routes) - set(ids))
        if unknown:
            raise _fail(f"decisions.route_19_4_regimes.routes: unknown routes {unknown}")
        start = self.meta.applies_from
        for i, a in enumerate(self.post_start.adjustments if self.post_start else ()):
            if start is not None and a.date < start:
                raise _fail(f"date {a.date} is before {start}, the day from which these "
                            "rules apply (meta.applies_from)", adjustment=i, key="date")
        return self


# ---- pydantic's errors in this project's words -------------------------------

def message_of(error: ErrorDetails) -> str:
    """One validation error as a sentence (without its location)."""
    kind, ctx, value = error["type"], error.get("ctx") or {}, error.get("input")
    if kind == "rules":
        return error["msg"]
    if kind == "missing":
        return f"missing '{error['loc'][-1]}'"
    if kind == "extra_forbidden":
        return f"'{error['loc'][-1]}' is not a key of this table (is it misspelt?)"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"must be a table, got {_shown(value)}"
    if kind == "list_type":
        return f"must be a list, got {_shown(value)}"
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected')}, got {_shown(value)}"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"must be a whole number, got {_shown(value)}"
    if kind == "bool_type":
        return f"must be true or false (without quotes), got {_shown(value)}"
    if kind == "greater_than_equal":
        return f"must be at least {ctx.get('ge')}, got {_shown(value)}"
    if kind == "less_than_equal":
        return f"must be at most {ctx.get('le')}, got {_shown(value)}"
    if kind == "too_short":
        return "must not be empty"
    if kind == "too_long":
        most = ctx.get("max_length")
        return (f"has more than {most} entries" if isinstance(value, list)
                else f"is longer than {most} characters")
    if kind == "string_too_short":
        return "must not be empty"
    if kind == "string_too_long":
        return f"is longer than {ctx.get('max_length')} characters"
    return f"{error['msg']}, got {_shown(value)}"
