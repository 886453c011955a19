"""The letter's administrator-editable texts: the letterhead and contact
block ([letter_office]) and what the person may do next, with their right to
ask for reconsideration or review ([letter_next]).

Four of them are shipped empty and required: the office's address,
telephone and hours, and the time limit to ask for reconsideration
(`REQUIRED`). No letter is issued while any is empty in the letter's
language (`missing_texts`); `diferida serve` says at start which are.

The shipped texts are sections of the catalog i18n/<lang>/letter.toml. An
administrator replaces them with a file `letter_<lang>.toml` in the directory
named by DIFERIDA_WEB_TEXTS_DIR (the directory of the calculator's editable
texts): each section it has replaces the shipped one whole, and must have
the same keys, a text where a text is shipped, a list of texts where a list
is, and within braces only the names the shipped text of that key uses.
Anything else is a `LetterTextsError` naming the file and the key.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import DiferidaError
from ..i18n import LANGS, catalog
from ..textfiles import check_shape, read_texts

TEXTS_DIR_ENV = "DIFERIDA_WEB_TEXTS_DIR"
EDITABLE_SECTIONS = ("letter_office", "letter_next")


class LetterTextsError(DiferidaError, ValueError):
    """An administrator's letter texts file that cannot be used as it is."""


def override_path(lang: str) -> Path | None:
    """The administrator's file for `lang`, when there is one."""
    folder = os.environ.get(TEXTS_DIR_ENV, "").strip()
    if not folder:
        return None
    path = Path(folder) / f"letter_{lang}.toml"
    return path if path.is_file() else None


@cache
def _override(path: str, mtime_ns: int, size: int, lang: str) -> dict[str, Any]:
    """An administrator's file, read and checked once per version of it."""
    data = read_texts(path, LetterTextsError)
    problems: list[str] = []
    shipped = catalog(lang)
    for key in data:
        if key not in EDITABLE_SECTIONS:
            problems.append(f"{key}: not an editable section (use "
                            f"{' or '.join(EDITABLE_SECTIONS)})")
        else:
            check_shape(data[key], shipped[key], key, problems)
    if problems:
        raise LetterTextsError(f"{path}: " + "; ".join(problems))
    return data


def editable(section: str, lang: str) -> dict[str, Any]:
    """The section `section` of the letter in `lang`: the administrator's,
    when their file has it (re-read when the file changes), else shipped."""
    assert section in EDITABLE_SECTIONS, section
    path = override_path(lang)
    if path is not None:
        st = path.stat()
        data = _override(str(path), st.st_mtime_ns, st.st_size, lang)
        if section in data:
            return data[section]
    return catalog(lang)[section]


# The administrator's texts without which no letter is issued: the office's
# address, telephone and hours, and the time limit to ask for reconsideration
# (empty as shipped: only the System knows them).
REQUIRED = (("letter_office", "address"), ("letter_office", "telephone"),
            ("letter_office", "hours"), ("letter_next", "reconsideration"))


def missing_texts(lang: str) -> list[str]:
    """The required administrator's texts that are empty in `lang`
    ("letter_office.telephone", …), in the order of REQUIRED."""
    out = []
    for section, key in REQUIRED:
        value = editable(section, lang).get(key)
        given = ([x for x in value if isinstance(x, str) and x.strip()]
                 if isinstance(value, list) else str(value or "").strip())
        if not given:
            out.append(f"{section}.{key}")
    return out


def missing_everywhere() -> dict[str, list[str]]:
    """For each language, the required texts that are empty (only those
    with some missing)."""
    return {lang: m for lang in LANGS if (m := missing_texts(lang))}


def check_letter_texts() -> list[Path]:
    """Read every administrator's letter file now, so that a mistake stops
    the service at start with its name and key. Returns the files in use."""
    used = []
    for lang in LANGS:
        for section in EDITABLE_SECTIONS:
            editable(section, lang)
        path = override_path(lang)
        if path is not None:
            used.append(path)
    return used


def setup_report() -> list[str]:
    """What `diferida serve` says at start about the required texts: for
    each language with some empty, which (no letter is issued in that
    language until they are written), in that language; nothing when all
    are written."""
    out = []
    for lang, missing in missing_everywhere().items():
        t = catalog(lang)["letter_requirements"]
        out.append(t["setup_missing"].format(
            lang=t["langs"][lang], file=f"letter_{lang}.toml", env=TEXTS_DIR_ENV,
            missing=", ".join(t["texts"][m] for m in missing)))
    return out
