"""A command's run over a member file, from its source to its outputs in
place: `PopulationRun`, the one owner of what `batch`, `project`, `compare`,
`census` and the workbench's import do around the population pass.

    with PopulationRun(path, options=RunOptions(lang=...), rejects=rej) as run:
        out = run.output(out_path)                # a table, written as it goes
        tally = run.run(decide, use)              # `use` calls run.write(out, kept)
        run.output(other_path, frame)             # a table made after the pass
        run.data(page_path, html_bytes)           # a page, a picture, a workbook
        run.commit()                              # every output in place, or none

It opens the source (`io.open_source`: a file that cannot be used is refused
before anything is written), opens each output as a temporary file beside
its name (`outputs.open_sink`), makes and runs the pass, and, on `commit`,
completes every output and renames them all into place together
(`outputs.put_in_place`). Leaving the block by any error or interrupt, at
any moment, stops the pass (the chunk being read is its last; the write
under way ends, those waiting are dropped) and removes every temporary
file; the files that were there stay as they were.

An interrupt during the clean-up, or while the completed outputs are being
renamed, waits until that is done (`interrupts.held`): the clean-up always
ends with no temporary file left (one the folder refuses to remove is the
only exception, and no file is ever left under an output's name), the
renaming with every output in place or none. The interrupt is then answered
as it would have been: a KeyboardInterrupt, or, under the commands, their
exit 130 with the message of `interrupts.py`, which from the moment the
outputs are in place says that they are complete (`outputs_written`).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict, TypeVar

import polars as pl

from ..i18n import DEFAULT_LANG, check_lang
from ..interrupts import held, outputs_written
from .columns import ColumnsArg
from .defaults import DEFAULT_CHUNK_ROWS
from .io import Limits, Source, open_source
from .outputs import BytesSink, Sink, abort_all, commit_all, open_sink
from .population import Decide, Decided, PopulationPass, Tally

__all__ = ["PopulationRun", "RunKwargs", "RunOptions"]

# A signal that arrives during a Polars query can raise KeyboardInterrupt
# again once Python resumes, outside any handler: the clean-up starts over
# (each of its steps can be done twice) rather than leave a file behind.
_CLEANUP_TRIES = 100
S = TypeVar("S", bound=Sink)


class RunKwargs(TypedDict, total=False):
    """The options every command that reads a member file takes besides its
    own (`batch`, `project`, `compare`, `census`, `valuation`): a runner's
    `**common: Unpack[RunKwargs]`, made a RunOptions once (`RunOptions(**common)`)."""

    lang: str
    separator: str | None
    columns: ColumnsArg
    chunk_rows: int
    limits: Limits | None
    overwrite: bool
    sample_rejects: int
    on_rename: Callable[[], None] | None


@dataclass(frozen=True)
class RunOptions:
    """How a member file is read and its outputs written, the same for every
    command: the language of its messages; the file's separator, column map
    (batch/columns.py), rows a chunk and limits (batch/io.py); whether an
    output may replace a file; how many rejected rows are kept in memory
    when there is no rejects file; `on_rename()`, called just before the
    first output is renamed into place (a command's last chance to stop
    with nothing written)."""

    lang: str = DEFAULT_LANG
    separator: str | None = None
    columns: ColumnsArg = None
    chunk_rows: int = DEFAULT_CHUNK_ROWS
    limits: Limits | None = None
    overwrite: bool = False
    sample_rejects: int = 50
    on_rename: Callable[[], None] | None = None

    def __post_init__(self) -> None:
        check_lang(self.lang)
        if self.chunk_rows < 1:
            raise ValueError("chunk_rows must be at least 1")


class PopulationRun:
    """The run over `source` (a path, or bytes with a `filename`) with
    `options` (RunOptions): see the module's text. `rejects`: where the
    rejected rows go (without it, the first `options.sample_rejects` are
    kept in `sample`); `progress(done, total)` after each chunk; `seconds`
    gets the pass's "read", "decide" and "write"."""

    source: Source

    def __init__(self, source: str | Path | bytes, filename: str | None = None, *,
                 options: RunOptions, extra_fields: tuple[str, ...] = (),
                 rejects: Path | None = None,
                 progress: Callable[[int, int], None] | None = None,
                 seconds: dict[str, float] | None = None):
        o = options
        self._open = lambda: open_source(source, filename, separator=o.separator,
                                         columns=o.columns, limits=o.limits,
                                         extra_fields=extra_fields)
        self.options = o
        self.chunk_rows, self.lang, self.overwrite = o.chunk_rows, o.lang, o.overwrite
        self.rejects, self.sample_rejects = rejects, o.sample_rejects
        self.progress, self.seconds, self.on_rename = progress, seconds, o.on_rename
        self._sinks: list[Sink] = []
        self._pass: PopulationPass | None = None

    def __enter__(self) -> PopulationRun:
        self.source = self._open()
        return self

    # ---- outputs

    def output(self, path: Path, frame: pl.DataFrame | None = None) -> Sink:
        """A table output (its format by suffix), with `frame` written now if
        given; during the pass, write to it with `write`."""
        sink = self._add(open_sink(path, self.overwrite))
        if frame is not None:
            sink.write(frame)
        return sink

    def data(self, path: Path, data: bytes) -> BytesSink:
        """An output made whole in memory (a workbook, a picture, JSON, a page)."""
        sink = self._add(BytesSink(path, self.overwrite))
        sink.data = data
        return sink

    def _add(self, sink: S) -> S:
        self._sinks.append(sink)
        return sink

    def write(self, sink: Sink, frame: pl.DataFrame) -> None:
        """Write `frame` to `sink` on the pass's writer thread, in order."""
        assert self._pass is not None, "write() is for the pass; output(path, frame) after it"
        self._pass.write(sink, frame)

    # ---- the pass

    def run(self, decide: Decide, use: Callable[[Decided], None]) -> Tally:
        """Open the rejects output (if any), then read and decide every chunk
        (see `PopulationPass.run`); every write is done when this returns."""
        rejects = self.output(self.rejects) if self.rejects is not None else None
        self._pass = PopulationPass(self.source, self.chunk_rows, lang=self.lang,
                                    rejects=rejects, sample_rejects=self.sample_rejects,
                                    progress=self.progress, seconds=self.seconds)
        return self._pass.run(decide, use)

    @property
    def sample(self) -> pl.DataFrame:
        """The first rejects, kept when they go to no file."""
        assert self._pass is not None
        return self._pass.sample

    # ---- the end

    def commit(self, *others: PopulationRun) -> None:
        """Complete every output — this run's and those of `others` (the
        other files a command read, such as a prior census and its rejects)
        — and rename them all into place together, or none (an interrupt
        while they are renamed waits until all are: see the module's text).
        Nothing is left to discard afterwards."""
        runs = [self, *others]
        for r in runs:
            if r._pass is not None:
                r._pass.finish_writes()
        sinks = [s for r in runs for s in r._sinks]
        with ExitStack() as renaming:
            def placing() -> None:
                renaming.enter_context(held())
                if self.on_rename is not None:
                    self.on_rename()

            commit_all(sinks, placing)
            for r in runs:
                r._sinks.clear()
            outputs_written()

    def __exit__(self, kind, exc, tb) -> None:
        unfinished = bool(self._sinks)
        try:
            if kind is not None or unfinished:
                with held() if self._sinks else nullcontext():
                    self._discard()
        finally:
            if self._pass is not None:
                self._pass.close()
        if kind is None and unfinished:
            raise RuntimeError("a run ended without committing its outputs (they were removed)")

    def _discard(self) -> None:
        """Stop the pass's writing and remove every temporary output."""
        for _ in range(_CLEANUP_TRIES):
            try:
                if self._pass is not None:
                    self._pass.stop()
                abort_all(self._sinks)
                self._sinks.clear()
                return
            except KeyboardInterrupt:
                continue
