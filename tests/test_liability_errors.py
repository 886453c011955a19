"""`diferida valuation` refuses what it cannot use: every option, yield
curve, prior-assumptions file and employer-names file that is wrong stops the
command with exit 2 and a message naming the option (and the file and line),
in Spanish and English, before anything is written; a census row whose
`employer` is empty or too long is rejected, named by its row, id and field,
and every row read is still accounted for (docs/valuation.md)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from .conftest import run_in_process

HEADER = ("participant_id,birth_date,entry_date,separation_date,creditable_service_years,"
          "average_compensation,group,refund_requested,deferred_right_1960,"
          "requested_start_date,office,benefit_status,monthly_in_pay,in_pay_since,employer")
ROWS = [
    "P1,1966-02-27,1992-12-06,2015-03-01,15,23831.62,general,false,false,,Ponce,in_pay,"
    "722.02,2015-07-01,AG01",
    "P2,1966-05-12,1994-10-08,2025-12-31,28,31457.70,general,false,false,,Ponce,deferred,,,"
    "AG02",
    "P3,1970-10-10,1995-01-01,2010-06-30,12,30000.00,general,false,false,,Ponce,deferred,,,"
    "AG01",
    "P4,1960-03-03,1985-01-01,2012-06-30,20,40000.00,general,false,false,,Ponce,deceased,,,"
    "MUN7",
    "P5,1962-04-04,1986-01-01,2011-06-30,18,35000.00,general,true,false,,Ponce,refunded,,,"
    "MUN7",
]
AS_OF = "2026-06-30"


def census(folder: Path, rows=ROWS, name: str = "census.csv") -> Path:
    path = folder / name
    path.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    return path


def valuation(folder: Path, *args: str, lang: str = "en", census_file: Path | None = None,
              output: str = "out.xlsx"):
    src = census_file or census(folder)
    return run_in_process("valuation", str(src), "-o", str(folder / output), "--as-of",
                          AS_OF, "--lang", lang, *args)


def refused(folder: Path, *args: str, lang: str, says: list[str],
            census_file: Path | None = None) -> str:
    """The command refuses (exit 2, no traceback), its message says each of
    `says`, and the folder holds what it held before: nothing written."""
    src = census_file or census(folder)
    before = sorted(p.name for p in folder.iterdir())
    r = valuation(folder, *args, lang=lang, census_file=src)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    for text in says:
        assert text in r.stderr, (text, r.stderr)
    assert sorted(p.name for p in folder.iterdir()) == before, r.stderr
    return r.stderr


def write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# ---- the discount rate --------------------------------------------------------

RATE_CASES = {
    # no rate is assumed: the message says what to give
    "no rate": ([], {"en": ["--discount or --yield-curve", "no discount rate is assumed",
                            "--discount RATE", "--yield-curve FILE"],
                     "es": ["--discount o --yield-curve", "no se supone ninguna tasa",
                            "--discount TASA", "--yield-curve ARCHIVO"]}),
    "both": (["--discount", "0.03", "--yield-curve", "CURVE"],
             {"en": ["--discount and --yield-curve", "not both"],
              "es": ["--discount y --yield-curve", "no ambas"]}),
    "two rates": (["--discount", "0.03,0.04"],
                  {"en": ["--discount", "one discount rate"],
                   "es": ["--discount", "una sola tasa de descuento"]}),
}


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("case", list(RATE_CASES))
def test_a_discount_rate_missing_doubled_or_two_is_refused(tmp_path, case, lang):
    args, says = RATE_CASES[case]
    curve = write(tmp_path, "curve.csv", "year,rate\n1,0.03\n")
    refused(tmp_path, *[curve if a == "CURVE" else a for a in args], lang=lang,
            says=says[lang])


# ---- the yield curve, line by line --------------------------------------------

CURVES = {
    "bad header": ("years,rates\n1,0.03\n", 1,
                   {"en": "the header must be year,rate (found years,rates)",
                    "es": "el encabezado debe ser year,rate (se encontró years,rates)"}),
    "gap": ("year,rate\n1,0.03\n2,0.031\n4,0.032\n", 4,
            {"en": "the year 4 is not the next one (3)", "es": "el año 4 no es el siguiente (3)"}),
    "repeat": ("year,rate\n1,0.03\n2,0.031\n2,0.032\n", 4,
               {"en": "the year 2 is not the next one (3)",
                "es": "el año 2 no es el siguiente (3)"}),
    "out of range": ("year,rate\n1,0.03\n2,3.81\n", 3,
                     {"en": "the rate 3.81 is outside 0 ..",
                      "es": "la tasa 3.81 está fuera de 0 .."}),
    "negative": ("year,rate\n1,-0.01\n", 2,
                 {"en": "the rate -0.01 is outside 0 ..",
                  "es": "la tasa -0.01 está fuera de 0 .."}),
    "not a number": ("year,rate\n1,0.03\n2,3.1%\n", 3,
                     {"en": "the rate '3.1%' is not a number",
                      "es": "la tasa '3.1%' no es un número"}),
    "not a year": ("year,rate\n1,0.03\ntwo,0.03\n", 3,
                   {"en": "the year 'two' is not a whole number",
                    "es": "el año 'two' no es un número entero"}),
    "three values": ("year,rate\n1,0.03,0.04\n", 2,
                     {"en": "3 values; a line is a year and its rate",
                      "es": "3 valores; cada línea es un año y su tasa"}),
    "empty": ("", None, {"en": "the file is empty", "es": "el archivo está vacío"}),
    "header only": ("year,rate\n", None,
                    {"en": "no rates: give one line per year",
                     "es": "no hay tasas: indique una línea por año"}),
}


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("case", list(CURVES))
def test_a_yield_curve_that_cannot_be_used_is_refused_naming_its_line(tmp_path, case, lang):
    text, line, says = CURVES[case]
    curve = write(tmp_path, "curve.csv", text)
    where = (f"--yield-curve {curve}, {'line' if lang == 'en' else 'línea'} {line}: "
             if line is not None else f"--yield-curve {curve}: ")
    refused(tmp_path, "--yield-curve", curve, lang=lang, says=[where + says[lang]])


def test_a_yield_curve_that_is_not_there_is_refused(tmp_path):
    missing = str(tmp_path / "no-curve.csv")
    refused(tmp_path, "--yield-curve", missing, lang="es",
            says=[f"--yield-curve {missing}: no existe el archivo"])


# ---- the prior measurement ----------------------------------------------------

PRIOR_CASES = {
    "prior without date": (["--prior", "PRIOR"], {"en": ["--prior and --prior-date", "give both"],
                                                  "es": ["--prior y --prior-date",
                                                         "indique ambas"]}),
    "date without prior": (["--prior-date", "2025-06-30"],
                           {"en": ["--prior and --prior-date", "give both"],
                            "es": ["--prior y --prior-date", "indique ambas"]}),
    "assumptions without prior": (["--prior-assumptions", "TOML"],
                                  {"en": ["--prior-assumptions", "give --prior and --prior-date"],
                                   "es": ["--prior-assumptions",
                                          "indique también --prior y --prior-date"]}),
    "rules without prior": (["--prior-rules", "article19"],
                            {"en": ["--prior-rules", "give --prior and --prior-date"],
                             "es": ["--prior-rules", "indique también --prior y --prior-date"]}),
    "prior date not 30 June": (["--prior", "PRIOR", "--prior-date", "2025-06-29"],
                               {"en": ["--prior-date 2025-06-29 is not a 30 June"],
                                "es": ["--prior-date 2025-06-29 no es un 30 de junio"]}),
    "measurement date not 30 June": (
        ["--prior", "PRIOR", "--prior-date", "2025-06-30", "--measurement-date", "2026-05-31"],
        {"en": ["--measurement-date 2026-05-31 is not a 30 June"],
         "es": ["--measurement-date 2026-05-31 no es un 30 de junio"]}),
    "prior date not before": (["--prior", "PRIOR", "--prior-date", "2026-06-30"],
                              {"en": ["--prior-date 2026-06-30 is not before the measurement "
                                      "date 2026-06-30"],
                               "es": ["--prior-date 2026-06-30 no es anterior a la fecha de "
                                      "medición 2026-06-30"]}),
    "prior date after": (["--prior", "PRIOR", "--prior-date", "2027-06-30"],
                         {"en": ["--prior-date 2027-06-30 is not before"],
                          "es": ["--prior-date 2027-06-30 no es anterior"]}),
}


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("case", list(PRIOR_CASES))
def test_a_prior_measurement_given_by_halves_or_on_the_wrong_dates_is_refused(tmp_path, case,
                                                                             lang):
    args, says = PRIOR_CASES[case]
    prior = census(tmp_path, name="prior.csv")
    toml = write(tmp_path, "prior.toml", 'discount = "0.04"\n')
    subst = {"PRIOR": str(prior), "TOML": toml}
    refused(tmp_path, "--discount", "0.03", *[subst.get(a, a) for a in args], lang=lang,
            says=says[lang])


PRIOR_FILES = {
    "unknown key": ('discount = "0.04"\nmortallity = "pub2010"\n',
                    {"en": ["prior.toml: unknown key mortallity; the keys are discount, "],
                     "es": ["prior.toml: clave desconocida mortallity; "
                            "las claves son discount, "]}),
    "a list": ("discount = [0.03, 0.04]\n",
               {"en": ["prior.toml: discount must be a text or a number"],
                "es": ["prior.toml: discount debe ser un texto o un número"]}),
    "a table": ("[mortality]\nname = \"pub2010\"\n",
                {"en": ["prior.toml: mortality must be a text or a number"],
                 "es": ["prior.toml: mortality debe ser un texto o un número"]}),
    "a boolean": ("cola = true\n",
                  {"en": ["prior.toml: cola must be a text or a number"],
                   "es": ["prior.toml: cola debe ser un texto o un número"]}),
    "not TOML": ('discount = "0.04"\nmortality = pub2010\n',
                 {"en": ["prior.toml, line 2: not a valid TOML file"],
                  "es": ["prior.toml, línea 2: no es un archivo TOML válido"]}),
    "not UTF-8": (b'discount = "0.04\xe9"\n',
                  {"en": ["prior.toml: is not UTF-8 text"],
                   "es": ["prior.toml: no es texto UTF-8"]}),
    # a value the file gives that cannot be used: the file is named, not only the option
    "a rate that is not a number": ('discount = "four percent"\n',
                                    {"en": ["--prior-assumptions", "prior.toml: a value of the "
                                            "prior assumptions cannot be used: --discount"],
                                     "es": ["--prior-assumptions", "prior.toml: un valor de los "
                                            "supuestos anteriores no se puede usar: --discount"]}),
    "two rates": ('discount = "0.03,0.04"\n',
                  {"en": ["--discount (", "prior.toml): ", "one discount rate"],
                   "es": ["--discount (", "prior.toml): ", "una sola tasa de descuento"]}),
    "both rates": ('discount = 0.04\nyield_curve = "curve.csv"\n',
                   {"en": ["--discount and --yield-curve", "prior.toml", "not both"],
                    "es": ["--discount y --yield-curve", "prior.toml", "no ambas"]}),
    "a bad curve": ('yield_curve = "curve.csv"\n',
                    {"en": ["prior.toml: a value of the prior assumptions cannot be used",
                            "curve.csv, line 3: the year 3 is not the next one (2)"],
                     "es": ["prior.toml: un valor de los supuestos anteriores no se puede usar",
                            "curve.csv, línea 3: el año 3 no es el siguiente (2)"]}),
}


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("case", list(PRIOR_FILES))
def test_a_prior_assumptions_file_that_cannot_be_used_is_refused_naming_it(tmp_path, case,
                                                                          lang):
    text, says = PRIOR_FILES[case]
    toml = tmp_path / "prior.toml"
    if isinstance(text, bytes):
        toml.write_bytes(text)
    else:
        toml.write_text(text, encoding="utf-8")
    write(tmp_path, "curve.csv", "year,rate\n1,0.03\n3,0.04\n")
    prior = census(tmp_path, name="prior.csv")
    refused(tmp_path, "--discount", "0.03", "--prior", str(prior), "--prior-date", "2025-06-30",
            "--prior-assumptions", str(toml), lang=lang, says=says[lang])


def test_a_prior_date_that_is_not_a_date_is_refused(tmp_path):
    prior = census(tmp_path, name="prior.csv")
    refused(tmp_path, "--discount", "0.03", "--prior", str(prior), "--prior-date", "2025-06-31",
            lang="en", says=["--prior-date: '2025-06-31' is not a valid YYYY-MM-DD date"])


# ---- employers ----------------------------------------------------------------

def test_an_employer_empty_or_too_long_rejects_the_row_and_every_row_is_counted(tmp_path):
    rows = list(ROWS)
    rows[1] = rows[1].rsplit(",", 1)[0] + ","  # P2: no employer
    rows[2] = rows[2].rsplit(",", 1)[0] + "," + "X" * 41  # P3: 41 characters
    rows.append(ROWS[1].replace("P2,", "P6,").rsplit(",", 1)[0] + ",   ")  # P6: blanks
    rows.append(ROWS[2].replace("P3,", "P7,").rsplit(",", 1)[0] + "," + "Y" * 40)  # P7: 40, kept
    # P8: a bad birth date and no employer: one row rejected, both problems named
    rows.append(ROWS[1].replace("P2,1966-05-12", "P8,1966-13-12").rsplit(",", 1)[0] + ",")
    src = census(tmp_path, rows)
    r = valuation(tmp_path, "--discount", "0.03", "--json", "--rejects",
                  str(tmp_path / "rejects.csv"), census_file=src, output="out.json")
    assert r.returncode == 0, r.stderr
    counts = json.loads(r.stdout)["counts"]
    assert counts["rows_read"] == 8
    assert counts["rows_rejected"] == 4
    assert counts["rows_read"] == sum(counts[k] for k in (
        "deferred", "in_pay", "deceased", "refunded", "not_entitled", "rows_rejected")), counts
    with (tmp_path / "rejects.csv").open(encoding="utf-8") as fh:
        rejects = list(csv.DictReader(fh))
    employer = {(x["row"], x["participant_id"]): x for x in rejects if x["field"] == "employer"}
    # the row is the file's line (the header is line 1)
    assert set(employer) == {("3", "P2"), ("4", "P3"), ("7", "P6"), ("9", "P8")}, rejects
    assert employer[("3", "P2")]["message"] == "the employer is empty; give the employer's code"
    assert employer[("4", "P3")]["message"] == \
        "the employer code has 41 characters; at most 40"
    assert employer[("4", "P3")]["value"] == "X" * 41
    assert {x["participant_id"] for x in rejects if x["field"] == "birth_date"} == {"P8"}
    report = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    # the employers of the members valued (MUN7's are deceased and refunded)
    assert {e["employer"] for e in report["employers"]} == {"AG01", "Y" * 40}


def test_employer_rejects_are_told_in_spanish(tmp_path):
    rows = [ROWS[0], ROWS[1].rsplit(",", 1)[0] + ",", ROWS[2].rsplit(",", 1)[0] + "," + "Z" * 45]
    r = valuation(tmp_path, "--discount", "0.03", "--quiet", lang="es",
                  census_file=census(tmp_path, rows), output="out.json")
    assert r.returncode == 0, r.stderr
    assert "3: P2: el patrono está vacío; indique el código del patrono" in r.stderr
    assert "4: P3: el código del patrono tiene 45 caracteres; como máximo 40" in r.stderr
    r = valuation(tmp_path, "--discount", "0.03", "--quiet", "--strict", "--overwrite",
                  lang="es", census_file=tmp_path / "census.csv", output="out.json")
    assert r.returncode == 1, r.stderr


NAMES = {
    "bad header": ("code,name\nAG01,Hacienda\n", 1,
                   {"en": "the first line must be the header employer,name",
                    "es": "la primera línea debe ser el encabezado employer,name"}),
    "duplicate code": ("employer,name\nAG01,Hacienda\nAG02,Educación\nAG01,Otra\n", 4,
                       {"en": "the employer AG01 is named twice",
                        "es": "el patrono AG01 aparece dos veces"}),
    "missing name": ("employer,name\nAG01,Hacienda\nAG02,\n", 3,
                     {"en": "a line must be an employer's code and its name, both given",
                      "es": "cada línea debe tener el código de un patrono y su nombre"}),
    "missing code": ("employer,name\n ,Hacienda\n", 2,
                     {"en": "a line must be an employer's code and its name",
                      "es": "cada línea debe tener el código de un patrono"}),
    "three values": ("employer,name\nAG01,Hacienda,San Juan\n", 2,
                     {"en": "a line must be an employer's code and its name",
                      "es": "cada línea debe tener el código de un patrono"}),
    "empty": ("", 1, {"en": "the first line must be the header employer,name",
                      "es": "la primera línea debe ser el encabezado employer,name"}),
}


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("case", list(NAMES))
def test_an_employer_names_file_that_cannot_be_used_is_refused_naming_its_line(tmp_path, case,
                                                                              lang):
    text, line, says = NAMES[case]
    names = write(tmp_path, "names.csv", text)
    where = f"--employer-names {names}, {'line' if lang == 'en' else 'línea'} {line}: "
    refused(tmp_path, "--discount", "0.03", "--employer-names", names, lang=lang,
            says=[where + says[lang]])


@pytest.mark.parametrize("lang", ["en", "es"])
def test_employer_names_for_a_census_without_employers_are_refused(tmp_path, lang):
    """Names given for a census with no employer column would be dropped
    unread: the command says so rather than ignore them."""
    names = write(tmp_path, "names.csv", "employer,name\nAG01,Hacienda\n")
    src = tmp_path / "census.csv"
    src.write_text("\n".join(",".join(line.split(",")[:-1]) for line in [HEADER, *ROWS]) + "\n",
                   encoding="utf-8")
    says = {"en": [f"--employer-names {names}: the census has no employer column"],
            "es": [f"--employer-names {names}: el censo no tiene la columna employer"]}
    refused(tmp_path, "--discount", "0.03", "--employer-names", names, "--rejects",
            str(tmp_path / "rejects.csv"), lang=lang, says=says[lang], census_file=src)


def test_a_good_run_of_the_same_files_writes_the_report(tmp_path):
    """The files the cases above spoil, as they should be: the command runs
    (so each refusal above is the one thing spoiled)."""
    prior = census(tmp_path, name="prior.csv")
    curve = write(tmp_path, "curve.csv", "year,rate\n1,0.03\n2,0.031\n")
    toml = write(tmp_path, "prior.toml", 'discount = "0.04"\nmortality = "none"\n')
    names = write(tmp_path, "names.csv", "employer,name\nAG01,Hacienda\nAG02,Educación\n")
    r = valuation(tmp_path, "--yield-curve", curve, "--prior", str(prior), "--prior-date",
                  "2025-06-30", "--prior-assumptions", toml, "--employer-names", names,
                  "--json", output="out.json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["changes"][0]["line"] == "start" and out["changes"][-1]["line"] == "end"
    assert (tmp_path / "out.json").exists()
