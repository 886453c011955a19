"""The message catalogs: every code the engine or validation can produce has
a message in Spanish and in English, and the two catalogs have the same keys."""

import pytest

from diferida.article19 import REASONS, STATUSES, WARNINGS
from diferida.fields import FIELD_NAMES
from diferida.i18n import LANGS, catalog
from diferida.validation import ERROR_CODES


def _keys(d, prefix=""):
    out = set()
    for k, v in d.items():
        out |= _keys(v, f"{prefix}{k}.") if isinstance(v, dict) else {prefix + k}
    return out


def test_spanish_and_english_catalogs_have_the_same_keys():
    assert _keys(catalog("es")) == _keys(catalog("en"))


@pytest.mark.parametrize("lang", LANGS)
def test_every_validation_error_code_has_a_message(lang):
    assert set(ERROR_CODES) <= set(catalog(lang)["errors"])


@pytest.mark.parametrize("lang", LANGS)
def test_every_status_reason_warning_and_field_has_words(lang):
    c = catalog(lang)
    assert set(STATUSES) <= set(c["status"]) and set(STATUSES) <= set(c["headline"])
    assert set(REASONS) <= set(c["reasons"])
    assert set(WARNINGS) <= set(c["warnings"])
    assert set(FIELD_NAMES) <= set(c["fields"])
