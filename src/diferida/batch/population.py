"""One pass over a population file, shared by `batch`, `project`, `compare`,
`census` and the workbench's import (anything that decides a file of
members): read in chunks, decide each chunk (a function the caller passes),
reject a row whose id appeared in an earlier chunk, account for every row,
renumber the rejects to the file's rows, write them or keep a sample, report
progress. What each command does with the rows it keeps is its own (`use`).
A command does not make a pass itself: `run.PopulationRun` opens the
source, makes the pass, and owns the outputs and the clean-up around it.

Rows read = rows kept + rows rejected, checked chunk by chunk (a run where it
does not hold fails loudly; the caller writes nothing).

Other threads: the pass over the ids (for duplicates across chunks), reading
the next chunk while one is decided, and writing outputs in order while the
next is decided (Polars' readers and writers release the GIL). One thread
each, so reads and writes each keep their order; one chunk is read ahead and
at most one write waits, which keeps memory bounded."""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ..errors import DiferidaError
from ..words import error_message, field_label
from .errors import FileProblem
from .io import Chunk, Source, kind_of
from .outputs import Sink

REJECT_COLUMNS = ("row", "participant_id", "field", "code", "value", "message")


class AccountingError(DiferidaError, RuntimeError):
    """Rows read ≠ rows kept + rows rejected: a bug, never to pass silently."""


# ---- the places of the outputs ------------------------------------------------

def same_file(a: Path, b: Path) -> bool:
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)  # two names of one file (a hard link)
    except OSError:
        return False


def check_place(path: Path, inputs: Sequence[Path], overwrite: bool, option: str,
                outputs: Sequence[tuple[str, Path]]) -> None:
    """An output's place: its folder there, neither an input nor another
    output of the run (`outputs`: (option, path) of those checked before),
    and free unless `overwrite`."""
    if not path.parent.is_dir():
        raise FileProblem("no_directory", file=str(path), directory=str(path.parent))
    for other_option, other in outputs:
        if same_file(path, other):
            raise FileProblem("same_output", file=str(path), option=option, other=other_option)
    for other in inputs:
        if same_file(path, other):
            raise FileProblem("output_is_input", file=str(path))
    if path.exists() and not overwrite:
        raise FileProblem("output_exists", file=str(path))


def check_table_target(path: Path, inputs: Sequence[Path], overwrite: bool, *,
                       option: str = "-o/--output",
                       outputs: Sequence[tuple[str, Path]] = ()) -> None:
    """A table output (`option` names it in messages): a known format, and a
    place of its own (see `check_place`)."""
    kind_of(path)
    check_place(path, inputs, overwrite, option, outputs)


def check_other_target(path: Path, inputs: Sequence[Path], overwrite: bool,
                       suffixes: Sequence[str] | None = None, *, option: str,
                       outputs: Sequence[tuple[str, Path]] = ()) -> None:
    """An output that is not a table (a picture, JSON, a page)."""
    if suffixes is not None and path.suffix.lower() not in suffixes:
        raise FileProblem(f"{path}: unknown format by its suffix '{path.suffix}'; use "
                          f"{' or '.join(suffixes)}")
    check_place(path, inputs, overwrite, option, outputs)


# ---- duplicate ids across chunks (rules §1) -------------------------------------

def _id_text(ids: pl.Series) -> pl.Series:
    """Ids as the core compares them: text, stripped; blank means none."""
    text = ids.str.strip_chars() if ids.dtype == pl.String else ids.cast(pl.String)
    return text.replace("", None)


def later_duplicates(src: Source, chunk_rows: int, stop: threading.Event) -> np.ndarray:
    """Positions (0-based, whole file) of rows whose id appeared in an earlier
    row: found in one pass over the id column alone, so that rules §1 ("the
    first row with that id is evaluated, each later one is rejected") holds
    across chunks exactly as within one."""
    parts = []
    for c in src.chunks(chunk_rows, columns=["participant_id"]):
        if stop.is_set():  # the run has failed or was stopped
            return np.empty(0, dtype=np.int64)
        parts.append(c.frame.get_column("participant_id"))
    if not parts:
        return np.empty(0, dtype=np.int64)
    ids = _id_text(pl.concat(parts))
    later = ids.is_not_null() & ~ids.is_first_distinct()
    return np.flatnonzero(later.to_numpy()).astype(np.int64)


def _mask(h: int, rows: pl.DataFrame) -> np.ndarray:
    out = np.zeros(h, dtype=bool)
    if rows.height:
        out[rows["row"].to_numpy()] = True
    return out


def reject_rows(kept: tuple[pl.DataFrame, ...], bad: pl.DataFrame, more: pl.DataFrame,
                h: int) -> tuple[tuple[pl.DataFrame, ...], pl.DataFrame]:
    """Reject the rows of `more` (rejects of a check of the caller's own,
    chunk-local rows) too: taken out of every kept table, added to `bad`
    after the row's earlier problems."""
    if not more.height:
        return kept, bad
    flagged = _mask(h, more)
    keep = pl.Series(~flagged[~_mask(h, bad)])
    bad = pl.concat([bad, more.cast(bad.schema)]).sort("row", maintain_order=True)
    return tuple(k.filter(keep) for k in kept), bad


def _reject_later(frame: pl.DataFrame, kept: tuple[pl.DataFrame, ...], bad: pl.DataFrame,
                  local: np.ndarray, lang: str) -> tuple[tuple[pl.DataFrame, ...], pl.DataFrame]:
    """Reject rows of this chunk whose id appeared in an earlier chunk."""
    h = frame.height
    later = np.zeros(h, dtype=bool)
    later[local] = True
    keep = pl.Series(~later[~_mask(h, bad)])  # kept tables hold the unrejected rows
    kept = tuple(k.filter(keep) for k in kept)
    has_id_error = _mask(h, bad.filter(pl.col("field") == "participant_id"))
    need = local[~has_id_error[local]]
    if len(need):
        ids = _id_text(frame.get_column("participant_id")).gather(need).to_list()
        label = f"{field_label(lang, 'participant_id')} (participant_id)"
        extra = pl.DataFrame(
            {"row": need, "participant_id": ids, "field": "participant_id",
             "code": "duplicate_id", "value": ids,
             "message": [f"{label}: {error_message(lang, 'duplicate_id', v)}" for v in ids]},
            schema=bad.schema,
        )
        # participant_id is the first field, so its error comes first in its row
        bad = pl.concat([extra, bad]).sort("row", maintain_order=True)
    return kept, bad


def empty_rejects() -> pl.DataFrame:
    return pl.DataFrame(schema={"row": pl.Int64, **{c: pl.String for c in REJECT_COLUMNS[1:]}})


# ---- the pass --------------------------------------------------------------------

@dataclass
class Decided:
    """One chunk, decided: the tables of the rows kept (each one row per kept
    row, in the file's order), where those rows are in the chunk, and the
    rejects (numbered by the file's rows)."""

    chunk: Chunk
    kept: tuple[pl.DataFrame, ...]
    positions: np.ndarray  # chunk-local positions of the kept rows
    rejects: pl.DataFrame


# A chunk's frame -> (the kept tables, the rejects with chunk-local rows)
Decide = Callable[[pl.DataFrame], tuple[tuple[pl.DataFrame, ...], pl.DataFrame]]


@dataclass
class Tally:
    """What the pass counted."""

    rows_read: int = 0
    rows_rejected: int = 0
    problems: int = 0
    blank: int = 0
    kept: int = 0


class PopulationPass:
    """Reads `src` in chunks of `chunk_rows`, decides each, and hands the
    decided chunks to `use`, in order. The rejects go to `rejects` (a sink,
    written on the writer thread) or, without one, the first
    `sample_rejects` of them are kept in `sample`. `seconds` gets "read",
    "decide" and "write" added to it (the caller's own work in `use` counts
    as "decide"); `progress(done, total)` is called after each chunk."""

    def __init__(self, src: Source, chunk_rows: int, *, lang: str,
                 rejects: Sink | None = None, sample_rejects: int = 50,
                 progress: Callable[[int, int], None] | None = None,
                 seconds: dict[str, float] | None = None):
        self.src, self.chunk_rows, self.lang = src, chunk_rows, lang
        self.rejects, self.sample_rejects, self.progress = rejects, sample_rejects, progress
        self.seconds = seconds if seconds is not None else {}
        for key in ("read", "decide", "write"):
            self.seconds.setdefault(key, 0.0)
        self.tally = Tally()
        self._samples: list[pl.DataFrame] = []
        self._sampled = 0
        self._writes: list[Future] = []
        self._writer = ThreadPoolExecutor(1, "diferida-pass-writer")

    @property
    def sample(self) -> pl.DataFrame:
        return pl.concat(self._samples) if self._samples else empty_rejects()

    def write(self, sink: Sink, frame: pl.DataFrame) -> None:
        """Write `frame` to `sink` on the writer thread, after the writes
        before it (at most one waits: a write's error is raised here)."""
        while len(self._writes) > 1:
            self._writes.pop(0).result()
        self._writes.append(self._writer.submit(_timed, self.seconds, "write", sink.write,
                                                frame))

    def finish_writes(self) -> None:
        while self._writes:
            self._writes.pop(0).result()

    def stop(self) -> None:
        """Stop writing: the write under way ends first, those waiting are dropped."""
        self._writer.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        self._writer.shutdown(wait=False)

    def run(self, decide: Decide, use: Callable[[Decided], None]) -> Tally:
        secs, src, chunk_rows = self.seconds, self.src, self.chunk_rows
        ids_pass, reader = (ThreadPoolExecutor(1, f"diferida-pass-{name}")
                            for name in ("ids", "reader"))
        chunks: Iterator[Chunk] = iter(())
        stopping = threading.Event()

        def read_ahead() -> Iterator[Chunk]:
            pending = reader.submit(_timed, secs, "read", next, chunks, None)
            while (chunk := pending.result()) is not None:
                pending = reader.submit(_timed, secs, "read", next, chunks, None)
                yield chunk

        try:
            tick = time.perf_counter()
            chunks = src.chunks(chunk_rows)
            first = next(chunks, None)
            second = next(chunks, None) if first is not None else None
            secs["read"] += time.perf_counter() - tick
            # Duplicate ids across chunks are found by a pass over the id column,
            # run while the first chunk is decided (which does not need it: ids
            # repeated within one chunk are the core's to reject).
            ids_secs = {"read": 0.0}  # added when done: the reader adds to "read" meanwhile
            duplicates = ids_pass.submit(_timed, ids_secs, "read", later_duplicates, src,
                                         chunk_rows, stopping) if second is not None else None
            later = None
            stream = itertools.chain((c for c in (first, second) if c is not None),
                                     read_ahead())
            offset = 0
            for index, chunk in enumerate(stream):
                if index == 1 and duplicates is not None:
                    later = duplicates.result()
                    secs["read"] += ids_secs["read"]
                tick = time.perf_counter()
                self.tally.blank += chunk.blank
                h = chunk.frame.height
                if h:
                    decided = self._decide(chunk, decide, later, offset)
                    use(decided)
                    self._rejects(decided.rejects)
                offset += h
                secs["decide"] += time.perf_counter() - tick
                if self.progress is not None:
                    self.progress(chunk.done, src.total)
            self.finish_writes()
            return self.tally
        except BaseException:
            stopping.set()
            # the chunk being read is the last: then the source stops its own work
            reader.submit(getattr(chunks, "close", lambda: None))
            raise
        finally:
            for pool in (ids_pass, reader):
                pool.shutdown(wait=False)  # none waits for the others; each ends its task

    def _decide(self, chunk: Chunk, decide: Decide, later: np.ndarray | None,
                offset: int) -> Decided:
        frame = chunk.frame
        h = frame.height
        kept, bad = decide(frame)
        if later is not None:
            lo, hi = np.searchsorted(later, [offset, offset + h])
            if hi > lo:
                kept, bad = _reject_later(frame, kept, bad, later[lo:hi] - offset, self.lang)
        rejected = _mask(h, bad)
        n_bad = int(rejected.sum())
        if any(k.height != h - n_bad for k in kept):
            raise AccountingError(f"{h} rows in a chunk, {[k.height for k in kept]} kept, "
                                  f"{n_bad} rejected")
        numbers = chunk.rows[bad["row"].to_numpy()] if bad.height else []
        bad = bad.with_columns(pl.Series("row", numbers, dtype=pl.Int64)).select(
            REJECT_COLUMNS)
        t = self.tally
        t.rows_read += h
        t.rows_rejected += n_bad
        t.problems += bad.height
        t.kept += h - n_bad
        return Decided(chunk, kept, np.flatnonzero(~rejected), bad)

    def _rejects(self, bad: pl.DataFrame) -> None:
        if self.rejects is not None:
            self.write(self.rejects, bad)
        elif self._sampled < self.sample_rejects and bad.height:
            self._samples.append(bad.head(self.sample_rejects - self._sampled))
            self._sampled += self._samples[-1].height


def _timed(seconds: dict[str, float], key: str, fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)`, its time added to `seconds[key]`."""
    tick = time.perf_counter()
    try:
        return fn(*args)
    finally:
        seconds[key] += time.perf_counter() - tick
