"""Dates in three boxes (día, mes, año): GOV.UK's memorable-date pattern,
the one component of the public calculator and of the workbench's
application (web/lenient.py, templates/_date_input.html).

Each test is written as the attack that the single date box failed: "03/07/1991"
asked back in the workbench with no way to answer, "3 de julio de 1991"
refused, a chosen date shown back as "1991-07-03". In three boxes a date has
one reading; the month box takes a number or the month's name; a date that
cannot be read gets one message that names its box, and the boxes show what
was typed. Plain form posts through the test client (what a browser without
JavaScript does), in Spanish and English; the browser walks are in
test_web_date_boxes_browser.py.
"""

from __future__ import annotations

import re
import warnings
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import diferida
from diferida.i18n import fmt_date
from diferida.web import lenient
from diferida.web.labels import labels

from .conftest import examples
from .test_web_htmlcheck import problems
from .test_web_pages import error_next_to, text_of
from .workbench_helpers import APPLICATION, csrf_of, sign_in, workbench_app

AS_OF = "2026-11-29"
# a general employee's facts; every date typed in its boxes
FACTS = {"creditable_service_years": "22", "average_compensation": "30000.00",
         "group": "general", "refund_requested": "false"}


def boxes(name: str, day: str, month: str, year: str) -> dict[str, str]:
    return {f"{name}-day": day, f"{name}-month": month, f"{name}-year": year}


def typed(birth=None, entry=None, separation=("30", "6", "2010"),
          as_of=("29", "11", "2026"), lang="es") -> dict[str, str]:
    """The facts with every date in its boxes. By default the 10th of May 1970
    and the 1st of July 1988, typed in numbers on the Spanish page and with
    the month's name on the English one (where numbers of 12 or less for
    both the day and the month are asked: the month-first guard)."""
    words = lang == "en"
    birth = birth or ("10", "May" if words else "5", "1970")
    entry = entry or ("1", "July" if words else "7", "1988")
    return {**FACTS, **boxes("birth_date", *birth), **boxes("entry_date", *entry),
            **boxes("separation_date", *separation), **boxes("as_of", *as_of)}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # starlette's notice about its test client
        from fastapi.testclient import TestClient

    from diferida.server import create_app
    from diferida.service.settings import Settings

    db = tmp_path_factory.mktemp("date-boxes") / "web.db"
    with TestClient(create_app(Settings(database_url=f"sqlite:///{db}",
                                        rate_limit_public="off"))) as c:
        yield c


def data_read(html: str) -> str:
    m = re.search(r'id="data-read">(.*?)</dl>', html, flags=re.S)
    assert m, "no «Datos considerados» on the page"
    return text_of(m.group(1))


def box_value(html: str, name: str, part: str) -> str:
    m = re.search(rf'<input id="f-{name}-{part}" name="{name}-{part}"[^>]*value="([^"]*)"', html)
    assert m, f"no box {name}-{part}"
    return m.group(1)


def invalid_boxes(html: str, name: str) -> list[str]:
    return [p for p in lenient.PARTS
            if re.search(rf'<input id="f-{name}-{p}"[^>]*aria-invalid="true"', html)]


# ---- the month box: every form of every month -----------------------------------------

# sorted: xdist's workers must collect the same tests in the same order
MONTH_FORMS = [(number, form) for number, words in sorted(lenient.MONTH_WORDS.items())
               for word in sorted(words)
               for form in sorted({word, word.upper(), word.capitalize(), word + "."})] + [
    (number, form) for number in range(1, 13) for form in (str(number), f"{number:02d}")]


@pytest.mark.parametrize("number, form", MONTH_FORMS)
def test_every_form_of_every_month_is_read_as_that_month(number, form):
    m = labels("es")["lenient"]
    iso, error, bad = lenient.read_boxes(("3", form, "1991"), "birth_date", m)
    assert (iso, error, bad) == (date(1991, number, 3).isoformat(), None, ())


@pytest.mark.parametrize("form, number", [("Sétiembre", 9), ("SEPTIEMBRE", 9),
                                          ("  julio ", 7), ("Jul.", 7), ("dic", 12),
                                          ("DEC", 12), ("ágosto", 8), ("Marzo", 3)])
def test_a_month_name_is_read_in_any_case_with_or_without_accents(client, form, number):
    r = client.post("/calcular/fragmento", data={**typed(entry=("1", form, "1988")),
                                                 "lang": "es"})
    assert r.status_code == 200
    assert fmt_date(date(1988, number, 1), "es") in data_read(r.text)
    assert box_value(r.text, "entry_date", "month") == form.strip() or form != form.strip()


# ---- the analyst's date: "03/07/1991" has one reading in boxes ------------------------

@pytest.mark.parametrize("lang, month", [("es", "07"), ("es", "julio"), ("en", "July"),
                                         ("en", "7")])
def test_03_07_1991_in_the_boxes_is_the_3rd_of_july(client, lang, month):
    """Day first, or the month by its name: nothing is asked. On the English
    page 03 / 7 / 1991 is asked (the month-first guard: March 7 or July 3),
    and once "July 3" is chosen it is the 3rd of July, its month written by
    its name in the boxes."""
    data = {**typed(entry=("03", month, "1991"), lang=lang), "lang": lang}
    r = client.post("/calcular", data=data)
    asked = (lang, month) == ("en", "7")
    shown = ["3", "July", "1991"] if asked else ["03", month, "1991"]
    if asked:
        assert r.status_code == 200, text_of(r.text)[:500]
        assert 'id="data-read"' not in r.text  # no answer of a guessed date
        assert "March 7, 1991 or July 3, 1991?" in text_of(r.text)
        r = client.post("/calcular", data={**data, lenient.CHOICE: "entry_date:1991-07-03"})
    assert r.status_code == 200, text_of(r.text)[:500]
    assert fmt_date(date(1991, 7, 3), lang) in data_read(r.text)
    assert "pick:" not in r.text and "date-choice" not in r.text
    # the boxes show what was typed (or chosen), never a date rewritten as 1991-07-03
    assert [box_value(r.text, "entry_date", p) for p in lenient.PARTS] == shown
    assert "1991-07-03" not in r.text
    expected = diferida.evaluate({"birth_date": "1970-05-10", "entry_date": "1991-07-03",
                                  "separation_date": "2010-06-30", "as_of": AS_OF, **FACTS},
                                 lang=lang)
    assert expected.headline.split(":")[0][:30] in text_of(r.text) or (
        expected.status in r.text)
    assert problems(r.text) == []


# ---- one message per date, naming its box --------------------------------------------

@pytest.mark.parametrize("lang, parts, says, bad", [
    ("es", ("3", "7", "91"), "El año de la fecha de nacimiento debe tener 4 cifras", ["year"]),
    ("en", ("3", "7", "91"), "The year of the date of birth must have 4 digits", ["year"]),
    ("es", ("31", "02", "1991"),
     "El día de la fecha de nacimiento debe ir del 1 al 28: febrero de 1991 tiene 28 días",
     ["day"]),
    ("en", ("31", "feb", "1991"),
     "The day of the date of birth must be from 1 to 28: February 1991 has 28 days", ["day"]),
    ("es", ("29", "2", "1900"),
     "El día de la fecha de nacimiento debe ir del 1 al 28: febrero de 1900 tiene 28 días",
     ["day"]),
    ("es", ("31", "abril", "1970"), "abril de 1970 tiene 30 días", ["day"]),
    ("es", ("32", "1", "1970"), "El día de la fecha de nacimiento debe ser un número del 1 al 31",
     ["day"]),
    ("es", ("0", "1", "1970"), "El día de la fecha de nacimiento debe ser un número del 1 al 31",
     ["day"]),
    ("es", ("3", "13", "1970"),
     "El mes de la fecha de nacimiento debe ser un número del 1 al 12 o el nombre del mes",
     ["month"]),
    ("en", ("3", "Jly", "1970"), "'Jly' is not a month", ["month"]),
    ("es", ("3", "", "1970"), "La fecha de nacimiento debe incluir el mes", ["month"]),
    ("en", ("", "7", ""), "The date of birth must include a day and a year", ["day", "year"]),
    ("es", ("3 de julio de 1991", "", ""),
     "Escriba la fecha de nacimiento en sus tres casillas", ["day"]),
    ("es", ("03/07/1991", "", ""), "Escriba la fecha de nacimiento en sus tres casillas",
     ["day"]),
    ("es", ("3", "7", "19911"), "El año de la fecha de nacimiento debe tener 4 cifras", ["year"]),
    ("es", ("3", "7", "0000"), "El año de la fecha de nacimiento debe tener 4 cifras", ["year"]),
])
def test_a_date_that_cannot_be_read_has_one_message_naming_its_box(client, lang, parts, says,
                                                                    bad):
    r = client.post("/calcular", data={**typed(birth=parts, lang=lang), "lang": lang})
    assert r.status_code == 422  # nothing calculated
    message = error_next_to(r.text, "birth_date")
    assert says in message
    assert message.count("✗") == 1  # one message for the date
    summary = text_of(r.text[:r.text.index('id="calc"')])
    assert says in summary
    # the boxes in error, and the summary's link to the first of them
    assert invalid_boxes(r.text, "birth_date") == bad
    assert f'href="#f-birth_date-{bad[0]}"' in r.text
    # what was typed is shown back as typed
    assert [box_value(r.text, "birth_date", p) for p in lenient.PARTS] == [
        p.replace("'", "&#39;") for p in parts]
    assert problems(r.text) == []


def test_an_empty_required_date_is_named_and_an_empty_optional_one_is_absent(client):
    r = client.post("/calcular", data={**typed(birth=("", "", ""), separation=("", "", "")),
                                       "lang": "es"})
    assert r.status_code == 422
    assert "Fecha de nacimiento" in text_of(r.text[:r.text.index('id="calc"')])
    assert error_next_to(r.text, "birth_date")
    assert not error_next_to(r.text, "separation_date")
    assert 'href="#f-birth_date-day"' in r.text


def test_a_box_longer_than_a_value_is_refused_naming_the_date(client):
    r = client.post("/calcular", data={**typed(lang="en"), "birth_date-month": "x" * 500,
                                       "lang": "en"})
    assert r.status_code == 422
    assert error_next_to(r.text, "birth_date")
    assert invalid_boxes(r.text, "birth_date") == ["month"]
    assert "x" * 500 not in r.text


def test_no_ask_back_is_left_on_the_calculator_form(client):
    """The old single box's choice buttons ("pick:…") are gone: a post
    that names one is calculated as posted, the boxes as typed."""
    r = client.post("/calcular", data={**typed(entry=("3", "7", "1991")), "lang": "es",
                                       "action": "pick:entry_date:1991-03-07"})
    assert r.status_code == 200
    assert fmt_date(date(1991, 7, 3), "es") in data_read(r.text)


@pytest.mark.parametrize("lang, says", [
    ("es", "«03/07/1991» puede ser el 3 de julio de 1991 o el 7 de marzo de 1991"),
    ("en", "'03/07/1991' may be July 3, 1991 or March 7, 1991")])
def test_a_whole_date_with_two_readings_is_refused_never_guessed(client, lang, says):
    """A client without the boxes that posts the date whole: one reading is
    read ("1991-07-03", "25/05/1970"); two are refused, and nothing is asked."""
    data = {**typed(lang=lang), "lang": lang}
    for part in lenient.PARTS:
        del data[f"entry_date-{part}"]
    r = client.post("/calcular", data={**data, "entry_date": "03/07/1991"})
    assert r.status_code == 422
    assert says in error_next_to(r.text, "entry_date")
    assert "pick:" not in r.text
    for whole, day in (("1991-07-03", date(1991, 7, 3)), ("25/05/1970", date(1970, 5, 25))):
        r = client.post("/calcular", data={**data, "entry_date": whole})
        assert r.status_code == 200
        assert fmt_date(day, lang) in data_read(r.text)


def test_the_answers_own_page_and_its_printout_keep_the_boxes_as_typed(client):
    r = client.post("/calcular", data={**typed(entry=("03", "julio", "1991")), "lang": "es"},
                    follow_redirects=False)
    assert r.status_code == 303
    page = client.get(r.headers["location"]).text
    assert [box_value(page, "entry_date", p) for p in lenient.PARTS] == ["03", "julio", "1991"]
    printed = client.get(r.headers["location"] + "/imprimir").text
    assert 'name="entry_date-month" value="julio"' in printed  # "Volver" carries the boxes
    assert "3 de julio de 1991" in text_of(printed)


# ---- the property: any valid date, typed as numbers or month names -------------------

@settings(max_examples=examples(60), deadline=None)
@given(day=st.dates(min_value=date(1900, 1, 1), max_value=date(2026, 11, 29)),
       style=st.sampled_from(["number", "padded", "name"]),
       lang=st.sampled_from(["es", "en"]), data=st.data())
def test_any_valid_date_typed_in_the_boxes_is_read_as_that_date(client, day, style, lang,
                                                                 data):
    if style == "name":
        word = data.draw(st.sampled_from(lenient.MONTH_WORDS[day.month]))
        month = data.draw(st.sampled_from([word, word.upper(), word.title(), word + "."]))
    else:
        month = f"{day.month:02d}" if style == "padded" else str(day.month)
    d_text = f"{day.day:02d}" if style == "padded" else str(day.day)
    # as the calculator's separation date, the date of its own box
    data = {**typed(separation=(d_text, month, str(day.year)), entry=("1", "1", "1899"),
                    birth=("1", "1", "1880")), "creditable_service_years": "1", "lang": lang}
    r = client.post("/calcular/fragmento", data=data)
    assert r.status_code == 200
    if lang == "en" and style != "name" and day.day != day.month and day.day <= 12:
        # the month-first guard asks, with both readings; the person chooses
        # the date the boxes say
        other = date(day.year, day.day, day.month)
        assert f"{fmt_date(other, lang)} or {fmt_date(day, lang)}?" in text_of(r.text)
        assert 'id="data-read"' not in r.text
        r = client.post("/calcular/fragmento", data={
            **data, lenient.CHOICE: f"separation_date:{day.isoformat()}"})
        assert r.status_code == 200
    assert 'id="error-summary"' not in r.text, text_of(r.text)[:400]
    read = lenient.read_boxes((d_text, month, str(day.year)), "separation_date",
                              labels(lang)["lenient"])
    assert read == (day.isoformat(), None, ())
    assert fmt_date(day, lang) in data_read(r.text), (d_text, month, day)


# ---- the workbench's application: the same boxes ------------------------------------

@pytest.fixture(params=["sqlite", "postgresql"])
def workbench(request, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")


    with workbench_app(request.param, tmp_path) as (app, c):
        sign_in(c, "ana")
        yield c, csrf_of(c.get("/analista/nuevo").text)


def application(**dates: tuple[str, str, str]) -> dict[str, str]:
    """rules §8 example 1 as the analyst types it: each date in its boxes."""
    out = {k: v for k, v in APPLICATION.items() if not k.endswith("_date") and k != "as_of"}
    for name in lenient.ALL_DATE_FIELDS:
        iso = APPLICATION.get(name, "")
        parts = dates.get(name) or ((str(int(iso[8:])), str(int(iso[5:7])), iso[:4])
                                   if iso else ("", "", ""))
        out.update(boxes(name, *parts))
    return out


def test_the_analyst_types_03_07_1991_and_the_workbench_reads_the_3rd_of_july(workbench):
    """The attack: "03/07/1991" was asked back with no way to answer and
    "3 de julio de 1991" refused; in the boxes both are the 3rd of July."""
    c, token = workbench
    for month in ("07", "julio", "JUL"):
        form = application(entry_date=("03", month, "1991"),
                           application_date=("03", "07", "2026"))
        r = c.post("/analista/nuevo", data={**form, "action": "preview", "csrf_token": token})
        assert r.status_code == 200, text_of(r.text)[:600]
        expected = diferida.evaluate({**{k: APPLICATION[k] for k in (
            "birth_date", "separation_date", "creditable_service_years", "average_compensation",
            "group", "refund_requested", "as_of")}, "entry_date": "1991-07-03",
            "participant_id": "W-0001"}, lang="es")
        assert expected.headline in text_of(r.text)
        assert [box_value(r.text, "entry_date", p) for p in lenient.PARTS] == ["03", month,
                                                                                "1991"]
        assert "¿" not in error_next_to(r.text, "entry_date")
    r = c.post("/analista/nuevo", data={**form, "action": "save", "csrf_token": token},
               follow_redirects=False)
    assert r.status_code == 303
    case = c.get(r.headers["location"]).text
    assert "3 de julio de 1991" in text_of(case) and "3 de julio de 2026" in text_of(case)
    # the correction form opens with the stored dates in their boxes
    number = re.match(r"^/analista/casos/(\d+)", r.headers["location"]).group(1)
    again = c.get(f"/analista/casos/{number}/corregir").text
    assert [box_value(again, "application_date", p) for p in lenient.PARTS] == [
        "03", "07", "2026"]


@pytest.mark.parametrize("field, parts, says, bad", [
    ("birth_date", ("10", "5", "70"), "El año de la fecha de nacimiento debe tener 4 cifras",
     ["year"]),
    ("application_date", ("31", "02", "2026"),
     "El día de la fecha de solicitud debe ir del 1 al 28: febrero de 2026 tiene 28 días",
     ["day"]),
    ("entry_date", ("1", "", "1988"), "La fecha de ingreso al Sistema debe incluir el mes",
     ["month"]),
])
def test_the_workbench_names_the_box_of_a_date_it_cannot_read(workbench, field, parts, says,
                                                               bad):
    c, token = workbench
    form = application(**{field: parts})
    for action in ("preview", "save"):
        r = c.post("/analista/nuevo", data={**form, "action": action, "csrf_token": token},
                   follow_redirects=False)
        assert r.status_code == 422
        assert says in error_next_to(r.text, field)
        assert error_next_to(r.text, field).count("✗") == 1
        assert invalid_boxes(r.text, field) == bad
        assert f'href="#f-{field}-{bad[0]}"' in r.text
        assert [box_value(r.text, field, p) for p in lenient.PARTS] == list(parts)


def test_the_api_keeps_its_format_the_boxes_are_the_pages_only(client):
    """The API takes YYYY-MM-DD only: a day/month/year text is refused, and
    the page's box names are unknown fields there, never read."""
    strict = {"birth_date": "1970-05-10", "entry_date": "1988-07-01",
              "separation_date": "2010-06-30", "as_of": AS_OF, **FACTS}
    assert client.post("/api/v1/determinations", json=strict).status_code == 200
    r = client.post("/api/v1/determinations", json={**strict, "birth_date": "10/05/1970"})
    assert r.status_code == 422
    assert [e["code"] for e in r.json()["errors"]] == ["not_a_date"]
    del strict["birth_date"]
    r = client.post("/api/v1/determinations", json={**strict, **boxes("birth_date", "10", "5",
                                                                       "1970")})
    assert r.status_code == 422
    codes = {(e["field"], e["code"]) for e in r.json()["errors"]}
    assert ("birth_date", "missing") in codes
    assert {f for f, c in codes if c != "missing"} == {
        "birth_date-day", "birth_date-month", "birth_date-year"}


def test_a_form_with_every_box_typed_is_kept_for_its_answers_page(client):
    """Three boxes a date: the whole form, every box and the scenario
    panel's date typed, is within what one kept answer holds (web/drafts.py)."""
    from diferida.web import drafts, forms

    inputs = forms.KNOWN - set(lenient.DATE_FIELDS)
    assert len(inputs) + 1 <= drafts.MAX_VALUES
    data = {**typed(), **boxes("requested_start_date", "1", "jun", "2030"),
            "participant_id": "P-1", "deferred_right_1960": "", "svc_years": "",
            "svc_months": "", "rules": "article19", "compare": ""}
    assert set(data) | {"lang"} >= inputs | {"lang"}
    r = client.post("/calcular/escenarios", data={**data, "scenario_date": "15/08/2031",
                                                  "lang": "es"}, follow_redirects=False)
    assert r.status_code == 303
    page = client.get(r.headers["location"]).text
    assert box_value(page, "requested_start_date", "month") == "jun"
