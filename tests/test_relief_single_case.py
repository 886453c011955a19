"""The illustrative relief files, and the single case with a relief: a
determination never applies a relief (its amount is the amount at the
start); the text, the web answer and the letter say so in one sentence when
the chosen rules set carries one; the calculator never offers an
illustrative relief; `rules diff` names each adjustment with its citation."""

from __future__ import annotations

import json
import warnings
from datetime import date
from decimal import Decimal

import pytest

import diferida
from diferida.i18n import catalog
from diferida.rules import builtin_names, illustrative, load_rules
from tests.conftest import run_in_process

PC2038 = "relief-pc2038-illustrative"
BONUS = "relief-bonus-1000-illustrative"
PERSON = ["--birth-date", "1972-11-02", "--entry-date", "1995-08-01",
          "--separation-date", "2015-07-31", "--service", "12.25", "--compensation", "28500",
          "--group", "general", "--no-refund", "--as-of", "2026-11-29"]
INPUTS = {"birth_date": "1972-11-02", "entry_date": "1995-08-01",
          "separation_date": "2015-07-31", "creditable_service_years": "12.25",
          "average_compensation": "28500.00", "group": "general", "refund_requested": "false"}
# the relief is said as not applied, true of any kind of relief (a one-time
# payment is no adjustment; a raise may reach pensions that start later)
SENTENCE = {"es": "que esta determinación no aplica: la cuantía indicada es la del Artículo 19",
            "en": "that this determination does not apply: the amount stated is Article 19's"}
CITED = {"es": "P. de la C. 2038 (2024), modelo ilustrativo",
         "en": "P. de la C. 2038 (2024), an illustrative model"}


def test_the_illustrative_relief_files_are_built_in_marked_and_read_as_the_bill_is_modelled():
    assert {PC2038, BONUS} <= set(builtin_names())
    r = load_rules(PC2038)
    assert illustrative(PC2038) and illustrative(BONUS)
    assert "NOT LAW" in r.description and "no es ley" in r.title
    assert r.relief is not None and "2038" in r.relief.citation
    raise_, cola = r.relief.adjustments
    assert (raise_.kind, raise_.date, raise_.rate, raise_.cap_monthly, raise_.who) == (
        "raise", date(2026, 7, 1), Decimal("0.10"), Decimal("300.00"), "all")
    assert (cola.kind, cola.date, cola.after_series) == ("cola", date(2027, 7, 1),
                                                        Decimal("0.025"))
    assert cola.series == ((2028, Decimal("0.032")), (2029, Decimal("0.025")),
                           (2030, Decimal("0.028")))
    # what applies after the series is stated: the rate of the years after it
    assert cola.cola_rate(2031) == Decimal("0.025") and cola.cola_rate(2028) == Decimal("0.032")
    [bonus] = load_rules(BONUS).relief.adjustments
    assert (bonus.kind, bonus.amount, bonus.below_monthly) == (
        "one_time", Decimal("1000.00"), Decimal("1000.00"))
    # the base's rules are unchanged: only what happens after the start is added
    assert load_rules(PC2038).routes == load_rules("article19").routes


def test_rules_diff_names_each_adjustment_of_a_relief_with_its_own_citation():
    # the attack: the adjustments were one cell, every key of every adjustment
    # run together under the relief's citation
    proc = run_in_process("rules", "diff", "article19", PC2038, "--json")
    assert proc.returncode == 0, proc.stderr
    got = {x["key"]: (x["a"], x["b"], x["citation"])
           for x in json.loads(proc.stdout)["differences"]}
    rate = got["post_start.raise 2026-07-01.rate"]
    assert rate[:2] == ("—", "0.10") and "aumento de 10 %" in rate[2]
    assert got["post_start.raise 2026-07-01.cap_monthly"][1] == "300.00"
    series = got["post_start.cola 2027-07-01.series"]
    assert series[1] == "FY2028 0.032, FY2029 0.025, FY2030 0.028"
    assert "COLA del Seguro Social" in series[2]
    assert got["post_start.cola 2027-07-01.after_series"][1] == "0.025"
    assert "post_start.adjustments" not in got
    # two reliefs: only what differs, adjustment by adjustment
    proc = run_in_process("rules", "diff", PC2038, BONUS, "--json")
    keys = {x["key"] for x in json.loads(proc.stdout)["differences"]}
    assert "post_start.one_time 2026-12-01.amount" in keys
    assert "post_start.raise 2026-07-01.rate" in keys and "routes.19.2.age" not in keys


@pytest.mark.parametrize("lang", ["es", "en"])
def test_evaluate_under_a_relief_says_so_in_one_sentence_and_the_amount_is_the_start(lang):
    relief = run_in_process("evaluate", *PERSON, "--rules", PC2038, "--lang", lang)
    plain = run_in_process("evaluate", *PERSON, "--rules", "article19", "--lang", lang)
    assert relief.returncode == plain.returncode == 0
    note = catalog(lang)["rules_relief"]["note"].format(citation=CITED[lang])
    assert relief.stdout.count(note) == 1 and relief.stdout.count(SENTENCE[lang]) == 1
    # one language: the source in the text's language, never both
    assert "illustrative model" not in relief.stdout if lang == "es" else \
        "modelo ilustrativo" not in relief.stdout
    assert "antes de esos ajustes" not in relief.stdout
    assert "before those adjustments" not in relief.stdout
    assert SENTENCE[lang] not in plain.stdout
    # the relief changes no determination: the same amounts to the cent
    a = json.loads(run_in_process("evaluate", *PERSON, "--rules", "article19", "--json").stdout)
    b = json.loads(run_in_process("evaluate", *PERSON, "--rules", PC2038, "--json").stdout)
    assert (a["monthly_amount"], a["annual_amount"], a["start_date"], a["status"]) == (
        b["monthly_amount"], b["annual_amount"], b["start_date"], b["status"])


def test_the_default_rules_say_nothing_of_a_relief():
    out = run_in_process("evaluate", *PERSON, "--lang", "en").stdout
    assert SENTENCE["en"] not in out and SENTENCE["es"] not in out


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_letter_says_it_beside_the_rules_set_once(lang):
    from diferida.letter.view import facts_rows
    from tests.letter_helpers import facts

    d = diferida.evaluate(INPUTS, as_of=date(2026, 11, 29), rules=PC2038, lang=lang).to_dict()
    f = facts(INPUTS, d, lang, as_of=date(2026, 11, 29))
    rows = facts_rows(f, d, load_rules(PC2038))
    said = [r for r in rows if SENTENCE[lang] in r["value"]]
    assert len(said) == 1 and said[0]["label"] == catalog(lang)["letter"]["rules_set"]
    d0 = diferida.evaluate(INPUTS, as_of=date(2026, 11, 29), rules="article19",
                           lang=lang).to_dict()
    rows0 = facts_rows(facts(INPUTS, d0, lang, as_of=date(2026, 11, 29)), d0,
                       load_rules("article19"))
    assert not any(SENTENCE[lang] in r["value"] for r in rows0)


def test_the_web_answer_says_it_for_a_rules_set_with_a_relief():
    from diferida.web.forms import FormState
    from diferida.web.view import result_view

    for name, says in ((PC2038, True), ("article19", False)):
        d = diferida.evaluate(INPUTS, as_of=date(2026, 11, 29), rules=name, lang="en")
        view = result_view(FormState(lang="en", determination=d), date(2026, 11, 29))
        assert (view["relief_note"] is not None) is says
        if says:
            assert SENTENCE["en"] in view["relief_note"]


def test_the_calculator_never_offers_an_illustrative_relief(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient
    from diferida.server import create_app
    from diferida.service.settings import Settings

    app = create_app(Settings(database_url=f"sqlite:///{tmp_path / 'web.db'}"))
    with TestClient(app) as c:
        page = c.get("/").text
        assert 'value="article19"' in page
        assert f'value="{PC2038}"' not in page and f'value="{BONUS}"' not in page
        form = {"birth_date": "1972-11-02", "entry_date": "1995-08-01",
                "separation_date": "2015-07-31", "creditable_service_years": "12.25",
                "average_compensation": "28500.00", "group": "general",
                "refund_requested": "false", "as_of": "2026-11-29", "lang": "en"}
        for name in (PC2038, BONUS):
            answer = c.post("/calcular", data={**form, "rules": name}).text
            assert 'id="e-rules"' in answer and SENTENCE["en"] not in answer
            assert "November 2, 2037" not in answer


def test_rules_list_keeps_its_columns_with_the_long_names_of_the_reliefs():
    # the attack: a name longer than 24 characters pushed its version and
    # description out of their columns
    proc = run_in_process("rules", "list")
    assert proc.returncode == 0
    lines = [line for line in proc.stdout.splitlines() if "@" in line]
    assert {line.split()[0] for line in lines} >= {PC2038, BONUS, "article19"}
    assert len({line.index(line.split()[1]) for line in lines}) == 1
    assert len({line.index(line.split()[2]) for line in lines}) == 1
