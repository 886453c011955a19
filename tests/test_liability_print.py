"""The workbook of `diferida valuation` as printed: a measurement with a
prior census (the schedule of changes), employers and their names,
converted by LibreOffice to PDF in Spanish and English — its pages counted,
no word printed over another, no figure run into the next cell's words, the
type readable (the schedule on one page at about 85 %, the employers'
charges in blocks of fiscal years rather than squeezed to one page width),
and the page header's title and measurement date on every page
(LibreOffice: `slow`, as in tests/test_print_layout.py)."""

from __future__ import annotations

from datetime import date
from statistics import median

import numpy as np
import polars as pl
import pytest
from bench.generate import population

from diferida.liability.runner import value_file

from .conftest import need_part
from .print_helpers import PDFTOTEXT, SOFFICE, pdf_words, to_pdf
from .test_print_layout import overprinted, touching

# the liability (1), the schedule of changes (1), the fiscal years (3), the
# employers (1), their charges in two blocks of fiscal years (2); the GASB 73
# report: its layout and expense (2), the deferrals (1), their recognition (1),
# the bases (1), the ten years in two blocks of five (2), the employers in two
# blocks of columns (2), the notes (1 in English, 2 in the longer Spanish);
# the assumptions (2)
PAGES = {"en": 20, "es": 21}
CODES = ["AG01", "AG02", "AG03", "DTOP", "MUN-PONCE", "MUN-SAN-JUAN", "POLICIA", "UPR"]
NAMES = ("employer,name\nAG01,Departamento de Hacienda\nAG02,Departamento de Educación\n"
         "AG03,Departamento de Salud\nDTOP,Departamento de Transportación y Obras Públicas\n"
         "MUN-PONCE,Municipio Autónomo de Ponce\nMUN-SAN-JUAN,Municipio de San Juan\n"
         "POLICIA,Negociado de la Policía de Puerto Rico\nUPR,Universidad de Puerto Rico\n")
HEADER = {"en": ("Valuation of deferred pensions: total pension liability",
                 "Measured at June 30, 2026 · article19 (version"),
          "es": ("Valoración de las pensiones diferidas: obligación total por pensiones",
                 "Medida al 30 de junio de 2026 · article19 (versión")}
# a figure followed by a word of the same sentence ("3.81% a year", "11.23 years"):
# one space, as written, not a number run into the next cell
SENTENCE = {"en": {"a", "years"}, "es": {"anual", "anual,", "años"}}
# a word's box is about 1.3 times the type size: 14.3 points for 11-point type
UNSCALED = 14.3


def censuses(folder):
    """This year's census of 600 members (status, amounts in pay, eight
    employers) and last year's (most of them, some not yet paid or dead)."""
    n = 600
    rng = np.random.default_rng(11)
    status = rng.choice(["deferred", "in_pay", "deceased", "refunded"], n,
                        p=[0.70, 0.20, 0.05, 0.05])
    amount = rng.integers(40_000, 400_000, n) / 100
    paying = status == "in_pay"
    now = population(n, seed=5).with_columns(
        pl.Series("benefit_status", status),
        pl.Series("monthly_in_pay", [f"{a:.2f}" if p else None
                                     for a, p in zip(amount, paying, strict=True)]),
        pl.Series("in_pay_since", ["2016-07-01" if p else None for p in paying]),
        pl.Series("employer", [CODES[k] for k in rng.integers(0, len(CODES), n)]))
    keep = rng.random(n) >= 0.05
    was = np.where(rng.random(n) < 0.5, "deferred", status)
    was = np.where(np.isin(status, ["deceased", "in_pay"]), was, status)
    was_paid = was == "in_pay"
    before = now.with_columns(
        pl.Series("benefit_status", was),
        pl.Series("monthly_in_pay", [f"{a * 0.98:.2f}" if p else None
                                     for a, p in zip(amount, was_paid, strict=True)]),
        pl.Series("in_pay_since", ["2016-07-01" if p else None for p in was_paid]),
    ).filter(pl.Series(keep))
    now.write_csv(folder / "census.csv")
    before.write_csv(folder / "prior.csv")
    (folder / "names.csv").write_text(NAMES, encoding="utf-8")
    (folder / "prior.toml").write_text('discount = "0.0354"\nmortality = "none"\n',
                                       encoding="utf-8")


@pytest.fixture(scope="module", params=["en", "es"])
def book(tmp_path_factory, request):
    """The valuation workbook (Pub-2010, 3.81%; last year at 3.54% without
    mortality, so every kind of line has a figure); (workbook, lang)."""
    pytest.importorskip("pymort")
    lang = request.param
    folder = tmp_path_factory.mktemp(f"liability_print_{lang}")
    censuses(folder)
    out = folder / "valuation.xlsx"
    value_file(folder / "census.csv", out, discount="0.0381", mortality="pub2010",
               prior=folder / "prior.csv", prior_date=date(2025, 6, 30),
               prior_assumptions=folder / "prior.toml", employer_names=folder / "names.csv",
               as_of=date(2026, 6, 30), lang=lang)
    return out, lang


def _need_office() -> None:
    need_part(SOFFICE is not None and PDFTOTEXT is not None, "LibreOffice (soffice)",
              "install Debian's packages: apt-get install libreoffice-calc-nogui poppler-utils")


def run_together(words, lang: str) -> list[tuple[str, str]]:
    return [(a, b) for a, b in touching(words) if b not in SENTENCE[lang]]


@pytest.mark.slow
def test_the_valuation_report_prints_cleanly_in_readable_type(book):
    _need_office()
    path, lang = book
    pages = to_pdf(path)
    assert len(pages) == PAGES[lang], [p[:200] for p in pages]
    words = pdf_words(path)
    assert len(words) == PAGES[lang]
    for n, page in enumerate(words, start=1):
        assert overprinted(page) == [], n
        assert run_together(page, lang) == [], n
        # no sheet squeezed to a type too small to read (the assumptions, the
        # narrowest, at about 75 %)
        assert median(w[3] - w[1] for w in page) >= 0.7 * UNSCALED, n
    title, subtitle = HEADER[lang]
    for n, p in enumerate(pages, start=1):  # the page header, on every page, readable
        assert title in p and subtitle in p, (n, p[:300])
        assert (f"Page {n} of {PAGES[lang]}" if lang == "en"
                else f"Página {n} de {PAGES[lang]}") in p

    # the schedule of changes: one page, every line on it, at about 85 %
    # (the GASB 73 layout names the schedule's lines too, each under its GASB line)
    changes = [n for n, p in enumerate(pages) if ("Interest at" if lang == "en"
                                                  else "Intereses al") in p
               and "GASB" not in p]
    assert len(changes) == 1, changes
    schedule = pages[changes[0]]
    for text in (["Experience: members who died", "Change of assumptions: mortality",
                  "Total pension liability at June 30, 2025", "T0 (prior census at this",
                  "Total pension liability at June 30, 2026"] if lang == "en" else
                 ["Experiencia: miembros que fallecieron", "Cambio de supuestos: mortalidad",
                  "Obligación total por pensiones al 30 de junio de 2025",
                  "Obligación total por pensiones al 30 de junio de 2026"]):
        assert text in schedule, text
    assert median(w[3] - w[1] for w in words[changes[0]]) >= 0.8 * UNSCALED

    # the employers' charges: two pages across, the employer column on each,
    # the ten fiscal years, the later years and the total
    fy = "FY" if lang == "en" else "AF"
    charges = [n for n, p in enumerate(pages) if "MUN-SAN-JUAN" in p and "Departamento" not in p
               and (f"{fy}2030" in p or f"{fy}2035" in p)]
    assert charges == [charges[0], charges[0] + 1], charges
    first, second = (pages[n] for n in charges)
    for n in charges:
        assert all(code in pages[n] for code in CODES), n
        assert median(w[3] - w[1] for w in words[n]) >= 0.8 * UNSCALED
    shown = [y for y in range(2027, 2037) if f"{fy}{y}" in first]
    assert shown and shown[0] == 2027, shown
    assert all(f"{fy}{y}" in second for y in range(shown[-1] + 1, 2037)), second[:400]
    assert ("FY2037 and later" if lang == "en" else "AF2037 y") in second
    assert ("All years" if lang == "en" else "Todos los años") in second
