"""The web calculator's pages as the server sends them (no browser): every
state of the page is valid HTML, the path without JavaScript answers, inputs
are passed to the core as typed, and the page's own texts exist in both
languages. The browser tests are in test_web_browser.py."""

from __future__ import annotations

import re
import warnings
from html import unescape

import pytest

from diferida.web.labels import labels

from .test_web_htmlcheck import problems
from .worked_examples import ONE

AS_OF = "2026-11-29"
EXAMPLE_1 = {
    "birth_date": "1970-05-10", "entry_date": "1988-07-01", "separation_date": "2010-06-30",
    "creditable_service_years": "22", "average_compensation": "30000.00", "group": "general",
    "refund_requested": "false", "as_of": AS_OF,
}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # starlette's notice about its test client
        from fastapi.testclient import TestClient

    from diferida.server import create_app
    from diferida.service.settings import Settings

    db = tmp_path_factory.mktemp("web") / "web.db"
    app = create_app(Settings(database_url=f"sqlite:///{db}"))
    with TestClient(app) as c:
        yield c


def text_of(html: str) -> str:
    """The visible words of a page, tags removed and spaces collapsed."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip())


def error_next_to(html: str, field: str) -> str:
    m = re.search(rf'<p class="error" id="e-{field}">(.*?)</p>', html, flags=re.S)
    return text_of(m.group(1)) if m else ""


def test_the_calculator_opens_in_spanish_with_every_field_of_the_specification(client):
    r = client.get("/")
    assert r.status_code == 200
    assert '<html lang="es">' in r.text
    for name in EXAMPLE_1 | {"participant_id": "", "deferred_right_1960": "",
                             "requested_start_date": ""}:
        # a date in its three boxes (day, month, year: test_web_date_boxes.py)
        shown = [f"{name}-{p}" for p in ("day", "month", "year")] if name.endswith(
            ("_date", "as_of")) else [name]
        for box in shown:
            assert f'name="{box}"' in r.text, box
    assert "Ley 3-2013" in r.text  # rules §9 scope note, before any answer
    assert problems(r.text) == []


def test_the_calculator_opens_in_english_when_asked(client):
    r = client.get("/", params={"lang": "en"})
    assert '<html lang="en">' in r.text
    assert "Years of creditable service" in r.text
    assert "Act 3-2013" in r.text
    assert problems(r.text) == []


def test_without_javascript_the_form_posts_and_the_answer_is_on_the_same_page(client):
    r = client.post("/calcular", data={**EXAMPLE_1, "lang": "es"})
    assert r.status_code == 200
    page = text_of(r.text)
    assert ("Tendrá derecho a una pensión diferida: podrá solicitarla desde el 10 de mayo de 2028"
            in page)
    assert ONE.annual_shown in page and ONE.monthly_shown in page
    assert "Regla 19.1(a)" in page and "Regla 19.5(a)" in page
    # the form keeps the date, in its boxes (posted whole, it has one reading)
    assert 'name="birth_date-year" type="text" class="date-4" value="1970"' in r.text
    assert problems(r.text) == []


def test_the_fragment_holds_the_form_and_the_answer_for_the_script(client):
    r = client.post("/calcular/fragmento", data={**EXAMPLE_1, "lang": "en"})
    assert r.status_code == 200
    assert "<html" not in r.text
    assert 'id="calc"' in r.text and 'id="result"' in r.text
    assert ("Will be entitled to a deferred pension: it may be requested from May 10, 2028"
            in text_of(r.text))
    assert problems(r.text, fragment=True) == []


def test_bad_values_are_reported_next_to_their_fields_in_the_chosen_language(client):
    bad = {**EXAMPLE_1, "creditable_service_years": "22.123456", "average_compensation": "0",
           "birth_date": "1990-01-01"}
    es = client.post("/calcular", data={**bad, "lang": "es"})
    assert es.status_code == 422
    assert "decimales" in error_next_to(es.text, "creditable_service_years")
    assert "mayor que cero" in error_next_to(es.text, "average_compensation")
    assert "posterior a la de ingreso" in error_next_to(es.text, "birth_date")
    assert 'value="22.123456"' in es.text  # nothing typed is lost
    assert 'id="result"' not in es.text
    en = client.post("/calcular", data={**bad, "lang": "en"})
    assert "decimal places" in error_next_to(en.text, "creditable_service_years")
    assert "greater than zero" in error_next_to(en.text, "average_compensation")
    for html in (es.text, en.text):
        assert problems(html) == []


def test_a_missing_answer_to_a_required_question_is_not_defaulted(client):
    data = {k: v for k, v in EXAMPLE_1.items() if k not in ("group", "refund_requested")}
    r = client.post("/calcular", data={**data, "lang": "en"})
    assert r.status_code == 422
    assert "required" in error_next_to(r.text, "group")
    assert "required" in error_next_to(r.text, "refund_requested")
    assert 'href="#f-group-general"' in r.text  # the summary links to the question


def test_switching_language_keeps_what_was_typed_and_translates_the_answer(client):
    shown = client.post("/calcular", data={**EXAMPLE_1, "lang": "es"})
    assert 'name="shown" value="result"' in shown.text
    r = client.post("/calcular", data={**EXAMPLE_1, "lang": "es", "shown": "result",
                                       "action": "lang:en"})
    assert '<html lang="en">' in r.text
    assert 'value="30000.00"' in r.text
    assert ("Will be entitled to a deferred pension: it may be requested from May 10, 2028"
            in text_of(r.text))


def test_switching_language_before_any_answer_only_translates(client):
    r = client.post("/calcular", data={"birth_date": "1970-05-10", "lang": "es",
                                       "action": "lang:en"})
    assert r.status_code == 200
    assert '<html lang="en">' in r.text
    assert 'name="birth_date-day" type="text" class="date-2" value="10"' in r.text
    assert 'class="error"' not in r.text


@pytest.mark.parametrize(("years", "months", "value", "exact"), [
    ("12", "3", "12.25", True),
    ("10", "1", "10.0833", False),
    ("10", "2", "10.1667", False),
    ("7", "", "7", True),
])
def test_years_and_months_become_years_shown_for_the_person_to_confirm(
        client, years, months, value, exact):
    r = client.post("/calcular", data={"svc_years": years, "svc_months": months,
                                       "lang": "en", "action": "convert"})
    assert r.status_code == 200
    assert (f'id="f-creditable_service_years" name="creditable_service_years" type="text" '
            f'value="{value}"') in r.text
    note = text_of(re.search(r'id="converter-note"[^>]*>(.*?)</p>', r.text, re.S).group(1))
    assert ("= exactly" in note) is exact
    assert ("rounded to the fourth decimal" in note) is not exact
    assert 'id="result"' not in r.text  # converting is not calculating


def test_a_bad_number_of_months_is_refused_not_converted(client):
    r = client.post("/calcular", data={"svc_years": "10", "svc_months": "12", "lang": "es",
                                       "action": "convert"})
    assert "de 0 a 11" in error_next_to(r.text, "svc_months")
    assert 'name="creditable_service_years" type="text" value=""' in r.text


def test_years_and_months_typed_but_not_converted_are_pointed_out(client):
    data = {k: v for k, v in EXAMPLE_1.items() if k != "creditable_service_years"}
    r = client.post("/calcular", data={**data, "svc_years": "12", "svc_months": "3",
                                       "lang": "en"})
    assert "12 years and 3 months" in error_next_to(r.text, "creditable_service_years")


def test_only_the_rules_shipped_with_the_package_can_be_chosen(client):
    r = client.post("/calcular", data={**EXAMPLE_1, "rules": "/etc/passwd", "lang": "en"})
    assert r.status_code == 422
    assert "not one of the readings" in error_next_to(r.text, "rules")


def test_the_strict_reading_of_19_4_is_offered_and_applied(client):
    police_new = {**EXAMPLE_1, "birth_date": "1975-06-20", "entry_date": "1996-02-01",
                  "separation_date": "2021-03-31", "creditable_service_years": "25.1667",
                  "average_compensation": "36000.00", "group": "police"}
    wide = text_of(client.post("/calcular", data={**police_new, "lang": "en"}).text)
    strict = text_of(client.post("/calcular", data={**police_new, "lang": "en",
                                                    "rules": "article19-strict-19_4"}).text)
    assert ("Entitled to a deferred pension: the requirements have been met since June 20, 2025; "
            "it may be requested now") in wide
    assert "article19-strict-19_4@" in strict
    # strictly, 19.4 is closed to a new participant: 19.2 at 65 is left
    assert ("Will be entitled to a deferred pension: it may be requested from June 20, 2040"
            in strict)


@pytest.mark.parametrize(("case", "lang", "expected"), [
    # Regla 19.6: 30% × $5,000.00 = $1,500.00 beats 1.5% × $5,000.00 × 12 = $900.00;
    # a start asked for before eligibility is premature, with the earliest date given.
    ({**EXAMPLE_1, "birth_date": "1930-01-01", "entry_date": "1955-01-01",
      "separation_date": "1970-06-30", "creditable_service_years": "12",
      "average_compensation": "5000.00", "deferred_right_1960": "true",
      "requested_start_date": "1980-01-01"}, "en",
     ["Entitled to a deferred pension: the requirements have been met since January 1, 1988",
      "$1,500.00", "$125.00", "Minimum of Rule 19.6", "the minimum applies",
      "the request is premature"]),
    # rules §8 example 10: entry on 2000-01-01 is outside Article 19
    ({**EXAMPLE_1, "birth_date": "1975-01-01", "entry_date": "2000-01-01",
      "separation_date": "2010-01-01", "creditable_service_years": "10"}, "en",
     ["Not entitled to a deferred pension: Article 19 covers only members who entered the "
      "System before January 1, 2000", "savings-account program",
      "Article 19 does not cover you"]),
    # still in service and refunded: both reasons, each with what was missing
    ({k: v for k, v in {**EXAMPLE_1, "refund_requested": "true"}.items()
      if k != "separation_date"}, "es",
     ["Todavía no se ha separado", "Solicitó el reembolso de sus aportaciones",
      "Haría falta separarse del servicio",
      "Para confirmar si el reembolso se pidió y se pagó"]),
    # 30 years, separated after 55: both warnings of rules §7 are shown
    ({**EXAMPLE_1, "birth_date": "1950-01-01", "entry_date": "1985-01-01",
      "separation_date": "2012-01-31", "creditable_service_years": "30",
      "average_compensation": "40000.00"}, "en",
     ["Warnings", "may include credited prior service", "retirement annuity"]),
])
def test_each_kind_of_answer_says_what_applies_and_why(client, case, lang, expected):
    page = text_of(client.post("/calcular", data={**case, "lang": lang}).text)
    for words in expected:
        assert words in page, words


def test_the_printable_page_carries_data_result_explanation_version_and_scope(client):
    r = client.post("/determinacion/imprimir", data={**EXAMPLE_1, "lang": "es"})
    assert r.status_code == 200
    page = text_of(r.text)
    for expected in ("Estimado de pensión diferida", "10 de mayo de 1970", "$30,000.00",
                     ONE.annual_shown, ONE.monthly_shown, "Regla 19.1(a)", "article19@",
                     "Ley 3-2013", "Fecha de emisión"):
        assert expected in page, expected
    assert 'id="calc"' not in r.text  # the answer, not the calculator
    assert problems(r.text) == []


def test_the_printable_page_with_bad_values_says_what_is_wrong(client):
    r = client.post("/determinacion/imprimir", data={**EXAMPLE_1, "birth_date": "1970/05/10"})
    assert r.status_code == 422
    assert "no es una fecha" in text_of(r.text)
    assert problems(r.text) == []


def test_pages_forbid_inline_code_and_other_sites(client):
    csp = client.get("/").headers["content-security-policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp


def test_the_page_assets_are_served_and_nothing_else(client):
    for name, kind in (("web.css", "text/css"), ("web.js", "text/javascript")):
        r = client.get(f"/web/static/{name}")
        assert r.status_code == 200 and r.headers["content-type"].startswith(kind)
    assert client.get("/web/static/..%2Froutes.py").status_code == 404
    assert client.get("/web/static/labels_es.toml").status_code == 404


def _keys(d: dict, prefix: str = "") -> set[str]:
    out = set()
    for k, v in d.items():
        out |= _keys(v, f"{prefix}{k}.") if isinstance(v, dict) else {prefix + k}
    return out


def test_every_page_text_exists_in_spanish_and_in_english():
    assert _keys(labels("es")) == _keys(labels("en"))
