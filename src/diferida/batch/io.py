"""Tables of participants in files: CSV, Parquet and Excel (.xlsx), read in
chunks of bounded size, each row with the number a person opening the file
would give it; and outputs written to a temporary file that is renamed into
place only when complete.

Row numbers ("human" numbers, used in every message about a row):

* CSV: the line number, the header being line 1, so the first data row is 2.
  A row whose quoted value spans several lines is numbered by its first line;
  blank lines are not rows (they are skipped and counted).
* Excel (.xlsx): the sheet's row number, the header being row 1; rows with
  every cell empty are skipped and counted.
* Parquet: the 1-based position of the row in the file.

CSV is read with every column as text (nothing inferred), so validation sees
exactly what the file says. Excel cells are read as text too: a date cell
reads as its date (YYYY-MM-DD), a number as its shortest decimal form.
"""

from __future__ import annotations

import csv
import io
import os
import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import polars as pl

from .. import article19
from ..fields import BY_NAME, FIELD_NAMES
from ..validation import ROW
from .columns import ColumnsArg, load_column_map, renames
from .errors import FileProblem
from .limits import Limits, check_xlsx

__all__ = [
    "FileProblem",
    "KINDS",
    "Limits",
    "REQUIRED_COLUMNS",
    "Table",
    "first_row",
    "kind_of",
    "load_table",
    "open_source",
    "discard_unfinished",
    "open_sink",
    "put_in_place",
    "read_table",
    "row_numbers",
]

KINDS = {".csv": "csv", ".parquet": "parquet", ".xlsx": "xlsx"}
_FIRST_ROW = {"csv": 2, "xlsx": 2, "parquet": 1}

# Columns a file must have. separation_date is among them although a value may
# be empty (still in service): a file without the column would silently make
# everyone "not separated". requested_start_date, deferred_right_1960 (SPEC §1
# default false) and as_of (default: the run's date) may be left out.
REQUIRED_COLUMNS = (
    "participant_id", "birth_date", "entry_date", "separation_date",
    "creditable_service_years", "average_compensation", "group", "refund_requested",
)
# The determination's own columns: an input column of the same name could not
# be carried through beside them.
RESULT_NAMES = frozenset(
    c.replace("_cents", "_amount") for c in article19.RESULT_COLUMNS if c != "participant_id"
) | {ROW}
XLSX_MAX_ROWS = 1_048_576 - 1  # rows of an Excel sheet, less the header

_BOM = b"\xef\xbb\xbf"
_MAGIC = {b"PK\x03\x04": "Excel (.xlsx)", b"PAR1": "Parquet"}  # a file's first bytes
_HEAD = 1 << 16
_NL, _CR, _QUOTE = 10, 13, 34
_DATE_CELL = r"^(\d{4}-\d{2}-\d{2}) 00:00:00$"


def kind_of(filename: str | os.PathLike[str]) -> str:
    """'csv', 'parquet' or 'xlsx', by the file name's suffix."""
    suffix = Path(filename).suffix.lower()
    if suffix not in KINDS:
        raise FileProblem("unknown_suffix", file=str(filename), suffix=suffix)
    return KINDS[suffix]


def first_row(kind: str) -> int:
    """The number a person gives the first data row of a file of this kind."""
    return _FIRST_ROW[kind]


def row_numbers(kind: str, positions: pl.Series | Sequence[int],
                rows: pl.Series | None = None) -> pl.Series:
    """Human row numbers (see the module's docstring) for 0-based positions in
    a table read from a file of this kind, e.g. `FrameResult.rejected["row"]`.

    Give `rows` (from `load_table`) for numbers that are exact in every CSV;
    without it, a CSV's rows are taken to be one line each, which holds unless
    the file has blank lines or quoted values that span lines."""
    pos = pl.Series("row", positions, dtype=pl.Int64)
    if rows is not None:
        return rows.cast(pl.Int64).gather(pos).alias("row")
    return (pos + first_row(kind)).alias("row")


@dataclass
class Table:
    """A whole table read into memory: `frame` (columns named as the fields
    where they are fields), `rows` (the human number of each frame row),
    `kind`, and how many blank lines or rows were skipped."""

    frame: pl.DataFrame
    rows: pl.Series
    kind: str
    blank: int = 0


def load_table(source: Path | str | bytes, filename: str | None = None, *,
               separator: str | None = None, columns: ColumnsArg = None,
               limits: Limits | None = None) -> Table:
    """Read a whole file into memory (for uploads and small files), refusing
    a table over `limits` (rows, columns, cells, text) before reading it
    where the file tells, else as soon as it is read."""
    limits = limits or Limits()
    src = open_source(source, filename, separator=separator, columns=columns, limits=limits)
    frames, rows, blank = [], [], 0
    for chunk in src.chunks(chunk_rows=1 << 40):
        frames.append(chunk.frame)
        rows.append(chunk.rows)
        blank += chunk.blank
    frame = pl.concat(frames, how="vertical") if frames else src.empty()
    if frame.height == 0:
        raise FileProblem("no_rows", file=src.file)
    limits.check_shape(src.file, frame.height, frame.width)
    limits.check_text(src.file, text_bytes(frame))
    numbers = pl.Series("row", np.concatenate(rows), dtype=pl.Int64)
    return Table(frame, numbers, src.kind, blank)


def text_bytes(frame: pl.DataFrame) -> int:
    """Bytes of text in the frame's text columns, every use of a repeated
    value counted (computed without writing the values out)."""
    parts = [pl.col(c).str.len_bytes().sum() if t == pl.String else
             pl.col(c).cat.len_bytes().sum()
             for c, t in frame.schema.items()
             if isinstance(t, (pl.String, pl.Categorical, pl.Enum))]
    if not parts or frame.height == 0:
        return 0
    return int(frame.select(pl.sum_horizontal(parts)).item() or 0)


def read_table(source: Path | str | bytes, filename: str | None = None, *,
               separator: str | None = None, columns: ColumnsArg = None) -> pl.DataFrame:
    """A file's table of participants, columns named as the SPEC §1 fields
    (through the column map `columns`, if given), other columns kept. CSV
    columns are all text. Raises FileProblem for a file that cannot be used.

    `source` is a path or the file's bytes; `filename` gives the format by its
    suffix (and names the file in messages); for a path it defaults to it."""
    return load_table(source, filename, separator=separator, columns=columns).frame


# --------------------------------------------------------------------- sources


@dataclass
class Chunk:
    frame: pl.DataFrame  # the rows, columns renamed to fields
    rows: np.ndarray  # human row number of each row
    blank: int  # blank lines or rows skipped in this chunk
    done: int  # progress so far, in the source's units (bytes or rows)


class Source:
    """A file of participants, its header checked; `chunks()` yields its rows."""

    kind = ""

    def __init__(self, file: str, names: list[str], mapping: Mapping[str, str],
                 limits: Limits):
        self.file = file
        self.limits = limits
        if len(names) > limits.columns:
            raise FileProblem("too_many_columns", file=file, n=f"{len(names):,}",
                              limit=f"{limits.columns:,}")
        _check_names(file, names)
        self.names = names
        self.rename = renames(file, names, mapping)
        final = [self.rename.get(n, n) for n in names]
        missing = [f for f in REQUIRED_COLUMNS if f not in final]
        if missing:
            wanted: dict[str, list[str]] = {}
            for src, fld in mapping.items():
                wanted.setdefault(fld, []).append(f"'{src}'")
            raise FileProblem(
                "missing_columns", file=file,
                columns=", ".join(f"{f} ({' / '.join(wanted[f])})" if f in wanted else f
                                  for f in missing),
                found=", ".join(names) or "-")
        for n in final:
            if n in RESULT_NAMES:
                raise FileProblem("clashing_column", file=file, column=n)
        self.columns = final
        self.carried = [n for n in final if n not in FIELD_NAMES]
        self.total = 0  # progress units

    def empty(self) -> pl.DataFrame:
        return pl.DataFrame(schema={c: pl.String for c in self.columns})

    def chunks(self, chunk_rows: int, columns: list[str] | None = None) -> Iterator[Chunk]:
        raise NotImplementedError

    def _finish(self, frame: pl.DataFrame) -> pl.DataFrame:
        return frame.rename({k: v for k, v in self.rename.items() if k in frame.columns})


def _check_names(file: str, names: list[str]) -> None:
    seen: set[str] = set()
    for i, n in enumerate(names, start=1):
        if not n:
            raise FileProblem("unnamed_column", file=file, position=i)
        if n in seen:
            raise FileProblem("duplicate_column", file=file, column=n)
        seen.add(n)


def open_source(source: Path | str | bytes, filename: str | None = None, *,
                separator: str | None = None, columns: ColumnsArg = None,
                limits: Limits | None = None, extra_fields: tuple[str, ...] = ()) -> Source:
    """Open a file (a path, or its bytes with a `filename`) and check its header
    (and, where the file tells before it is read, its size against `limits`).
    `extra_fields`: names besides the fields that `columns` may map to."""
    limits = limits or Limits()
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        file = filename or "upload"
        kind = kind_of(filename or "")
        size = len(data)
        opener = lambda: io.BytesIO(data)  # noqa: E731
        target: Any = data
    else:
        path = Path(source)
        file = filename or str(path)
        kind = kind_of(filename or path)
        if not path.is_file():
            raise FileProblem("not_found", file=file)
        size = path.stat().st_size
        opener = lambda: path.open("rb")  # noqa: E731
        target = path
    if size == 0:
        raise FileProblem("empty", file=file)
    mapping = load_column_map(columns, extra_fields)
    if kind == "csv":
        return CsvSource(file, opener, size, separator, mapping, limits)
    if kind == "parquet":
        return ParquetSource(file, target, mapping, limits)
    return XlsxSource(file, target, mapping, limits)


def _separator(value: str | None) -> int | None:
    if value is None:
        return None
    value = {"tab": "\t", "\\t": "\t"}.get(value, value)
    if len(value) != 1 or value in "\"\r\n" or ord(value) > 127:
        raise FileProblem("bad_separator", separator=value)
    return ord(value)


class CsvSource(Source):
    """CSV in UTF-8 (with or without BOM), comma or semicolon (or as given),
    double quotes around values that need them; read in blocks of whole rows."""

    kind = "csv"

    def __init__(self, file: str, opener, size: int, separator: str | None,
                 mapping: Mapping[str, str], limits: Limits):
        sep = _separator(separator)
        self._open = opener
        with opener() as fh:
            head = fh.read(_HEAD)
            start = len(_BOM) if head.startswith(_BOM) else 0
            for magic, kind in _MAGIC.items():
                if head.startswith(magic):
                    raise FileProblem("looks_like", file=file, kind=kind)
            end = _first_record_end(head, start)
            while end < 0 and len(head) < size:
                more = fh.read(_HEAD)
                if not more:
                    break
                head += more
                end = _first_record_end(head, start)
        if not head[start:].strip():
            raise FileProblem("empty", file=file)
        header = head[start:end if end >= 0 else len(head)]
        try:
            text = header.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError as exc:
            raise _not_utf8(file, header, exc, 1) from None
        if "\r" in text:
            # a bare CR ends no line here: the file's lines end that way, or the header has one
            raise FileProblem("cr_line_ends", file=file, line=1)
        try:
            if sep is None:
                sep = _detect_separator(text)
            self.separator = chr(sep)
            names = [n.strip() for n in next(csv.reader([text], delimiter=self.separator))]
        except csv.Error as exc:
            raise FileProblem("unparsable", file=file, line=1, detail=str(exc)) from None
        super().__init__(file, names, mapping, limits)
        self._sep = sep
        self._sep_byte = bytes([sep])
        self._data_offset = end + 1 if end >= 0 else len(head)
        self._first_line = 2 + header.count(b"\n")
        sample = head[self._data_offset:]
        lines = sample.count(b"\n")
        self._row_bytes = len(sample) / lines if lines else 100.0
        self._schema = pl.Schema({n: pl.String for n in names})
        self.total = size
        if limits.rows is not None:
            with opener() as fh:
                fh.seek(self._data_offset)
                rows = _count_rows(fh, limits.rows)
            limits.check_shape(file, rows, len(names))

    def chunks(self, chunk_rows: int, columns: list[str] | None = None) -> Iterator[Chunk]:
        block = max(1, int(self._row_bytes * min(chunk_rows, 1 << 40)))
        block = min(block, 1 << 30)
        project = None if columns is None else [self.columns.index(c) for c in columns]
        with self._open() as fh:
            fh.seek(self._data_offset)
            pending, line, done = b"", self._first_line, self._data_offset
            while True:
                data = fh.read(block)
                buf = pending + data if pending else data
                if not buf:
                    return
                if data:
                    cut = _last_record_end(buf)
                    if cut == 0:  # no whole row yet: read on
                        pending = buf
                        continue
                else:
                    cut = len(buf)
                piece, pending = buf[:cut], buf[cut:]
                done += len(piece)
                yield self._parse(piece, line, project, final=not data, done=done)
                line += piece.count(b"\n")
                if not data:
                    return

    def _parse(self, piece: bytes, line: int, project: list[int] | None, final: bool,
               done: int) -> Chunk:
        if b'"' not in piece and not _has_blank_line(piece):
            # the usual file: one row per line, so rows and lines need no search
            rows = piece.count(b"\n") + (not piece.endswith(b"\n"))
            if piece.count(self._sep_byte) == (len(self.names) - 1) * rows:
                try:
                    frame = self._read(piece, line, project)
                except FileProblem:
                    frame = None
                if frame is not None and frame.height == rows:
                    lines = np.arange(line, line + rows, dtype=np.int64)
                    return Chunk(self._finish(frame), lines, 0, done)
        return self._parse_slowly(piece, line, project, final, done)

    def _parse_slowly(self, piece: bytes, line: int, project: list[int] | None, final: bool,
                      done: int) -> Chunk:
        """Rows located one by one: quoted values, blank lines, or a fault to name."""
        arr = np.frombuffer(piece, dtype=np.uint8)
        newline = arr == _NL
        quotes = arr == _QUOTE
        quoted = bool(quotes.any())
        if quoted:
            inside = np.bitwise_xor.accumulate(quotes.view(np.uint8)).view(bool)
            outside = ~inside
            ends = np.flatnonzero(newline & outside)
            seps = (arr == self._sep) & outside
        else:
            ends = np.flatnonzero(newline)
            seps = arr == self._sep
        starts = np.concatenate(([0], ends + 1)).astype(np.int64)
        if starts[-1] >= len(piece):
            starts = starts[:-1]
            stops = ends
        else:
            stops = np.append(ends, len(piece))
        if quoted:
            lines = line + np.searchsorted(np.flatnonzero(newline), starts)
            if final and inside[-1]:
                raise FileProblem("open_quote", file=self.file, line=int(lines[-1]))
        else:
            lines = line + np.arange(len(starts), dtype=np.int64)
        length = stops - starts
        blank = (length == 0) | ((length == 1) & (arr[np.minimum(starts, len(arr) - 1)] == _CR))
        # Polars pads a short row with nulls, so short rows are found here. Counting
        # the separators of every row is slow; their total is quick, and it equals
        # (columns - 1) x rows exactly when no row is short, given that a long row
        # makes Polars fail (then the rows are counted one by one to name it).
        expected = (len(self.names) - 1) * int((~blank).sum())
        if int(np.count_nonzero(seps)) != expected:
            self._ragged(seps, starts, blank, lines, arr)
        if blank.all():
            frame = self.empty().rename({v: k for k, v in self.rename.items()})
            if project is not None:
                frame = frame.select([self.names[i] for i in project])
        else:
            try:
                frame = self._read(piece, line, project)
            except FileProblem:
                self._ragged(seps, starts, blank, lines, arr)
                raise
            if frame.height != len(starts):
                raise FileProblem("unparsable", file=self.file, line=line,
                                  detail="its rows cannot be told apart (stray quotes?)")
            if blank.any():
                frame = frame.filter(pl.Series(~blank))
        return Chunk(self._finish(frame), lines[~blank], int(blank.sum()), done)

    def _ragged(self, seps: np.ndarray, starts: np.ndarray, blank: np.ndarray,
                lines: np.ndarray, arr: np.ndarray) -> None:
        """Raise for the first row whose number of values is not the header's."""
        fields = np.diff(np.searchsorted(np.flatnonzero(seps), np.append(starts, len(seps)))) + 1
        ragged = np.flatnonzero(~blank & (fields != len(self.names)))
        if len(ragged):
            i = int(ragged[0])
            stop = int(starts[i + 1]) - 1 if i + 1 < len(starts) else len(arr)
            if np.count_nonzero(arr[int(starts[i]):max(stop - 1, int(starts[i]))] == _CR):
                # lines joined by bare CRs (a CR-LF's CR is the row's last byte)
                raise FileProblem("cr_line_ends", file=self.file, line=int(lines[i]))
            raise FileProblem("ragged", file=self.file, line=int(lines[i]), found=int(fields[i]),
                              expected=len(self.names), separator=self.separator)

    def _read(self, piece: bytes, line: int, project: list[int] | None) -> pl.DataFrame:
        try:
            return pl.read_csv(
                piece, has_header=False, schema=self._schema, separator=self.separator,
                quote_char='"', columns=project, infer_schema=False,
            )
        except pl.exceptions.PolarsError as exc:
            try:
                piece.decode("utf-8")
            except UnicodeDecodeError as bad:
                raise _not_utf8(self.file, piece, bad, line) from None
            raise FileProblem("unparsable", file=self.file, line=line,
                              detail=str(exc).splitlines()[0]) from None


def _count_rows(fh: IO[bytes], limit: int) -> int:
    """Rows (records that are not blank lines) from here to the end, counted
    in blocks; stops counting once past `limit`."""
    rows, inside, last = 0, 0, _NL
    while rows <= limit and (block := fh.read(1 << 24)):
        arr = np.frombuffer(block, dtype=np.uint8)
        quotes = (arr == _QUOTE).view(np.uint8)
        parity = np.bitwise_xor.accumulate(quotes) ^ inside
        ends = np.flatnonzero((arr == _NL) & (parity == 0))
        inside = int(parity[-1])
        if len(ends):
            # a record is blank when its newline follows a newline (or CR-LF)
            before = np.concatenate(([last], arr[:-1]))[ends]
            before2 = np.concatenate(([_NL, last], arr[:-2]))[ends] if len(arr) > 1 else before
            blank = (before == _NL) | ((before == _CR) & (before2 == _NL))
            rows += int((~blank).sum())
        last = int(arr[-1])
    if last != _NL:
        rows += 1  # the last row has no newline
    return rows


def _has_blank_line(piece: bytes) -> bool:
    return (piece.startswith((b"\n", b"\r\n")) or b"\n\n" in piece
            or b"\n\r\n" in piece)


def _first_record_end(buf: bytes, start: int) -> int:
    """Index of the newline ending the first record at `start`, or -1."""
    i = start
    while True:
        nl = buf.find(b"\n", i)
        if nl < 0:
            return -1
        if buf.count(b'"', start, nl) % 2 == 0:
            return nl
        i = nl + 1


def _last_record_end(buf: bytes) -> int:
    """The position just after the last newline that ends a row (not one inside
    quotes); 0 when there is none. `buf` starts at the start of a row."""
    if b'"' not in buf:
        return buf.rfind(b"\n") + 1
    arr = np.frombuffer(buf, dtype=np.uint8)
    inside = np.bitwise_xor.accumulate((arr == _QUOTE).view(np.uint8))
    ends = np.flatnonzero((arr == _NL) & (inside == 0))
    return int(ends[-1]) + 1 if len(ends) else 0


def _not_utf8(file: str, buf: bytes, exc: UnicodeDecodeError, line: int) -> FileProblem:
    before = buf.rfind(b"\n", 0, exc.start)
    return FileProblem("not_utf8", file=file, line=line + buf.count(b"\n", 0, exc.start),
                       byte=buf[exc.start], column=exc.start - before)


def _detect_separator(header: str) -> int:
    """The separator that splits the header into the most columns (comma on a tie)."""
    best, count = ",", 0
    for candidate in (",", ";", "\t"):
        n = len(next(csv.reader([header], delimiter=candidate)))
        if n > count:
            best, count = candidate, n
    return ord(best)


def _check_type(file: str, column: str, dtype: pl.DataType) -> None:
    """Refuse a column whose type cannot be validated (a field) or carried
    through to every output format (any other column)."""
    if column in FIELD_NAMES:
        if not (dtype.is_numeric() or isinstance(dtype, (pl.String, pl.Categorical, pl.Enum,
                                                         pl.Boolean, pl.Date, pl.Datetime,
                                                         pl.Null))):
            raise FileProblem("unsupported_type", file=file, column=column, dtype=str(dtype),
                              hint="a field must be text, a number, a date or a boolean")
    elif dtype.is_nested() or isinstance(dtype, (pl.Object, pl.Binary, pl.Duration)):
        raise FileProblem("unsupported_type", file=file, column=column, dtype=str(dtype),
                          hint="a carried column must hold single values (text, numbers, "
                               "dates); flatten it or leave it out")


class ParquetSource(Source):
    """Parquet, typed or text columns; read a batch of rows at a time by
    Polars' streaming engine (each pass a query of its own: passes may run in
    separate threads)."""

    kind = "parquet"

    def __init__(self, file: str, target: Path | bytes, mapping: Mapping[str, str],
                 limits: Limits):
        self._target = target
        try:
            schema = self._scan().collect_schema()
            self.total = int(self._scan().select(pl.len()).collect().item())
        except (pl.exceptions.PolarsError, OSError) as exc:
            raise FileProblem("not_format", file=file, kind="Parquet",
                              detail=str(exc).splitlines()[0]) from None
        raw_names = list(schema)
        super().__init__(file, [n.strip() for n in raw_names], mapping, limits)
        self._raw_names = raw_names
        for raw, name in zip(raw_names, self.columns, strict=True):
            _check_type(file, name, schema[raw])
        limits.check_shape(file, self.total, len(raw_names))

    def _scan(self) -> pl.LazyFrame:
        target = self._target
        return pl.scan_parquet(io.BytesIO(target) if isinstance(target, bytes) else target)

    def chunks(self, chunk_rows: int, columns: list[str] | None = None) -> Iterator[Chunk]:
        lf = self._scan()
        if columns is not None:
            lf = lf.select([self._raw_names[self.columns.index(c)] for c in columns])
        offset = 0
        try:
            # an iterator left unfinished is dropped with this generator, which ends its query
            for frame in lf.collect_batches(chunk_size=min(chunk_rows, 1 << 30)):
                frame.columns = [n.strip() for n in frame.columns]
                # a repeated dictionary value costs nothing in the file, but every
                # use of it is text to work on and to write
                self.limits.check_text(self.file, text_bytes(frame))
                rows = np.arange(offset + 1, offset + frame.height + 1, dtype=np.int64)
                offset += frame.height
                yield Chunk(self._finish(frame), rows, 0, offset)
        except (pl.exceptions.PolarsError, OSError) as exc:
            raise FileProblem("unparsable", file=self.file, line=offset + 1,
                              detail=str(exc).splitlines()[0]) from None


class XlsxSource(Source):
    """The first sheet of an Excel workbook, header in its first row, every
    cell read as text (a whole sheet fits in memory: at most ~1M rows)."""

    kind = "xlsx"

    def __init__(self, file: str, target: Path | bytes, mapping: Mapping[str, str],
                 limits: Limits):
        import fastexcel

        # the reader lays out the whole area the sheet spans, and expands every
        # shared string: what the file holds is checked first
        check_xlsx(file, target, limits)
        try:
            reader = fastexcel.read_excel(target if isinstance(target, bytes) else str(target))
            sheet = reader.load_sheet(0, header_row=None, dtypes="string")
            raw = sheet.to_polars()
        except Exception as exc:  # fastexcel raises its own error classes, per cause
            raise FileProblem("not_format", file=file, kind="Excel (.xlsx)",
                              detail=str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                              ) from None
        if raw.height == 0:
            raise FileProblem("empty", file=file)
        header = [("" if v is None else str(v).strip()) for v in raw.row(0)]
        body = raw.slice(1)
        # a column with neither a name nor any value is only formatting left behind
        nulls = body.null_count().row(0) if body.height else (0,) * len(header)
        keep = [i for i, n in enumerate(header) if n or nulls[i] < body.height]
        raw_columns = raw.columns
        body = body.select([raw_columns[i] for i in keep])
        names = [header[i] for i in keep]
        super().__init__(file, names, mapping, limits)
        body.columns = names
        body = self._finish(body)
        dates = [c for c in body.columns if c in BY_NAME and BY_NAME[c].kind == "date"]
        body = body.with_columns(pl.col(dates).str.replace(_DATE_CELL, "${1}"))
        blank = body.select(pl.all_horizontal(pl.all().is_null())).to_series()
        self._rows = np.flatnonzero(~blank.to_numpy()).astype(np.int64) + 2
        self._blank = int(blank.sum())
        self._frame = body.filter(~blank)
        self.total = self._frame.height

    def chunks(self, chunk_rows: int, columns: list[str] | None = None) -> Iterator[Chunk]:
        frame = self._frame if columns is None else self._frame.select(columns)
        if frame.height == 0:
            yield Chunk(frame, self._rows, self._blank, 0)
            return
        for start in range(0, frame.height, chunk_rows):
            part = frame.slice(start, chunk_rows)
            yield Chunk(part, self._rows[start:start + part.height],
                        self._blank if start == 0 else 0, start + part.height)


# ----------------------------------------------------------------------- sinks


class Sink:
    """An output written to a temporary file beside it: `complete()` finishes
    that file, `put_in_place()` renames the outputs of a run to their names
    (all or none), `abort()` removes the temporary file. A run that dies
    leaves at most a hidden `.NAME.*.part` file, never a file under the
    output's name."""

    def __init__(self, path: Path, overwrite: bool):
        self.path = path
        self.overwrite = overwrite
        self.rows = 0
        # created like any new file (mkstemp would make it private to its owner);
        # its name is known to `discard_unfinished` before the file exists, so an
        # interrupt at any moment of opening still finds it
        while True:
            self.tmp = path.parent / f".{path.name}.{secrets.token_hex(4)}.part"
            _unfinished.add(self.tmp)
            try:
                with _writing(path):
                    self.tmp.open("xb").close()
                break
            except FileExistsError:
                _unfinished.discard(self.tmp)
                continue
            except BaseException:  # an interrupt: the file, if made, is this run's
                self.tmp.unlink(missing_ok=True)
                _unfinished.discard(self.tmp)
                raise

    def write(self, frame: pl.DataFrame) -> None:
        self.rows += frame.height
        with _writing(self.path):
            self._write(frame)

    def _write(self, frame: pl.DataFrame) -> None:
        raise NotImplementedError

    def _close(self) -> None:
        pass

    def complete(self) -> None:
        """Finish the temporary file; nothing is under the output's name yet."""
        with _writing(self.path):
            self._close()

    def finish(self) -> None:
        """Complete this output and put it in place (one output alone)."""
        self.complete()
        put_in_place([self])

    def abort(self) -> None:
        try:
            self._close()
        except OSError:
            pass
        finally:
            self.tmp.unlink(missing_ok=True)
            _unfinished.discard(self.tmp)


# The temporary files of this process's outputs not yet put in place or removed.
_unfinished: set[Path] = set()


def discard_unfinished() -> None:
    """Remove every temporary output file this process still has: called by a
    command that was interrupted, after its own clean-up, for a file whose
    sink was being opened when the interrupt came."""
    for tmp in list(_unfinished):
        tmp.unlink(missing_ok=True)
        _unfinished.discard(tmp)


class _writing:
    """OSError (a read-only folder, a full disk, /proc...) as a FileProblem naming the output."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, tb) -> bool:
        if isinstance(exc, OSError) and not isinstance(exc, FileExistsError):
            raise FileProblem("cannot_write", file=str(self.path),
                              detail=exc.strerror or str(exc)) from None
        return False


def commit_all(sinks: list[Sink], started: Callable[[], None] | None = None) -> None:
    """Finish every output of a run and put them all in place together (see
    `put_in_place`); `sinks` is emptied, so nothing is discarded afterwards."""
    for sink in sinks:
        sink.complete()
    put_in_place(sinks, started)
    sinks.clear()


def abort_all(sinks: Sequence[Sink]) -> None:
    """Discard the temporary files of a run that did not finish."""
    for sink in sinks:
        sink.abort()


def put_in_place(sinks: Sequence[Sink], started: Callable[[], None] | None = None) -> None:
    """Rename the completed outputs of a run to their names: all of them, or
    none (the files they were to replace left as they were). An existing file
    is replaced only with `overwrite`; it is kept under a hidden name (a hard
    link) until every output is in place, and put back if any fails.
    `started()` is called just before the first rename."""
    done: list[tuple[Sink, Path | None]] = []
    try:
        if started is not None:
            started()
        for sink in sinks:
            backup = _keep(sink.path) if sink.overwrite and os.path.lexists(sink.path) else None
            done.append((sink, backup))
            with _writing(sink.path):
                if sink.overwrite:
                    os.replace(sink.tmp, sink.path)
                    continue
                try:  # never replace a file that appeared meanwhile
                    os.link(sink.tmp, sink.path)
                except FileExistsError:
                    raise FileProblem("output_exists", file=str(sink.path)) from None
                except OSError:  # no hard links on this file system
                    if os.path.lexists(sink.path):
                        raise FileProblem("output_exists", file=str(sink.path)) from None
                    os.replace(sink.tmp, sink.path)
                    continue
                sink.tmp.unlink()
    except BaseException:
        for sink, backup in reversed(done):
            _undo(sink, backup)
        for sink in sinks:
            sink.tmp.unlink(missing_ok=True)
            _unfinished.discard(sink.tmp)
        raise
    for sink in sinks:
        _unfinished.discard(sink.tmp)
    for _, backup in done:
        if backup is not None:
            backup.unlink(missing_ok=True)


def _keep(path: Path) -> Path:
    """A hidden hard link to the file at `path` (a copy where links are not possible)."""
    while True:
        backup = path.parent / f".{path.name}.{secrets.token_hex(4)}.old"
        try:
            with _writing(path):
                try:
                    os.link(path, backup)
                except FileExistsError:
                    raise
                except OSError:
                    import shutil

                    shutil.copy2(path, backup)
            return backup
        except FileExistsError:
            continue


def _placed(sink: Sink) -> bool:
    if not os.path.lexists(sink.path):
        return False
    if not sink.tmp.exists():
        return True  # renamed (or linked, then its temporary name removed)
    try:
        return os.path.samefile(sink.tmp, sink.path)
    except OSError:
        return False


def _undo(sink: Sink, backup: Path | None) -> None:
    """Put back what was under the output's name before this run."""
    if _placed(sink):
        if backup is not None:
            os.replace(backup, sink.path)
            return
        sink.path.unlink(missing_ok=True)
    if backup is not None:
        backup.unlink(missing_ok=True)


# OWASP, "CSV Injection": a cell that begins with one of these is a formula to a
# spreadsheet. Plain numbers (-2, +1.50) are left as they are: a spreadsheet
# reads them as numbers, never as formulas.
_FORMULA_START = r"^[=+\-@\t\r]"
_PLAIN_NUMBER = r"^[+-]?[0-9]+(\.[0-9]+)?$"


def neutralise_formulas(frame: pl.DataFrame) -> pl.DataFrame:
    """Text cells a spreadsheet would take for a formula, with a single quote
    put before them; other cells (and every non-text column) unchanged."""
    text = [c for c, t in frame.schema.items() if t == pl.String]
    if not text:
        return frame
    return frame.with_columns(
        pl.when(pl.col(c).str.contains(_FORMULA_START)
                & ~pl.col(c).str.contains(_PLAIN_NUMBER))
        .then(pl.lit("'") + pl.col(c)).otherwise(pl.col(c)).alias(c)
        for c in text)


class CsvSink(Sink):
    """CSV, with cells that a spreadsheet would run as formulas neutralised."""

    def __init__(self, path: Path, overwrite: bool):
        self._fh: IO[bytes] | None = None
        super().__init__(path, overwrite)
        with _writing(path):
            self._fh = self.tmp.open("wb")
        self._header = True

    def _write(self, frame: pl.DataFrame) -> None:
        assert self._fh is not None
        neutralise_formulas(frame).write_csv(self._fh, include_header=self._header)
        self._header = False

    def _close(self) -> None:
        if self._fh is not None:
            fh, self._fh = self._fh, None
            fh.close()


class ParquetSink(Sink):
    def __init__(self, path: Path, overwrite: bool):
        super().__init__(path, overwrite)
        self._writer: Any = None

    def _write(self, frame: pl.DataFrame) -> None:
        import pyarrow.parquet as pq

        table = frame.to_arrow(compat_level=pl.CompatLevel.oldest())
        if self._writer is None:
            self._writer = pq.ParquetWriter(self.tmp, table.schema)
        self._writer.write_table(table)

    def _close(self) -> None:
        if self._writer is not None:
            writer, self._writer = self._writer, None
            writer.close()


XLSX_MAX_CELL = 32_767  # characters an Excel cell holds


class XlsxSink(Sink):
    """A sheet holds at most ~1M rows, so the rows are gathered and written at
    the end. A value longer than a cell holds is refused, never cut."""

    def __init__(self, path: Path, overwrite: bool):
        super().__init__(path, overwrite)
        self._frames: list[pl.DataFrame] = []

    def _write(self, frame: pl.DataFrame) -> None:
        if self.rows > XLSX_MAX_ROWS:
            raise FileProblem("xlsx_too_big", file=str(self.path), rows=f"{self.rows:,}",
                              limit=f"{XLSX_MAX_ROWS:,}")
        for c, t in frame.schema.items():
            if t != pl.String:
                continue
            lengths = frame.get_column(c).str.len_chars()
            if (lengths.max() or 0) > XLSX_MAX_CELL:
                i = int((lengths > XLSX_MAX_CELL).arg_true()[0])
                pid = frame.get_column("participant_id")[i] if "participant_id" in frame.columns \
                    else None
                pid = "-" if pid is None else str(pid)
                raise FileProblem("xlsx_cell_too_long", file=str(self.path), column=c,
                                  participant=pid if len(pid) <= 40 else pid[:40] + "…",
                                  n=f"{lengths[i]:,}", limit=f"{XLSX_MAX_CELL:,}")
        self._frames.append(frame)

    def _close(self) -> None:
        if not self._frames:
            return
        frame = pl.concat(self._frames, how="vertical")
        self._frames = []
        money = [c for c, t in frame.schema.items() if isinstance(t, pl.Decimal)]
        buf = io.BytesIO()
        frame.write_excel(
            buf, worksheet="diferida", autofit=frame.height <= 10_000,
            dtype_formats={pl.Date: "yyyy-mm-dd"},
            column_formats=dict.fromkeys(money, "0.00"),
        )
        self.tmp.write_bytes(buf.getvalue())

    def abort(self) -> None:
        self._frames = []
        super().abort()


class BytesSink(Sink):
    """An output made whole in memory (a workbook, a picture, JSON, a page):
    set `data`; it is written to the temporary file when completed."""

    def __init__(self, path: Path, overwrite: bool):
        super().__init__(path, overwrite)
        self.data: bytes | None = None

    def _close(self) -> None:
        if self.data is not None:
            data, self.data = self.data, None
            self.tmp.write_bytes(data)


def open_sink(path: Path, overwrite: bool) -> Sink:
    kind = kind_of(path)
    return {"csv": CsvSink, "parquet": ParquetSink, "xlsx": XlsxSink}[kind](path, overwrite)
