"""Spanish output speaks Spanish, English output English: the comparison of
one person under two rule sets (`evaluate --rules A --rules B`), the
`compare` console and the error messages are written in words — statuses
and reasons in the catalogs' words, routes by their citation, dates written
out ("1 de enero de 2020", "January 1, 2020"), sí/no — and never show an
output code (`not_yet_eligible`, `route_applies`), an ISO date or
"true"/"false". Codes and ISO dates stay where programs read them: `--json`
and the files' columns.

Each place is tested: the comparison's text (es, en), `evaluate … --json`,
the command line, `diferida compare`'s console, its `--json` and its tables,
the rejects it prints, the error messages of `evaluate`, of the batch's
rejects file and of the web form; and a property over generated
participants and as-of dates."""

from __future__ import annotations

import json
import re
import warnings
from datetime import date, timedelta
from importlib import resources
from pathlib import Path

import polars as pl
import pytest
from bench.generate import population
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import diferida
from diferida.batch import evaluate_file
from diferida.cli import main
from diferida.compare import compare_file, table_paths
from diferida.compare import engine as cmp
from diferida.compare.person import compare_person
from diferida.core import InputError
from diferida.fields import FIELD_NAMES
from diferida.i18n import catalog, fmt_date
from diferida.outcomes import REASONS, STATUSES, WARNINGS
from diferida.rules import load_rules
from diferida.validation import ERROR_CODES
from diferida.words import error_message

from .conftest import examples

AS_OF = date(2026, 11, 29)
ARTICLE19, STRICT, AGE67 = "article19", "article19-strict-19_4", "reform-19_2-age-67"
EXAMPLES = Path(str(resources.files("diferida") / "data" / "spec_examples.csv"))

# rules §8 example 4, the new police officer: 19.4(a) on 2025-06-20 as
# written, 19.2 on 2040-06-20 under the strict reading
POLICE = {"birth_date": "1975-06-20", "entry_date": "1996-02-01",
          "separation_date": "2021-03-31", "creditable_service_years": "25.1667",
          "average_compensation": "36000.00", "group": "police", "refund_requested": "false"}
OPTIONS = {"birth_date": "--birth-date", "entry_date": "--entry-date",
           "separation_date": "--separation-date", "creditable_service_years": "--service",
           "average_compensation": "--compensation", "group": "--group"}

# ---- what words never contain ---------------------------------------------------------

FINDING_CONDITIONS = ("route_applies", "no_refund", "insufficient_service", "reading_19_4")
CODES = {*STATUSES, *REASONS, *WARNINGS, *FINDING_CONDITIONS, *ERROR_CODES, *cmp.COMPARED,
         "pre1990", "rows_read", "members_changed", "as_of"}
SNAKE = re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+\b")
ISO = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
TRUE_FALSE = re.compile(r"\b(?:true|false)\b", re.IGNORECASE)


def codes_in(text: str) -> list[str]:
    """The output codes, ISO dates and true/false a text shows. An error
    message names its field's column in parentheses ("fecha de nacimiento
    (birth_date)"), the name a file uses: that is not an output code."""
    text = re.sub(r"\((" + "|".join(FIELD_NAMES) + r")\)", "", text)
    found = [w for w in SNAKE.findall(text)]
    found += [w for w in re.findall(r"\b\w+\b", text) if w in CODES and "_" in w or w == "pre1990"]
    return found + ISO.findall(text) + TRUE_FALSE.findall(text)


def test_the_check_itself_finds_what_it_should():
    assert codes_in("status: eligible -> not_yet_eligible") == ["not_yet_eligible",
                                                               "not_yet_eligible"]
    assert codes_in("eligibility_date: 2020-01-01") == ["eligibility_date", "eligibility_date",
                                                        "2020-01-01"]
    assert codes_in("no puede ser true") == ["true"]
    assert codes_in("fecha de nacimiento (birth_date): la fecha (1 de enero de 1990)") == []
    assert codes_in("las reglas article19-strict-19_4 (3 L.P.R.A. § 766)") == []


# ---- one person under two rule sets -------------------------------------------------


def comparison(person: dict, a: str, b, lang: str, as_of: date = AS_OF):
    return compare_person(diferida.evaluate(person, as_of=as_of, rules=a, lang=lang),
                          diferida.evaluate(person, as_of=as_of, rules=b, lang=lang))


@pytest.mark.parametrize("lang", ["es", "en"])
def test_what_differs_is_written_in_words(lang):
    text = comparison(POLICE, ARTICLE19, STRICT, lang).text()
    c = catalog(lang)
    f = c["compare_report"]["fields"]
    rule = "Regla" if lang == "es" else "Rule"
    assert (f"{f['status']}: {c['status']['eligible']} → {c['status']['not_yet_eligible']}"
            in text)
    assert f"{f['route']}: {rule} 19.4(a) → {rule} 19.2" in text
    assert (f"{f['eligibility_date']}: {fmt_date(date(2025, 6, 20), lang)} → "
            f"{fmt_date(date(2040, 6, 20), lang)}") in text
    if lang == "es":
        assert "Fecha de elegibilidad: 20 de junio de 2025 → 20 de junio de 2040" in text
        assert "Por qué: lo explica la Regla 19.4(a)." in text
        assert "Con las reglas A: La Regla 19.4(a) se aplica también a participantes nuevos" in text
        for english in ("What differs", "Why", "under A", "status", "route"):
            assert english not in text
    else:
        assert "Eligibility date: June 20, 2025 → June 20, 2040" in text
        assert "Why: Rule 19.4(a) explains it." in text
    assert codes_in(text) == []


@pytest.mark.parametrize("lang", ["es", "en"])
def test_yes_and_no_and_reasons_in_words(lang, tmp_path):
    """The 19.6 minimum applied (sí/no) and the reasons, in words: a 19.6
    cut-off moved to 1975 gives a member who entered in 1970 the minimum;
    a 19.2 asking 15 years adds a reason to one not yet separated."""
    cutoff = tmp_path / "cutoff.toml"
    cutoff.write_text('base = "article19"\n[meta]\nname = "cutoff"\n'
                      '[regime.deferred_right_cutoff]\nvalue = "1975-12-31"\n')
    person = {"birth_date": "1945-03-01", "entry_date": "1970-01-01",
              "separation_date": "1982-12-31", "creditable_service_years": "12",
              "average_compensation": "20000.00", "group": "general",
              "refund_requested": "false"}
    c = comparison(person, ARTICLE19, load_rules(cutoff), lang)
    assert "minimum_applied" in c.fields
    yes, no = catalog(lang)["yes"], catalog(lang)["no"]
    label = catalog(lang)["compare_report"]["fields"]["minimum_applied"]
    assert f"{label}: {no} → {yes}" in c.text()
    assert codes_in(c.text()) == []

    service = tmp_path / "service.toml"
    service.write_text('base = "article19"\n[meta]\nname = "service"\n'
                       '[route_overrides."19.2"]\nmin_service = "15"\n')
    person = {**person, "entry_date": "1995-01-01", "separation_date": "",
              "birth_date": "1970-01-01"}
    c = comparison(person, ARTICLE19, load_rules(service), lang)
    assert c.fields == ("reasons",)
    text = c.text()
    reasons = catalog(lang)["reasons"]
    assert reasons["not_separated"][:20] in text
    assert "not_separated" not in text and "insufficient_service" not in text
    assert codes_in(text) == []


@pytest.mark.parametrize("lang", ["es", "en"])
def test_no_difference_is_said_in_the_language(lang):
    general = {**POLICE, "group": "general"}
    text = comparison(general, ARTICLE19, STRICT, lang).text()
    assert text == catalog(lang)["compare_person"]["same"]
    assert ("Ninguna diferencia" in text) == (lang == "es")


# ---- the command line --------------------------------------------------------------


def evaluate(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["evaluate", *args])
    return result.exit_code, result.stdout, result.stderr


def person_args(person: dict) -> list[str]:
    out = [a for k, o in OPTIONS.items() if person.get(k) for a in (o, person[k])]
    return [*out, "--refund" if person["refund_requested"] == "true" else "--no-refund"]


def test_evaluate_with_two_rules_speaks_spanish_by_default():
    code, out, _ = evaluate(*person_args(POLICE), "--as-of", AS_OF.isoformat(),
                            "--rules", ARTICLE19, "--rules", STRICT)
    assert code == 0
    tail = out.split("=" * 78)[-1]
    assert "Qué cambia de las reglas A (article19) a las reglas B (article19-strict-19_4):" in tail
    assert "Situación: Tiene derecho a una pensión diferida → Tendrá derecho" in tail
    assert "Vía: Regla 19.4(a) → Regla 19.2" in tail
    assert "Fecha de elegibilidad: 20 de junio de 2025 → 20 de junio de 2040" in tail
    assert "Por qué: lo explica la Regla 19.4(a)." in tail
    for english in ("What differs", "Why (", "under A", " -> "):
        assert english not in tail
    assert codes_in(tail) == []
    assert "Reglas A: article19 (" in out and "Reglas B: article19-strict-19_4 (" in out


def test_evaluate_with_two_rules_in_english():
    code, out, _ = evaluate(*person_args(POLICE), "--as-of", AS_OF.isoformat(),
                            "--rules", ARTICLE19, "--rules", STRICT, "--lang", "en")
    tail = out.split("=" * 78)[-1]
    assert "Route: Rule 19.4(a) → Rule 19.2" in tail
    assert "Eligibility date: June 20, 2025 → June 20, 2040" in tail
    assert codes_in(tail) == []


@pytest.mark.parametrize("lang", ["es", "en"])
def test_evaluate_json_keeps_the_codes_and_its_sentences_have_none(lang):
    code, out, _ = evaluate(*person_args(POLICE), "--as-of", AS_OF.isoformat(),
                            "--rules", ARTICLE19, "--rules", STRICT, "--lang", lang,
                            "--json")
    d = json.loads(out)
    assert d["differences"]["status"] == {"a": "eligible", "b": "not_yet_eligible"}
    assert d["differences"]["eligibility_date"] == {"a": "2025-06-20", "b": "2040-06-20"}
    assert d["explaining_finding"]["condition"] == "route_applies"
    for side in ("under_a", "under_b"):
        assert codes_in(d["explaining_finding"][side]) == []


# ---- error messages ----------------------------------------------------------------

# born after the first entry, the entry after the separation, and a 19.6
# right declared by someone who entered after 1960
WRONG = {"birth_date": "1990-01-01", "entry_date": "1985-01-01",
         "separation_date": "1980-01-01", "creditable_service_years": "3",
         "average_compensation": "30000.00", "group": "general",
         "refund_requested": "false", "deferred_right_1960": "true"}
WORDS = {"es": ("1 de enero de 1990", "1 de enero de 1985", "no puede ser «sí»"),
         "en": ("January 1, 1990", "January 1, 1985", "cannot be 'yes'")}


@pytest.mark.parametrize("lang", ["es", "en"])
def test_evaluate_errors_write_dates_out_and_say_yes(lang):
    code, out, err = evaluate(*person_args(WRONG), "--deferred-right-1960",
                              "--as-of", AS_OF.isoformat(), "--lang", lang)
    assert code == 2
    for words in WORDS[lang]:
        assert words in err
    for line in err.splitlines():
        assert codes_in(line) == [], line
    with pytest.raises(InputError) as exc:
        diferida.evaluate(WRONG, as_of=AS_OF, lang=lang)
    messages = {p.code: p.message for p in exc.value.problems}
    assert WORDS[lang][0] in messages["birth_after_entry"]
    assert WORDS[lang][2] in messages["deferred_right_after_1960"]
    for p in exc.value.problems:  # the value as given stays in the data
        assert codes_in(p.message) == []
    assert {p.code: p.value for p in exc.value.problems}["birth_after_entry"] == "1990-01-01"


@pytest.mark.parametrize("lang", ["es", "en"])
def test_evaluate_json_errors_keep_the_code_and_the_value(lang):
    code, out, _ = evaluate(*person_args(WRONG), "--deferred-right-1960",
                            "--as-of", AS_OF.isoformat(), "--lang", lang, "--json")
    errors = {e["code"]: e for e in json.loads(out)["errors"]}
    assert errors["birth_after_entry"]["value"] == "1990-01-01"
    assert WORDS[lang][0] in errors["birth_after_entry"]["message"]
    assert all(codes_in(e["message"]) == [] for e in errors.values())


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_date_out_of_range_names_the_years_in_words(lang):
    with pytest.raises(InputError) as exc:
        diferida.evaluate({**WRONG, "birth_date": "9990-01-01", "deferred_right_1960": ""},
                          as_of=AS_OF, lang=lang)
    message = {p.code: p.message for p in exc.value.problems}["date_out_of_range"]
    assert "0001-01-01" not in message and "9999-12-31" not in message
    assert ("los años 1 y 9999" if lang == "es" else "the years 1 and 9999") in message


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_web_forms_error_message_writes_the_date_out(lang):
    """The web form words an error with `i18n.error_message`."""
    text = error_message(lang, "birth_after_entry", "1990-01-01", "birth_date")
    assert WORDS[lang][0] in text and codes_in(text) == []
    text = error_message(lang, "entry_after_separation", "1985-01-01", "entry_date")
    assert WORDS[lang][1] in text


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_batch_rejects_file_words_its_messages_and_keeps_its_codes(lang, tmp_path):
    members = tmp_path / "m.csv"
    pl.DataFrame([{"participant_id": "x", **WRONG}]).write_csv(members)
    rejects = tmp_path / "rej.csv"
    evaluate_file(members, tmp_path / "out.csv", rejects, as_of=AS_OF, lang=lang)
    rows = pl.read_csv(rejects, infer_schema=False)
    by_code = {r["code"]: r for r in rows.iter_rows(named=True)}
    assert by_code["birth_after_entry"]["value"] == "1990-01-01"  # the column keeps it
    assert WORDS[lang][0] in by_code["birth_after_entry"]["message"]
    assert all(codes_in(m) == [] for m in rows["message"])


# ---- diferida compare -----------------------------------------------------------------


def compare_cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["compare", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_compare_console_speaks_the_language(lang, tmp_path):
    code, out, err = compare_cli(str(EXAMPLES), "--rules", ARTICLE19, "--rules", AGE67,
                                 "-o", str(tmp_path / "c.csv"), "--as-of", "2026-12-01",
                                 "--lang", lang, "--discount", "0.04", "--mortality", "none")
    assert code == 0, err
    flat = re.sub(r"[│┃\s]+", " ", out)
    if lang == "es":
        for words in ("Filas leídas", "Miembros cuya determinación cambia",
                      "1 de diciembre de 2026", "Reforma ilustrativa, no es ley"):
            assert words in flat, words
    else:
        for words in ("Rows read", "Members whose determination changes",
                      "December 1, 2026", "Illustrative reform, not law"):
            assert words in flat, words
    for code_ in ("rows_read", "members_changed", "as_of", "2026-12-01", "ILLUSTRATIVE"):
        assert code_ not in out
    # the table, but for the member file's path
    table = out[:out.index("└")]
    body = "\n".join(line for line in table.splitlines()
                     if not any(w in line for w in ("Archivo de miembros", "Member file")))
    assert codes_in(body) == []


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_compare_json_summary_and_tables_keep_their_codes(lang, tmp_path):
    out = tmp_path / "c.csv"
    code, printed, _ = compare_cli(str(EXAMPLES), "--rules", ARTICLE19, "--rules", STRICT,
                                   "-o", str(out), "--as-of", "2026-11-29", "--lang", lang,
                                   "--json")
    d = json.loads(printed)
    assert (d["as_of"], d["rows_read"], d["members_changed"]) == ("2026-11-29", 11, 1)
    row = pl.read_csv(table_paths(out)["changed_members"], infer_schema=False).row(
        0, named=True)
    assert (row["status_a"], row["status_b"], row["eligibility_date_b"]) == (
        "eligible", "not_yet_eligible", "2040-06-20")
    for side in ("finding_under_a", "finding_under_b"):
        assert codes_in(row[side]) == []


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_rejects_compare_prints_write_dates_out(lang, tmp_path):
    members = tmp_path / "m.csv"
    pl.concat([pl.read_csv(EXAMPLES, infer_schema=False),
               pl.DataFrame([{"participant_id": "bad", **WRONG}])], how="diagonal").write_csv(
        members)
    code, _, err = compare_cli(str(members), "--rules", ARTICLE19, "--rules", STRICT,
                               "-o", str(tmp_path / "c.csv"), "--as-of", "2026-11-29",
                               "--lang", lang, "-q")
    assert code == 0
    assert WORDS[lang][0] in err and WORDS[lang][2] in err
    for line in err.splitlines():
        assert codes_in(line) == [], line


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_populations_whys_are_words(lang, tmp_path):
    """Every changed member's finding, in a generated population, under the
    strict reading and the age-67 reform."""
    frame = population(3000, seed=5)
    path = tmp_path / "m.csv"
    frame.write_csv(path)
    for b in (STRICT, AGE67):
        out = tmp_path / f"{b}.csv"
        compare_file(path, out, [ARTICLE19, b], as_of=AS_OF, lang=lang)
        changed = pl.read_csv(table_paths(out)["changed_members"], infer_schema=False)
        assert changed.height > 0
        for side in ("finding_under_a", "finding_under_b"):
            for text in changed[side].drop_nulls().unique():
                assert codes_in(text) == [], text


# ---- the property ------------------------------------------------------------------

days = st.integers(0, 365 * 60)


@st.composite
def participants(draw) -> tuple[dict, date]:
    """A participant as a form or a file gives one (well-formed values), at
    times inconsistent (born after entering, entering after separating,
    service longer than the age, a 19.6 right after 1960), and an as-of date."""
    birth = date(1930, 1, 1) + timedelta(days=draw(st.integers(0, 365 * 60)))
    entry = birth + timedelta(days=draw(st.integers(-365 * 2, 365 * 45)))
    separated = draw(st.booleans())
    sep = entry + timedelta(days=draw(st.integers(-365, 365 * 40))) if separated else None
    service = draw(st.decimals(0, 45, places=4, allow_nan=False, allow_infinity=False))
    person = {
        "birth_date": birth.isoformat(), "entry_date": entry.isoformat(),
        "separation_date": sep.isoformat() if sep else "",
        "creditable_service_years": f"{service:f}",
        "average_compensation": f"{draw(st.integers(100, 20_000_000)) / 100:.2f}",
        "group": draw(st.sampled_from(["general", "police", "firefighter"])),
        "refund_requested": draw(st.sampled_from(["true", "false"])),
        "deferred_right_1960": draw(st.sampled_from(["", "true", "false"])),
    }
    if draw(st.booleans()):
        person["requested_start_date"] = (entry + timedelta(days=draw(days))).isoformat()
    as_of = date(1995, 1, 1) + timedelta(days=draw(st.integers(0, 365 * 50)))
    return person, as_of


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=participants(), b=st.sampled_from([STRICT, AGE67]),
       lang=st.sampled_from(["es", "en"]))
@pytest.mark.slow
def test_no_comparison_or_error_text_shows_a_code_an_iso_date_or_true_false(case, b, lang):
    person, as_of = case
    try:
        c = comparison(person, ARTICLE19, b, lang, as_of)
    except InputError as exc:
        for p in exc.problems:
            assert codes_in(p.message) == [], p.message
        return
    texts = [c.text()]
    texts += [f.text for f in (c.under_a, c.under_b) if f is not None]
    for text in texts:
        assert codes_in(text) == [], text


def test_the_web_form_error_through_the_page(tmp_path_factory):
    """The calculator page shows the same words for a birth after the entry."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    from diferida.server import create_app
    from diferida.service.settings import Settings

    db = tmp_path_factory.mktemp("web-words") / "web.db"
    form = {**{k: v for k, v in WRONG.items() if k != "deferred_right_1960"},
            "deferred_right_1960": "derive", "as_of": AS_OF.isoformat(), "lang": "es"}
    with TestClient(create_app(Settings(database_url=f"sqlite:///{db}"))) as client:
        r = client.post("/calcular", data=form, follow_redirects=True)
    assert "1 de enero de 1990" in r.text
    assert "(1990-01-01)" not in r.text
