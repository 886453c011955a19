"""Every sentence of a determination true (issue: every sentence true), in
Spanish and English, through the engine's text, the `--json` explanation and
the command line:

1. no retroactive start attributed to Regla 19.3 (rules §5), and the warning
   `start_before_determination`;
3. a member outside Article 19 (Act 305-1999) is told so, and nothing more;
4. route sentences take the tense of their date (would have opened / would
   open; opened / will open on a tie), and a tie is not "the first to open";
5. the retirement-annuity warning cites the statute of the member's regime;
6. the span warning shows the number it compared (rules §7);
7. the 19.4 doubt is stated under either reading, with the other's date;
8. a number a rules set changes is attributed to the rules set;
11. no full stop inside a parenthesis mid-sentence; no "on or after X" of X.
And a property over generated participants and dates."""

from __future__ import annotations

import json
import re
import subprocess
from datetime import date, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import diferida
from diferida.outcomes import REASONS, STATUSES, WARNINGS

from .conftest import cli_command, examples, participant

AS_OF = date(2026, 12, 1)
STRICT = "article19-strict-19_4"
# eligible since 1 January 1998 (58 on that day, separated in 1995)
EARLY = participant(birth_date="1940-01-01", entry_date="1980-01-01",
                    separation_date="1995-01-01", creditable_service_years="15")
# a new participant of the Fire Corps with 12 years: 19.4(b) at 58 (2033), or
# 19.2 at 65 (2040) under the strict reading
FIREFIGHTER = participant(birth_date="1975-06-20", entry_date="1996-02-01",
                          separation_date="2012-03-31", creditable_service_years="12",
                          group="firefighter")
ACT_305 = participant(birth_date="1975-01-01", entry_date="2000-01-01",
                      separation_date=None, creditable_service_years="8")


def ev(p, lang="es", rules=None, as_of=AS_OF):
    return diferida.evaluate(p, as_of=as_of, lang=lang, rules=rules)


def finding(d, condition):
    hits = [f for f in d.explanation if f.condition == condition]
    assert len(hits) == 1, [f.condition for f in d.explanation]
    return hits[0]


def all_text(d) -> str:
    return " ".join([d.headline, *(f.text for f in d.explanation)])


def cli_json(args: list[str]) -> dict:
    proc = subprocess.run([*cli_command(), "evaluate", *args, "--json"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def early_args(*extra: str, lang: str = "es") -> list[str]:
    return ["--birth-date", "1940-01-01", "--entry-date", "1980-01-01",
            "--separation-date", "1995-01-01", "--service", "15", "--compensation", "30000",
            "--no-refund", "--as-of", AS_OF.isoformat(), "--lang", lang, *extra]


# ---- 1. Regla 19.3: when the pension may be requested -----------------------

START_WORDS = {"es": re.compile(r"(comienc|comenz|empie[cz]|empezar)\w*", re.I),
               "en": re.compile(r"\b(start|begin)\w*", re.I)}


@pytest.mark.parametrize("lang", ["es", "en"])
def test_an_early_eligible_is_told_it_may_be_requested_now_not_that_it_starts_in_1998(lang):
    d = ev(EARLY, lang)
    f = finding(d, "start")
    assert d.status == "eligible" and d.eligibility_date == date(1998, 1, 1)
    if lang == "es":
        assert d.headline == ("Tiene derecho a una pensión diferida: cumple los requisitos "
                              "desde el 1 de enero de 1998; puede solicitarla ahora (Regla 19.3).")
        assert "puede solicitarla ahora" in f.text
        assert "comience desde el 1 de enero de 1998" not in all_text(d)
    else:
        assert d.headline == ("Entitled to a deferred pension: the requirements have been met "
                              "since January 1, 1998; it may be requested now (Rule 19.3).")
        assert "it may be requested now" in f.text
    # the only sentence that names a start says it is not a start in the past
    assert "not that" in f.text or "no que" in f.text


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_start_asked_for_in_the_past_is_reported_with_the_warning(lang):
    d = ev({**EARLY, "requested_start_date": "2024-01-01"}, lang)
    assert d.start_date == date(2024, 1, 1)  # it is what was asked (rules §5)
    assert d.warnings[0] == "start_before_determination"
    f = finding(d, "start")
    w = finding(d, "start_before_determination")
    assert w.rule == ("Regla 19.3" if lang == "es" else "Rule 19.3")
    if lang == "es":
        assert "lo permite, así que esa es la fecha de comienzo" not in f.text
        assert "no que pueda comenzar en una fecha pasada" in f.text
        assert "lo decide el Sistema" in w.text and "1 de diciembre de 2026" in w.text
    else:
        assert "not that it may start on a past date" in f.text
        assert "for the System to decide" in w.text


def test_a_start_asked_for_today_or_later_gets_no_warning():
    for start in (AS_OF, AS_OF + timedelta(days=1)):
        d = ev({**EARLY, "requested_start_date": start.isoformat()})
        assert d.start_date == start and "start_before_determination" not in d.warnings


def test_a_premature_request_before_as_of_gets_no_start_but_the_warning():
    # rules §5 Decision: the warning for every requested start before as_of,
    # premature or not
    d = ev({**EARLY, "requested_start_date": "1997-01-01"})
    assert d.premature_request and d.start_date is None
    assert d.warnings[0] == "start_before_determination"
    assert "puede solicitarla ahora" in finding(d, "start").text
    w = finding(d, "start_before_determination")
    assert w.values["requested_start_date"] == "1997-01-01" and w.values["start_date"] is None
    assert "1 de enero de 1997" in w.text and "elegibilidad" in w.text


@pytest.mark.slow
def test_the_command_line_and_its_json_say_the_same():
    out = cli_json(early_args("--start", "2024-01-01"))
    assert out["start_date"] == "2024-01-01"
    assert out["warnings"][0] == "start_before_determination"
    texts = " ".join(f["text"] for f in out["explanation"])
    assert "no que pueda comenzar en una fecha pasada" in texts
    proc = subprocess.run([*cli_command(), "evaluate", *early_args("--start", "2024-01-01")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "lo permite, así que esa es la fecha de comienzo" not in proc.stdout
    assert "lo decide el Sistema" in proc.stdout


# a police officer, new participant (1995), 25.5 years: 19.4(a) since 30 June
# 2020 as written; under the strict reading 19.2 from 10 March 2030, so a start
# asked for on 1 January 2021 is premature there
POLICE_PAST_START = ["--birth-date", "1965-03-10", "--entry-date", "1995-01-01",
                     "--separation-date", "2020-06-30", "--service", "25.5",
                     "--compensation", "40000", "--no-refund", "--group", "police",
                     "--start", "2021-01-01", "--as-of", "2026-12-03",
                     "--rules", "article19", "--rules", STRICT]
PAST_START_SAID = {
    "es": ("Fecha de comienzo: pidió el 1 de enero de 2021, fecha anterior a esta determinación "
           "(3 de diciembre de 2026); si se pagan meses anteriores a la solicitud lo decide el "
           "Sistema → solicitud prematura: pidió el 1 de enero de 2021, antes de la fecha de "
           "elegibilidad; podrá solicitarla desde el 10 de marzo de 2030"),
    "en": ("Start date: asked for January 1, 2021, a date before this determination (December "
           "3, 2026); whether months before the application are paid is for the System to "
           "decide → premature request: asked for January 1, 2021, before the eligibility "
           "date; it may be requested from March 10, 2030")}


@pytest.mark.parametrize("lang", ["es", "en"])
def test_two_rule_sets_side_by_side_never_say_a_past_start_bare(lang):
    # the attack: `evaluate --rules A --rules B --start <past>` said "Fecha de
    # comienzo: 1 de enero de 2021 → —" (a bare past date; a premature
    # request as nothing); rules §5 Decision: the determination's own words
    from click.testing import CliRunner

    from diferida.cli import main
    from diferida.i18n import fmt_date

    r = CliRunner().invoke(main, ["evaluate", *POLICE_PAST_START, "--lang", lang])
    assert r.exit_code == 0, r.output
    changes = [line.strip() for line in r.output.splitlines() if " → " in line]
    assert PAST_START_SAID[lang] in changes
    # no value of any start said to people is a bare past date or a bare "—"
    label = "Fecha de comienzo" if lang == "es" else "Start date"
    start_rows = [line for line in r.output.splitlines()
                  if re.match(rf"\s*(Comienzo|Start|{label})\b", line)]
    assert len(start_rows) == 3  # A's row, B's row, the change
    bare = {fmt_date(date(2021, 1, 1), lang), "—"}
    for line in start_rows:
        values = re.split(r" → |: |\s{2,}", line.strip(), maxsplit=1)[1].split(" → ")
        assert not bare & {v.strip() for v in values}, line
    # the programs' form keeps the codes and ISO dates
    j = CliRunner().invoke(main, ["evaluate", *POLICE_PAST_START, "--lang", lang, "--json"])
    differences = json.loads(j.output)["differences"]
    assert differences["start_date"] == {"a": "2021-01-01", "b": None}


# ---- 3. outside Article 19 ----------------------------------------------------

@pytest.mark.parametrize("lang", ["es", "en"])
def test_an_act_305_member_is_told_article_19_does_not_cover_them_and_nothing_more(lang):
    d = ev(ACT_305, lang)
    assert d.status == "not_entitled" and d.reasons[0] == "not_covered"
    assert [f.condition for f in d.explanation] == ["covered", "scope"]
    text = all_text(d)
    for advice in ("Haría falta", "Harán falta", "también cuentan", "separarse del servicio",
                   "would be needed", "also counts", r"\btablas?\b", r"\btables?\b"):
        assert not re.search(advice, text), advice
    proc = subprocess.run([*cli_command(), "evaluate", "--birth-date", "1975-01-01",
                           "--entry-date", "2000-01-01", "--service", "8",
                           "--compensation", "30000", "--no-refund", "--as-of", "2026-12-01"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "también cuentan" not in proc.stdout and "Artículo 19" in proc.stdout


@pytest.mark.parametrize("lang, same", [("es", "el día desde el cual"),
                                        ("en", "the day from which")])
def test_an_entry_on_the_cut_off_day_is_not_on_or_after_itself(lang, same):
    text = finding(ev(ACT_305, lang), "covered").text
    assert same in text
    assert "en o después del 1 de enero de 2000" not in text
    assert "on or after January 1, 2000" not in text


def test_an_entry_on_1_april_1990_is_not_on_or_before_itself():
    d = ev(participant(birth_date="1960-01-01", entry_date="1990-04-01",
                       separation_date="2000-03-31", creditable_service_years="10"))
    text = finding(d, "regime").text
    assert "en o antes del 1 de abril de 1990" not in text
    assert "el mismo 1 de abril de 1990" in text


# ---- 4. tenses ---------------------------------------------------------------

def test_a_route_of_someone_not_entitled_would_have_opened_in_the_past_and_would_open_later():
    refund = {**EARLY, "refund_requested": "true"}  # 19.1(a) on 1998-01-01: past
    es = finding(ev(refund), "age").text
    assert "se habría abierto el 1 de enero de 1998" in es and "se abriría" not in es
    en = finding(ev(refund, "en"), "age").text
    assert "would have opened on January 1, 1998" in en
    future = {**refund, "birth_date": "1975-01-01", "entry_date": "1989-01-01",
              "separation_date": "2005-01-01"}  # 58 on 2033-01-01
    assert "se abriría el 1 de enero de 2033" in finding(ev(future), "age").text


def test_a_tie_in_the_past_opened_and_a_tie_in_the_future_will_open():
    # separated at 60 with 25 years: 19.1(b), 19.4(a), 19.4(b) open the same day
    past = ev(participant(birth_date="1950-01-01", entry_date="1980-01-01",
                          separation_date="2010-01-01", creditable_service_years="25",
                          group="police"))
    text = finding(past, "eligibility").text
    assert "Ese mismo día se abrieron también las vías" in text
    assert "se abren" not in text and "la primera en abrirse" not in text
    future = ev(participant(birth_date="1980-01-01", entry_date="1988-01-01",
                            separation_date="2013-01-01", creditable_service_years="25",
                            group="police"))  # 19.1(b) at 55 (2035) and 19.4(a) at 50 (2030)
    assert future.route == "19.4(a)"
    # separated in 2031 at 56 with 25 years: 19.1(b) and 19.4(a) open that day
    tie = ev(participant(birth_date="1975-01-01", entry_date="1988-01-01",
                         separation_date="2031-01-01", creditable_service_years="25",
                         group="police"), as_of=date(2026, 12, 1))
    f = finding(tie, "eligibility")
    assert f.values["tied_routes"] == ["19.1(b)", "19.4(a)"]
    assert "Ese mismo día se abrirá también la vía de la Regla 19.4(a)" in f.text
    assert "la primera en abrirse" not in f.text


# ---- 5. the statute of the member's regime ----------------------------------

@pytest.mark.parametrize("p, statute", [
    (participant(birth_date="1950-01-01", entry_date="1980-01-01",
                 separation_date="2010-06-30", creditable_service_years="15"),
     "3 L.P.R.A. § 766"),
    (participant(birth_date="1940-01-01", entry_date="1991-01-01",
                 separation_date="2010-06-30", creditable_service_years="15"),
     "3 L.P.R.A. § 766d"),
])
def test_the_retirement_annuity_warning_cites_the_section_of_the_members_regime(p, statute):
    d = ev(p)
    f = finding(d, "retirement_annuity_may_apply")
    assert f.rule == statute
    regime = finding(d, "regime").text
    assert ("es participante nuevo" in regime) == statute.endswith("766d")


# ---- 6. the span warning ------------------------------------------------------

@pytest.mark.parametrize("service, warned", [("25.1667", False), ("25.1668", True)])
def test_example_4_span_is_25_years_2_months_and_the_text_shows_the_number_compared(
        service, warned):
    d = ev(participant(birth_date="1975-06-20", entry_date="1996-02-01",
                       separation_date="2021-03-31", creditable_service_years=service,
                       average_compensation="36000.00", group="police"))
    assert ("service_exceeds_span" in d.warnings) is warned
    if warned:
        text = finding(d, "service_exceeds_span").text
        assert "(25 años y 2 meses, es decir, 25.1667 años)" in text


# ---- 7. the 19.4 doubt under either reading --------------------------------

@pytest.mark.parametrize("rules, lang, date_text", [
    (None, "es", "sería elegible el 20 de junio de 2040 por la Regla 19.2"),
    (STRICT, "es", "sería elegible el 20 de junio de 2033 por la Regla 19.4(b)"),
    (None, "en", "eligibility would be on June 20, 2040 under Rule 19.2"),
    (STRICT, "en", "eligibility would be on June 20, 2033 under Rule 19.4(b)"),
])
def test_the_doubt_and_the_other_readings_date_are_stated_under_either_reading(
        rules, lang, date_text):
    d = ev(FIREFIGHTER, lang, rules=rules)
    f = finding(d, "reading_19_4")
    assert date_text in f.text
    other = "article19" if rules == STRICT else STRICT
    assert f.values["other_reading"] == other


def test_the_formula_decision_is_stated_alike_under_both_readings_for_a_19_4_route():
    pre1990_police = participant(birth_date="1960-01-01", entry_date="1985-01-01",
                                 separation_date="2012-01-01", creditable_service_years="26",
                                 group="police")
    for rules in (None, STRICT):
        d = ev(pre1990_police, rules=rules)
        assert d.route == "19.4(a)"
        assert "la fórmula sigue al régimen" in finding(d, "amount").text
    general = ev(participant())  # 19.1(a): the regime's own route, nothing to decide
    assert "la fórmula sigue al régimen" not in finding(general, "amount").text


# ---- 8. a reform says what it is ---------------------------------------------

@pytest.mark.parametrize("lang, says, not_says", [
    ("es", "Según las reglas reform-19_2-age-67 (en el Reglamento, la Regla 19.2 pide 65 años)",
     "La Regla 19.2 exige además haber cumplido 67 años"),
    ("en", "Under the rules reform-19_2-age-67 (in the Regulation, Rule 19.2 asks for age 65)",
     "Rule 19.2 also requires having reached age 67"),
])
def test_a_changed_age_is_the_reforms_not_the_regulations(lang, says, not_says):
    d = ev(participant(birth_date="1960-01-01", entry_date="1990-04-02",
                       separation_date="2000-04-01", creditable_service_years="10"),
           lang, rules="reform-19_2-age-67")
    text = finding(d, "age").text
    assert says in text and not_says not in text
    assert "67" in text


def test_a_changed_service_threshold_is_the_rules_sets(tmp_path):
    path = tmp_path / "twelve.toml"
    path.write_text('base = "article19"\n[meta]\nname = "twelve"\n'
                    '[route_overrides."19.2"]\nmin_service = "12"\n')
    d = ev(participant(birth_date="1960-01-01", entry_date="1990-04-02",
                       separation_date="2005-04-01", creditable_service_years="15"),
           rules=path)
    f = [f for f in d.explanation if f.condition == "service"
         and f.values["route"] == "19.2"][0]
    assert f.text.startswith("Según las reglas twelve (en el Reglamento, la Regla 19.2 pide "
                             "10 años), la Regla 19.2 exige al menos 12 años")


# ---- 11. smaller things ------------------------------------------------------

@pytest.mark.parametrize("lang", ["es", "en"])
def test_no_full_stop_inside_a_parenthesis_in_the_middle_of_a_sentence(lang):
    d = ev(participant(birth_date="1935-06-01", entry_date="1955-01-01",
                       separation_date="1975-01-01", creditable_service_years="12",
                       average_compensation="10000.00"), lang)
    for f in d.explanation:
        for inside in re.findall(r"\(([^()]*)\)", f.text):
            assert not re.search(r"\.\s+[A-ZÁÉÍÓÚÑ]", inside), (inside, f.text)


# ---- the property: words, tenses, no start before as_of ---------------------

# the codes that are not words of either language ("eligible" is English)
CODES = [c for c in (*STATUSES, *REASONS, *WARNINGS, "route_applies", "pre1990")
         if "_" in c or any(ch.isdigit() for ch in c)]
ISO = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
FUTURE = {"es": re.compile(r"\b(será|tendrá|cumplirá|abrirá|abrirán|podrá)\b"),
          "en": re.compile(r"\bwill\b")}


@st.composite
def people(draw):
    birth = draw(st.dates(date(1930, 1, 1), date(1985, 12, 31)))
    entry = draw(st.dates(birth + timedelta(days=16 * 365), min(birth + timedelta(days=50 * 365),
                                                                date(2003, 12, 31))))
    separated = draw(st.booleans())
    sep = draw(st.dates(entry, entry + timedelta(days=40 * 365))) if separated else None
    span_years = ((sep or date(2026, 1, 1)) - entry).days / 365.25
    service = draw(st.integers(0, max(int(span_years * 100), 0))) / 100
    start = draw(st.none() | st.dates(date(1990, 1, 1), date(2050, 12, 31)))
    as_of = draw(st.dates(date(1995, 1, 1), date(2045, 12, 31)))
    p = participant(birth_date=birth.isoformat(), entry_date=entry.isoformat(),
                    separation_date=None if sep is None else sep.isoformat(),
                    creditable_service_years=f"{service:.2f}",
                    group=draw(st.sampled_from(["general", "police", "firefighter"])),
                    refund_requested=draw(st.sampled_from(["false", "false", "true"])),
                    requested_start_date=None if start is None else start.isoformat())
    return p, as_of


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(people(), st.sampled_from(["es", "en"]), st.sampled_from([None, STRICT]))
@pytest.mark.slow
def test_no_text_holds_a_code_an_iso_date_or_a_wrong_tense(case, lang, rules):
    p, as_of = case
    try:
        d = diferida.evaluate(p, as_of=as_of, lang=lang, rules=rules)
    except diferida.InputError:
        return
    for text in [d.headline, *(f.text for f in d.explanation)]:
        assert not ISO.search(text), text
        assert not re.search(r"\b(true|false)\b", text), text
        for code in CODES:
            assert code not in text, (code, text)
    # a date on or before as_of is never spoken of in the future tense: each
    # finding about one date (a route's age, an opening, the eligibility)
    for f in d.explanation:
        when = {k: v for k, v in f.values.items()
                if k in ("age_date", "opens", "eligibility_date") and v}
        if f.condition == "eligibility" and date.fromisoformat(when["eligibility_date"]) <= as_of:
            assert not FUTURE[lang].search(f.text), f.text
    # Regla 19.3 never puts a start before as_of, except the start asked for
    if d.status != "not_entitled" and "requested_start_date" not in p:
        start = finding(d, "start")
        first = start.text.split(". ")[0]  # the second sentence says what 19.3 does not say
        if d.eligibility_date <= as_of:
            assert not START_WORDS[lang].search(first), start.text


def test_changed_rates_and_minimum_are_the_rules_sets(tmp_path):
    path = tmp_path / "rates.toml"
    path.write_text('base = "article19"\n[meta]\nname = "rates"\n[amount.new]\n'
                    'brackets = [{ threshold = "0", rate = "0.02" }]\n[minimum]\nrate = "0.35"\n')
    d = ev(participant(birth_date="1960-01-01", entry_date="1990-04-02",
                       separation_date="2005-04-01", creditable_service_years="15"),
           rules=path)
    assert ("Los porcentajes son los de las reglas rates, no los de la Regla 19.5(b) del "
            "Reglamento.") in finding(d, "amount").text
    old = ev(participant(birth_date="1935-06-01", entry_date="1955-01-01",
                         separation_date="1975-01-01", creditable_service_years="12",
                         average_compensation="10000.00"), rules=path)
    assert ("El porcentaje es el de las reglas rates, no el de la Regla 19.6 del Reglamento."
            in finding(old, "minimum").text)
    assert "las reglas rates" not in finding(old, "amount").text  # 19.5(a) is the law's


# ---- rules §5 Decision: no start before the determination, wherever a start is said

from diferida.i18n import catalog as _catalog  # noqa: E402
from diferida.letter.view import warnings as _letter_warnings  # noqa: E402
from diferida.render import render_text  # noqa: E402
from diferida.rules import load_rules  # noqa: E402

DEC_3 = date(2026, 12, 3)
# the reader of the law's case: eligible since 10 March 1986 (58 that day,
# separated in 1980), a premature request for 1 January 1980
LONG_AGO = participant(birth_date="1928-03-10", entry_date="1960-01-01",
                       separation_date="1980-06-30", creditable_service_years="20",
                       average_compensation="12000.00")


def row_of(text: str, label: str) -> str:
    """A row of the command line's table, by its label."""
    hits = [line[len(label):].strip() for line in text.splitlines()
            if line.startswith(label + " ")]
    assert len(hits) == 1, (label, text)
    return hits[0]


def start_row(d) -> str:
    return row_of(render_text(d), _catalog(d.lang)["render_labels"]["start_date"])


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_premature_past_request_of_a_member_eligible_since_1986(lang):
    d = ev({**LONG_AGO, "requested_start_date": "1980-01-01"}, lang, as_of=DEC_3)
    assert d.status == "eligible" and d.premature_request
    assert d.eligibility_date == date(1986, 3, 10)
    # the warning, premature or not (it used to be missing here)
    assert "start_before_determination" in d.warnings
    w = finding(d, "start_before_determination")
    assert w.values["requested_start_date"] == "1980-01-01"
    if lang == "es":
        assert d.headline == ("Tiene derecho a una pensión diferida: cumple los requisitos "
                              "desde el 10 de marzo de 1986; puede solicitarla ahora "
                              "(Regla 19.3).")
        assert "pensión diferida desde el" not in d.headline
        assert start_row(d) == ("solicitud prematura: pidió el 1 de enero de 1980, antes de la "
                                "fecha de elegibilidad; puede solicitarla ahora")
        assert "la fecha más temprana es la de elegibilidad" not in render_text(d)
        assert "los cumple desde el 10 de marzo de 1986: puede solicitarla ahora" in \
            finding(d, "start").text
        assert w.text.startswith("La fecha de comienzo pedida (1 de enero de 1980) es anterior "
                                 "a la fecha de elegibilidad")
    else:
        assert d.headline == ("Entitled to a deferred pension: the requirements have been met "
                              "since March 10, 1986; it may be requested now (Rule 19.3).")
        assert "pension since" not in d.headline
        assert start_row(d) == ("premature request: asked for January 1, 1980, before the "
                                "eligibility date; it may be requested now")
        assert "the earliest date is the eligibility date" not in render_text(d)


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_member_eligible_long_ago_who_asked_for_no_date_may_request_it_now(lang):
    d = ev(LONG_AGO, lang, as_of=DEC_3)
    assert d.status == "eligible" and "start_before_determination" not in d.warnings
    row = start_row(d)
    if lang == "es":
        assert row == "a solicitud: puede solicitarla ahora"
        assert "desde la fecha de elegibilidad o después" not in render_text(d)
    else:
        assert row == "on request: it may be requested now"
        assert "from the eligibility date or later" not in render_text(d)


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_past_start_asked_for_is_never_a_bare_date_in_the_start_row(lang):
    d = ev({**EARLY, "requested_start_date": "2021-01-01"}, lang, as_of=DEC_3)
    assert d.start_date == date(2021, 1, 1) and not d.premature_request
    assert d.warnings[0] == "start_before_determination"
    row = start_row(d)
    bare = "1 de enero de 2021" if lang == "es" else "January 1, 2021"
    assert row != bare
    assert row.startswith("pidió el 1 de enero de 2021, fecha anterior a esta determinación"
                          if lang == "es" else
                          "asked for January 1, 2021, a date before this determination")


def test_a_member_not_yet_eligible_is_offered_the_future_eligibility_date():
    d = ev(participant(), "es", as_of=DEC_3)  # rules §8 example 1: 10 May 2028
    assert d.status == "not_yet_eligible"
    assert start_row(d) == "a solicitud, desde el 10 de mayo de 2028 o en cualquier fecha posterior"


# the 19.4(a) doubt said once, consistently (rules §2)
NEW_POLICE = participant(birth_date="1970-01-01", entry_date="1995-01-01",
                         separation_date="2022-01-01", creditable_service_years="27",
                         average_compensation="40000.00", group="police")


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_new_police_officer_on_19_4_a_is_not_told_766d_grants_that_age(lang):
    d = ev(NEW_POLICE, lang, as_of=DEC_3)
    assert d.route == "19.4(a)" and "retirement_annuity_may_apply" in d.warnings
    w = finding(d, "retirement_annuity_may_apply")
    reading = finding(d, "reading_19_4")
    assert w.rule == "3 L.P.R.A. § 766"
    if lang == "en":
        assert "Under 3 L.P.R.A. § 766d, the deferred annuity" not in w.text
        assert "3 L.P.R.A. § 766d, the section for new participants, has no such option" in w.text
        assert "3 L.P.R.A. § 766d, the section for new participants, has no such option" in \
            reading.text
    else:
        assert "Según 3 L.P.R.A. § 766d, la anualidad diferida" not in w.text
        assert "3 L.P.R.A. § 766d, la sección de los participantes nuevos, no tiene esa opción" \
            in w.text
    # a pre-1990 officer keeps the statute of their regime
    old = ev({**NEW_POLICE, "entry_date": "1985-01-01"}, lang, as_of=DEC_3)
    assert finding(old, "retirement_annuity_may_apply").rule == "3 L.P.R.A. § 766"


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_19_1_regime_split_is_marked_as_a_decision(lang):
    new = ev(participant(birth_date="1960-01-01", entry_date="1995-01-01",
                         separation_date="2020-01-01", creditable_service_years="25"),
             lang, as_of=DEC_3)
    texts = [f.text for f in new.explanation if f.condition == "route_applies"
             and f.values["route"] in ("19.1(a)", "19.1(b)")]
    word = "Decisión" if lang == "es" else "Decision"
    assert len(texts) == 2 and all(word in t for t in texts), texts
    assert "es solo para participantes anteriores a 1990: no se aplica" not in " ".join(texts)
    # 19.2's own words say it is for new participants: no decision there
    old = ev(participant(), lang, as_of=DEC_3)
    t19_2 = [f.text for f in old.explanation if f.condition == "route_applies"
             and f.values["route"] == "19.2"]
    assert len(t19_2) == 1 and word not in t19_2[0]


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_2014_entrant_is_in_act_3_2013s_hybrid_program(lang):
    rules = load_rules()
    assert (rules.hybrid_program_from, rules.hybrid_program_citation) == (
        date(2013, 7, 1), "Ley 3-2013")
    assert rules.not_covered_from == date(2000, 1, 1) and "305-1999" in rules.not_covered_citation
    d = ev(participant(birth_date="1990-01-01", entry_date="2014-01-01",
                       separation_date="2020-01-01", creditable_service_years="6"),
           lang, as_of=DEC_3)
    covered = finding(d, "covered")
    text = render_text(d)
    if lang == "es":
        assert "programa híbrido de la Ley 3-2013" in covered.text
        assert "cuentas de ahorro" not in text
        assert "programa híbrido (Ley 3-2013)" in text
    else:
        assert "hybrid program of Act 3-2013" in covered.text
        assert "savings-account" not in text
    # a 2005 entrant is still in Act 305-1999's program
    d = ev(participant(birth_date="1980-01-01", entry_date="2005-01-01",
                       separation_date="2012-01-01", creditable_service_years="7"),
           lang, as_of=DEC_3)
    assert ("cuentas de ahorro" if lang == "es" else "savings-account") in \
        finding(d, "covered").text


@pytest.mark.parametrize("lang", ["es", "en"])
def test_smaller_sentences_an_analyst_would_sign(lang):
    # the 19.6 minimum applies; a determination pays nothing
    d = ev(participant(birth_date="1935-06-01", entry_date="1955-01-01",
                       separation_date="1975-01-01", creditable_service_years="12",
                       average_compensation="10000.00"), lang, as_of=DEC_3)
    minimum = row_of(render_text(d), _catalog(lang)["render_labels"]["minimum"].format(
        rule="Regla 19.6" if lang == "es" else "Rule 19.6"))
    if lang == "es":
        assert minimum.startswith("$3,000.00, se aplica") and "se paga" not in render_text(d)
    else:
        assert minimum.startswith("$3,000.00, applies") and "is paid" not in render_text(d)
    # each warning does not repeat what its heading says once
    d = ev({**EARLY, "requested_start_date": "2021-01-01"}, lang, as_of=DEC_3)
    stands = "La determinación se mantiene" if lang == "es" else "The determination stands"
    assert d.warnings and not any(stands in f.text for f in d.explanation)
    # a warning's source is not printed twice in the letter ("Regla 19.3. Regla 19.3:")
    said = _letter_warnings(d.to_dict(), load_rules(), lang)
    assert said and all(w["rule"] is None or w["rule"] not in w["text"] for w in said)
    # a separation still to come is neither met (✓) nor failed
    d = ev(participant(separation_date="2027-06-30"), lang, as_of=DEC_3)
    sep = finding(d, "separated")
    assert sep.held is None
    assert f"  · {sep.text}" in render_text(d) and f"✓ {sep.text}" not in render_text(d)


def test_the_average_compensation_is_not_said_twice_a_year_in_the_letter():
    for lang in ("es", "en"):
        assert _catalog(lang)["letter"]["compensation_year"] == "{amount}"


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_refusal_names_the_role_in_words(lang):
    from diferida.service.workflow.common import Refused

    text = Refused("not_allowed", role="analyst", action="approve").message(lang)
    assert "analyst»" not in text and "'analyst'" not in text
    assert text == ("El rol de analista no puede aprobar un caso." if lang == "es"
                    else "The analyst role may not approve a case.")


def test_an_illustrative_reform_is_titled_in_english_in_english():
    d = ev(participant(), "en", rules="reform-19_2-age-67", as_of=DEC_3)
    line = row_of(render_text(d), "Rules")
    assert "Reforma ilustrativa" not in line and "Illustrative reform (not law)" in line
    es = ev(participant(), "es", rules="reform-19_2-age-67", as_of=DEC_3)
    assert "Reforma ilustrativa (no es ley)" in render_text(es)


# the property: every place a start is said, for generated participants

MONTHS = {lang: _catalog(lang)["months"] for lang in ("es", "en")}
WRITTEN = {"es": re.compile(r"(\d{1,2}) de (" + "|".join(MONTHS["es"]) + r") de (\d{4})"),
           "en": re.compile(r"(" + "|".join(MONTHS["en"]) + r") (\d{1,2}), (\d{4})")}
# what may stand right before a date before as_of where a start is said: the
# date asked for, as asked for, or the day the requirements were met
QUALIFIED = {"es": re.compile(r"(cumple los requisitos desde el|los cumple desde el|pidió el|"
                              r"comience el|fecha de elegibilidad \()\s*$"),
             "en": re.compile(r"(have been met since|asked for|to start on|"
                              r"eligibility date \()\s*$")}


def written_dates(text: str, lang: str) -> list[tuple[date, int]]:
    out = []
    for m in WRITTEN[lang].finditer(text):
        if lang == "es":
            day, month, year = int(m.group(1)), MONTHS["es"].index(m.group(2)) + 1, int(m.group(3))
        else:
            day, month, year = int(m.group(2)), MONTHS["en"].index(m.group(1)) + 1, int(m.group(3))
        out.append((date(year, month, day), m.start()))
    return out


def offered_before(text: str, lang: str, as_of: date) -> list[str]:
    """Each date before `as_of` in `text` that is not qualified as asked for
    or as the day the requirements were met."""
    return [text[max(0, at - 40):at + 25] for day, at in written_dates(text, lang)
            if day < as_of and not QUALIFIED[lang].search(text[:at])]


def test_the_detector_sees_the_old_sentences():
    assert offered_before("Tiene derecho a una pensión diferida desde el 10 de marzo de 1986: "
                          "puede solicitarla ahora", "es", DEC_3)
    assert offered_before("solicitud prematura para el 1 de enero de 1980", "es", DEC_3)
    assert offered_before("1 de enero de 2021", "es", DEC_3)
    assert offered_before("Entitled to a deferred pension since March 10, 1986", "en", DEC_3)
    assert not offered_before("cumple los requisitos desde el 10 de marzo de 1986", "es", DEC_3)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(people(), st.sampled_from(["es", "en"]), st.sampled_from([None, STRICT]))
@pytest.mark.slow
def test_no_text_offers_a_start_before_the_determination(case, lang, rules):
    p, as_of = case
    try:
        d = diferida.evaluate(p, as_of=as_of, lang=lang, rules=rules)
    except diferida.InputError:
        return
    if d.status == "not_entitled":
        return
    said = {"headline": d.headline, "start row": start_row(d),
            "start finding": finding(d, "start").text}
    for where, text in said.items():
        assert not offered_before(text, lang, as_of), (where, text)
    # and the warning for every start asked for before as_of, premature or not
    asked = p.get("requested_start_date")
    assert ("start_before_determination" in d.warnings) == (
        asked is not None and date.fromisoformat(str(asked)) < as_of)


def test_a_rules_table_stored_before_the_hybrid_date_is_still_read_with_its_version():
    # rules stored with a case before [regime.hybrid_program_from] existed:
    # read with the built-in key, its version the hash of what was stored
    import copy

    from diferida.rules import rules_from_resolved

    stored = copy.deepcopy(load_rules().resolved)
    del stored["regime"]["hybrid_program_from"]
    old = rules_from_resolved(stored)
    assert old.hybrid_program_from == date(2013, 7, 1)
    assert old.version != load_rules().version and old.resolved == stored
    d = ev(participant(entry_date="2014-01-01", birth_date="1990-01-01",
                       separation_date="2020-01-01", creditable_service_years="6"),
           rules=old, as_of=DEC_3)
    assert d.rules_version == old.version and "programa híbrido" in finding(d, "covered").text
