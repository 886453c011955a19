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
from .conftest import need_part, serving
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


# ---- the workbench's draft letter page, on a phone -------------------------------

@pytest.fixture(scope="module")
def workbench(tmp_path_factory):
    """The whole site in this process (uvicorn in a thread), with the
    workbench's users and one draft case of ana's."""

    from diferida.server import create_app
    from diferida.service import workflow as wf
    from diferida.service.settings import Settings

    from .workbench_helpers import APPLICATION, add_users

    db = tmp_path_factory.mktemp("letter-page") / "wb.db"
    app = create_app(Settings(database_url=f"sqlite:///{db}", rate_limit_public="off"))
    with serving(app) as url:
        store = app.state.store
        add_users(store)
        ana = next(u for u in store.users() if u.name == "ana")
        case = wf.open_draft(store, ana, APPLICATION, lang="es", as_of=None).case_id
        yield url, case


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_draft_letter_page_fits_a_phone_is_accessible_and_leads_back_to_the_case(
        browser, workbench, lang):
    from .workbench_helpers import PASSWORDS

    base, case = workbench
    context = browser.new_context(base_url=base, viewport={"width": 375, "height": 740})
    page = context.new_page()
    try:
        page.goto(f"/analista/entrar?lang={lang}")
        page.fill("#f-name", "ana")
        page.fill("#f-password", PASSWORDS["ana"])
        page.click("form.wb-signin button[type=submit]")
        page.wait_for_selector("#list-title")
        suffix = "?lang=en" if lang == "en" else ""
        r = page.goto(f"/analista/casos/{case}/carta{suffix}")
        assert r is not None and r.status == 200
        # laid out for the phone's width, not a desktop's 980 px
        assert page.evaluate("window.innerWidth") == 375
        width = page.evaluate("[document.documentElement.scrollWidth, "
                              "document.documentElement.clientWidth]")
        assert width[0] <= width[1], width
        violations = axe_violations(page)
        assert not violations, [(v["id"], v["help"]) for v in violations]
        back = catalog(lang)["letter"]["back"].format(number=case)
        page.get_by_role("link", name=back).click()
        page.wait_for_url(f"**/analista/casos/{case}{suffix}")
        # printed, the link is not there
        page.go_back()
        page.emulate_media(media="print")
        assert not page.get_by_role("link", name=back).is_visible()
    finally:
        context.close()
