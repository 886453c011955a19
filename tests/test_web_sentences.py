"""Every sentence of the public page true where it is said (issue 20, the
page's part of items 1, 3 and 10), on the page as the app serves it and on
its printout, in Spanish and in English; and once in a real browser.

* Regla 19.3 fixes when the pension may be *requested*, not that it may
  begin on a past date (rules §5): no sentence says the pension may start on
  a date before the calculation's, and the table of later start dates
  begins on that date for someone already eligible.
* Article 19 does not cover a member of Act 305-1999's savings-account
  program: the page says so and stops (no other reason, nothing "would be
  needed", no scenario panel). Every link, and every table a sentence
  names, is on the page that says it.
* The page is an estimate: it never calls itself a determination (the
  disclaimer that says it is not one aside)."""

from __future__ import annotations

import re
import warnings
from datetime import date
from html import unescape

import pytest

import diferida
from diferida.explain import cite
from diferida.i18n import catalog, fmt_date
from diferida.money import format_money
from diferida.rules import load_rules
from diferida.web import guidance
from diferida.web.labels import labels

from .conftest import SHOTS, screenshot
from .test_web_htmlcheck import problems
from .test_web_pages import text_of

AS_OF = "2026-11-29"
TODAY = date.fromisoformat(AS_OF)
BASE = {"group": "general", "refund_requested": "false", "as_of": AS_OF}
# rules §8 example 2: eligible under 19.1(b) since 15 March 2020, years before AS_OF
SINCE_2020 = {**BASE, "birth_date": "1965-03-15", "entry_date": "1985-01-15",
              "separation_date": "2012-12-31", "creditable_service_years": "27.5",
              "average_compensation": "42000.00"}
# rules §8 example 1: eligible from 10 May 2028, after AS_OF
FROM_2028 = {**BASE, "birth_date": "1970-05-10", "entry_date": "1988-07-01",
             "separation_date": "2010-06-30", "creditable_service_years": "22",
             "average_compensation": "30000.00"}
# rules §8 example 10: first entry on 2000-01-01, outside Article 19
ACT_305 = {**BASE, "birth_date": "1975-01-01", "entry_date": "2000-01-01",
           "separation_date": "2010-01-01", "creditable_service_years": "10",
           "average_compensation": "30000.00"}
# an Act 305 member still at work with 8 years: also "not separated" and
# "insufficient service" for the core, which the page must not advise on
ACT_305_AT_WORK = {**ACT_305, "entry_date": "2003-01-01", "separation_date": "",
                   "creditable_service_years": "8"}
AT_WORK = {**FROM_2028, "separation_date": "", "creditable_service_years": "8.5"}
FROZEN_SHORT = {**BASE, "birth_date": "1976-01-01", "entry_date": "1998-01-01",
                "separation_date": "2006-01-01", "creditable_service_years": "8",
                "average_compensation": "30000.00"}
POLICE = {**BASE, "birth_date": "1975-06-20", "entry_date": "1996-02-01",
          "separation_date": "2021-03-31", "creditable_service_years": "25.1667",
          "average_compensation": "36000.00", "group": "police"}

# Every kind of answer: each status, each reason, and the mixes whose
# advice differs (a refund with no separation: no table of separation dates).
EVERY_ANSWER = {
    "eligible": SINCE_2020,
    "eligible-asked-2024": {**SINCE_2020, "requested_start_date": "2024-01-01"},
    "eligible-asked-too-early": {**SINCE_2020, "requested_start_date": "2019-01-01"},
    "not-yet": FROM_2028,
    "not-yet-planned": {**FROM_2028, "separation_date": "2027-06-30"},
    "not-covered": ACT_305,
    "not-covered-at-work": ACT_305_AT_WORK,
    "at-work-short": AT_WORK,
    "at-work-refund": {**AT_WORK, "refund_requested": "true"},
    "refund": {**FROM_2028, "refund_requested": "true"},
    "frozen-short": FROZEN_SHORT,
    "police-compared": {**POLICE, "compare": "article19-strict-19_4"},
}
SEEN_ON = ("page", "printout")


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # starlette's notice about its test client
        from fastapi.testclient import TestClient

    from diferida.server import create_app
    from diferida.service.settings import Settings

    db = tmp_path_factory.mktemp("web-sentences") / "web.db"
    with TestClient(create_app(Settings(database_url=f"sqlite:///{db}"))) as c:
        yield c


def served(client, fields: dict[str, str], lang: str, where: str = "page",
           status: int = 200) -> str:
    """The calculator with the answer, or the printout of it, as served."""
    url = "/calcular" if where == "page" else "/determinacion/imprimir"
    r = client.post(url, data={**fields, "lang": lang})
    assert r.status_code == status, text_of(r.text)[:800]
    assert problems(r.text) == []
    return r.text


# ------------------------------------------------------------ reading the page

BLOCK = re.compile(r"</?(?:p|li|td|th|dt|dd|h[1-6]|caption|summary|legend|label|title|"
                   r"section|div|ul|ol|tr|table|form|header|footer|main|aside)\b[^>]*>")


def blocks(html: str) -> list[str]:
    """The visible text of the page, one entry per block (paragraph, list
    item, table cell …), so that a sentence never runs into the next cell."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    out = []
    for part in BLOCK.split(html):
        text = unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", part))).strip()
        if text:
            out.append(text)
    return out


def sentences(html: str) -> list[str]:
    return [s for b in blocks(html) for s in re.split(r"(?<=[.;])\s+", b) if s]


def dates_in(text: str, lang: str) -> list[date]:
    months = catalog(lang)["months"]
    names = "|".join(months)
    if lang == "es":
        found = re.findall(rf"\b(\d{{1,2}}) de ({names}) de (\d{{4}})", text)
        return [date(int(y), months.index(m) + 1, int(d)) for d, m, y in found]
    found = re.findall(rf"\b({names}) (\d{{1,2}}), (\d{{4}})", text)
    return [date(int(y), months.index(m) + 1, int(d)) for m, d, y in found]


# A sentence that lets the pension *start* (not be requested) on a date.
START_CLAIM = {
    "es": re.compile(r"\b(?:puede|podrá|podría|pueden|podía)\s+(?:pedir|solicitar)\s+que\s+"
                     r"(?:la pensión\s+)?(?:empiece|comience)|\b(?:puede|podrá|podría|podía)\s+"
                     r"(?:empezar|comenzar)|\b(?:empezaría|comenzaría)\b", re.IGNORECASE),
    "en": re.compile(r"\b(?:may|can|could|might)\s+(?:ask|request)\s+(?:for\s+)?(?:that\s+)?"
                     r"(?:it|the pension)\s+(?:to\s+)?(?:start|begin)|\b(?:may|can|could|might)"
                     r"\s+(?:start|begin)\b|\bwould\s+(?:start|begin)\b", re.IGNORECASE),
}


def start_claims_before(html: str, lang: str, as_of: date) -> list[str]:
    """The sentences that let the pension start on a date before `as_of`."""
    return [s for s in sentences(html) if START_CLAIM[lang].search(s)
            and any(d < as_of for d in dates_in(s, lang))]


def section(html: str, tag_and_attrs: str) -> str:
    m = re.search(rf"<{tag_and_attrs}.*?</{tag_and_attrs.split()[0]}>", html, flags=re.S)
    return m.group(0) if m else ""


def table_rows(html: str, table_id: str) -> list[list[str]]:
    m = re.search(rf'<table class="scenario" id="{table_id}">(.*?)</table>', html, flags=re.S)
    assert m, f"no table {table_id}"
    body = re.search(r"<tbody>(.*?)</tbody>", m.group(1), flags=re.S).group(1)
    return [[text_of(c) for c in re.findall(r"<t[hd]\b[^>]*>(.*?)</t[hd]>", tr, flags=re.S)]
            for tr in re.findall(r"<tr\b[^>]*>(.*?)</tr>", body, flags=re.S)]


# ---- item 1: Regla 19.3 fixes when the pension may be requested ----------------

def test_the_detector_sees_the_sentences_the_page_used_to_say():
    """The check below is worth something: it catches the old sentences."""
    old_es = "<li>Puede pedir que empiece desde el 15 de marzo de 2020 o en cualquier fecha.</li>"
    old_en = "<li>You may ask for it to start on March 15, 2020 or any later date.</li>"
    assert start_claims_before(old_es, "es", TODAY)
    assert start_claims_before(old_en, "en", TODAY)
    now_es = "<li>La pensión puede solicitarse desde el 15 de marzo de 2020: pídala ya.</li>"
    assert start_claims_before(now_es, "es", TODAY) == []
    assert start_claims_before("<p>Podrá pedir que empiece el 10 de mayo de 2028.</p>", "es",
                               TODAY) == []


@pytest.mark.parametrize("where", SEEN_ON)
@pytest.mark.parametrize("lang", ["es", "en"])
@pytest.mark.parametrize("case", ["eligible", "eligible-asked-2024", "eligible-asked-too-early",
                                  "not-yet", "not-yet-planned", "police-compared"])
def test_no_sentence_lets_the_pension_start_before_the_calculation_date(client, case, lang,
                                                                        where):
    html = served(client, EVERY_ANSWER[case], lang, where)
    assert start_claims_before(html, lang, TODAY) == []


@pytest.mark.parametrize("where", SEEN_ON)
@pytest.mark.parametrize("lang", ["es", "en"])
def test_someone_eligible_since_2020_may_request_it_now_and_from_which_date(client, lang, where):
    html = served(client, SINCE_2020, lang, where)
    since = fmt_date(date(2020, 3, 15), lang)
    start = cite(load_rules().citations["start"], lang)
    steps = text_of(section(html, 'section class="next-steps"'))
    facts = text_of(section(html, 'dl class="facts"'))
    if lang == "es":
        # a past date in the past tense: the requirements were met then
        assert (f"cumple los requisitos desde el {since}, así que, según la {start}, "
                "puede pedirla ya") in steps
        assert f"puede solicitarse desde el {since}" not in steps
        assert "no dice si se pagan meses anteriores a su solicitud" in steps
        assert "puede solicitarla ya" in facts
        assert "Puede pedir que empiece" not in text_of(html)
    else:
        assert (f"you have met the requirements since {since}, so under {start} you may ask "
                "for it now") in steps
        assert f"can be requested from {since}" not in steps
        assert "does not say whether months before your application are paid" in steps
        assert "you may request it now" in facts
        assert "ask for it to start on" not in text_of(html)


@pytest.mark.parametrize("lang", ["es", "en"])
def test_someone_not_yet_eligible_is_told_from_which_date_it_may_be_requested(client, lang):
    steps = text_of(section(served(client, FROM_2028, lang), 'section class="next-steps"'))
    since = fmt_date(date(2028, 5, 10), lang)
    if lang == "es":
        assert (f"Pida la pensión a la Junta de Retiro (Sistema de Retiro de los Empleados del "
                f"Gobierno) a partir del {since}: según la Regla 19.3, podrá solicitarla ese "
                "día") in steps
    else:
        assert (f"Ask the Retirement Board (Junta de Retiro, Government Employees Retirement "
                f"System) for the pension from {since}: under Rule 19.3 you may request it "
                "that day") in steps


@pytest.mark.parametrize("where", SEEN_ON)
@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_later_start_table_begins_on_the_calculation_date_for_someone_eligible(
        client, lang, where):
    html = served(client, SINCE_2020, lang, where)
    rows = table_rows(html, "scenario-start")
    days = [TODAY, date(2027, 11, 29), date(2028, 11, 29), date(2031, 11, 29)]
    assert [row[0].split(" (")[0] for row in rows] == [fmt_date(d, lang) for d in days]
    now = guidance.texts("scenarios", lang)["start"]["row_now"]
    assert rows[0][0] == f"{fmt_date(TODAY, lang)} ({now})"
    for row, day in zip(rows, days):  # each row the core's own answer for that start
        d = diferida.evaluate({**{k: v for k, v in SINCE_2020.items() if v},
                               "requested_start_date": day.isoformat()})
        assert d.start_date == day and not d.premature_request
        assert row[1:] == [format_money(d.annual_amount), format_money(d.monthly_amount)]


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_start_typed_before_the_calculation_date_is_refused_not_tabled(client, lang):
    r = client.post("/calcular/escenarios",
                    data={**SINCE_2020, "lang": lang, "scenario_date": "01/01/2021"})
    assert r.status_code == 200
    error = text_of(section(r.text, 'p class="error" id="e-scenario_date"'))
    assert fmt_date(TODAY, lang) in error
    rows = table_rows(r.text, "scenario-start")
    assert len(rows) == 4 and all(fmt_date(date(2021, 1, 1), lang) not in r[0] for r in rows)
    assert problems(r.text) == []


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_requested_start_before_the_calculation_date_is_reported_not_endorsed(client, lang):
    html = served(client, {**SINCE_2020, "requested_start_date": "2024-01-01"}, lang)
    facts = text_of(section(html, 'dl class="facts"'))
    assert fmt_date(date(2024, 1, 1), lang) in facts
    assert ("lo decide el Sistema de Retiro" if lang == "es"
            else "is for the Retirement System to decide") in facts


def test_the_glossary_defines_the_eligibility_date_as_a_request_date(client):
    for lang, says in (("es", "El primer día en que puede solicitar la pensión"),
                       ("en", "The first day you can request the pension")):
        page = text_of(client.get("/glosario", params={"lang": lang}).text)
        assert says in page
        assert "pedir que la pensión empiece" not in page and "ask for the pension to start" \
            not in page


# ---- item 3: nobody outside Article 19 is advised as if inside it ----------------

@pytest.mark.parametrize("where", SEEN_ON)
@pytest.mark.parametrize("lang", ["es", "en"])
@pytest.mark.parametrize("case", ["not-covered", "not-covered-at-work"])
def test_a_member_outside_article_19_is_told_so_and_nothing_more(client, case, lang, where):
    fields = EVERY_ANSWER[case]
    html = served(client, fields, lang, where)
    t = labels(lang)["result"]
    rules = load_rules()
    law = cite(rules.laws["not_covered"], lang)
    # the why: the one reason, the one fact that decides (rules §2: the entry
    # date against the cut-off of the rules data), whatever program followed
    why = re.findall(r"<li><span class=\"mark\"[^>]*>✗</span>(.*?)</li>",
                     section(html, 'div class="why"'), flags=re.S)
    assert len(why) == 1 and fmt_date(rules.not_covered_from, lang) in text_of(why[0])
    # nothing "would have been needed", no panel of other dates
    assert t["needed"] not in text_of(html)
    assert 'id="escenarios"' not in html
    # what to do: that Article 19 does not cover them, and only that block
    shipped = guidance.texts("next_steps", lang)["not_entitled"]
    steps = text_of(section(html, 'section class="next-steps"'))
    assert shipped["not_covered"]["intro"] in steps and law in steps
    for other in ("not_separated", "refund_requested", "insufficient_service"):
        assert shipped[other]["title"] not in steps, other
    assert shipped["steps"][0] not in steps  # "check the details … calculate again"
    # none of the advice the page used to give this person
    for old in ("Haría falta separarse del servicio", "Harán falta al menos",
                "Los que acredite hasta separarse también cuentan",
                "You would need to separate from service", "will be needed",
                "Service credited until separation also counts"):
        assert old not in text_of(html), old


def named_tables(html: str, lang: str) -> dict[str, str]:
    """The scenario tables a sentence of the page names, by the id of the
    heading each must have on the page: «…» in Spanish, "…" in English."""
    t = guidance.texts("scenarios", lang)
    text = text_of(html)
    quoted = "«{}»" if lang == "es" else '"{}"'
    return {anchor: t[key]["title"] for key, anchor in (("start", "scenarios-start"),
                                                        ("leave", "scenarios-leave"))
            if quoted.format(t[key]["title"]) in text}


@pytest.mark.parametrize("where", SEEN_ON)
@pytest.mark.parametrize("lang", ["es", "en"])
@pytest.mark.parametrize("case", sorted(EVERY_ANSWER))
def test_every_link_and_every_table_a_sentence_names_is_on_that_page(client, case, lang, where):
    html = served(client, EVERY_ANSWER[case], lang, where)
    ids = set(re.findall(r'\bid="([^"]+)"', html))
    for target in re.findall(r'\b(?:href|action)="([^"]*)"', html):
        path, _, anchor = unescape(target).partition("#")
        if not anchor:
            continue
        if path in ("", "/calcular/escenarios"):  # this page (the panel posts back to it)
            assert anchor in ids, target
        else:
            other = client.get(path)
            assert other.status_code == 200 and f'id="{anchor}"' in other.text, target
    for anchor, title in named_tables(html, lang).items():
        assert anchor in ids, f"names the table {title!r}, which is not on the page"


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_table_of_separation_dates_is_named_where_it_is_shown(client, lang):
    """The other side of the check above: still at work and short of
    service, the next steps point at the table, and it is there."""
    html = served(client, AT_WORK, lang)
    assert "scenarios-leave" in named_tables(html, lang)
    assert 'id="scenarios-leave"' in html


# ---- item 10: the estimate does not call itself a determination -------------------

def without_disclaimer(html: str, lang: str) -> str:
    """The page's words, less the disclaimer that says it is *not* one."""
    return text_of(html).replace(labels(lang)["page"]["informative"], " ")


DETERMINATION = re.compile(r"determinaci|determination", re.IGNORECASE)


@pytest.mark.parametrize("where", SEEN_ON)
@pytest.mark.parametrize("lang", ["es", "en"])
@pytest.mark.parametrize("case", sorted(EVERY_ANSWER))
def test_the_public_page_and_its_printout_call_it_an_estimate(client, case, lang, where):
    html = served(client, EVERY_ANSWER[case], lang, where)
    words = without_disclaimer(html, lang)
    found = [m.group(0) for m in re.finditer(r".{0,60}(?:determinaci|determination).{0,30}",
                                             words, flags=re.IGNORECASE)]
    assert found == []
    assert ("Fecha del cálculo" if lang == "es" else "Calculation date") in words


@pytest.mark.parametrize("lang, said, shown", [
    ("es", "Esta determinación no aplica esa ley.", "Este estimado no aplica esa ley."),
    ("es", "La determinación se mantiene.", "El estimado se mantiene."),
    ("es", "después de la fecha de esta determinación: el resultado",
     "después de la fecha de este cálculo: el resultado"),
    ("es", "a la fecha de separación (o de la determinación)",
     "a la fecha de separación (o del cálculo)"),
    ("en", "This determination does not apply that law.", "This estimate does not apply that law."),
    ("en", "The determination stands.", "The estimate stands."),
    ("en", "after the date of this determination (November 29, 2026)",
     "after the date of this calculation (November 29, 2026)"),
    ("en", "(or at the determination date)", "(or at the calculation date)"),
])
def test_the_cores_sentences_are_worded_as_an_estimate_with_agreement(lang, said, shown):
    from diferida.web.view import estimate_words

    assert estimate_words(said, lang) == shown


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_act_3_2013_warning_says_the_estimate_does_not_apply_that_law(client, lang):
    """The sentence the reader quoted, on the page and on the printout."""
    for where in SEEN_ON:
        warnings_box = text_of(section(served(client, SINCE_2020, lang, where),
                                       'div class="warnings"'))
        assert ("Este estimado no aplica esa ley" if lang == "es"
                else "This estimate does not apply that law") in warnings_box


@pytest.mark.parametrize("where", SEEN_ON)
@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_messages_about_the_details_do_not_say_determination_either(client, lang, where):
    # 60 years of service for someone born in 1970: longer than the age at separation
    html = served(client, {**FROM_2028, "creditable_service_years": "60"}, lang, where,
                  status=422)
    assert "60" in text_of(section(html, 'div class="error-summary"'))
    assert not DETERMINATION.search(without_disclaimer(html, lang))


# ---------------------------------------------------------- in a real browser

def test_an_act_305_member_and_someone_eligible_since_2020_in_a_browser(browser, base_url):
    from .test_web_browser import _open, calculate, fill, visible_text

    context, page, errors = _open(browser, base_url, viewport={"width": 1000, "height": 900})
    try:
        # an Act 305 member still at work: told Article 19 does not cover them, and no more
        page.goto("/")
        fill(page, {k: v for k, v in ACT_305_AT_WORK.items() if k != "as_of"}, as_of=AS_OF)
        calculate(page)
        result = visible_text(page, "#result")
        assert "El Artículo 19 no cubre su caso" in visible_text(page, "#next-steps")
        assert "Qué habría hecho falta" not in result
        assert "Haría falta separarse del servicio" not in result
        assert "Si se separa del servicio en otra fecha" not in result
        assert page.locator("#escenarios").count() == 0
        assert page.locator("#result .why li").count() == 1
        for href in page.eval_on_selector_all("a[href^='#']", "as => as.map(a => a.hash)"):
            assert page.locator(href).count() == 1, href
        screenshot(page, SHOTS / "sentences-act-305-es.png", full_page=True)

        # eligible since 15 March 2020: may request it now; nothing starts before today
        page.goto("/?lang=en")
        fill(page, {k: v for k, v in SINCE_2020.items() if k != "as_of"}, as_of=AS_OF)
        calculate(page)
        steps = visible_text(page, "#next-steps")
        assert ("you have met the requirements since March 15, 2020, so under Rule 19.3 you "
                "may ask for it now") in steps
        first = page.locator("#scenario-start tbody tr").first.inner_text()
        assert first.startswith("November 29, 2026")
        html = page.content()
        assert start_claims_before(html, "en", TODAY) == []
        assert "Calculation date" in visible_text(page, "#result")
        assert not DETERMINATION.search(without_disclaimer(html, "en"))
        screenshot(page, SHOTS / "sentences-since-2020-en.png", full_page=True)
    finally:
        context.close()
    assert errors == [], errors


# ---- rules §5 and the sentences an analyst signs, on the page ------------------

# eligible since 15 March 2020; a premature request for 1 January 2019
ASKED_TOO_EARLY = EVERY_ANSWER["eligible-asked-too-early"]
# still at work at 61 with 30 years: leaving on the calculation's date would
# be after the 55 of 19.1(b)
AT_WORK_LONG = {**BASE, "birth_date": "1965-01-01", "entry_date": "1985-01-01",
                "separation_date": "", "creditable_service_years": "30",
                "average_compensation": "42000.00"}


@pytest.mark.parametrize("where", SEEN_ON)
@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_premature_past_request_is_told_it_may_be_requested_now(client, lang, where):
    html = served(client, ASKED_TOO_EARLY, lang, where)
    facts = text_of(section(html, 'dl class="facts"'))
    headline = text_of(section(html, 'h2 id="result-title"'))
    since = fmt_date(date(2020, 3, 15), lang)
    if lang == "es":
        assert f"Cumple los requisitos desde el {since}: puede solicitarla ya." in facts
        assert "La pensión puede solicitarse desde el" not in facts
        assert f"cumple los requisitos desde el {since}; puede solicitarla ahora" in headline
        assert f"pensión diferida desde el {since}" not in headline
    else:
        assert f"The requirements have been met since {since}: you may request it now." in facts
        assert f"the requirements have been met since {since}; it may be requested now" in \
            headline
        assert f"pension since {since}" not in headline
    # the warning for a start asked for before the calculation, premature or not
    warned = text_of(section(html, 'div class="warnings"'))
    assert fmt_date(date(2019, 1, 1), lang) in warned


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_past_start_asked_for_is_said_as_asked_for(client, lang):
    html = served(client, {**SINCE_2020, "requested_start_date": "2021-01-01"}, lang)
    start = re.search(r"<dt>[^<]*</dt><dd>([^<]*)</dd></div>\s*</dl>",
                      section(html, 'dl class="facts"')).group(1)
    assert start.startswith("Pidió el 1 de enero de 2021" if lang == "es"
                            else "You asked for January 1, 2021")


@pytest.mark.parametrize("where", SEEN_ON)
@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_still_working_page_says_one_thing(client, lang, where):
    html = served(client, AT_WORK_LONG, lang, where)
    t = labels(lang)["result"]
    page = text_of(html)
    assert t["in_service_status"] in page or "in_service" in html
    # no "why not ✗ not separated" under the neutral headline
    assert catalog(lang)["reasons"]["not_separated"][1:] not in text_of(
        section(html, 'div class="why"'))
    assert "✗" not in text_of(section(html, 'div class="why"'))
    # what to do now: no "with the details written you are not entitled … check them"
    shipped = guidance.texts("next_steps", lang)["not_entitled"]
    steps = text_of(section(html, 'section class="next-steps"'))
    assert shipped["intro"] not in steps and shipped["steps"][0] not in steps
    assert t["in_service_intro"] in steps
    # someone still working never "separated" (the row of leaving on the calculation's date)
    assert ("Se separó el" if lang == "es" else "Separated on") not in page


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_minimum_applies_and_the_warnings_heading_says_they_do_not_change_it(client, lang):
    # rules §8 example 11: the 19.6 minimum is higher than the formula
    html = served(client, {**BASE, "birth_date": "1935-06-01", "entry_date": "1955-01-01",
                           "separation_date": "1975-01-01", "creditable_service_years": "12",
                           "average_compensation": "10000.00"}, lang)
    t = labels(lang)["result"]
    formula = text_of(section(html, 'table class="formula"'))
    assert t["minimum_applied"] in formula
    assert ("se paga" if lang == "es" else "is paid") not in formula
    assert t["warnings"] in text_of(html)
    stands = "se mantiene" if lang == "es" else "stands"
    assert stands not in text_of(section(html, 'div class="warnings"'))


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_2014_entrant_is_not_told_of_act_305s_savings_accounts(client, lang):
    html = served(client, {**BASE, "birth_date": "1990-01-01", "entry_date": "2014-01-01",
                           "separation_date": "2020-01-01", "creditable_service_years": "6",
                           "average_compensation": "30000.00"}, lang)
    page = text_of(html)
    assert ("programa híbrido" if lang == "es" else "hybrid program") in page
    why = text_of(section(html, 'div class="why"'))
    assert ("cuentas de ahorro" if lang == "es" else "savings-account") not in why
