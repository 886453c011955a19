"""The public calculator for a former employee (issue: the public calculator):
numbers and dates typed as people have them, the answer kept on Back and
reload without personal data in any address, "estimado" wherever the page
speaks of the amounts, and only the person's own questions in view."""

from __future__ import annotations

import re
import warnings
from decimal import Decimal

import pytest

import diferida
from diferida.web import lenient
from diferida.web.drafts import Drafts
from diferida.web.labels import labels

from .conftest import AS_OF
from .test_web_pages import EXAMPLE_1, text_of
from .worked_examples import ONE


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    from diferida.server import create_app
    from diferida.service.settings import Settings

    db = tmp_path_factory.mktemp("public") / "web.db"
    with TestClient(create_app(Settings(database_url=f"sqlite:///{db}"))) as c:
        yield c


def engine(**changes) -> diferida.Determination:
    p = {k: v for k, v in {**EXAMPLE_1, **changes}.items() if v is not None}
    return diferida.evaluate(p, as_of=AS_OF)


# ---- numbers and dates as people write them ------------------------------------

@pytest.mark.parametrize("typed, read", [
    ("$30,000", "30000"), ("30,000", "30000"), ("30000.50", "30000.50"),
    ("$ 30,000.50", "30000.50"), ("1,234,567.89", "1234567.89"), ("30000", "30000"),
])
def test_compensation_is_read_as_written_on_a_statement(client, typed, read):
    assert lenient.read_money(typed, labels("es")["lenient"]) == (read, None)
    page = text_of(client.post("/calcular", data={**EXAMPLE_1,
                                                  "average_compensation": typed}).text)
    expected = engine(average_compensation=read).annual_amount
    assert f"${expected:,.2f}" in page


@pytest.mark.parametrize("typed, error", [
    ("30.000,50", "la coma solo puede separar miles"),
    ("30,00", "la coma solo puede separar miles"),
    ("treinta mil", "no es una cantidad"),
])
def test_compensation_that_cannot_be_read_is_named_not_guessed(client, typed, error):
    r = client.post("/calcular", data={**EXAMPLE_1, "average_compensation": typed})
    assert r.status_code == 422
    assert error in text_of(r.text) and f"«{typed}»" in text_of(r.text)


@pytest.mark.parametrize("typed, years, note", [
    ("22", "22", None), ("22.5", "22.5", None), ("22 años", "22", None),
    ("22 años y 6 meses", "22.5", "como 22.5 años"),
    ("22 years and 5 months", "22.4167", "redondeó al cuarto decimal"),
])
def test_service_is_read_in_years_or_years_and_months_with_any_rounding_shown(
        client, typed, years, note):
    value, error, shown = lenient.read_service(typed, labels("es")["lenient"])
    assert (value, error) == (years, None)
    page = text_of(client.post("/calcular", data={**EXAMPLE_1,
                                                  "creditable_service_years": typed}).text)
    expected = engine(creditable_service_years=years)
    assert f"${expected.annual_amount:,.2f}" in page
    if note:
        assert note in shown and note in page
    else:
        assert shown is None


@pytest.mark.parametrize("typed, error", [
    (("0510", "", ""), "La fecha de nacimiento debe incluir el mes y el año"),
    (("10/05/1970", "", ""), "Escriba la fecha de nacimiento en sus tres casillas"),
    (("31", "02", "1970"),
     "El día de la fecha de nacimiento debe ir del 1 al 28: febrero de 1970 tiene 28 días"),
    (("10", "13", "1970"), "El mes de la fecha de nacimiento debe ser un número del 1 al 12"),
    (("10", "05", "70"), "El año de la fecha de nacimiento debe tener 4 cifras"),
])
def test_a_date_that_cannot_be_read_says_exactly_what_is_wrong(client, typed, error):
    boxes = dict(zip(("birth_date-day", "birth_date-month", "birth_date-year"), typed,
                     strict=True))
    r = client.post("/calcular", data={**{k: v for k, v in EXAMPLE_1.items()
                                           if k != "birth_date"}, **boxes})
    assert r.status_code == 422
    page = text_of(r.text)
    assert error in page and "Es obligatori" not in page


def test_dates_are_typed_in_three_boxes_and_a_whole_date_of_one_reading_is_read(client):
    for typed in ("25/05/1970", "25-5-1970", "25.05.1970", "1970-05-25"):
        assert lenient.read_date(typed, labels("en")["lenient"]) == ("1970-05-25", None)
    html = client.get("/").text
    assert 'type="date"' not in html
    # the day, the month and the year each in its box, their order said with
    # an example: nothing to ask back on the Spanish page (day first)
    assert ("Día, mes y año: por ejemplo, 3 11 1963 para el 3 de noviembre de 1963"
            in text_of(html))
    for part in ("day", "month", "year"):
        assert f'id="f-birth_date-{part}"' in html
    page = text_of(client.post("/calcular", data={
        **{k: v for k, v in EXAMPLE_1.items() if k not in ("entry_date", "birth_date")},
        "birth_date-day": "10", "birth_date-month": "mayo", "birth_date-year": "1970",
        "entry_date-day": "1", "entry_date-month": "7", "entry_date-year": "1988"}).text)
    assert "10 de mayo de 1970" in page and "1 de julio de 1988" in page
    assert ONE.annual_shown in page


def test_files_and_the_api_keep_the_strict_formats(client):
    r = client.post("/api/v1/determinations",
                    json={**EXAMPLE_1, "average_compensation": "$30,000"})
    assert r.status_code == 422
    with pytest.raises(diferida.InputError):
        engine(birth_date="10/05/1970")


# ---- the answer survives Back and reload, with no personal data in its address ----

def test_calculating_redirects_to_the_answers_own_page_without_personal_data(client):
    r = client.post("/calcular", data={**EXAMPLE_1, "participant_id": "Ana Marker"},
                    follow_redirects=False)
    assert r.status_code == 303
    location = r.headers["location"]
    assert re.fullmatch(r"/resultado/[A-Za-z0-9_-]{22}", location)
    for value in ("1970", "30000", "Ana", "Marker"):
        assert value not in location
    for _ in range(2):  # reload: the same answer
        page = text_of(client.get(location).text)
        assert ONE.annual_shown in page and "Ana Marker" in page
    printout = client.get(location + "/imprimir")
    assert printout.status_code == 200 and ONE.annual_shown in text_of(printout.text)
    posted = client.post("/determinacion/imprimir", data=EXAMPLE_1, follow_redirects=False)
    assert posted.status_code == 303
    assert re.fullmatch(r"/resultado/[A-Za-z0-9_-]{22}/imprimir", posted.headers["location"])


def test_an_unknown_or_expired_answer_asks_to_calculate_again(client):
    r = client.get("/resultado/not-a-token-of-this-server")
    assert r.status_code == 404
    assert "Esa respuesta ya no está disponible" in text_of(r.text)
    clock = [0.0]
    drafts = Drafts(ttl=10, max_items=2, clock=lambda: clock[0])
    a = drafts.put({"x": "1"}, "es")
    clock[0] = 11
    assert drafts.get(a) is None
    b, c, d = (drafts.put({"x": str(i)}, "es") for i in range(3))
    assert drafts.get(b) is None and drafts.get(c) and drafts.get(d)  # at most 2 kept


def test_errors_are_shown_on_the_posted_page_and_nothing_is_remembered(client):
    r = client.post("/calcular", data={**EXAMPLE_1, "birth_date": ""},
                    follow_redirects=False)
    assert r.status_code == 422 and "location" not in r.headers


# ---- an estimate, said so; the person's questions in view ----------------------------

def test_the_public_page_and_its_printout_say_estimate_near_the_amounts(client):
    page = text_of(client.post("/calcular", data=EXAMPLE_1).text)
    assert "Resultado estimado" in page and "Estimado: Tendrá derecho" in page
    assert f"Pensión anual estimada {ONE.annual_shown}" in page
    assert f"Pensión mensual estimada {ONE.monthly_shown}" in page
    # the disclaimer comes before the amounts, not as the last small line
    assert page.index("No es una determinación") < page.index(ONE.annual_shown)
    assert "Determinación de pensión" not in page
    en = text_of(client.post("/calcular", data={**EXAMPLE_1, "lang": "en"}).text)
    assert "Estimate: Will be entitled" in en and "Estimated annual pension" in en
    printout = text_of(client.post("/determinacion/imprimir", data=EXAMPLE_1).text)
    assert printout.startswith("Estimado de pensión diferida")
    assert printout.index("No es una determinación") < printout.index(ONE.annual_shown)


def test_the_analysts_options_are_closed_and_the_1960_question_asked_only_when_it_matters(
        client):
    html = client.get("/").text
    assert re.search(r'<details class="advanced">', html)  # closed
    assert re.search(r'<div id="q-deferred_right_1960"[^>]*hidden', html)
    early = client.post("/calcular", data={**EXAMPLE_1, "birth_date": "1935-06-01",
                                           "entry_date": "1955-01-01",
                                           "separation_date": "1975-01-01",
                                           "creditable_service_years": "12"}).text
    assert not re.search(r'<div id="q-deferred_right_1960"[^>]*hidden', early)
    strict = client.post("/calcular", data={**EXAMPLE_1, "rules": "article19-strict-19_4"}).text
    assert '<details class="advanced" open>' in strict
    assert "article19-strict-19_4" in text_of(strict)  # the reading used is stated


def test_the_public_answer_lists_only_the_routes_open_now(client):
    later = text_of(client.post("/calcular", data=EXAMPLE_1).text)  # 19.1(a) opens in 2028
    assert "Reglas que ya se cumplen" not in later
    open_now = text_of(client.post("/calcular", data={**EXAMPLE_1,
                                                      "birth_date": "1960-05-10"}).text)
    assert "Reglas que ya se cumplen Regla 19.1(a)" in open_now
    # the note on rounding is with the computation, not beside the headline amounts
    assert later.index("redondeado una sola vez") > later.index("Cómo se calculó")


def test_the_page_computes_what_the_engine_computes_for_the_same_values(client):
    d = engine(creditable_service_years="22.5", average_compensation="30000.50")
    page = text_of(client.post("/calcular", data={
        **EXAMPLE_1, "creditable_service_years": "22 años y 6 meses",
        "average_compensation": "$30,000.50"}).text)
    assert f"${d.annual_amount:,.2f}" in page and f"${d.monthly_amount:,.2f}" in page
    # 30,000.50 × (1.5% × 20 + 2% × 2.5) = 30,000.50 × 0.35 = 10,500.175 -> 10,500.18
    assert d.annual_amount == Decimal("10500.18")
