"""The workbench's import of applications (`workflow.import_applications`,
POST /api/v1/workbench/imports, POST /analista/importar), attacked:

* a small .xlsx that holds a huge table (a cell of whitespace that unzips
  to tens of megabytes; a sheet declaring a million-row area) and a CSV
  over the row limit are refused with 413 as an upload to /api/v1/batches
  is, from what the file declares, before the spreadsheet reader sees it;
* a file of a few hundred rows mixing good rows, bad rules §1 fields, bad
  application fields, ids given twice and ids that already have a case is
  decided column-wise by the population pass exactly as one application is
  decided alone (the drafts, every rejection with its message), stored in
  batches with one audit event per batch and ONE for all the refusals of a
  participant that has a case, and `audit verify` stays intact; on SQLite
  and PostgreSQL."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from datetime import date, datetime

import pytest
from fastapi.testclient import TestClient

from diferida.server import create_app
from diferida.service import workflow as wf
from diferida.service.settings import Settings, upload_limits
from diferida.service.store import AuditQuery, Store
from diferida.service.testing import database_for_tests

from .workbench_helpers import add_users, csrf_of, sign_in

AS_OF = date(2026, 11, 29)
W = "/api/v1/workbench"
SPEC = ("participant_id", "birth_date", "entry_date", "separation_date",
        "creditable_service_years", "average_compensation", "group", "refund_requested")
COLUMNS = (*SPEC, "name", "address", "application_date", "note")
GOOD = {"birth_date": "1970-05-10", "entry_date": "1988-07-01", "separation_date": "2010-06-30",
        "creditable_service_years": "22", "average_compensation": "30000.00",
        "group": "general", "refund_requested": "false", "name": "Ana Uno",
        "address": "Calle 1\nPonce, PR 00716", "application_date": "2026-10-01",
        "note": "entregó certificado"}


# --- the files ----------------------------------------------------------------------


def _csv(rows: list[dict[str, str]]) -> bytes:
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return out.getvalue().encode("utf-8")


def _xlsx(sheet_rows: list[str], *, dimension: str | None = None,
          filler: tuple[str, int] | None = None) -> bytes:
    """An .xlsx written as XML: a header row of COLUMNS, `sheet_rows` (the
    XML of each further row), the sheet's declared area `dimension`, and
    `filler` = (cell reference, n): an inline string of n spaces streamed
    into the zip (a few hundred kilobytes on disk for tens of megabytes)."""
    def cell(ref: str, text: str) -> str:
        return f'<c r="{ref}" t="inlineStr"><is><t>{text}</t></is></c>'

    letters = [chr(65 + i) for i in range(len(COLUMNS))]
    head = "".join(cell(f"{c}1", n) for c, n in zip(letters, COLUMNS, strict=True))
    ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    rel = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
    top = (f'<?xml version="1.0" encoding="UTF-8"?><worksheet {ns} {rel}>'
           + (f'<dimension ref="{dimension}"/>' if dimension else "")
           + f'<sheetData><row r="1">{head}</row>' + "".join(sheet_rows))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr("[Content_Types].xml", (
            '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats'
            '.org/package/2006/content-types"><Default Extension="rels" ContentType="application'
            '/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" '
            'ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType='
            '"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
            '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.'
            'openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>'))
        z.writestr("_rels/.rels", (
            '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.'
            'openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http:'
            '//schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
            'Target="xl/workbook.xml"/></Relationships>'))
        z.writestr("xl/workbook.xml", (
            f'<?xml version="1.0" encoding="UTF-8"?><workbook {ns} {rel}><sheets><sheet '
            'name="Hoja1" sheetId="1" r:id="rId1"/></sheets></workbook>'))
        z.writestr("xl/_rels/workbook.xml.rels", (
            '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.'
            'openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http:'
            '//schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" '
            'Target="worksheets/sheet1.xml"/></Relationships>'))
        with z.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as sheet:
            sheet.write(top.encode())
            if filler is not None:
                ref, n = filler
                sheet.write(f'<row r="{ref[1:]}"><c r="{ref}" t="inlineStr"><is>'
                            f'<t xml:space="preserve">'.encode())
                block = b" " * (1 << 20)
                for _ in range(n >> 20):
                    sheet.write(block)
                sheet.write(b" " * (n & ((1 << 20) - 1)) + b"</t></is></c></row>")
            sheet.write(b"</sheetData></worksheet>")
    return buf.getvalue()


def _row_xml(number: int, values: dict[str, str]) -> str:
    cells = "".join(
        f'<c r="{chr(65 + i)}{number}" t="inlineStr"><is><t>{values[name]}</t></is></c>'
        for i, name in enumerate(COLUMNS) if values.get(name))
    return f'<row r="{number}">{cells}</row>'


# --- the service, over HTTP ---------------------------------------------------------


@pytest.fixture
def site(tmp_path, monkeypatch):
    """The whole site on SQLite, and a flag raised if the spreadsheet reader
    is ever reached (a file refused for what it declares never gets there)."""
    import fastexcel

    reached = []
    real = fastexcel.read_excel

    def watched(*args, **kwargs):
        reached.append(True)
        return real(*args, **kwargs)

    monkeypatch.setattr(fastexcel, "read_excel", watched)

    def make(**settings):
        app = create_app(Settings(database_url=f"sqlite:///{tmp_path / 'cases.db'}",
                                  rate_limit_public="off", **settings))
        client = TestClient(app)
        client.__enter__()
        add_users(app.state.store)
        made.append(client)
        return app, client

    made: list[TestClient] = []
    yield make, reached
    for c in made:
        c.__exit__(None, None, None)


def _api_token(app) -> dict[str, str]:
    _user, token = app.state.store.add_user("importer", "analyst")
    return {"Authorization": f"Bearer {token}"}


def test_a_whitespace_bomb_xlsx_is_refused_413_before_the_reader(site):
    make, reached = site
    app, client = make()
    limits = upload_limits()
    # one cell of 80 MB of spaces: past the text and the unzipped size of an
    # upload (10 MB of text; its XML at most 60 MB), a few dozen kB on disk
    bomb = _xlsx([_row_xml(2, {**GOOD, "participant_id": "B-1"})],
                 filler=("I3", 80 << 20))
    assert len(bomb) < 200_000 and 80 << 20 > limits.unzipped_bytes
    h = _api_token(app)
    for lang, words in (("es", "máximo"), ("en", "limit")):
        r = client.post(f"{W}/imports?lang={lang}", headers=h,
                        files={"file": ("solicitudes.xlsx", bomb)})
        assert r.status_code == 413, r.text[:300]
        error = r.json()["errors"][0]
        assert (error["field"], error["code"]) == ("file", "too_unzipped")
        assert "solicitudes.xlsx" in error["message"] and words in error["message"]
    assert reached == []
    assert app.state.store.count_cases() == 0
    # the page shows the form again, with the refusal in words
    page = TestClient(app)
    sign_in(page, "ana")
    token = csrf_of(page.get("/analista/nuevo").text)
    r = page.post("/analista/importar", data={"csrf_token": token},
                  files={"archivo": ("solicitudes.xlsx", bomb)})
    assert r.status_code == 413
    assert 'id="import-error"' in r.text and "divídalo" in r.text
    assert "descomprimido ocupa" in r.text and 'name="archivo"' in r.text
    assert reached == []


def test_an_xlsx_declaring_a_million_row_area_is_refused_413_before_the_reader(site):
    make, reached = site
    app, client = make()
    tiny = _xlsx([_row_xml(2, {**GOOD, "participant_id": "D-1"})],
                 dimension=f"A1:{chr(64 + len(COLUMNS))}1000000")
    assert len(tiny) < 3_000
    h = _api_token(app)
    r = client.post(f"{W}/imports?lang=en", headers=h,
                    files={"file": ("area.xlsx", tiny)})
    assert r.status_code == 413, r.text[:300]
    error = r.json()["errors"][0]
    assert error["code"] == "too_many_rows"
    assert error["message"] == "area.xlsx: has 999,999 rows; the limit here is 20,000"
    assert reached == []
    # the same sheet without the declared area is an ordinary file
    r = client.post(f"{W}/imports?lang=en", headers=h,
                    files={"file": ("area.xlsx", _xlsx([_row_xml(
                        2, {**GOOD, "participant_id": "D-1"})]))})
    assert r.status_code == 200 and r.json()["rows_created"] == 1


def test_a_csv_over_the_row_limit_is_refused_413_on_the_api_and_the_page(site):
    make, _ = site
    app, client = make(batch_max_rows=100)
    rows = [{**GOOD, "participant_id": f"R-{i}"} for i in range(101)]
    h = _api_token(app)
    r = client.post(f"{W}/imports", headers=h,
                    files={"file": ("muchas.csv", _csv(rows))})
    assert r.status_code == 413
    assert r.json()["errors"][0]["message"] == (
        "muchas.csv: tiene 101 filas; el máximo aquí es 100")
    assert app.state.store.count_cases() == 0
    page = TestClient(app)
    sign_in(page, "ana", lang="en")
    token = csrf_of(page.get("/analista/nuevo?lang=en").text)
    r = page.post("/analista/importar", data={"csrf_token": token, "lang": "en"},
                  files={"archivo": ("muchas.csv", _csv(rows))})
    assert r.status_code == 413
    assert "split it into smaller files" in r.text and "the limit here is 100" in r.text
    # at the limit, the file is imported
    r = client.post(f"{W}/imports", headers=h,
                    files={"file": ("justas.csv", _csv(rows[:100]))})
    assert r.status_code == 200 and r.json()["rows_created"] == 100


def test_a_file_over_the_upload_bytes_is_refused_413_on_the_page(site):
    make, _ = site
    app, _client = make(max_upload_bytes=10_000)
    rows = [{**GOOD, "participant_id": f"R-{i}"} for i in range(100)]
    data = _csv(rows)
    assert 10_000 < len(data) < 10_000 + 60_000  # past the limit, within the envelope
    page = TestClient(app)
    sign_in(page, "ana")
    token = csrf_of(page.get("/analista/nuevo").text)
    r = page.post("/analista/importar", data={"csrf_token": token},
                  files={"archivo": ("grande.csv", data)})
    assert r.status_code == 413
    assert "supera los 10,000 bytes" in r.text and 'name="archivo"' in r.text
    assert app.state.store.count_cases() == 0


def test_an_xlsx_date_cell_is_an_application_date(site):
    import xlsxwriter

    make, _ = site
    app, client = make()
    buf = io.BytesIO()
    book = xlsxwriter.Workbook(buf)
    sheet = book.add_worksheet()
    sheet.write_row(0, 0, COLUMNS)
    row = {**GOOD, "participant_id": "X-1"}
    sheet.write_row(1, 0, [row[c] for c in COLUMNS])
    sheet.write_datetime(1, COLUMNS.index("application_date"), datetime(2026, 10, 1),
                         book.add_format({"num_format": "dd/mm/yyyy"}))
    book.close()
    r = client.post(f"{W}/imports", headers=_api_token(app),
                    files={"file": ("fechas.xlsx", buf.getvalue())})
    assert r.status_code == 200 and r.json()["rows_created"] == 1, r.text
    store = app.state.store
    ana = next(u for u in store.users() if u.name == "ana")
    case = r.json()["created"][0]["case_id"]
    assert wf.view(store, ana, case).application_date == date(2026, 10, 1)


# --- the decision, on SQLite and PostgreSQL -----------------------------------------


class Office:
    def __init__(self, store: Store):
        self.store = store
        self.ana = store.add_user("ana", "analyst")[0]
        self.sofia = store.add_user("sofia", "supervisor")[0]


@pytest.fixture(params=["sqlite", "postgresql"])
def office(request, tmp_path):
    with database_for_tests(request.param, tmp_path) as url:
        store = Store(url)
        store.upgrade()
        yield Office(store)
        store.dispose()


def _mixed() -> list[dict[str, str]]:
    """300 rows: good ones, and every kind of problem, some several in a row."""
    rows = []
    for i in range(280):
        row = {**GOOD, "participant_id": f"M-{i:04}", "name": f"Persona {i}"}
        kind = i % 20
        if kind == 1:
            row["birth_date"] = "1970-02-30"
        elif kind == 2:
            row["name"] = "N" * 201
        elif kind == 3:
            row["address"] = "Calle \x07 1"
        elif kind == 4:
            row["application_date"] = "2026-13-01"
        elif kind == 5:
            row["application_date"] = "2999-01-01"
        elif kind == 6:
            row.update(group="nadie", note="x" * 2001, average_compensation="0")
        elif kind == 7:
            row.update(name="\x1c Ana Trim \u3000", address="Calle 2\r\nPonce\rPR",
                       note="  ", application_date=" 2026-W40-4 ")
        elif kind == 8:
            row["participant_id"] = f"  M-{i:04}  "
        elif kind == 9:
            row.update(participant_id=f"M\x07{i}", birth_date="nunca")
        elif kind == 10:
            row["name"] = "Ana\x00Nul"
        elif kind == 11:
            row["participant_id"] = ""
        elif kind == 12:
            row["participant_id"] = "L" * 201
        elif kind == 13:
            row.update(application_date="", name="", address="", note="")
        rows.append(row)
    # ids given again later in the file: the first of each good, bad or with a case
    rows += [{**GOOD, "participant_id": f"M-{i:04}"} for i in range(0, 40, 2)]
    return rows


def _expected(rows: list[dict[str, str]], existing: dict[str, int],
              lang: str) -> tuple[list[str], list[tuple]]:
    """The drafts and rejections of the path of one application (`preview`,
    whose checks and messages the import must give), with the file's rules
    on top: an id given again is rejected, an id with a case is."""
    created, rejected, seen = [], [], set()
    # each row numbered by the line it starts on (a line ends with LF)
    starts, line = [], 2
    for row in rows:
        starts.append(line)
        line += _csv([row]).count(b"\n") - 1  # less the header's
    for number, row in zip(starts, rows, strict=True):
        given = {k: (v if v != "" else None) for k, v in row.items()}
        answer = wf.preview(given, lang=lang, as_of=AS_OF)
        pid = (row["participant_id"] or "").strip() or None
        problems = [] if not isinstance(answer, wf.Refused) else [
            (number, pid, p["field"], p["code"], p["message"]) for p in answer.problems]
        # an id refused for itself is not counted as given again
        own_id = any(p[2] == "participant_id" for p in problems)
        if pid is not None and pid in seen and not own_id:
            problems.insert(0, (number, pid, "participant_id", "duplicate_in_file",
                                wf._text(lang, "duplicate_in_file", value=pid)))
        if pid is not None:
            seen.add(pid)
        if problems:
            rejected += problems
        elif pid in existing:
            rejected.append((number, pid, None, "exists",
                             wf.Refused("exists", current_number=existing[pid]).message(lang)))
        else:
            created.append(pid)
    return created, rejected


@pytest.mark.slow  # a file of many applications, each through the store
def test_a_mixed_file_gives_the_drafts_and_rejections_of_one_application_at_a_time(
        office, monkeypatch):
    s, o = office.store, office
    # small chunks and batches: ids given again across chunks, several transactions
    monkeypatch.setattr(wf.imports, "IMPORT_CHUNK_ROWS", 64)
    monkeypatch.setattr(wf.imports, "IMPORT_BATCH", 50)
    rows = _mixed()
    existing = {}
    for i in (100, 140, 160, 200, 220, 4, 2):  # good rows, and two the file gets wrong
        v = wf.open_draft(s, o.sofia, {**GOOD, "participant_id": f"M-{i:04}"}, lang="es",
                          as_of=AS_OF)
        existing[v.participant_id] = v.number
    before = s.audit_events(AuditQuery(limit=10_000))
    result = wf.import_applications(s, o.ana, _csv(rows), "mezcla.csv", lang="es",
                                    as_of=AS_OF)
    events = [e for e in s.audit_events(AuditQuery(limit=10_000))
              if e.id > max(b.id for b in before)]
    created, rejected = _expected(rows, existing, "es")
    assert result.rows_in == len(rows) == len(result.created) + result.rows_rejected
    assert [c.participant_id for c in result.created] == created
    assert [(r.row, r.participant_id, r.field, r.code, r.message)
            for r in result.rejected] == rejected
    # every kind is there
    codes = {(r.field, r.code) for r in result.rejected}
    assert {("birth_date", "not_a_date"), ("name", "too_long"),
            ("address", "control_character"), ("application_date", "not_a_date"),
            ("application_date", "in_future"), ("group", "unknown_group"),
            ("note", "too_long"), ("average_compensation", "not_positive"),
            ("participant_id", "control_character"), ("name", "nul_character"),
            ("participant_id", "missing"), ("participant_id", "too_long"),
            ("participant_id", "duplicate_in_file"), (None, "exists")} <= codes
    assert len(created) > 120
    # each draft is what opening that application alone stores
    by_pid: dict[str, dict[str, str]] = {}
    for row in rows:  # the first row of each id is the one decided
        by_pid.setdefault((row["participant_id"] or "").strip(), row)
    for summary in result.created:
        v = wf.view(s, o.ana, summary.case_id)
        given = {k: (x if x != "" else None) for k, x in by_pid[v.participant_id].items()}
        alone = wf._parse_application(given, "es")
        assert v.result == wf.preview(given, lang="es", as_of=AS_OF).to_dict()
        assert v.inputs == {**{k: given[k] for k in SPEC}, "participant_id": v.participant_id}
        assert (v.name, v.address, v.application_date, v.note) == (
            alone.application.name, alone.application.address,
            alone.application.application_date, alone.application.note)
        assert (v.state, v.version, v.number, v.prepared_by) == ("draft", 1, v.case_id, "ana")
        assert (summary.number, summary.state, summary.name, summary.changed_by) == (
            v.number, "draft", v.name, "ana")
    trimmed = next(c for c in result.created if c.participant_id == "M-0007")
    v = wf.view(s, o.ana, trimmed.case_id)
    assert (v.name, v.address, v.note, v.application_date) == (
        "Ana Trim", "Calle 2\nPonce\nPR", None, date(2026, 10, 1))
    # the audit trail: one event per stored batch, ONE for the refusals of
    # ids with a case (with their count), one for the import
    assert all(e.action == "workflow.import" for e in events)
    batches = [e for e in events if e.status_code == 201]
    refusals = [e for e in events if e.status_code == 409]
    stored = sum(int(e.detail.split(" ")[0]) for e in batches)
    assert stored == len(created) and len(batches) >= 3
    exists = sum(1 for r in rejected if r[3] == "exists")
    assert exists == 5
    assert [e.detail for e in refusals] == [
        f"refused: exists, {exists} rows (participants with a case)"]
    assert [e.detail for e in events if e.status_code == 200] == [
        f"{len(rows)} rows: {len(created)} drafts, {result.rows_rejected} rejected"]
    assert len(events) == len(batches) + 2
    # the chains are as record_case makes them
    report = s.verify()
    assert report.intact, report.lines()
    # imported again: every id now has a case, refused in one event
    again = wf.import_applications(s, o.ana, _csv(rows[:30]), "otra.csv", lang="en",
                                   as_of=AS_OF)
    assert again.created == []
    assert {r.code for r in again.rejected if r.field is None} == {"exists"}
    assert s.verify().intact


def test_ids_with_cases_make_one_refusal_event_not_one_per_row(office, monkeypatch):
    s, o = office.store, office
    monkeypatch.setattr(wf.imports, "IMPORT_BATCH", 100)
    rows = [{**GOOD, "participant_id": f"E-{i:05}"} for i in range(300)]
    first = wf.import_applications(s, o.ana, _csv(rows), "a.csv", lang="es", as_of=AS_OF)
    assert len(first.created) == 300
    mark = max(e.id for e in s.audit_events(AuditQuery(limit=10_000)))
    again = wf.import_applications(s, o.ana, _csv(rows), "a.csv", lang="es", as_of=AS_OF)
    assert (again.created, again.rows_rejected) == ([], 300)
    assert [r.message for r in again.rejected[:1]] == [
        f"El participante ya tiene el caso {first.created[0].number}; corrija ese caso en "
        f"lugar de abrir otro."]
    events = [e for e in s.audit_events(AuditQuery(limit=10_000)) if e.id > mark]
    assert [(e.status_code, e.detail) for e in events] == [
        (409, "refused: exists, 300 rows (participants with a case)"),
        (200, "300 rows: 0 drafts, 300 rejected")]
    assert s.verify().intact


def test_the_bulk_store_keeps_the_chains_of_record_case(office):
    """Drafts stored together, then one alone, then together again: one
    chain, each row's hash what record_case gives, verify intact."""
    from diferida.service.store import Application, NewEvent
    from diferida.service.store.repository import NewDraft

    s, o = office.store, office
    import diferida

    rules = diferida.load_rules()
    result = diferida.evaluate({**{k: GOOD[k] for k in SPEC[1:]}, "participant_id": "K"},
                               as_of=AS_OF).to_dict()

    def drafts(*pids):
        return [NewDraft(p, {"participant_id": p}, {**result, "participant_id": p}, AS_OF,
                         Application(name=f"N {p}")) for p in pids]

    def store(*pids):
        return s.record_drafts(drafts(*pids), rules_version=rules.version,
                               rules_name=rules.name, rules_content=rules.resolved, lang="es",
                               author=o.ana, event=lambda cases: NewEvent(
                                   "workflow.import", "WORKFLOW", "workflow.import", 201,
                                   user=o.ana, detail=f"{len(cases)} drafts"))

    cases, existing = store("K-1", "K-2")
    assert [c.version for c in cases] == [1, 1] and existing == {}
    wf.open_draft(s, o.ana, {**GOOD, "participant_id": "K-3"}, lang="es", as_of=AS_OF)
    cases, existing = store("K-3", "K-4", "K-1")
    assert [c.participant_id for c in cases] == ["K-4"]
    assert set(existing) == {"K-3", "K-1"}
    assert store("K-3") == ([], {"K-3": existing["K-3"]})
    with pytest.raises(ValueError):
        store("K-9", "K-9")
    assert s.verify().intact
    assert [c.participant_id for c in wf.queue(s, o.ana, "drafts", per_page=10).items] == [
        "K-4", "K-3", "K-2", "K-1"]
    stored = json.loads(s.cases("K-4")[0].result)
    assert stored["participant_id"] == "K-4"


def test_python_whitespace_is_what_str_strip_removes():
    assert set(wf.PY_WHITESPACE) == {chr(c) for c in range(0x110000) if chr(c).isspace()}
