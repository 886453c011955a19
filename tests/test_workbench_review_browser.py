"""Check, then approve, and the auditor's words, in a real browser
(Debian's chromium through Playwright) against the application under
uvicorn on a throw-away SQLite store: a supervisor on their own case is
told why and shown no button; another supervisor reviews the case page's
facts, goes to "Revise y confirme", is refused without the note the
warnings ask for, writes it and approves; the auditor filters the trail by
a list of actions, asks for the reads, and reads the chains' check in the
page's language. Every new state is checked with axe-core (WCAG 2.1 A and
AA) at 1280 and 375 px, in Spanish with JavaScript and in English
without; nothing overflows at 320 px."""

from __future__ import annotations

import pytest

from diferida.service import workflow

from .axe_helpers import axe_violations, context_without_page_script, describe
from .conftest import serving
from .test_workbench_review import CHECKED, _profiles
from .workbench_helpers import APPLICATION, PASSWORDS, add_users

WIDTHS = {"1280": {"width": 1280, "height": 900}, "375": {"width": 375, "height": 740}}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The application under uvicorn; its store with the tests' users."""
    from diferida.server import create_app
    from diferida.service.settings import Settings

    db = tmp_path_factory.mktemp("review-browser") / "wb.db"
    app = create_app(Settings(database_url=f"sqlite:///{db}", rate_limit_public="off"))
    with serving(app) as url:
        add_users(app.state.store)
        _profiles(app.state.store)
        yield url, app.state.store


def _page(browser, base: str, name: str, lang: str, js: bool, errors: list[str]):
    options = {"base_url": base, "viewport": WIDTHS["1280"]}
    context = (browser.new_context(**options) if js
               else context_without_page_script(browser, **options))
    page = context.new_page()
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    page.goto(f"/analista/entrar?lang={lang}")
    page.fill("#f-name", name)
    page.fill("#f-password", PASSWORDS[name])
    page.click("form.wb-signin button[type=submit]")
    page.wait_for_selector("#list-title")
    return page


def _axe(page, lang: str, state: str) -> None:
    assert page.get_attribute("html", "lang") == lang
    for width, size in WIDTHS.items():
        page.set_viewport_size(size)
        found = axe_violations(page)
        assert found == [], f"{state} ({lang}) at {width}px:\n" + describe(found)
    page.set_viewport_size(WIDTHS["1280"])


def _no_overflow(page, state: str) -> None:
    """Nothing wider than the window at 320 and 375 px (the hashes wrap)."""
    for width in (320, 375):
        page.set_viewport_size({"width": width, "height": 740})
        wide = page.evaluate("""() => {
            const w = document.documentElement.clientWidth;
            const out = [];
            for (const e of document.querySelectorAll('main *')) {
                if (e.closest('.wb-scroll')) continue;  // a table scrolls in its own region
                const r = e.getBoundingClientRect();
                if (r.right > w + 1) out.push(e.tagName + '#' + e.id + '.' + e.className);
            }
            return [document.documentElement.scrollWidth - w, out.slice(0, 5)];
        }""")
        assert wide[0] <= 0 and wide[1] == [], (state, width, wide)
    page.set_viewport_size(WIDTHS["1280"])


def _user(store, name):
    return store.sign_in_record(name)[0]


@pytest.mark.slow
@pytest.mark.parametrize("lang, js", [("es", True), ("en", False)], ids=["es-js", "en-nojs"])
def test_a_supervisor_is_told_why_another_reviews_and_confirms(browser, site, lang, js):
    base, store = site
    suffix = f"{lang}-{int(js)}"
    errors: list[str] = []
    # a case sol prepared and submitted, and one ana submitted with its check noted
    own = workflow.open_draft(store, _user(store, "sol"),
                              {**APPLICATION, "participant_id": f"R-own-{suffix}"}, lang=lang)
    workflow.submit(store, _user(store, "sol"), own.case_id)
    checked = workflow.open_draft(store, _user(store, "ana"),
                                  {**CHECKED, "participant_id": f"R-chk-{suffix}"}, lang=lang)
    workflow.submit(store, _user(store, "ana"), checked.case_id, lang=lang,
                    acknowledgement="Certificación de servicios revisada hasta 2013")
    q = "" if lang == "es" else "?lang=en"
    # --- the supervisor on their own case: why, and no button ------------------------
    sol = _page(browser, base, "sol", lang, js, errors)
    sol.goto(f"/analista/casos/{own.case_id}{q}")
    sol.wait_for_selector("#own-case")
    assert sol.locator("#approve").count() == 0
    assert sol.locator("#f-return-reason").count() == 0
    why = sol.inner_text("#own-case")
    assert ("escribió la versión 1" if lang == "es" else "wrote version 1") in why
    assert sol.locator("#relied-facts dd").count() >= 8  # the facts, in words
    _axe(sol, lang, "own-case")
    # --- another supervisor: the facts, then "Revise y confirme" ---------------------
    sam = _page(browser, base, "sam", lang, js, errors)
    sam.goto(f"/analista/casos/{checked.case_id}{q}")
    sam.wait_for_selector("#relied-facts")
    sam.click("#approve")
    sam.wait_for_selector("#confirm-approve")
    assert ("Revise y confirme" if lang == "es" else "Review and confirm") in sam.inner_text("h1")
    assert sam.locator("#confirm-decision dd").count() >= 4
    assert sam.locator("#confirm-facts dd").count() >= 8
    assert "2013" in sam.inner_text("#acknowledgements")  # the analyst's note
    _axe(sam, lang, "confirm")
    _no_overflow(sam, "confirm")
    # without the note: refused, said by the field, still to confirm
    sam.click("#confirm-approve")
    sam.wait_for_selector("#e-acknowledgement")
    assert sam.locator("#f-acknowledgement").get_attribute("aria-invalid") == "true"
    _axe(sam, lang, "confirm-errors")
    sam.fill("#f-acknowledgement", "Revisé la certificación y la nota de la analista")
    sam.click("#confirm-approve")
    sam.wait_for_selector("#letter-pdf")
    assert sam.get_attribute("#case-state", "data-state") == "approved"
    assert sam.locator("#acknowledgements li").count() == 2
    versions = sam.inner_text(".wb-versions")
    assert ("aprobada por Samuel Ortiz Vega" if lang == "es"
            else "approved by Samuel Ortiz Vega") in versions
    _axe(sam, lang, "approved")
    _no_overflow(sam, "approved")
    for p in (sol, sam):
        p.context.close()
    assert errors == [], errors


@pytest.mark.slow
@pytest.mark.parametrize("lang, js", [("es", True), ("en", False)], ids=["es-js", "en-nojs"])
def test_the_auditor_filters_by_a_list_and_reads_the_check_in_words(browser, site, lang, js):
    base, store = site
    errors: list[str] = []
    v = workflow.open_draft(store, _user(store, "ana"),
                            {**APPLICATION, "participant_id": f"R-aud-{lang}-{int(js)}"},
                            lang=lang)
    for _ in range(3):
        workflow.view(store, _user(store, "ana"), v.case_id)  # reads
    aud = _page(browser, base, "aud", lang, js, errors)
    tabs = aud.locator(".wb-tabs a").all_inner_texts()
    assert len(tabs) == 4  # the auditor's tabs only: issued, awaiting, trail, exports
    aud.click("a[href^='/analista/auditoria']")
    aud.wait_for_selector("#audit-events")
    aud.click("#verify-now")
    aud.wait_for_selector("#verify-result")
    chains = aud.inner_text("#verify-chains")
    assert ("cadena íntegra" if lang == "es" else "chain intact") in chains
    if lang == "es":
        assert "chain intact" not in chains
    assert aud.locator("#reads-folded").count() == 1
    assert ("Caso consultado" if lang == "es" else "Case read") \
        not in aud.inner_text("#audit-events")
    _axe(aud, lang, "audit")
    _no_overflow(aud, "audit")
    # the action filter is a list of events in words
    aud.select_option("#f-accion", "workflow.open")
    aud.click("form.wb-filters button[type=submit]")
    aud.wait_for_selector("#audit-events")
    rows = aud.locator("#audit-events tbody tr").all_inner_texts()
    assert rows and all(("Caso abierto" if lang == "es" else "Case opened") in r for r in rows)
    assert aud.locator("#verify-chains").count() == 1  # the check still shown
    # the reads, asked for
    aud.select_option("#f-accion", "")
    aud.check("#f-consultas")
    aud.click("form.wb-filters button[type=submit]")
    aud.wait_for_selector("#audit-events")
    assert ("Caso consultado" if lang == "es" else "Case read") \
        in aud.inner_text("#audit-events")
    assert aud.locator("#reads-folded").count() == 0
    _axe(aud, lang, "audit-reads")
    aud.context.close()
    assert errors == [], errors
