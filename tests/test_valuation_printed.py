"""The valuation report as a printed document (`diferida valuation -o
report.pdf`, WeasyPrint), read back as an auditor reads it — with pdftotext
(Debian's poppler-utils): a table of contents whose page numbers are the
pages its parts begin on, "page N of M" on every page, the same figures as
the JSON report of the same run, every GASB 73 part, nothing printed past
the paper's edge (a wide table in blocks of its columns, what each row is on
every block), in Spanish and in English; and the same report gives the same
bytes. Without pdftotext these tests skip saying why; under `make test`
(scripts/with-test-services) they fail instead."""

from __future__ import annotations

import re
import shutil
import subprocess
from datetime import date
from decimal import Decimal
from xml.etree import ElementTree as ET

import numpy as np
import pytest

from diferida.i18n import catalog
from diferida.liability.runner import value_file

from .conftest import need_part
from .test_liability_print import censuses
from .test_print_layout import overprinted

pytestmark = pytest.mark.pdf

# "3. Schedule of changes in the total pension liability ........ 4"
CONTENTS_LINE = re.compile(r"^\s*(\d+)\.\s+(.*?)\s*\.{3,}\s*(\d+)\s*$")
POINTS_PER_INCH = 72
MARGIN_INCHES = 0.4  # the narrowest margin of report.css is 0.5 in: a word past 0.4 is off it


def _pdftotext() -> str:
    exe = shutil.which("pdftotext")
    need_part(exe is not None, "pdftotext (Debian's poppler-utils)",
              "install Debian's package: apt-get install poppler-utils")
    assert exe is not None
    return exe


def _run(*args: str) -> str:
    return subprocess.run([_pdftotext(), "-enc", "UTF-8", *args], capture_output=True,
                          check=True, timeout=120).stdout.decode("utf-8")


def page_texts(path) -> list[str]:
    """Each page's text, laid out as printed (pdftotext -layout)."""
    pages = _run("-layout", str(path), "-").split("\f")
    return pages[:-1] if pages and not pages[-1].strip() else pages


def page_words(path) -> list[tuple[float, float, list[tuple[float, ...]]]]:
    """Each page's width, height and words, each as (x0, y0, x1, y1, text)
    in points."""
    root = ET.fromstring(re.sub(r'\sxmlns="[^"]+"', "", _run("-bbox", str(path), "-"), count=1))
    return [(float(p.get("width")), float(p.get("height")),
             [(*(float(w.get(k)) for k in ("xMin", "yMin", "xMax", "yMax")), w.text or "")
              for w in p.iter("word")])
            for p in root.iter("page")]


@pytest.fixture(scope="module", params=["en", "es"])
def printed(tmp_path_factory, request):
    """The report of one measurement (a prior census, so every part has its
    figures; employers and their names) as PDF and, from the same inputs, as
    JSON: (pdf, json dict, lang, folder)."""
    pytest.importorskip("pymort")
    import json

    lang = request.param
    folder = tmp_path_factory.mktemp(f"valuation_printed_{lang}")
    censuses(folder)
    out = {}
    for suffix in (".pdf", ".json"):
        out[suffix] = folder / f"report{suffix}"
        value_file(folder / "census.csv", out[suffix], **_inputs(folder), lang=lang)
    return out[".pdf"], json.loads(out[".json"].read_text("utf-8")), lang, folder


def _inputs(folder):
    return dict(discount="0.0381", mortality="pub2010", prior=folder / "prior.csv",
                prior_date=date(2025, 6, 30), prior_assumptions=folder / "prior.toml",
                employer_names=folder / "names.csv", as_of=date(2026, 6, 30))


def contents(pages: list[str]) -> list[tuple[int, str, int]]:
    """The table of contents of the first page: (number, title, page)."""
    found = [CONTENTS_LINE.match(line) for line in pages[0].splitlines()]
    return [(int(m[1]), m[2], int(m[3])) for m in found if m]


def test_the_contents_name_every_part_on_the_page_it_begins(printed):
    path, _, lang, _ = printed
    pages = page_texts(path)
    toc = contents(pages)
    g = catalog(lang)["gasb73"]
    titles = [title for _, title, _ in toc]
    assert [n for n, _, _ in toc] == list(range(1, len(toc) + 1))
    for title in (g["schedule_title"], g["expense_title"], g["deferrals_title"],
                  g["recognition_title"], g["bases_title"],
                  g["ten_years_title"].format(n=10), g["employers_title"], g["notes_title"],
                  g["project_schedule_title"]):
        assert title in titles, (title, titles)
    # each part begins on the page the contents give: its heading is there,
    # and it is not on the page before unless the part follows another there
    for _, title, page in toc:
        assert 1 < page <= len(pages), (title, page)
        assert title in " ".join(pages[page - 1].split()), (title, page)
    assert [p for _, _, p in toc] == sorted(p for _, _, p in toc)


def test_every_page_says_its_number_and_how_many(printed):
    path, _, lang, _ = printed
    pages = page_texts(path)
    say = catalog(lang)["gasb73"]["page_of"]
    for n, text in enumerate(pages, start=1):
        assert say.format(page=n, pages=len(pages)) in text, (n, text[-300:])
    assert len(pages) >= 12  # the parts of a report with a prior census and employers


def _amount(dollars: str) -> str:
    return f"{Decimal(dollars):,.2f}"


def test_the_figures_printed_are_the_json_report_s(printed):
    path, report, lang, _ = printed
    pages = page_texts(path)
    toc = {title: page for _, title, page in contents(pages)}
    t = catalog(lang)["liability"]
    first = pages[toc[t["section_liability"].format(
        date=("June 30, 2026" if lang == "en" else "30 de junio de 2026"))] - 1]
    li = report["liability"]
    for key in ("total", "deferred", "in_pay", "rate_minus_1_point", "rate_plus_1_point"):
        assert _amount(li[key]) in first, key
    everything = "\n".join(pages)
    g = report["gasb73"]
    assert _amount(g["expense"]["total"]).replace("-", "−") in everything
    # each employer's share of the liability, as the JSON report has it
    for e in report["employers"]:
        assert _amount(e["liability"]) in everything, e


def test_nothing_prints_past_the_margin_or_over_another_word(printed):
    path, _, _, _ = printed
    edge = MARGIN_INCHES * POINTS_PER_INCH
    landscape = 0
    for n, (width, height, words) in enumerate(page_words(path), start=1):
        past = [w[4] for w in words if w[2] > width - edge or w[0] < edge]
        assert past == [], (n, past[:5])
        assert overprinted(words) == [], n
        landscape += width > height
    assert landscape >= 3  # the ten years, the employers, their payments: on wide pages


def test_the_pages_as_images_keep_their_ink_inside_the_paper_s_margin(printed, tmp_path):
    """Each page turned to an image (pdftoppm, 40 dots an inch): ink on every
    page, none in the paper's outer fifth of an inch, where a table cut off
    or run past the page would show."""
    from PIL import Image

    path, _, _, _ = printed
    exe = shutil.which("pdftoppm")
    need_part(exe is not None, "pdftoppm (Debian's poppler-utils)",
              "install Debian's package: apt-get install poppler-utils")
    subprocess.run([exe, "-r", "40", "-gray", "-png", str(path), str(tmp_path / "p")],
                   check=True, timeout=300)
    images = sorted(tmp_path.glob("p-*.png"))
    assert len(images) == len(page_texts(path))
    # 0.2 in: the page's header and footer sit in its margin, a quarter inch in
    band = round(0.2 * 40)
    for n, file in enumerate(images, start=1):
        with Image.open(file) as im:
            ink = np.asarray(im.convert("L")) < 160
        assert ink.any(), n
        inside = np.zeros_like(ink)
        inside[band:-band, band:-band] = True
        assert not (ink & ~inside).any(), (n, np.argwhere(ink & ~inside)[:5].tolist())


def test_a_wide_table_prints_in_blocks_each_naming_its_rows(printed):
    """The employers' payments (the ten fiscal years, the later years and the
    total across): two blocks, the employer column on each, no employer's
    code broken over lines."""
    path, _, lang, _ = printed
    pages = page_texts(path)
    fy = "FY" if lang == "en" else "AF"
    page = next(p for p in pages if f"{fy}2027" in p and f"{fy}2033" in p and "MUN-SAN-JUAN" in p)
    employer = catalog(lang)["liability"]["col_employer"]
    assert page.count(f"{fy}2027") == 1 and page.count(f"{fy}2033") == 1
    assert len(re.findall(rf"^[ \t]*{employer}[ \t]+{fy}20[0-9][0-9]", page, re.M)) == 2, page[:600]
    assert sum("MUN-SAN-JUAN" in line for line in page.splitlines()) == 2


def test_the_same_report_gives_the_same_bytes(printed):
    path, _, lang, folder = printed
    if lang != "en":
        pytest.skip("once is enough: the bytes do not depend on the language")
    again = folder / "again.pdf"
    value_file(folder / "census.csv", again, **_inputs(folder), lang=lang)
    assert again.read_bytes() == path.read_bytes()
