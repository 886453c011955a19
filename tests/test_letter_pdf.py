"""The letter as PDF (WeasyPrint), read back with pdftotext (Debian's
poppler-utils): the facts, the decision block, the warnings heading and the
signature block are there, page by page the draft mark, in Spanish and
English. Without pdftotext these tests skip saying why; under `make test`
(scripts/with-test-services) they fail instead."""

from __future__ import annotations

import shutil
import subprocess
from decimal import Decimal

import pytest

from diferida.i18n import catalog
from diferida.letter import letter_pdf

from .conftest import need_part
from .letter_helpers import APPROVED_AT, facts, spec_examples, stored, words

pytestmark = pytest.mark.pdf

EXAMPLE_4 = spec_examples()[4]  # a police officer, new participant: warnings and the 19.4 doubt


def pdf_pages(pdf: bytes, tmp_path) -> list[str]:
    """The text of each page, as pdftotext reads it."""
    exe = shutil.which("pdftotext")
    need_part(exe is not None, "pdftotext (Debian's poppler-utils)",
              "install Debian's package: apt-get install poppler-utils")
    path = tmp_path / "letter.pdf"
    path.write_bytes(pdf)
    out = subprocess.run([exe, "-enc", "UTF-8", str(path), "-"], capture_output=True,
                         check=True, timeout=120).stdout.decode("utf-8")
    pages = out.split("\f")
    return [words(p) for p in pages if p.strip()]


@pytest.fixture(scope="module")
def drafts():
    return {lang: letter_pdf(facts(EXAMPLE_4, stored(EXAMPLE_4, lang), lang))
            for lang in ("es", "en")}


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_pdf_has_the_facts_the_decision_block_the_warnings_and_the_signatures(
        drafts, lang, tmp_path):
    pdf = drafts[lang]
    assert pdf.startswith(b"%PDF-")
    text = " ".join(pdf_pages(pdf, tmp_path))
    L = catalog(lang)["letter"]
    d = stored(EXAMPLE_4, lang)
    # the facts relied on
    birth = {"es": "20 de junio de 1975", "en": "June 20, 1975"}[lang]
    for needle in (L["facts_title"], birth, "$36,000.00", catalog(lang)["groups"]["police"]):
        assert needle in text, needle
    # the decision block, its labels and values
    for needle in (L["decision_title"], L["status"], catalog(lang)["status"]["eligible"],
                   L["route"], L["eligibility_date"], L["annual"], L["monthly"],
                   f"${Decimal(d['annual_amount']):,.2f}",
                   f"${Decimal(d['monthly_amount']):,.2f}"):
        assert needle in text, needle
    # the warnings under their own heading, then the signatures
    assert L["warnings_title"] in text and d["warnings"]
    for needle in (L["signature_title"], L["prepared_by"], "Ana Analista", L["approved_by"],
                   L["pending_approval"], "23:30", "AST, UTC−4"):
        assert needle in text, needle
    order = [text.index(x) for x in (L["decision_title"], L["facts_title"],
                                     L["warnings_title"], L["signature_title"])]
    assert order == sorted(order)
    assert "/api/" not in text


@pytest.mark.parametrize("lang", ["es", "en"])
def test_every_page_of_a_draft_is_marked_and_numbered(drafts, lang, tmp_path):
    pages = pdf_pages(drafts[lang], tmp_path)
    assert len(pages) >= 2, "the letter of example 4 takes more than one page"
    L = catalog(lang)["letter"]
    for i, page in enumerate(pages, start=1):
        assert L["draft_mark"] in page, i
        assert f"{L['page']} {i} {L['page_of']} {len(pages)}" in page, i
        assert "Caso 4711 · versión 2" in page or "Case 4711 · version 2" in page


def test_an_approved_letter_has_no_draft_mark_on_any_page(tmp_path):
    pdf = letter_pdf(facts(EXAMPLE_4, stored(EXAMPLE_4, "es"), "es",
                           approved_by="Sara Supervisora", approved_at=APPROVED_AT))
    pages = pdf_pages(pdf, tmp_path)
    assert len(pages) >= 2
    assert not any("BORRADOR" in p for p in pages)
    text = " ".join(pages)
    assert "Aprobada por Sara Supervisora, el 30 de junio de 2026 a las 22:05" in text


def test_the_same_facts_give_the_same_pdf_byte_for_byte(drafts):
    """What is stored at approval can be rendered again and compared."""
    again = letter_pdf(facts(EXAMPLE_4, stored(EXAMPLE_4, "es"), "es"))
    assert again == drafts["es"]
    assert letter_pdf(facts(EXAMPLE_4, stored(EXAMPLE_4, "es"), "es", version=3)) != again
