"""Accessibility of every state of the web calculator, in a real browser
(Debian's chromium, headless, driven by Playwright), checked with axe-core
(WCAG 2.1 A and AA rules, through axe-playwright-python, which ships
axe-core's script inside the package: nothing is fetched).

Every state — the empty form, each kind of mistake, each kind of answer, the
printable page and the glossary when there is one — is visited in Spanish and
English, with JavaScript on and off, and checked at each width (1280 and 375
px); each must have no axe violation, the tab title must say what the page
holds; with DIFERIDA_TEST_SCREENSHOTS=1 a screenshot at each width is saved
under test-output/web/a11y/.

A state is reached once, at the narrowest width (where a control is the
hardest to reach), and checked at each width in turn by resizing the same
page: the server's HTML does not depend on the width, and neither does the
page's script (only the style sheet does). axe-core is put in a page once
and run at each width.

A state is reached by putting every value in the form at once (one script:
the values, then the events typing fires) and pressing the button; typing
into each control as a person does is walked by the stories and the browser
tests.

axe-core is itself a script: in a page with JavaScript disabled it cannot
run. So the page without JavaScript is the page whose own script is not
served (web.js, the only script the pages have, is answered empty): forms
post natively, nothing is fetched, and axe, the test's script, runs in it.
Nothing tells the two apart: no page has an inline script or a <noscript>
(checked), and the test checks that the page's script fetched nothing. A
browser with JavaScript disabled walks the stories and the error links
below.

A new state is one line of STATES (what is typed, the button, the kind of
page); the test runs it in both languages, with and without JavaScript, at
every width (see CONTRIBUTING.md).

Also here: the printed page (nothing wider than the paper, all text black)
and the error summary's links (the field's label and message in view)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from .axe_helpers import (
    AXE_OPTIONS,
    KEEP_PARSED_COLORS,
    SCRIPT_ONLY_PARTS,
    axe_violations,
    context_without_page_script,
    describe,
    put_axe,
)
from .conftest import SHOTS, TIER, screenshot
from .date_boxes import in_boxes

A11Y_SHOTS = SHOTS / "a11y"
AS_OF = "2026-11-29"
VIEWPORTS = {"1280": {"width": 1280, "height": 900}, "375": {"width": 375, "height": 740}}

# rules §8 participants, as typed into the form.
EX1 = {"birth_date": "1970-05-10", "entry_date": "1988-07-01", "separation_date": "2010-06-30",
       "creditable_service_years": "22", "average_compensation": "30000.00",
       "group": "general", "refund_requested": "false"}
EX2 = {"birth_date": "1965-03-15", "entry_date": "1985-01-15", "separation_date": "2012-12-31",
       "creditable_service_years": "27.5", "average_compensation": "42000.00",
       "group": "general", "refund_requested": "false"}
EX4 = {"birth_date": "1975-06-20", "entry_date": "1996-02-01", "separation_date": "2021-03-31",
       "creditable_service_years": "25.1667", "average_compensation": "36000.00",
       "group": "police", "refund_requested": "false"}
EX8 = {**EX1, "birth_date": "1976-01-01", "entry_date": "1998-01-01",
       "separation_date": "2006-01-01", "creditable_service_years": "8"}
EX10 = {**EX1, "birth_date": "1975-01-01", "entry_date": "2000-01-01",
        "separation_date": "2010-01-01", "creditable_service_years": "10"}
EX11 = {"birth_date": "1935-06-01", "entry_date": "1955-01-01", "separation_date": "1975-01-01",
        "creditable_service_years": "12", "average_compensation": "10000.00",
        "group": "general", "refund_requested": "false"}

STRICT = "article19-strict-19_4"

# name: (what is typed, the button pressed, what the page then holds)
# kinds: "form" (the empty form or a conversion), "errors", "result", "asked"
# (the month-first guard's question on the English page, the answer on the
# Spanish one).
STATES: dict[str, tuple[dict[str, str] | None, str | None, str]] = {
    "empty-form": (None, None, "form"),
    "errors-missing": ({}, "calculate", "errors"),
    "errors-formats": ({**EX1, "creditable_service_years": "22.123456",
                        "average_compensation": "-5", "separation_date": "2010-02-30"},
                       "calculate", "errors"),
    "errors-between-fields": ({**EX1, "birth_date": "1990-01-01",
                               "creditable_service_years": "60"}, "calculate", "errors"),
    "converted": ({"svc_years": "12", "svc_months": "1"}, "convert", "form"),
    "eligible": (EX2, "calculate", "result"),
    "not-yet-eligible": (EX1, "calculate", "result"),
    "not-entitled-service": (EX8, "calculate", "result"),
    "not-entitled-refund": ({**EX1, "refund_requested": "true"}, "calculate", "result"),
    "not-entitled-not-covered": (EX10, "calculate", "result"),
    "not-entitled-not-separated": ({**EX1, "separation_date": ""}, "calculate", "result"),
    "minimum-19-6": (EX11, "calculate", "result"),
    "police-19-4-reading": (EX4, "calculate", "result"),
    "warnings": ({**EX1, "entry_date": "1982-01-01", "creditable_service_years": "30"},
                 "calculate", "result"),
    "printable": (EX1, "print", "print"),
    "glossary": (None, "glossary", "glossary"),
    # "Comparar con": the same case under the strict reading of 19.4
    "compare-changes": ({**EX4, "compare": STRICT}, "calculate", "result"),
    "compare-same": ({**EX2, "compare": STRICT}, "calculate", "result"),
    "errors-compare": ({**EX4, "compare": "article19"}, "calculate", "errors"),
    "printable-compare": ({**EX4, "compare": STRICT}, "print", "print"),
    # nothing read silently: a date in three boxes, one message naming the
    # box in error (31 February; a missing month), a thousands dot refused;
    # the page's own formats read (a month by its name), the details as read
    # next to the headline
    "errors-date-boxes": ({**EX1, "birth_date": ("31", "feb", "1970"),
                           "entry_date": ("1", "", "1988"), "average_compensation": "$38.500"},
                          "calculate", "errors"),
    "read-as-typed": ({**EX4, "birth_date": ("14", "febrero", "1971"),
                       "creditable_service_years": "21 años y 3 meses",
                       "average_compensation": "$38,500.00"}, "calculate", "result"),
    # the month-first guard: two dates whose day and month could each be the
    # other, typed in numbers; the English page asks both before answering
    # (the Spanish page, day first, answers)
    "asked-month-first": ({**EX1, "birth_date": ("11", "03", "1963"),
                           "entry_date": ("02", "01", "1986")}, "calculate", "asked"),
}
GLOSSARY_URLS = ("/glosario", "/glossary")


# --- driving the page --------------------------------------------------------------------

# Every control of the form at once, in one script: the value set, then the
# "input" and "change" events a person's typing fires (the page's script
# listens to them). Reaching a state this way costs chromium a tenth of what
# one Playwright action per control costs; typing into each control as a
# person does is what the stories and the browser tests walk
# (test_web_stories.py, test_web_browser.py).
FILL_AT_ONCE = """(values) => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  const missing = [];
  for (const [name, value] of Object.entries(values)) {
    const named = document.querySelectorAll(`#calc [name='${name}']`);
    let control = named[0];
    if (control && control.type === 'radio') {
      control = Array.from(named).find(r => r.value === value);
      if (control) control.checked = true;
    } else if (control) {
      control.value = value;
      if (control.value !== value) control = undefined;
    }
    if (!control) { missing.push(`${name}=${value}`); continue; }
    control.dispatchEvent(new Event('input', {bubbles: true}));
    control.dispatchEvent(new Event('change', {bubbles: true}));
  }
  return missing;
}"""


def fill_at_once(page, values: dict[str, str], lang: str) -> None:
    """Each value in the control of that name (a radio: the one of that value)."""
    # each date into its three boxes, as a person types it on the page of
    # `lang` (tests/date_boxes.py)
    missing = page.evaluate(FILL_AT_ONCE, in_boxes(values, lang))
    assert missing == [], f"the form has no control for {missing}"


def reach(page, base: str, lang: str, state: str, js: bool) -> bool:
    """Bring the page to `state`; False when the state does not exist (no glossary)."""
    values, button, _ = STATES[state]
    if button == "glossary":
        for url in GLOSSARY_URLS:
            response = page.goto(f"{base}{url}?lang={lang}")
            if response is not None and response.status == 200:
                return True
        return False
    page.goto(f"{base}/?lang={lang}")
    if values is None:
        return True
    fill_at_once(page, {**values, "as_of": AS_OF} if values or button == "print" else values,
                 lang)
    if button == "convert":
        page.click("#calc button[value='convert']")
        page.wait_for_selector("#converter-note")
    elif button == "calculate":
        page.click("#calc button.primary")
        page.wait_for_selector("#result-title, #error-summary, #date-question-title")
    elif button == "print":
        page.click("#calc button.primary")
        page.wait_for_selector("#print-link")
        page.click("#print-link")
        page.wait_for_selector("main.document")
    if not js:
        page.wait_for_load_state()
    return True


# --- every state: 0 violations -----------------------------------------------------------

# the width a state is reached at; then each width of VIEWPORTS in turn
REACHED_AT = min(VIEWPORTS, key=lambda w: VIEWPORTS[w]["width"])


class StatePages:
    """One page with the page's script and one without, each reused from
    state to state: a new page costs chromium a renderer process (a tenth of
    a state's CPU). A state starts from a full page load at the narrowest
    width; the calculator keeps nothing between two loads, no cookie and no
    storage (each test checks that no cookie was set). After a failure the
    page is closed, and the next state gets a new one."""

    def __init__(self, browser) -> None:
        self.browser = browser
        self.contexts: dict[bool, object] = {}
        self.pages: dict[bool, object] = {}

    def page(self, js: bool):
        viewport = VIEWPORTS[REACHED_AT]
        page = self.pages.get(js)
        if page is not None and not page.is_closed():
            page.set_viewport_size(viewport)
            return page
        if js not in self.contexts:
            self.contexts[js] = (self.browser.new_context(viewport=viewport) if js
                                 else context_without_page_script(self.browser, viewport=viewport))
        page = self.pages[js] = self.contexts[js].new_page()
        return page

    def discard(self, js: bool) -> None:
        page = self.pages.pop(js, None)
        if page is not None:
            page.close()

    def close(self) -> None:
        for context in self.contexts.values():
            context.close()


@pytest.fixture(scope="module")
def state_pages(browser):  # noqa: F811
    pages = StatePages(browser)
    yield pages
    pages.close()


# The states whose English page is not the Spanish page's skeleton with
# other words (the English glossary marks each Spanish term with its lang;
# the month-first guard asks on the English page only):
# axe runs in both languages on these in every tier. On the others, `make
# test` runs axe in Spanish and holds the English page to the same skeleton
# over HTTP (test_each_state_has_one_skeleton_in_both_languages); `make
# test-full` runs axe in both languages on every state.
# The month-first guard's question is asked on the English page only.
BILINGUAL = {"glossary", "asked-month-first"}
AXE_STATES = [(state, lang) for state in STATES for lang in ("es", "en")
              if lang == "es" or TIER == "full" or state in BILINGUAL]


@pytest.mark.parametrize("js", [True, False], ids=["js", "nojs"])
@pytest.mark.parametrize("state, lang", AXE_STATES)
def test_every_state_has_no_wcag_2_1_aa_violation(state_pages, base_url, state, lang, js):
    """The state at every width of VIEWPORTS, with the page's script or without."""
    page = state_pages.page(js)
    errors: list[str] = []
    fetched: list[str] = []
    found: dict[str, list[dict]] = {}

    def on_error(e) -> None:
        errors.append(f"page error: {e}")

    def on_request(r) -> None:
        if r.resource_type == "fetch":
            fetched.append(r.url)

    page.on("pageerror", on_error)
    page.on("request", on_request)
    try:
        if not reach(page, base_url, lang, state, js):
            pytest.skip("no glossary page")
        check_content(page, state, lang)
        if js and STATES[state][1] in ("calculate", "convert"):
            assert fetched, "the page's script did not fetch the answer"
        if not js:
            assert fetched == [], "the page's script ran"
            assert page.evaluate(SCRIPT_ONLY_PARTS) == 0
        mode = "js" if js else "nojs"
        for width in sorted(VIEWPORTS, key=lambda w: w != REACHED_AT):
            page.set_viewport_size(VIEWPORTS[width])
            screenshot(page, A11Y_SHOTS / f"{state}-{lang}-{width}-{mode}.png", full_page=True)
            found[width] = axe_violations(page)
        assert page.context.cookies() == [], "the calculator set a cookie"
    except BaseException:
        state_pages.discard(js)
        raise
    finally:
        if not page.is_closed():
            page.remove_listener("pageerror", on_error)
            page.remove_listener("request", on_request)
    assert all(v == [] for v in found.values()), "\n".join(
        f"at {width} px:\n{describe(v)}" for width, v in found.items() if v)
    assert errors == [], errors


# --- the same skeleton in both languages (HTTP, no browser) -----------------------------

# attributes that shape the page for axe and assistive technology, kept with
# their values; every other attribute (titles, labels, data-*, links whose
# address is in the page's language) counts as text: set or empty
STRUCTURE = {"id", "class", "role", "type", "name", "for", "aria-describedby",
             "aria-labelledby", "aria-controls", "aria-hidden", "aria-expanded",
             "aria-current", "aria-live", "aria-atomic", "aria-invalid", "aria-required",
             "aria-busy", "aria-modal", "aria-level", "hidden", "tabindex", "required",
             "method", "autocomplete", "inputmode", "disabled", "checked", "selected",
             "colspan", "rowspan", "scope", "headers", "form", "open", "novalidate", "rel",
             "target", "multiple", "size", "maxlength"}


class _Skeleton(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[tuple] = []
        self.langs: list[str] = []

    def handle_starttag(self, tag, attrs):
        shown = []
        for name, value in sorted(attrs):
            if name == "lang":
                self.langs.append(value or "")
            shown.append((name, value) if name in STRUCTURE else (name, bool(value)))
        self.parts.append(("<", tag, tuple(shown)))

    def handle_endtag(self, tag):
        self.parts.append((">", tag))

    def handle_data(self, data):
        if data.strip() and (not self.parts or self.parts[-1] != ("text",)):
            self.parts.append(("text",))


def skeleton(html: str) -> _Skeleton:
    """The page's elements in order, with their structural attributes, and
    where text stands (not what it says); the lang attributes it holds."""
    parser = _Skeleton()
    parser.feed(html)
    parser.close()
    return parser


def state_html(client, state: str, lang: str) -> str | None:
    """The server's page of `state` in `lang`, reached over HTTP as the page
    without its script reaches it (the form posted, the answer followed)."""
    values, button, _ = STATES[state]
    if button == "glossary":
        for url in GLOSSARY_URLS:
            r = client.get(f"{url}?lang={lang}")
            if r.status_code == 200:
                return r.text
        return None
    if values is None:
        return client.get(f"/?lang={lang}").text
    data = {**in_boxes({**values, "as_of": AS_OF}, lang), "lang": lang}
    if button == "convert":
        return client.post("/calcular", data={**data, "action": "convert"}).text
    r = client.post("/calcular", data={**data, "action": "calculate"})
    if button != "print":
        return r.text
    link = re.search(r'id="print-link" href="([^"]+)"', r.text)
    assert link is not None, "the answer has no link to its printable page"
    return client.get(link.group(1).replace("&amp;", "&")).text


@pytest.mark.slow  # 22 states served in both languages: make test, not the loop
def test_each_state_has_one_skeleton_in_both_languages(base_url):
    """What lets `make test` run axe in one language: each state's English
    page is its Spanish page with other words — the same elements, in the same
    order, with the same ids, classes, roles, types and ARIA references —
    except the states of BILINGUAL, which axe checks in both languages (and
    which must differ, so that the list stays exact). The lang attributes of
    the English page are languages the pages speak."""
    import httpx

    with httpx.Client(base_url=base_url, follow_redirects=True, timeout=60) as client:
        for state in STATES:
            es, en = state_html(client, state, "es"), state_html(client, state, "en")
            if es is None or en is None:
                assert es is None and en is None, state
                continue
            a, b = skeleton(es), skeleton(en)
            assert a.langs[:1] == ["es"] and b.langs[:1] == ["en"], state
            assert set(b.langs) <= {"es", "en"}, (state, b.langs)
            if state in BILINGUAL:
                assert a.parts != b.parts, f"{state}: remove it from BILINGUAL"
            else:
                assert a.parts == b.parts, (
                    f"{state}: the English page's skeleton differs from the Spanish "
                    f"one; add it to BILINGUAL (axe in both languages) or align them")


# text made to fail contrast in the ways axe must work out: a pale color, a
# half-transparent background over the page's, a color in another space
POOR_CONTRAST = """() => {
  const main = document.querySelector('main');
  for (const [color, background] of [['rgb(190, 190, 190)', ''],
                                     ['#777', 'rgba(0, 0, 0, 0.4)'],
                                     ['lab(62 0 0)', 'oklch(0.95 0.02 250)']]) {
    const p = document.createElement('p');
    p.textContent = 'pale: ' + color;
    p.style.color = color;
    if (background) p.style.background = background;
    main.appendChild(p);
  }
}"""
AXE_EVERYTHING = ("options => axe.run(document, options).then(r => "
                  "({violations: r.violations, passes: r.passes, incomplete: r.incomplete}))")


def test_axe_with_its_colors_kept_finds_what_axe_alone_finds(browser, base_url):  # noqa: F811
    """The colors kept between elements (axe_helpers.KEEP_PARSED_COLORS) change
    nothing axe reports: in one answer's page, with text added to fail
    contrast, the violations, the passes and what axe could not decide are
    the same, node by node, without them, with them, and with every color
    already kept."""
    page = browser.new_page(viewport=VIEWPORTS["375"])
    options = {**AXE_OPTIONS, "resultTypes": ["violations", "passes", "incomplete"]}
    try:
        reach(page, base_url, "es", "warnings", True)
        page.evaluate(POOR_CONTRAST)
        put_axe(page, keep_colors=False)
        alone = page.evaluate(AXE_EVERYTHING, options)
        page.evaluate(KEEP_PARSED_COLORS)  # the same document, axe's colors now kept
        assert page.evaluate("axe.commons.color.Color.prototype.parseString.kept")
        kept = page.evaluate(AXE_EVERYTHING, options)
        again = page.evaluate(AXE_EVERYTHING, options)  # every color string known by now
    finally:
        page.close()
    contrast = [v for v in alone["violations"] if v["id"] == "color-contrast"]
    assert len(contrast) == 1 and len(contrast[0]["nodes"]) >= 2, describe(contrast)
    assert any(p["id"] == "color-contrast" and len(p["nodes"]) > 20 for p in alone["passes"])
    assert kept == alone and again == alone


def check_content(page, state: str, lang: str) -> None:
    """What the page of `state` must hold besides no violation: its language,
    a title saying what it holds, and the parts the state is about."""
    assert page.get_attribute("html", "lang") == lang
    check_title(page, STATES[state][2])
    if state == "police-19-4-reading":
        assert page.locator("#reading-used").count() == 1
    if state == "warnings":
        assert page.locator(".warnings li").count() >= 2
    if state in ("compare-changes", "printable-compare"):
        assert page.locator("#comparison-table tbody tr").count() == 3
        assert page.locator("#comparison-why").count() == 1
    if state == "compare-same":
        assert page.locator("#comparison-same").count() == 1
    if state == "errors-compare":
        assert page.locator("#e-compare").count() == 1
    if state == "asked-month-first":
        # English: the question, no answer; Spanish (day first): the answer
        asked = lang == "en"
        assert page.locator("#date-question .date-ask").count() == (2 if asked else 0)
        assert page.locator("#result-title").count() == (0 if asked else 1)


def check_title(page, kind: str) -> None:
    title = page.title()
    if kind == "errors":
        assert title.startswith("Error: "), title
    elif kind == "result" or (kind == "asked" and page.locator("#result-title").count()):
        status = page.locator("#result-title").inner_text()
        assert title.split(" – ")[0] in status, (title, status)
        assert not title.startswith("Error")
    else:
        assert not title.startswith("Error"), title


# --- the error summary's links show the label and the message ----------------------------

IN_VIEW = """(id) => {
  const input = document.getElementById(id);
  const field = input.closest('.field');
  const question = field.querySelector('label, legend');
  const message = field.querySelector('.error');
  const top = Math.min(question.getBoundingClientRect().top, message.getBoundingClientRect().top);
  const bottom = input.getBoundingClientRect().bottom;
  return {ok: top >= 0 && bottom <= window.innerHeight, top: top, bottom: bottom,
          height: window.innerHeight};
}"""


@pytest.mark.parametrize("js", [True, False], ids=["js", "nojs"])
@pytest.mark.parametrize("width", list(VIEWPORTS))
def test_each_error_link_brings_its_label_and_message_into_view(browser, base_url,  # noqa: F811
                                                                 width, js):
    # the page as most people have it: smooth scrolling to the field
    context = browser.new_context(viewport=VIEWPORTS[width], java_script_enabled=js,
                                  reduced_motion="no-preference")
    try:
        page = context.new_page()
        reach(page, base_url, "en", "errors-missing", js)
        links = page.locator("#error-summary a")
        hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
        assert len(hrefs) >= 3
        for href in hrefs:
            page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
            page.click(f"#error-summary a[href='{href}']")
            target = href.removeprefix("#")
            assert page.evaluate("document.activeElement.id") == target
            # the question (label, or legend of a group) and its message, top in view
            # polled from here: a page without JavaScript runs no polling of its own
            # (smooth scrolling may take a moment to settle)
            shown = None
            for _ in range(50):
                shown = page.evaluate(IN_VIEW, target)
                if shown["ok"]:
                    break
                page.wait_for_timeout(100)
            assert shown["ok"], (href, shown)
        screenshot(page, SHOTS / f"a11y-error-link-{width}-{'js' if js else 'nojs'}.png")
    finally:
        context.close()


# --- printing ------------------------------------------------------------------------------

# US Letter less the page margins of the print style sheet (14 mm each side), in CSS px.
PRINT_WIDTH = 8.5 * 96 - 2 * 14 / 25.4 * 96
OVERFLOW = """(width) => {
  const out = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if (r.right > width + 0.5 || r.left < -0.5) out.push(el.outerHTML.slice(0, 120));
  }
  return out;
}"""
NOT_BLACK = """() => {
  const out = [];
  for (const el of document.querySelectorAll('body *')) {
    const own = Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own || el.getClientRects().length === 0) continue;
    const c = getComputedStyle(el).color;
    if (c !== 'rgb(0, 0, 0)') out.push(c + ' ' + el.outerHTML.slice(0, 100));
  }
  return out;
}"""
LONG_ID = "EXPEDIENTE" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" * 2  # nowhere to break


@pytest.mark.parametrize("lang", ["es", "en"])
@pytest.mark.parametrize("where", ["printable", "calculator", "printable-compare"])
def test_the_printout_fits_the_paper_and_is_black_on_white(browser, base_url, lang,  # noqa: F811
                                                           where):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{base_url}/?lang={lang}")
        person = {**EX4, "compare": STRICT} if where == "printable-compare" else EX1
        fill_at_once(page, {**person, "average_compensation": "999999999999.99",
                    "participant_id": LONG_ID, "as_of": AS_OF}, lang)
        page.click("#calc button.primary")
        page.wait_for_selector("#print-link")
        if where.startswith("printable"):
            page.click("#print-link")
            page.wait_for_selector("main.document")
        page.emulate_media(media="print")
        pdf = page.pdf(prefer_css_page_size=True)
        (SHOTS / f"a11y-print-{where}-{lang}.pdf").write_bytes(pdf)
        # The page laid out at the paper's printable width, with the print styles.
        page.set_viewport_size({"width": int(PRINT_WIDTH), "height": 1000})
        assert page.locator("#monthly-amount").is_visible()
        if where == "printable-compare":
            assert page.locator("#comparison-table").is_visible()
        assert page.evaluate(OVERFLOW, PRINT_WIDTH) == []
        assert page.evaluate(NOT_BLACK) == []
        assert page.evaluate("getComputedStyle(document.body).backgroundColor") in (
            "rgb(255, 255, 255)", "rgba(0, 0, 0, 0)")
        screenshot(page, SHOTS / f"a11y-print-{where}-{lang}.png", full_page=True)
    finally:
        context.close()


# --- the states added with the stories (a block of its own: few page loads) ---------------

# name: (what is typed, the date typed in the scenario panel afterwards)
STORY_STATES = {
    # still working: the plain headline, the separation rows with their own warnings
    # and a typed date, reached by post/redirect/get
    "in-service-typed-date": ({**EX1, "separation_date": "", "creditable_service_years": "12",
                               "birth_date": "1960-01-01"}, "15/08/2028"),
    # eligible since 1992: the past-months sentence, the start rows from today
    "eligible-for-decades": ({**EX11, "birth_date": "1934-04-20", "entry_date": "1958-03-01",
                              "separation_date": "1980-06-30", "creditable_service_years": "22",
                              "average_compensation": "9000"}, "31/12/2027"),
}


@pytest.mark.parametrize("lang", ["es", "en"])
@pytest.mark.parametrize("state", list(STORY_STATES))
def test_the_story_states_have_no_wcag_2_1_aa_violation(browser, base_url, state,  # noqa: F811
                                                         lang):
    """One page per state and language, checked at 1280 and at 375 px."""
    values, typed = STORY_STATES[state]
    context = browser.new_context(viewport=VIEWPORTS["1280"])
    try:
        page = context.new_page()
        page.goto(f"{base_url}/?lang={lang}")
        fill_at_once(page, {**values, "as_of": AS_OF}, lang)
        page.click("#calc button.primary")
        page.wait_for_selector("#result-title")
        page.fill("#f-scenario_date", typed)
        # the answer's address, at the typed date's row (#fila-escrita)
        with page.expect_navigation(url=re.compile(r"/resultado/[^/#]+(#fila-escrita)?$"),
                                   wait_until="domcontentloaded"):
            page.click("form.scenario-date button[type=submit]")
        assert page.locator("tr.typed").count() >= 1
        check_title(page, "result")
        for width in VIEWPORTS:
            page.set_viewport_size(VIEWPORTS[width])
            A11Y_SHOTS.mkdir(parents=True, exist_ok=True)
            screenshot(page, A11Y_SHOTS / f"{state}-{lang}-{width}-js.png",
                            full_page=True)
            violations = axe_violations(page)
            assert violations == [], describe(violations)
    finally:
        context.close()
