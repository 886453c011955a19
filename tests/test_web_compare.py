"""The web calculator's "Comparar con": the same case under a second rules
set, after the answer under the first: both rule sets, the fields that
differ, and the finding that explains the difference — the same comparison
as `diferida evaluate … --rules A --rules B` (diferida.compare.person).

The pages as the server sends them (FastAPI test client), and in Debian's
chromium (Playwright) with JavaScript on and off. The accessibility of the
comparison's states is checked with the other states, in
test_web_accessibility.py."""

from __future__ import annotations

import json
import re
import warnings
from datetime import date
from decimal import Decimal

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diferida.cli import main
from diferida.explain import reason_texts
from diferida.i18n import catalog, fmt_date
from diferida.money import format_money
from diferida.rules import load_rules
from diferida.web.labels import labels
from diferida.web.view import estimate_words

from .conftest import SHOTS, examples, screenshot
from .date_boxes import in_boxes
from .test_web_htmlcheck import problems
from .test_web_pages import text_of

AS_OF = "2026-11-29"
DEFAULT, STRICT, ILLUSTRATIVE = "article19", "article19-strict-19_4", "reform-19_2-age-67"

# rules §8 example 4: a new participant of the Police, 25.1667 years, whose
# route is 19.4(a) as written and 19.2 under the strict reading
POLICE = {"birth_date": "1975-06-20", "entry_date": "1996-02-01",
          "separation_date": "2021-03-31", "creditable_service_years": "25.1667",
          "average_compensation": "36000.00", "group": "police", "refund_requested": "false"}
# rules §8 example 1: a general employee; 19.4 never concerns this person
GENERAL = {"birth_date": "1970-05-10", "entry_date": "1988-07-01",
           "separation_date": "2010-06-30", "creditable_service_years": "22",
           "average_compensation": "30000.00", "group": "general", "refund_requested": "false"}
# a firefighter, new participant, 20 years: 19.4(b) as written, 19.2 (later)
# under the strict reading
FIREFIGHTER = {"birth_date": "1980-03-01", "entry_date": "1999-06-01",
               "separation_date": "2019-12-31", "creditable_service_years": "20",
               "average_compensation": "41000.00", "group": "firefighter",
               "refund_requested": "false"}
# a police officer who entered before 1 April 1990: 19.4 is open under both readings
POLICE_PRE1990 = {**POLICE, "birth_date": "1962-04-10", "entry_date": "1985-09-01",
                  "creditable_service_years": "25.5"}
# a police officer not entitled under either reading (a refund)
POLICE_REFUND = {**POLICE, "refund_requested": "true"}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # starlette's notice about its test client
        from fastapi.testclient import TestClient

    from diferida.server import create_app
    from diferida.service.settings import Settings

    db = tmp_path_factory.mktemp("web-compare") / "web.db"
    # one client posts every generated case (three hundred of them in `make
    # test-full`): the public rate limit is tested on its own
    # (test_hardening_api_abuse.py)
    settings = Settings(database_url=f"sqlite:///{db}", rate_limit_public="off")
    with TestClient(create_app(settings)) as c:
        yield c


def posted(person: dict[str, str], lang: str = "es", rules: str = DEFAULT,
           compare: str = STRICT) -> dict[str, str]:
    return {**person, "as_of": AS_OF, "lang": lang, "rules": rules, "compare": compare}


def answer(client, person, **kw):
    """The answer's own page, through post/redirect/get; the response too."""
    r = client.post("/calcular", data=posted(person, **kw), follow_redirects=False)
    assert r.status_code == 303, text_of(r.text)[:600]
    location = r.headers["location"]
    assert re.fullmatch(r"/resultado/[A-Za-z0-9_-]{20,}", location)
    page = client.get(location)
    assert page.status_code == 200
    assert problems(page.text) == []
    return page, location


def section(html: str, element_id: str) -> str:
    """The words of the element with that id (up to its matching close tag)."""
    m = re.search(rf'<(\w+)[^>]*\bid="{element_id}"', html)
    if m is None:
        return ""
    tag, start = m.group(1), m.start()
    depth, pos = 0, start
    for t in re.finditer(rf"<(/?){tag}\b[^>]*>", html[start:]):
        depth += -1 if t.group(1) else 1
        if depth == 0:
            pos = start + t.end()
            break
    return text_of(html[start:pos])


def table_rows(html: str) -> dict[str, tuple[str, str, str]]:
    """The comparison table: field -> (its label, value under A, under B)."""
    body = re.search(r'<table class="comparison-table".*?</table>', html, flags=re.S)
    if body is None:
        return {}
    out = {}
    for m in re.finditer(r'<tr data-field="([a-z_]+)"><th scope="row">(.*?)</th>'
                         r'<td[^>]*>(.*?)</td><td[^>]*>(.*?)</td></tr>', body.group(0)):
        out[m.group(1)] = (text_of(m.group(2)), text_of(m.group(3)), text_of(m.group(4)))
    return out


def cli_comparison(person: dict[str, str], lang: str, a: str = DEFAULT,
                   b: str = STRICT) -> dict:
    """What `diferida evaluate … --rules A --rules B --json` prints for the person."""
    options = {"birth_date": "--birth-date", "entry_date": "--entry-date",
               "separation_date": "--separation-date",
               "creditable_service_years": "--service",
               "average_compensation": "--compensation", "group": "--group"}
    args = ["evaluate", "--as-of", AS_OF, "--lang", lang, "--rules", a, "--rules", b, "--json"]
    for name, option in options.items():
        if person.get(name):
            args += [option, person[name]]
    args.append("--refund" if person["refund_requested"] == "true" else "--no-refund")
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


# ---- the police officer: the route changes, and Regla 19.4 explains it ----------------

@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_police_officer_compared_with_the_strict_reading_shows_the_route_change_and_19_4(
        client, lang):
    page, _ = answer(client, POLICE, lang=lang)
    html = page.text
    t = labels(lang)
    c = catalog(lang)
    rule = "Regla" if lang == "es" else "Rule"
    # the answer under the first rules set comes first, then the comparison
    assert html.index('id="result"') < html.index('id="comparison"')
    assert f"{rule} 19.4(a)" in section(html, "result")  # the answer above is 19.4(a)
    both = section(html, "comparison")
    assert t["fields"]["rules"]["options"][DEFAULT] in section(html, "comparison-a")
    assert t["fields"]["rules"]["options"][STRICT] in section(html, "comparison-b")
    assert "Regla 19.4 limitada a participantes anteriores a 1990" in section(
        html, "comparison-b")  # the strict rules' own title
    rows = table_rows(html)
    assert list(rows) == ["status", "route", "eligibility_date"]
    assert rows["status"][1:] == (c["status"]["eligible"], c["status"]["not_yet_eligible"])
    assert rows["route"][1:] == (f"{rule} 19.4(a)", f"{rule} 19.2")
    assert rows["eligibility_date"][1:] == (fmt_date(date(2025, 6, 20), lang),
                                            fmt_date(date(2040, 6, 20), lang))
    # the finding that explains it: Regla 19.4(a), under A met, under B not open
    why = section(html, "comparison-why")
    assert f"{rule} 19.4(a)" in why.split(":")[0]
    # A's reading of Rule 19.4, which opens 19.4(a) to a new participant
    assert "19.4(a)" in section(html, "comparison-why-a")
    assert "por la lectura de estas reglas" in section(html, "comparison-why-a") or \
        "by the reading of these rules" in section(html, "comparison-why-a")
    assert "3 L.P.R.A. § 766" in section(html, "comparison-why-b")
    assert (("no se aplica a participantes nuevos" if lang == "es"
             else "does not apply to new participants") in section(html, "comparison-why-b"))
    # no ISO date in the comparison's words; the same amounts are not listed
    assert not re.search(r"\b\d{4}-\d{2}-\d{2}\b", both)
    assert "annual_amount" not in rows
    # a link near the headline leads to it
    assert 'href="#comparison-title"' in section(html, "result") or (
        '<a href="#comparison-title">' in html)


def test_a_firefighter_who_would_wait_longer_under_the_strict_reading(client):
    page, _ = answer(client, FIREFIGHTER, lang="en")
    rows = table_rows(page.text)
    assert rows["route"][1:] == ("Rule 19.4(b)", "Rule 19.2")
    # the first finding that differs, in the order of the explanation: a 19.4
    # route (19.4(a), checked first, is also closed to new participants under B)
    assert "Rule 19.4(" in section(page.text, "comparison-why").split(":")[0]


# ---- the general employee: the same determination ---------------------------------------

@pytest.mark.parametrize("lang", ["es", "en"])
@pytest.mark.parametrize("person", [GENERAL, POLICE_PRE1990, POLICE_REFUND],
                         ids=["general", "police-pre1990", "police-refund"])
def test_a_case_19_4_does_not_decide_gets_the_same_determination_under_both(
        client, lang, person):
    page, _ = answer(client, person, lang=lang)
    same = section(page.text, "comparison-same")
    assert same == "= " + labels(lang)["comparison"]["same"]
    # the page is an estimate: it does not call either answer a determination
    assert ("mismo resultado" if lang == "es" else "same result") in same
    assert table_rows(page.text) == {}
    assert 'id="comparison-why"' not in page.text
    # both rule sets are still named
    assert labels(lang)["fields"]["rules"]["options"][STRICT] in section(page.text,
                                                                         "comparison-b")


def test_the_comparison_works_the_other_way_round_too(client):
    """The strict reading decides the answer above; compared with the text as written."""
    page, _ = answer(client, POLICE, lang="es", rules=STRICT, compare=DEFAULT)
    rows = table_rows(page.text)
    assert rows["route"][1:] == ("Regla 19.2", "Regla 19.4(a)")
    assert "Regla 19.2" in section(page.text, "result")


def test_without_compare_there_is_no_comparison(client):
    page, _ = answer(client, POLICE, compare="")
    assert 'id="comparison"' not in page.text and "comparison-title" not in page.text


# ---- refused: the illustrative reform, a path, the reading already chosen ------------------

@pytest.mark.parametrize("lang", ["es", "en"])
@pytest.mark.parametrize("value", [ILLUSTRATIVE, "/etc/passwd", "article99"])
def test_a_rules_set_the_page_does_not_offer_is_refused_naming_the_field(client, lang, value):
    r = client.post("/calcular", data=posted(POLICE, lang=lang, compare=value),
                    follow_redirects=False)
    assert r.status_code == 422
    assert problems(r.text) == []
    label = labels(lang)["fields"]["compare"]["label"]
    summary = section(r.text, "error-summary")
    assert f"{label}: " in summary and value in summary
    assert value in section(r.text, "e-compare")
    assert 'aria-invalid="true"' in re.search(r'<select id="f-compare"[^>]*>', r.text).group(0)
    assert 'href="#f-compare"' in r.text
    assert 'id="result"' not in r.text and 'id="comparison"' not in r.text
    # the reform is never offered in either select
    assert f'value="{ILLUSTRATIVE}"' not in r.text
    # the advanced options are open, so the message is in view
    assert re.search(r'<details class="advanced" open>', r.text)


def test_the_printable_page_refuses_it_too(client):
    r = client.post("/determinacion/imprimir", data=posted(POLICE, compare=ILLUSTRATIVE),
                    follow_redirects=False)
    assert r.status_code == 422
    assert "Comparar con: «reform-19_2-age-67»" in text_of(r.text)


def test_comparing_a_reading_with_itself_is_refused_naming_the_field(client):
    r = client.post("/calcular", data=posted(POLICE, compare=DEFAULT), follow_redirects=False)
    assert r.status_code == 422
    message = section(r.text, "e-compare")
    assert "misma lectura" in message and "No comparar" in message
    assert "Comparar con: " in section(r.text, "error-summary")


def test_the_form_offers_every_reading_the_page_decides_with_and_none_by_default(client):
    html = client.get("/").text
    select = re.search(r'<select id="f-compare".*?</select>', html, flags=re.S).group(0)
    values = re.findall(r'<option value="([^"]*)"', select)
    assert values == ["", DEFAULT, STRICT]
    assert re.search(r'<option value="" selected>No comparar</option>', select)
    assert re.search(r'<label for="f-compare">Comparar con', html)


# ---- post/redirect/get, the language switch, printing -------------------------------------

def test_reload_the_language_switch_and_the_printable_page_keep_the_comparison(client):
    page, location = answer(client, POLICE, lang="es")
    again = client.get(location)
    assert table_rows(again.text) == table_rows(page.text)
    assert "compare" not in location and STRICT not in location  # nothing typed in the URL
    # the language switch posts what was evaluated, the comparison included
    r = client.post("/calcular", data={**posted(POLICE, lang="es"), "shown": "result",
                                       "action": "lang:en"}, follow_redirects=True)
    assert r.status_code == 200 and '<html lang="en">' in r.text
    assert table_rows(r.text)["route"][1:] == ("Rule 19.4(a)", "Rule 19.2")
    # the printable page of that answer: the same comparison, after the answer
    printed = client.get(f"{location}/imprimir")
    assert printed.status_code == 200 and problems(printed.text) == []
    assert printed.text.index('id="result"') < printed.text.index('id="comparison"')
    assert table_rows(printed.text) == table_rows(page.text)
    assert "Regla 19.4(a)" in section(printed.text, "comparison-why")
    # its back and language controls carry the comparison
    assert printed.text.count(f'name="compare" value="{STRICT}"') == 2
    # the printable page of posted fields (no token yet) too
    r = client.post("/determinacion/imprimir", data=posted(POLICE), follow_redirects=True)
    assert table_rows(r.text) == table_rows(page.text)


def test_the_answer_fragment_for_the_script_has_the_comparison(client):
    r = client.post("/calcular/fragmento", data=posted(POLICE))
    assert r.status_code == 200
    assert table_rows(r.text)["route"][1:] == ("Regla 19.4(a)", "Regla 19.2")


def test_the_scenario_panel_keeps_the_comparison(client):
    r = client.post("/calcular/escenarios", data={**posted(POLICE), "scenario_date": ""})
    assert table_rows(r.text)["route"][1:] == ("Regla 19.4(a)", "Regla 19.2")


# ---- the same as `diferida evaluate --rules A --rules B --json` ---------------------------

def _shown(field: str, side: dict, lang: str, t: dict) -> str:
    """A field of one side of the command's JSON as the page writes it."""
    value = side[field]
    if field == "start_date" and value is None and side["status"] != "not_entitled":
        return t["start_open"]  # the person asks for it, from the eligibility date
    if field == "minimum_applied" and side["status"] == "not_entitled":
        return t["none"]
    if value is None:
        return t["none"]
    if field == "status":
        return catalog(lang)["status"][value]
    if field == "route":
        return ("Regla " if lang == "es" else "Rule ") + value
    if field in ("eligibility_date", "start_date"):
        return fmt_date(date.fromisoformat(value), lang)
    if field in ("annual_amount", "monthly_amount"):
        return format_money(Decimal(value))
    if field == "minimum_applied":
        return t["yes"] if value else t["no"]
    raise AssertionError(f"no reference wording for {field}")


def agree(client, person: dict[str, str], lang: str) -> None:
    page, _ = answer(client, person, lang=lang)
    cli = cli_comparison(person, lang)
    t = labels(lang)["comparison"]
    rows = table_rows(page.text)
    # the same fields differ, in the same order
    assert list(rows) == list(cli["differences"]), (rows, cli["differences"])
    for field, v in cli["differences"].items():
        if field in ("regime", "reasons"):
            continue  # sentences; their presence is compared above
        assert (v["a"], v["b"]) == (cli["a"][field], cli["b"][field])
        assert rows[field][1:] == (_shown(field, cli["a"], lang, t),
                                   _shown(field, cli["b"], lang, t)), field
    why = cli["explaining_finding"]
    if why is None:
        assert section(page.text, "comparison-same")
        assert 'id="comparison-why"' not in page.text
    else:
        # the core's sentence, worded as the public page words it (an estimate)
        assert section(page.text, "comparison-why-a") == estimate_words(
            why["under_a"] or t["not_checked"], lang)
        assert section(page.text, "comparison-why-b") == estimate_words(
            why["under_b"] or t["not_checked"], lang)
    # and the answer above is the command's determination under A; for someone
    # still in service the headline says what leaving now gives, and the
    # command's other reasons (those leaving would not change) are listed
    # under it, never "not separated" itself
    a = cli["a"]
    if a["status"] == "not_entitled" and "not_separated" in a["reasons"] and (
            "not_covered" not in a["reasons"]):
        assert (labels(lang)["result"]["in_service_status"] + ": ") in section(
            page.text, "result-title")
        rules_a = load_rules(a["rules_name"])
        others = [r for r in a["reasons"] if r != "not_separated"]
        for text in reason_texts(others, rules_a, lang):
            assert estimate_words(text, lang)[1:] in page.text
        not_separated = reason_texts(["not_separated"], rules_a, lang)[0]
        assert estimate_words(not_separated, lang)[1:] not in page.text
    else:
        assert a["headline"] in section(page.text, "result-title")


@pytest.mark.parametrize("lang", ["es", "en"])
@pytest.mark.parametrize("person", [POLICE, FIREFIGHTER, GENERAL, POLICE_PRE1990,
                                    POLICE_REFUND],
                         ids=["police", "firefighter", "general", "police-pre1990",
                              "police-refund"])
def test_the_page_agrees_with_evaluate_rules_a_rules_b_json(client, lang, person):
    agree(client, person, lang)


@settings(max_examples=examples(30), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(birth=st.dates(date(1950, 1, 1), date(1980, 12, 31)),
       entry=st.dates(date(1980, 1, 1), date(2001, 12, 31)),
       service_units=st.integers(5 * 10_000, 32 * 10_000),
       left=st.sampled_from([True, True, True, False]),
       group=st.sampled_from(["general", "police", "police", "firefighter", "firefighter"]),
       refund=st.sampled_from([False, False, False, True]),
       lang=st.sampled_from(["es", "en"]))
@pytest.mark.slow
def test_any_case_agrees_with_the_command(client, birth, entry, service_units, left, group,
                                          refund, lang):
    """Generated people, police and firefighters of both regimes among them,
    with service around the thresholds of 19.2 and 19.4: the page's comparison
    is the command's, field by field and finding by finding."""
    from datetime import timedelta

    entry = max(entry, birth + timedelta(days=18 * 366))
    service = Decimal(service_units) / 10_000
    separation = min(entry + timedelta(days=int(service * 366) + 1), date(2026, 11, 1))
    person = {"birth_date": birth.isoformat(), "entry_date": entry.isoformat(),
              "separation_date": separation.isoformat() if left else "",
              "creditable_service_years": f"{service.normalize():f}",
              "average_compensation": "33000.00", "group": group,
              "refund_requested": "true" if refund else "false"}
    r = client.post("/calcular", data=posted(person, lang=lang), follow_redirects=False)
    if r.status_code == 422:
        # details the page refuses, the command refuses too (the same core)
        assert cli_args_fail(person, lang) == 2
        return
    agree(client, person, lang)


def cli_args_fail(person: dict[str, str], lang: str) -> int:
    options = {"birth_date": "--birth-date", "entry_date": "--entry-date",
               "separation_date": "--separation-date",
               "creditable_service_years": "--service",
               "average_compensation": "--compensation", "group": "--group"}
    args = ["evaluate", "--as-of", AS_OF, "--lang", lang, "--rules", DEFAULT, "--rules", STRICT]
    for name, option in options.items():
        if person.get(name):
            args += [option, person[name]]
    args.append("--refund" if person["refund_requested"] == "true" else "--no-refund")
    return CliRunner().invoke(main, args).exit_code


# ---- in a real browser, with and without JavaScript -----------------------------------------

@pytest.mark.parametrize("js", [True, False], ids=["js", "nojs"])
def test_in_the_browser_a_police_officer_compared_with_the_strict_reading(
        browser, base_url, js):  # noqa: F811
    context = browser.new_context(base_url=base_url, viewport={"width": 1000, "height": 900},
                                  java_script_enabled=js)
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}")
                if m.type in ("error", "assert") else None)
        page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
        page.goto("/")
        if page.locator("details.advanced").get_attribute("open") is None:
            page.click("details.advanced > summary")
        # each date into its three boxes (tests/date_boxes.py)
        for name, value in in_boxes({**POLICE, "as_of": AS_OF}).items():
            if name in ("group", "refund_requested"):
                page.check(f"#f-{name}-{value}")
            else:
                page.fill(f"#f-{name}", value)
        page.select_option("#f-compare", STRICT)
        page.click("#calc button.primary")
        page.wait_for_selector("#comparison-title")
        if not js:
            assert re.search(r"/resultado/[A-Za-z0-9_-]+$", page.url)  # post/redirect/get
        table = page.locator("#comparison-table").inner_text()
        assert "Regla 19.4(a)" in table and "Regla 19.2" in table
        assert "20 de junio de 2040" in table
        assert "Regla 19.4(a)" in page.locator("#comparison-why h3 + p").inner_text()
        # the pointer near the headline leads to the comparison
        page.click(".compare-pointer a")
        assert page.locator("#comparison-title").is_visible()
        # the choice is kept in the form
        assert page.input_value("#f-compare") == STRICT
        # reload keeps it (the answer has its own address)
        if not js:
            page.reload()
            assert "Regla 19.2" in page.locator("#comparison-table").inner_text()
        SHOTS.mkdir(parents=True, exist_ok=True)
        screenshot(page, SHOTS / f"compare-police-{'js' if js else 'nojs'}.png",
                        full_page=True)
        # the printable page has it too
        page.click("#print-link")
        page.wait_for_selector("main.document")
        assert "Regla 19.2" in page.locator("#comparison-table").inner_text()
        screenshot(page, SHOTS / f"compare-police-print-{'js' if js else 'nojs'}.png",
                        full_page=True)
    finally:
        context.close()
    assert errors == [], errors


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_premature_request_under_the_reading_compared_with_is_said_as_premature(client, lang):
    # the attack: the start asked for (1 January 2026, after the eligibility
    # date as written, 20 June 2025, and before the calculation's date) is
    # premature under the strict reading (19.2 from 20 June 2040): the
    # comparison's row said
    # "sin fecha indicada: se solicita desde la fecha de elegibilidad", as
    # if nothing had been asked for (rules §5 Decision)
    r = client.post("/calcular", data=in_boxes(posted(
        {**POLICE, "requested_start_date": "2026-01-01"}, lang=lang), lang),
        follow_redirects=True)
    assert r.status_code == 200
    row = re.search(r'<tr data-field="start_date">.*?</tr>', r.text, re.S)
    assert row is not None
    said = text_of(row.group(0))
    if lang == "es":
        assert "pidió el 1 de enero de 2026, una fecha anterior" in said
        assert ("Pidió que empiece el 1 de enero de 2026, antes de la fecha de elegibilidad: "
                "la solicitud es prematura; podrá solicitarla desde el 20 de junio de 2040") in said
        assert "sin fecha indicada" not in said
    else:
        assert "January 1, 2026" in said and "premature" in said and "June 20, 2040" in said
        assert "no date" not in said.lower()
