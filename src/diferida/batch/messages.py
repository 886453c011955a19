"""Messages of the batch layer: what is wrong with a file, and the summary of
a run, from the catalogs (i18n/<lang>/batch.toml; the messages for bad values
in a row are the core's)."""

from __future__ import annotations

from typing import Any

from ..i18n import LANGS, catalog


def _lang(lang: str) -> str:
    return lang if lang in LANGS else "en"


def problem_text(code: str, lang: str, params: dict[str, Any]) -> str:
    key = f"{code}.{params['variant']}" if "variant" in params else code
    # a value that words itself (bounded.Refused, BadToml) is said in `lang`
    shown = {k: v.text(_lang(lang)) if hasattr(v, "text") and not isinstance(v, str) else v
             for k, v in params.items()}
    return catalog(_lang(lang))["batch_problems"][key].format(**shown)


def summary_text(lang: str, key: str, **params: Any) -> str:
    return catalog(_lang(lang))["batch_summary"][key].format(**params)


def problem_codes() -> frozenset[str]:
    """The codes of the problems a file can have (the English catalog's)."""
    return frozenset(catalog("en")["batch_problems"])
