"""Five people with real stories use the public calculator in chromium, with
JavaScript on and off, at 1280 px wide (and at 375 px too in `make
test-full`):

- a police officer who types "$38,500.00" and "21 años y 3 meses";
- someone still working (no separation date);
- someone who asked for a refund;
- an entrant of 1958, eligible for decades;
- an English speaker who writes dates month first (in the boxes: the month by
  its name).

Each answer and each scenario row is checked against `diferida.evaluate`
for the same values (the core the command `diferida evaluate` runs); a date
typed in the scenario panel posts, redirects and gets (Back after Print
asks nothing) and its row is on the printout; the printout fits on two
pages (Chromium's print to PDF) and nothing is wider than a 320 px screen
(WCAG 1.4.10, reflow).
"""

from __future__ import annotations

import re
from datetime import date

import pytest

import diferida
from diferida.i18n import catalog
from diferida.money import format_money
from diferida.web.labels import labels

from .conftest import SHOTS, TIER, screenshot
from .date_boxes import in_boxes
from .test_web_calculator_nothing_read_silently import (
    check_leave_rows,
    check_start_rows,
    day_in_words,
    table_rows,
)

AS_OF = "2026-11-29"
WIDTHS = {"1280": {"width": 1280, "height": 900}, "375": {"width": 375, "height": 740}}

# name: (language, what is typed, a reading to pick when asked back, the
# values as the page reads them, a date typed in the scenario panel)
STORIES: dict[str, tuple[str, dict[str, str], str | None, dict[str, str], str]] = {
    "officer": ("es", {
        "birth_date": "14/2/1971", "entry_date": "15/08/1992", "separation_date": "15/11/2013",
        "creditable_service_years": "21 años y 3 meses", "average_compensation": "$38,500.00",
        "group": "police", "refund_requested": "false"}, None, {
        "birth_date": "1971-02-14", "entry_date": "1992-08-15", "separation_date": "2013-11-15",
        "creditable_service_years": "21.25", "average_compensation": "38500.00",
        "group": "police", "refund_requested": "false"}, "30/06/2031"),
    "working": ("es", {
        "birth_date": "14/2/1971", "entry_date": "20/3/1995",
        "creditable_service_years": "12 años y 6 meses", "average_compensation": "$45,000",
        "group": "general", "refund_requested": "false"}, None, {
        "birth_date": "1971-02-14", "entry_date": "1995-03-20",
        "creditable_service_years": "12.5", "average_compensation": "45000",
        "group": "general", "refund_requested": "false"}, "15/08/2028"),
    "refund": ("es", {
        "birth_date": "1970-05-10", "entry_date": "1988-07-01", "separation_date": "30/6/2010",
        "creditable_service_years": "22", "average_compensation": "30,000",
        "group": "general", "refund_requested": "true"}, None, {
        "birth_date": "1970-05-10", "entry_date": "1988-07-01", "separation_date": "2010-06-30",
        "creditable_service_years": "22", "average_compensation": "30000",
        "group": "general", "refund_requested": "true"}, ""),
    "entrant-1958": ("es", {
        "birth_date": "20/4/1934", "entry_date": "1958-03-01", "separation_date": "30/6/1980",
        "creditable_service_years": "22", "average_compensation": "9000",
        "group": "general", "refund_requested": "false"}, None, {
        "birth_date": "1934-04-20", "entry_date": "1958-03-01", "separation_date": "1980-06-30",
        "creditable_service_years": "22", "average_compensation": "9000",
        "group": "general", "refund_requested": "false"}, "31/12/2027"),
    # month first: 11/03/1963 is November 3, 1963 to her; in the boxes she
    # types the day, then the month by its name: nothing to ask back
    "english": ("en", {
        "birth_date": "November 3, 1963", "entry_date": "1986-09-15",
        "separation_date": "2012-01-31",
        "creditable_service_years": "25.5", "average_compensation": "$52,000",
        "group": "general", "refund_requested": "false"}, None, {
        "birth_date": "1963-11-03", "entry_date": "1986-09-15", "separation_date": "2012-01-31",
        "creditable_service_years": "25.5", "average_compensation": "52000",
        "group": "general", "refund_requested": "false"}, "2029-03-01"),
}

NO_OVERFLOW = "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
WIDE = """(width) => Array.from(document.querySelectorAll('body *'))
  .filter(e => e.getBoundingClientRect().right > width + 0.5)
  .slice(-5).map(e => e.outerHTML.slice(0, 120))"""
PAGES = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def evaluate(strict: dict[str, str], lang: str, **changes: str) -> diferida.Determination:
    given = {k: v for k, v in {**strict, "as_of": AS_OF, **changes}.items() if v != ""}
    return diferida.evaluate(given, lang=lang)


def fill(page, values: dict[str, str]) -> None:
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    # each date into its three boxes, as a person types it (tests/date_boxes.py)
    for name, value in in_boxes({**values, "as_of": AS_OF}).items():
        if name in ("group", "refund_requested"):
            page.check(f"#f-{name}-{value}")
        else:
            page.fill(f"#f-{name}", value)


def check_answer(page, d: diferida.Determination, lang: str, strict: dict[str, str]) -> None:
    """The answer on the page is the core's for the values as read."""
    head = page.inner_text("#result-title")
    if d.annual_amount is not None:
        assert page.inner_text("#annual-amount").strip() == format_money(d.annual_amount)
        assert page.inner_text("#monthly-amount").strip() == format_money(d.monthly_amount)
    if d.status == "not_entitled" and "not_separated" in d.reasons:
        assert labels(lang)["result"]["in_service_status"] + ":" in head
        assert "✗" not in head  # someone who has not left yet: no red cross
        leaving = evaluate(strict, lang, separation_date=AS_OF)
        if leaving.annual_amount is not None:
            assert format_money(leaving.annual_amount) in head
    else:
        assert catalog(lang)["status"][d.status] in head


def fits_320(page) -> None:
    page.set_viewport_size({"width": 320, "height": 740})
    scroll, client = page.evaluate(NO_OVERFLOW)
    assert scroll <= client, (f"the page is {scroll - client} px wider than a 320 px screen",
                              page.evaluate(WIDE, client))


# At 375 px a story makes every check it makes at 1280 but the page count
# of the printout (printed at 1280), and each page is also made to fit 320 px
# at either width: `make test` walks the stories at 1280, `make test-full`
# at both (the states of the calculator are reached at 375 px by
# test_web_accessibility.py in every tier).
STORY_WIDTHS = list(WIDTHS) if TIER == "full" else ["1280"]


@pytest.mark.parametrize("width", STORY_WIDTHS)
@pytest.mark.parametrize("js", [True, False], ids=["js", "nojs"])
@pytest.mark.parametrize("story", list(STORIES))
def test_a_story_from_the_form_to_the_printout(browser, base_url, story, js, width):
    lang, typed, pick, strict, scenario = STORIES[story]
    context = browser.new_context(base_url=base_url, viewport=WIDTHS[width],
                                  java_script_enabled=js)
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"/?lang={lang}")
        fill(page, typed)
        page.click("#calc button.primary")
        page.wait_for_selector("#result-title, #error-summary")
        assert pick is None  # dates in three boxes: nothing is ever asked back
        d = evaluate(strict, lang)
        check_answer(page, d, lang, strict)
        html = page.content()
        if 'id="scenario-start"' in html:
            check_start_rows(table_rows(html, "scenario-start"), {**strict, "as_of": AS_OF}, lang)
            rows = table_rows(html, "scenario-start")
            assert any(day_in_words(r[0], lang) >= date.today() for r in rows)
        if 'id="scenario-leave"' in html:
            check_leave_rows(table_rows(html, "scenario-leave"), {**strict, "as_of": AS_OF},
                             lang)
        if story == "refund":
            steps = page.inner_text("#next-steps")
            assert "Para confirmar si el reembolso se pidió y se pagó" in steps
            assert "no haber pedido el reembolso" not in page.inner_text("#result")
        assert page.locator("#where-to-apply a[href='https://www.retiro.pr.gov/participantes/']"
                            ).count() == 1
        screenshot(page, SHOTS / f"story-{story}-{width}-{'js' if js else 'nojs'}.png",
                        full_page=True)
        fits_320(page)
        page.set_viewport_size(WIDTHS[width])
        if scenario:
            # the panel's own form: post, redirect, get
            page.fill("#f-scenario_date", scenario)
            with page.expect_navigation(url=re.compile(r"/resultado/[^/#]+#fila-escrita$"),
                                       wait_until="domcontentloaded"):
                page.click("form.scenario-date button[type=submit]")
            page.wait_for_selector("#escenarios")
            html = page.content()
            # the first typed row is where the page lands, focused (the address's
            # target, #fila-escrita)
            typed_rows = re.findall(r'<tr class="typed"[ >]', html)
            assert typed_rows, "the typed date has no row"
            for table in ("scenario-start", "scenario-leave"):
                if f'id="{table}"' in html:
                    check = check_start_rows if table == "scenario-start" else check_leave_rows
                    check(table_rows(html, table), {**strict, "as_of": AS_OF}, lang)
            fits_320(page)
            page.set_viewport_size(WIDTHS[width])
            answer_url = page.url
            page.click("#print-link")
            page.wait_for_selector("main.document")
            printed = page.content()
            assert printed.count('<tr class="typed">') == len(typed_rows)  # printed too
            page.go_back()  # no "Confirm Form Resubmission": the answer's own page
            page.wait_for_url(answer_url)
            page.wait_for_selector("#escenarios")
            assert page.url == answer_url
            assert len(re.findall(r'<tr class="typed"[ >]', page.content())) == len(typed_rows)
        else:
            page.click("#print-link")
            page.wait_for_selector("main.document")
        if width == "1280":
            page.emulate_media(media="print")
            pdf = page.pdf(prefer_css_page_size=True)
            (SHOTS / f"story-{story}-{'js' if js else 'nojs'}.pdf").write_bytes(pdf)
            pages = len(PAGES.findall(pdf))
            assert 1 <= pages <= 2, f"the printout is {pages} pages"
    finally:
        context.close()
    assert errors == []
