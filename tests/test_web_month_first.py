"""The month-first guard (docs/web.md), over HTTP as a browser without
JavaScript posts: James, who writes the month first by habit, types his
birth date 11 / 03 / 1963 (he means November 3) and his entry date
02 / 01 / 1986 (February 1) into the English calculator's Day, Month and
Year boxes. He was answered for March 11 and January 2 with no warning
("met since March 11, 2021"); only a "month" over 12 was refused.

Now each date is written back in words beside its boxes, the hint says the
boxes' order with an example, and on the English page a date whose day and
month are both 12 or less (and differ) is asked, in one line with both
readings, before any answer is given; a choice posts it again, written one
way (the month by its name). A day equal to its month, a day over 12, a
month by its name and the Spanish page (day first) are read as typed. The
browser walks are in test_web_month_first_browser.py; the question's page
is an accessibility state of test_web_accessibility.py ("asked-month-first").
"""

from __future__ import annotations

import re
import warnings
from datetime import date

import pytest

import diferida
from diferida.i18n import fmt_date
from diferida.web import lenient

from .test_web_date_boxes import box_value, boxes, data_read
from .test_web_htmlcheck import problems
from .test_web_pages import text_of
from .workbench_helpers import APPLICATION, csrf_of, sign_in, workbench_app

AS_OF = "2026-11-29"
FACTS = {"creditable_service_years": "22", "average_compensation": "30000.00",
         "group": "general", "refund_requested": "false"}
# James's dates as he types them, and as he means them
JAMES = {**FACTS, **boxes("birth_date", "11", "03", "1963"),
         **boxes("entry_date", "02", "01", "1986"),
         **boxes("separation_date", "30", "6", "2010"), **boxes("as_of", "29", "11", "2026")}
MEANT = {**FACTS, "birth_date": "1963-11-03", "entry_date": "1986-02-01",
         "separation_date": "2010-06-30", "as_of": AS_OF}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # starlette's notice about its test client
        from fastapi.testclient import TestClient

    from diferida.server import create_app
    from diferida.service.settings import Settings

    db = tmp_path_factory.mktemp("month-first") / "web.db"
    with TestClient(create_app(Settings(database_url=f"sqlite:///{db}",
                                        rate_limit_public="off"))) as c:
        yield c


def asked(html: str) -> list[str]:
    """The question's lines, one a date."""
    return [text_of(x) for x in re.findall(r'<p id="ask-[a-z_]+">(.*?)</p>', html, re.S)]


def choices(html: str) -> list[str]:
    return re.findall(rf'<button[^>]*name="{lenient.CHOICE}" value="([^"]+)"', html)


def written_back(html: str, name: str) -> str:
    m = re.search(rf'<p class="date-read" id="r-{name}"[^>]*>(.*?)</p>', html, re.S)
    assert m, f"nothing beside the boxes of {name}"
    return text_of(m.group(1))


# ---- James on the English calculator ---------------------------------------------------

def test_james_is_asked_both_dates_before_any_answer_and_answered_for_november_3(client):
    r = client.post("/calcular", data={**JAMES, "lang": "en"}, follow_redirects=False)
    # asked, not answered: no redirect to an answer, no answer on the page
    assert r.status_code == 200
    assert 'id="result"' not in r.text and 'id="data-read"' not in r.text
    assert "since" not in text_of(r.text)
    assert asked(r.text) == [
        "Date of birth: did you mean November 3, 1963 or March 11, 1963?",
        "Date you first joined the Retirement System: did you mean February 1, 1986 or "
        "January 2, 1986?"]
    assert choices(r.text) == ["birth_date:1963-11-03", "birth_date:1963-03-11",
                               "entry_date:1986-02-01", "entry_date:1986-01-02"]
    assert "<title>Which date did you mean? – " in r.text
    # the boxes as he typed them, each date written back as the boxes say it
    assert [box_value(r.text, "birth_date", p) for p in lenient.PARTS] == ["11", "03", "1963"]
    assert written_back(r.text, "birth_date") == "Read as March 11, 1963"
    assert written_back(r.text, "entry_date") == "Read as January 2, 1986"
    assert 'id="error-summary"' not in r.text
    assert problems(r.text) == []

    # he chooses November 3: written one way in the boxes, the entry date still asked
    r = client.post("/calcular", data={**JAMES, "lang": "en",
                                       lenient.CHOICE: "birth_date:1963-11-03"},
                    follow_redirects=False)
    assert r.status_code == 200
    assert [box_value(r.text, "birth_date", p) for p in lenient.PARTS] == [
        "3", "November", "1963"]
    assert written_back(r.text, "birth_date") == "Read as November 3, 1963"
    assert asked(r.text) == ["Date you first joined the Retirement System: did you mean "
                             "February 1, 1986 or January 2, 1986?"]

    # and February 1: the answer, for the dates he meant
    chosen = {**JAMES, **boxes("birth_date", "3", "November", "1963")}
    r = client.post("/calcular", data={**chosen, "lang": "en",
                                       lenient.CHOICE: "entry_date:1986-02-01"},
                    follow_redirects=False)
    assert r.status_code == 303
    page = client.get(r.headers["location"]).text
    d = diferida.evaluate(MEANT, lang="en")
    assert (d.eligibility_date.month, d.eligibility_date.day) == (11, 3)  # his birthday
    headline = text_of(re.search(r'<h2 id="result-title".*?</h2>', page, re.S).group(0))
    assert f"since {fmt_date(d.eligibility_date, 'en')}" in headline
    assert "March 11" not in headline
    read = data_read(page)
    assert "November 3, 1963" in read and "February 1, 1986" in read
    assert asked(page) == []
    # the answer's page writes each date back beside its boxes, without a script
    assert written_back(page, "birth_date") == "Read as November 3, 1963"
    assert written_back(page, "entry_date") == "Read as February 1, 1986"
    assert written_back(page, "requested_start_date") == ""
    # its printout and its own page again: nothing asked (the boxes are written one way)
    printed = client.get(r.headers["location"] + "/imprimir").text
    assert asked(printed) == [] and "November 3, 1963" in text_of(printed)
    assert problems(page) == []


def test_the_page_scripts_fragment_and_the_printable_post_ask_too(client):
    r = client.post("/calcular/fragmento", data={**JAMES, "lang": "en"})
    assert r.status_code == 200
    assert len(asked(r.text)) == 2 and 'id="result"' not in r.text
    assert 'id="date-question-title" tabindex="-1"' in r.text
    r = client.post("/determinacion/imprimir", data={**JAMES, "lang": "en"},
                    follow_redirects=False)
    assert r.status_code == 200  # the calculator, with the question, not a printout
    assert len(asked(r.text)) == 2 and 'id="result"' not in r.text


@pytest.mark.parametrize("day, month, asks", [
    ("11", "03", True), ("1", "12", True), ("12", "1", True), ("03", "03", False),
    ("3", "03", False), ("13", "03", False), ("11", "Mar", False), ("11", "march", False),
    ("31", "12", False)])
def test_only_a_day_and_a_month_both_12_or_less_and_different_are_asked(client, day, month,
                                                                        asks):
    data = {**JAMES, **boxes("birth_date", day, month, "1963"),
            **boxes("entry_date", "1", "February", "1986"), "lang": "en"}
    r = client.post("/calcular", data=data, follow_redirects=True)
    assert r.status_code == 200
    assert bool(asked(r.text)) == asks, (day, month)
    assert ('id="data-read"' in r.text) != asks
    if asks:
        assert choices(r.text)[1] == f"birth_date:1963-{int(month):02d}-{int(day):02d}"


def test_the_spanish_page_reads_day_first_and_asks_nothing(client):
    r = client.post("/calcular", data={**JAMES, "lang": "es"}, follow_redirects=False)
    assert r.status_code == 303
    page = client.get(r.headers["location"]).text
    assert asked(page) == [] and 'id="date-question"' not in page
    assert "11 de marzo de 1963" in data_read(page)
    assert written_back(page, "birth_date") == "Se lee: 11 de marzo de 1963"
    assert written_back(page, "entry_date") == "Se lee: 2 de enero de 1986"


@pytest.mark.parametrize("lang, hint", [
    ("en", "Day, month, year — for example 3 11 1963 for November 3, 1963"),
    ("es", "Día, mes y año: por ejemplo, 3 11 1963 para el 3 de noviembre de 1963")])
def test_the_hint_beside_the_boxes_says_their_order_with_an_example(client, lang, hint):
    html = client.get(f"/?lang={lang}").text
    for name in lenient.DATE_FIELDS:
        help_text = re.search(rf'<p class="help" id="h-{name}">(.*?)</p>', html, re.S)
        assert help_text and hint in text_of(help_text.group(1)), name
        # the words written back are part of what the date's group says
        assert re.search(rf'aria-describedby="h-{name} r-{name}"', html), name
    # the page's script writes the dates back with the page's own words
    words = re.search(r"data-date-words='([^']+)'", html).group(1)
    assert ("November" if lang == "en" else "noviembre") in words


def test_a_choice_that_no_longer_matches_the_boxes_is_not_applied(client):
    """The boxes changed after the question (12 / 03 now): the old choice is
    not one of their readings; they are asked as they are."""
    r = client.post("/calcular", data={**JAMES, **boxes("birth_date", "12", "03", "1963"),
                                       "lang": "en", lenient.CHOICE: "birth_date:1963-11-03"})
    assert r.status_code == 200
    assert asked(r.text)[0] == "Date of birth: did you mean December 3, 1963 or March 12, 1963?"
    assert [box_value(r.text, "birth_date", p) for p in lenient.PARTS] == ["12", "03", "1963"]
    for bad in ("birth_date:1963-13-11", "nonsense", "as_of:1963-11-03", "x" * 500):
        r = client.post("/calcular", data={**JAMES, "lang": "en", lenient.CHOICE: bad})
        assert r.status_code == 200 and len(asked(r.text)) == 2, bad


def test_other_mistakes_are_named_while_a_date_is_asked(client):
    r = client.post("/calcular", data={**JAMES, "average_compensation": "-5", "lang": "en"})
    assert r.status_code == 422
    assert 'id="error-summary"' in r.text and len(asked(r.text)) == 2
    summary = text_of(r.text[:r.text.index('id="calc"')])
    assert "Average" in summary or "compensation" in summary.lower()
    assert "Date of birth" not in summary  # the date asked is not "missing"


def test_a_date_posted_whole_has_one_reading_and_is_not_asked(client):
    data = {k: v for k, v in JAMES.items() if not k.startswith("birth_date-")}
    r = client.post("/calcular", data={**data, "birth_date": "1963-11-03", "lang": "en",
                                       **boxes("entry_date", "1", "Feb", "1986")})
    assert r.status_code == 200 and asked(r.text) == []
    assert [box_value(r.text, "birth_date", p) for p in lenient.PARTS] == [
        "03", "November", "1963"]
    assert "November 3, 1963" in data_read(r.text)


def test_switching_a_spanish_answer_to_english_keeps_its_dates(client):
    """Typed day first on the Spanish page, the answer switched to English:
    the same dates, each month of two readings now by its name, and nothing
    asked on the answer's page or its printout."""
    r = client.post("/calcular", data={**JAMES, "lang": "es", "shown": "result",
                                       "action": "lang:en"}, follow_redirects=False)
    assert r.status_code == 303
    page = client.get(r.headers["location"]).text
    assert '<html lang="en">' in page and asked(page) == []
    assert [box_value(page, "birth_date", p) for p in lenient.PARTS] == ["11", "March", "1963"]
    assert "March 11, 1963" in data_read(page)
    assert asked(client.get(r.headers["location"] + "/imprimir").text) == []


# ---- the workbench's application ---------------------------------------------------------

@pytest.fixture
def workbench(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with workbench_app("sqlite", tmp_path) as (app, c):
            sign_in(c, "ana", lang="en")
            yield app, c, csrf_of(c.get("/analista/nuevo?lang=en").text)


def test_the_analyst_on_the_english_workbench_is_asked_before_the_answer_and_the_save(
        workbench):
    app, c, token = workbench
    form = {k: v for k, v in APPLICATION.items() if k not in lenient.ALL_DATE_FIELDS}
    form.update({**boxes("birth_date", "11", "03", "1963"),
                 **boxes("entry_date", "1", "February", "1986"),
                 **boxes("separation_date", "30", "June", "2010"),
                 **boxes("application_date", "2", "November", "2026"),
                 **boxes("as_of", "29", "November", "2026"),
                 "participant_id": "W-JAMES", "csrf_token": token, "lang": "en"})
    for action in ("preview", "save"):
        r = c.post("/analista/nuevo", data={**form, "action": action}, follow_redirects=False)
        assert r.status_code == 200, (action, text_of(r.text)[:600])
        assert asked(r.text) == ["Birth date: did you mean November 3, 1963 or March 11, "
                                 "1963?"]
        assert 'class="wb-headline"' not in r.text  # no answer of a guessed date
        assert 'formaction="/analista/nuevo#respuesta"' in r.text
        assert written_back(r.text, "birth_date") == "Read as March 11, 1963"
    assert app.state.store.count_cases() == 0  # nothing saved
    r = c.post("/analista/nuevo", data={**form, lenient.CHOICE: "birth_date:1963-11-03"})
    assert r.status_code == 200 and asked(r.text) == []
    expected = diferida.evaluate({**MEANT, "participant_id": "W-JAMES"}, lang="en")
    assert expected.headline in text_of(r.text)
    assert [box_value(r.text, "birth_date", p) for p in lenient.PARTS] == [
        "3", "November", "1963"]
    saved = {**form, **boxes("birth_date", "3", "November", "1963"), "action": "save"}
    r = c.post("/analista/nuevo", data=saved, follow_redirects=False)
    assert r.status_code == 303
    case = text_of(c.get(r.headers["location"]).text)
    assert "November 3, 1963" in case and "March 11, 1963" not in case
    # the correction form opens with the stored date written one way
    number = re.match(r"^/analista/casos/(\d+)", r.headers["location"]).group(1)
    again = c.get(f"/analista/casos/{number}/corregir?lang=en").text
    assert [box_value(again, "birth_date", p) for p in lenient.PARTS] == [
        "03", "November", "1963"]
    assert asked(again) == []


def test_the_spanish_workbench_asks_nothing(workbench):
    app, c, token = workbench
    form = {k: v for k, v in APPLICATION.items() if k not in lenient.ALL_DATE_FIELDS}
    form.update({**boxes("birth_date", "11", "03", "1963"),
                 **boxes("entry_date", "1", "2", "1986"),
                 **boxes("separation_date", "30", "6", "2010"),
                 **boxes("application_date", "2", "11", "2026"),
                 **boxes("as_of", "29", "11", "2026"), "csrf_token": token, "lang": "es",
                 "action": "preview"})
    r = c.post("/analista/nuevo", data=form)
    assert r.status_code == 200 and asked(r.text) == []
    assert written_back(r.text, "birth_date") == "Se lee: 11 de marzo de 1963"
    expected = diferida.evaluate({**MEANT, "birth_date": "1963-03-11",
                                  "entry_date": "1986-02-01", "participant_id": "W-0001"},
                                 lang="es")
    assert expected.headline in text_of(r.text)


def test_two_readings_are_the_boxes_whose_day_and_month_could_each_be_the_other():
    assert lenient.two_readings(("11", "03", "1963")) == (date(1963, 11, 3), date(1963, 3, 11))
    for parts in (("3", "3", "1963"), ("13", "3", "1963"), ("3", "mar", "1963"),
                  ("3", "11", "63"), ("0", "11", "1963"), ("3", "0", "1963"), ("", "", "")):
        assert lenient.two_readings(parts) is None, parts
