"""The web calculator used as a person would, in a real browser (Debian's
chromium, headless, driven by Playwright): fill the form with rules §8
examples, read the answer, switch language, make mistakes, convert years and
months, print, use only the keyboard, a phone-width screen, no JavaScript.

The real application (`diferida.server.create_app`) runs under uvicorn
on a free loopback port with a throw-away SQLite database. With
DIFERIDA_TEST_SCREENSHOTS=1 every state is saved as a screenshot under
test-output/web/. Any console error or uncaught
script error fails the test that caused it."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from playwright.sync_api import expect

from .conftest import SHOTS, screenshot
from .date_boxes import in_boxes
from .test_web_htmlcheck import problems
from .worked_examples import ONE

AS_OF = "2026-11-29"

# rules §8 examples (inputs as the specification gives them)
EXAMPLE_1 = {"birth_date": "1970-05-10", "entry_date": "1988-07-01",
             "separation_date": "2010-06-30", "creditable_service_years": "22",
             "average_compensation": "30000.00", "group": "general", "refund_requested": "false"}
EXAMPLE_3 = {"birth_date": "1972-11-02", "entry_date": "1995-08-01",
             "separation_date": "2015-07-31", "creditable_service_years": "12.25",
             "average_compensation": "28500.00", "group": "general", "refund_requested": "false"}
EXAMPLE_8 = {"birth_date": "1976-01-01", "entry_date": "1998-01-01",
             "separation_date": "2006-01-01", "creditable_service_years": "8",
             "average_compensation": "30000.00", "group": "general", "refund_requested": "false"}
EXAMPLE_9 = {**EXAMPLE_1, "refund_requested": "true"}


def _open(browser, base_url, **context_options):
    context = browser.new_context(base_url=base_url, **context_options)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "assert") else None)
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    return context, page, errors


@pytest.fixture
def page(browser, base_url):
    context, page, errors = _open(browser, base_url, viewport={"width": 1000, "height": 900})
    yield page
    context.close()
    assert errors == [], errors


@pytest.fixture
def nojs_page(browser, base_url):
    context, page, errors = _open(browser, base_url, viewport={"width": 1000, "height": 900},
                                  java_script_enabled=False)
    yield page
    context.close()
    assert errors == [], errors


def shot(page, name: str) -> None:
    screenshot(page, SHOTS / f"{name}.png", full_page=True)


def fill(page, values: dict[str, str], as_of: str = AS_OF) -> None:
    """Type a participant; the determination date is an analyst's option,
    behind "Opciones avanzadas" (opened when the script runs, or already
    open once used)."""
    advanced = page.locator("details.advanced")
    if advanced.count() and advanced.get_attribute("open") is None:
        page.click("details.advanced > summary")
    # each date into its three boxes, as a person types it on the page's
    # language (tests/date_boxes.py)
    lang = page.get_attribute("html", "lang")
    for name, value in in_boxes({**values, "as_of": as_of}, lang).items():
        if name in ("group", "refund_requested"):
            page.check(f"#f-{name}-{value}")
        else:
            page.fill(f"#f-{name}", value)


def calculate(page) -> None:
    """Press Calculate and wait for the answer or the messages to be shown."""
    page.click("#calc button.primary")
    page.wait_for_selector("#result-title, #error-summary")


def visible_text(page, selector: str) -> str:
    return re.sub(r"\s+", " ", page.locator(selector).inner_text()).strip()


def assert_valid(page) -> None:
    found = problems(page.content())
    assert found == [], found


def test_example_1_shows_entitlement_from_10_may_2028_without_reloading_the_page(page):
    page.goto("/")
    shot(page, "01-empty-form-es")
    assert_valid(page)
    page.evaluate("window.notReloaded = true")
    fill(page, EXAMPLE_1)
    with page.expect_response("**/calcular/fragmento"):
        calculate(page)
    assert page.evaluate("window.notReloaded") is True
    assert visible_text(page, "#result-title").endswith(
        "Tendrá derecho a una pensión diferida: podrá solicitarla desde el 10 de mayo de 2028 "
        "o en cualquier fecha posterior (Regla 19.3).")
    assert visible_text(page, "#annual-amount") == ONE.annual_shown
    assert visible_text(page, "#monthly-amount") == ONE.monthly_shown
    result = visible_text(page, "#result")
    assert "Faltan 1 año, 5 meses y 11 días" in result
    assert "Regla 19.1(a)" in result and "Regla 19.5(a)" in result
    assert "Ley 3-2013" in result  # the scope note is part of every explanation
    assert page.evaluate("document.activeElement.id") == "result-title"
    assert page.input_value("#f-average_compensation") == "30000.00"
    shot(page, "02-example-1-result-es")
    assert_valid(page)


def test_example_3_a_new_participant_gets_5236_88_a_year_and_436_41_a_month(page):
    page.goto("/")
    fill(page, EXAMPLE_3)
    calculate(page)
    assert visible_text(page, "#result-title").endswith(
        "desde el 2 de noviembre de 2037 o en cualquier fecha posterior (Regla 19.3).")
    assert visible_text(page, "#annual-amount") == "$5,236.88"
    assert visible_text(page, "#monthly-amount") == "$436.41"
    formula = visible_text(page, "table.formula")
    assert "Regla 19.5(b)" in formula and "12.25" in formula and "1.5%" in formula
    shot(page, "03-example-3-result-es")


def test_example_8_with_8_years_is_not_entitled_and_is_told_10_were_needed(page):
    page.goto("/?lang=en")
    fill(page, EXAMPLE_8)
    calculate(page)
    assert visible_text(page, "#result-title").endswith(
        "Not entitled to a deferred pension under Article 19.")
    why = visible_text(page, ".why")
    assert "Does not have the creditable service that any route requires" in why
    assert "At least 10 years of creditable service would have been needed; 8 are credited" in why
    assert page.locator("#annual-amount").count() == 0
    shot(page, "04-example-8-not-entitled-en")


def test_example_9_who_asked_for_a_refund_is_not_entitled(page):
    page.goto("/")
    fill(page, EXAMPLE_9)
    calculate(page)
    assert visible_text(page, "#result-title").endswith(
        "No tiene derecho a una pensión diferida bajo el Artículo 19.")
    assert "Solicitó el reembolso de sus aportaciones" in visible_text(page, ".why")
    explanation = visible_text(page, "ol.findings")
    assert ("✗ No se cumple · La Regla 19.1 exige no haber solicitado el reembolso de las "
            "aportaciones; lo solicitó: no se cumple.") in explanation
    shot(page, "05-example-9-refund-es")


def test_switching_to_english_keeps_what_was_typed_and_the_answer(page):
    page.goto("/")
    fill(page, EXAMPLE_1)
    calculate(page)
    page.click("button[value='lang:en']")
    page.wait_for_selector("html[lang='en']")
    # every value as typed, each date in its three boxes; a date the English
    # page would ask (day and month both 12 or less) keeps the reading it had
    # on the Spanish page, its month by its name (the month-first guard)
    for name, value in in_boxes({k: {**EXAMPLE_1, "as_of": AS_OF}[k] for k in (
            "birth_date", "entry_date", "separation_date", "creditable_service_years",
            "average_compensation", "as_of")}, "en").items():
        assert page.input_value(f"#f-{name}") == value
    assert page.is_checked("#f-group-general") and page.is_checked("#f-refund_requested-false")
    assert visible_text(page, "label[for='f-creditable_service_years']").startswith(
        "Years of creditable service")
    assert visible_text(page, "#result-title").endswith(
        "Will be entitled to a deferred pension: it may be requested from May 10, 2028 "
        "or any later date (Rule 19.3).")
    shot(page, "06-switched-to-english")
    page.click("button[value='lang:es']")
    page.wait_for_selector("html[lang='es']")
    # back in Spanish the dates keep that reading, as the English page wrote them
    assert [page.input_value(f"#f-birth_date-{p}") for p in ("day", "month", "year")] == [
        "10", "May", "1970"]
    assert_valid(page)


def test_mistakes_are_shown_next_to_their_fields_without_losing_what_was_typed(page):
    page.goto("/?lang=en")
    fill(page, {**EXAMPLE_1, "creditable_service_years": "22.123456",
                "average_compensation": "-5", "entry_date": "1969-01-01"})
    calculate(page)
    assert page.evaluate("document.activeElement.id") == "error-summary"
    assert "decimal places" in visible_text(page, "#e-creditable_service_years")
    assert "greater than zero" in visible_text(page, "#e-average_compensation")
    assert "after the entry date" in visible_text(page, "#e-birth_date")
    assert page.get_attribute("#f-average_compensation", "aria-invalid") == "true"
    assert page.input_value("#f-creditable_service_years") == "22.123456"
    assert page.input_value("#f-average_compensation") == "-5"
    assert page.locator("#result").count() == 0
    shot(page, "07-errors-en")
    page.click("#error-summary a[href='#f-average_compensation']")
    assert page.evaluate("document.activeElement.id") == "f-average_compensation"
    assert_valid(page)


def test_years_and_months_are_converted_into_the_field_and_rounding_is_said(page):
    page.goto("/?lang=en")
    page.fill("#f-svc_years", "12")
    page.fill("#f-svc_months", "3")
    page.click("button[value='convert']")
    page.wait_for_selector("#converter-note")
    assert page.input_value("#f-creditable_service_years") == "12.25"
    assert "= exactly 12.25 years" in visible_text(page, "#converter-note")
    assert page.evaluate("document.activeElement.id") == "f-creditable_service_years"
    page.fill("#f-svc_months", "1")
    page.click("button[value='convert']")
    expect(page.locator("#f-creditable_service_years")).to_have_value("12.0833")
    note = visible_text(page, "#converter-note")
    assert "12 1/12" in note and "rounded to the fourth decimal" in note
    assert page.locator("#result").count() == 0  # nothing is computed until Calculate
    shot(page, "08-converter-rounded-en")


def test_the_printable_determination_fits_two_pages_with_citations_and_version(page):
    page.goto("/")
    fill(page, {**EXAMPLE_1, "participant_id": "Caso 17"})
    calculate(page)
    page.emulate_media(media="print")
    assert not page.locator("#calc").is_visible()  # the calculator page prints the answer only
    assert page.locator("#result").is_visible()
    page.emulate_media(media="screen")
    page.click("#print-link")
    page.wait_for_selector("h1")
    # the printable estimate of that answer, at an address with no personal data
    assert re.fullmatch(r".*/resultado/[A-Za-z0-9_-]{22}/imprimir", page.url)
    assert page.locator("#print-now").is_visible()
    shot(page, "09-printable-page")
    assert_valid(page)
    page.emulate_media(media="print")
    pdf = page.pdf(prefer_css_page_size=True)
    (SHOTS / "determination.pdf").write_bytes(pdf)
    assert pdf.startswith(b"%PDF")
    assert 1 <= len(re.findall(rb"/Type\s*/Page\b", pdf)) <= 2
    shot(page, "10-printable-as-printed")
    printed = pdf_text(pdf) or visible_text(page, "body")
    for expected in ("Estimado de pensión diferida", "Caso 17", "10 de mayo de 1970",
                     ONE.annual_shown, ONE.monthly_shown, "Regla 19.1(a)", "Regla 19.5(a)",
                     "article19@", "Fecha de emisión", "Ley 3-2013"):
        assert expected in printed, expected
    for screen_only in ("Volver a la calculadora", "Imprimir o guardar en PDF"):
        assert screen_only not in printed


def pdf_text(pdf: bytes) -> str | None:
    """The PDF's text when poppler's pdftotext is installed; else None (the
    test then reads the page as printed, with print styles applied)."""
    exe = shutil.which("pdftotext")
    if exe is None:
        return None
    out = subprocess.run([exe, "-", "-"], input=pdf, capture_output=True, check=True)
    return re.sub(r"\s+", " ", out.stdout.decode("utf-8"))


def test_the_calculator_works_with_the_keyboard_alone(page):
    page.goto("/?lang=en")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "f-birth_date-day"

    def tab_to(element_id: str) -> None:
        for _ in range(30):
            if page.evaluate("document.activeElement.id") == element_id:
                return
            page.keyboard.press("Tab")
        raise AssertionError(f"Tab never reached #{element_id}")

    # each date in its three boxes, Tab from one box to the next (the month a
    # number or its name: test_web_date_boxes.py)
    def type_date(day: str, month: str, year: str) -> None:
        for part, typed in (("day", day), ("month", month), ("year", year)):
            if part != "day":
                page.keyboard.press("Tab")
            assert page.evaluate("document.activeElement.id").endswith(f"-{part}")
            page.keyboard.type(typed)

    type_date("10", "5", "1970")
    for name, parts in (("entry_date", ("1", "July", "1988")),
                        ("separation_date", ("30", "06", "2010"))):
        tab_to(f"f-{name}-day")
        type_date(*parts)
    tab_to("f-creditable_service_years")
    page.keyboard.type("22")
    tab_to("f-average_compensation")
    page.keyboard.type("30000.00")
    tab_to("f-group-general")
    page.keyboard.press("Space")
    page.keyboard.press("Tab")  # out of the group, into the next question
    assert page.evaluate("document.activeElement.name") == "refund_requested"
    page.keyboard.press("ArrowDown")  # Yes -> No
    tab_to("advanced-summary")  # the analyst's options, closed
    page.keyboard.press("Enter")
    tab_to("f-as_of-day")
    type_date("29", "11", "2026")
    page.keyboard.press("Enter")  # Enter calculates (not the language switch)
    # the month-first guard: 10 / 5 / 1970 may be October 5 or May 10 for an
    # English writer; asked first, the focus on the question, answered by keys
    page.wait_for_selector("#date-question-title")
    assert page.evaluate("document.activeElement.id") == "date-question-title"
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")  # the second reading: as the boxes say
    assert page.evaluate("document.activeElement.value") == "birth_date:1970-05-10"
    page.keyboard.press("Enter")
    page.wait_for_selector("#result-title")
    assert page.evaluate("document.activeElement.id") == "result-title"
    assert page.get_attribute("html", "lang") == "en"
    assert visible_text(page, "#annual-amount") == ONE.annual_shown
    page.keyboard.press("Tab")  # the first control under the answer: whom to ask (a link)
    assert page.evaluate("document.activeElement.closest('#where-to-apply') !== null")
    page.keyboard.press("Tab")  # then another date to compare
    assert page.evaluate("document.activeElement.id") == "f-scenario_date"
    tab_to("print-link")
    shot(page, "11-keyboard-only-en")


def test_on_a_phone_width_screen_nothing_overflows(browser, base_url):
    context, page, errors = _open(browser, base_url, viewport={"width": 390, "height": 844},
                                  is_mobile=True, has_touch=True)
    try:
        page.goto("/")
        fill(page, EXAMPLE_3)
        calculate(page)
        assert page.evaluate(
            "document.documentElement.scrollWidth <= window.innerWidth"), "sideways scrolling"
        assert visible_text(page, "#annual-amount") == "$5,236.88"
        shot(page, "12-phone-width-example-3")
    finally:
        context.close()
    assert errors == [], errors


def test_without_javascript_the_form_still_gives_the_answer(nojs_page):
    page = nojs_page
    page.goto("/")
    fill(page, EXAMPLE_3)
    page.click("#calc button.primary")
    page.wait_for_load_state()
    # post/redirect/get: the answer has a page of its own
    assert re.fullmatch(r".*/resultado/[A-Za-z0-9_-]{22}", page.url)
    expect(page.locator("#result-title")).to_be_focused()  # where the answer is
    assert visible_text(page, "#annual-amount") == "$5,236.88"
    assert visible_text(page, "#monthly-amount") == "$436.41"
    shot(page, "13-no-javascript-result")
    page.click("button[value='lang:en']")
    page.wait_for_load_state()
    assert page.get_attribute("html", "lang") == "en"
    assert page.input_value("#f-creditable_service_years") == "12.25"
    assert visible_text(page, "#result-title").endswith(
        "Will be entitled to a deferred pension: it may be requested from November 2, 2037 "
        "or any later date (Rule 19.3).")
    assert not page.locator("#print-now").count()  # only on the printable page


def test_without_javascript_enter_calculates_and_conversion_works(nojs_page):
    page = nojs_page
    page.goto("/?lang=en")
    page.fill("#f-svc_years", "10")
    page.fill("#f-svc_months", "6")
    page.click("button[value='convert']")
    page.wait_for_load_state()
    assert page.input_value("#f-creditable_service_years") == "10.5"
    fill(page, {k: v for k, v in EXAMPLE_1.items() if k != "creditable_service_years"})
    page.press("#f-average_compensation", "Enter")
    page.wait_for_selector("#result-title")
    assert visible_text(page, "#annual-amount") == "$4,725.00"  # 30000 × 1.5% × 10.5
    shot(page, "14-no-javascript-converted-en")
    page.click("#print-link")
    page.wait_for_selector("h1")
    assert not page.locator("#print-now").is_visible()  # the print button needs the script
    assert "Ctrl+P" in visible_text(page, ".print-hint")


@pytest.mark.parametrize("script", ["javascript", "no-javascript"])
def test_back_from_the_printout_and_reload_keep_the_answer(page, nojs_page, script):
    """Calculate, open the printable estimate, press Back, reload: the answer
    is still there, the address holds no personal data, and the browser never
    asks to post the form again."""
    p = page if script == "javascript" else nojs_page
    p.goto("/")
    fill(p, {**EXAMPLE_1, "average_compensation": "$30,000", "birth_date": "25/05/1970"})
    p.click("#calc button.primary")
    p.wait_for_selector("#result-title")
    answer_url = p.url
    assert re.fullmatch(r".*/resultado/[A-Za-z0-9_-]{22}", answer_url)
    for value in ("1970", "30000", "30%2C000"):
        assert value not in answer_url
    p.click("#print-link")
    p.wait_for_selector("h1")
    assert p.url == answer_url + "/imprimir"
    assert ONE.annual_shown in visible_text(p, "main")
    p.go_back()
    p.wait_for_selector("#result-title")
    assert p.url == answer_url
    assert visible_text(p, "#annual-amount") == ONE.annual_shown
    assert p.input_value("#f-average_compensation") == "$30,000"  # as typed
    p.reload()
    p.wait_for_selector("#result-title")
    assert visible_text(p, "#annual-amount") == ONE.annual_shown
    shot(p, f"14-back-and-reload-{script}")
