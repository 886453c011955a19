"""Messages of the service's own errors, from the catalogs
(i18n/<lang>/service.toml; the core's cover the participant's fields)."""

from __future__ import annotations

from typing import Any

from ..i18n import DEFAULT_LANG, LANGS, Keep, catalog
from ..words import error_text


def text(lang: str, code: str, field: str | None = None, **values: Any) -> str:
    """The message of `code` in `lang`, its placeholders filled from `values`.
    A field error the core's catalog already words takes the form of its
    `field` (in Spanish a message agrees with the field's gender and number:
    "es obligatorio", "es obligatoria", "son obligatorios")."""
    lang = lang if lang in LANGS else DEFAULT_LANG
    own = catalog(lang)["service"]
    if code in own:
        template = own[code]
    else:  # a field error the core's catalog already words
        template = error_text(lang, code, field)
    return template.format_map(Keep(values))


def pick_lang(candidate: Any = None, accept_language: str | None = None) -> str:
    """The language of a response: the request's `lang` when valid, else the
    first supported one in Accept-Language, else the default."""
    if isinstance(candidate, str) and candidate in LANGS:
        return candidate
    for part in (accept_language or "").split(","):
        tag = part.split(";")[0].strip().lower()[:2]
        if tag in LANGS:
            return tag
    return DEFAULT_LANG
