"""The message catalogs: every code the engine or validation can produce has
a message in Spanish and in English, and the two catalogs have the same keys."""

import re

import pytest

from diferida.fields import FIELD_NAMES
from diferida.i18n import LANGS, catalog
from diferida.outcomes import REASONS, STATUSES, WARNINGS
from diferida.validation import ERROR_CODES


def _keys(d, prefix=""):
    out = set()
    for k, v in d.items():
        out |= _keys(v, f"{prefix}{k}.") if isinstance(v, dict) else {prefix + k}
    return out


# grammar of one language only: Spanish agrees "obligatorio/a/os" with its
# field; English writes "Rule" for the regulation's "Regla"
OWN_GRAMMAR = ("field_gender.", "citation_words.")


def _shared_keys(lang):
    keys = {re.sub(r"^(errors\.missing)\..*$", r"\1", k) for k in _keys(catalog(lang))}
    return {k for k in keys if not k.startswith(OWN_GRAMMAR)}


def test_spanish_and_english_catalogs_have_the_same_keys():
    assert _shared_keys("es") == _shared_keys("en")


def test_every_field_has_a_gender_for_the_spanish_messages_that_agree_with_it():
    assert set(catalog("es")["field_gender"]) == set(FIELD_NAMES)
    assert set(catalog("es")["field_gender"].values()) <= set(catalog("es")["errors"]["missing"])


@pytest.mark.parametrize("lang", LANGS)
def test_every_validation_error_code_has_a_message(lang):
    assert set(ERROR_CODES) <= set(catalog(lang)["errors"])


@pytest.mark.parametrize("lang", LANGS)
def test_every_status_reason_warning_and_field_has_words(lang):
    c = catalog(lang)
    assert set(STATUSES) <= set(c["status"]) and set(STATUSES) <= set(c["headline"])
    assert set(REASONS) <= set(c["reasons"])
    for code in WARNINGS:  # a message per code, or one per tense of it
        assert any(k == code or k.startswith(code + "_") for k in c["warnings"]), code
    assert set(FIELD_NAMES) <= set(c["fields"])
