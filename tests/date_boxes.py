"""A date as a person types it into the forms' three boxes (día, mes, año):
"03/07/1991", "1991-07-03" or "3 de julio de 1991" becomes the boxes
`<name>-day`, `<name>-month` and `<name>-year` (web/lenient.py). Shared by
the tests that fill the calculator's or the workbench's form by name."""

from __future__ import annotations

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


def in_boxes(values: dict) -> dict[str, str]:
    """The form's values with each date put into its three boxes."""
    out: dict[str, str] = {}
    for name, value in values.items():
        if name in ALL_DATE_FIELDS:
            out.update({f"{name}-{p}": v for p, v in zip(PARTS, date_parts(value), strict=True)})
        else:
            out[name] = value
    return out
