"""The whole life of a case in the workbench, in a real browser (Debian's
chromium through Playwright), with the real application under uvicorn on a
throw-away SQLite store: a supervisor signs in, opens a case from an
application (the engine's answer shown before saving), saves and submits
it, tries to approve their own case (refused, in words, on the page),
another supervisor approves it (the PDF is stored; its SHA-256 on the page,
in the timeline and of the downloaded bytes agree), a correction is made
and approved, and the auditor sees every event and the chains verified.

Walked twice: with JavaScript, in Spanish, and without JavaScript (forms
posted natively), in English. Every state met on the way is checked with
axe-core (WCAG 2.1 A and AA) at 1280 and 375 px in the same page load (the
viewport is resized). As in test_web_accessibility.py, "without JavaScript"
is the page whose only script, web.js, is served empty, so that axe (the
test's script) can run in the page itself: forms post natively, nothing is
fetched, and no page has an inline script or a <noscript> (each checked)."""

from __future__ import annotations

import hashlib
import re

import pytest

from .axe_helpers import SCRIPT_ONLY_PARTS, axe_violations, context_without_page_script, describe
from .conftest import SHOTS, screenshot, serving
from .date_boxes import in_boxes
from .workbench_helpers import PASSWORDS, add_users

WB_SHOTS = SHOTS / "workbench"
WIDTHS = {"1280": {"width": 1280, "height": 900}, "375": {"width": 375, "height": 740}}


@pytest.fixture(scope="module")
def wb_url(tmp_path_factory):
    """The application under uvicorn, its store holding the tests' users."""
    from diferida.server import create_app
    from diferida.service.settings import Settings

    db = tmp_path_factory.mktemp("workbench-browser") / "wb.db"
    app = create_app(Settings(database_url=f"sqlite:///{db}", rate_limit_public="off"))
    with serving(app) as url:
        add_users(app.state.store)
        yield url


class Walk:
    """One language, JavaScript on or off; a browser context per user."""

    def __init__(self, browser, base: str, lang: str, js: bool):
        self.browser, self.base, self.lang, self.js = browser, base, lang, js
        self.contexts = []
        self.errors: list[str] = []
        self.checked: list[str] = []
        self.fetched: list[str] = []

    def user(self, name: str):
        options = {"base_url": self.base, "viewport": WIDTHS["1280"], "accept_downloads": True}
        context = (self.browser.new_context(**options) if self.js
                   else context_without_page_script(self.browser, **options))
        self.contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        page.on("request", lambda r: self.fetched.append(r.url)
                if r.resource_type == "fetch" else None)
        page.goto(f"/analista/entrar?lang={self.lang}")
        if not self.checked:
            self.axe(page, "sign-in")
        page.fill("#f-name", name)
        page.fill("#f-password", PASSWORDS[name])
        page.click("form.wb-signin button[type=submit]")
        page.wait_for_selector("#list-title")
        return page

    def axe(self, page, state: str) -> None:
        """0 violations at both widths, in this one page load."""
        assert page.get_attribute("html", "lang") == self.lang
        mode = "js" if self.js else "nojs"
        if not self.js:
            assert self.fetched == [], "the page's script ran"
            assert page.evaluate(SCRIPT_ONLY_PARTS) == 0
        for width, size in WIDTHS.items():
            page.set_viewport_size(size)
            screenshot(page, WB_SHOTS / f"{state}-{self.lang}-{width}-{mode}.png",
                       full_page=True)
            found = axe_violations(page)
            assert found == [], f"{state} at {width}px:\n" + describe(found)
        page.set_viewport_size(WIDTHS["1280"])
        self.checked.append(state)

    def close(self) -> None:
        for context in self.contexts:
            context.close()


def _fill(page, values: dict[str, str]) -> None:
    # each date into its three boxes, as the analyst types it on the page's
    # language (tests/date_boxes.py)
    for name, value in in_boxes(values, page.get_attribute("html", "lang")).items():
        control = page.locator(f"form.wb-application [name='{name}']")
        if control.evaluate("e => e.tagName") == "SELECT":
            control.select_option(value)
        else:
            control.fill(value)


def _state(page) -> str:
    return page.get_attribute("#case-state", "data-state")


@pytest.mark.slow
@pytest.mark.parametrize("lang, js", [("es", True), ("en", False)], ids=["es-js", "en-nojs"])
def test_the_life_of_a_case_with_two_supervisors_and_an_auditor(browser, wb_url, lang, js):
    walk = Walk(browser, wb_url, lang, js)
    pid = f"B-{lang}-{int(js)}"
    try:
        # --- a supervisor prepares the case ---------------------------------------------
        sol = walk.user("sol")
        walk.axe(sol, "queue")
        sol.click("a[href^='/analista/nuevo']")
        sol.wait_for_selector("form.wb-application")
        # typed as people type them: the page reads them as the calculator does
        _fill(sol, {"participant_id": pid, "name": "Carmen Rivera Ortiz",
                    "address": "Calle Sol 12\nSan Juan, PR 00901",
                    "application_date": "2/11/26", "birth_date": "1970-05-10",
                    "entry_date": "1988-07-01", "separation_date": "2010-06-30",
                    "creditable_service_years": "22 años" if lang == "es" else "22 years",
                    "average_compensation": "", "group": "general",
                    "refund_requested": "false", "as_of": "29/11/2026"})
        sol.click("#preview")
        sol.wait_for_selector("#error-summary")
        # a missing amount, and a date's year of 2 digits: its box named
        assert sol.locator("#e-average_compensation").count() == 1
        assert sol.locator("#e-application_date").count() == 1
        assert sol.get_attribute("#f-application_date-year", "aria-invalid") == "true"
        assert sol.get_attribute("#f-application_date-day", "aria-invalid") is None
        assert sol.locator("#f-application_date-year").input_value() == "26"  # as typed
        assert sol.locator("#f-participant_id").input_value() == pid  # kept as typed
        walk.axe(sol, "application-errors")
        _fill(sol, {"average_compensation": "$30,000.00", "application_date": "20/11/2026"})
        sol.click("#preview")
        sol.wait_for_selector("#answer .wb-headline")
        assert sol.locator("#answer .wb-findings li").count() >= 3
        walk.axe(sol, "application-answer")
        sol.click("#save")
        sol.wait_for_selector("#case-state")
        assert _state(sol) == "draft"
        assert sol.locator("#done").count() == 1
        case_url = sol.url.split("?")[0]
        walk.axe(sol, "case-draft")
        # the draft letter, as the page links it (marked as a draft)
        sol.goto(sol.get_attribute("#letter-html", "href"))
        assert sol.locator("text=/BORRADOR|DRAFT/").count() >= 1
        walk.axe(sol, "letter-draft")
        sol.go_back()
        sol.wait_for_selector("#submit")
        sol.click("#submit")
        sol.wait_for_selector("#done")
        assert _state(sol) == "submitted"
        assert sol.locator("#own-case").count() == 1  # the page says why before trying
        walk.axe(sol, "case-submitted")
        # the maker-checker rule: the one who prepared it is offered no approval,
        # and the confirmation page, asked for, refuses them in words
        assert sol.locator("#approve").count() == 0
        sol.goto(case_url + "/aprobar" + ("?lang=en" if lang == "en" else ""))
        sol.wait_for_selector("#refusal")
        assert _state(sol) == "submitted"
        refusal = sol.inner_text("#refusal")
        assert len(refusal) > 20 and "own_case" not in refusal
        walk.axe(sol, "case-refused")

        # --- another supervisor approves: the letter is stored --------------------------
        sam = walk.user("sam")
        sam.fill("#f-participante", pid)
        sam.click("form.wb-search button[type=submit]")
        sam.wait_for_selector("#results-title")
        walk.axe(sam, "search-results")
        sam.locator("tr", has_text=pid).locator("a").first.click()
        sam.wait_for_selector("#case-state")
        assert sam.url.split("?")[0] == case_url
        sam.click("#approve")
        sam.wait_for_selector("#confirm-approve")  # "Revise y confirme" first
        walk.axe(sam, "confirm")
        sam.click("#confirm-approve")
        sam.wait_for_selector("#letter-pdf")
        assert _state(sam) == "approved"
        walk.axe(sam, "case-approved")
        sha = re.search(r"[0-9a-f]{64}", sam.inner_text("#letter-sha")).group(0)
        assert sha in sam.inner_text("#timeline")
        pdf = sam.context.request.get(sam.get_attribute("#letter-pdf", "href"))
        assert pdf.status == 200 and pdf.headers["content-type"] == "application/pdf"
        assert hashlib.sha256(pdf.body()).hexdigest() == sha

        # --- many drafts from a file: every rejected row named -------------------------
        sol.goto("/analista/nuevo" + ("?lang=en" if lang == "en" else ""))
        head = "participant_id,birth_date,entry_date,separation_date," \
               "creditable_service_years,average_compensation,group,refund_requested,name"
        good = f"{pid}-F,1970-05-10,1988-07-01,2010-06-30,22,30000.00,general,false,Ana"
        bad = f"{pid}-G,1970-02-30,1988-07-01,2010-06-30,22,30000.00,general,false,Luis"
        sol.set_input_files("#f-archivo", files=[{
            "name": "solicitudes.csv", "mimeType": "text/csv",
            "buffer": f"{head}\n{good}\n{bad}\n".encode()}])
        sol.click("#import")
        sol.wait_for_selector("#rejected-rows")
        assert sol.locator("#rejected-rows tbody tr").count() == 1
        assert f"{pid}-G" in sol.inner_text("#rejected-rows")
        walk.axe(sol, "import-result")

        # --- a correction, submitted and approved ---------------------------------------
        sol.goto(case_url + ("?lang=en" if lang == "en" else ""))
        sol.click("#correct")
        sol.wait_for_selector("#f-reason")
        assert sol.locator("#f-participant_id").input_value() == pid
        assert sol.locator("#f-reason").input_value() == ""
        walk.axe(sol, "correction-form")
        _fill(sol, {"average_compensation": "31000.00"})
        sol.click("#save")  # no reason: refused, said by the field
        sol.wait_for_selector("#e-reason")
        walk.axe(sol, "correction-errors")
        sol.fill("#f-reason", "Retribución promedio corregida según certificación")
        sol.click("#save")
        sol.wait_for_selector("#case-state")
        assert _state(sol) == "draft" and sol.locator("#corrects").count() == 1
        changes = sol.inner_text(".wb-changes")
        assert "31" in changes
        sol.click("#submit")
        sol.wait_for_selector("#done")
        corrected_url = sol.url.split("?")[0]
        # returned with a reason, corrected again, then approved
        sam.goto(corrected_url + ("?lang=en" if lang == "en" else ""))
        sam.fill("#f-return-reason", "Falta la certificación de la retribución")
        sam.click("#return")
        sam.wait_for_selector("#returned")
        assert _state(sam) == "returned"
        walk.axe(sam, "case-returned")
        sol.goto(corrected_url + ("?lang=en" if lang == "en" else ""))
        sol.click("#correct")
        sol.wait_for_selector("#f-reason")
        sol.fill("#f-reason", "Certificación de la retribución recibida")
        sol.click("#save")
        sol.wait_for_selector("#case-state")
        sol.click("#submit")
        sol.wait_for_selector("#done")
        corrected_url = sol.url.split("?")[0]
        sam.goto(corrected_url + ("?lang=en" if lang == "en" else ""))
        sam.click("#approve")
        sam.wait_for_selector("#confirm-approve")
        sam.click("#confirm-approve")
        sam.wait_for_selector("#letter-pdf")
        assert _state(sam) == "approved"
        assert sam.locator(".wb-versions li").count() == 3
        walk.axe(sam, "case-corrected-approved")

        # --- the auditor sees every event, and the chains verified ----------------------
        aud = walk.user("aud")
        aud.click("a[href^='/analista/auditoria']")
        # verified when asked, not on arrival: the last verification recorded, or none yet
        aud.wait_for_selector("#verify-none, #verify-last")
        assert aud.locator("#verify-result").count() == 0
        aud.click("#verify-now")
        aud.wait_for_selector("#verify-result")
        assert aud.get_attribute("#verify-result", "data-intact") == "yes"
        walk.axe(aud, "audit")
        aud.select_option("#f-accion", "workflow.approve")
        aud.click("form.wb-filters button[type=submit]")
        aud.wait_for_selector("#audit-events")
        rows = aud.locator("#audit-events tbody tr").all_inner_texts()
        done = "Hecho" if lang == "es" else "Done"
        # the two approvals, by the approver's full name (his profile's)
        assert sum(done in r and "Samuel Ortiz Cruz" in r for r in rows) >= 2
        for action in ("workflow.open", "workflow.submit", "workflow.correct"):
            aud.select_option("#f-accion", action)
            aud.click("form.wb-filters button[type=submit]")
            aud.wait_for_selector("#audit-events")
            assert aud.locator("#audit-events tbody tr").count() >= 1, action
        # a page the auditor's role may not use: the refusal, standing alone
        r = aud.goto("/analista/nuevo" + ("?lang=en" if lang == "en" else ""))
        assert r.status == 403 and aud.locator("#refusal").count() == 1
        walk.axe(aud, "forbidden")
    finally:
        walk.close()
    assert walk.errors == [], walk.errors
    assert len(walk.checked) == 18
