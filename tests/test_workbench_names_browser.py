"""People by their names, events in words and the pages that say what to
do, in a real browser (Debian's chromium through Playwright) against the
application under uvicorn on a throw-away SQLite store: the auditor's
tabs, the issued case's approver by full name, the trail in the page's
words, the exports page; a draft without its addressee, its "Enviar" not
offered and why; "Revise y confirme" with a "Cambiar" per fact, followed
without a script to the return's reason; the rules sets by their titles at
375 px and a date's three boxes on one line at 320 px. Every new state is
checked with axe-core (WCAG 2.1 A and AA) at 1280 and 375 px, in Spanish
with JavaScript and in English without."""

from __future__ import annotations

import pytest

from diferida.service import workflow

from .axe_helpers import axe_violations, context_without_page_script, describe
from .conftest import serving
from .workbench_helpers import APPLICATION, PASSWORDS, add_users

WIDTHS = {"1280": {"width": 1280, "height": 900}, "375": {"width": 375, "height": 740}}
SOL = "Sol Marrero Vega"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The application under uvicorn; its store with the tests' users and
    a case issued (ana prepared it, sol approved it)."""
    from diferida.server import create_app
    from diferida.service.settings import Settings

    db = tmp_path_factory.mktemp("names-browser") / "wb.db"
    app = create_app(Settings(database_url=f"sqlite:///{db}", rate_limit_public="off"))
    with serving(app) as url:
        store = app.state.store
        add_users(store)
        issued = workflow.open_draft(store, _user(store, "ana"),
                                     {**APPLICATION, "participant_id": "N-issued"}, lang="es")
        workflow.submit(store, _user(store, "ana"), issued.case_id)
        workflow.approve(store, _user(store, "sol"), issued.case_id)
        yield url, store


def _user(store, name):
    return store.sign_in_record(name)[0]


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


def _focused(page, element_id: str, seconds: float = 10) -> str:
    """The id of the element with the focus once it is `element_id`, or
    after `seconds`: a fragment focuses its field once the page has scrolled
    there, later than the first paint on a busy machine. Asked from here, not
    with wait_for_function, whose polling evaluates a string inside the page,
    which the page's Content-Security-Policy (no 'unsafe-eval') refuses."""
    import time

    end = time.monotonic() + seconds
    while True:
        now = page.evaluate("document.activeElement ? document.activeElement.id : ''")
        if now == element_id or time.monotonic() > end:
            return now
        page.wait_for_timeout(50)


def _draft(store, pid: str, **changes: str) -> int:
    return workflow.open_draft(store, _user(store, "ana"),
                               {**APPLICATION, "participant_id": pid, **changes},
                               lang="es").case_id


@pytest.mark.parametrize("lang, js", [("es", True), ("en", False)], ids=["es-js", "en-nojs"])
def test_the_auditors_tabs_the_trail_in_words_and_a_draft_not_ready(browser, site, lang, js):
    base, store = site
    errors: list[str] = []
    q = "" if lang == "es" else "?lang=en"
    aud = _page(browser, base, "aud", lang, js, errors)
    # the auditor's tabs: what was issued (by whom: its approver, by full name),
    # what waits for a supervisor, the trail, the exports; none "awaiting my approval"
    tabs = aud.locator(".wb-tabs a").all_inner_texts()
    assert len(tabs) == 4 and not any("mi aprobación" in t or "my approval" in t for t in tabs)
    row = aud.locator("#list-title + p + .wb-scroll tr", has_text="N-issued").inner_text()
    assert row.rstrip().endswith(f"· {SOL}"), row
    _axe(aud, lang, "auditor-issued")
    aud.click(".wb-tabs a[href^='/analista/auditoria']:not([href*='exportar'])")
    aud.wait_for_selector("#audit-events")
    trail = aud.inner_text("#audit-events")
    for code in ("issued letter", "letter sha256", "{", '"user_id"'):
        assert code not in trail, code
    assert SOL in trail and ("Carta emitida; huella SHA-256" if lang == "es"
                             else "Letter issued; SHA-256 fingerprint") in trail
    _axe(aud, lang, "auditor-trail")
    aud.click(".wb-tabs a[href*='exportar']")
    aud.wait_for_selector("#exports")
    assert aud.locator("#exports a").count() == 6
    _axe(aud, lang, "auditor-exports")
    # a draft without its addressee: why, how to fix it, and "Enviar" not usable
    blocked = _draft(store, f"N-blocked-{lang}", name="", address="")
    ana = _page(browser, base, "ana", lang, js, errors)
    assert "Ana Rivera Colón" in ana.inner_text(".wb-signout")  # the header's name
    ana.goto(f"/analista/casos/{blocked}{q}")
    ana.wait_for_selector("#not-sendable")
    assert ana.locator("#submit").is_disabled()
    assert ana.locator("#not-sendable a.wb-fix").count() == 2
    _axe(ana, lang, "case-not-sendable")
    ana.click("#not-sendable a.wb-fix >> nth=0")
    ana.wait_for_selector("#f-name")
    # at the field to fill: the address's fragment focuses it once the page
    # has scrolled there (waited for, not read at the first paint)
    assert _focused(ana, "f-name") == "f-name"
    for p in (aud, ana):
        p.context.close()
    assert errors == [], errors


@pytest.mark.parametrize("lang, js", [("es", True), ("en", False)], ids=["es-js", "en-nojs"])
def test_change_a_fact_from_review_and_confirm_and_the_form_at_narrow_widths(
        browser, site, lang, js):
    base, store = site
    errors: list[str] = []
    q = "" if lang == "es" else "?lang=en"
    sent = _draft(store, f"N-sent-{lang}")
    workflow.submit(store, _user(store, "ana"), sent)
    sam = _page(browser, base, "sam", lang, js, errors)
    sam.goto(f"/analista/casos/{sent}/aprobar{q}")
    sam.wait_for_selector("#confirm-facts")
    facts = sam.locator("#confirm-facts > div").count()
    assert facts >= 8 and sam.locator("#confirm-facts a.wb-change").count() == facts
    _axe(sam, lang, "confirm-change")
    # "Cambiar" beside the birth date: the return's form, landed on at 375 px,
    # its reason naming the fact (a plain link: no script needed)
    sam.set_viewport_size(WIDTHS["375"])
    sam.click("#confirm-facts a.wb-change[data-field='birth_date']")
    sam.wait_for_selector("#f-return-reason")
    assert _focused(sam, "f-return-reason") == "f-return-reason"
    box = sam.locator("#f-return-reason").bounding_box()
    assert box is not None and 0 <= box["y"] < WIDTHS["375"]["height"], box
    label = "Fecha de nacimiento" if lang == "es" else "Birth date"
    assert label in sam.input_value("#f-return-reason")
    sam.set_viewport_size(WIDTHS["1280"])
    _axe(sam, lang, "case-change-return")
    # the application form: the rules sets by their titles, inside 375 px
    sam.goto(f"/analista/nuevo{q}")
    sam.wait_for_selector("form.wb-application")
    assert sam.locator("select#f-rules").count() == 0
    assert "Reglamento del Sistema de Retiro" in sam.inner_text("label[for='f-rules']")
    _axe(sam, lang, "application-rules")
    sam.set_viewport_size(WIDTHS["375"])
    rights = sam.evaluate("""() => [...document.querySelectorAll('input[name=rules] + label')]
        .map(l => l.getBoundingClientRect().right)""")
    assert rights and max(rights) <= 375 - 8, rights
    # a date's three boxes on one line at 320 px, a month's name still whole in its box
    sam.set_viewport_size({"width": 320, "height": 740})
    sam.fill("#f-birth_date-month", "septiembre")
    tops = sam.evaluate("""() => [...document.querySelectorAll('.date-boxes')].map(
        b => [...b.querySelectorAll('input')].map(
            i => Math.round(i.getBoundingClientRect().top)))""")
    assert tops and all(len(set(t)) == 1 and len(t) == 3 for t in tops), tops
    month = sam.locator("#f-birth_date-month")
    assert month.evaluate("i => i.scrollWidth <= i.clientWidth")
    assert sam.evaluate("document.documentElement.scrollWidth") <= 320
    sam.context.close()
    assert errors == [], errors
