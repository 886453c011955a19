"""The page's own texts (i18n/<lang>/web/labels.toml). Everything the
computation says — headlines, explanations, input errors — comes from the
core catalog instead, so the page never words a rule differently."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import Any

from diferida.i18n import DEFAULT_LANG, LANGS, Keep, check_lang
from diferida.rules import DEFAULT_RULES, load_rules
from diferida.words import law_words

__all__ = ["DEFAULT_LANG", "LANGS", "choose_lang", "labels", "next_lang", "plural"]


@cache
def _raw(lang: str) -> dict[str, Any]:
    check_lang(lang)
    text = (resources.files("diferida") / "i18n" / lang / "web" / "labels.toml").read_text("utf-8")
    return tomllib.loads(text)


def _fill(value: Any, words: Keep) -> Any:
    if isinstance(value, str):
        return value.format_map(words) if "{" in value else value
    if isinstance(value, dict):
        return {k: _fill(v, words) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, words) for v in value]
    return value


@cache
def labels(lang: str, rules: str = DEFAULT_RULES) -> dict[str, Any]:
    """The page's texts, with the law's words (dates, rates, names of laws,
    citations) taken from `rules`: a rules set that changes a number changes
    the page's words too. Placeholders of other values stay to be filled."""
    return _fill(_raw(lang), Keep(law_words(load_rules(rules), lang)))


def choose_lang(value: str | None) -> str:
    """The page language asked for; Spanish unless English is asked for by name.
    (A language is how the page speaks, not participant data.)"""
    return value if value in LANGS else DEFAULT_LANG


def plural(forms: list[str], n: int) -> str:
    return forms[0 if n == 1 else 1].format(n=n)


def next_lang(lang: str) -> str:
    """The language the page's switch offers: the next of LANGS, in turn (with
    two languages, the other one)."""
    return LANGS[(LANGS.index(lang) + 1) % len(LANGS)]
