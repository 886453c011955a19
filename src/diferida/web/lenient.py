"""What a person types, read as they type it — on the web page only.

Files and the API keep the strict formats of rules §1. A former employee
copies numbers from a statement: "$30,000", "30,000.50", "22 años y 5 meses",
dates as "10/05/1970". This module reads those forms into the strict ones and
says exactly what is wrong with anything else. Nothing is guessed: a comma
is a thousands separator only in groups of three; a dot is the cents point,
never a thousands separator ("$38.500" is refused, saying how to write it:
it is also the strict form of $38.50); a date is day/month/year, and one
whose day and month could be swapped ("11/03/1963") is asked back with the
two dates in words; a service in years and months that has no exact
4-decimal form is rounded only with a note the person sees next to the
answer.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, field
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

from diferida.determination import plain
from diferida.fields import SERVICE_PLACES

DATE_FIELDS = ("birth_date", "entry_date", "separation_date", "requested_start_date", "as_of")
MONTHS_A_YEAR = 12

_ISO = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})$")
_DMY = re.compile(r"^(\d{1,2})\s*[/.\-]\s*(\d{1,2})\s*[/.\-]\s*(\d+)$")
# "38.500", "$1.234.567": groups of three after dots, as Spanish and much of
# Europe write thousands ("30.000,50", with a decimal comma, has its own message).
_THOUSANDS_DOT = re.compile(r"^\$?\s*(\d{1,3}(?:\.\d{3})+)$")
_MONEY = re.compile(r"^\$?\s*(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?$")
_SIGNED = re.compile(r"^[+-]?\d+(\.\d*)?$")
# "22", "22.5", "22 años", "22 años y 5 meses", "22 years and 5 months", "5 meses"
_YEARS_WORD = r"(?:años?|anos?|a|years?|yrs?)"
_MONTHS_WORD = r"(?:mes(?:es)?|months?|m)"
_SERVICE = re.compile(
    rf"^(?:(?P<years>\d+(?:\.\d+)?)\s*{_YEARS_WORD}?)?"
    rf"(?:\s*(?:,|y|and|&)?\s*(?P<months>\d+)\s*{_MONTHS_WORD})?$",
    re.IGNORECASE,
)


@dataclass
class Reading:
    """The strict values for the core, the messages for what cannot be read
    (by field), and notes on what was read with a change the person must see."""

    values: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    # a date whose day and month could be swapped: the two dates it may be,
    # (ISO, in words), day first; its message asks which one was meant
    choices: dict[str, list[tuple[str, str]]] = field(default_factory=dict)


def read(values: dict[str, str], t: dict) -> Reading:
    """Read the form's values; `t` is the page's labels (section "lenient")."""
    out = Reading()
    m = t["lenient"]
    for name, raw in values.items():
        text = raw.strip()
        if not text:
            continue
        if name in DATE_FIELDS:
            value, error = read_date(text, m)
            both = date_choices(text, m) if error is None else None
            if both:
                out.choices[name] = both
                error = m["date_ask"].format(value=text, first=both[0][1], second=both[1][1])
        elif name == "average_compensation":
            value, error = read_money(text, m)
        elif name == "creditable_service_years":
            value, error, note = read_service(text, m)
            if note:
                out.notes[name] = note
        else:
            value, error = text, None
        if error:
            out.errors[name] = error
        else:
            out.values[name] = value
    return out


def read_date(text: str, m: dict) -> tuple[str | None, str | None]:
    """"10/05/1970", "10-5-1970", "10.05.1970" (day first) or "1970-05-10"."""
    iso, dmy = _ISO.match(text), _DMY.match(text)
    if iso:
        y, mo, d = (int(x) for x in iso.groups())
    elif dmy:
        d, mo, y_text = dmy.groups()
        if len(y_text) != 4:
            return None, m["date_year"].format(value=text)
        d, mo, y = int(d), int(mo), int(y_text)
    else:
        return None, m["date_shape"].format(value=text)
    if not 1 <= mo <= MONTHS_A_YEAR:
        return None, m["date_month"].format(value=text, month=mo)
    if y < 1:
        return None, m["date_year"].format(value=text)
    last = calendar.monthrange(y, mo)[1]
    if not 1 <= d <= last:
        return None, m["date_day"].format(value=text, day=d, month=m["months"][mo - 1],
                                          year=y, last=last)
    return date(y, mo, d).isoformat(), None


def date_words(day: date, m: dict) -> str:
    """A date in words in the page's language ("11 de marzo de 1963")."""
    return m["date_words"].format(day=day.day, month=m["months"][day.month - 1],
                                  year=day.year)


def date_choices(text: str, m: dict) -> list[tuple[str, str]] | None:
    """The two dates a day/month/year text may be when its day and month
    could be swapped (both 12 or less and different: "11/03/1963" is 11 March
    or, written month first, 3 November): day first, then month first, each
    (ISO, in words). None when the text has one reading only."""
    dmy = _DMY.match(text)
    if not dmy or len(dmy.group(3)) != 4:
        return None
    a, b, y = (int(x) for x in dmy.groups())
    if a == b or not (1 <= a <= MONTHS_A_YEAR and 1 <= b <= MONTHS_A_YEAR) or y < 1:
        return None
    days = (date(y, b, a), date(y, a, b))
    return [(d.isoformat(), date_words(d, m)) for d in days]


def read_money(text: str, m: dict) -> tuple[str | None, str | None]:
    """"30000", "30000.50", "30,000", "$30,000.50", "$ 30000". A dot before
    groups of three ("38.500", "$1.234.567") is refused, saying how to write
    it: the page reads a dot as the cents point, and "38.500" is also the
    strict form of $38.50, so it has two readings and neither is guessed."""
    dot = _THOUSANDS_DOT.match(text.replace(" ", ""))
    if dot:
        whole = dot.group(1).replace(".", "")
        return None, m["money_dot"].format(value=text, plain=whole, grouped=f"{int(whole):,}.00")
    if _SIGNED.match(text):  # the strict form: the core judges it (negative, zero…)
        return text, None
    match = _MONEY.match(text.replace(" ", "")) if text.count("$") <= 1 else None
    if not match:
        if re.match(r"^\$?\s*[\d.,]+$", text) and "," in text:
            return None, m["money_comma"].format(value=text)
        return None, m["money_shape"].format(value=text)
    whole, cents = match.groups()
    return whole.replace(",", "") + (cents or ""), None


def read_service(text: str, m: dict) -> tuple[str | None, str | None, str | None]:
    """Years as a number, or years and months in words. Months become years
    exactly when they can (a multiple of 3 months); otherwise to 4 decimals,
    half up, and the note says so with the exact fraction."""
    flat = " ".join(text.split())
    if _SIGNED.match(flat):  # the strict form: the core judges it
        return flat, None, None
    match = _SERVICE.match(flat)
    if not match or not (match.group("years") or match.group("months")):
        if "," in flat and re.match(r"^\d+,\d+$", flat):
            return None, m["service_comma"].format(value=text), None
        return None, m["service_shape"].format(value=text), None
    years = Fraction(Decimal(match.group("years") or "0"))
    months = int(match.group("months") or 0)
    if months >= MONTHS_A_YEAR:
        return None, m["service_months"].format(value=text), None
    exact = years + Fraction(months, MONTHS_A_YEAR)
    quantum = Decimal(1).scaleb(-SERVICE_PLACES)
    shown = (Decimal(exact.numerator) / Decimal(exact.denominator)).quantize(
        quantum, rounding=ROUND_HALF_UP)
    value = plain(shown)
    if Fraction(shown) == exact:
        if months == 0 and value == plain(Decimal(match.group("years") or "0")):
            return value, None, None  # "22 años" is 22
        return value, None, m["service_exact"].format(value=text, years=value)
    approx = f"{float(exact):.6f}".rstrip("0")
    return value, None, m["service_rounded"].format(value=text, years=value, exact=approx)
