"""The letter as the service serves it (GET /api/v1/cases/{id}/print), in
Debian's chromium: its one style block is allowed by the page's
Content-Security-Policy (so it prints as designed), axe-core finds no WCAG
2.1 AA violation, and printing it from the browser marks every page as a
draft, in Spanish and English."""

from __future__ import annotations

import shutil
import subprocess

import httpx
import pytest

from diferida.i18n import catalog
from diferida.service.store import Store
from diferida.service.testing import database_for_tests, running_server

from .axe_helpers import axe_violations
from .conftest import need_part
from .letter_helpers import spec_examples, words


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The service with one recorded case (rules §8 example 4, in Spanish) and an
    analyst's token."""
    folder = tmp_path_factory.mktemp("letter")
    with database_for_tests("sqlite", folder) as url:
        store = Store(url)
        store.upgrade()
        token = store.add_user("ana", "analyst")[1]
        with running_server(url, log_path=folder / "server.log") as base:
            body = {**spec_examples()[4], "refund_requested": False, "as_of": "2026-11-29",
                    "lang": "es"}
            r = httpx.post(f"{base}/api/v1/cases", json=body, timeout=60,
                           headers={"Authorization": f"Bearer {token}"})
            assert r.status_code == 201, r.text
            yield base, token, r.json()["id"]
        store.dispose()


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_served_letter_is_styled_accessible_and_marked_on_every_printed_page(
        browser, served, lang, tmp_path):
    base, token, case_id = served
    context = browser.new_context(extra_http_headers={"Authorization": f"Bearer {token}"})
    page = context.new_page()
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text)
            if "Content Security Policy" in m.text else None)
    try:
        r = page.goto(f"{base}/api/v1/cases/{case_id}/print?lang={lang}")
        assert r is not None and r.status == 200
        L = catalog(lang)["letter"]
        assert page.title().endswith(L["draft_mark"])
        # the style block applied: a heading's rule under it, the page's own
        assert page.eval_on_selector(
            "h2", "e => getComputedStyle(e).borderBottomStyle") == "solid"
        assert not refused, refused
        violations = axe_violations(page)
        assert not violations, [(v["id"], v["help"]) for v in violations]
        pdf = page.pdf(prefer_css_page_size=True)
    finally:
        context.close()
    exe = shutil.which("pdftotext")
    need_part(exe is not None, "pdftotext (Debian's poppler-utils)",
              "install Debian's package: apt-get install poppler-utils")
    path = tmp_path / "printed.pdf"
    path.write_bytes(pdf)
    text = subprocess.run([exe, "-enc", "UTF-8", str(path), "-"], capture_output=True,
                          check=True, timeout=120).stdout.decode("utf-8")
    pages = [words(p) for p in text.split("\f") if p.strip()]
    assert len(pages) >= 2
    assert all(L["draft_mark"] in p for p in pages)
