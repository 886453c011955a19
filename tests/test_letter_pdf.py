"""The letter as PDF (WeasyPrint), read back with pdftotext (Debian's
poppler-utils): the facts, the decision block, the warnings heading and the
signature block are there, page by page the draft mark, in Spanish and
English. Without pdftotext these tests skip saying why; under `make test`
(scripts/with-test-services) they fail instead."""

from __future__ import annotations

import hashlib
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
    # the signatures right after the decision, then the facts and the warnings
    assert L["warnings_title"] in text and d["warnings"]
    for needle in (L["prepared_by"], "Ana Analista", "Analista de Beneficios",
                   L["approved_by"], L["pending_approval"], "23:30", "AST, UTC−4"):
        assert needle in text, needle
    order = [text.index(x) for x in (L["decision_title"], L["prepared_by"], L["facts_title"],
                                     L["warnings_title"])]
    assert order == sorted(order)
    assert "/api/" not in text


@pytest.mark.parametrize("lang", ["es", "en"])
def test_every_page_of_a_draft_is_marked_and_numbered(drafts, lang, tmp_path):
    pages = pdf_pages(drafts[lang], tmp_path)
    assert 2 <= len(pages) <= 3, "the letter of example 4 takes two or three pages"
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
    signatures = text[text.index("Cordialmente,"):text.index("Datos en que se basa")]
    for needle in ("Aprobada por", "Sara Supervisora", "Supervisora de Beneficios",
                   "30 de junio de 2026, a las 22:05", "Preparada por", "Ana Analista",
                   "Analista de Beneficios", "1 de diciembre de 2026, a las 23:30"):
        assert needle in signatures, needle


def test_the_same_facts_give_the_same_pdf_byte_for_byte(drafts):
    """What is stored at approval can be rendered again and compared."""
    again = letter_pdf(facts(EXAMPLE_4, stored(EXAMPLE_4, "es"), "es"))
    assert again == drafts["es"]
    assert letter_pdf(facts(EXAMPLE_4, stored(EXAMPLE_4, "es"), "es", version=3)) != again


# ---- at most three pages, the signature with the decision ---------------------

def _personas() -> dict[str, tuple[dict[str, str], str]]:
    """Every rules §8 example (Spanish and English) and every persona of the
    calculator's stories (tests/test_web_stories.py), in the language each speaks."""
    from .test_web_stories import STORIES

    out = {f"spec-{n}-{lang}": (inputs, lang) for n, inputs in spec_examples().items()
           for lang in ("es", "en")}
    out.update({name: ({k: v for k, v in values.items() if v != ""}, lang)
                for name, (lang, _typed, _pick, values, _other) in STORIES.items()})
    return out


PERSONAS = _personas()


def page_count(pdf: bytes, tmp_path) -> int:
    exe = shutil.which("pdfinfo")
    need_part(exe is not None, "pdfinfo (Debian's poppler-utils)",
              "install Debian's package: apt-get install poppler-utils")
    path = tmp_path / "count.pdf"
    path.write_bytes(pdf)
    out = subprocess.run([exe, str(path)], capture_output=True, check=True,
                         timeout=120).stdout.decode("utf-8")
    return int(next(line.split()[1] for line in out.splitlines()
                    if line.startswith("Pages:")))


# 32 real PDFs (about 0.5 CPU-s each): make test, not the loop of make check
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PERSONAS))
def test_every_letter_is_at_most_three_pages_and_signed_by_the_page_after_the_decision(
        name, tmp_path):
    """An approved letter, and its draft (which carries the draft notice),
    corrected (which says so) and with the checks acknowledged: never more
    than three pages; the signatures on the page of the decision or the next."""
    inputs, lang = PERSONAS[name]
    result = stored(inputs, lang)
    L = catalog(lang)["letter"]
    checked = ({"by": "Ana Analista", "role": "analyst", "at": APPROVED_AT,
                "warnings": ["service_exceeds_span"], "note": "Certificado visto"},
               {"by": "Sara Supervisora", "role": "supervisor", "at": APPROVED_AT,
                "warnings": ["service_exceeds_span"], "note": "Revisado"})
    for more in ({"approved_by": "Sara Supervisora", "approved_at": APPROVED_AT},
                 {"corrects_version": 1, "correction_reason": "años de servicio revisados",
                  "acknowledgements": checked}):
        pdf = letter_pdf(facts(inputs, result, lang, **more))
        assert page_count(pdf, tmp_path) <= 3, (name, more)
        pages = pdf_pages(pdf, tmp_path)
        decided = next(i for i, p in enumerate(pages) if L["decision_title"] in p)
        signed = next(i for i, p in enumerate(pages) if L["approved_by"] in p)
        assert decided == 0 and signed <= decided + 1, (name, decided, signed)


# ---- the whole life of a case, to the PDF issued ------------------------------

@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_case_from_its_application_to_the_issued_pdf_reads_as_a_letter(kind, lang, tmp_path):
    from datetime import date

    from diferida.service import workflow as wf
    from diferida.service.store import Store
    from diferida.service.testing import database_for_tests

    from .admin_texts import ADMIN
    from .workbench_helpers import SIGNERS, signer

    application = {**{k: v for k, v in spec_examples()[2].items()},
                   "name": "Carmen Rivera Ortiz", "letter_lang": lang,
                   "address": "Calle Sol 12\nSan Juan, PR 00901",
                   "application_date": "2026-10-01"}
    with database_for_tests(kind, tmp_path) as url:
        store = Store(url)
        try:
            store.upgrade()
            ana = store.add_user("ana", "analyst", **signer("ana"))[0]
            sofia = store.add_user("sofia", "supervisor", **signer("sofia"))[0]
            draft = wf.open_draft(store, ana, application, lang=lang, as_of=date(2026, 11, 29))
            wf.submit(store, ana, draft.case_id, lang=lang)
            issued = wf.approve(store, sofia, draft.case_id)
            pdf = wf.letter(store, sofia, draft.case_id)
            d = issued.result
        finally:
            store.dispose()
    assert hashlib.sha256(pdf).hexdigest() == issued.letter_sha256
    pages = pdf_pages(pdf, tmp_path)
    assert len(pages) <= 3
    text = " ".join(pages)
    L = catalog(lang)["letter"]
    body = text[:text.index(L["reference"].split(":")[0])]
    for needle in (
            L["salutation"].format(name="Carmen Rivera Ortiz"),     # salutation
            "Calle Sol 12", "San Juan, PR 00901",                     # addressee
            L["facts_title"], {"es": "15 de marzo de 1965",
                               "en": "March 15, 1965"}[lang],        # facts
            L["decision_title"], catalog(lang)["status"][d["status"]],  # decision
            f"${Decimal(d['monthly_amount']):,.2f}",
            L["warnings_title"],                                      # warnings heading
            ADMIN[lang]["reconsideration"],                           # the deadline
            ADMIN[lang]["telephone"], ADMIN[lang]["hours"],
            *SIGNERS["ana"], *SIGNERS["sofia"]):                    # names and titles
        assert needle in body, needle
    for needle in ("article19@", "article19-strict", " Vía ", "· Dato", "sofia,", " ana ",
                   "Hay una duda", "There is a doubt"):
        assert needle not in body, needle
    assert d["rules_version"].rpartition("@")[2] in text[text.index(L["reference"].split(":")[0]):]
