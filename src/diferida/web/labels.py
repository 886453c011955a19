"""The page's own texts (labels_es.toml, labels_en.toml). Everything the
computation says — headlines, explanations, input errors — comes from the
core catalog instead, so the page never words a rule differently."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import Any

from diferida.i18n import DEFAULT_LANG, LANGS

__all__ = ["DEFAULT_LANG", "LANGS", "choose_lang", "labels", "plural"]


@cache
def labels(lang: str) -> dict[str, Any]:
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}; use one of {', '.join(LANGS)}")
    text = (resources.files("diferida.web") / f"labels_{lang}.toml").read_text("utf-8")
    return tomllib.loads(text)


def choose_lang(value: str | None) -> str:
    """The page language asked for; Spanish unless English is asked for by name.
    (A language is how the page speaks, not participant data.)"""
    return value if value in LANGS else DEFAULT_LANG


def plural(forms: list[str], n: int) -> str:
    return forms[0 if n == 1 else 1].format(n=n)
