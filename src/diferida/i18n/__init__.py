"""Message catalogs (es, en) and the formatting of dates and money per language."""

from __future__ import annotations

import tomllib
from datetime import date
from functools import cache
from importlib import resources
from typing import Any

LANGS = ("es", "en")
DEFAULT_LANG = "es"


@cache
def catalog(lang: str) -> dict[str, Any]:
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}; use one of {', '.join(LANGS)}")
    text = (resources.files("diferida") / "i18n" / f"{lang}.toml").read_text("utf-8")
    return tomllib.loads(text)


def msg(lang: str, section: str, key: str, **values: Any) -> str:
    return catalog(lang)[section][key].format(**values)


def fmt_date(value: date | None, lang: str) -> str:
    if value is None:
        return "—"
    c = catalog(lang)
    return c["date_format"].format(day=value.day, month=c["months"][value.month - 1],
                                   year=value.year)


def fmt_wait(years: int, months: int, days: int, lang: str) -> str:
    w = catalog(lang)["wait"]
    parts = [w[k][0 if n == 1 else 1].format(n=n)
             for k, n in (("years", years), ("months", months), ("days", days)) if n]
    if not parts:
        return w["today"]
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + w["join"] + parts[-1]


class Keep(dict):
    """format_map helper: placeholders not given stay as they are."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


# error codes whose value is a date that was read and compared with another
# field's: the message writes it out ("1 de enero de 1990"), not as typed
DATE_VALUES = ("birth_after_entry", "entry_after_separation")


def value_text(lang: str, code: str, value: Any) -> str:
    """The value an error message shows: a date the message compares,
    written out in the language; any other value as it was given."""
    if value is None:
        return ""
    return written_date(str(value), lang) if code in DATE_VALUES else str(value)


def written_date(text: str, lang: str) -> str:
    """A date given as ISO text (or a typed date or datetime as text) written
    out in the language; anything else as it is."""
    try:
        return fmt_date(date.fromisoformat(text[:10]), lang)
    except ValueError:
        return text
