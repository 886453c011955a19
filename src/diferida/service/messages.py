"""Messages of the service's own errors (the core's catalogs cover the
participant's fields), in the same two languages."""

from __future__ import annotations

from typing import Any

from ..i18n import DEFAULT_LANG, LANGS, Keep
from ..words import error_text

MESSAGES: dict[str, dict[str, str]] = {
    "invalid_json": {
        "en": "the body is not valid JSON ({detail})",
        "es": "el cuerpo no es JSON válido ({detail})",
    },
    "invalid_body": {
        "en": "the body cannot be read ({detail})",
        "es": "no se puede leer el cuerpo ({detail})",
    },
    "not_an_object": {
        "en": "the body must be a JSON object of fields",
        "es": "el cuerpo debe ser un objeto JSON de campos",
    },
    "duplicate_key": {
        "en": "appears more than once in the body",
        "es": "aparece más de una vez en el cuerpo",
    },
    "not_a_scalar": {
        "en": "must be a string, a number, true/false or null",
        "es": "debe ser texto, un número, true/false o null",
    },
    "unknown_lang": {
        "en": "'{value}' is not a supported language (es, en)",
        "es": "'{value}' no es un idioma disponible (es, en)",
    },
    "unknown_rules": {
        "en": "'{value}' is not a known rules name ({names})",
        "es": "'{value}' no es un nombre de reglas conocido ({names})",
    },
    "not_an_integer": {
        "en": "'{value}' is not a whole number",
        "es": "'{value}' no es un número entero",
    },
    "not_unicode": {
        "en": "holds a character that is not valid Unicode (a lone surrogate such as \\ud800)",
        "es": "contiene un carácter que no es Unicode válido (un sustituto aislado como \\ud800)",
    },
    "nul_character": {
        "en": "must not contain the NUL character (\\u0000)",
        "es": "no puede contener el carácter NUL (\\u0000)",
    },
    "control_character": {
        "en": "must not contain a control character (it holds {char})",
        "es": "no puede contener caracteres de control (contiene {char})",
    },
    "blank": {
        "en": "is blank",
        "es": "está en blanco",
    },
    "too_many_requests": {
        "en": "too many requests from this client; try again in {retry} seconds",
        "es": "demasiadas solicitudes de este cliente; vuelva a intentarlo en {retry} segundos",
    },
    "too_long": {
        "en": "is longer than {limit} characters",
        "es": "tiene más de {limit} caracteres",
    },
    "not_a_datetime": {
        "en": "'{value}' is not a valid ISO 8601 date-time",
        "es": "'{value}' no es una fecha y hora ISO 8601 válida",
    },
    "invalid": {
        "en": "'{value}' is not valid: {detail}",
        "es": "'{value}' no es válido: {detail}",
    },
    "unauthorized": {
        "en": "a valid bearer token is required (Authorization: Bearer <token>)",
        "es": "se requiere un token válido (Authorization: Bearer <token>)",
    },
    "forbidden": {
        "en": "the role '{role}' may not do this; allowed: {allowed}",
        "es": "el rol '{role}' no puede hacer esto; permitido a: {allowed}",
    },
    "not_found": {
        "en": "there is no case {value}",
        "es": "no existe el caso {value}",
    },
    "no_such_case": {
        "en": "there is no case {value}",
        "es": "no existe el caso {value}",
    },
    "other_participant": {
        "en": "case {value} belongs to another participant",
        "es": "el caso {value} pertenece a otro participante",
    },
    "case_exists": {
        "en": "this participant already has case {current} (the current version); "
              "a correction must name it in 'supersedes'",
        "es": "este participante ya tiene el caso {current} (la versión vigente); "
              "una corrección debe indicarlo en 'supersedes'",
    },
    "stale_version": {
        "en": "case {value} has already been superseded; the current version is case {current}",
        "es": "el caso {value} ya fue sustituido; la versión vigente es el caso {current}",
    },
    "payload_too_large": {
        "en": "the body is larger than the limit of {limit} bytes",
        "es": "el cuerpo supera el límite de {limit} bytes",
    },
    "file_missing": {
        "en": "a file is required (multipart field 'file')",
        "es": "se requiere un archivo (campo multipart 'file')",
    },
    "bad_file": {
        "en": "{detail}",
        "es": "{detail}",
    },
    "not_found_path": {
        "en": "no such resource",
        "es": "no existe ese recurso",
    },
    "method_not_allowed": {
        "en": "method not allowed here",
        "es": "método no permitido aquí",
    },
    "server_error": {
        "en": "internal error; nothing was stored by this request",
        "es": "error interno; esta solicitud no guardó nada",
    },
    "unavailable": {
        "en": "the database is not reachable",
        "es": "la base de datos no está disponible",
    },
}


def text(lang: str, code: str, field: str | None = None, **values: Any) -> str:
    """The message of `code` in `lang`, its placeholders filled from `values`.
    A field error the core's catalog already words takes the form of its
    `field` (in Spanish a message agrees with the field's gender and number:
    "es obligatorio", "es obligatoria", "son obligatorios")."""
    lang = lang if lang in LANGS else DEFAULT_LANG
    if code in MESSAGES:
        table = MESSAGES[code]
        template = table.get(lang, table["en"])
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
