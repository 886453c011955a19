"""The check of an administrator's texts file against the shipped one, for
every text an administrator may replace (the calculator's `web/guidance.py`
and the letter's `letter/texts.py`): the same keys, a text where a text is
shipped, a list of texts where a list is, and within braces only the names
the shipped text of that key uses. Each problem names the key."""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

from .bounded import BadToml, Refused, load_toml, read_bounded

# an administrator's file of texts, at most: the shipped ones are a few KiB
MAX_TEXTS_BYTES = 1 << 18


def read_texts(path: str | Path, error: type[Exception]) -> dict[str, Any]:
    """An administrator's texts file as TOML, read within MAX_TEXTS_BYTES;
    each way it cannot be read an `error` naming the file (and the line)."""
    try:
        return load_toml(read_bounded(path, MAX_TEXTS_BYTES).decode("utf-8"))
    except Refused as exc:
        raise error(f"{path}: {exc.text()}") from None
    except UnicodeDecodeError:
        raise error(f"{path}: cannot be read as TOML: not UTF-8 text") from None
    except BadToml as exc:
        raise error(f"{path}: cannot be read as TOML: {exc.text()}") from None


def placeholders(text: str) -> set[str]:
    """The placeholders of a text ("{eligibility_date}" -> "eligibility_date")."""
    return {f for _, f, _, _ in string.Formatter().parse(text) if f}


def check_shape(given: Any, shipped: Any, where: str, problems: list[str]) -> None:
    """`given` must have the shape of `shipped`: the same keys, a text for a
    text, a list of texts for a list; each text with known placeholders.
    Each problem is added to `problems`, after `where` ("" at the top)."""
    if isinstance(shipped, dict):
        if not isinstance(given, dict):
            problems.append(f"{where}: must be a table of keys")
            return
        for key in shipped:
            if key not in given:
                problems.append(f"{where}.{key}: missing".lstrip("."))
        for key in given:
            if key not in shipped:
                problems.append(f"{where}.{key}: unknown key".lstrip("."))
        for key in shipped:
            if key in given:
                check_shape(given[key], shipped[key], f"{where}.{key}".lstrip("."), problems)
        return
    if isinstance(shipped, list):
        if not isinstance(given, list) or not all(isinstance(x, str) for x in given):
            problems.append(f"{where}: must be a list of texts")
            return
        allowed = set().union(*(placeholders(x) for x in shipped))
        for i, text in enumerate(given):
            _check_text(text, allowed, f"{where}[{i}]", problems)
        return
    if not isinstance(given, str):
        problems.append(f"{where}: must be a text")
        return
    _check_text(given, placeholders(shipped), where, problems)


def _check_text(text: str, allowed: set[str], where: str, problems: list[str]) -> None:
    try:
        used = placeholders(text)
    except ValueError as exc:
        problems.append(f"{where}: {exc} (write {{{{ and }}}} for a brace)")
        return
    unknown = sorted(used - allowed)
    if unknown:
        known = ", ".join("{" + n + "}" for n in sorted(allowed)) or "none"
        problems.append(f"{where}: unknown placeholder {', '.join('{' + n + '}' for n in unknown)}"
                        f" (this text may use: {known})")


__all__ = ["MAX_TEXTS_BYTES", "check_shape", "placeholders", "read_texts"]
