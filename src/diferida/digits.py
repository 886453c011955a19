"""Numbers and dates typed on the command line, read in the digits 0-9 only.

Python's int(), Decimal() and str.isdigit() take any Unicode decimal digit
(Arabic-Indic ٥٠٠ is 500; a superscript ² is a digit to isdigit() but not to
int()) and an underscore between digits (1_000); date.fromisoformat() takes
20260630 and week dates (2026-W01-1). An option's value is checked against
these shapes before it is converted, so that what is read is what a reader
of the command sees. The messages: i18n/<lang>/cli.toml [digits].
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

import click

from .bounded import shown
from .i18n import HELP_LANG, catalog

# a whole number: an optional sign, then the digits 0-9
WHOLE = re.compile(r"[+-]?[0-9]+")
# a decimal number: an optional sign, the digits 0-9 with one decimal point,
# and an exponent (a TOML float of a prior assumptions file is read as its
# text, 1e-05)
DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def words(key: str, lang: str = HELP_LANG, **values: Any) -> str:
    """A message of [digits], `value` cut short (bounded.shown)."""
    if "value" in values:
        values["value"] = shown(values["value"])
    return str(catalog(lang)["digits"][key]).format(**values)


def is_whole(text: str) -> bool:
    return WHOLE.fullmatch(text.strip()) is not None


def is_decimal(text: str) -> bool:
    return DECIMAL.fullmatch(text.strip()) is not None


def foreign_digits(text: str) -> bool:
    """Whether a text that is not a number in 0-9 would still be read as one
    by Python (a digit outside 0-9, an underscore): such a text gets the
    message saying which digits are read, rather than the option's own."""
    return not text.isascii() or "_" in text


def iso_date(text: str) -> date | None:
    """YYYY-MM-DD in the digits 0-9, a real date; None for anything else."""
    if ISO_DATE.fullmatch(text.strip()) is None:
        return None
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        return None


class WholeNumber(click.IntRange):
    """click's IntRange, reading only a whole number in the digits 0-9."""

    name = "integer range"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None
                ) -> Any:
        if isinstance(value, str) and not is_whole(value):
            self.fail(words("not_whole", value=value), param, ctx)
        return super().convert(value, param, ctx)
