"""The official determination letter: the document a supervisor signs.

`letter_html(facts)` writes one stored case version as a letter (one HTML
document with its print CSS); `letter_pdf(facts)` renders the same letter to
PDF with WeasyPrint. Until the version is approved (`approved_by` is None)
every page carries "BORRADOR — sin validez" ("DRAFT — not valid") in the
page's top margin (a CSS margin box, which WeasyPrint and browsers repeat on
each printed page), and the first page says why.

What the letter says and where each part comes from: docs/letter.md.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from functools import cache
from importlib import resources
from typing import Any

from ..i18n import catalog
from .texts import LetterTextsError, check_letter_texts
from .view import AST, LetterError, view

__all__ = ["AST", "LetterError", "LetterFacts", "LetterTextsError", "check_letter_texts",
           "letter_html", "letter_pdf", "style_source"]


@dataclass(frozen=True, kw_only=True)
class LetterFacts:
    """One case version, and what the letter needs beside its determination."""

    case_id: int                 # the case number printed on the letter
    version: int
    lang: str                    # "es" | "en"
    inputs: Mapping[str, Any]    # the rules §1 fields as stored
    result: Mapping[str, Any]    # the stored determination (Determination.to_dict())
    as_of: date
    rules_version: str
    prepared_by: str             # the full name the signature block prints
    prepared_at: datetime        # timezone-aware; printed in Puerto Rico time (AST, UTC-4)
    prepared_title: str | None = None      # their title (required once approved)
    addressee_name: str | None = None
    addressee_address: str | None = None   # lines separated by "\n"
    application_date: date | None = None
    approved_by: str | None = None
    approved_at: datetime | None = None
    approved_title: str | None = None      # the approver's title (required with approved_by)
    corrects_version: int | None = None    # a correction: the version it corrects ...
    correction_reason: str | None = None   # ... and why
    # the notes saying the warnings that ask for a check were checked:
    # mappings with by, role, at (aware), warnings (codes) and note
    acknowledgements: tuple[Mapping[str, Any], ...] = ()


_FILES = resources.files("diferida") / "letter"


@cache
def _template() -> Any:
    from jinja2 import Environment, StrictUndefined

    env = Environment(autoescape=True, undefined=StrictUndefined, trim_blocks=True,
                      lstrip_blocks=True)
    return env.from_string((_FILES / "letter.html").read_text("utf-8"))


def _css_string(text: str) -> str:
    """A text as a CSS string literal."""
    out = "".join(c if c.isalnum() or c in " .,:;—-·()" else f"\\{ord(c):x} " for c in text)
    return f'"{out}"'


def _css(lang: str, draft: bool, footer: str) -> str:
    L = catalog(lang)["letter"]
    margins = [
        f"@bottom-left {{ content: {_css_string(footer)}; font-size: 8.5pt; }}",
        (f"@bottom-right {{ content: {_css_string(L['page'] + ' ')} counter(page) "
         f"{_css_string(' ' + L['page_of'] + ' ')} counter(pages); font-size: 8.5pt; }}"),
    ]
    if draft:
        margins.append(f"@top-center {{ content: {_css_string(L['draft_mark'])}; "
                       "font-size: 11pt; font-weight: bold; color: #8a1c1c; }")
    page = "@page { size: letter; margin: 1.6cm 1.8cm 1.9cm 1.8cm; " + " ".join(margins) + " }"
    return page + "\n" + (_FILES / "letter.css").read_text("utf-8")


def _render(facts: LetterFacts, back: str | None = None) -> tuple[str, str]:
    v = view(facts)
    if back is not None:  # on screen only: the print CSS hides it, the PDF never has it
        v["back"] = {"href": back, "text": v["L"]["back"].format(number=facts.case_id)}
    css = _css(facts.lang, v["draft"], v["footer"])
    from markupsafe import Markup

    # the style block is the letter's own (catalog words go through _css_string)
    return _template().render(v=v, L=v["L"], css=Markup(css)), css


def letter_html(facts: LetterFacts, *, back: str | None = None) -> str:
    """The whole letter as one HTML document (print CSS); marked "BORRADOR —
    sin validez" ("DRAFT — not valid") on every page iff `approved_by` is None.
    `back`: the address of the case's page, a link shown on screen only.
    Raises `LetterError` (naming the field) for facts it cannot be written from."""
    return _render(facts, back)[0]


def style_source(html: str) -> str:
    """The Content-Security-Policy source that allows the letter's one
    inline style block and nothing else ("'sha256-…'")."""
    start = html.index("<style>") + len("<style>")
    css = html[start:html.index("</style>", start)]
    digest = hashlib.sha256(css.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"


def letter_pdf(facts: LetterFacts) -> bytes:
    """The same letter rendered to PDF with WeasyPrint: a tagged PDF, with no
    creation time in it, so the same facts give the same bytes."""
    from weasyprint import HTML

    html = letter_html(facts)
    # tagged (headings, tables, lists, the document's language) for screen readers
    return HTML(string=html, base_url=None).write_pdf(pdf_tags=True)
