"""The law's words in a language, from the rules: citations as the language
writes them, rates, names of laws, cut-off dates and amounts; and the texts
outside a determination that name them (error messages, field labels).

Kept apart from the catalogs (`i18n`), which know no rules, and from the
explanation (`explain`), which uses these words."""

from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache
from typing import Any

from .i18n import Keep, catalog, fmt_date, value_text
from .money import format_money
from .rules import Rules, load_rules


@lru_cache(maxsize=4096)
def cite(citation: str, lang: str) -> str:
    """A citation as the language writes it ("Regla 19.1(a)" -> "Rule 19.1(a)")."""
    words = catalog(lang).get("citation_words", {})
    if not words:
        return citation
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, words)) + r")\b")
    return pattern.sub(lambda m: words[m.group(1)], citation)


def pct(rate: Decimal) -> str:
    return f"{(rate * 100).normalize():f}%"


def law_words(rules: Rules, lang: str) -> dict[str, str]:
    """The law's words the texts use, from the rules: names of laws, rates,
    amounts and cut-off dates (computed once per rules version and language:
    the version is a hash of the rules' content)."""
    key = (rules.version, lang)
    if key not in _LAW_WORDS:
        if len(_LAW_WORDS) > 64:
            _LAW_WORDS.clear()
        _LAW_WORDS[key] = _law_words(rules, lang)
    return dict(_LAW_WORDS[key])


_LAW_WORDS: dict[tuple[str, str], dict[str, str]] = {}


def _law_words(rules: Rules, lang: str) -> dict[str, str]:
    act3 = rules.act_3_2013
    return {
        "law_pre1990": cite(rules.laws["pre1990"], lang),
        "law_new": cite(rules.laws["new"], lang),
        "law_not_covered": cite(rules.laws["not_covered"], lang),
        "not_covered_from": fmt_date(rules.not_covered_from, lang),
        "hybrid_from": fmt_date(rules.hybrid_program_from, lang),
        "hybrid_law": cite(rules.hybrid_program_citation, lang),
        "new_after": fmt_date(rules.new_participant_after, lang),
        "minimum_citation": cite(rules.minimum_citation, lang),
        "minimum_rate": pct(rules.minimum_rate),
        "deferred_right_cutoff": fmt_date(rules.deferred_right_cutoff, lang),
        "act3": cite(act3.name, lang),
        "act3_frozen": fmt_date(act3.accruals_frozen_after, lang),
        "act3_minimum": format_money(act3.minimum_monthly),
        "act106": cite(rules.act_106_2017, lang),
        "statute_pre1990": rules.reading_19_4.statute_pre1990,
        "statute_new": rules.reading_19_4.statute_new,
        "reading_19_4": cite(rules.reading_19_4.citation, lang),
        "start_citation": cite(rules.citations["start"], lang),
    }


def default_words(lang: str) -> dict[str, str]:
    """The law's words of the default rules, for texts that name them outside
    a determination (field labels, errors)."""
    return law_words(load_rules(), lang)


def error_text(lang: str, code: str, field: str | None = None,
               words: dict[str, str] | None = None) -> str:
    """The message of an error code, its `{value}` left to fill. A message
    that varies with its field (gender and number in Spanish) takes the
    field's form."""
    c = catalog(lang)
    text = c["errors"][code]
    if isinstance(text, dict):
        text = text[c.get("field_gender", {}).get(field, "m")]
    if "{" in text.replace("{value}", ""):
        text = text.format_map(Keep(words if words is not None else default_words(lang)))
    return text


def error_message(lang: str, code: str, value: Any, field: str | None = None) -> str:
    return error_text(lang, code, field).replace("{value}", value_text(lang, code, value))


def field_label(lang: str, field: str, words: dict[str, str] | None = None) -> str:
    label = catalog(lang)["fields"].get(field, field)
    if "{" in label:
        label = label.format_map(Keep(words if words is not None else default_words(lang)))
    return label
