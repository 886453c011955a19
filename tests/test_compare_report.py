"""The HTML report of `diferida compare --html`, in Spanish and in English:
headings, table headers and values in words, no raw identifier or code in
the visible text, dates and money as a reader writes them, an accessible
chart in the language, and a well-formed page."""

from __future__ import annotations

import functools
import re
import subprocess
import xml.etree.ElementTree as ET
from datetime import date
from decimal import Decimal
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path

import polars as pl
import pytest

from diferida.compare import Projecting, compare_file, report, table_paths
from diferida.compare import engine as cmp
from diferida.compare import output as out_mod
from diferida.compare.report import ReportLabelError, Values, column_label, summary_label
from diferida.i18n import LANGS
from diferida.rules import load_rules
from tests import test_web_htmlcheck as htmlcheck
from tests.conftest import AS_OF, cli_command

STRICT = "article19-strict-19_4"
AGE67 = "reform-19_2-age-67"
EXAMPLES = Path(str(resources.files("diferida") / "data" / "spec_examples.csv"))
PROJECTING = {"discount": "0.04", "mortality": "none"}

# what the page must say, in each language
WORDS = {
    "es": {"heading": "Quién cambia con las reglas article19-strict-19_4 en lugar de article19",
           "sections": ["Resumen", "Costo por año fiscal", "Cambios de situación y de vía",
                        "Fechas de elegibilidad que se mueven", "Pensiones anuales que cambian",
                        "Miembros cuya determinación cambia", "Supuestos"],
           "headers": ["Situación según A", "Situación según B", "Vía según A",
                       "Fecha de elegibilidad según B", "Cambio de la pensión anual",
                       "Meses que se mueve la fecha de elegibilidad", "Explicación según B",
                       "Pagos esperados: diferencia B − A", "Valor presente al 4% según A",
                       "Año fiscal"],
           "values": ["20 de junio de 2040", "20 de junio de 2025",
                      "Tendrá derecho a una pensión diferida", "Regla 19.4(a)", "Regla 19.2",
                      "$13,590.02", "29 de noviembre de 2026", "2026-2027", "sí"],
           "chart": ["Pagos esperados de pensiones diferidas por año fiscal", "Año fiscal",
                     # each axis in its own round unit: thousands for this small file
                     "Pagos (miles de USD)", "B − A (miles)", "Reglas A: article19",
                     "Reglas B: article19-strict-19_4"],
           "foreign": ["Expected", "Fiscal year", "Rules A", "Payments", "Summary", "under A"]},
    "en": {"heading": "Who changes under the rules article19-strict-19_4 instead of article19",
           "sections": ["Summary", "Cost by fiscal year", "Changes of status and route",
                        "Eligibility dates that move", "Annual amounts that change",
                        "Members whose determination changes", "Assumptions"],
           "headers": ["Status under A", "Status under B", "Route under A",
                       "Eligibility date under B", "Change of the annual amount",
                       "Months the eligibility date moves", "Explanation under B",
                       "Expected payments: difference B − A", "Present value at 4% under A",
                       "Fiscal year"],
           "values": ["June 20, 2040", "June 20, 2025", "Will be entitled to a deferred pension",
                      "Rule 19.4(a)", "Rule 19.2", "$13,590.02", "November 29, 2026",
                      "FY2027", "yes"],
           "chart": ["Expected deferred pension payments by fiscal year", "Fiscal year",
                     "Payments (USD thousands)", "B − A (thousands)", "Rules A: article19",
                     "Rules B: article19-strict-19_4"],
           "foreign": ["Pagos", "Año fiscal", "Reglas A", "Resumen", "según A"]},
}


class _Visible(HTMLParser):
    """The text a reader sees or hears: element text (the chart's labels, its
    title and description included), not styles or the SVG's metadata."""

    HIDDEN = {"style", "metadata", "script"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hidden = 0
        self.parts: list[str] = []
        self.th: list[dict[str, str | None]] = []
        self.tables = self.captions = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.HIDDEN:
            self.hidden += 1
        if tag == "th":
            self.th.append(dict(attrs))
        self.tables += tag == "table"
        self.captions += tag == "caption"

    def handle_endtag(self, tag):
        if tag in self.HIDDEN:
            self.hidden -= 1

    def handle_data(self, data):
        if not self.hidden:
            self.parts.append(data)


def visible(page: str) -> _Visible:
    v = _Visible()
    v.feed(page)
    v.close()
    v.text = "\n".join(v.parts)
    return v


def svg_of(page: str) -> str:
    m = re.search(r"<svg.*?</svg>", page, flags=re.S)
    assert m, "no chart"
    return m.group(0)


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, str]:
    """The rules §8 examples, article19 against the strict 19.4 reading, with
    the projection options, in each language."""
    out = {}
    for lang in LANGS:
        folder = tmp_path_factory.mktemp(f"report-{lang}")
        page = folder / "c.html"
        compare_file(EXAMPLES, folder / "c.xlsx", ["article19", STRICT], html=page, as_of=AS_OF,
                     lang=lang, projecting=Projecting(**PROJECTING))
        out[lang] = page.read_text("utf-8")
    return out


@pytest.mark.parametrize("lang", LANGS)
def test_the_page_speaks_the_chosen_language(pages, lang):
    page, w = pages[lang], WORDS[lang]
    assert page.startswith(f"<!doctype html><html lang={lang}>")
    text = visible(page).text
    assert w["heading"] in text
    for words in (w["sections"], w["headers"], w["values"]):
        missing = [s for s in words if s not in text]
        assert not missing, missing
    found = [s for s in w["foreign"] if s in text]
    assert not found, f"words of the other language in the {lang} page: {found}"


@pytest.mark.parametrize("lang", LANGS)
def test_no_raw_identifier_code_or_iso_date_in_the_visible_text(pages, lang, tmp_path):
    text = visible(pages[lang]).text
    # every column identifier of every table the comparison writes
    compare_file(EXAMPLES, tmp_path / "c.csv", ["article19", STRICT], as_of=AS_OF,
                 projecting=Projecting(**PROJECTING))
    identifiers = {c for p in table_paths(tmp_path / "c.csv").values()
                   for c in pl.read_csv(p, n_rows=0).columns}
    identifiers -= {"members", "changes", "shift", "months", "change", "item", "value", "row"}
    assert {"status_a", "eligibility_shift_months", "finding_under_b"} <= identifiers
    raw = [i for i in identifiers if re.search(rf"(?<![\w.]){re.escape(i)}(?![\w])", text)]
    assert not raw, raw
    for code in ("not_yet_eligible", "not_entitled", "pre1990", "route_applies", "True",
                 "False", "TOTAL", "FY2027" if lang == "es" else "AF"):
        assert not re.search(rf"\b{code}\b", text), code
    assert not re.findall(r"\b\d{4}-\d{2}-\d{2}\b", text)


@pytest.mark.parametrize("lang", LANGS)
def test_every_table_has_a_caption_and_column_headers_with_scope(pages, lang):
    v = visible(pages[lang])
    assert v.tables >= 6 and v.captions == v.tables
    assert v.th and all(a.get("scope") in ("col", "row") for a in v.th)


@pytest.mark.parametrize("lang", LANGS)
def test_the_chart_is_labelled_in_the_language(pages, lang):
    svg = svg_of(pages[lang])
    root = ET.fromstring(svg)  # well-formed XML
    ns = "{http://www.w3.org/2000/svg}"
    assert root.get("role") == "img"
    ids = root.get("aria-labelledby").split()
    by_id = {el.get("id"): el for el in root.iter() if el.get("id")}
    title, desc = by_id[ids[0]], by_id[ids[1]]
    assert (title.tag, desc.tag) == (f"{ns}title", f"{ns}desc")
    assert title.text == WORDS[lang]["chart"][0]
    assert "article19-strict-19_4" in desc.text and "$" in desc.text
    labels = " ".join("".join(el.itertext()) for el in root.iter(f"{ns}text"))
    for s in WORDS[lang]["chart"][1:]:
        assert s in labels, (s, labels[:400])
    first_year = "2026-2027" if lang == "es" else "FY2027"
    assert first_year in labels
    assert not [s for s in WORDS[lang]["foreign"] if s in labels]


@pytest.mark.parametrize("lang", LANGS)
def test_the_page_is_well_formed_html(pages, lang, monkeypatch):
    page = pages[lang]
    # the page's own elements beyond the web pages' (a report, not a form)
    monkeypatch.setattr(htmlcheck, "KNOWN", htmlcheck.KNOWN | {"style", "figure",
                                                                "figcaption"})
    assert htmlcheck.problems(page.replace(svg_of(page), "")) == []
    # the chart's ids are its own: none repeats one of the page
    page_ids = re.findall(r'\bid="?([\w-]+)', page.replace(svg_of(page), ""))
    svg_ids = [el.get("id") for el in ET.fromstring(svg_of(page)).iter() if el.get("id")]
    assert len(set(svg_ids)) == len(svg_ids) and not set(page_ids) & set(svg_ids)
    # nothing is loaded: no script, no link, no reference to another site
    # (the chart's namespaces and metadata name vocabularies, they load nothing)
    assert "<script" not in page and "<link" not in page and "@import" not in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)


def test_every_column_and_summary_item_has_a_label_in_both_languages(tmp_path):
    out = tmp_path / "c.csv"
    s = compare_file(EXAMPLES, out, ["article19", AGE67], as_of=AS_OF,
                     projecting=Projecting(discount="0.04,0.055", mortality="none"))
    columns = {c for p in table_paths(out).values() for c in pl.read_csv(p, n_rows=0).columns}
    assert {"pv_0.055_difference", "annual_amount_a", "finding_condition"} <= columns
    for c in sorted(columns):
        es, en = column_label(c, "es"), column_label(c, "en")
        assert es and en and es != en, c
    for item, _ in s.items():
        assert summary_label(item, "es") != summary_label(item, "en"), item
    assert column_label("pv_0.055_difference", "es") == "Valor presente al 5.5%: diferencia B − A"
    assert column_label("pv_0.055_b", "en") == "Present value at 5.5% under B"


@pytest.mark.parametrize("name", ["no_such_column", "status_c", "pv_x_a", "colour_a"])
def test_a_column_without_a_label_is_an_error_not_a_raw_name(name):
    for lang in LANGS:
        with pytest.raises(ReportLabelError, match=name):
            column_label(name, lang)


def test_the_illustrative_reform_is_marked_in_the_language(tmp_path):
    for lang, note in (("es", "son una reforma ilustrativa, no una ley"),
                       ("en", "are an illustrative reform, not law")):
        page = tmp_path / f"{lang}.html"
        compare_file(EXAMPLES, tmp_path / f"{lang}.xlsx", ["article19", AGE67], html=page,
                     as_of=AS_OF, lang=lang)
        text = visible(page.read_text("utf-8")).text
        assert f"Las reglas B ({AGE67}) {note}" in text or f"Rules B ({AGE67}) {note}" in text
        assert "<svg" not in page.read_text("utf-8")


@pytest.mark.parametrize("lang, note", [
    ("es", "Se muestran las primeras 1 de 2 filas"),
    ("en", "The first 1 of 2 rows are shown"),
])
def test_the_first_rows_note_is_in_the_language(tmp_path, monkeypatch, lang, note):
    monkeypatch.setattr(out_mod, "html_report",
                        functools.partial(report.html_report, changed_rows=1))
    page = tmp_path / "c.html"
    compare_file(EXAMPLES, tmp_path / "c.xlsx", ["article19", AGE67], html=page, as_of=AS_OF,
                 lang=lang)
    text = visible(page.read_text("utf-8")).text
    assert note in text


def _sbs(pairs: list[tuple[date | None, date | None, str | None, str | None]]) -> pl.DataFrame:
    a = pl.DataFrame({"participant_id": [str(i) for i in range(len(pairs))],
                      "eligibility_date": [p[0] for p in pairs],
                      "annual_amount": [None if p[2] is None else Decimal(p[2]) for p in pairs]},
                     schema_overrides={"annual_amount": cmp.MONEY})
    b = pl.DataFrame({"participant_id": a["participant_id"],
                      "eligibility_date": [p[1] for p in pairs],
                      "annual_amount": [None if p[3] is None else Decimal(p[3]) for p in pairs]},
                     schema_overrides={"annual_amount": cmp.MONEY})
    for c in cmp.COMPARED:
        if c not in a.columns:
            a = a.with_columns(pl.lit(None, dtype=pl.String).alias(c))
            b = b.with_columns(pl.lit(None, dtype=pl.String).alias(c))
    return cmp.side_by_side(a, b)


@pytest.mark.parametrize("lang", LANGS)
def test_every_kind_of_move_and_every_bin_of_the_amount_change_is_written_in_words(lang):
    d = date
    sbs = _sbs([(d(2030, 1, 1), d(2032, 1, 1), "1000.00", "20000.00"),   # later, +19,000
                (d(2030, 1, 1), d(2029, 6, 1), "20000.00", "1000.00"),   # earlier, -19,000
                (None, d(2031, 1, 1), None, "5000.00"),                  # gains, +5,000
                (d(2030, 1, 1), None, "5000.00", None),                  # loses, -5,000
                (d(2030, 1, 1), d(2030, 1, 1), "100.00", "150.00"),      # +50
                (d(2030, 1, 1), d(2030, 1, 1), "100.00", "99.99"),       # -0.01
                (d(2030, 1, 1), d(2030, 1, 1), "100.00", "700.00"),      # +600
                (d(2030, 1, 1), d(2030, 1, 1), "8000.00", "700.00")])    # -7,300
    values = Values(load_rules("article19"), load_rules(AGE67), lang)
    shifts = cmp.eligibility_shifts(sbs)
    moves = [values.text("shift", v) for v in shifts["shift"].to_list()]
    assert sorted(moves) == sorted(report.words(lang)["shift"].values())
    bins = [values.text("change", v) for v in cmp.amount_changes(sbs)["change"].to_list()]
    assert len(bins) == 7 and all("$" in b for b in bins)
    if lang == "es":
        assert "más de $10,000.00" in bins and "de más de -$100.00 hasta -$0.01" in bins
        assert not [b for b in bins if " to " in b]
    else:
        assert "more than $10,000.00" in bins and "more than -$100.00, up to -$0.01" in bins
    total = cmp.amount_changes(sbs)["total_change"].sum()
    assert values.text("total_change", Decimal(total)) == "-$6,650.01"


def test_values_as_a_reader_writes_them():
    ra, rb = load_rules("article19"), load_rules(STRICT)
    es, en = Values(ra, rb, "es"), Values(ra, rb, "en")
    assert es.text("minimum_applied_a", True) == "sí" and en.text("changes", False) == "no"
    assert es.text("annual_change", Decimal("-1234.5")) == "-$1,234.50"
    assert en.text("members", 1234567) == "1,234,567"
    assert es.text("eligibility_date_b", date(2040, 6, 20)) == "20 de junio de 2040"
    assert en.text("regime_a", "pre1990").startswith("pre-1990 participant (")
    assert es.text("regime_b", "new").startswith("participante nuevo (")
    assert es.text("route_b", None) == "—"
    assert es.text("fiscal_year", "TOTAL") == "Total" and en.text("fiscal_year", "FY2040") \
        == "FY2040" and es.text("fiscal_year", "FY2040") == "2039-2040"
    assert es.text("reasons_a", "not_separated;refund_requested") == (
        "no se ha separado del servicio; solicitó el reembolso de sus aportaciones")


@pytest.mark.slow
def test_the_command_line_writes_the_report_in_spanish_unless_told(tmp_path):
    for extra, lang in (([], "es"), (["--lang", "en"], "en")):
        page = tmp_path / f"r-{lang}.html"
        proc = subprocess.run(
            [*cli_command(), "compare", str(EXAMPLES), "--rules", "article19", "--rules", STRICT,
             "-o", str(tmp_path / f"c-{lang}.xlsx"), "--html", str(page), "--as-of",
             "2026-11-29", "--discount", "0.04", "--mortality", "none", "-q", *extra],
            capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        html = page.read_text("utf-8")
        assert html.startswith(f"<!doctype html><html lang={lang}>")
        assert WORDS[lang]["chart"][0] in svg_of(html)


@pytest.mark.parametrize("lang, sex, blended", [
    ("es", True, "El de la columna sex del archivo donde consta; donde falta, la supervivencia "
                 "de ambos sexos combinada: 60% mujeres, 40% hombres."),
    ("en", False, "The file has no sex column: for everyone, the survival of the two sexes "
                  "blended: 60% female, 40% male."),
])
def test_the_projection_assumptions_are_in_words_with_a_mortality_table(tmp_path, lang, sex,
                                                                       blended):
    from tests.projection_helpers import gompertz_table

    frame = pl.read_csv(EXAMPLES, infer_schema=False)
    if sex:
        frame = frame.with_columns(pl.Series("sex", (["F", "M", ""] * 4)[:frame.height]))
    src = tmp_path / "m.csv"
    frame.write_csv(src)
    page = tmp_path / "c.html"
    compare_file(src, tmp_path / "c.xlsx", ["article19", AGE67], html=page, as_of=AS_OF,
                 lang=lang, projecting=Projecting(discount="0.04", sex_blend="0.6",
                                                  start="age:62", horizon="30",
                                                  cola="0.015", table=gompertz_table()))
    text = visible(page.read_text("utf-8")).text
    assert blended in text
    if lang == "es":
        assert "La más tardía entre la fecha en que se cumplen 62 años" in text
        assert "30 años fiscales." in text and "1.5% cada 1 de julio" in text
    else:
        assert "The later of the day age 62 is reached" in text
        assert "30 fiscal years." in text and "1.5% on each 1 July" in text


# ---- the workbook, for people: in the language of the run -----------------------


def _as_shown(xlsx: Path) -> dict[str, list[list[str]]]:
    """Every sheet of the workbook as LibreOffice (headless) shows it, cell
    by cell as displayed (dates in their display format), through its CSV
    export of all sheets."""
    import csv

    from tests.print_helpers import SOFFICE, _office_profile

    if SOFFICE is None:
        pytest.skip("LibreOffice is not installed")
    folder = xlsx.parent / "shown"
    folder.mkdir()
    # 44: comma, 34: quote, 76: UTF-8, 1: from line 1; token 9 true: as shown; -1: every sheet
    spec = "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,true,false,false,-1"
    r = subprocess.run([SOFFICE, f"-env:UserInstallation=file://{_office_profile()}",
                        "--headless", "--convert-to", spec, "--outdir", str(folder), str(xlsx)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    out = {}
    for f in folder.iterdir():
        with f.open(encoding="utf-8", newline="") as fh:
            out[f.stem.removeprefix(xlsx.stem + "-")] = list(csv.reader(fh))
    return out


def test_the_spanish_workbook_speaks_spanish_and_the_files_keep_their_codes(tmp_path):
    # the attack: `compare --lang es -o x.xlsx` wrote English sheet and column
    # names, codes (eligible, route_applies), ISO dates and "later under B"
    xlsx = tmp_path / "c.xlsx"
    compare_file(EXAMPLES, xlsx, ["article19", AGE67], as_of=AS_OF, lang="es",
                 projecting=Projecting(**PROJECTING))
    sheets = pl.read_excel(xlsx, sheet_id=0)
    assert list(sheets) == ["Resumen", "Situación y vía", "Miembros que cambian",
                            "Fechas que se mueven", "Pensiones que cambian", "Años fiscales",
                            "Gráfica", "Supuestos", "Columnas de los archivos"]
    codes = re.compile(r"\b(not_yet_eligible|not_entitled|eligible|pre1990|route_applies|"
                       r"under [AB]|later|earlier|FY\d{4}|TOTAL|true|false|"
                       r"status_[ab]|route_[ab]|finding_\w+)\b")
    for name, frame in sheets.items():
        if name in ("Columnas de los archivos", "Resumen"):
            continue  # the files' column names and the summary's keys, on purpose
        for head in frame.columns:
            assert not codes.search(head), (name, head)
        for col in frame.columns:
            if frame.schema[col] == pl.String:
                for v in frame[col].drop_nulls().to_list():
                    assert not codes.search(v) and not re.search(r"\d{4}-\d{2}-\d{2}", v), (
                        name, col, v)
    cm = sheets["Miembros que cambian"]
    spec3 = cm.filter(pl.col("Identificador") == "spec-3").row(0, named=True)
    assert spec3["Situación según A"] == "Tendrá derecho a una pensión diferida"
    assert spec3["Vía según B"] == "Regla 19.2"
    assert spec3["Fecha de elegibilidad según B"] == date(2039, 11, 2)  # a date cell
    assert spec3["Pensión anual según A"] == pytest.approx(5236.88)  # a number
    assert spec3["Mínimo de la Regla 19.6 aplicado según A"] == "no"
    assert sheets["Fechas que se mueven"]["Movimiento"].to_list() == ["más tarde según B"]
    fy = sheets["Años fiscales"]
    assert fy["Año fiscal"].to_list()[:2] == ["2026-2027", "2027-2028"]
    assert fy["Año fiscal"].to_list()[-1] == "Total"
    assert fy["Periodo"][1] == "1 de julio de 2027 a 30 de junio de 2028"
    summary = dict(sheets["Resumen"].select("clave", "Valor").iter_rows())
    assert summary["rules_b_note"] == "Reforma ilustrativa, no es ley"
    # the last sheet names each header's column in the CSV/Parquet tables
    keys = {(s, h): c for s, h, c in sheets["Columnas de los archivos"].rows()}
    assert keys["Miembros que cambian", "Situación según A"] == "status_a"
    assert keys["Fechas que se mueven", "Movimiento"] == "shift"
    # the CSV/Parquet tables keep their codes and ISO dates, for programs
    csv_out = tmp_path / "files" / "c.csv"
    csv_out.parent.mkdir()
    compare_file(EXAMPLES, csv_out, ["article19", AGE67], as_of=AS_OF, lang="es",
                 projecting=Projecting(**PROJECTING))
    paths = table_paths(csv_out)
    assert pl.read_csv(paths["eligibility_shifts"])["shift"].to_list() == ["later under B"]
    changed = pl.read_csv(paths["changed_members"], infer_schema=False)
    spec3 = changed.filter(pl.col("participant_id") == "spec-3").row(0, named=True)
    assert (spec3["status_a"], spec3["eligibility_date_b"]) == ("not_yet_eligible", "2039-11-02")


@pytest.mark.slow
def test_libreoffice_opens_the_spanish_workbook_and_shows_its_dates_in_words(tmp_path):
    xlsx = tmp_path / "c.xlsx"
    compare_file(EXAMPLES, xlsx, ["article19", AGE67], as_of=AS_OF, lang="es",
                 projecting=Projecting(**PROJECTING))
    shown = _as_shown(xlsx)
    assert set(shown) == set(pl.read_excel(xlsx, sheet_id=0))
    head, *rows = shown["Miembros que cambian"]
    row = next(r for r in rows if r[head.index("Identificador")] == "spec-3")
    assert row[head.index("Situación según A")] == "Tendrá derecho a una pensión diferida"
    assert row[head.index("Fecha de elegibilidad según A")] == "2 de noviembre de 2037"
    assert row[head.index("Fecha de elegibilidad según B")] == "2 de noviembre de 2039"
    assert row[head.index("Pensión anual según A")] == "5,236.88"
    resumen = {r[2]: r[1] for r in shown["Resumen"][1:]}
    assert resumen["as_of"] == "29 de noviembre de 2026"
    years = shown["Años fiscales"]
    assert years[-1][0] == "Total" and years[2][-1] == "1 de julio de 2027 a 30 de junio de 2028"


def test_the_english_workbook_shows_dates_in_words_too(tmp_path):
    from tests.print_helpers import cells

    xlsx = tmp_path / "c.xlsx"
    compare_file(EXAMPLES, xlsx, ["article19", AGE67], as_of=AS_OF, lang="en")
    sheets = pl.read_excel(xlsx, sheet_id=0)
    assert list(sheets)[:3] == ["Summary", "Status and route", "Changed members"]
    cm = sheets["Changed members"]
    assert cm["Eligibility date under B"].dtype == pl.Date
    assert "Status under A" in cm.columns and "status_a" not in cm.columns
    # the date is a number cell (a real date) ...
    summary = cells(xlsx, "Summary")
    row = next(ref[1:] for ref, (_, v) in summary.items() if ref.startswith("C") and v == "as_of")
    assert summary["B" + row][0] == "n"
    # ... whose display format is the language's own
    import zipfile

    with zipfile.ZipFile(xlsx) as z:
        styles = z.read("xl/styles.xml").decode()
    assert 'formatCode="[$-409]mmmm d, yyyy"' in styles


# a police officer, new participant, 25.5 years: 19.4(a) since 30 June 2020 as
# written, 19.2 from 10 March 2030 under the strict reading; the start asked
# for (1 January 2021) is past, and premature under the strict reading
PAST_START = ("participant_id,birth_date,entry_date,separation_date,creditable_service_years,"
              "average_compensation,group,refund_requested,requested_start_date\n"
              "past,1965-03-10,1995-01-01,2020-06-30,25.5,40000,police,false,2021-01-01\n"
              "later,1965-03-10,1995-01-01,2020-06-30,25.5,40000,police,false,2031-01-01\n"
              "none,1965-03-10,1995-01-01,2020-06-30,25.5,40000,police,false,\n")
STARTS_SAID = {
    "es": {"past": ("pidió el 1 de enero de 2021, fecha anterior a esta determinación (3 de "
                    "diciembre de 2026); si se pagan meses anteriores a la solicitud lo decide "
                    "el Sistema",
                    "solicitud prematura: pidió el 1 de enero de 2021, antes de la fecha de "
                    "elegibilidad; podrá solicitarla desde el 10 de marzo de 2030"),
           "later": ("1 de enero de 2031", "1 de enero de 2031"),
           "none": ("a solicitud: puede solicitarla ahora",
                    "a solicitud, desde el 10 de marzo de 2030 o en cualquier fecha posterior")},
    "en": {"past": ("asked for January 1, 2021, a date before this determination (December 3, "
                    "2026); whether months before the application are paid is for the System "
                    "to decide",
                    "premature request: asked for January 1, 2021, before the eligibility date; "
                    "it may be requested from March 10, 2030"),
           "later": ("January 1, 2031", "January 1, 2031"),
           "none": ("on request: it may be requested now",
                    "on request, from March 10, 2030 or any later date")}}


@pytest.mark.parametrize("lang", LANGS)
def test_the_workbook_says_each_start_as_the_determination_does(tmp_path, lang):
    # the attack: the workbook's changed members showed the start under A as
    # the date cell 1 January 2021 alone (a past date, bare) and a premature
    # request under B as an empty cell; rules §5 Decision: the start row's
    # own words (render.say_start)
    source = tmp_path / "police.csv"
    source.write_text(PAST_START)
    xlsx = tmp_path / "c.xlsx"
    as_of = date(2026, 12, 3)
    compare_file(source, xlsx, ["article19", STRICT], as_of=as_of, lang=lang)
    sheets = pl.read_excel(xlsx, sheet_id=0)
    cm = sheets["Miembros que cambian" if lang == "es" else "Changed members"]
    heads = [column_label(f"start_date_{side}", lang) for side in ("a", "b")]
    ident = column_label("participant_id", lang)
    said = {r[ident]: (r[heads[0]], r[heads[1]]) for r in cm.iter_rows(named=True)}
    assert said == STARTS_SAID[lang]
    # nothing of the workbook's own carries over to the files: they keep the
    # ISO dates and their columns
    out = tmp_path / "files" / "c.csv"
    out.parent.mkdir()
    compare_file(source, out, ["article19", STRICT], as_of=as_of, lang=lang)
    changed = pl.read_csv(table_paths(out)["changed_members"], infer_schema=False)
    assert not [c for c in changed.columns if c.startswith("_")]
    rows = {r["participant_id"]: (r["start_date_a"], r["start_date_b"])
            for r in changed.iter_rows(named=True)}
    assert rows == {"past": ("2021-01-01", None), "later": ("2031-01-01", "2031-01-01"),
                    "none": (None, None)}
    parquet = tmp_path / "parquet" / "c.parquet"
    parquet.parent.mkdir()
    compare_file(source, parquet, ["article19", STRICT], as_of=as_of, lang=lang)
    frame = pl.read_parquet(table_paths(parquet)["changed_members"])
    assert frame["start_date_a"].dtype == pl.Date
    assert not [c for c in frame.columns if c.startswith("_")]
