"""Message catalogs (es, en) and the formatting of dates and money per language."""

from __future__ import annotations

import tomllib
from datetime import date
from functools import cache
from importlib import resources
from typing import Any

DEFAULT_LANG = "es"
_FOLDER = resources.files("diferida") / "i18n"
# A language is a folder of catalogs (i18n/es/, i18n/en/): its TOML files
# together hold every text of the program in that language, each file its
# own sections (core: determinations and field errors; batch: population
# files; cli: the commands' summaries and headers; service: the API's own
# errors). Adding a language is adding a folder
# with the same files and keys (tests/test_catalogs.py holds them equal).
LANGS: tuple[str, ...] = (DEFAULT_LANG, *sorted(
    p.name for p in _FOLDER.iterdir() if p.is_dir() and p.name != DEFAULT_LANG
    and not p.name.startswith("_") and any(f.name.endswith(".toml") for f in p.iterdir())))


def check_lang(lang: str, error: type[Exception] = ValueError, option: str = "") -> str:
    """The one check of a language's name, everywhere one is taken (the
    runners as `--lang`, the web pages, the catalog): `error` raised with
    the message, naming `option` when given."""
    if lang not in LANGS:
        name = f"{option}: " if option else ""
        raise error(f"{name}unknown language {lang!r}; use one of {', '.join(LANGS)}")
    return lang


@cache
def catalog(lang: str) -> dict[str, Any]:
    """Every text in `lang`: the sections of all the TOML files of its folder
    (a section in two files is refused)."""
    check_lang(lang)
    merged: dict[str, Any] = {}
    for f in sorted((_FOLDER / lang).iterdir(), key=lambda f: f.name):
        if not f.name.endswith(".toml"):
            continue
        part = tomllib.loads(f.read_text("utf-8"))
        twice = sorted(set(part) & set(merged))
        if twice:
            raise ValueError(f"i18n/{lang}/{f.name}: {', '.join(twice)} already in another file")
        merged.update(part)
    return merged


def msg(lang: str, section: str, key: str, **values: Any) -> str:
    return catalog(lang)[section][key].format(**values)


# The language of the commands' --help and of the OpenAPI document.
HELP_LANG = "en"


def help_text(key: str, lang: str = HELP_LANG, **values: Any) -> str:
    """An option's help or an API field's description: the catalogs'
    section [help] (i18n/<lang>/help.toml), dotted key ("cli.rules",
    "api.fields.birth_date"), filled with `values`."""
    node: Any = catalog(lang)["help"]
    for part in key.split("."):
        node = node[part]
    return str(node).format(**values)


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
