"""Odd and hostile population files through `diferida batch` and
POST /api/v1/batches: every one gets an answer (results, or a refusal naming
the file and what is wrong), never a traceback, a 5xx or a dead process;
rows in = rows determined + rows rejected; memory stays bounded. And the
outputs are safe to open: no formula in a CSV cell, no value cut in an .xlsx.

The corpus is generated: each entry is a file name (its suffix gives the
format), its bytes, and the number of data rows it holds when it is usable
(None when it must be refused).
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from functools import cached_property
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diferida.batch import FileProblem
from diferida.cli import main

from .conftest import cli_command, examples
from .worked_examples import ONE

HEADER = ["participant_id", "birth_date", "entry_date", "separation_date",
          "creditable_service_years", "average_compensation", "group", "refund_requested"]
GOOD = ["p1", "1970-05-10", "1988-07-01", "2010-06-30", "22", "30000.00", "general", "false"]


@dataclass(frozen=True)
class Case:
    name: str
    # the file's bytes, or what makes them: the workbooks and Parquet files are
    # made when a test first reads them, not as the tests are collected
    source: bytes | Callable[[], bytes]
    rows: int | None  # data rows when usable; None: the file must be refused
    api_rows: int | None | str = "same"  # the same under the service's tighter limits?

    @cached_property
    def data(self) -> bytes:
        return self.source if isinstance(self.source, bytes) else self.source()

    @property
    def rows_by_api(self) -> int | None:
        return self.rows if self.api_rows == "same" else self.api_rows  # type: ignore[return-value]


def row(i: int, **changes: str) -> list[str]:
    values = dict(zip(HEADER, GOOD, strict=True), participant_id=f"p{i}")
    values.update(changes)
    return [values[h] for h in HEADER]


def csv(rows: list[list[str]], *, header: list[str] = HEADER, sep: str = ",",
        nl: str = "\n") -> bytes:
    return (nl.join([sep.join(header)] + [sep.join(r) for r in rows]) + nl).encode()


def xlsx(build) -> bytes:
    import xlsxwriter

    buf = io.BytesIO()
    wb = xlsxwriter.Workbook(buf, {"in_memory": True})
    build(wb.add_worksheet())
    wb.close()
    return buf.getvalue()


def parquet(frame: pl.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.write_parquet(buf)
    return buf.getvalue()


def frame(n: int = 1, **columns) -> pl.DataFrame:
    base = {h: [v] * n for h, v in zip(HEADER, GOOD, strict=True)}
    base["participant_id"] = [f"p{i}" for i in range(n)]
    return pl.DataFrame({**base, **columns})


def raw_xlsx(sheet_xml: bytes, *, shared: bytes | None = None,
             declared: dict[str, int] | None = None) -> bytes:
    """A minimal workbook around one sheet's XML, written by hand (what no
    well-behaved writer would produce)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", (
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
            'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlforma'
            'ts-package.relationships+xml"/><Default Extension="xml" ContentType="application/'
            'xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlf'
            'ormats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/work'
            'sheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spr'
            'eadsheetml.worksheet+xml"/></Types>'))
        z.writestr("_rels/.rels", (
            '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/packa'
            'ge/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformat'
            's.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>'
            '</Relationships>'))
        z.writestr("xl/workbook.xml", (
            '<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheet'
            'ml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relat'
            'ionships"><sheets><sheet name="s" sheetId="1" r:id="rId1"/></sheets></workbook>'))
        rels = ('<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument'
                '/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>')
        if shared is not None:
            rels += ('<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDoc'
                     'ument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/>')
            z.writestr("xl/sharedStrings.xml", shared)
        z.writestr("xl/_rels/workbook.xml.rels", (
            '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/packa'
            f'ge/2006/relationships">{rels}</Relationships>'))
        z.writestr("xl/worksheets/sheet1.xml", sheet_xml)
    data = buf.getvalue()
    for name, size in (declared or {}).items():
        data = _declare(data, name, size)
    return data


def _declare(data: bytes, name: str, size: int) -> bytes:
    """The zip with the uncompressed size of `name` rewritten (a lying header)."""
    import struct

    out = bytearray(data)
    encoded = name.encode()
    for sig, size_at, name_at in ((b"PK\x03\x04", 22, 30), (b"PK\x01\x02", 24, 46)):
        i = 0
        while (i := out.find(sig, i)) >= 0:
            if out[i + name_at:i + name_at + len(encoded)] == encoded:
                out[i + size_at:i + size_at + 4] = struct.pack("<I", size)
            i += 4
    return bytes(out)


def _sheet(rows_xml: str) -> bytes:
    return ('<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadshe'
            f'etml/2006/main"><sheetData>{rows_xml}</sheetData></worksheet>').encode()


def _inline_row(r: int, values: list[str], refs: bool = True) -> str:
    cells = "".join(
        (f'<c r="{chr(65 + i)}{r}" t="inlineStr">' if refs else '<c t="inlineStr">')
        + f"<is><t>{v}</t></is></c>" for i, v in enumerate(values))
    return f'<row r="{r}">{cells}</row>' if refs else f"<row>{cells}</row>"


def build() -> list[Case]:
    rnd = random.Random(9)
    ok3 = [row(i) for i in range(1, 4)]
    cases = [
        # ---------------------------------------------------------------- CSV
        Case("good.csv", csv(ok3), 3),
        Case("crlf.csv", csv(ok3, nl="\r\n"), 3),
        Case("semicolon.csv", csv(ok3, sep=";"), 3),
        Case("bare_cr.csv", csv(ok3, nl="\r"), None),
        Case("cr_in_header.csv", (",".join(HEADER[:3]) + "\r" + ",".join(HEADER[3:]) + "\n"
                                  + ",".join(GOOD) + "\n").encode(), None),
        Case("cr_in_data_lines.csv", (",".join(HEADER) + "\n" + "\r".join(
            ",".join(r) for r in ok3) + "\n").encode(), None),
        Case("ragged_7_then_9.csv", csv([row(1)[:7], row(2) + ["x"]]), None),
        Case("ragged_9_then_7.csv", csv([row(1) + ["x"], row(2)[:7]]), None),
        Case("ragged_short_last.csv", csv([row(1), row(2)[:3]]), None),
        Case("empty.csv", b"", None),
        Case("only_bom.csv", b"\xef\xbb\xbf", None),
        Case("only_newlines.csv", b"\n\n\n", None),
        Case("header_only.csv", csv([]), None),
        Case("blank_lines.csv", csv([row(1), [""] * 0, row(2)]).replace(b"\n\n", b"\n\n\n"), 2),
        Case("binary_garbage.csv", bytes(rnd.randrange(256) for _ in range(4000)), None),
        Case("nul_bytes.csv", csv([row(1, participant_id="a\x00b")]), 1),
        Case("latin1.csv", csv([row(1, participant_id="Peña")]).replace(
            "ñ".encode(), b"\xf1"), None),
        Case("utf16.csv", "\ufeff".encode("utf-16-le") + csv(ok3).decode().encode("utf-16-le"),
             None),
        Case("unclosed_quote.csv", csv([row(1), ['"p2'] + GOOD[1:]]), None),
        Case("stray_quotes.csv", csv([row(1, participant_id='a"b"c')]), 1),
        Case("quoted_newline.csv", csv([row(1, participant_id='"a\nb"'), row(2)]), 2),
        Case("duplicate_column.csv", csv([row(1) + ["x"]], header=HEADER + ["group"]), None),
        Case("unnamed_column.csv", csv([row(1) + ["x"]], header=HEADER + [""]), None),
        Case("missing_column.csv", csv([row(1)[:-1]], header=HEADER[:-1]), None),
        Case("clashing_column.csv", csv([row(1) + ["x"]], header=HEADER + ["status"]), None),
        Case("many_columns.csv", csv([row(1) + ["x"] * 20_000],
                                     header=HEADER + [f"c{i}" for i in range(20_000)]), None),
        Case("xlsx_bytes.csv", b"PK\x03\x04" + bytes(200), None),
        Case("parquet_bytes.csv", b"PAR1" + bytes(200), None),
        Case("wrong_types.csv", csv([row(1, birth_date="yesterday"),
                                     row(2, creditable_service_years="twenty"),
                                     row(3, average_compensation="1e999999"),
                                     row(4, group="admiral"),
                                     row(5, refund_requested="maybe"),
                                     row(6, birth_date="0000-01-01"),
                                     row(7, average_compensation="9" * 5000),
                                     row(8, separation_date="9999-12-31")]), 8),
        Case("huge_cell.csv", csv([row(1, participant_id="x" * 1_000_000), row(2)]), 2),
        Case("huge_carried_cell.csv", csv([row(1) + ["y" * 2_000_000]],
                                          header=HEADER + ["note"]), 1),
        Case("formulas.csv", csv([row(1, participant_id="=cmd|' /C calc'!A0"),
                                  row(2, participant_id="+1+1"),
                                  row(3, participant_id="-2+3"),
                                  row(4, participant_id="@SUM(A1:A9)"),
                                  row(5, participant_id='"=HYPERLINK(""http://x"",""y"")"')]),
             5),
        Case("duplicate_ids.csv", csv([row(1), row(1), row(2, participant_id=" p1 ")]), 3),
        Case("blank_ids.csv", csv([row(1, participant_id=""), row(2, participant_id="  ")]), 2),
        Case("one_long_line.csv", b"x" * 300_000, None),
        Case("tabs.csv", csv(ok3, sep="\t"), 3),
        # --------------------------------------------------------------- .xlsx
        Case("good.xlsx", lambda: xlsx(lambda ws: [ws.write_row(i, 0, r) for i, r in
                                           enumerate([HEADER, *ok3])]), 3),
        Case("xfd1048576.xlsx", lambda: xlsx(lambda ws: (ws.write_row(0, 0, HEADER),
                                                 ws.write("XFD1048576", "x"))), None),
        Case("far_row.xlsx", lambda: xlsx(lambda ws: (ws.write_row(0, 0, HEADER),
                                              ws.write_row(1, 0, GOOD),
                                              ws.write("A1048576", "x"))), 2, None),
        Case("far_column.xlsx", lambda: xlsx(lambda ws: (ws.write_row(0, 0, HEADER),
                                                 ws.write("XFD1", "x"))), None),
        Case("lying_dimension.xlsx", lambda: raw_xlsx(_sheet(
            _inline_row(1, HEADER) + _inline_row(2, GOOD)).replace(
            b"<sheetData>", b'<dimension ref="A1:XFD1048576"/><sheetData>')), None),
        Case("cells_without_refs.xlsx", lambda: raw_xlsx(_sheet(
            _inline_row(1, HEADER, refs=False) + _inline_row(2, GOOD, refs=False))), 1),
        Case("far_cell_without_row_ref.xlsx", lambda: raw_xlsx(_sheet(
            _inline_row(1, HEADER) + '<row r="1048576"><c t="inlineStr"><is><t>x</t></is>'
            + "</c>" + '<c r="XFD1048576" t="inlineStr"><is><t>x</t></is></c></row>')), None),
        # 70 MB of blanks in 70 KB: within the command's bounds, over the service's
        Case("zip_bomb.xlsx", lambda: raw_xlsx(_sheet(
            _inline_row(1, HEADER) + _inline_row(2, GOOD) + " " * 70_000_000)), 1, None),
        Case("lying_zip_sizes.xlsx", lambda: raw_xlsx(_sheet(
            _inline_row(1, HEADER) + _inline_row(2, GOOD)),
            declared={"xl/worksheets/sheet1.xml": 10}), None),
        Case("shared_string_bomb.xlsx", lambda: raw_xlsx(
            _sheet(_inline_row(1, HEADER) + "".join(
                f'<row r="{r}">' + "".join(f'<c r="{chr(65 + i)}{r}" t="s"><v>0</v></c>'
                                           for i in range(8)) + "</row>"
                for r in range(2, 20_003))),
            shared=b'<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/spre'
                   b'adsheetml/2006/main"><si><t>' + b"z" * 32_000 + b"</t></si></sst>"),
             None),
        Case("not_a_zip.xlsx", bytes(rnd.randrange(256) for _ in range(3000)), None),
        Case("zip_without_sheet.xlsx", _zip({"hello.txt": b"hi"}), None),
        Case("empty_sheet.xlsx", lambda: xlsx(lambda ws: None), None),
        Case("header_only.xlsx", lambda: xlsx(lambda ws: ws.write_row(0, 0, HEADER)), None),
        Case("date_and_number_cells.xlsx", lambda: xlsx(_typed_cells), 1),
        Case("csv_bytes.xlsx", csv(ok3), None),
        # ------------------------------------------------------------ Parquet
        Case("good.parquet", lambda: parquet(frame(3)), 3),
        Case("nested_list_carried.parquet", lambda: parquet(frame(1, extra=[[1, 2]])), None),
        Case("struct_carried.parquet", lambda: parquet(frame(1, extra=[{"a": 1}])), None),
        Case("binary_carried.parquet", lambda: parquet(frame(1, extra=[b"\x00\x01"])), None),
        Case("duration_field.parquet", lambda: parquet(frame(1, creditable_service_years=pl.Series(
            [timedelta(days=8000)]))), None),
        Case("list_field.parquet", lambda: parquet(frame(1, birth_date=[["1970-05-10"]])), None),
        Case("typed_fields.parquet", lambda: parquet(frame(
            2, birth_date=pl.Series(["1970-05-10", "1971-01-01"]).str.to_date(),
            creditable_service_years=[22, 10], refund_requested=[False, True])), 2),
        Case("float_compensation.parquet",
             lambda: parquet(frame(1, average_compensation=[30000.1])), 1),
        Case("datetime_carried.parquet", lambda: parquet(frame(1, seen=pl.Series(
            ["2020-01-01 10:00"]).str.to_datetime())), 1),
        Case("time_carried.parquet", lambda: parquet(frame(
            1, t=pl.Series(["10:00:00"]).str.to_time())), 1),
        Case("duration_carried.parquet", lambda: parquet(frame(1, d=[timedelta(hours=1)])), None),
        Case("null_column.parquet",
             lambda: parquet(frame(2, requested_start_date=[None, None])), 2),
        Case("zero_rows.parquet", lambda: parquet(frame(0)), None),
        Case("garbage.parquet", b"PAR1" + bytes(rnd.randrange(256) for _ in range(500)) + b"PAR1",
             None),
        Case("csv_bytes.parquet", csv(ok3), None),
        Case("dictionary_bomb.parquet", lambda: _dictionary_bomb(3000, 1_000_000), None),
        # ------------------------------------------------------------- other
        Case("unknown.txt", csv(ok3), None),
    ]
    return cases


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def _typed_cells(ws) -> None:
    from datetime import datetime

    ws.write_row(0, 0, HEADER)
    fmt = ws  # xlsxwriter needs a format for dates; a plain number cell is a serial date
    fmt.write_row(1, 0, ["p1"])
    ws.write_datetime(1, 1, datetime(1970, 5, 10))
    ws.write_datetime(1, 2, datetime(1988, 7, 1, 13, 30))  # a time of day: rejected
    ws.write_datetime(1, 3, datetime(2010, 6, 30))
    ws.write_number(1, 4, 22)
    ws.write_number(1, 5, 30000.5)
    ws.write_string(1, 6, "general")
    ws.write_boolean(1, 7, False)


def _dictionary_bomb(n: int, size: int) -> bytes:
    """n rows that all use one value of `size` bytes, stored once."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    note = pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)),
                                          pa.array(["w" * size]))
    table = pa.Table.from_pydict({**{h: [v] * n for h, v in zip(HEADER, GOOD, strict=True)},
                                  "participant_id": [f"p{i}" for i in range(n)], "note": note})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


# ============================================================== the command

# Files that would take a reader to gigabytes without the checks: run in a
# process of their own, so that a regression fails the test, not the run.
BOMBS = {"xfd1048576.xlsx", "far_row.xlsx", "lying_dimension.xlsx",
         "far_cell_without_row_ref.xlsx", "zip_bomb.xlsx", "shared_string_bomb.xlsx",
         "dictionary_bomb.parquet"}
MEMORY_BOUND = 1 << 30  # bytes of resident memory a run over any of them may take
AS_OF = "2026-11-29"
CORPUS = build()


def _ids(case: Case) -> str:
    return case.name


def _check_run(case: Case, folder: Path, code: int, stdout: str, stderr: str,
               api: bool = False) -> None:
    out, rej = folder / "out.csv", folder / "rejects.csv"
    assert "Traceback" not in stderr and "panicked" not in stderr, stderr[-2000:]
    expected = case.rows
    if expected is None:
        assert code == 2, (code, stdout, stderr[-500:])
        assert case.name in stderr  # the message names the file
        assert len(stderr.strip().splitlines()) == 1, stderr
        assert list(folder.iterdir()) == [folder / case.name], "nothing is written"
        return
    assert code == 0, (code, stderr[-1000:])
    summary = json.loads(stdout)
    det = pl.read_csv(out, infer_schema=False)
    rejected = pl.read_csv(rej, infer_schema=False)
    assert summary["rows_read"] == expected
    assert det.height == summary["rows_determined"]
    assert rejected["row"].n_unique() == summary["rows_rejected"]
    assert summary["rows_read"] == det.height + rejected["row"].n_unique()


def _args(folder: Path, name: str) -> list[str]:
    return ["batch", str(folder / name), "-o", str(folder / "out.csv"), "--rejects",
            str(folder / "rejects.csv"), "--json", "--lang", "en", "--as-of", AS_OF]


@pytest.mark.parametrize("case", [c for c in CORPUS if c.name not in BOMBS], ids=_ids)
def test_an_odd_file_gets_results_or_one_clear_line_never_a_traceback(case, tmp_path):
    (tmp_path / case.name).write_bytes(case.data)
    r = CliRunner().invoke(main, _args(tmp_path, case.name))
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    _check_run(case, tmp_path, r.exit_code, r.stdout, r.stderr)


@pytest.mark.parametrize("case", [c for c in CORPUS if c.name in BOMBS], ids=_ids)
@pytest.mark.slow
def test_a_small_file_standing_for_a_huge_table_is_refused_with_bounded_memory(case, tmp_path):
    (tmp_path / case.name).write_bytes(case.data)
    code, out, err, maxrss = run_measured([*cli_command(), *_args(tmp_path, case.name)],
                                          tmp_path.parent)
    _check_run(case, tmp_path, code, out, err)
    assert maxrss < MEMORY_BOUND


# Runs the command from a small process of its own: a child's peak memory counts
# the pages of the process that forked it, and the test process is large.
_MEASURE = """
import os, resource, subprocess, sys
code = subprocess.call(sys.argv[2:])
with open(sys.argv[1], "w") as f:
    f.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(code)
"""


def run_measured(cmd: list[str], scratch: Path) -> tuple[int, str, str, int]:
    """Run a command; its exit status, output, errors and peak resident memory (bytes)."""
    peak = scratch / "peak"
    proc = subprocess.run([sys.executable, "-c", _MEASURE, str(peak), *cmd],
                          capture_output=True, timeout=300)
    return (proc.returncode, proc.stdout.decode(errors="replace"),
            proc.stderr.decode(errors="replace"), int(peak.read_text()) * 1024)


def test_the_bombs_are_refused_before_the_spreadsheet_reader_sees_them(tmp_path):
    """The check itself: the reader is never called for a sheet over the limits."""
    import fastexcel

    from diferida.batch.io import open_source

    called = []
    real = fastexcel.read_excel
    try:
        fastexcel.read_excel = lambda *a, **k: called.append(a) or real(*a, **k)
        for case in CORPUS:
            if case.name.endswith(".xlsx") and case.name in BOMBS and case.rows is None:
                with pytest.raises(FileProblem) as info:
                    open_source(case.data, case.name)
                assert info.value.code in {"too_many_cells", "too_much_text", "too_unzipped"}
    finally:
        fastexcel.read_excel = real
    assert called == []


# ============================================================== the service


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from fastapi.testclient import TestClient

    from diferida.server import create_app
    from diferida.service.settings import Settings

    db = tmp_path_factory.mktemp("api") / "cases.db"
    with TestClient(create_app(Settings(database_url=f"sqlite:///{db}"))) as client:
        yield client


def _upload(api, name: str, data: bytes, **form):
    return api.post("/api/v1/batches", files={"file": (name, data)},
                    data={"as_of": AS_OF, "lang": "en", **form})


@pytest.mark.parametrize("case", CORPUS, ids=_ids)
def test_an_odd_upload_gets_a_4xx_or_every_row_accounted_for_never_a_5xx(api, case):
    r = _upload(api, case.name, case.data)  # a server error raises here
    expected = case.rows_by_api
    if expected is None:
        assert r.status_code in (413, 422), r.text[:500]
        (problem,) = r.json()["errors"]
        assert problem["field"] == "file" and case.name in problem["message"]
        return
    assert r.status_code == 200, r.text[:500]
    body = r.json()
    s = body["summary"]
    assert s["rows_in"] == expected == s["rows_determined"] + s["rows_rejected"]
    assert len(body["determinations"]) == s["rows_determined"]
    assert len({x["row"] for x in body["rejects"]}) == s["rows_rejected"]


def _long_rows_xlsx(rows: int, width: int) -> bytes:
    """A sheet of `rows` rows whose every cell is one shared string of `width`
    characters: some kilobytes of zip for a table of hundreds of megabytes."""
    cells = "".join(f'<c r="{chr(65 + i)}{{r}}" t="s"><v>8</v></c>' for i in range(8))
    body = "".join(f'<row r="{r}">{cells.format(r=r)}</row>' for r in range(2, rows + 2))
    shared = ('<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/'
              '2006/main">' + "".join(f"<si><t>{h}</t></si>" for h in HEADER)
              + f"<si><t>{'y' * width}</t></si></sst>")
    header = "".join(f'<c r="{chr(65 + i)}1" t="s"><v>{i}</v></c>' for i in range(8))
    return raw_xlsx(_sheet(f'<row r="1">{header}</row>' + body), shared=shared.encode())


@pytest.mark.slow
def test_a_small_xlsx_of_many_long_rows_is_refused_before_it_is_read(api):
    data = _long_rows_xlsx(100_000, 200)
    assert len(data) < 2_000_000  # for 100,000 x 8 cells of 200 characters: 160 MB of text
    r = _upload(api, "long.xlsx", data)
    assert r.status_code == 413
    assert r.json()["errors"][0]["code"] == "too_many_rows"
    r = _upload(api, "long.xlsx", _long_rows_xlsx(15_000, 200))  # rows allowed, text not
    assert r.status_code == 413
    assert r.json()["errors"][0]["code"] == "too_much_text"


def test_the_limits_of_an_upload_are_settings(tmp_path, monkeypatch):
    from fastapi.testclient import TestClient

    from diferida.server import create_app
    from diferida.service.settings import Settings

    monkeypatch.setenv("DIFERIDA_BATCH_MAX_ROWS", "2")
    monkeypatch.setenv("DIFERIDA_BATCH_MAX_CELLS", "123456")
    monkeypatch.setenv("DIFERIDA_BATCH_MAX_TEXT_BYTES", "99999")
    monkeypatch.setenv("DIFERIDA_BATCH_CONCURRENCY", "3")
    settings = Settings()
    assert (settings.batch_max_rows, settings.batch_max_cells, settings.batch_max_text_bytes,
            settings.batch_concurrency) == (2, 123456, 99999, 3)
    settings.database_url = f"sqlite:///{tmp_path / 'c.db'}"
    with TestClient(create_app(settings)) as client:
        ok = _upload(client, "two.csv", csv([row(1), row(2)]))
        assert ok.status_code == 200
        r = _upload(client, "three.csv", csv([row(1), row(2), row(3)]))
        assert r.status_code == 413
        assert r.json()["errors"][0]["code"] == "too_many_rows"
        assert "3 rows; the limit here is 2" in r.json()["errors"][0]["message"]
        monkeypatch.setenv("DIFERIDA_BATCH_MAX_ROWS", "lots")
        with pytest.raises(ValueError, match="DIFERIDA_BATCH_MAX_ROWS"):
            Settings()


def test_uploads_beyond_the_concurrent_limit_are_told_to_come_back(api):
    import asyncio

    slots = asyncio.Semaphore(1)
    previous = getattr(api.app.state, "batch_slots", None)
    api.app.state.batch_slots = slots
    try:
        slots._value = 0  # every slot taken, as by uploads being evaluated
        r = _upload(api, "good.csv", csv([row(1)]))
        assert r.status_code == 503
        assert r.headers["retry-after"].isdigit()
        assert r.json()["errors"][0]["code"] == "busy"
        slots._value = 1  # a slot frees: the next upload is evaluated
        assert _upload(api, "good.csv", csv([row(1)])).status_code == 200
    finally:
        api.app.state.batch_slots = previous


# ============================================================== outputs


def test_csv_outputs_neutralise_formulas_but_not_numbers_or_amounts(tmp_path):
    src = tmp_path / "in.csv"
    src.write_bytes(csv([row(1, participant_id="=cmd|' /C calc'!A0"),
                         row(2, participant_id="+1+1"), row(3, participant_id="-2"),
                         row(4, participant_id="@SUM(A1)"), row(5),
                         row(6, participant_id="-2+3", creditable_service_years="-2")]))
    r = CliRunner().invoke(main, ["batch", str(src), "-o", str(tmp_path / "o.csv"),
                                  "--rejects", str(tmp_path / "r.csv"), "--as-of", AS_OF])
    assert r.exit_code == 0, r.output
    det = pl.read_csv(tmp_path / "o.csv", infer_schema=False)
    assert det["participant_id"].to_list() == ["'=cmd|' /C calc'!A0", "'+1+1", "-2",
                                               "'@SUM(A1)", "p5"]
    assert det["annual_amount"].to_list() == [ONE.annual_text] * 5  # amounts as they are
    rej = pl.read_csv(tmp_path / "r.csv", infer_schema=False)
    assert rej["participant_id"].to_list() == ["'-2+3"]
    assert rej["value"].to_list() == ["-2"]  # a plain number stays a number


@given(st.text(max_size=30))
def test_no_text_cell_of_a_csv_output_can_start_a_formula(text):
    from diferida.batch.outputs import neutralise_formulas

    out = neutralise_formulas(pl.DataFrame({"c": [text]}))["c"][0]
    assert out in (text, "'" + text)
    plain_number = re.fullmatch(r"[+-]?[0-9]+(\.[0-9]+)?", text) is not None
    assert not out.startswith(("=", "+", "-", "@", "\t", "\r")) or plain_number


def test_an_xlsx_output_never_cuts_a_long_value(tmp_path):
    src = tmp_path / "in.csv"
    src.write_bytes(csv([row(1) + ["n" * 40_000], row(2) + ["short"]], header=HEADER + ["note"]))
    r = CliRunner().invoke(main, ["batch", str(src), "-o", str(tmp_path / "o.xlsx"),
                                  "--as-of", AS_OF, "--lang", "en"])
    assert r.exit_code == 2
    assert "'note'" in r.stderr and "p1" in r.stderr and "40,000 characters" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]
    # a long bad value goes to the rejects: there too, refused rather than cut
    src.write_bytes(csv([row(1, birth_date="d" * 33_000)]))
    r = CliRunner().invoke(main, ["batch", str(src), "-o", str(tmp_path / "o.csv"),
                                  "--rejects", str(tmp_path / "r.xlsx"), "--as-of", AS_OF])
    assert r.exit_code == 2 and "r.xlsx" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


@pytest.mark.parametrize("where", ["/proc/diferida-out.csv", "/proc/self/diferida.csv",
                                   "read-only"])
def test_an_output_that_cannot_be_written_exits_2_with_a_message(tmp_path, where):
    src = tmp_path / "in.csv"
    src.write_bytes(csv([row(1)]))
    if where == "read-only":
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o555)
        if os.access(folder, os.W_OK):  # the superuser writes anywhere
            pytest.skip("a read-only folder is writable by this user")
        where = str(folder / "out.csv")
    r = CliRunner().invoke(main, ["batch", str(src), "-o", where, "--lang", "en"])
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert where in r.stderr and "cannot be written" in r.stderr


_TOKENS = [b"\r", b"\n", b"\r\n", b'"', b",", b";", b"\t", b"\x00", b"\xff", b"\xef\xbb\xbf",
           b"=", b"-", b" ", b'""', b"\n\n", b"9" * 30, b"0000-01-01"]
_SEED = csv([row(i) for i in range(1, 8)] + [row(8, birth_date="1970-02-30"),
                                            row(9, participant_id="p1")])


@st.composite
def mutated_csv(draw) -> bytes:
    data = bytearray(_SEED)
    start = _SEED.index(b"\n") + 1 if draw(st.booleans()) else 0  # header kept, or not
    for _ in range(draw(st.integers(1, 6))):
        i = draw(st.integers(start, len(data)))
        op = draw(st.sampled_from(["byte", "token", "delete", "cut", "copy"]))
        if op == "byte" and i < len(data):
            data[i] = draw(st.integers(0, 255))
        elif op == "token":
            data[i:i] = draw(st.sampled_from(_TOKENS))
        elif op == "delete":
            del data[i:i + draw(st.integers(1, 20))]
        elif op == "cut":
            del data[max(i, start + 1):]
        else:
            j = draw(st.integers(0, len(data)))
            data[i:i] = data[j:j + draw(st.integers(1, 40))]
    return bytes(data)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_csv())
@pytest.mark.slow
def test_a_mutated_csv_is_refused_with_a_message_or_every_row_is_accounted_for(data):
    from datetime import date

    from diferida.batch import evaluate_file

    with tempfile.TemporaryDirectory() as folder:
        src, out, rej = (Path(folder) / n for n in ("in.csv", "out.csv", "rej.csv"))
        src.write_bytes(data)
        try:
            s = evaluate_file(src, out, rej, as_of=date(2026, 11, 29))
        except FileProblem as exc:
            assert exc.text("en") and exc.text("es")
            assert sorted(p.name for p in Path(folder).iterdir()) == ["in.csv"]
            return
        det = pl.read_csv(out, infer_schema=False).height
        rejected = pl.read_csv(rej, infer_schema=False)["row"].n_unique()
        assert s.rows_read == det + rejected == s.rows_determined + s.rows_rejected
