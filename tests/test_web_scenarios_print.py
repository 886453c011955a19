"""The calculator's scenario panel and its printout, for the people of
tests/test_web_stories.py:

- "Ver esa fecha" (a date typed in the panel) lands on that date's row with
  the focus on it, with JavaScript and without, at a phone's width;
- the warnings every separation row gives are said once above the table,
  each row keeping only its own;
- every printout (Chromium's print to PDF) is at most two pages, in type
  no smaller than 9 pt, read from the PDF itself (`pdfinfo` for the pages,
  the content streams for the size of every run of text).
"""

from __future__ import annotations

import re
import subprocess
import warnings
import zlib
from pathlib import Path

import pytest

from diferida.web.guidance import _shared_warnings, _shipped

from .date_boxes import in_boxes
from .test_web_stories import AS_OF, STORIES

TYPED = {name: story for name, story in STORIES.items() if story[4]}
PHONE = {"width": 375, "height": 740}
# someone still in service whose separation rows all say the same two
# warnings of Act 3-2013 (each with its own date): said once, above the table
WORKING = STORIES["working"]
# a police officer still in service: leaving after 58 is a row's own warning
POLICE_WORKING = {**WORKING[3], "group": "police"}


def strict_form(story: tuple, scenario: str | None = None) -> dict[str, str]:
    lang, _, _, strict, typed = story
    return {**strict, "as_of": AS_OF, "lang": lang,
            "scenario_date": typed if scenario is None else scenario}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient
    from diferida.server import create_app
    from diferida.service.settings import Settings

    db = tmp_path_factory.mktemp("scenarios") / "web.db"
    with TestClient(create_app(Settings(database_url=f"sqlite:///{db}"))) as c:
        yield c


def leave_section(html: str) -> str:
    start = html.index('id="scenarios-leave"')
    return html[start:html.index("</table>", start)]


def text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


# ---- warnings shared by every row: said once ---------------------------------------


def test_the_warnings_every_row_gives_are_said_once_above_the_table(client):
    # the attack: each of the five rows repeated two ~45-word warnings
    r = client.post("/calcular/escenarios", data=strict_form(WORKING))
    assert r.status_code == 200
    leave = leave_section(r.text)
    said = text(leave)
    assert said.count("programa híbrido") == 1
    assert said.count("fijó nuevas edades de retiro") == 1
    shared = leave[leave.index('id="scenario-shared-warnings"'):leave.index("<table")]
    assert "Advertencias para todas las fechas de la tabla" in shared
    assert "Todas estas fechas de separación son posteriores al 30 de junio de 2013" in text(shared)
    table = leave[leave.index("<table"):]
    assert 'class="row-warnings"' not in table  # no row has a warning of its own here
    assert table.count("<tr") == 6  # the header and five dates, the typed one among them
    assert table.count('class="typed"') == 1


def test_a_rows_own_warning_stays_in_its_row(client):
    # leaving after 58 (19.4(b)) is a warning of the last row only; the
    # eligibility date that the warning of Act 3-2013's ages names moves in
    # that row, so that warning stays in each row, with each row's date
    r = client.post("/calcular/escenarios",
                    data={**POLICE_WORKING, "as_of": AS_OF, "lang": "es", "scenario_date": ""})
    leave = leave_section(r.text)
    table = leave[leave.index("<table"):]
    rows = [text(row) for row in re.findall(r"<tr.*?</tr>", table, flags=re.S)[1:]]
    assert len(rows) == 4
    assert ["ya habrá cumplido los 58 años" in row for row in rows] == [False] * 3 + [True]
    assert all("fijó nuevas edades de retiro" in row for row in rows)
    assert "La fecha de elegibilidad (29 de noviembre de 2031)" in rows[3]
    assert not any("programa híbrido" in row for row in rows)  # said once, above
    assert text(leave).count("programa híbrido") == 1


def test_shared_warnings_are_taken_out_of_every_row():
    rows = [{"determination": object(), "warning_codes": ["a", "b", "c"],
             "warnings": [f"A {n}", "B", f"C {n}"]} for n in range(3)]
    rows[1]["warning_codes"].append("d")
    rows[1]["warnings"].append("D")
    rows.append({"determination": None, "warning_codes": [], "warnings": []})  # an error row
    shared = _shared_warnings(rows, {"shared": {"a": "A for all"}})
    # "a": its own words in each row, said in the table's words for all;
    # "b": the same words in each row; "c": no words for all, left in the rows
    assert shared == ["A for all", "B"]
    assert [r["warnings"] for r in rows[:3]] == [["C 0"], ["C 1", "D"], ["C 2"]]
    assert _shared_warnings(rows[:1], {"shared": {}}) == []  # one row: nothing to share


# ---- "Ver esa fecha" lands on its row, focus there -------------------------------------


def fill_scenario_date(page, typed: str) -> None:
    """The panel's date, in its one box or its three (day, month, year)."""
    if page.locator("#f-scenario_date").count():
        page.fill("#f-scenario_date", typed)
        return
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", typed)
    day, month, year = (m[3], m[2], m[1]) if m else typed.split("/")
    for part, value in (("day", day), ("month", month), ("year", year)):
        page.fill(f"#f-scenario_date-{part}", value)


@pytest.mark.parametrize("js", [True, False], ids=["js", "nojs"])
@pytest.mark.parametrize("story", list(TYPED))
def test_see_that_date_lands_on_its_row_with_the_focus_there(browser, base_url, story, js):
    # the attack: with JavaScript the page reloaded at the top, focus lost,
    # the typed row some thousands of pixels down at 375 px
    lang, _, _, _, typed = TYPED[story]
    context = browser.new_context(base_url=base_url, viewport=PHONE, java_script_enabled=js)
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        answer = context.request.post("/calcular", form=strict_form(TYPED[story], ""),
                                      max_redirects=0)
        assert answer.status == 303
        page.goto(answer.headers["location"])
        page.wait_for_selector("#escenarios")
        fill_scenario_date(page, typed)
        with page.expect_navigation(url=re.compile(r"/resultado/[^/#]+#fila-escrita$"),
                                    wait_until="load"):
            page.click("form.scenario-date button[type=submit]")
        focused = None
        for _ in range(50):  # the browser focuses the address's target once laid out
            focused = page.evaluate("document.activeElement ? document.activeElement.id : null")
            if focused == "fila-escrita":
                break
            page.wait_for_timeout(100)
        assert focused == "fila-escrita"
        # the address's target is the row itself: landed on without a script
        assert page.evaluate("document.querySelector(':target')?.id") == "fila-escrita"
        row = page.locator("#fila-escrita")
        assert "typed" in row.get_attribute("class")
        box = row.bounding_box()
        # in view (the address's target at the top, to a fraction of a pixel)
        assert box is not None and -1 <= box["y"] < PHONE["height"], box
        assert page.evaluate("window.scrollY") > 0
        # the focused row is the typed date's, marked in words
        said = {_shipped("scenarios", lang)[t]["row_typed"] for t in ("start", "leave")}
        assert any(words in row.inner_text() for words in said)
    finally:
        context.close()
    assert errors == []


def test_the_shared_warnings_keep_the_table_short_at_320_px(browser, base_url):
    context = browser.new_context(base_url=base_url, viewport={"width": 320, "height": 740})
    try:
        page = context.new_page()
        r = context.request.post("/calcular/escenarios", form=strict_form(WORKING),
                                 max_redirects=0)
        page.goto(r.headers["location"])
        page.wait_for_selector("#scenario-leave")
        height = page.evaluate("document.querySelector('#scenario-leave')"
                               ".getBoundingClientRect().height")
        # was 2,937 px with each row's two warnings; five dates, each a block
        assert height < 1300, height
        scroll, client_width = page.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert scroll <= client_width
    finally:
        context.close()


# ---- the printout: at most two pages, no type under 9 pt -------------------------------

_TOKEN = re.compile(rb"<[0-9A-Fa-f\s]*>|\[(?:[^\]\\]|\\.)*\]|\((?:[^)\\]|\\.)*\)"
                    rb"|/[^\s/\[\]()<>]+|[-+]?\d*\.?\d+|[A-Za-z'\"*]+")


def _times(a: list[float], b: list[float]) -> list[float]:
    return [a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
            a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3],
            a[4] * b[0] + a[5] * b[2] + b[4], a[4] * b[1] + a[5] * b[3] + b[5]]


def text_sizes(pdf: bytes) -> list[float]:
    """The size in points of every run of text the PDF shows (Tj, TJ, ', "):
    its font size (Tf) scaled by the text matrix (Tm) and the current
    transformation (cm, saved and restored by q and Q) where it is shown."""
    sizes = []
    for raw in re.findall(rb"stream\r?\n(.*?)\r?\nendstream", pdf, re.S):
        try:
            # a stream whose compressed bytes end in "\r" loses it to the
            # pattern's "\r?\n" (the last byte of its checksum): read it
            # without the checksum rather than skip a whole page's text
            body = zlib.decompressobj().decompress(raw)
        except zlib.error:
            continue  # an image or a font, not a page's content
        if b"BT" not in body:
            continue
        ctm, saved, tm, size, args = [1.0, 0, 0, 1, 0, 0], [], [1.0, 0, 0, 1, 0, 0], 0.0, []
        for tok in _TOKEN.findall(body):
            if not (tok[:1].isalpha() or tok in (b"'", b'"')):
                args.append(tok)
                continue
            if tok == b"q":
                saved.append(ctm)
            elif tok == b"Q" and saved:
                ctm = saved.pop()
            elif tok == b"cm" and len(args) >= 6:
                ctm = _times([float(x) for x in args[-6:]], ctm)
            elif tok == b"BT":
                tm = [1.0, 0, 0, 1, 0, 0]
            elif tok == b"Tf" and args:
                size = float(args[-1])
            elif tok == b"Tm" and len(args) >= 6:
                tm = [float(x) for x in args[-6:]]
            elif tok in (b"Tj", b"TJ", b"'", b'"'):
                m = _times(tm, ctm)
                sizes.append(abs(size) * (m[2] ** 2 + m[3] ** 2) ** 0.5)
            args = []
    return sizes


def pdf_pages(path: Path) -> int:
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True,
                          timeout=60).stdout
    return int(re.search(r"^Pages:\s+(\d+)$", info, flags=re.M)[1])


def test_the_size_reader_reads_a_known_pdf(tmp_path):
    # a page of two lines, 7.5 pt and 12 pt, the second under a 0.75 scale
    from weasyprint import HTML

    pdf = HTML(string="<p style='font-size:7.5pt'>small</p>"
                      "<div style='transform:scale(.75);font-size:16pt'>scaled</div>").write_pdf()
    sizes = sorted({round(s, 2) for s in text_sizes(pdf)})
    assert sizes == [7.5, 12.0]


PRINTOUTS = [(name, typed, where) for name, story in STORIES.items()
             for typed in ([True, False] if story[4] else [False])
             for where in ("printout", "answer")]


@pytest.mark.parametrize("story, typed, where", PRINTOUTS, ids=[
    f"{n}-{'typed' if t else 'plain'}-{w}" for n, t, w in PRINTOUTS])
def test_every_printout_is_at_most_two_pages_in_nine_point_type(browser, base_url, tmp_path,
                                                                story, typed, where):
    # the attack: a printout with a typed date was 3 pages, most of page 2 in
    # 7.5 pt; the printable page ("Imprimir") and the answer's own page
    # printed from the browser alike, with what the person typed
    lang, as_typed, _, _, scenario = STORIES[story]
    context = browser.new_context(base_url=base_url, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        r = context.request.post(
            "/calcular/escenarios", max_redirects=0,
            form={**in_boxes({**as_typed, "as_of": AS_OF}), "lang": lang,
                  "scenario_date": scenario if typed else ""})
        assert r.status == 303
        answer = r.headers["location"].split("#")[0]
        page.goto(answer + "/imprimir" if where == "printout" else answer)
        page.wait_for_selector("#result")
        if typed:
            assert page.locator("tr.typed").count() >= 1  # the typed row is printed
        page.emulate_media(media="print")
        pdf = page.pdf(prefer_css_page_size=True)
    finally:
        context.close()
    path = tmp_path / "printout.pdf"
    path.write_bytes(pdf)
    assert 1 <= pdf_pages(path) <= 2
    sizes = text_sizes(pdf)
    assert len(sizes) > 200  # the whole determination was read
    assert min(sizes) >= 9 - 0.01, sorted(set(round(s, 2) for s in sizes))[:5]


@pytest.mark.parametrize("lang", ["es", "en"])
@pytest.mark.parametrize("person", ["police", "police-past-start", "general", "firefighter"])
def test_a_printout_with_another_reading_compared_is_at_most_two_pages_in_nine_point_type(
        browser, base_url, tmp_path, person, lang):
    # the analyst's "Comparar con": the comparison's section on paper was 8.5 pt,
    # then 9 pt but the police officer of rules §8 example 4 (19.4(a) as
    # written, 19.2 under the strict reading) printed on 3 pages; a scenario
    # row's note was 8.55 pt; with a start asked for before the calculation's
    # date (premature under the strict reading) it was 3 pages again
    from .test_web_compare import FIREFIGHTER, GENERAL, POLICE, posted

    values = {"police": POLICE, "general": GENERAL, "firefighter": FIREFIGHTER,
              "police-past-start": {**POLICE, "requested_start_date": "2026-01-01"}}[person]
    context = browser.new_context(base_url=base_url, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        r = context.request.post("/calcular/escenarios", max_redirects=0,
                                 form={**posted(values, lang=lang),
                                       "scenario_date": "30/06/2031"})
        page.goto(r.headers["location"].split("#")[0] + "/imprimir")
        page.wait_for_selector("#comparison")
        differs = page.locator("#comparison-table").count() == 1
        assert differs == (person != "general")
        page.emulate_media(media="print")
        pdf = page.pdf(prefer_css_page_size=True)
    finally:
        context.close()
    path = tmp_path / "printout.pdf"
    path.write_bytes(pdf)
    assert 1 <= pdf_pages(path) <= 2
    assert min(text_sizes(pdf)) >= 9 - 0.01
    # nothing the person needs is left off the paper: the rows that differ,
    # the finding under the reading compared with and its rules version
    printed = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True,
                             text=True, check=True, timeout=60).stdout
    printed = re.sub(r"\s+", " ", printed)
    assert ("article19-strict-19_4@" in printed) and ("article19@" in printed)
    if differs:
        assert ("20 de junio de 2040" if lang == "es" else "June 20, 2040") in printed \
            or not person.startswith("police")
        assert "3 L.P.R.A. § 766), " in printed  # the finding under the strict reading
    if person == "police-past-start":  # the start's row, premature under the strict reading
        assert ("la solicitud es prematura" if lang == "es" else "premature") in printed
