"""What the answer page offers besides the answer: the scenario panel (each
figure the core's own answer for that date), what to do next per status
(texts an administrator may replace), and the glossary linked from the help
of the fields. Served pages through the test client; one browser test at
phone width."""

from __future__ import annotations

import re
import shutil
import tomllib
import warnings
from datetime import date
from decimal import Decimal
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import diferida
from diferida.explain import cite
from diferida.i18n import catalog, fmt_date
from diferida.money import format_money
from diferida.rules import load_rules
from diferida.web import guidance
from diferida.web.view import estimate_words

from .conftest import SHOTS, screenshot
from .test_web_htmlcheck import problems
from .test_web_pages import text_of
from .worked_examples import ONE

AS_OF = "2026-11-29"
EXAMPLE_1 = {  # rules §8 example 1: eligible from 2028-05-10
    "birth_date": "1970-05-10", "entry_date": "1988-07-01", "separation_date": "2010-06-30",
    "creditable_service_years": "22", "average_compensation": "30000.00", "group": "general",
    "refund_requested": "false", "as_of": AS_OF,
}
# Still in service with 8.5 years: not entitled today, entitled if staying.
IN_SERVICE = {**EXAMPLE_1, "separation_date": "", "creditable_service_years": "8.5"}
EXAMPLE_8 = {**EXAMPLE_1, "birth_date": "1976-01-01", "entry_date": "1998-01-01",
             "separation_date": "2006-01-01", "creditable_service_years": "8"}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # starlette's notice about its test client
        from fastapi.testclient import TestClient

    from diferida.server import create_app
    from diferida.service.settings import Settings

    db = tmp_path_factory.mktemp("web-guidance") / "web.db"
    app = create_app(Settings(database_url=f"sqlite:///{db}"))
    with TestClient(app) as c:
        yield c


def engine(fields: dict[str, str], **changes: str) -> diferida.Determination:
    """The core's own answer, asked directly (not through the page)."""
    given = {k: v for k, v in {**fields, **changes}.items() if v != ""}
    return diferida.evaluate(given)


def table_rows(html: str, table_id: str) -> list[list[str]]:
    """The body rows of a table, each as the visible text of its cells."""
    m = re.search(rf'<table class="scenario" id="{table_id}">(.*?)</table>', html, flags=re.S)
    assert m, f"no table {table_id}"
    body = re.search(r"<tbody>(.*?)</tbody>", m.group(1), flags=re.S).group(1)
    return [[text_of(c) for c in re.findall(r"<t[hd]\b[^>]*>(.*?)</t[hd]>", tr, flags=re.S)]
            for tr in re.findall(r"<tr\b[^>]*>(.*?)</tr>", body, flags=re.S)]


# ------------------------------------------------------------ start dates

def test_later_start_dates_give_the_engines_own_amounts_and_say_waiting_adds_nothing(client):
    r = client.post("/calcular", data=EXAMPLE_1)
    assert r.status_code == 200
    rows = table_rows(r.text, "scenario-start")
    eligibility = date(2028, 5, 10)
    days = [eligibility, date(2029, 5, 10), date(2030, 5, 10), date(2033, 5, 10)]
    assert [row[0].split(" (")[0] for row in rows] == [fmt_date(d, "es") for d in days]
    for row, day in zip(rows, days):
        d = engine(EXAMPLE_1, requested_start_date=day.isoformat())
        assert d.start_date == day and not d.premature_request
        assert row[1:] == [format_money(d.annual_amount), format_money(d.monthly_amount)]
    assert rows[0][1:] == [ONE.annual_shown, ONE.monthly_shown]  # rules §8 example 1
    sentence = text_of(re.search(r'<p class="no-increase" id="no-increase">(.*?)</p>',
                                 r.text, flags=re.S).group(1))
    start = cite(load_rules().citations["start"], "es")
    assert sentence.startswith("Esperar no aumenta la pensión: la " + start)
    assert "no da aumento por esperar" in sentence
    assert problems(r.text) == []


def test_a_typed_start_date_before_eligibility_is_the_engines_premature_request(client):
    r = client.post("/calcular/escenarios", data={**EXAMPLE_1, "scenario_date": "01/01/2028"})
    assert r.status_code == 200
    rows = table_rows(r.text, "scenario-start")
    assert rows[0][0].startswith("1 de enero de 2028 (la fecha que escribió)")
    assert "empezaría el 10 de mayo de 2028" in rows[0][0]
    d = engine(EXAMPLE_1, requested_start_date="2028-01-01")
    assert d.premature_request
    assert rows[0][1:] == [format_money(d.annual_amount), format_money(d.monthly_amount)]
    assert len(rows) == 5


def test_the_panel_is_in_english_too(client):
    r = client.post("/calcular", data={**EXAMPLE_1, "lang": "en"})
    t = text_of(r.text)
    assert "Compare dates" in t
    assert "Waiting does not increase the pension: Rule 19.3 lets you ask" in t
    assert f"May 10, 2029 (1 year later) {ONE.annual_shown} {ONE.monthly_shown}" in t


# --------------------------------------------------------- separation dates

def grown(service: str, months: int) -> str:
    units = int(Decimal(service) * 10_000) + months * 10_000 // 12
    return f"{Decimal(units) / 10_000:.4f}"


SCENARIO_TEXTS = guidance._shipped("scenarios", "es")


def shared_of(html: str) -> str:
    """The warnings said once above the separation table, for every row."""
    m = re.search(r'<div class="warnings shared-warnings".*?</div>', html, flags=re.S)
    return text_of(m.group(0)) if m else ""


def check_leave_row(row, fields, day, service, shared=""):
    c = catalog("es")
    assert row[0].startswith(fmt_date(day, "es"))
    assert Decimal(row[1]) == Decimal(service)
    d = engine(fields, separation_date=day.isoformat(), creditable_service_years=service)
    assert row[2].startswith(c["status"][d.status])
    if d.status == "not_entitled":
        assert row[3] == "—"
    else:
        assert fmt_date(d.eligibility_date, "es") in row[2]
        assert row[3] == (f"{format_money(d.annual_amount)} al año; "
                          f"{format_money(d.monthly_amount)} al mes")
    # the row's own warnings, those the core gives for these facts; one that
    # every row gives is said once above the table (`shared`), in its words
    # or, when they name each row's own date, in the table's words for all
    for w in d.warnings:
        f = next(f for f in d.explanation if f.condition == w)
        for_all = SCENARIO_TEXTS["leave"]["shared"].get(w, "\0")
        assert (estimate_words(f.text, "es") in row[2] or estimate_words(f.text, "es") in shared
                or for_all.split("{")[0] in shared), (w, row)
    return d


def test_leaving_later_adds_no_service_after_the_act_3_2013_freeze(client):
    """Today is after the freeze date (from the rules data): every row counts
    the service typed, the one sentence says why, and the date the missing
    years would be reached is not offered (they never are)."""
    r = client.post("/calcular/escenarios", data={**IN_SERVICE, "scenario_date": "15/08/2028"})
    assert r.status_code == 200
    rows = table_rows(r.text, "scenario-leave")
    expected = [date(2026, 11, 29), date(2027, 11, 29), date(2028, 8, 15),
                date(2028, 11, 29), date(2031, 11, 29)]
    assert len(rows) == len(expected)
    for row, day in zip(rows, expected):
        check_leave_row(row, IN_SERVICE, day, "8.5", shared_of(r.text))
    assert not any("con 10 años de servicio" in row[0] for row in rows)
    frozen = fmt_date(load_rules().act_3_2013.accruals_frozen_after, "es")
    t = text_of(r.text)
    assert (f"Los servicios no crecen después del {frozen}: según la Ley 3-2013, los "
            "posteriores corresponden a otro programa") in t
    assert problems(r.text) == []


def test_leaving_on_later_dates_grows_service_until_the_freeze_date_only(client):
    """A determination dated before the freeze (an analyst's date): service
    grows 1/12 of a year a whole month, and stops on the freeze date."""
    as_of = {**IN_SERVICE, "as_of": "2012-06-30"}
    r = client.post("/calcular/escenarios", data={**as_of, "scenario_date": "15/03/2013"})
    rows = table_rows(r.text, "scenario-leave")
    frozen = load_rules().act_3_2013.accruals_frozen_after
    # today, the typed date (8 whole months), +1 year (12 months, the freeze
    # day), +2 and +5 years (no month after the freeze)
    expected = [(date(2012, 6, 30), 0), (date(2013, 3, 15), 8), (date(2013, 6, 30), 12),
                (date(2014, 6, 30), 12), (date(2017, 6, 30), 12)]
    assert frozen == date(2013, 6, 30)
    assert len(rows) == len(expected)
    for row, (day, months) in zip(rows, expected):
        check_leave_row(row, as_of, day, grown("8.5", months), shared_of(r.text))
    assert "y nunca después del 30 de junio de 2013" in text_of(r.text)


def test_someone_still_working_is_told_what_leaving_now_gives_not_a_red_cross(client):
    fields = {**IN_SERVICE, "creditable_service_years": "12"}
    r = client.post("/calcular", data=fields)
    head = text_of(section_of(r.text, "result-title"))
    d = engine(fields, separation_date=AS_OF)
    assert head.startswith("… Estimado: Todavía no se ha separado: si se separa el 29 de "
                           "noviembre de 2026, tendría derecho a una pensión diferida desde el "
                           f"{fmt_date(d.eligibility_date, 'es')}, de "
                           f"{format_money(d.annual_amount)} al año")
    assert "✗" not in head and 'class="result status-in_service"' in r.text
    rows = table_rows(r.text, "scenario-leave")
    assert rows[0][0].startswith("29 de noviembre de 2026 (fecha de este cálculo)")
    check_leave_row(rows[0], fields, date(2026, 11, 29), "12", shared_of(r.text))
    # the headline of someone short of service says so, in the same shape
    r = client.post("/calcular", data=IN_SERVICE)
    assert ("Todavía no se ha separado: si se separa el 29 de noviembre de 2026, no tendría "
            "derecho a una pensión diferida: no acredita los años") in text_of(
                section_of(r.text, "result-title"))


def test_a_planned_separation_says_which_service_the_answer_counts(client):
    planned = {**EXAMPLE_1, "separation_date": "2027-06-30"}
    r = client.post("/calcular", data=planned)
    assert table_rows(r.text, "scenario-start")
    rows = table_rows(r.text, "scenario-leave")
    assert [row[1] for row in rows] == ["22", "22", "22"]  # after the freeze: nothing added
    t = text_of(r.text)
    assert ("La separación que escribió (30 de junio de 2027) es posterior a la fecha de este "
            "cálculo: el resultado cuenta los 22 años de servicio que escribió, sin sumar el "
            "tiempo hasta esa fecha") in t
    head = t.index("Datos considerados")
    assert t.index("La separación que escribió") < head  # beside the headline, not only below


@given(st.dates(date(1950, 1, 1), date(2090, 12, 31)), st.integers(0, 20_000))
def test_service_growth_is_whole_months_over_12_never_rounded_up(start, days):
    from datetime import timedelta

    end = start + timedelta(days=days)
    units = guidance.service_growth(start, end)
    y, m, _ = diferida.dates.years_months_days(start, end)
    months = 12 * y + m
    # exact: months/12 years, cut to 4 decimals (1 unit = 1/10,000 year)
    assert Decimal(units) <= Decimal(months) * 10_000 / 12 < Decimal(units + 1)
    assert guidance.add_months(start, months) <= end < guidance.add_months(start, months + 1)


def test_whole_years_of_growth_are_exact_and_29_february_moves_to_the_28th():
    assert guidance.service_growth(date(2026, 11, 29), date(2031, 11, 29)) == 50_000
    assert guidance.service_growth(date(2026, 11, 29), date(2026, 12, 28)) == 0
    assert guidance.service_growth(date(2026, 11, 29), date(2026, 12, 29)) == 833
    assert guidance.add_years(date(2028, 2, 29), 1) == date(2029, 2, 28)


def test_bad_typed_dates_are_said_next_to_the_box_and_change_nothing(client):
    r = client.post("/calcular/escenarios", data={**IN_SERVICE, "scenario_date": "31/02/2030"})
    assert r.status_code == 200
    m = re.search(r'<p class="error" id="e-scenario_date">(.*?)</p>', r.text, flags=re.S)
    assert text_of(m.group(1)) == "✗ No es una fecha: escriba día, mes y año, p. ej. 30/06/2031."
    assert 'aria-invalid="true"' in r.text and 'value="31/02/2030"' in r.text
    assert len(table_rows(r.text, "scenario-leave")) == 4
    r = client.post("/calcular/escenarios", data={**IN_SERVICE, "scenario_date": "2020-01-01"})
    assert "la fecha no puede ser anterior al 29 de noviembre de 2026" in text_of(r.text)
    assert len(table_rows(r.text, "scenario-leave")) == 4
    assert problems(r.text) == []


def test_no_panel_row_where_no_date_can_change_the_answer(client):
    refund = {**IN_SERVICE, "refund_requested": "true"}
    r = client.post("/calcular", data=refund)
    assert 'id="escenarios"' not in r.text
    r = client.post("/calcular", data=EXAMPLE_8)  # separated in 2006 with 8 years: frozen
    assert 'id="escenarios"' not in r.text


def test_the_printable_page_has_the_tables_but_not_the_date_box(client):
    r = client.post("/determinacion/imprimir", data=IN_SERVICE)
    assert r.status_code == 200
    assert len(table_rows(r.text, "scenario-leave")) == 4
    assert 'name="scenario_date"' not in r.text
    assert "Qué hacer ahora" in text_of(r.text)
    assert problems(r.text) == []


# -------------------------------------------------------------- next steps

def next_steps_text(html: str) -> str:
    m = re.search(r'<section class="next-steps".*?</section>', html, flags=re.S)
    return text_of(m.group(0))


@pytest.mark.parametrize("lang, fields, says", [
    ("es", {**EXAMPLE_1, "as_of": "2030-01-01"},
     ["Ya puede pedir la pensión diferida.", "Documentos que conviene tener a mano",
      "cumple los requisitos desde el 10 de mayo de 2028, así que, según la Regla 19.3, "
      "puede pedirla ya", "Quien decide es el Sistema de Retiro"]),
    ("en", {**EXAMPLE_1, "as_of": "2030-01-01"},
     ["You can ask for the deferred pension now.", "Documents to have at hand",
      "The decision is the Government Employees Retirement System's"]),
    ("es", EXAMPLE_1,
     ["Todavía no puede pedirla: podrá desde el 10 de mayo de 2028.",
      "Pida la pensión a la Junta de Retiro", "a partir del 10 de mayo de 2028",
      "Qué conservar hasta entonces"]),
    ("en", EXAMPLE_1,
     ["You cannot ask for it yet: you can from May 10, 2028.", "What to keep until then"]),
    ("es", {**EXAMPLE_1, "entry_date": "2001-03-01"},
     ["Ingresó al Sistema en o después del 1 de enero de 2000",
      "cuentas de ahorro (Ley 305-1999"]),
    ("en", {**EXAMPLE_1, "refund_requested": "true"},
     ["You asked for a refund of your contributions",
      "To confirm whether the refund was asked for and paid, ask the Retirement Board"]),
    ("es", {**EXAMPLE_1, "refund_requested": "true"},
     ["Pidió el reembolso de sus aportaciones",
      "Para confirmar si el reembolso se pidió y se pagó, pida a la Junta de Retiro"]),
    ("es", EXAMPLE_8,
     ["No acredita los años de servicio que exige ninguna vía",
      "Al separarse, sus servicios acreditables quedaron fijos"]),
    ("es", IN_SERVICE,
     ["Todavía trabaja en el Gobierno", "Los servicios posteriores al 30 de junio de 2013 no "
      "se suman en este estimado"]),
    ("en", IN_SERVICE,
     ["You still work for the Government", "Service after June 30, 2013 is not added"]),
])
def test_next_steps_per_status_and_reason(client, lang, fields, says):
    r = client.post("/calcular", data={**fields, "lang": lang})
    assert r.status_code == 200
    text = next_steps_text(r.text)
    for words in says:
        assert words in text, (words, text)
    assert "{" not in text  # every placeholder filled
    # no phone number, e-mail, address or hours invented; the one web address
    # is the System's own participants' page, as a link
    assert not re.search(r"\(\d{3}\)|\b\d{3}[-. ]\d{3}[-. ]\d{4}\b|@|https?:|www\.", text)
    assert re.findall(r'href="(https?:[^"]*)"', r.text) == [
        "https://www.retiro.pr.gov/participantes/"]
    assert 'id="where-to-apply"' in r.text and "<dl class=\"reach\">" not in r.text


def section_of(html: str, element_id: str) -> str:
    m = re.search(rf'id="{element_id}"[^>]*>(.*?)</h2>', html, flags=re.S)
    assert m, element_id
    return m.group(1)


def copy_shipped(folder: Path, name: str, lang: str) -> Path:
    path = folder / f"{name}_{lang}.toml"
    shutil.copyfile(str(guidance.shipped_path(name, lang)), path)
    return path


def test_an_administrator_replaces_the_texts_from_a_directory(client, tmp_path, monkeypatch):
    path = copy_shipped(tmp_path, "next_steps", "es")
    text = path.read_text("utf-8").replace(
        'contact = ""', 'contact = "Oficina de ejemplo, de lunes a viernes."').replace(
        '"Pida la pensión a {system} a partir del {eligibility_date}',
        '"Regrese desde el {eligibility_date}').replace(
        'phone = ""', 'phone = "(787) 000-0000"').replace('hours = ""', 'hours = "8:00 a 4:30"')
    path.write_text(text, "utf-8")
    monkeypatch.setenv(guidance.TEXTS_DIR_ENV, str(tmp_path))
    assert guidance.check_texts() == [path]
    es = next_steps_text(client.post("/calcular", data=EXAMPLE_1).text)
    assert "Oficina de ejemplo, de lunes a viernes." in es
    assert "Regrese desde el 10 de mayo de 2028" in es
    en = next_steps_text(client.post("/calcular", data={**EXAMPLE_1, "lang": "en"}).text)
    # the administrator's phone and hours, each under its label; no office given
    assert "Teléfono (787) 000-0000" in es and "Horario 8:00 a 4:30" in es
    assert "Oficina" not in es.replace("Oficina de ejemplo", "")
    assert "Ask the Retirement Board" in en  # no English file there: the shipped one
    assert "(787)" not in en
    monkeypatch.delenv(guidance.TEXTS_DIR_ENV)
    assert "Pida la pensión a la Junta de Retiro" in next_steps_text(
        client.post("/calcular", data=EXAMPLE_1).text)


@pytest.mark.parametrize("change, message", [
    (lambda s: s.replace('contact = ""', 'contacto = ""'),
     ["contact: missing", "contacto: unknown key"]),
    (lambda s: s.replace("desde el {eligibility_date}.", "desde el {fecha}."),
     ["not_yet_eligible.intro: unknown placeholder {fecha}",
      "this text may use: {eligibility_date}"]),
    (lambda s: s.replace('intro = "Ya puede', 'intro = ["Ya puede').replace(
        'pensión diferida."\nsteps', 'pensión diferida."]\nsteps'),
     ["eligible.intro: must be a text"]),
    (lambda s: s + "\n[broken", ["cannot be read as TOML"]),
    (lambda s: s.replace('url = "https://', 'url = "javascript://'),
     ["system.url: must start with https://"]),
])
def test_a_mistaken_administrators_file_is_refused_with_its_name_and_key(
        tmp_path, monkeypatch, change, message):
    path = copy_shipped(tmp_path, "next_steps", "es")
    path.write_text(change(path.read_text("utf-8")), "utf-8")
    monkeypatch.setenv(guidance.TEXTS_DIR_ENV, str(tmp_path))
    with pytest.raises(guidance.TextsError) as e:
        guidance.check_texts()
    assert str(e.value).startswith(str(path))
    for words in message:
        assert words in str(e.value)


def test_a_texts_directory_that_does_not_exist_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv(guidance.TEXTS_DIR_ENV, str(tmp_path / "absent"))
    with pytest.raises(guidance.TextsError, match="not a directory"):
        guidance.check_texts()


def test_the_shipped_texts_have_the_same_keys_in_both_languages():
    def keys(d, prefix=""):
        return {prefix + k for k in d} | {x for k, v in d.items() if isinstance(v, dict)
                                          for x in keys(v, prefix + k + ".")}
    for name in ("next_steps", "scenarios"):
        es, en = (guidance.texts(name, lang) for lang in ("es", "en"))
        assert keys(es) == keys(en), name
    es, en = (guidance.texts("glossary", lang)["terms"] for lang in ("es", "en"))
    assert list(es) == list(en)


# ---------------------------------------------------------------- glossary

GLOSSARY_TERMS = ("pension-diferida", "servicios-acreditables", "retribucion-promedio",
                  "reembolso-de-aportaciones", "separacion", "fecha-de-elegibilidad")


@pytest.mark.parametrize("url, lang, title", [
    ("/glosario", "es", "Glosario"), ("/glosario?lang=en", "en", "Glossary"),
    ("/glossary", "en", "Glossary")])
def test_the_glossary_page_has_an_anchor_per_term(client, url, lang, title):
    r = client.get(url)
    assert r.status_code == 200
    assert f'<html lang="{lang}">' in r.text and f"<h1>{title}</h1>" in r.text
    for anchor in GLOSSARY_TERMS:
        assert f'id="{anchor}"' in r.text
    assert "Content-Security-Policy" in r.headers
    assert problems(r.text) == []
    if lang == "en":
        assert '(<span lang="es">servicios acreditables</span>)' in r.text


@pytest.mark.parametrize("lang, href", [("es", "/glosario#"), ("en", "/glosario?lang=en#")])
def test_the_help_of_the_fields_links_to_the_glossary(client, lang, href):
    r = client.get(f"/?lang={lang}")
    labels = tomllib.loads(
        (resources.files("diferida") / "i18n" / lang / "web" / "labels.toml").read_text("utf-8"))
    linked = {name: f for name, f in labels["fields"].items() if "glossary" in f}
    assert {f["glossary"] for f in linked.values()} >= {
        "servicios-acreditables", "retribucion-promedio", "reembolso-de-aportaciones"}
    for name, f in linked.items():
        # the link is in the field's help, or (a question with choices) after the choices
        start = r.text.index(f'id="h-{name}"')
        end = r.text.find('class="field', start)
        link = re.search(r'<a href="([^"]+)"[^>]*>(.*?)</a>', r.text[start:end], flags=re.S)
        assert link, name
        assert link.group(1) == href + f["glossary"]
        assert text_of(link.group(2)).startswith(f["glossary_link"])
        assert f["glossary"] in GLOSSARY_TERMS
    assert problems(r.text) == []


# ----------------------------------------------------------------- browser

def test_the_panel_at_phone_width_in_a_browser(browser, base_url):
    from .test_web_browser import _open, calculate, fill, visible_text

    context, page, errors = _open(browser, base_url, viewport={"width": 375, "height": 800})
    try:
        page.goto("/")
        fill(page, {k: v for k, v in IN_SERVICE.items() if k != "as_of"}, as_of=AS_OF)
        calculate(page)
        panel = page.locator("#escenarios")
        panel.scroll_into_view_if_needed()
        # after the Act 3-2013 freeze no row adds service: 8.5 in each
        assert "8.5" in visible_text(page, "#scenario-leave")
        assert "9.5" not in visible_text(page, "#scenario-leave")
        # nothing wider than the screen: no sideways scrolling to read the panel
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        page.fill("#f-scenario_date", "15/08/2028")
        with page.expect_navigation():
            page.click("form.scenario-date button")
        row = page.locator("#scenario-leave tr.typed")
        assert "(la fecha que escribió)" in row.inner_text()
        assert "8.5" in row.inner_text()
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        screenshot(page.locator("#escenarios"), SHOTS / "guidance-scenarios-375-es.png")
        screenshot(page.locator("#next-steps"), SHOTS / "guidance-next-steps-375-es.png")
        page.goto("/glosario?lang=en#retribucion-promedio")
        assert visible_text(page, "#retribucion-promedio h2").startswith("Average compensation")
        screenshot(page, SHOTS / "guidance-glossary-375-en.png", full_page=True)
    finally:
        context.close()
    assert errors == [], errors


def test_the_service_does_not_start_with_a_mistaken_texts_file(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from diferida.server import serve_cmd

    path = copy_shipped(tmp_path, "glossary", "en")
    path.write_text(path.read_text("utf-8").replace("[terms.separacion]", "[terms.separation]"),
                    "utf-8")
    monkeypatch.setenv(guidance.TEXTS_DIR_ENV, str(tmp_path))
    result = CliRunner().invoke(serve_cmd, ["--port", "0"])
    assert result.exit_code == 1
    assert f"cannot start: {path}: terms.separacion: missing; terms.separation: unknown key" in (
        result.output)


# ---------------------------------------------- round two: the rest of the page

POLICE_NEW = {**EXAMPLE_1, "birth_date": "1971-02-14", "entry_date": "1992-08-15",
              "separation_date": "2013-11-15", "creditable_service_years": "21.25",
              "average_compensation": "38500", "group": "police"}


@pytest.mark.parametrize("lang, says", [
    ("es", "Hay dos lecturas de la ley para su caso: con una (la de este estimado), desde el "
           "{one}; con la otra, desde el {other}."),
    ("en", "There are two readings of the law for your case: under one (this estimate's), "
           "from {one}; under the other, from {other}."),
])
def test_the_19_4_doubt_opens_with_one_plain_sentence(client, lang, says):
    r = client.post("/calcular", data={**POLICE_NEW, "lang": lang})
    d = diferida.evaluate({k: v for k, v in POLICE_NEW.items() if v}, lang=lang)
    f = next(f for f in d.explanation if f.condition == "reading_19_4")
    other = date.fromisoformat(f.values["other_eligibility_date"])
    block = re.search(r'id="reading-used">(.*?)</div>', r.text, flags=re.S).group(1)
    paragraphs = [text_of(p) for p in re.findall(r"<p\b.*?</p>", block, flags=re.S)]
    assert paragraphs[0] == says.format(one=fmt_date(d.eligibility_date, lang),
                                        other=fmt_date(other, lang))
    assert "3 L.P.R.A. § 766" in paragraphs[1]  # the citations follow it
    assert d.eligibility_date.year != other.year


def test_someone_eligible_for_decades_is_told_what_happens_to_months_past(client):
    since_1992 = {**EXAMPLE_1, "birth_date": "1934-04-20", "entry_date": "1958-03-01",
                  "separation_date": "1980-06-30", "average_compensation": "9000"}
    r = client.post("/calcular", data=since_1992)
    said = text_of(re.search(r'id="past-months">(.*?)</p>', r.text, flags=re.S).group(1))
    assert said.startswith("Es elegible desde el 20 de abril de 1992, así que la tabla empieza "
                           "en la fecha de este cálculo")
    assert "no que se paguen los meses anteriores a la solicitud" in said
    rows = table_rows(r.text, "scenario-start")
    assert rows[0][0].startswith("29 de noviembre de 2026")  # never before the calculation


@pytest.mark.parametrize("path", ["/calcular", "/calcular/escenarios", "/calcular/fragmento",
                                  "/determinacion/imprimir"])
def test_a_get_on_an_address_only_posted_to_goes_to_the_calculator(client, path):
    r = client.get(path, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/"
    r = client.get(f"{path}?lang=en", follow_redirects=False)
    assert r.headers["location"] == "/?lang=en"
    assert client.get(path).status_code == 200


def test_the_typed_scenario_date_posts_redirects_and_is_kept_by_the_token(client):
    r = client.post("/calcular/escenarios", data={**EXAMPLE_1, "scenario_date": "01/01/2030"},
                    follow_redirects=False)
    assert r.status_code == 303
    where = r.headers["location"]
    # the address's target is the typed date's row itself: landed on, and
    # focused, without a script
    assert re.fullmatch(r"/resultado/[A-Za-z0-9_-]+#fila-escrita", where)
    page = client.get(where.split("#")[0])
    printed = client.get(where.split("#")[0] + "/imprimir")
    for html in (page.text, printed.text):  # reload and the printout: the same typed row
        rows = table_rows(html, "scenario-start")
        typed = [row for row in rows if "(la fecha que escribió)" in row[0]]
        assert len(typed) == 1 and typed[0][0].startswith("1 de enero de 2030")
        d = engine(EXAMPLE_1, requested_start_date="2030-01-01")
        assert typed[0][1:] == [format_money(d.annual_amount), format_money(d.monthly_amount)]
    # details with a mistake: no answer to redirect to, the messages as before
    r = client.post("/calcular/escenarios", data={**EXAMPLE_1, "birth_date": "x",
                                                  "scenario_date": "01/01/2030"},
                    follow_redirects=False)
    assert r.status_code == 422
