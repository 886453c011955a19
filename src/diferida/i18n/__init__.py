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


def error_message(lang: str, code: str, value: Any) -> str:
    return msg(lang, "errors", code, value="" if value is None else value)


def field_label(lang: str, field: str) -> str:
    return catalog(lang)["fields"].get(field, field)
