"""A whole population from a file: read in chunks, evaluate each with the
core (`evaluate_frame`, the same path as one participant alone), write the
determinations and the rejects, and account for every row.

Rows read = rows determined + rows rejected, checked chunk by chunk and at
the end; a run where it does not hold fails loudly and writes nothing.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ..core import evaluate_frame
from ..i18n import LANGS
from ..outcomes import STATUSES
from ..rules import Rules, load_rules
from ..words import error_message, field_label
from .columns import ColumnsArg
from .defaults import DEFAULT_CHUNK_ROWS
from .errors import FileProblem
from .io import Chunk, Limits, Source, kind_of, open_source
from .messages import summary_text
from .outputs import XLSX_MAX_ROWS, Sink, commit_all, open_sink

REJECT_COLUMNS = ("row", "participant_id", "field", "code", "value", "message")

Progress = Callable[[int, int], None]


class AccountingError(AssertionError):
    """Rows read ≠ rows determined + rows rejected: a bug, never to pass silently."""


@dataclass
class Summary:
    """What a run did. `seconds` splits the time into reading, evaluating and
    writing (for Parquet, what the run waited for its sink: the sink writes on
    a thread of its own, while later chunks are evaluated); `sample` holds
    the first rejects when no rejects file was asked."""

    input: str
    output: str
    rejects: str | None
    rules_version: str
    as_of: date
    rows_read: int = 0
    by_status: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUSES, 0))
    rows_rejected: int = 0
    problems: int = 0
    blank: int = 0
    carried: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(
        default_factory=lambda: {"read": 0.0, "evaluate": 0.0, "write": 0.0, "total": 0.0})
    sample: pl.DataFrame | None = None

    @property
    def rows_determined(self) -> int:
        return sum(self.by_status.values())

    def check(self) -> None:
        if self.rows_read != self.rows_determined + self.rows_rejected:
            raise AccountingError(
                f"{self.rows_read} rows read, {self.rows_determined} determined, "
                f"{self.rows_rejected} rejected")

    def to_dict(self) -> dict[str, Any]:
        return {
            "input": self.input, "output": self.output, "rejects": self.rejects,
            "rules_version": self.rules_version, "as_of": self.as_of.isoformat(),
            "rows_read": self.rows_read, "rows_determined": self.rows_determined,
            "by_status": dict(self.by_status), "rows_rejected": self.rows_rejected,
            "problems": self.problems, "blank_lines": self.blank, "carried": self.carried,
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
        }

    def lines(self, lang: str) -> list[str]:
        """The summary as text, in Spanish or English."""
        def t(key: str, **kw: Any) -> str:
            return summary_text(lang, key, **kw)

        out = [t("title", input=self.input), t("read", n=f"{self.rows_read:,}"),
               t("determined", n=f"{self.rows_determined:,}")]
        out += [t("status", status=s, n=f"{n:,}") for s, n in self.by_status.items()]
        out.append(t("rejected", n=f"{self.rows_rejected:,}", problems=f"{self.problems:,}"))
        if self.blank:
            out.append(t("blank", n=f"{self.blank:,}"))
        if self.carried:
            out.append(t("carried", columns=", ".join(self.carried)))
        out.append(t("rules", rules=self.rules_version, as_of=self.as_of.isoformat()))
        out.append(t("output", path=self.output))
        if self.rejects:
            out.append(t("rejects", path=self.rejects))
        total = self.seconds["total"]
        out.append(t("time", **self.seconds, rate=self.rows_read / total if total else 0))
        return out


def _same_file(a: Path, b: Path) -> bool:
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)  # two names of one file (a hard link)
    except OSError:
        return False


def _check_place(path: Path, inputs: Sequence[Path], overwrite: bool, option: str,
                 outputs: Sequence[tuple[str, Path]]) -> None:
    """An output's place: its folder there, neither an input nor another
    output of the run (`outputs`: (option, path) of those checked before),
    and free unless `overwrite`."""
    if not path.parent.is_dir():
        raise FileProblem("no_directory", file=str(path), directory=str(path.parent))
    for other_option, other in outputs:
        if _same_file(path, other):
            raise FileProblem("same_output", file=str(path), option=option, other=other_option)
    for other in inputs:
        if _same_file(path, other):
            raise FileProblem("output_is_input", file=str(path))
    if path.exists() and not overwrite:
        raise FileProblem("output_exists", file=str(path))


def _check_target(path: Path, inputs: Sequence[Path], overwrite: bool, *,
                  option: str = "-o/--output", outputs: Sequence[tuple[str, Path]] = ()
                  ) -> None:
    """A table output (`option` names it in messages): a known format, and a
    place of its own (see `_check_place`)."""
    kind_of(path)
    _check_place(path, inputs, overwrite, option, outputs)


def _id_text(ids: pl.Series) -> pl.Series:
    """Ids as the core compares them: text, stripped; blank means none."""
    text = ids.str.strip_chars() if ids.dtype == pl.String else ids.cast(pl.String)
    return text.replace("", None)


def _later_duplicates(src: Source, chunk_rows: int, stop: threading.Event) -> np.ndarray:
    """Positions (0-based, whole file) of rows whose id appeared in an earlier
    row: found in one pass over the id column alone, so that SPEC §1 ("the
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


def _reject_later(frame: pl.DataFrame, det: pl.DataFrame, bad: pl.DataFrame,
                  local: np.ndarray, lang: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Reject rows of this chunk whose id appeared in an earlier chunk."""
    # masks over the chunk's rows: O(rows), where numpy's set functions sort or hash
    h = frame.height
    rejected = np.zeros(h, dtype=bool)
    rejected[bad["row"].to_numpy()] = True
    later = np.zeros(h, dtype=bool)
    later[local] = True
    det = det.filter(pl.Series(~later[~rejected]))  # determinations are the unrejected rows
    has_id_error = np.zeros(h, dtype=bool)
    has_id_error[bad.filter(pl.col("field") == "participant_id")["row"].to_numpy()] = True
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
    return det, bad


def evaluate_file(
    input: str | Path,
    output: str | Path,
    rejects: str | Path | None = None,
    *,
    as_of: date | None = None,
    rules: str | Path | Rules | None = None,
    lang: str = "es",
    separator: str | None = None,
    columns: ColumnsArg = None,
    overwrite: bool = False,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    progress: Progress | None = None,
    sample_rejects: int = 50,
    limits: Limits | None = None,
    on_rename: Callable[[], None] | None = None,
) -> Summary:
    """Evaluate every participant of a file (CSV, Parquet or .xlsx, by suffix)
    and write the determinations to `output` and the rejected rows, one line
    per bad field, to `rejects` (formats by suffix). Raises FileProblem for a
    file that cannot be used, before anything is written; outputs appear only
    when complete, both or neither. `progress(done, total)` is called after
    each chunk; `on_rename()` just before the completed outputs are renamed
    into place (from then on the run finishes, or puts back what it replaced);
    `limits` bound the table a file may hold (default `Limits()`)."""
    started = time.perf_counter()
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}; use one of {', '.join(LANGS)}")
    if chunk_rows < 1:
        raise ValueError("chunk_rows must be at least 1")
    inp, out = Path(input), Path(output)
    rej = Path(rejects) if rejects is not None else None
    kind_of(inp)
    _check_target(out, [inp], overwrite)
    if rej is not None:
        _check_target(rej, [inp], overwrite, option="--rejects", outputs=[("-o/--output", out)])
    r = load_rules(rules)
    day = as_of or date.today()  # one date for the whole run, even across midnight
    src = open_source(inp, separator=separator, columns=columns, limits=limits)
    if kind_of(out) == "xlsx" and src.kind != "csv" and src.total > XLSX_MAX_ROWS:
        raise FileProblem("xlsx_too_big", file=str(out), rows=f"{src.total:,}",
                          limit=f"{XLSX_MAX_ROWS:,}")
    summary = Summary(str(inp), str(out), str(rej) if rej else None, r.version, day,
                      carried=list(src.carried))
    secs = summary.seconds
    sinks: list[Sink] = []
    # Other threads: the pass over the ids, reading the next chunk while one is
    # evaluated, and writing the outputs in order while the next is evaluated
    # (Polars' and PyArrow's readers and writers release the GIL). One thread
    # each, so reads and writes each keep their order; one chunk is read ahead
    # and at most one write waits, which keeps memory bounded.
    ids_pass, reader, writer = (ThreadPoolExecutor(1, f"diferida-batch-{name}")
                                for name in ("ids", "reader", "writer"))
    writes: list[Future] = []
    chunks: Iterator[Chunk] = iter(())
    stopping = threading.Event()

    def write(sink: Sink, frame: pl.DataFrame) -> None:
        while len(writes) > 1:
            writes.pop(0).result()  # raises the write's error, if any
        writes.append(writer.submit(_timed, secs, "write", sink.write, frame))

    def read_ahead() -> Iterator[Chunk]:
        pending = reader.submit(_timed, secs, "read", next, chunks, None)
        while (chunk := pending.result()) is not None:
            pending = reader.submit(_timed, secs, "read", next, chunks, None)
            yield chunk

    try:
        out_sink = open_sink(out, overwrite)
        sinks.append(out_sink)
        rej_sink = open_sink(rej, overwrite) if rej is not None else None
        if rej_sink is not None:
            sinks.append(rej_sink)
        samples: list[pl.DataFrame] = []
        sampled = 0

        tick = time.perf_counter()
        chunks = src.chunks(chunk_rows)
        first = next(chunks, None)
        second = next(chunks, None) if first is not None else None
        secs["read"] += time.perf_counter() - tick
        # Duplicate ids across chunks are found by a pass over the id column,
        # run while the first chunk is evaluated (which does not need it: ids
        # repeated within one chunk are the core's to reject).
        ids_secs = {"read": 0.0}  # added when done: the reader adds to "read" meanwhile
        duplicates = ids_pass.submit(_timed, ids_secs, "read", _later_duplicates, src,
                                     chunk_rows, stopping) if second is not None else None
        later = None
        stream = itertools.chain((c for c in (first, second) if c is not None), read_ahead())

        offset = 0
        for index, chunk in enumerate(stream):
            if index == 1 and duplicates is not None:
                later = duplicates.result()
                secs["read"] += ids_secs["read"]
            tick = time.perf_counter()
            frame = chunk.frame
            h = frame.height
            summary.blank += chunk.blank
            if h:
                # carried columns are kept apart from the engine's by the core
                res = evaluate_frame(frame, as_of=day, rules=r, lang=lang, require_id=True)
                det, bad = res.determinations, res.rejected
                if later is not None:
                    lo, hi = np.searchsorted(later, [offset, offset + h])
                    if hi > lo:
                        det, bad = _reject_later(frame, det, bad, later[lo:hi] - offset, lang)
                n_bad = bad["row"].n_unique() if bad.height else 0
                if h != det.height + n_bad:
                    raise AccountingError(f"{h} rows in a chunk, {det.height} determined, "
                                          f"{n_bad} rejected")
                numbers = chunk.rows[bad["row"].to_numpy()] if bad.height else []
                bad = bad.with_columns(pl.Series("row", numbers, dtype=pl.Int64)).select(
                    REJECT_COLUMNS)
                summary.rows_read += h
                summary.rows_rejected += n_bad
                summary.problems += bad.height
                for status, n in det["status"].value_counts().iter_rows():
                    summary.by_status[status] = summary.by_status.get(status, 0) + n
            else:
                det = None
                bad = _empty_rejects()
            offset += h
            secs["evaluate"] += time.perf_counter() - tick

            if det is not None:
                write(out_sink, det)
            if rej_sink is not None:
                write(rej_sink, bad)
            elif sampled < sample_rejects and bad.height:
                samples.append(bad.head(sample_rejects - sampled))
                sampled += samples[-1].height
            if progress is not None:
                progress(chunk.done, src.total)

        while writes:
            writes.pop(0).result()
        if summary.rows_read == 0:
            raise FileProblem("no_rows", file=str(inp))
        summary.check()
        if out_sink.rows != summary.rows_determined:
            raise AccountingError(f"{summary.rows_determined} determined, "
                                  f"{out_sink.rows} written")
        tick = time.perf_counter()
        commit_all(sinks, on_rename)  # both outputs or neither: see put_in_place
        secs["write"] += time.perf_counter() - tick
        summary.sample = pl.concat(samples) if samples else _empty_rejects()
    except BaseException:
        stopping.set()
        # the chunk being read is the last: then the source stops its own work
        reader.submit(getattr(chunks, "close", lambda: None))
        try:
            _discard(writer, sinks)
        except KeyboardInterrupt:
            _discard(writer, sinks)
        raise
    finally:
        for pool in (ids_pass, reader, writer):
            pool.shutdown(wait=False)  # none waits for the others; each ends its task
    secs["total"] = time.perf_counter() - started
    return summary


def _timed(seconds: dict[str, float], key: str, fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)`, its time added to `seconds[key]`."""
    tick = time.perf_counter()
    try:
        return fn(*args)
    finally:
        seconds[key] += time.perf_counter() - tick


def _discard(writer: ThreadPoolExecutor, sinks: list[Sink]) -> None:
    """Stop writing (the write under way ends first) and remove the temporary
    outputs. A signal that arrives during a Polars query can raise
    KeyboardInterrupt a second time once Python resumes (seen in tests), so an
    interrupt while cleaning up must not leave a file behind."""
    for _ in range(100):
        try:
            writer.shutdown(wait=True, cancel_futures=True)
            while sinks:
                sinks[0].abort()
                sinks.pop(0)
            return
        except KeyboardInterrupt:
            continue


def _empty_rejects() -> pl.DataFrame:
    return pl.DataFrame(schema={"row": pl.Int64, **{c: pl.String for c in REJECT_COLUMNS[1:]}})


__all__ = ["AccountingError", "DEFAULT_CHUNK_ROWS", "REJECT_COLUMNS", "Summary", "evaluate_file"]
