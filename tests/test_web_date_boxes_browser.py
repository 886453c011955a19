"""Dates in three boxes in a real browser (Debian's chromium through
Playwright): the analyst types 03 / 07 / 1991 on the workbench's application
and a person types it on the public calculator, with JavaScript and without
(a context with `java_script_enabled=False`: forms posted natively). On the
Spanish pages nothing is asked back (the English calculator asks 03 / 07,
below); the answer is the engine's for the 3rd of July; a mistake
gets one message naming its box, the summary's link puts the cursor in that
box, and the boxes keep what was typed. axe-core finds nothing at 1280 and
375 px on the form in error (es and en); the calculator's states with the
boxes are in test_web_accessibility.py ("errors-date-boxes", "read-as-typed",
"asked-month-first"). On the English pages a date whose day and month could
each be the other is asked before any answer (the month-first guard): James
types 11 / 03 / 1963 on the calculator and on the workbench, is asked, and
chooses November 3.
"""

from __future__ import annotations

from datetime import date

import pytest

import diferida
from diferida.i18n import fmt_date
from diferida.money import format_money

from .axe_helpers import axe_violations, context_without_page_script, describe
from .date_boxes import in_boxes
from .test_workbench_browser import wb_url  # noqa: F401 (the workbench under uvicorn)
from .workbench_helpers import APPLICATION, PASSWORDS

WIDTHS = {"1280": {"width": 1280, "height": 900}, "375": {"width": 375, "height": 740}}
AS_OF = "2026-11-29"
FACTS = {"creditable_service_years": "22", "average_compensation": "30000.00",
         "group": "general", "refund_requested": "false"}
PARTS = ("day", "month", "year")


def boxes_of(page, name: str) -> list[str]:
    return [page.input_value(f"#f-{name}-{p}") for p in PARTS]


def type_date(page, name: str, day: str, month: str, year: str) -> None:
    """As a person types: a box at a time, Tab to the next."""
    page.click(f"#f-{name}-day")
    page.keyboard.type(day)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == f"f-{name}-month"
    page.keyboard.type(month)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == f"f-{name}-year"
    page.keyboard.type(year)


def no_violations(page, where: str) -> None:
    for width, size in WIDTHS.items():
        page.set_viewport_size(size)
        found = axe_violations(page)
        assert found == [], f"{where} at {width}px:\n" + describe(found)
        # nothing wider than the page at a phone's width
        assert page.evaluate("document.documentElement.scrollWidth <= "
                             "document.documentElement.clientWidth")
    page.set_viewport_size(WIDTHS["1280"])


def open_context(browser, base: str, js: bool, axe: bool = False):
    options = {"base_url": base, "viewport": WIDTHS["1280"]}
    if js:
        return browser.new_context(**options)
    if axe:  # the page without its own script, axe's script allowed
        return context_without_page_script(browser, **options)
    return browser.new_context(java_script_enabled=False, **options)


# ---- the workbench: the analyst's application -------------------------------------------

@pytest.mark.parametrize("js", [True, False], ids=["js", "nojs"])
def test_the_analyst_types_03_07_1991_in_the_three_boxes(browser, wb_url, js):  # noqa: F811
    context = open_context(browser, wb_url, js)
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto("/analista/entrar?lang=es")
        page.fill("#f-name", "ana")
        page.fill("#f-password", PASSWORDS["ana"])
        page.click("form.wb-signin button[type=submit]")
        page.wait_for_selector("#list-title")
        page.goto("/analista/nuevo?lang=es")
        form = {k: v for k, v in APPLICATION.items() if k not in (
            "entry_date", "application_date")}
        form["participant_id"] = f"W-BOX-{'js' if js else 'nojs'}"  # a case of its own
        for name, value in in_boxes(form).items():
            control = page.locator(f"form.wb-application [name='{name}']")
            if control.evaluate("e => e.tagName") == "SELECT":
                control.select_option(value)
            else:
                control.fill(value)
        type_date(page, "entry_date", "03", "07", "1991")
        # the application date with a year of two digits: named, in its box
        type_date(page, "application_date", "2", "noviembre", "26")
        page.click("#preview")
        page.wait_for_selector("#error-summary")
        summary = page.inner_text("#error-summary")
        assert "El año de la fecha de solicitud debe tener 4 cifras" in summary
        assert "¿" not in summary  # nothing asked back
        assert page.locator("#error-summary li").count() == 1
        assert boxes_of(page, "entry_date") == ["03", "07", "1991"]
        assert boxes_of(page, "application_date") == ["2", "noviembre", "26"]
        page.click("#error-summary a[href='#f-application_date-year']")
        assert page.evaluate("document.activeElement.id") == "f-application_date-year"
        page.fill("#f-application_date-year", "2026")
        page.click("#preview")
        page.wait_for_selector("#answer .wb-headline")
        expected = diferida.evaluate({**{k: APPLICATION[k] for k in (
            "birth_date", "separation_date", "creditable_service_years", "average_compensation",
            "group", "refund_requested", "as_of")}, "entry_date": "1991-07-03",
            "participant_id": form["participant_id"]}, lang="es")
        assert page.inner_text("#answer .wb-headline").strip() == expected.headline
        assert boxes_of(page, "entry_date") == ["03", "07", "1991"]  # as typed, never ISO
        page.click("#save")
        page.wait_for_selector("#case-state")
        text = page.inner_text("main")
        assert "3 de julio de 1991" in text and "2 de noviembre de 2026" in text
    finally:
        context.close()
    assert errors == []


@pytest.mark.parametrize("lang", ["es", "en"])
@pytest.mark.parametrize("js", [True, False], ids=["js", "nojs"])
def test_the_application_form_with_a_date_in_error_has_no_axe_violation(
        browser, wb_url, lang, js):  # noqa: F811
    context = open_context(browser, wb_url, js, axe=True)
    try:
        page = context.new_page()
        page.goto(f"/analista/entrar?lang={lang}")
        page.fill("#f-name", "ana2")
        page.fill("#f-password", PASSWORDS["ana2"])
        page.click("form.wb-signin button[type=submit]")
        page.wait_for_selector("#list-title")
        page.goto(f"/analista/nuevo?lang={lang}")
        no_violations(page, "the empty application")
        for name, value in in_boxes({"participant_id": "W-0033",
                                     "birth_date": ("31", "feb", "1970"),
                                     "entry_date": ("1", "", "1988")}).items():
            page.fill(f"#f-{name}", value)
        page.click("#preview")
        page.wait_for_selector("#error-summary")
        assert page.get_attribute("#f-birth_date-day", "aria-invalid") == "true"
        assert page.get_attribute("#f-birth_date-year", "aria-invalid") is None
        assert page.get_attribute("#f-entry_date-month", "aria-invalid") == "true"
        no_violations(page, "the application with dates in error")
    finally:
        context.close()


# ---- the public calculator ---------------------------------------------------------

def fill_calculator(page, dates: dict, lang: str) -> None:
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    # a date written as text as a person types it on the page of `lang`
    for name, value in in_boxes({**FACTS, **dates}, lang).items():
        if name in ("group", "refund_requested"):
            page.check(f"#f-{name}-{value}")
        else:
            page.fill(f"#f-{name}", value)


@pytest.mark.parametrize("lang, month", [("es", "julio"), ("en", "07")])
@pytest.mark.parametrize("js", [True, False], ids=["js", "nojs"])
def test_the_calculator_reads_03_07_1991_from_its_boxes(browser, base_url, js, lang, month):
    context = open_context(browser, base_url, js)
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"/?lang={lang}")
        fill_calculator(page, {"birth_date": "1970-05-10", "separation_date": "30/06/2010",
                               "as_of": AS_OF}, lang)
        # a mistake first: 31 February, named in the day box
        type_date(page, "entry_date", "31", "02", "1991")
        page.click("#calc button.primary")
        page.wait_for_selector("#error-summary")
        link = page.locator("#error-summary a[href='#f-entry_date-day']")
        assert link.count() == 1
        assert "28" in link.inner_text()
        assert page.locator("#e-entry_date .error-line").count() == 1
        assert boxes_of(page, "entry_date") == ["31", "02", "1991"]
        link.click()
        assert page.evaluate("document.activeElement.id") == "f-entry_date-day"
        page.fill("#f-entry_date-day", "03")
        page.fill("#f-entry_date-month", month)
        page.click("#calc button.primary")
        if lang == "en":
            # the month-first guard: on the English page 03 / 07 may be March 7
            # or July 3; asked, never guessed, and answered
            page.wait_for_selector("#date-question-title")
            assert page.locator("#result-title").count() == 0
            assert "March 7, 1991 or July 3, 1991?" in page.inner_text("#date-question")
            page.click("#date-question button[value='entry_date:1991-07-03']")
        page.wait_for_selector("#result-title")
        expected = diferida.evaluate({"birth_date": "1970-05-10", "entry_date": "1991-07-03",
                                      "separation_date": "2010-06-30", "as_of": AS_OF,
                                      **FACTS}, lang=lang)
        assert fmt_date(date(1991, 7, 3), lang) in page.inner_text("#data-read")
        assert page.inner_text("#annual-amount").strip() == format_money(
            expected.annual_amount)
        # as typed; on the English page as chosen, the month by its name
        assert boxes_of(page, "entry_date") == (
            ["3", "July", "1991"] if lang == "en" else ["03", month, "1991"])
        assert page.locator("[value^='pick:']").count() == 0
    finally:
        context.close()
    assert errors == []


def test_the_1960_question_follows_the_entry_date_typed_in_its_boxes(browser, base_url):
    """With the script, Regla 19.6's question shows as soon as an entry date
    on or before its cut-off date is typed in the boxes (the month by its
    name too), and hides for a later one: as the server decides."""
    context = open_context(browser, base_url, True)
    try:
        page = context.new_page()
        page.goto("/")
        question = page.locator("#q-deferred_right_1960")
        cutoff = question.get_attribute("data-cutoff")
        assert question.is_hidden()
        year = str(int(cutoff[:4]) - 2)
        for day, month in (("1", "Enero"), ("1", "1"), ("01", "ene.")):
            type_date(page, "entry_date", day, month, year)
            assert question.is_visible(), (day, month, year)
            for part in PARTS:
                page.fill(f"#f-entry_date-{part}", "")
        type_date(page, "entry_date", "1", "julio", "1995")
        assert question.is_hidden()
    finally:
        context.close()


@pytest.mark.parametrize("lang", ["es", "en"])
@pytest.mark.parametrize("js", [True, False], ids=["js", "nojs"])
def test_the_calculator_with_dates_in_error_and_read_has_no_axe_violation(
        browser, base_url, lang, js):
    """The calculator's states with the boxes in both languages (the state
    list of test_web_accessibility.py checks Spanish under `make test`)."""
    context = open_context(browser, base_url, js, axe=True)
    try:
        page = context.new_page()
        page.goto(f"/?lang={lang}")
        fill_calculator(page, {"birth_date": ("31", "feb", "1970"),
                               "entry_date": ("1", "", "1988"), "as_of": AS_OF}, lang)
        page.click("#calc button.primary")
        page.wait_for_selector("#error-summary")
        assert page.get_attribute("#f-birth_date-day", "aria-invalid") == "true"
        assert page.get_attribute("#f-entry_date-month", "aria-invalid") == "true"
        no_violations(page, "the calculator with dates in error")
        page.fill("#f-birth_date-day", "28")
        page.fill("#f-entry_date-month", "julio" if lang == "es" else "July")
        page.click("#calc button.primary")
        page.wait_for_selector("#result-title")
        no_violations(page, "the calculator's answer of dates typed in boxes")
    finally:
        context.close()


# ---- the month-first guard (docs/web.md; over HTTP: test_web_month_first.py) -----------

@pytest.mark.parametrize("js", [True, False], ids=["js", "nojs"])
def test_james_types_11_03_1963_is_asked_and_answered_for_november_3(browser, base_url, js):
    """James writes the month first by habit: 11 / 03 / 1963 for November 3.
    Beside the boxes his date is written back as typed (with the script, as he
    types); the English page asks before answering, in one line with both
    readings; he chooses November 3 and is answered for it. The question's
    page has no axe violation (the state "asked-month-first" of
    test_web_accessibility.py)."""
    context = open_context(browser, base_url, js)
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto("/?lang=en")
        type_date(page, "birth_date", "11", "03", "1963")
        if js:
            assert page.inner_text("#r-birth_date") == "Read as March 11, 1963"
        fill_calculator(page, {"entry_date": ("1", "February", "1986"),
                               "separation_date": ("30", "June", "2010"),
                               "as_of": AS_OF}, "en")
        page.click("#calc button.primary")
        page.wait_for_selector("#date-question-title")
        if js:
            assert page.evaluate("document.activeElement.id") == "date-question-title"
        assert page.locator("#result").count() == 0  # no answer of a guessed date
        assert page.inner_text("#ask-birth_date") == (
            "Date of birth: did you mean November 3, 1963 or March 11, 1963?")
        assert page.inner_text("#r-birth_date") == "Read as March 11, 1963"
        page.click("#date-question button:has-text('November 3, 1963')")
        page.wait_for_selector("#result-title")
        d = diferida.evaluate({**FACTS, "birth_date": "1963-11-03", "entry_date": "1986-02-01",
                               "separation_date": "2010-06-30", "as_of": AS_OF}, lang="en")
        headline = page.inner_text("#result-title")
        assert f"since {fmt_date(d.eligibility_date, 'en')}" in headline
        assert (d.eligibility_date.month, d.eligibility_date.day) == (11, 3)
        assert boxes_of(page, "birth_date") == ["3", "November", "1963"]
        assert page.inner_text("#r-birth_date") == "Read as November 3, 1963"
        assert page.locator("#date-question").count() == 0
    finally:
        context.close()
    assert errors == []


def test_the_analyst_on_the_english_workbench_is_asked_11_03_1963(browser, wb_url):  # noqa: F811
    context = open_context(browser, wb_url, True)
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto("/analista/entrar?lang=en")
        page.fill("#f-name", "ana2")
        page.fill("#f-password", PASSWORDS["ana2"])
        page.click("form.wb-signin button[type=submit]")
        page.wait_for_selector("#list-title")
        page.goto("/analista/nuevo?lang=en")
        form = {k: v for k, v in APPLICATION.items() if k != "birth_date"}
        form["participant_id"] = "W-JAMES"
        for name, value in in_boxes(form, "en").items():
            control = page.locator(f"form.wb-application [name='{name}']")
            if control.evaluate("e => e.tagName") == "SELECT":
                control.select_option(value)
            else:
                control.fill(value)
        type_date(page, "birth_date", "11", "03", "1963")
        assert page.inner_text("#r-birth_date") == "Read as March 11, 1963"
        page.click("#preview")
        page.wait_for_selector("#date-question")
        assert page.locator("#answer .wb-headline").count() == 0
        assert page.inner_text("#ask-birth_date") == (
            "Birth date: did you mean November 3, 1963 or March 11, 1963?")
        page.click("#date-question button:has-text('November 3, 1963')")
        page.wait_for_selector("#answer .wb-headline")
        expected = diferida.evaluate({**{k: APPLICATION[k] for k in (
            "entry_date", "separation_date", "creditable_service_years", "average_compensation",
            "group", "refund_requested", "as_of")}, "birth_date": "1963-11-03",
            "participant_id": "W-JAMES"}, lang="en")
        assert page.inner_text("#answer .wb-headline").strip() == expected.headline
        assert boxes_of(page, "birth_date") == ["3", "November", "1963"]
        assert page.inner_text("#r-birth_date") == "Read as November 3, 1963"
    finally:
        context.close()
    assert errors == []
