"""Outputs of a run (determinations, rejects, summaries, pictures), each
written to a temporary file beside its name and put in place only when the
run is complete: all of a run's outputs, or none (`put_in_place`). CSV cells
a spreadsheet would run as formulas are neutralised; an Excel sheet's limits
are refused, never cut."""

from __future__ import annotations

import io
import os
import queue
import secrets
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any, Literal, cast

import polars as pl

from .errors import FileProblem
from .io import kind_of

__all__ = [
    "XLSX_MAX_ROWS",
    "BytesSink",
    "Sink",
    "abort_all",
    "commit_all",
    "discard_unfinished",
    "neutralise_formulas",
    "open_sink",
    "put_in_place",
]

XLSX_MAX_ROWS = 1_048_576 - 1  # rows of an Excel sheet, less the header


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
            except BaseException:  # an interrupt, or a folder we cannot write to
                if _remove(self.tmp):
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
        except (OSError, FileProblem):
            pass
        finally:
            if _remove(self.tmp):
                _unfinished.discard(self.tmp)


# The temporary files of this process's outputs not yet put in place or removed.
_unfinished: set[Path] = set()


def _remove(tmp: Path) -> bool:
    """Remove a temporary file of this run, if it is there; False when it
    could not be removed. A clean-up never raises: it runs while an error is
    being reported (a read-only folder refuses even the removal of a file
    that was never made, and the error to report is the first one)."""
    try:
        tmp.unlink(missing_ok=True)
    except OSError:
        return False
    return True


def discard_unfinished() -> None:
    """Remove every temporary output file this process still has: called by a
    command that was interrupted or refused, after its own clean-up, for a
    file whose sink was being opened when the interrupt came."""
    for tmp in list(_unfinished):
        if _remove(tmp):
            _unfinished.discard(tmp)


class _writing:
    """OSError (a read-only folder, a full disk, /proc...) as a FileProblem naming the output."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, tb) -> Literal[False]:
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
        undone: FileProblem | None = None
        for sink, backup in reversed(done):
            try:
                _undo(sink, backup)
            except OSError as exc:  # the folder refuses the undoing too: say so
                undone = undone or FileProblem(
                    "cannot_write", file=str(sink.path),
                    detail=f"{exc.strerror or exc}; what was there could not be put back")
        for sink in sinks:
            if _remove(sink.tmp):
                _unfinished.discard(sink.tmp)
        if undone is not None:
            raise undone from None
        raise
    for sink in sinks:
        _unfinished.discard(sink.tmp)
    for _, backup in done:
        if backup is not None:
            _remove(backup)  # every output is in place: a hidden .old left is no error


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
        _remove(backup)


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
        try:
            with _writing(path):
                self._fh = self.tmp.open("wb")
        except BaseException:
            self.abort()
            raise
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
    """Parquet, written by Polars' streaming sink as the frames come: the
    sink runs in a thread of its own and reads the frames from a short queue
    (at most two wait, which bounds memory), so one file is written from
    frames given one at a time. An error of the sink is raised by the next
    `write`, or by `complete`."""

    _END, _STOP = object(), object()

    def __init__(self, path: Path, overwrite: bool):
        super().__init__(path, overwrite)
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=2)
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def _frames(self, with_columns: list[str] | None, *_: Any):
        while (frame := self._queue.get()) is not self._END:
            if frame is self._STOP:
                raise _Stopped
            yield frame if with_columns is None else frame.select(with_columns)

    def _sink(self, schema: pl.Schema) -> None:
        from ..speed.unstable import sink_parquet

        try:
            sink_parquet(self._frames, schema, self.tmp, compression="snappy")
        except BaseException as exc:  # noqa: BLE001 (raised on the caller's thread)
            self._error = exc
            while True:  # a caller waiting to hand over a frame must not wait forever
                try:
                    self._queue.get_nowait()
                except queue.Empty:
                    break

    def _raise(self) -> None:
        exc = self._error  # kept: every later write, and completing, fail too
        if exc is None:
            return
        if isinstance(exc, OSError):
            raise exc
        raise FileProblem("cannot_write", file=str(self.path),
                          detail=str(exc).splitlines()[0] if str(exc) else type(exc).__name__)

    def _put(self, item: Any) -> None:
        while self._thread is not None and self._thread.is_alive():
            try:
                self._queue.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def _write(self, frame: pl.DataFrame) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._sink, args=(frame.schema,),
                                            name="diferida-parquet", daemon=True)
            self._thread.start()
        self._raise()
        self._put(frame)
        self._raise()

    def _end(self, item: Any) -> None:
        """Hand the sink its last item (the end, or a stop) and wait for it."""
        if self._thread is not None:
            self._put(item)
            self._thread.join()
            self._thread = None

    def _close(self) -> None:
        self._end(self._END)
        self._raise()

    def abort(self) -> None:
        self._end(self._STOP)
        self._error = None
        super().abort()


class _Stopped(Exception):
    """Ends a Parquet sink whose run was abandoned."""


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
            if (cast(int | None, lengths.max()) or 0) > XLSX_MAX_CELL:
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
