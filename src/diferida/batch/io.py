"""Tables of participants in files: CSV, Parquet and Excel (.xlsx), read in
chunks of bounded size, each row with the number a person opening the file
would give it. (Outputs are written by `outputs.py`.)

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
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import polars as pl

from .. import article19
from ..bounded import Refused, regular_size
from ..fields import BY_NAME, FIELD_NAMES
from ..speed.unstable import batches
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
    "read_table",
    "row_numbers",
]

KINDS = {".csv": "csv", ".parquet": "parquet", ".xlsx": "xlsx"}
_FIRST_ROW = {"csv": 2, "xlsx": 2, "parquet": 1}

# Columns a file must have. separation_date is among them although a value may
# be empty (still in service): a file without the column would silently make
# everyone "not separated". requested_start_date, deferred_right_1960 (rules §1
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
    """A file's table of participants, columns named as the rules §1 fields
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
        opener: Callable[[], IO[bytes]] = lambda: io.BytesIO(data)  # noqa: E731
        target: Any = data
    else:
        path = Path(source)
        file = filename or str(path)
        kind = kind_of(filename or path)
        try:
            size = regular_size(path)
        except Refused as exc:
            if exc.reason in ("directory", "not_regular"):
                raise FileProblem("not_regular", file=file) from None
            if exc.reason == "unreadable":
                raise FileProblem("unreadable", file=file, detail=exc.values["detail"]) from None
            raise FileProblem("not_found", file=file) from None
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
                rows, counted_all = _count_rows(fh, limits.rows)
            limits.check_shape(file, rows, len(names), counted_all=counted_all)

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
                newlines = piece.count(b"\n")
                yield self._parse(piece, line, newlines, project, final=not data, done=done)
                line += newlines
                if not data:
                    return

    def _parse(self, piece: bytes, line: int, newlines: int, project: list[int] | None,
               final: bool, done: int) -> Chunk:
        if b'"' not in piece:
            # the usual file: one row per line, so rows and lines need no search.
            # A blank line has no separators, so it shows in their count unless a
            # long row makes up for it, and a long row makes Polars fail: either
            # way the rows are then located one by one.
            rows = newlines + (not piece.endswith(b"\n"))
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
            # Polars reads a blank line as a row of nulls, but takes the number
            # of columns from the first line: leading blank lines are left out
            lead = int(np.argmax(~blank))
            try:
                frame = self._read(piece[int(starts[lead]):] if lead else piece,
                                   int(lines[lead]), project)
            except FileProblem:
                self._ragged(seps, starts, blank, lines, arr)
                raise
            if frame.height != len(starts) - lead:
                raise FileProblem("unparsable", file=self.file, line=line,
                                  detail="its rows cannot be told apart (stray quotes?)")
            if blank[lead:].any():
                frame = frame.filter(pl.Series(~blank[lead:]))
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


def _count_rows(fh: IO[bytes], limit: int) -> tuple[int, bool]:
    """Rows (records that are not blank lines) from here to the end, counted
    in blocks; stops counting once past `limit`. Returns the rows counted and
    whether they are all of them (False: the file has at least that many)."""
    rows, inside, last = 0, 0, _NL
    while (block := fh.read(1 << 24)):
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
        if rows > limit and fh.read(1):  # past the limit, more to read: the count stops
            return rows, False
    if last != _NL:
        rows += 1  # the last row has no newline
    return rows, True


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
            for frame in batches(lf, min(chunk_rows, 1 << 30)):
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
