"""A determination an analyst can sign (rules §1, §6, §7, §9): every statement
true, every decision that shaped the answer stated where it matters and only
there, every finding cited to a real source, the law's words taken from the
rules, and Spanish an official would write. Each test is named as the
sentence it proves, and goes through the engine and at least one edge (the
command line, the web page or its printout)."""

from __future__ import annotations

import json
import re
import subprocess
import warnings
from datetime import date
from decimal import Decimal
from importlib import resources

import polars as pl
import pytest

import diferida
from diferida.outcomes import REASONS, STATUSES, WARNINGS
from diferida.render import render_text
from diferida.words import field_label

from .conftest import AS_OF, cli_command, participant, run_in_process

STRICT = "article19-strict-19_4"
# rules §8 example 4: a police officer, new participant, route 19.4(a)
POLICE_NEW = participant(birth_date="1975-06-20", entry_date="1996-02-01",
                         separation_date="2021-03-31", creditable_service_years="25.1667",
                         average_compensation="36000.00", group="police")
# one ten-thousandth of a year more than its entry-to-separation span
POLICE_OVER_SPAN = {**POLICE_NEW, "creditable_service_years": "25.1668"}
# rules §8 example 11: entry before 1960-06-30, the 19.6 right left empty
EXAMPLE_11 = participant(birth_date="1935-06-01", entry_date="1955-01-01",
                         separation_date="1975-01-01", creditable_service_years="12",
                         average_compensation="10000.00")
ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def evaluate(p: dict, lang: str = "es", rules=None) -> diferida.Determination:
    return diferida.evaluate(p, as_of=AS_OF, lang=lang, rules=rules)


def texts(d: diferida.Determination) -> str:
    return "\n".join([d.headline, *(f.text for f in d.explanation)])


def finding(d: diferida.Determination, condition: str, route: str | None = None):
    hits = [f for f in d.explanation if f.condition == condition
            and (route is None or f.values.get("route") == route)]
    assert len(hits) == 1, [(f.rule, f.condition) for f in d.explanation]
    return hits[0]


CLI_OPTIONS = {"participant_id": "--id", "birth_date": "--birth-date",
               "entry_date": "--entry-date", "separation_date": "--separation-date",
               "creditable_service_years": "--service", "average_compensation": "--compensation",
               "group": "--group", "requested_start_date": "--start"}


def cli(p: dict, *extra: str) -> subprocess.CompletedProcess:
    args = [a for k, opt in CLI_OPTIONS.items() if p.get(k) for a in (opt, str(p[k]))]
    args.append("--refund" if p.get("refund_requested") == "true" else "--no-refund")
    if p.get("deferred_right_1960") in ("true", "false"):
        args.append("--deferred-right-1960" if p["deferred_right_1960"] == "true"
                    else "--no-deferred-right-1960")
    return run_in_process("evaluate", *args, "--as-of", AS_OF.isoformat(), *extra)


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    from diferida.server import create_app
    from diferida.service.settings import Settings

    db = tmp_path_factory.mktemp("signable") / "web.db"
    with TestClient(create_app(Settings(database_url=f"sqlite:///{db}"))) as c:
        yield c


def page_text(html: str) -> str:
    from html import unescape
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip())


def visible_body(html: str) -> str:
    """What a reader sees of a page: its text without hidden form fields."""
    return page_text(re.sub(r"<input[^>]*>", " ", html))


def web(client, p: dict, lang: str = "es", rules: str | None = None, printout=False) -> str:
    data = {**p, "lang": lang, "as_of": AS_OF.isoformat(), **({"rules": rules} if rules else {})}
    r = client.post("/determinacion/imprimir" if printout else "/calcular", data=data)
    assert r.status_code == 200, r.text
    return r.text


# ---- Regla 19.6 is read with "o" ----------------------------------------------

@pytest.mark.slow
def test_an_empty_1960_right_is_derived_true_for_an_entry_before_30_june_1960_and_said_so():
    d = evaluate(EXAMPLE_11)
    assert (d.deferred_right_1960, d.deferred_right_1960_source) == (True, "derived")
    # 10,000 × 1.5% × 12 = 1,800 < 30% × 10,000 = 3,000: the minimum is paid
    assert (d.annual_amount, d.monthly_amount, d.minimum_applied) == (
        Decimal("3000.00"), Decimal("250.00"), True)
    f = finding(d, "minimum")
    assert f.values["source"] == "derived" and f.held is True
    assert "deducido de la fecha de ingreso" in f.text and "«o»" in f.text
    out = cli(EXAMPLE_11, "--json")
    assert json.loads(out.stdout)["deferred_right_1960_source"] == "derived"
    assert "deducido de la fecha de ingreso" in cli(EXAMPLE_11).stdout


def test_a_declared_false_stands_even_with_an_entry_before_1960():
    d = evaluate({**EXAMPLE_11, "deferred_right_1960": "false"})
    assert (d.deferred_right_1960, d.deferred_right_1960_source) == (False, "declared")
    assert d.annual_amount == Decimal("1800.00") and d.minimum_applied is False
    assert "se declaró" in finding(d, "minimum").text


def test_a_declared_true_with_a_later_first_entry_is_invalid_and_says_why():
    with pytest.raises(diferida.InputError) as exc:
        evaluate(participant(deferred_right_1960="true"))
    (p,) = exc.value.problems
    assert (p.field, p.code) == ("deferred_right_1960", "deferred_right_after_1960")
    assert "30 de junio de 1960" in p.message
    out = cli(participant(deferred_right_1960="true"))
    assert out.returncode == 2 and "30 de junio de 1960" in out.stdout + out.stderr


def test_when_the_minimum_is_paid_the_amount_line_cites_regla_19_6():
    d = evaluate(EXAMPLE_11)
    totals = finding(d, "totals")
    assert totals.rule == "Regla 19.6" and "Regla 19.6" in totals.text
    assert "Regla 19.5" not in totals.text
    # when the formula is paid, the formula's section is cited
    assert finding(evaluate(participant()), "totals").rule == "Regla 19.5(a)"


def test_when_19_6_does_not_apply_one_line_says_why():
    derived = finding(evaluate(participant()), "minimum")
    assert derived.rule == "Regla 19.6" and "no se aplica" in derived.text
    assert "1 de julio de 1988, después del 30 de junio de 1960" in derived.text
    declared = finding(evaluate({**EXAMPLE_11, "deferred_right_1960": "false"}), "minimum")
    assert "no se aplica: se declaró" in declared.text
    en = finding(evaluate(participant(), "en"), "minimum")
    assert en.text.startswith("Rule 19.6 (minimum pension of 30% of average compensation) "
                              "does not apply")


def test_the_1960_field_reads_member_or_holder_in_the_cli_the_web_form_and_the_api(client):
    help_text = subprocess.run([*cli_command(), "evaluate", "--help"], capture_output=True,
                               text=True, timeout=60).stdout
    assert "A member of the System, or holding a right to a deferred pension" in " ".join(
        help_text.split())
    form = page_text(client.get("/").text)
    assert "Al 30 de junio de 1960, ¿estaba acogido al Sistema o tenía derecho a una pensión " \
           "diferida?" in form
    assert "Deducirlo de la fecha de ingreso" in form
    schema = client.get("/openapi.json").json()
    described = json.dumps(schema, ensure_ascii=False)
    assert "or holding a right to a deferred pension" in described
    assert "default false" not in described
    assert field_label("es", "deferred_right_1960") == (
        "acogido al Sistema o con derecho a pensión diferida al 30 de junio de 1960")


def test_the_web_form_sends_an_empty_1960_answer_when_asked_to_derive_it(client):
    html = web(client, {**EXAMPLE_11, "deferred_right_1960": ""})
    assert "deducido de la fecha de ingreso: sí" in page_text(html)
    assert "$3,000.00" in page_text(html)


# ---- no false or misleading statement --------------------------------------

def test_frozen_service_is_said_only_of_someone_who_has_separated(client):
    short = {"creditable_service_years": "8"}
    separated = finding(evaluate(participant(**short)), "insufficient_service").text
    assert "congelados al separarse" in separated
    for p in (participant(separation_date=None, **short),
              participant(separation_date="2027-06-30", **short)):
        text = texts(evaluate(p))
        assert "congelados al separarse" not in text and "no cambiará" not in text
        assert "también cuentan" in text
        assert "congelados al separarse" not in visible_body(web(client, p))


def test_a_person_not_entitled_is_told_of_routes_in_the_conditional():
    d = evaluate(participant(refund_requested="true"))
    age = finding(d, "age", "19.1(a)")
    assert "se abriría el 10 de mayo de 2028" in age.text
    assert not re.search(r"se abr(e|ió|irá) ", texts(d))
    assert "would open on May 10, 2028" in finding(
        evaluate(participant(refund_requested="true"), "en"), "age", "19.1(a)").text


def test_dates_after_as_of_are_told_in_the_future_and_dates_before_in_the_past():
    future = finding(evaluate(participant()), "age", "19.1(a)").text
    assert "los cumplirá el 10 de mayo de 2028" in future and "se abrirá" in future
    past = finding(evaluate(participant(birth_date="1960-05-10")), "age", "19.1(a)").text
    assert "los cumplió el 10 de mayo de 2018" in past and "se abrió el 10 de mayo de 2018" in past
    assert "Será elegible" in finding(evaluate(participant()), "eligibility").text
    assert "Es elegible desde" in finding(evaluate(participant(birth_date="1960-05-10")),
                                          "eligibility").text


def test_a_planned_separation_is_never_told_in_the_past_tense():
    plan = participant(birth_date="1960-01-01", entry_date="1985-01-01",
                       separation_date="2027-06-30")
    d = evaluate(plan)
    text = texts(d)
    assert "se separó" not in text.lower() and "Se separó" not in text
    assert d.headline.startswith("Si se separa del servicio el 30 de junio de 2027")
    assert "prevista para el 30 de junio de 2027" in finding(d, "separated").text
    assert finding(d, "retirement_annuity_may_apply").text.startswith(
        "Si se separa el 30 de junio de 2027, ya habrá cumplido")
    out = cli(plan).stdout
    assert "Se separó" not in out and "Si se separa del servicio" in out


def test_an_entrant_from_2000_is_told_plainly_that_article_19_does_not_apply():
    d = evaluate(participant(birth_date="1975-01-01", entry_date="2000-01-01",
                             separation_date="2010-01-01", creditable_service_years="10"))
    assert d.reasons == ["not_covered"]
    assert d.headline == ("No tiene derecho a una pensión diferida: el Artículo 19 solo cubre "
                          "a quienes ingresaron al Sistema antes del 1 de enero de 2000.")
    text = texts(d)
    assert "participante nuevo" not in text and "rigen" not in text
    assert "no se aplica el Artículo 19" in finding(d, "covered").text
    assert "Régimen                    no cubierto por el Artículo 19" in render_text(d)


def test_the_headline_of_an_eligible_member_says_since_when_and_that_it_may_be_asked_now():
    # rules §5: Regla 19.3 says when the pension may be requested, not that it
    # may start on a past date
    d = evaluate(participant(birth_date="1965-03-15", entry_date="1985-01-15",
                             separation_date="2012-12-31", creditable_service_years="27.5"))
    # rules §5 Decision: when the requirements were met, never "entitled since"
    assert d.headline == ("Tiene derecho a una pensión diferida: cumple los requisitos desde el "
                          "15 de marzo de 2020; puede solicitarla ahora (Regla 19.3).")
    assert "cualquier fecha posterior" not in d.headline


def test_the_span_warning_shows_numbers_that_prove_it():
    # rules §7: the span is 25 years and 2 months = 25.1667 (rounded to 4 places):
    # example 4 (25.1667 years of service) gets no warning, 25.1668 does
    assert "service_exceeds_span" not in evaluate(POLICE_NEW).warnings
    f = finding(evaluate(POLICE_OVER_SPAN), "service_exceeds_span")
    shown = re.search(r"es decir, ([0-9.]+) años", f.text).group(1)
    assert shown == f.values["span_years"] == "25.1667"  # the number compared
    assert Decimal(shown) < Decimal(f.values["service"]) == Decimal("25.1668")
    assert "(25 años y 2 meses, es decir, 25.1667 años)" in f.text and "…" not in f.text


def test_the_retirement_annuity_warning_names_its_source_from_the_rules_file():
    d = evaluate(participant(birth_date="1950-01-01", entry_date="1980-01-01",
                             separation_date="2010-06-30", creditable_service_years="15"))
    f = finding(d, "retirement_annuity_may_apply")
    source = diferida.load_rules().citations["retirement_annuity"]
    assert f.rule == source == "3 L.P.R.A. § 766"
    assert "la ley del Sistema (3 L.P.R.A. § 766) habla de una anualidad por retiro" in f.text
    # the statute's text has not been read here: its conditions are not stated,
    # only the member's facts and that the System should check
    assert "el Sistema debe verificar si le corresponde" in f.text
    assert "corresponde a quien se separa antes" not in f.text
    assert "Se separó el 30 de junio de 2010, cuando ya había cumplido los 58 años" in f.text


# ---- every decision that shapes this answer, and only those -------------------

def test_a_new_police_officer_on_19_4_is_told_the_reading_the_doubt_the_variant_and_its_date(
        client):
    d = evaluate(POLICE_NEW)
    f = finding(d, "reading_19_4")
    assert f.rule == "Regla 19.4"
    for words in ("a los dos regímenes", "3 L.P.R.A. § 766", "3 L.P.R.A. § 766d",
                  "article19-strict-19_4", "sería elegible el 20 de junio de 2040 por la "
                  "Regla 19.2"):
        assert words in f.text, words
    assert f.values["other_eligibility_date"] == "2040-06-20"
    # the strict variant gives that very date
    assert evaluate(POLICE_NEW, rules=STRICT).eligibility_date == date(2040, 6, 20)
    for printout in (False, True):
        shown = page_text(web(client, POLICE_NEW, printout=printout))
        assert "Lectura de la Regla 19.4 usada en este resultado" in shown
        assert "sería elegible el 20 de junio de 2040" in shown


def test_the_19_4_reading_is_stated_only_for_a_new_participant_whose_route_is_19_4():
    pre1990 = participant(birth_date="1960-01-01", entry_date="1985-01-01",
                          separation_date="2012-01-01", creditable_service_years="26",
                          group="police")
    assert evaluate(pre1990).route == "19.4(a)"
    for p in (pre1990, participant(), participant(group="police")):
        assert not [f for f in evaluate(p).explanation if f.condition == "reading_19_4"]


def test_the_29_february_decision_is_stated_only_when_it_moves_a_date():
    leap = evaluate(participant(birth_date="1968-02-29", entry_date="1989-09-01",
                                separation_date="2009-08-31", creditable_service_years="20"))
    assert "Nació un 29 de febrero" in finding(leap, "age", "19.1(a)").text
    assert "29 de febrero" not in texts(evaluate(participant(birth_date="1968-03-01")))


def test_the_amount_following_the_regime_is_stated_when_the_route_is_of_another_section():
    police = finding(evaluate(POLICE_NEW), "amount")
    assert "Aunque cualifica por la Regla 19.4(a)" in police.text and "Decisión" in police.text
    assert "Aunque" not in finding(evaluate(participant()), "amount").text


def test_two_routes_opening_the_same_day_are_told_with_the_tie_rule():
    # separated at 60 with 25 years: 19.1(b), 19.4(a) and 19.4(b) open on separation
    d = evaluate(participant(birth_date="1950-01-01", entry_date="1980-01-01",
                             separation_date="2010-01-01", creditable_service_years="25",
                             group="police"))
    assert d.route == "19.1(b)"
    f = finding(d, "eligibility")
    assert f.values["tied_routes"] == ["19.1(b)", "19.4(a)", "19.4(b)"]
    assert ("Ese mismo día se abrieron también las vías de la Regla 19.4(a) y la Regla "
            "19.4(b)") in f.text  # 2010: in the past
    assert "primera en el orden del artículo (Decisión)" in f.text
    assert "la primera en abrirse" not in f.text  # not said of a tie
    assert "tied_routes" not in finding(evaluate(participant()), "eligibility").values


def test_the_1990_decision_is_stated_only_for_an_entry_on_1_april_1990():
    on_the_day = cli(participant(entry_date="1990-04-01")).stdout
    assert "quien ingresó ese mismo día es participante anterior a 1990" in on_the_day
    assert "Decisión" not in finding(evaluate(participant(entry_date="1985-01-01")),
                                     "regime").text


def test_every_determination_names_its_rules_by_name_and_title(client):
    for rules in ("article19", STRICT):
        d = evaluate(participant(), rules=rules)
        loaded = diferida.load_rules(rules)
        assert (d.to_dict()["rules_name"], d.to_dict()["rules_title"]) == (
            loaded.name, loaded.title)
        assert f"{loaded.name} — {loaded.title} ({loaded.version})" in render_text(d)
        for printout in (False, True):
            shown = page_text(web(client, participant(), rules=rules, printout=printout))
            assert f"{loaded.name} — {loaded.title}" in shown
    assert "Reglas aplicadas por defecto" in page_text(web(client, participant()))
    assert "Reglas aplicadas por defecto" not in page_text(
        web(client, participant(), rules=STRICT))


# ---- citations point to real sources ------------------------------------------

def test_the_scope_note_and_the_data_checks_are_not_cited_as_parts_of_the_article():
    d = evaluate(POLICE_OVER_SPAN)
    assert finding(d, "scope").rule == "Nota de alcance"
    assert finding(d, "service_exceeds_span").rule == "Verificación de datos"
    assert "Art. 19" not in {f.rule for f in d.explanation}
    assert "(alcance)" not in texts(d)
    assert finding(evaluate(POLICE_NEW, "en"), "scope").rule == "Scope note"


def test_under_the_strict_variant_the_19_4_limit_cites_the_variant_and_keeps_the_group_rule():
    police = evaluate(POLICE_NEW, rules=STRICT)
    f = finding(police, "route_applies", "19.4(a)")
    assert f.rule == "article19-strict-19_4 (3 L.P.R.A. § 766)"
    assert f.text.startswith("Según las reglas article19-strict-19_4 (3 L.P.R.A. § 766), "
                             "la Regla 19.4(a) no se aplica a participantes nuevos")
    general = finding(evaluate({**POLICE_NEW, "group": "general"}, rules=STRICT),
                      "route_applies", "19.4(a)")
    assert general.rule == "Regla 19.4(a)"
    assert "Cuerpo de la Policía o del Cuerpo de Bomberos" in general.text


# ---- the later laws, where they touch this case ---------------------------------

@pytest.mark.parametrize("changes, code, present", [
    ({"separation_date": "2013-06-30"}, "act_3_2013_accruals_frozen", False),
    ({"separation_date": "2013-07-01"}, "act_3_2013_accruals_frozen", True),
    # 58 on 2013-06-30 (not after the cut-off) and on 2013-07-01 (after it)
    ({"birth_date": "1955-06-30", "entry_date": "1980-01-01"}, "act_3_2013_ages_may_apply",
     False),
    ({"birth_date": "1955-07-01", "entry_date": "1980-01-01"}, "act_3_2013_ages_may_apply",
     True),
    # 22 years: 1.5% × 20 + 2% × 2 = 34% of AC a year; the monthly amount as paid
    # (rounded once to the cent) is compared: 17,646.89 × 0.34 / 12 = 499.9952 -> 500.00,
    # 17,646.88 × 0.34 / 12 = 499.9949 -> 499.99
    ({"average_compensation": "17646.89"}, "act_3_2013_minimum_may_apply", False),
    ({"average_compensation": "17646.88"}, "act_3_2013_minimum_may_apply", True),
])
def test_act_3_2013_warnings_appear_exactly_where_the_law_would_touch_the_case(
        changes, code, present):
    d = evaluate(participant(**changes))
    assert (code in d.warnings) is present
    if present:
        f = finding(d, code)
        assert f.rule == "Ley 3-2013" and "Esta determinación no aplica esa ley" in f.text


def test_later_law_warnings_are_not_given_to_those_not_entitled():
    d = evaluate(participant(separation_date="2020-01-01", refund_requested="true"))
    assert d.status == "not_entitled"
    assert not [w for w in d.warnings if w.startswith("act_3_2013")]


def test_an_entry_before_the_14th_birthday_is_flagged_as_implausible():
    at_birth = evaluate(participant(birth_date="1940-01-01", entry_date="1940-01-01",
                                    separation_date="1975-01-01", creditable_service_years="12"))
    assert "implausible_entry_age" in at_birth.warnings
    assert at_birth.minimum_applied is True  # no longer without a word
    f = finding(at_birth, "implausible_entry_age")
    assert f.rule == "Verificación de datos" and "14 años" in f.text
    at_14 = evaluate(participant(birth_date="1974-07-01", entry_date="1988-07-01"))
    assert "implausible_entry_age" not in at_14.warnings
    assert "implausible_entry_age" in json.loads(
        cli(participant(birth_date="1975-07-01", entry_date="1988-07-01",
                        separation_date="2010-06-30", creditable_service_years="22"),
            "--json").stdout)["warnings"]


# ---- Spanish an official would write; English to match ---------------------------

def test_one_day_left_is_singular():
    d = evaluate(participant(birth_date="1968-11-30"), rules=None)  # 58 on 2026-11-30
    f = finding(d, "eligibility")
    assert "Falta 1 día desde" in f.text
    assert "Faltan 1" not in texts(d)
    assert "Faltan 1 año, 5 meses y 11 días" in finding(evaluate(participant()),
                                                       "eligibility").text


def test_routes_for_another_regime_say_participants_in_the_plural():
    d = evaluate(participant())
    assert finding(d, "route_applies", "19.2").text == (
        "La Regla 19.2 es solo para participantes nuevos: no se aplica.")
    assert finding(evaluate(participant(), "en"), "route_applies", "19.2").text == (
        "Rule 19.2 is only for new participants: it does not apply.")


def test_sentences_begin_la_regla_and_the_citation_is_not_repeated_beside_its_finding():
    d = evaluate(participant())
    assert finding(d, "service", "19.1(a)").text.startswith("La Regla 19.1(a) exige")
    out = cli(participant()).stdout
    assert "[Regla" not in out and "] Regla" not in out
    assert "La Regla 19.1(a) exige al menos 10 y menos de 25 años" in out


def test_credited_service_reads_acredita_n_anos():
    text = finding(evaluate(participant()), "service", "19.1(a)").text
    assert "acredita 22 años: se cumple" in text and "tiene 22" not in text
    one = finding(evaluate(participant(creditable_service_years="1")), "service", "19.1(a)")
    assert "acredita 1 año:" in one.text


CODES = re.compile(r"\b(" + "|".join(
    [*STATUSES, *REASONS, *WARNINGS, "pre1990", "police", "firefighter"]) + r")\b")


def _examples() -> list[dict]:
    text = (resources.files("diferida") / "data" / "spec_examples.csv").read_bytes()
    frame = pl.read_csv(text, infer_schema=False)
    return [{k: v for k, v in row.items() if v is not None} for row in frame.iter_rows(named=True)]


@pytest.mark.parametrize("example", _examples(), ids=lambda r: r["participant_id"])
@pytest.mark.slow
def test_spanish_text_of_each_worked_example_shows_no_output_code_or_iso_date(client, example):
    out = cli(example)
    assert out.returncode == 0, out.stderr
    renderings = [out.stdout]
    p = {k: v for k, v in example.items() if k != "participant_id"}
    for printout in (False, True):
        html = web(client, p, printout=printout)
        body = html.split("<main", 1)[1]
        renderings.append(visible_body(body))
    for text in renderings:
        # the rules version is an identifier, not a date or a code
        text = re.sub(r"article19@[0-9a-f]{12}", "", text)
        assert not ISO_DATE.search(text), ISO_DATE.search(text).group(0)
        assert not CODES.search(text), CODES.search(text).group(0)
    # codes and ISO dates stay in the JSON, beside their texts
    data = json.loads(cli(example, "--json").stdout)
    assert data["status"] in STATUSES and ISO_DATE.fullmatch(data["as_of"])


def test_english_text_reads_rule_and_members_of_the_police_or_fire_corps():
    d = evaluate(participant(), "en")
    text = texts(d)
    assert not re.search(r"\bRegla\b", text) and "Rule 19.1(a) requires" in text
    assert finding(d, "route_applies", "19.4(a)").text == (
        "Rule 19.4(a) is only for members of the Police or Fire Corps: it does not apply.")
    assert not re.search(r"\bRegla\b", render_text(d))


def test_missing_fields_are_told_in_natural_spanish_agreeing_in_gender():
    with pytest.raises(diferida.InputError) as exc:
        evaluate({"group": None})
    messages = {p.field: p.message for p in exc.value.problems}
    assert messages["birth_date"] == "fecha de nacimiento (birth_date): es obligatoria: indíquela"
    assert messages["refund_requested"].endswith("es obligatorio: indíquelo")
    assert messages["creditable_service_years"].endswith("son obligatorios: indíquelos")
    assert all("falta" not in m for m in messages.values())
    out = cli({"birth_date": "1970-05-10"})
    assert out.returncode == 2 and "es obligatoria: indíquela" in out.stdout + out.stderr


# ---- the law's words come from the rules data -----------------------------------

@pytest.fixture
def reform(tmp_path, monkeypatch):
    """A variant with a 35% minimum and another cut-off date, offered by the
    page as if it were shipped."""
    import diferida.rules as rules_module
    import diferida.web.forms as forms_module
    import diferida.web.routes as routes_module

    path = tmp_path / "reform-19_6.toml"
    path.write_text('base = "article19"\n[meta]\nname = "reform-19_6"\n'
                    'title = "Art. 19 con un mínimo del 35%"\n'
                    '[regime.deferred_right_cutoff]\nvalue = "1965-12-31"\n'
                    'citation = "Regla 19.6"\n'
                    '[minimum]\ncitation = "Regla 19.6"\nrate = "0.35"\n', "utf-8")
    names = [*rules_module.builtin_names(), "reform-19_6"]
    builtin_path = rules_module._builtin_path
    monkeypatch.setattr(rules_module, "builtin_names", lambda: names)
    monkeypatch.setattr(forms_module, "builtin_names", lambda: names)
    monkeypatch.setattr(routes_module, "builtin_names", lambda: names)
    monkeypatch.setattr(rules_module, "_builtin_path",
                        lambda n: path if n == "reform-19_6" else builtin_path(n))
    rules_module._load_cached.cache_clear()
    from diferida.web import labels as labels_module
    labels_module.labels.cache_clear()
    yield "reform-19_6"
    rules_module._load_cached.cache_clear()
    labels_module.labels.cache_clear()


def test_a_variant_with_another_minimum_and_cut_off_changes_the_explanation_help_and_printout(
        client, reform):
    p = participant(birth_date="1935-06-01", entry_date="1962-01-01",
                    separation_date="1975-01-01", creditable_service_years="12",
                    average_compensation="10000.00")
    d = evaluate(p, rules=reform)
    f = finding(d, "minimum")
    assert "35%" in f.text and "31 de diciembre de 1965" in f.text
    assert "30%" not in f.text and "1960" not in f.text
    assert d.annual_amount == Decimal("3500.00")
    form = page_text(client.get("/").text)
    assert "30%" in form  # the page opens with the default rules
    html = page_text(web(client, p, rules=reform))
    assert "Al 31 de diciembre de 1965, ¿estaba acogido al Sistema" in html
    assert "mínima del 35% de la retribución promedio" in html
    printout = page_text(web(client, p, rules=reform, printout=True))
    assert "35% × $10,000.00 = $3,500.00" in printout and "31 de diciembre de 1965" in printout
