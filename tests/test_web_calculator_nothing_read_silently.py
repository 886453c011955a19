"""The public calculator, round two: nothing read silently, and every row of
"Comparar fechas" a determination of the values the answer used.

- A thousands dot ("$38.500", "38.500") is refused with a message saying how
  to write the amount (the page reads a dot as the cents point, and "38.500"
  is also the strict form of $38.50: two readings, neither guessed); the
  same amount written "38,500.00", "$38,500" or "38500" is read as 38,500.
- A date is typed in three boxes (day, month, year): "11/03/1963" or
  "3/7/1991" has one reading there, and nothing is asked back; a date posted
  whole with one reading ("14/2/1971") is read too.
- "Datos considerados", every value as it was read, in words, stands next to
  the headline.
- The scenario rows use the values as read ("14/2/1971", "$45,000",
  "21 años y 3 meses"), each checked against `diferida.evaluate`.

Plain form posts through the test client (what a browser without JavaScript
does), in Spanish and English; one test in chromium with the page's script.
"""

from __future__ import annotations

import re
import warnings
from datetime import date

import pytest

import diferida
from diferida.i18n import catalog, fmt_date
from diferida.money import format_money
from diferida.web.labels import labels

from .conftest import SHOTS, screenshot
from .date_boxes import in_boxes
from .test_web_htmlcheck import problems
from .test_web_pages import error_next_to, text_of

AS_OF = "2026-11-29"

# A police officer who typed what the page suggests: a day-first date, an
# amount as on a statement, service in years and months.
OFFICER_TYPED = {
    "birth_date": "14/2/1971", "entry_date": "15/08/1992", "separation_date": "15/11/2013",
    "creditable_service_years": "21 años y 3 meses", "average_compensation": "$38,500.00",
    "group": "police", "refund_requested": "false", "as_of": AS_OF,
}
OFFICER = {  # the same values as the page reads them (rules §1's strict forms)
    "birth_date": "1971-02-14", "entry_date": "1992-08-15", "separation_date": "2013-11-15",
    "creditable_service_years": "21.25", "average_compensation": "38500.00",
    "group": "police", "refund_requested": "false", "as_of": AS_OF,
}
# Still in service: the table of separation dates.
WORKING_TYPED = {
    "birth_date": "14/2/1971", "entry_date": "20/3/1995", "separation_date": "",
    "creditable_service_years": "12 años y 6 meses", "average_compensation": "$45,000",
    "group": "general", "refund_requested": "false", "as_of": AS_OF,
}
WORKING = {
    "birth_date": "1971-02-14", "entry_date": "1995-03-20",
    "creditable_service_years": "12.5", "average_compensation": "45000",
    "group": "general", "refund_requested": "false", "as_of": AS_OF,
}
ENGINE_ERRORS = ("AAAA-MM-DD", "YYYY-MM-DD", "no es una fecha", "not a valid", "is not a date")


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # starlette's notice about its test client
        from fastapi.testclient import TestClient

    from diferida.server import create_app
    from diferida.service.settings import Settings

    db = tmp_path_factory.mktemp("web-round2") / "web.db"
    with TestClient(create_app(Settings(database_url=f"sqlite:///{db}"))) as c:
        yield c


def engine(fields: dict[str, str], lang: str = "es", **changes: str) -> diferida.Determination:
    """The core's own answer, asked directly with the strict values."""
    given = {k: v for k, v in {**fields, **changes}.items() if v != ""}
    return diferida.evaluate(given, lang=lang)


def post(client, data: dict[str, str], lang: str, url: str = "/calcular"):
    return client.post(url, data={**data, "lang": lang})


def table_rows(html: str, table_id: str) -> list[list[str]]:
    m = re.search(rf'<table class="scenario" id="{table_id}">(.*?)</table>', html, flags=re.S)
    assert m, f"no table {table_id}"
    body = re.search(r"<tbody>(.*?)</tbody>", m.group(1), flags=re.S).group(1)
    return [[text_of(c) for c in re.findall(r"<t[hd]\b[^>]*>(.*?)</t[hd]>", tr, flags=re.S)]
            for tr in re.findall(r"<tr\b[^>]*>(.*?)</tr>", body, flags=re.S)]


def day_in_words(text: str, lang: str) -> date:
    """The date at the start of a row's header ("14 de febrero de 2029 (…)",
    "February 14, 2029 (…)")."""
    months = {m.lower(): i + 1 for i, m in enumerate(labels(lang)["lenient"]["months"])}
    if lang == "es":
        m = re.match(r"(\d{1,2}) de (\w+) de (\d{4})", text)
        d, mo, y = m.group(1), m.group(2), m.group(3)
    else:
        m = re.match(r"(\w+) (\d{1,2}), (\d{4})", text)
        mo, d, y = m.group(1), m.group(2), m.group(3)
    return date(int(y), months[mo.lower()], int(d))


def check_start_rows(rows: list[list[str]], strict: dict[str, str], lang: str) -> None:
    """Each later-start row is the core's answer for that requested start."""
    assert rows
    for row in rows:
        assert not any(e in " ".join(row) for e in ENGINE_ERRORS), row
        day = day_in_words(row[0], lang)
        d = engine(strict, lang, requested_start_date=day.isoformat())
        assert row[1:] == [format_money(d.annual_amount), format_money(d.monthly_amount)], row


def check_leave_rows(rows: list[list[str]], strict: dict[str, str], lang: str) -> None:
    """Each separation-date row is the core's answer for that separation
    date with the service the row shows."""
    assert rows
    c = catalog(lang)
    for row in rows:
        assert not any(e in " ".join(row) for e in ENGINE_ERRORS), row
        day = day_in_words(row[0], lang)
        d = engine(strict, lang, separation_date=day.isoformat(),
                   creditable_service_years=row[1], requested_start_date="")
        assert row[2].startswith(c["status"][d.status]), row
        if d.annual_amount is not None:
            assert format_money(d.annual_amount) in row[3], row
            assert format_money(d.monthly_amount) in row[3], row


# ---- money: a thousands dot is refused, saying how to write it ----------------------

@pytest.mark.parametrize("lang, says", [
    ("es", "el punto separa los centavos, no los miles. Escriba la cantidad sin punto "
           "(38500) o con comas para los miles (38,500.00)"),
    ("en", "a point separates the cents, not the thousands. Write the amount without a "
           "point (38500) or with commas for the thousands (38,500.00)"),
])
@pytest.mark.parametrize("typed", ["$38.500", "38.500", "$ 38.500"])
def test_a_thousands_dot_is_refused_saying_how_to_write_the_amount(client, lang, says, typed):
    r = post(client, {**OFFICER, "average_compensation": typed}, lang)
    assert r.status_code == 422  # no answer: never $38.50 (an annual pension of $12.27)
    message = error_next_to(r.text, "average_compensation")
    assert says in message and typed in message
    assert "$12.27" not in text_of(r.text)
    assert problems(r.text) == []


def test_several_thousands_dots_are_refused_too(client):
    r = post(client, {**OFFICER, "average_compensation": "1.234.567"}, "es")
    assert r.status_code == 422
    assert "sin punto (1234567) o con comas para los miles (1,234,567.00)" in error_next_to(
        r.text, "average_compensation")


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_same_amount_with_a_thousands_comma_or_none_is_read_as_38500(client, lang):
    """The other way: written as the message says, 38,500 is read, the amount
    is the core's; a dot before two digits is cents (its only reading)."""
    expected = engine(OFFICER, lang)
    for typed in ("$38,500.00", "38,500", "38500"):
        r = post(client, {**OFFICER, "average_compensation": typed}, lang)
        assert r.status_code == 200
        page = text_of(r.text)
        assert re.search(r'id="annual-amount">\$([\d,.]+)<', r.text).group(1) == (
            f"{expected.annual_amount:,.2f}")
        assert "$38,500.00" in page
    r = post(client, {**OFFICER, "average_compensation": "38.50"}, lang)
    cents = engine(OFFICER, lang, average_compensation="38.50")
    assert re.search(r'id="annual-amount">(\$[\d,.]+)<', r.text).group(1) == format_money(
        cents.annual_amount)
    # the details considered say it in words, next to the headline
    assert "$38.50" in text_of(re.search(r'id="data-read">(.*?)</dl>', r.text,
                                         flags=re.S).group(1))


# ---- dates: three boxes, one reading (test_web_date_boxes.py has the rest) --------

@pytest.mark.parametrize("lang, field, parts, iso", [
    ("es", "birth_date", ("11", "03", "1963"), "1963-03-11"),
    ("en", "birth_date", ("3", "November", "1963"), "1963-11-03"),
    ("es", "entry_date", ("3", "7", "1991"), "1991-07-03"),
    ("en", "entry_date", ("3", "jul", "1991"), "1991-07-03"),
])
def test_a_date_whose_day_and_month_could_be_swapped_has_one_reading_in_its_boxes(
        client, lang, field, parts, iso):
    """Was: "11/03/1963" asked back with two buttons; in three boxes the day
    and the month are said apart, so nothing is asked and nothing guessed."""
    data = {k: v for k, v in OFFICER.items() if k != field}
    data.update(in_boxes({field: parts}))
    r = post(client, data, lang)
    assert r.status_code == 200
    assert "pick:" not in r.text
    d = engine(OFFICER, lang, **{field: iso})
    assert fmt_date(date.fromisoformat(iso), lang) in text_of(
        re.search(r'id="data-read">(.*?)</dl>', r.text, flags=re.S).group(1))
    assert re.search(r'id="annual-amount">(\$[\d,.]+)<', r.text).group(1) == (
        format_money(d.annual_amount))
    # the boxes keep what was typed
    assert f'name="{field}-month" type="text" class="date-month" value="{parts[1]}"' in r.text
    assert problems(r.text) == []


@pytest.mark.parametrize("typed", ["14/2/1971", "14.02.1971", "1971-02-14"])
def test_a_date_posted_whole_with_one_reading_is_read_and_shown_in_words(client, typed):
    r = post(client, {**OFFICER, "birth_date": typed}, "es")
    assert r.status_code == 200
    assert "pick:" not in r.text
    assert "14 de febrero de 1971" in text_of(
        re.search(r'id="data-read">(.*?)</dl>', r.text, flags=re.S).group(1))


def test_a_thirteenth_month_names_the_month_box_in_both_languages(client):
    for lang, says in (
            ("es", "El mes de la fecha de nacimiento debe ser un número del 1 al 12"),
            ("en", "The month of the date of birth must be a number from 1 to 12")):
        r = post(client, {**OFFICER, "birth_date": "10/13/1970"}, lang)
        assert r.status_code == 422
        assert says in error_next_to(r.text, "birth_date")
        assert 'href="#f-birth_date-month"' in r.text


@pytest.mark.parametrize("lang, says", [
    ("es", "«3/7/2031»: ¿3 de julio de 2031 o 7 de marzo de 2031?"),
    ("en", "'3/7/2031': July 3, 2031 or March 7, 2031?"),
])
def test_the_scenario_date_box_asks_back_too(client, lang, says):
    r = post(client, {**OFFICER, "scenario_date": "3/7/2031"}, lang, "/calcular/escenarios")
    assert says in text_of(r.text)
    assert not any("typed" in tr for tr in re.findall(r"<tr\b[^>]*>", r.text))


# ---- the details as read, next to the headline -------------------------------------

@pytest.mark.parametrize("lang, values", [
    ("es", ["14 de febrero de 1971", "15 de agosto de 1992", "15 de noviembre de 2013",
            "21.25 años (21 años y 3 meses)", "$38,500.00", "Sí, del Cuerpo de la Policía"]),
    ("en", ["February 14, 1971", "August 15, 1992", "November 15, 2013",
            "21.25 years (21 years and 3 months)", "$38,500.00", "Yes, the Police Corps"]),
])
def test_the_details_as_read_stand_next_to_the_headline_in_words(client, lang, values):
    r = post(client, OFFICER_TYPED, lang)
    assert r.status_code == 200
    html = r.text
    headline, block, amounts = (html.index('id="result-title"'), html.index('id="data-read"'),
                                html.index('id="annual-amount"'))
    assert headline < block < amounts  # right under the headline, before the amounts
    data = text_of(re.search(r'id="data-read">(.*?)</dl>', html, flags=re.S).group(1))
    assert data.startswith(labels(lang)["result"]["data"])
    for value in values:
        assert value in data, value
    assert html.count('class="data"') == 1  # said once on the page
    assert problems(html) == []


# ---- every scenario row is a determination of the values the answer used -------------

@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_later_start_rows_use_the_values_as_read(client, lang):
    r = post(client, OFFICER_TYPED, lang)
    assert r.status_code == 200
    d = engine(OFFICER, lang)
    assert re.search(r'id="annual-amount">(\$[\d,.]+)<', r.text).group(1) == format_money(
        d.annual_amount)
    rows = table_rows(r.text, "scenario-start")
    assert len(rows) == 4
    check_start_rows(rows, OFFICER, lang)
    assert day_in_words(rows[0][0], lang) == d.eligibility_date
    # the printout has the same rows
    printed = client.get(f"{r.url.path}/imprimir")
    assert printed.status_code == 200
    assert table_rows(printed.text, "scenario-start") == rows
    # the typed date of the panel too
    r = post(client, {**OFFICER_TYPED, "scenario_date": "30/06/2031"}, lang,
             "/calcular/escenarios")
    rows = table_rows(r.text, "scenario-start")
    assert len(rows) == 5 and date(2031, 6, 30) in [day_in_words(x[0], lang) for x in rows]
    check_start_rows(rows, OFFICER, lang)
    assert problems(r.text) == []


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_separation_rows_use_the_values_as_read(client, lang):
    r = post(client, {**WORKING_TYPED, "scenario_date": "30/06/2031"}, lang,
             "/calcular/escenarios")
    assert r.status_code == 200
    rows = table_rows(r.text, "scenario-leave")
    assert len(rows) >= 4
    check_leave_rows(rows, WORKING, lang)
    assert any(x[2].startswith(catalog(lang)["status"]["not_yet_eligible"]) for x in rows)
    assert "$45,000.00" in text_of(r.text)  # the assumption names the amount as read
    assert problems(r.text) == []


# ---- in chromium, with the page's script -------------------------------------------

def test_a_police_officer_types_the_pages_own_formats_in_a_browser(browser, base_url):
    """"$38,500.00", "21 años y 3 meses", dates in their three boxes (3 / 7 /
    1991 is the 3rd of July, nothing asked): the amount and every scenario
    row are the core's."""
    context = browser.new_context(base_url=base_url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        page.goto("/")
        if page.locator("details.advanced").get_attribute("open") is None:
            page.click("details.advanced > summary")
        typed = {**OFFICER_TYPED, "entry_date": "3/7/1991", "separation_date": "15/10/2012"}
        for name, value in in_boxes(typed).items():
            if name in ("group", "refund_requested"):
                page.check(f"#f-{name}-{value}")
            else:
                page.fill(f"#f-{name}", value)
        page.click("#calc button.primary")
        page.wait_for_selector("#result-title")
        assert page.locator("#error-summary").count() == 0
        strict = {**OFFICER, "entry_date": "1991-07-03", "separation_date": "2012-10-15"}
        d = engine(strict, "es")
        assert page.inner_text("#annual-amount").strip() == format_money(d.annual_amount)
        assert page.inner_text("#monthly-amount").strip() == format_money(d.monthly_amount)
        data = page.inner_text("#data-read")
        assert "3 de julio de 1991" in data and "21.25 años (21 años y 3 meses)" in data
        rows = table_rows(page.content(), "scenario-start")
        assert len(rows) == 4
        check_start_rows(rows, strict, "es")
        screenshot(page, SHOTS / "round2-officer.png", full_page=True)
    finally:
        context.close()
    assert errors == []
