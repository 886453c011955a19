"""A date as a person types it into the forms' three boxes (día, mes, año):
"03/07/1991", "1991-07-03" or "3 de julio de 1991" becomes the boxes
`<name>-day`, `<name>-month` and `<name>-year` (web/lenient.py). Shared by
the tests that fill the calculator's or the workbench's form by name.

On an English page the month-first guard asks a date whose day and month
are both 12 or less and differ (docs/web.md): a test that means to reach an
answer there types such a date as an English speaker does to be read one
way, the month by its name ("10", "May", "1970"); a test of the question
itself types the numbers (a tuple is typed as given)."""

from __future__ import annotations

import calendar
import re

from diferida.web.lenient import ALL_DATE_FIELDS, PARTS

_ISO = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})$")
_DMY = re.compile(r"^(\d{1,2})\s*[/.\-]\s*(\d{1,2})\s*[/.\-]\s*(\d+)$")
# "3 de julio de 1991", "3 julio 1991", "July 3, 1991"
_WORDS = re.compile(r"^(\d{1,2})\s+(?:de\s+)?([^\d\s,]+)\s+(?:de\s+)?(\d+)$", re.IGNORECASE)
_MONTH_FIRST = re.compile(r"^([^\d\s,]+)\s+(\d{1,2}),?\s+(\d+)$")


def date_parts(text: str | tuple[str, str, str]) -> tuple[str, str, str]:
    """The day, the month and the year a person types for `text`, each as
    written ("03/07/1991" is day 03, month 07: the page's day-first order)."""
    if isinstance(text, tuple):
        return text
    text = text.strip()
    if not text:
        return ("", "", "")
    if m := _ISO.match(text):
        return (m.group(3), m.group(2), m.group(1))
    for pattern in (_DMY, _WORDS):
        if m := pattern.match(text):
            return (m.group(1), m.group(2), m.group(3))
    if m := _MONTH_FIRST.match(text):
        return (m.group(2), m.group(1), m.group(3))
    raise ValueError(f"not a date a person would type: {text!r}")


def two_readings(day: str, month: str) -> bool:
    """Boxes whose day and month could each be the other: both numbers of
    12 or less, and different."""
    if not (day.isdigit() and month.isdigit()):
        return False
    return int(day) != int(month) and 1 <= int(day) <= 12 and 1 <= int(month) <= 12


def in_boxes(values: dict, lang: str = "es") -> dict[str, str]:
    """The form's values with each date put into its three boxes; on an
    English page (`lang`), a date written as text whose boxes would have two
    readings with the month by its English name."""
    out: dict[str, str] = {}
    for name, value in values.items():
        if name in ALL_DATE_FIELDS:
            day, month, year = date_parts(value)
            if lang == "en" and not isinstance(value, tuple) and two_readings(day, month):
                month = calendar.month_name[int(month)]
            out.update({f"{name}-{p}": v for p, v in zip(PARTS, (day, month, year),
                                                         strict=True)})
        else:
            out[name] = value
    return out


def as_typed_on(boxes: dict[str, str], lang: str) -> dict[str, str]:
    """Form values already in boxes, as a person types them on the page of
    `lang`: on an English page, the month of a date whose boxes would have
    two readings by its English name; anything else as given."""
    out = dict(boxes)
    if lang != "en":
        return out
    for name in ALL_DATE_FIELDS:
        day, month = out.get(f"{name}-day", ""), out.get(f"{name}-month", "")
        if two_readings(day, month):
            out[f"{name}-month"] = calendar.month_name[int(month)]
    return out
