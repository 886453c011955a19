"""What a person types, read as they type it — on the web page only.

Files and the API keep the strict formats of rules §1. A former employee
copies numbers from a statement: "$30,000", "30,000.50", "22 años y 5 meses",
dates in three boxes (day, month, year). This module reads those forms into
the strict ones and says exactly what is wrong with anything else. Nothing is
guessed: a comma is a thousands separator only in groups of three; a dot is
the cents point, never a thousands separator ("$38.500" is refused, saying
how to write it: it is also the strict form of $38.50); a service in years
and months that has no exact 4-decimal form is rounded only with a note the
person sees next to the answer.

Dates on the forms are typed in three boxes, GOV.UK's memorable-date
pattern (docs/web.md): a box for the day, one for the month (a number or the
month's name, Spanish or English, whole or abbreviated, in any case, with or
without accents) and one for the year (4 digits). The boxes of a date named
`birth_date` are `birth_date-day`, `birth_date-month` and `birth_date-year`.
Three boxes have one reading only, so nothing is asked back; a date that
cannot be read gets one message naming its box. A date posted whole, in one
value (a client without the boxes, the page's own hidden fields), is read as
before: "1970-05-10", or day/month/year when the day and the month cannot be
swapped; one whose day and month could be swapped is refused, saying the two
dates it may be, and never guessed. The single date boxes that remain (the
audit's filters, the scenario panel's date) still ask back with the two
dates (`date_choices`).

The month-first guard (docs/web.md): on a page whose language writes the
month first by habit (the labels' `[lenient] ask_month_first`: English), a
date typed in its boxes with the day and the month both numbers of 12 or
less, and different, has two readings for its writer ("11 / 03 / 1963" is
March 11 as the boxes say, or November 3 as he may have meant). It is not
read: it is asked (`Reading.questions`), with both readings, and the answer
waits. The person's choice (`CHOICE`, "birth_date:1963-11-03") writes the
date back in its boxes with the month by its name (`choose`), which has one
reading. A day equal to its month, a month typed by its name and a Spanish
page (day first by convention) are read as typed; dates typed on the Spanish
page keep their reading when the page switches to English (`settle`).
"""

from __future__ import annotations

import calendar
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import Any

from diferida.determination import plain
from diferida.fields import SERVICE_PLACES
from diferida.i18n import catalog, fmt_date

DATE_FIELDS = ("birth_date", "entry_date", "separation_date", "requested_start_date", "as_of")
# the workbench's application has one more date of its own
APPLICATION_DATE = "application_date"
ALL_DATE_FIELDS = (*DATE_FIELDS, APPLICATION_DATE)
# the input a choice of the month-first guard is posted in: "birth_date:1963-11-03"
CHOICE = "date_reading"
MONTHS_A_YEAR = 12
PARTS = ("day", "month", "year")
YEAR_DIGITS = 4
# What the month box takes besides 1–12 / 01–12: each month's name in Spanish
# and in English, whole and in its common abbreviations (compared without
# case, accents or a final dot). No word is two months.
MONTH_WORDS = {
    1: ("enero", "ene", "january", "jan"),
    2: ("febrero", "feb", "february"),
    3: ("marzo", "mar", "march"),
    4: ("abril", "abr", "april", "apr"),
    5: ("mayo", "may"),
    6: ("junio", "jun", "june"),
    7: ("julio", "jul", "july"),
    8: ("agosto", "ago", "august", "aug"),
    9: ("septiembre", "setiembre", "sep", "sept", "set", "september"),
    10: ("octubre", "oct", "october"),
    11: ("noviembre", "nov", "november"),
    12: ("diciembre", "dic", "december", "dec"),
}
_MONTH_OF = {word: number for number, words in MONTH_WORDS.items() for word in words}
_DAY_BOX = re.compile(r"^[0-9]{1,2}$")
_MONTH_BOX = re.compile(r"^[0-9]{1,2}$")
_YEAR_BOX = re.compile(r"^[0-9]+$")

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
    # a date's boxes in error ("day", "month", "year"), first the one its
    # message names: the boxes marked invalid, the first one the link's target
    boxes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # the month-first guard: a date with two readings for its writer, not
    # read but asked, by field: (the month-first reading, the boxes' own), ISO
    questions: dict[str, tuple[str, str]] = field(default_factory=dict)


def box_name(name: str, part: str) -> str:
    """The input of one box of a date: "birth_date-day"."""
    return f"{name}-{part}"


def box_names(fields: Iterable[str]) -> tuple[str, ...]:
    return tuple(box_name(n, p) for n in fields for p in PARTS)


def date_boxes(values: Mapping[str, str], name: str) -> tuple[str, str, str] | None:
    """The three boxes of a date as typed, or None when none was posted."""
    keys = [box_name(name, p) for p in PARTS]
    if not any(k in values for k in keys):
        return None
    day, month, year = (values.get(k, "") for k in keys)
    return day, month, year


def typed_date(values: Mapping[str, str], name: str) -> str:
    """A date as typed, in one text: its boxes ("3/julio/1991"), or the value
    posted whole; "" when nothing was typed."""
    parts = date_boxes(values, name)
    if parts is None:
        return values.get(name, "").strip()
    if not any(p.strip() for p in parts):
        return ""
    return "/".join(p.strip() for p in parts)


def split_whole(values: dict[str, str], fields: Iterable[str], m: dict | None = None) -> None:
    """A date posted whole (no boxes) that has one reading — "1970-05-10", or
    day/month/year with a day over 12 — is put into its three boxes, its
    parts as written; any other whole text is left for `read` to refuse.
    With `m`, the page's labels ([lenient]) on a page that writes the month
    first by habit, a month whose boxes would have two readings there (the
    month-first guard) is written by its name ("10", "May", "1970"): a date of
    one reading is never asked."""
    ask = m is not None and bool(m["ask_month_first"])
    for name in fields:
        text = values.get(name, "").strip()
        if not text or date_boxes(values, name) is not None:
            continue
        iso, dmy = _ISO.match(text), _DMY.match(text)
        if iso:
            y, mo, d = iso.groups()
        elif dmy and not _swappable(text):
            d, mo, y = dmy.groups()
        else:
            continue
        del values[name]
        if ask and m is not None and two_readings((d, mo, y)) is not None:
            mo = m["months"][int(mo) - 1]
        values.update({box_name(name, "day"): d, box_name(name, "month"): mo,
                       box_name(name, "year"): y})


def _folded(text: str) -> str:
    """A month's word compared without case, accents or a final dot."""
    plain_text = unicodedata.normalize("NFKD", text.strip().casefold())
    plain_text = "".join(c for c in plain_text if not unicodedata.combining(c))
    return plain_text.removesuffix(".").strip()


def read_month(text: str) -> int | None:
    """The month typed in the month box: 1–12 (or 01–12) or a month's name."""
    text = text.strip()
    if _MONTH_BOX.match(text):
        number = int(text)
        return number if 1 <= number <= MONTHS_A_YEAR else None
    return _MONTH_OF.get(_folded(text))


def read_boxes(parts: tuple[str, str, str], name: str,
               m: dict) -> tuple[str | None, str | None, tuple[str, ...]]:
    """A date typed in its three boxes: (ISO, None, ()) or (None, the one
    message for the date, the boxes in error). All three empty: (None, None,
    ()) — an absent date, which the core names when it is required."""
    day, month, year = (p.strip() for p in parts)
    what = m["date_names"].get(name, name)
    typed = dict(zip(PARTS, (day, month, year), strict=True))
    filled = [p for p in PARTS if typed[p]]
    if not filled:
        return None, None, ()

    def said(key: str, **values: object) -> str:
        text = m[key].format(date=what, **values)
        return text[:1].upper() + text[1:]

    alone = typed[filled[0]]
    if len(filled) == 1 and not _DAY_BOX.match(alone) and re.search(r"[\s/.\-]", alone) and any(
            c.isdigit() for c in alone):
        # the whole date in one box ("3 de julio de 1991", "03/07/1991")
        return None, said("date_one_box"), (filled[0],)
    missing = [p for p in PARTS if not typed[p]]
    if missing:
        names = [m["date_parts"][p] for p in missing]
        return None, said("date_missing", parts=m["date_and"].join(names)), tuple(missing)
    bad = []
    if not (_DAY_BOX.match(day) and 1 <= int(day) <= 31):  # noqa: PLR2004 (days of a month)
        bad.append("day")
    number = read_month(month)
    if number is None:
        bad.append("month")
    if not (_YEAR_BOX.match(year) and len(year) == YEAR_DIGITS and int(year) >= 1):
        bad.append("year")
    if bad:
        first = bad[0]
        if first == "day":
            return None, said("date_day_number"), tuple(bad)
        if first == "month":
            return None, said("date_month_word", value=month), tuple(bad)
        return None, said("date_year_digits"), tuple(bad)
    y = int(year)
    assert number is not None
    last = calendar.monthrange(y, number)[1]
    if int(day) > last:
        return None, said("date_day_month", last=last, month=m["months"][number - 1],
                          year=y), ("day",)
    return date(y, number, int(day)).isoformat(), None, ()


def two_readings(parts: tuple[str, str, str]) -> tuple[date, date] | None:
    """The boxes of a date whose day and month are both numbers of 12 or
    less, and different: (the month-first reading, the boxes' own). None
    for a date of one reading (a day over 12, a day equal to its month, a
    month by its name) or one that cannot be read."""
    day, month, year = (p.strip() for p in parts)
    if not (_DAY_BOX.match(day) and _MONTH_BOX.match(month) and _YEAR_BOX.match(year)
            and len(year) == YEAR_DIGITS and int(year) >= 1):
        return None
    d, mo, y = int(day), int(month), int(year)
    if d == mo or not (1 <= d <= MONTHS_A_YEAR and 1 <= mo <= MONTHS_A_YEAR):
        return None
    return date(y, d, mo), date(y, mo, d)


def choose(values: dict[str, str], choice: str, m: dict) -> str | None:
    """Apply a choice of the month-first guard ("birth_date:1963-11-03"):
    when it is one of the two readings of that date's boxes as they are now,
    the boxes are written with it, the month by its name in the page's
    language ("3", "November", "1963"), which has one reading. Returns the
    date's name, or None when the choice is not one of them (the boxes
    changed since: they are read, or asked, as they are)."""
    name, _, iso = choice.strip().partition(":")
    parts = date_boxes(values, name) if name in ALL_DATE_FIELDS else None
    both = two_readings(parts) if parts is not None else None
    if both is None or iso not in {d.isoformat() for d in both}:
        return None
    chosen = date.fromisoformat(iso)
    values.update({box_name(name, "day"): str(chosen.day),
                   box_name(name, "month"): m["months"][chosen.month - 1],
                   box_name(name, "year"): str(chosen.year)})
    return name


def settle(values: dict[str, str], fields: Iterable[str], m_from: dict, m_to: dict) -> None:
    """Dates typed on a page that reads them as their boxes say (day first),
    carried to a page that would ask them (the language switch, `m_from` and
    `m_to` the two pages' [lenient] labels): each date of two readings keeps
    the reading it had where it was typed, its month written by its name in
    the new page's language, so that the answer, its printout and its own
    page say the same dates in both languages."""
    if m_from["ask_month_first"] or not m_to["ask_month_first"]:
        return
    for name in fields:
        parts = date_boxes(values, name)
        readings = two_readings(parts) if parts is not None else None
        if readings is not None:
            values[box_name(name, "month")] = m_to["months"][readings[1].month - 1]


def read_as(values: Mapping[str, str], name: str, m: dict) -> date | None:
    """The date a date's boxes say as typed (day, month, year), or None when
    they say none: what the page writes back in words beside them."""
    parts = date_boxes(values, name)
    if parts is None:
        return None
    iso = read_boxes(parts, name, m)[0]
    return None if iso is None else date.fromisoformat(iso)


def asked(questions: Mapping[str, tuple[str, str]], m: dict, lang: str,
          label: Mapping[str, str]) -> list[dict[str, Any]]:
    """The month-first guard's questions as the page asks them: for each date
    (`label` names it), one line with both readings in words ("Date of
    birth: did you mean November 3, 1963 or March 11, 1963?") and the two
    choices, each the value its button posts in `CHOICE` and its words.
    `label`: each date's name on the page's form."""
    rows = []
    for name, readings in questions.items():
        days = [date.fromisoformat(iso) for iso in readings]
        words = [fmt_date(d, lang) for d in days]
        rows.append({"name": name,
                     "line": m["date_question"].format(date=label[name], first=words[0],
                                                       second=words[1]),
                     "choices": [(f"{name}:{d.isoformat()}", w)
                                 for d, w in zip(days, words, strict=True)]})
    return rows


def written_back(values: Mapping[str, str], name: str, m: dict, lang: str) -> str:
    """What the page writes beside a date's boxes: the date they say, in
    words in the page's language ("Read as November 3, 1963"); "" when they
    say none yet."""
    day = read_as(values, name, m)
    return "" if day is None else m["date_read"].format(date=fmt_date(day, lang))


def script_words(m: dict, lang: str) -> dict[str, Any]:
    """What the page's script needs to write a date back as it is typed, as
    the server does (`written_back`): the words the month box takes, each
    month's name and the date's wording in the page's language."""
    c = catalog(lang)
    return {"month_words": [list(MONTH_WORDS[n]) for n in sorted(MONTH_WORDS)],
            "months": list(c["months"]), "format": c["date_format"],
            "read": m["date_read"]}


def read(values: Mapping[str, str], t: dict,
         names: Iterable[str] | None = None) -> Reading:
    """Read the form's values (a date from its three boxes, web forms' own
    inputs); `t` is the page's labels (section "lenient"). `names`: the
    fields to read (default: every value posted, and the dates of boxes).
    On a page that writes the month first by habit, a date of two readings
    is asked, not read (the month-first guard, above)."""
    out = Reading()
    m = t["lenient"]
    ask = bool(m["ask_month_first"])
    if names is None:
        names = [*(n for n in values if n not in set(box_names(ALL_DATE_FIELDS))),
                 *(n for n in ALL_DATE_FIELDS
                   if n not in values and date_boxes(values, n) is not None)]
    for name in names:
        parts = date_boxes(values, name) if name in ALL_DATE_FIELDS else None
        if parts is not None:
            value, error, bad = read_boxes(parts, name, m)
            readings = two_readings(parts) if ask and error is None else None
            if readings is not None:
                out.questions[name] = (readings[0].isoformat(), readings[1].isoformat())
            elif error:
                out.errors[name] = error
                out.boxes[name] = bad
            elif value is not None:
                out.values[name] = value
            continue
        text = values.get(name, "").strip()
        if not text:
            continue
        if name in ALL_DATE_FIELDS:
            # posted whole (split_whole put any date of one reading in boxes)
            value, error = read_date(text, m)
            both = date_choices(text, m) if error is None else None
            if both:  # two readings: refused, never guessed, nothing asked back
                error = m["date_whole_ambiguous"].format(value=text, first=both[0][1],
                                                         second=both[1][1])
            if error:
                out.boxes[name] = ("day",)
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
            assert value is not None  # each reader gives a value or an error
            out.values[name] = value
    return out


def read_date(text: str, m: dict) -> tuple[str | None, str | None]:
    """"10/05/1970", "10-5-1970", "10.05.1970" (day first) or "1970-05-10"."""
    iso, dmy = _ISO.match(text), _DMY.match(text)
    if iso:
        y, mo, d = (int(x) for x in iso.groups())
    elif dmy:
        d_text, mo_text, y_text = dmy.groups()
        if len(y_text) != 4:
            return None, m["date_year"].format(value=text)
        d, mo, y = int(d_text), int(mo_text), int(y_text)
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


def _swappable(text: str) -> bool:
    """A day/month/year text whose day and month could be swapped."""
    dmy = _DMY.match(text)
    if not dmy or len(dmy.group(3)) != YEAR_DIGITS:
        return False
    a, b, y = (int(x) for x in dmy.groups())
    return a != b and 1 <= a <= MONTHS_A_YEAR and 1 <= b <= MONTHS_A_YEAR and y >= 1


def date_choices(text: str, m: dict) -> list[tuple[str, str]] | None:
    """The two dates a day/month/year text may be when its day and month
    could be swapped (both 12 or less and different: "11/03/1963" is 11 March
    or, written month first, 3 November): day first, then month first, each
    (ISO, in words). None when the text has one reading only."""
    if not _swappable(text):
        return None
    found = _DMY.match(text)
    assert found is not None  # _swappable matched it
    a, b, y = (int(x) for x in found.groups())
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
