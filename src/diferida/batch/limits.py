"""How much a file may hold, checked before it is read.

A small file can stand for a huge table: an .xlsx of a few kilobytes can
declare a cell at XFD1048576 (the reader would lay out 17 billion cells), or
repeat one long shared string in every cell; a Parquet file can repeat one
long dictionary value in every row. So the size that matters is the table's,
not the file's: rows, columns, cells and bytes of text, and for an .xlsx the
bytes of XML inside its zip. `Limits` holds those bounds; `check_xlsx` finds
what an .xlsx holds from its XML, streamed, before the spreadsheet reader
sees it.

`diferida batch` uses `Limits()` (bounds that only a hostile or broken file
reaches); the service sets tighter ones per upload (see settings.py).
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import FileProblem

__all__ = ["TOO_LARGE", "Limits", "XlsxShape", "check_xlsx"]

EXCEL_COLUMNS = 16_384  # columns of an Excel sheet (XFD)
# the codes of the FileProblems that refuse a file for the size of what it
# holds (any other: the file cannot be used as it is); the service answers 413
TOO_LARGE = frozenset({"too_many_rows", "too_many_columns", "too_many_cells", "too_much_text",
                       "too_unzipped"})


@dataclass(frozen=True)
class Limits:
    """Bounds on the table a file holds. `rows`: data rows (None: any);
    `columns`; `cells`: rows x columns (for an .xlsx, the area its cells
    span); `text_bytes`: bytes of text in the cells once read (for an .xlsx,
    its sheet's XML plus every use of a shared string; for Parquet, per chunk
    read); `unzipped_bytes`: an .xlsx's parts once uncompressed."""

    rows: int | None = None
    columns: int = EXCEL_COLUMNS
    cells: int = 30_000_000  # a whole sheet's rows x 28 columns: ~2 GB to read
    text_bytes: int = 1 << 30
    unzipped_bytes: int = 4 << 30

    def check_shape(self, file: str, rows: int, columns: int, *, counted_all: bool = True
                    ) -> None:
        """Refuse a table of `rows` data rows and `columns` columns over the limits.
        `counted_all` False: the rows were counted only until past the limit, so
        the file has at least `rows` (the message says "more than" the limit)."""
        if columns > self.columns:
            raise FileProblem("too_many_columns", file=file, n=f"{columns:,}",
                              limit=f"{self.columns:,}")
        if self.rows is not None and rows > self.rows:
            if not counted_all:
                raise FileProblem("too_many_rows", file=file, n=f"{rows:,}",
                                  limit=f"{self.rows:,}", variant="more")
            raise FileProblem("too_many_rows", file=file, n=f"{rows:,}", limit=f"{self.rows:,}")
        if rows * columns > self.cells:
            raise FileProblem("too_many_cells", file=file, n=f"{rows * columns:,}",
                              limit=f"{self.cells:,}")

    def check_text(self, file: str, nbytes: int) -> None:
        if nbytes > self.text_bytes:
            raise FileProblem("too_much_text", file=file, n=f"{nbytes:,}",
                              limit=f"{self.text_bytes:,}")


@dataclass
class XlsxShape:
    rows: int  # the last row any cell of the first sheet names
    columns: int  # the last column
    text_bytes: int


_BLOCK = 1 << 22
_SHEET_TAG = re.compile(rb"<(?:[\w.-]+:)?sheet\b([^>]*)>")
_REL_TAG = re.compile(rb"<(?:[\w.-]+:)?Relationship\b([^>]*)>")
_ID_ATTR = re.compile(rb"""\s(?:[\w.-]+:)?id\s*=\s*["']([^"']*)["']""")
_RID_ATTR = re.compile(rb"""\sId\s*=\s*["']([^"']*)["']""")
_TARGET_ATTR = re.compile(rb"""\sTarget\s*=\s*["']([^"']*)["']""")
# opening tags of rows and cells, in document order (the general case)
_ROW_OR_CELL = re.compile(rb"<(?:[\w.-]+:)?(row|c)\b([^>]*)>")
_R_ATTR = re.compile(rb"""\sr\s*=\s*["']([A-Za-z]*)(\d*)["']""")
# the usual case: every cell has its reference r="B12"
_CELL_REF = re.compile(rb"""<c\b[^>]*?\sr\s*=\s*["']([A-Z]{1,3})(\d{1,7})["']""")
_DIMENSION = re.compile(rb"""<(?:[\w.-]+:)?dimension\b[^>]*\sref\s*=\s*["']([^"']*)["']""")
_REF = re.compile(rb"([A-Za-z]{1,7})(\d{1,12})")
_CELL_TAGS = (b"<c ", b"<c>", b"<c/>")
_SHARED = (b't="s"', b"t='s'")
_SHARED_INDEX = re.compile(rb"""<c\b[^>]*\st\s*=\s*["']s["'][^>]*>\s*<(?:[\w.-]+:)?v>\s*(\d+)""")
_SI_MARKUP = len(b"<si><t></t></si>")
_SI = re.compile(rb"<(?:[\w.-]+:)?si\b.*?</(?:[\w.-]+:)?si>", re.S)


def _column_number(letters: bytes) -> int:
    n = 0
    for ch in letters.upper():
        n = n * 26 + ch - 64
    return n


def check_xlsx(file: str, target: Path | bytes, limits: Limits) -> XlsxShape:
    """Read an .xlsx's zip (streamed, every part) and its first sheet's XML,
    and refuse it if any limit is passed; raise FileProblem("not_format") for
    a file that is not a readable zip. Returns what the sheet holds."""
    try:
        with zipfile.ZipFile(io.BytesIO(target) if isinstance(target, bytes) else target) as z:
            return _check_zip(file, z, limits)
    except FileProblem:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError,
            zlib.error, EOFError, OSError, ValueError, KeyError) as exc:
        raise FileProblem("not_format", file=file, kind="Excel (.xlsx)",
                          detail=str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                          ) from None


def _check_zip(file: str, z: zipfile.ZipFile, limits: Limits) -> XlsxShape:
    infos = z.infolist()
    declared = sum(i.file_size for i in infos)
    if declared > limits.unzipped_bytes:
        raise FileProblem("too_unzipped", file=file, n=f"{declared:,}",
                          limit=f"{limits.unzipped_bytes:,}")
    names = {i.filename for i in infos}
    sheet = _first_sheet(z, names)
    shared = next((n for n in ("xl/sharedStrings.xml", "xl/sharedstrings.xml") if n in names),
                  None)
    budget = [limits.unzipped_bytes]
    lengths = np.zeros(0, dtype=np.int64)
    shape: _SheetScan | None = None
    for info in infos:  # every part, so that none is larger than it says
        if info.is_dir():
            continue
        if info.filename == sheet:
            shape = _scan_sheet(file, z, info, budget, limits)
        elif info.filename == shared:
            lengths = _shared_lengths(file, z, info, budget, limits)
        else:
            for _ in _stream(file, z, info, budget, limits):
                pass
    if shape is None or sheet is None:  # a shape is read only from the sheet
        raise FileProblem("not_format", file=file, kind="Excel (.xlsx)", detail="no worksheet")
    limits.check_shape(file, max(shape.rows - 1, 0), shape.columns)
    # the sheet's XML, and shared strings as many times as cells use them: a
    # quick bound first, counted exactly only when the bound is over the limit
    bound = shape.shared_cells * int(lengths.max()) if len(lengths) else 0
    if shape.text_bytes + bound > limits.text_bytes:
        text, idx = _sheet_text(file, z, z.getinfo(sheet), limits)
        idx = idx[idx < len(lengths)]
        shape.text_bytes = text + int(lengths[idx].sum())
    else:
        shape.text_bytes += bound
    limits.check_text(file, shape.text_bytes)
    return XlsxShape(shape.rows, shape.columns, shape.text_bytes)


def _first_sheet(z: zipfile.ZipFile, names: set[str]) -> str | None:
    """The part of the workbook's first sheet, as the reader picks it."""
    try:
        workbook = z.read("xl/workbook.xml")[:1 << 20]
        rels = z.read("xl/_rels/workbook.xml.rels")[:1 << 20]
    except KeyError:
        workbook = rels = b""
    tag = _SHEET_TAG.search(workbook)
    rid = _ID_ATTR.search(tag.group(1)) if tag else None
    if rid is not None:
        for m in _REL_TAG.finditer(rels):
            i, t = _RID_ATTR.search(m.group(1)), _TARGET_ATTR.search(m.group(1))
            if i and t and i.group(1) == rid.group(1):
                target = t.group(1).decode("utf-8", "replace")
                path = target.lstrip("/") if target.startswith("/") else \
                    posixpath.normpath(posixpath.join("xl", target))
                if path in names:
                    return path
    sheets = sorted(n for n in names if n.startswith("xl/worksheets/") and n.endswith(".xml"))
    return sheets[0] if sheets else None


def _stream(file: str, z: zipfile.ZipFile, info: zipfile.ZipInfo, budget: list[int],
            limits: Limits):
    """The part's bytes, a block at a time, counted against the budget of
    uncompressed bytes (zipfile stops at the declared size and checks the CRC)."""
    with z.open(info) as fh:
        while block := fh.read(_BLOCK):
            budget[0] -= len(block)
            if budget[0] < 0:
                raise FileProblem("too_unzipped", file=file, n=f"> {limits.unzipped_bytes:,}",
                                  limit=f"{limits.unzipped_bytes:,}")
            yield block


@dataclass
class _SheetScan:
    rows: int = 0
    columns: int = 0
    text_bytes: int = 0
    shared_cells: int = 0


def _scan_sheet(file: str, z: zipfile.ZipFile, info: zipfile.ZipInfo, budget: list[int],
                limits: Limits) -> _SheetScan:
    scan = _SheetScan()
    pending = b""
    general = False
    first = True
    row = col = 0  # for the general case: where the reader would put the next cell
    for block in _stream(file, z, info, budget, limits):
        buf = pending + block
        cut = buf.rfind(b"<")
        if cut < 0:
            pending = buf
            continue
        buf, pending = buf[:cut], buf[cut:]  # a tag cut by the block waits for the next
        if first:
            first = False
            m = _DIMENSION.search(buf)
            if m:  # the area the sheet declares: the reader lays it out before reading
                last = m.group(1).split(b":")[-1]
                d = _REF.fullmatch(last.strip().replace(b"$", b""))
                if d:
                    scan.columns = _column_number(d.group(1))
                    scan.rows = int(d.group(2))
        scan.text_bytes += len(buf)
        scan.shared_cells += sum(buf.count(s) for s in _SHARED)
        refs = _CELL_REF.findall(buf)
        cells = sum(buf.count(t) for t in _CELL_TAGS)
        if not general and (cells != len(refs) or b":c " in buf or b":c>" in buf):
            general = True  # some cell without its reference: follow the reader's count
        if general:
            for name, attrs in _ROW_OR_CELL.findall(buf):
                m = _R_ATTR.search(attrs)
                if name == b"row":
                    row = int(m.group(2)) if m and m.group(2) else row + 1
                    col = 0
                else:
                    if m and m.group(1) and m.group(2):
                        col, row_here = _column_number(m.group(1)), int(m.group(2))
                        scan.rows = max(scan.rows, row_here)
                    else:
                        col += 1
                    scan.columns = max(scan.columns, col)
                    scan.rows = max(scan.rows, row)
        elif refs:
            letters = {r[0] for r in refs}
            scan.columns = max(scan.columns, max(_column_number(x) for x in letters))
            scan.rows = max(scan.rows, max(int(r[1]) for r in refs))
        if scan.columns > limits.columns or scan.rows * scan.columns > limits.cells or (
                limits.rows is not None and scan.rows - 1 > limits.rows):
            limits.check_shape(file, max(scan.rows - 1, 0), scan.columns)
    scan.text_bytes += len(pending)
    return scan


def _sheet_text(file: str, z: zipfile.ZipFile, info: zipfile.ZipInfo,
                limits: Limits) -> tuple[int, np.ndarray]:
    """Bytes of the sheet's XML outside its tags (the cells' own text), and
    the shared-string index of every cell that uses one."""
    parts, pending, text = [], b"", 0
    for block in _stream(file, z, info, [limits.unzipped_bytes], limits):
        buf = pending + block
        cut = buf.rfind(b"<c")
        if cut <= 0:
            pending = buf
            continue
        buf, pending = buf[:cut], buf[cut:]
        text += _outside_tags(buf)
        found = _SHARED_INDEX.findall(buf)
        if found:
            parts.append(np.array(found).astype(np.int64))
    text += _outside_tags(pending)
    found = _SHARED_INDEX.findall(pending)
    if found:
        parts.append(np.array(found).astype(np.int64))
    return text, (np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64))


def _outside_tags(buf: bytes) -> int:
    """Bytes of `buf` (cut between tags) that are not inside a tag."""
    arr = np.frombuffer(buf, dtype=np.uint8)
    depth = np.cumsum((arr == 60).astype(np.int8) - (arr == 62).astype(np.int8),
                      dtype=np.int64)  # '<' opens a tag, '>' closes it
    return int(np.count_nonzero((depth == 0) & (arr != 62)))


def _shared_lengths(file: str, z: zipfile.ZipFile, info: zipfile.ZipInfo, budget: list[int],
                    limits: Limits) -> np.ndarray:
    """Bytes of each shared string: its XML less the markup of a plain one,
    <si><t></t></si> (at least its text's length)."""
    parts, pending = [], b""
    for block in _stream(file, z, info, budget, limits):
        buf = pending + block
        cut = buf.rfind(b"</si>")
        if cut < 0:
            pending = buf
            continue
        cut += len(b"</si>")
        buf, pending = buf[:cut], buf[cut:]
        parts.append(np.fromiter((m.end() - m.start() for m in _SI.finditer(buf)),
                                 dtype=np.int64))
    parts.append(np.fromiter((m.end() - m.start() for m in _SI.finditer(pending)),
                             dtype=np.int64))
    return np.maximum(np.concatenate(parts) - _SI_MARKUP, 0)
