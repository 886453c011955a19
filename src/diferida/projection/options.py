"""The projection's options, parsed and checked: each bad one named.

Rates are user inputs, not law; the sane ranges below only catch a typo
(4 for 0.04) and are documented in docs/project.md.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from importlib import resources
from typing import Any, cast

import click

from ..batch.options import apply_options
from ..bounded import SHOWN_CHARS, shown
from ..digits import foreign_digits, is_decimal, is_whole, words
from ..errors import DiferidaError
from ..i18n import help_text

# the options' sane ranges live in a data file beside this module
_BOUNDS = tomllib.loads(
    (resources.files("diferida.projection") / "assumptions.toml").read_text("utf-8"))
MAX_DISCOUNT = Decimal(_BOUNDS["max_discount"])
MAX_COLA = Decimal(_BOUNDS["max_cola"])
MAX_RATES = int(_BOUNDS["max_rates"])
MAX_HORIZON = int(_BOUNDS["max_horizon"])
MAX_COLA_PLACES = int(_BOUNDS["max_cola_places"])
MAX_DISCOUNT_PLACES = int(_BOUNDS["max_discount_places"])
TABLE_LAST_AGE = int(_BOUNDS["table_last_age"])
START_AGE_RANGE = (int(_BOUNDS["start_age_min"]), TABLE_LAST_AGE)
MAX_MORTALITY_SCALE = Decimal(_BOUNDS["max_mortality_scale"])
AGE_BAND_YEARS = int(_BOUNDS["age_band_years"])
SENSITIVITY_STEP = Decimal(_BOUNDS["sensitivity_discount_step"])
SENSITIVITY_MORTALITY = tuple(Decimal(x) for x in _BOUNDS["sensitivity_mortality"])
BY_DIMENSIONS = ("group", "regime", "age_band", "eligible_now")
RELIEF_UNDER_MONTHLY = Decimal(_BOUNDS["relief_under_monthly"])
RELIEF_MAX_BANDS = int(_BOUNDS["relief_max_bands"])
RELIEF_MAX_BAND = Decimal(_BOUNDS["relief_max_band"])
MAX_REJECTED_SHARE = Decimal(_BOUNDS["valuation_max_rejected_share"])

# the improvement scales --improvement names, with the pymort table ids (SOA
# mort.soa.org identities) of each one's tables by sex; here, not in
# mortality.py, so that `diferida project --help` lists them without NumPy
MP_IDS = {
    "mp2014": {"M": 3135, "F": 3136}, "mp2015": {"M": 3373, "F": 3374},
    "mp2016": {"F": 3385, "M": 3386}, "mp2017": {"F": 3481, "M": 3482},
    "mp2018": {"F": 3605, "M": 3606}, "mp2019": {"F": 3607, "M": 3608},
    "mp2020": {"F": 3609, "M": 3610},
}
IMPROVEMENTS = ("none", *MP_IDS)


class OptionError(DiferidaError, ValueError):
    """An option that cannot be used; the message starts with the option."""


@dataclass(frozen=True)
class StartRule:
    """`eligibility` (the determination's start date: the eligibility date, or
    the requested start when there is one and it is not premature), or
    `age:N` (the later of the day age N is reached and the eligibility date)."""

    age: int | None = None

    @property
    def text(self) -> str:
        return "eligibility" if self.age is None else f"age:{self.age}"


def _fraction_hint(text: str) -> str:
    """How the rate the user meant is written, made from what they wrote: a
    number (with or without "%") is shown as a fraction, the number over a
    hundred; anything else gets the general rule."""
    general = "(a rate is written as a fraction of 1, not as a percentage)"
    number = text.strip().removesuffix("%").strip()
    if len(number) > SHOWN_CHARS:  # no example made of a value too long to quote
        return general
    try:
        meant = Decimal(number)
        if not meant.is_finite() or abs(meant.adjusted()) > SHOWN_CHARS:
            return general
        fraction = f"{(meant / 100).normalize():f}"
    except ArithmeticError:  # InvalidOperation, Overflow
        return general
    if len(fraction) > SHOWN_CHARS:
        return general
    return f"(a rate is written as a fraction: {number}% is {fraction})"


def _decimal(option: str, text: str) -> Decimal:
    """A number in the digits 0-9 (digits.py); Decimal() alone would take
    any Unicode digit and underscores."""
    value: Decimal | None = None
    if is_decimal(text):
        try:
            value = Decimal(text.strip())
        except ArithmeticError:
            value = None
    elif foreign_digits(text):
        raise OptionError(words("option_decimal", option=option, value=text))
    if value is None or not value.is_finite():
        raise OptionError(f"{option}: '{shown(text)}' is not a number {_fraction_hint(text)}")
    return value


def parse_rates(text: str | Sequence[str]) -> list[tuple[str, Decimal]]:
    """'0.04,0.0625' -> [('0.04', 0.04), ('0.0625', 0.0625)]: labels as given."""
    parts = text.split(",") if isinstance(text, str) else [str(t) for t in text]
    parts = [p.strip() for p in parts]
    if not parts or any(not p for p in parts):
        raise OptionError("--discount: give one or more annual rates separated by commas, "
                          "such as 0.04,0.0625")
    if len(parts) > MAX_RATES:
        raise OptionError(f"--discount: {len(parts)} rates; at most {MAX_RATES}")
    out = []
    for p in parts:
        value = _decimal("--discount", p)
        if value < 0:
            raise OptionError(f"--discount: {shown(p)} is negative; a rate is 0 or more")
        if -cast(int, value.as_tuple().exponent) > MAX_DISCOUNT_PLACES:  # finite (_decimal)
            raise OptionError(f"--discount: {shown(p)} has more than {MAX_DISCOUNT_PLACES} "
                              "decimals")
        if value > MAX_DISCOUNT:
            raise OptionError(f"--discount: {shown(p)} is outside the range 0 .. {MAX_DISCOUNT} "
                              f"{_fraction_hint(p)}")
        out.append((p, value))
    labels = [p for p, _ in out]
    values = [v for _, v in out]
    if len(set(values)) != len(values) or len(set(labels)) != len(labels):
        raise OptionError("--discount: a rate is given twice")
    return out


def parse_cola(text: str | Decimal | float | int) -> Fraction:
    value = _decimal("--cola", str(text))
    if value < 0:
        raise OptionError(f"--cola: {shown(text)} is negative; the COLA is 0 or more")
    if value > MAX_COLA:
        raise OptionError(f"--cola: {shown(text)} is outside the range 0 .. {MAX_COLA} "
                          f"{_fraction_hint(str(text))}")
    if -cast(int, value.as_tuple().exponent) > MAX_COLA_PLACES:  # finite (_decimal)
        raise OptionError(f"--cola: {shown(text)} has more than {MAX_COLA_PLACES} decimals")
    return Fraction(value)


def parse_start(text: str) -> StartRule:
    t = text.strip()
    if t == "eligibility":
        return StartRule()
    if t.startswith("age:"):
        n = t[4:].strip()
        lo, hi = START_AGE_RANGE
        if n.isascii() and n.isdigit() and lo <= int(n) <= hi:
            return StartRule(int(n))
        if foreign_digits(n):
            raise OptionError(words("option_whole", option="--start age:N", value=n))
        raise OptionError(f"--start: '{shown(text)}': the age must be a whole number {lo}..{hi}")
    raise OptionError(f"--start: '{shown(text)}' is not 'eligibility' or 'age:N' (such as "
                      "age:65)")


def parse_horizon(value: int | str | None) -> int | None:
    if value is None:
        return None
    text = str(value)
    if not is_whole(text):
        if foreign_digits(text):
            raise OptionError(words("option_whole", option="--horizon", value=text))
        raise OptionError(f"--horizon: '{shown(value)}' is not a whole number of fiscal years")
    n = int(text.strip())
    if not 1 <= n <= MAX_HORIZON:
        raise OptionError(f"--horizon: {n} is outside 1 .. {MAX_HORIZON} fiscal years")
    return n


def parse_sex_blend(value: str | float) -> float:
    w = _decimal("--sex-blend", str(value))
    if not (0 <= w <= 1):
        raise OptionError(f"--sex-blend: {shown(value)} is outside 0 .. 1 (the share of women)")
    f = float(w)
    assert math.isfinite(f)
    return f


def parse_mortality_scale(value: str | float | None) -> float:
    """--mortality-scale F: every mortality rate x F (capped at 1); default 1."""
    if value is None:
        return 1.0
    f = _decimal("--mortality-scale", str(value))
    if not (0 <= f <= MAX_MORTALITY_SCALE):
        raise OptionError(f"--mortality-scale: {shown(value)} is outside 0 .. "
                          f"{MAX_MORTALITY_SCALE} "
                          "(a factor of the table's rates: below 1 lowers them)")
    return float(f)


def parse_by(value: str | Sequence[str] | None) -> list[str]:
    """--by group,regime,age_band,eligible_now (any of them, in the order given)."""
    if value is None:
        return []
    parts = value.split(",") if isinstance(value, str) else [str(v) for v in value]
    parts = [p.strip() for p in parts]
    bad = [p for p in parts if p not in BY_DIMENSIONS]
    if not parts or bad:
        given = shown(', '.join(repr(b) for b in bad)) or 'nothing given'
        raise OptionError(f"--by: {given}; give "
                          f"one or more of {','.join(BY_DIMENSIONS)}, separated by commas")
    if len(set(parts)) != len(parts):
        raise OptionError("--by: a dimension is given twice")
    return parts


def valuation_options(*, by: bool = True) -> Callable[[Any], Any]:
    """`project`: --valuation-date, --claim-rates, --mortality-scale, --by,
    --sensitivity; `compare` (by=False): the same without --by."""
    return apply_options([
        click.option("--valuation-date", default=None, metavar="YYYY-MM-DD",
                     help=help_text("cli.valuation_date")),
        click.option("--claim-rates", default=None, metavar="RATES.csv",
                     help=help_text("cli.claim_rates")),
        click.option("--mortality-scale", default=None, metavar="F",
                     help=help_text("cli.mortality_scale")),
        *([click.option("--by", default=None, metavar=",".join(BY_DIMENSIONS),
                        help=help_text("cli.by"))] if by else []),
        click.option("--sensitivity", is_flag=True,
                     help=help_text("cli.sensitivity")),
    ])


def projection_options(*, required: bool) -> Callable[[Any], Any]:
    """The projection's assumptions (`project`; `compare` with --discount):
    --discount, --mortality, --improvement, --cola, --start, --horizon,
    --sex-blend."""
    return apply_options([
        click.option("--discount", required=required, default=None, metavar="RATE[,RATE...]",
                     help=help_text("cli.discount" if required else "cli.discount_compare")),
        click.option("--mortality", required=required, default=None,
                     metavar="none|pub2010|TABLE.csv",
                     help=help_text("cli.mortality")),
        click.option("--improvement", default=None, metavar="|".join(IMPROVEMENTS),
                     help=help_text("cli.improvement")),
        click.option("--cola", default="0", show_default=True, metavar="RATE",
                     help=help_text("cli.cola")),
        click.option("--start", "start", default="eligibility", show_default=True,
                     metavar="eligibility|age:N",
                     help=help_text("cli.start_payments")),
        click.option("--horizon", default=None, metavar="N",
                     help=help_text("cli.horizon")),
        click.option("--sex-blend", default="0.5", show_default=True, metavar="W",
                     help=help_text("cli.sex_blend")),
    ])
