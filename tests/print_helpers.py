"""Reading a workbook as it is stored (cell by cell, numbers apart from
text) and converting it to PDF with LibreOffice, for the tests of the
printed workbooks (project, compare, census)."""

from __future__ import annotations

import atexit
import functools
import re
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path
from xml.etree import ElementTree as ET

NS = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
      "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships"}
REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
# a count or an amount written as text ("4", "1,234.50"); not a code such as route "19.2"
NUMBER_TEXT = re.compile(r"^-?([0-9]{1,3}(,[0-9]{3})+|[0-9]+)(\.[0-9]{2})?$")


def _sheet_files(z: zipfile.ZipFile) -> dict[str, str]:
    book = ET.fromstring(z.read("xl/workbook.xml"))
    rels = ET.fromstring(z.read("xl/_rels/workbook.xml.rels"))
    target = {r.get("Id"): r.get("Target") for r in rels}
    return {s.get("name"): "xl/" + target[s.get(REL)].lstrip("/").removeprefix("xl/")
            for s in book.find("m:sheets", NS)}


def cells(path: Path, sheet: str) -> dict[str, tuple[str, str]]:
    """{"B3": ("n", "1234.5"), "A1": ("s", "fiscal_year"), ...}: each cell's
    kind (n number, s text, b boolean) and stored value."""
    with zipfile.ZipFile(path) as z:
        shared = []
        if "xl/sharedStrings.xml" in z.namelist():
            for si in ET.fromstring(z.read("xl/sharedStrings.xml")).findall("m:si", NS):
                shared.append("".join(t.text or "" for t in si.iter(f"{{{NS['m']}}}t")))
        root = ET.fromstring(z.read(_sheet_files(z)[sheet]))
    out = {}
    for c in root.iter(f"{{{NS['m']}}}c"):
        v = c.find("m:v", NS)
        kind = c.get("t", "n")
        if v is None and kind != "inlineStr":
            continue
        if kind == "inlineStr":  # text written in the cell itself
            out[c.get("r")] = ("s", "".join(t.text or "" for t in c.iter(f"{{{NS['m']}}}t")))
            continue
        if kind == "s":
            out[c.get("r")] = ("s", shared[int(v.text)])
        else:
            out[c.get("r")] = (kind, v.text)
    return out


def sheet_names(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as z:
        return list(_sheet_files(z))


def page_setup(path: Path, sheet: str) -> dict[str, str]:
    """The sheet's <pageSetup> attributes and whether it fits to one page wide."""
    with zipfile.ZipFile(path) as z:
        root = ET.fromstring(z.read(_sheet_files(z)[sheet]))
    setup = root.find("m:pageSetup", NS)
    out = dict(setup.attrib) if setup is not None else {}
    fit = root.find("m:sheetPr/m:pageSetUpPr", NS)
    out["fitToPage"] = fit.get("fitToPage", "0") if fit is not None else "0"
    return out


def numbers_as_text(path: Path, allow: tuple[str, ...] = ()) -> list[tuple[str, str, str]]:
    """Text cells that read as a number ("4", "1,234.50"): (sheet, cell, text);
    `allow`: sheets whose text is meant (a field's value as a file wrote it)."""
    bad = []
    for name in sheet_names(path):
        if name in allow:
            continue
        for ref, (kind, v) in cells(path, name).items():
            if kind == "s" and NUMBER_TEXT.match(v.strip()):
                bad.append((name, ref, v))
    return bad


SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")
PDFTOTEXT = shutil.which("pdftotext")


@functools.cache
def _office_profile() -> Path:
    """One LibreOffice user profile for this test process: LibreOffice's first
    start in a new profile takes several seconds to set it up, later starts
    far less; a profile is not shared between processes (LibreOffice locks
    it)."""
    folder = Path(tempfile.mkdtemp(prefix="diferida-lo-profile-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def to_pdf(xlsx: Path) -> list[str]:
    """The workbook converted by LibreOffice (headless), as the text of each page."""
    out = xlsx.parent / "pdf"
    out.mkdir(exist_ok=True)
    profile = _office_profile()
    r = subprocess.run([SOFFICE, f"-env:UserInstallation=file://{profile}", "--headless",
                        "--convert-to", "pdf", "--outdir", str(out), str(xlsx)],
                       capture_output=True, text=True, timeout=300)
    pdf = out / (xlsx.stem + ".pdf")
    assert r.returncode == 0 and pdf.exists(), r.stdout + r.stderr
    text = subprocess.run([PDFTOTEXT, "-layout", str(pdf), "-"], capture_output=True,
                          text=True, timeout=120, check=True).stdout
    pages = text.split("\f")
    if pages and not pages[-1].strip():
        pages.pop()
    return pages


WORD = re.compile(r'<word xMin="([0-9.]+)" yMin="([0-9.]+)" xMax="([0-9.]+)" yMax="([0-9.]+)">'
                  r"([^<]*)</word>")


def pdf_words(xlsx: Path) -> list[list[tuple[float, float, float, float, str]]]:
    """The words of each page of the PDF `to_pdf` made of `xlsx` (call it
    first), each with its box in points: (x0, y0, x1, y1, text)."""
    import html

    pdf = xlsx.parent / "pdf" / (xlsx.stem + ".pdf")
    text = subprocess.run([PDFTOTEXT, "-bbox", str(pdf), "-"], capture_output=True,
                          text=True, timeout=120, check=True).stdout
    return [[(float(a), float(b), float(c), float(d), html.unescape(w))
             for a, b, c, d, w in WORD.findall(page)]
            for page in text.split("<page ")[1:]]
