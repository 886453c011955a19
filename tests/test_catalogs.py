"""The message catalogs: every code the engine or validation can produce has
a message in Spanish and in English, and the two catalogs have the same keys."""

import re

import pytest

from diferida.fields import FIELD_NAMES
from diferida.i18n import LANGS, catalog, check_lang
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


# ---- a language is a folder of catalogs ---------------------------------

def _files(lang):
    from importlib import resources

    folder = resources.files("diferida") / "i18n" / lang
    return sorted(f.name for f in folder.iterdir() if f.name.endswith(".toml"))


def test_every_language_is_a_folder_with_the_same_files():
    assert LANGS[0] == "es" and set(LANGS) >= {"es", "en"}
    assert all(_files(lang) == _files("es") for lang in LANGS)
    # the web page's texts too, in the language's own folder
    assert all(_files(f"{lang}/web") == _files("es/web") for lang in LANGS)
    assert {"glossary.toml", "labels.toml", "next_steps.toml", "scenarios.toml",
            "workbench.toml"} <= set(_files("es/web"))
    assert {"core.toml", "batch.toml", "cli.toml", "service.toml"} <= set(_files("es"))


@pytest.mark.parametrize("lang", LANGS)
def test_every_key_of_every_catalog_exists_in_every_language(lang):
    assert _shared_keys(lang) == _shared_keys("es")


@pytest.mark.parametrize("lang", LANGS)
def test_the_batch_and_service_messages_come_from_the_catalogs(lang):
    from diferida.batch.errors import FileProblem
    from diferida.batch.messages import summary_text
    from diferida.service import messages

    c = catalog(lang)
    problem = FileProblem("output_exists", file="x.csv")
    assert problem.code == "output_exists"
    assert problem.text(lang) == c["batch_problems"]["output_exists"].format(file="x.csv")
    assert summary_text(lang, "progress") == c["batch_summary"]["progress"]
    assert messages.text(lang, "server_error") == c["service"]["server_error"]


def test_a_language_folder_added_is_a_language(tmp_path, monkeypatch):
    # the folder is all it takes: the catalogs are read from it, merged
    import importlib

    import diferida.i18n as i18n

    fake = tmp_path / "i18n"
    for lang in ("es", "en", "fr"):
        (fake / lang).mkdir(parents=True)
        for name in _files("es"):
            src = importlib.resources.files("diferida") / "i18n" / ("en" if lang == "fr" else lang)
            (fake / lang / name).write_text((src / name).read_text("utf-8"), "utf-8")
    monkeypatch.setattr(i18n.resources, "files", lambda _pkg: tmp_path)
    fresh = importlib.reload(i18n)
    try:
        assert fresh.LANGS == ("es", "en", "fr")
        assert fresh.catalog("fr")["service"]["server_error"]
    finally:
        monkeypatch.undo()
        importlib.reload(i18n)


def test_a_language_s_catalog_is_read_once_and_every_language_checked_in_one_place():
    """catalog() reads a language's TOML files once (every message of every
    row asks for it: read again each time, the fast tier takes minutes, not
    seconds); an unknown language is refused by the one check, naming the
    option when one is given."""
    assert catalog("en") is catalog("en")
    assert check_lang("es") == "es"
    with pytest.raises(ValueError, match="unknown language 'fr'; use one of es, en"):
        catalog("fr")
    with pytest.raises(KeyError, match="--lang: unknown language 'fr'"):
        check_lang("fr", KeyError, "--lang")


def test_every_warning_has_the_function_that_writes_its_finding():
    from diferida.explain import _WARNING_FINDINGS

    assert set(_WARNING_FINDINGS) == set(WARNINGS)
