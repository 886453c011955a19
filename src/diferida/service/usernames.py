"""A user's name: a plain set of characters, so that a name is never read as
something else where it is shown or exported (a spreadsheet formula such as
`=HYPERLINK(...)`, a TAB that splits a column, a terminal's escape code).

A name has 1 to `MAX_USER_NAME` characters: ASCII letters, digits, '.', '_'
and '-', and starts with a letter or a digit. `Store.add_user` and
`diferida users add` refuse any other; the message, in each language of
the catalogs (`[users]`), says the allowed set."""

from __future__ import annotations

import re

from ..i18n import DEFAULT_LANG, LANGS, catalog

MAX_USER_NAME = 64  # within the name columns (String(100)) of users and events
_NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_USER_NAME - 1}}}")


def allowed(name: object) -> bool:
    return isinstance(name, str) and _NAME.fullmatch(name) is not None


def _shown(name: object) -> str:
    text = repr(name)  # quoted, a control character escaped (\t, \x1b)
    return text if len(text) <= 40 else text[:37] + "…"


def refusal(name: object, lang: str = "en") -> str:
    """The message refusing `name`, in `lang`: it says the allowed set."""
    lang = lang if lang in LANGS else DEFAULT_LANG
    return catalog(lang)["users"]["name_not_allowed"].format(value=_shown(name),
                                                             most=MAX_USER_NAME)


def refusal_in_every_language(name: object) -> str:
    """The message in each language, one line each (Spanish first): the
    `users` commands have no --lang."""
    return "\n".join(refusal(name, lang) for lang in LANGS)


MAX_PROFILE_TEXT = 200  # a full name or a title, as a letter's signature prints it


def profile_problem(full_name: object, title: object, lang: str | None = None) -> str | None:
    """What is wrong with a full name and title (each text of 1 to
    MAX_PROFILE_TEXT characters, no control characters), or None. In `lang`,
    or in every language, one line each (Spanish first)."""
    from .participant import control_character

    for field, value in (("full_name", full_name), ("title", title)):
        text = value.strip() if isinstance(value, str) else ""
        key = None
        if not text:
            key = "profile_required"
        elif len(text) > MAX_PROFILE_TEXT:
            key = "profile_too_long"
        elif "\x00" in text or control_character(text):
            key = "profile_control"
        if key is not None:
            langs = [lang] if lang in LANGS else list(LANGS)
            return "\n".join(catalog(x)["users"][key].format(
                field=catalog(x)["users"]["fields"][field], most=MAX_PROFILE_TEXT)
                for x in langs)
    return None
