"""Nothing typed is lost, in a real browser (Debian's chromium through
Playwright), walking the analyst's own steps; the server's side is in
test_workbench_kept.py.

The application runs under uvicorn with a short session (five minutes
without a request) on a clock the test moves; the page's own clock is
Playwright's (`context.clock`), moved by the same amount, so that no test
waits for anything but the page.

- An analyst types an application; two minutes before the end the warning
  opens (an alertdialog, focus on "Seguir trabajando"); Enter keeps the
  session going, focus goes back where it was, and the session lasts. While
  another tab keeps the session going, no warning.
- She types again and goes away: the session ends; she presses Save; the
  sign-in page says why; she signs in and is on the same form, every value
  as typed. Another analyst signing in with that page gets the queue.
- The header's language switch in the middle of an application keeps every
  value (with and without JavaScript).
- A refusal reached by a post (a return without its reason, 422 at
  `…/devolver`): the language link opens the case in English, not a JSON
  "method not allowed".
- At 375 px, "Ver la respuesta" comes back at the answer, in view, with
  focus on it (without JavaScript: in view).

axe-core (WCAG 2.1 A and AA): 0 violations on the warning and on the
sign-in page that says why, in Spanish and English, at 1280 and 375 px."""

from __future__ import annotations

import pytest

from diferida.web.workbench.session import Sessions

from .axe_helpers import axe_violations, context_without_page_script, describe
from .conftest import SHOTS, screenshot, serving
from .date_boxes import as_typed_on
from .workbench_helpers import PASSWORDS, add_users

IDLE = 300  # five minutes without a request; the warning two minutes before
START = 2_000_000_000.0
WIDTHS = {"1280": {"width": 1280, "height": 900}, "375": {"width": 375, "height": 740}}
KEPT_SHOTS = SHOTS / "workbench-kept"

pytestmark = pytest.mark.slow


class Clock:
    def __init__(self, start: float = START):
        self.now = start

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The application under uvicorn, its sessions on the test's clock."""
    from diferida.server import create_app
    from diferida.service.settings import Settings

    db = tmp_path_factory.mktemp("workbench-kept") / "wb.db"
    app = create_app(Settings(database_url=f"sqlite:///{db}", rate_limit_public="off",
                              rate_limit_auth_failures="off"))
    with serving(app) as url:
        add_users(app.state.store)
        app.state.clock = Clock()
        app.state.workbench_sessions = Sessions("the browser test's key", idle_seconds=IDLE,
                                                max_seconds=36000, clock=app.state.clock)
        yield app, url


class Office:
    """Browser contexts (one per person) whose page clocks follow the server's."""

    def __init__(self, browser, server, js: bool = True):
        self.browser, (self.app, self.base), self.js = browser, server, js
        self.contexts, self.errors = [], []

    def person(self, name: str, lang: str = "es", width: str = "1280"):
        options = {"base_url": self.base, "viewport": WIDTHS[width]}
        context = (self.browser.new_context(**options) if self.js
                   else context_without_page_script(self.browser, **options))
        if self.js:
            context.clock.install(time=self.app.state.clock.now)
        self.contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.goto(f"/analista/entrar?lang={lang}")
        sign_in(page, name)
        return page

    def later(self, seconds: float, *pages) -> None:
        """Time passes for the server and for each page."""
        self.app.state.clock.now += seconds
        for page in pages:
            if self.js:
                page.clock.fast_forward(int(seconds * 1000))

    def close(self) -> None:
        for context in self.contexts:
            context.close()


def sign_in(page, name: str) -> None:
    page.fill("#f-name", name)
    page.fill("#f-password", PASSWORDS[name])
    page.click("form.wb-signin button[type=submit]")


def axe(page, state: str, lang: str) -> None:
    assert page.get_attribute("html", "lang") == lang
    for width, size in WIDTHS.items():
        page.set_viewport_size(size)
        screenshot(page, KEPT_SHOTS / f"{state}-{lang}-{width}.png")
        found = axe_violations(page)
        assert found == [], f"{state} ({lang}) at {width}px:\n" + describe(found)
    page.set_viewport_size(WIDTHS["1280"])


# an application as an analyst types it, every kind of box
TYPED = {"participant_id": "K-0001", "name": "Carmen Rivera Ortiz", "address":
         "Calle Sol 12\nSan Juan, PR 00901", "birth_date-day": "10", "birth_date-month": "mayo",
         "birth_date-year": "1970", "entry_date-day": "1", "entry_date-month": "7",
         "entry_date-year": "1988", "separation_date-day": "30",
         "separation_date-month": "junio", "separation_date-year": "2010",
         "creditable_service_years": "22 años", "average_compensation": "$30,000.00",
         "group": "general", "refund_requested": "false", "application_date-day": "20",
         "application_date-month": "11", "application_date-year": "2026",
         "note": "Trae la certificación el lunes"}

FORM_VALUES = """() => Array.from(document.querySelectorAll('#application-form [name]'))
  .filter(e => ['INPUT', 'SELECT', 'TEXTAREA'].includes(e.tagName))
  .filter(e => e.type !== 'hidden' && e.type !== 'submit')
  .map(e => [e.name, e.value])"""


def fill(page, values: dict[str, str]) -> None:
    for name, value in values.items():
        control = page.locator(f"#application-form [name='{name}']")
        if control.evaluate("e => e.tagName") == "SELECT":
            control.select_option(value)
        else:
            control.fill(value)


def typed(page) -> dict[str, str]:
    return dict(page.evaluate(FORM_VALUES))


def _new_application(page, pid: str) -> dict[str, str]:
    page.click("a[href^='/analista/nuevo']")
    page.wait_for_selector("#application-form")
    # on the English page a date of two readings by its month's name, as an
    # English writer types it to be read one way (the month-first guard)
    fill(page, as_typed_on({**TYPED, "participant_id": pid},
                           page.get_attribute("html", "lang")))
    return typed(page)


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_warning_comes_before_the_end_and_keep_working_keeps_the_session(
        browser, server, lang):
    office = Office(browser, server)
    try:
        ana = office.person("ana", lang)
        ana.wait_for_selector("#list-title")
        before = _new_application(ana, f"K-warn-{lang}")
        ana.focus("#f-note")
        dialog = ana.locator("#session-warning")
        assert not dialog.is_visible()
        office.later(IDLE - 120 - 5, ana)
        assert not dialog.is_visible()  # not yet: two minutes before the end
        office.later(10, ana)
        dialog.wait_for(state="visible")
        assert dialog.get_attribute("role") == "alertdialog"
        text = ana.inner_text("#session-warning-text")
        assert ("2 minutos" if lang == "es" else "2 minutes") in text
        # one key to act: focus is on "keep working"
        assert ana.evaluate("document.activeElement.id") == "session-extend"
        axe(ana, "warning", lang)
        ana.keyboard.press("Enter")
        dialog.wait_for(state="hidden")
        assert ana.evaluate("document.activeElement.id") == "f-note"  # back where she was
        # extended: almost three minutes later (before the next warning), six
        # minutes after the page was loaded, the session still holds; without
        # the renewal it would have ended a minute ago
        office.later(170, ana)
        ana.click("#preview")
        ana.wait_for_selector("#answer .wb-headline")
        assert typed(ana) == before
    finally:
        office.close()
    assert office.errors == []


def test_no_warning_while_another_tab_keeps_the_session_going(browser, server):
    office = Office(browser, server)
    try:
        ana = office.person("ana")
        ana.wait_for_selector("#list-title")
        _new_application(ana, "K-tabs")
        other = ana.context.new_page()  # a second tab of the same browser
        office.later(IDLE - 150, ana)
        other.goto("/analista")  # the session renewed there
        other.wait_for_selector("#list-title")
        office.later(40, ana)  # this tab's own count says two minutes are left
        ana.wait_for_selector("#session-warning[data-asked='1']", state="attached")
        assert not ana.locator("#session-warning").is_visible()
        office.later(150, ana)  # two minutes before the end renewed by the other tab
        ana.locator("#session-warning").wait_for(state="visible")
        assert ana.get_attribute("#session-warning", "data-asked") == "2"
    finally:
        office.close()
    assert office.errors == []


def test_expired_then_save_signs_in_again_and_the_form_comes_back_whole(browser, server):
    office = Office(browser, server)
    try:
        ana = office.person("ana")
        ana.wait_for_selector("#list-title")
        before = _new_application(ana, "K-0002")
        office.later(IDLE + 30, ana)  # she went away: the warning, then the end
        ana.wait_for_selector("#session-close", state="visible")
        assert "terminó" in ana.inner_text("#session-warning-text")
        ana.click("#session-close")
        ana.click("#save")
        ana.wait_for_selector("#notice")
        notice = ana.inner_text("#notice")
        assert "Su sesión terminó por inactividad; lo escrito se conservó" in notice
        axe(ana, "signin-kept", "es")
        # the same page in English keeps what was kept
        ana.click("#lang-switch")
        ana.wait_for_selector("html[lang=en] #notice")
        assert "what you typed was kept" in ana.inner_text("#notice")
        axe(ana, "signin-kept", "en")
        sign_in(ana, "ana")
        ana.wait_for_selector("#restored")
        assert ana.locator("#list-title").count() == 0  # the form, not the queue
        assert typed(ana) == before
        ana.click("#save")
        # the form typed on the Spanish page is now on the English one, which
        # asks the entry date (1 / 7: July 1 or January 7) before saving it
        ana.wait_for_selector("#date-question")
        assert ana.locator("#case-state").count() == 0  # nothing saved
        ana.click("#date-question button[value='entry_date:1988-07-01']")
        ana.wait_for_selector("#answer .wb-headline")
        ana.click("#save")
        ana.wait_for_selector("#case-state")
        assert ana.get_attribute("#case-state", "data-state") == "draft"
    finally:
        office.close()
    assert office.errors == []


def test_another_analyst_signing_in_does_not_get_it(browser, server):
    office = Office(browser, server)
    try:
        ana = office.person("ana")
        ana.wait_for_selector("#list-title")
        _new_application(ana, "K-0003")
        office.later(IDLE + 30, ana)
        ana.click("#session-close")
        ana.click("#save")
        ana.wait_for_selector("#notice")
        # ana2 sits down at the same browser and signs in on that page
        sign_in(ana, "ana2")
        ana.wait_for_selector("#list-title")
        assert ana.locator("#restored").count() == 0
        body = ana.inner_text("body")
        assert "K-0003" not in body and "Carmen" not in body
    finally:
        office.close()


@pytest.mark.parametrize("js", [True, False], ids=["js", "nojs"])
def test_the_language_switch_in_the_middle_of_an_application_keeps_every_value(
        browser, server, js):
    office = Office(browser, server, js=js)
    try:
        ana = office.person("ana")
        ana.wait_for_selector("#list-title")
        before = _new_application(ana, f"K-lang-{int(js)}")
        ana.click("#lang-switch")
        ana.wait_for_selector("html[lang=en] #application-form")
        assert typed(ana) == before
        assert ana.locator("#error-summary").count() == 0
        ana.click("#lang-switch")  # and back
        ana.wait_for_selector("html[lang=es] #application-form")
        assert typed(ana) == before
    finally:
        office.close()
    assert office.errors == []


def test_a_refusal_reached_by_a_post_has_a_language_link_that_works(browser, server):
    office = Office(browser, server)
    try:
        ana = office.person("ana")
        ana.wait_for_selector("#list-title")
        _new_application(ana, "K-0005")
        ana.click("#save")
        ana.wait_for_selector("#submit")
        if ana.locator("#f-acknowledgement").count():  # warnings that ask for a check
            ana.fill("#f-acknowledgement", "Revisé la certificación de servicios")
        ana.click("#submit")
        ana.wait_for_selector("#done")
        case_url = ana.url.split("?")[0]
        sol = office.person("sol")
        sol.wait_for_selector("#list-title")
        sol.goto(case_url)
        # a return without its reason: refused, on the page reached by the post
        sol.wait_for_selector("#return")
        sol.click("#return")
        sol.wait_for_selector("#case-state")
        assert sol.url.endswith("/devolver")
        response = None
        with sol.expect_navigation() as nav:
            sol.click("#lang-switch")
        response = nav.value
        assert response.status == 200
        assert sol.get_attribute("html", "lang") == "en"
        assert "method_not_allowed" not in sol.content()
        assert sol.locator("#case-state").count() == 1
    finally:
        office.close()


@pytest.mark.parametrize("js", [True, False], ids=["js", "nojs"])
def test_at_375_px_the_answer_is_shown_where_the_analyst_looks(browser, server, js):
    office = Office(browser, server, js=js)
    try:
        ana = office.person("ana", width="375")
        ana.wait_for_selector("#list-title")
        _new_application(ana, f"K-375-{int(js)}")
        ana.click("#preview")
        ana.wait_for_selector("#answer .wb-headline")
        # the page scrolls to the answer once it has loaded (without JS: its
        # fragment); under load the element is there before the scroll is
        ana.wait_for_load_state("load")
        try:
            ana.wait_for_function("""() => document.getElementById('answer')
                                     .getBoundingClientRect().top < window.innerHeight / 2""",
                                  timeout=5_000)
        except Exception:  # noqa: BLE001 - the assert below says where it is
            pass
        box = ana.evaluate("""() => { const r = document.getElementById('answer')
                                        .getBoundingClientRect();
                                      return [r.top, window.innerHeight]; }""")
        assert -2 <= box[0] < box[1] / 2, box  # its top in the upper half of the view
        if js:
            assert ana.evaluate("document.activeElement.id") == "answer"
        # an error instead: the list of errors is where it lands
        fill(ana, {"average_compensation": "treinta"})
        ana.click("#preview")
        ana.wait_for_selector("#error-summary")
        top = ana.evaluate("document.getElementById('error-summary').getBoundingClientRect().top")
        assert -2 <= top < 740
        if js:
            assert ana.evaluate("document.activeElement.id") == "error-summary"
    finally:
        office.close()
    assert office.errors == []


NOT_DONE = {"es": "Su sesión terminó; lo escrito se conservó. No se hizo la acción: revise y "
                  "vuelva a enviarla.",
            "en": "Your session ended; what you typed was kept. The action was not done: "
                  "check it and send it again."}


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_return_reason_typed_before_the_end_comes_back_in_its_box(browser, server, lang):
    """A supervisor types why a case goes back; the session ends; she
    presses "Devolver"; she signs in: the case page, the reason in its box,
    a line saying it was kept and the case was not returned."""
    office = Office(browser, server)
    try:
        ana = office.person("ana")
        ana.wait_for_selector("#list-title")
        _new_application(ana, f"K-return-{lang}")
        ana.click("#save")
        ana.wait_for_selector("#submit")
        if ana.locator("#f-acknowledgement").count():  # warnings that ask for a check
            ana.fill("#f-acknowledgement", "Revisé la certificación de servicios")
        ana.click("#submit")
        ana.wait_for_selector("#done")
        case_url = ana.url.split("?")[0]
        sol = office.person("sol", lang)
        sol.wait_for_selector("#list-title")
        sol.goto(case_url + ("" if lang == "es" else "?lang=en"))
        reason = ("Falta la certificación de servicios posterior a 2013.\n"
                  "Pida al patrono la hoja «Historial» firmada.")
        sol.fill("#f-return-reason", reason)
        office.later(IDLE + 30, sol)  # she went away: the warning, then the end
        sol.wait_for_selector("#session-close", state="visible")
        sol.click("#session-close")
        sol.click("#return")
        sol.wait_for_selector("#notice")
        assert sol.locator("#notice").get_attribute("data-kept") == "yes"
        sign_in(sol, "sol")
        sol.wait_for_selector("#kept")
        assert sol.locator("#list-title").count() == 0  # the case, not the queue
        assert sol.inner_text("#kept p").startswith(NOT_DONE[lang])
        assert sol.input_value("#f-return-reason") == reason
        assert sol.get_attribute("#case-state", "data-state") == "submitted"  # not returned
        axe(sol, "case-kept-reason", lang)
        # she checks it and sends it again: now the case goes back
        sol.click("#return")
        sol.wait_for_selector("#done")
        assert sol.get_attribute("#case-state", "data-state") == "returned"
    finally:
        office.close()
    assert office.errors == []
