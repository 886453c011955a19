"""A whole population from a file: read in chunks, evaluate each with the
core (`evaluate_frame`, the same path as one participant alone), write the
determinations and the rejects, and account for every row.

Rows read = rows determined + rows rejected, checked chunk by chunk and at
the end; a run where it does not hold fails loudly and writes nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Unpack

import polars as pl

from ..core import date_argument, evaluate_frame
from ..i18n import LANGS, catalog, fmt_date
from ..outcomes import STATUSES
from ..rules import Rules, load_rules
from .defaults import DEFAULT_CHUNK_ROWS
from .errors import FileProblem
from .io import kind_of
from .messages import summary_text
from .outputs import XLSX_MAX_ROWS
from .population import REJECT_COLUMNS, AccountingError, Decided, check_table_target
from .run import PopulationRun, RunKwargs, RunOptions

Progress = Callable[[int, int], None]


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
        words = catalog(lang if lang in LANGS else "en")["status"]
        out += [t("status", status=words.get(s, s), n=f"{n:,}")
                for s, n in self.by_status.items()]
        out.append(t("rejected", n=f"{self.rows_rejected:,}", problems=f"{self.problems:,}"))
        if self.blank:
            out.append(t("blank", n=f"{self.blank:,}"))
        if self.carried:
            out.append(t("carried", columns=", ".join(self.carried)))
        out.append(t("rules", rules=self.rules_version,
                     as_of=fmt_date(self.as_of, lang if lang in LANGS else "en")))
        out.append(t("output", path=self.output))
        if self.rejects:
            out.append(t("rejects", path=self.rejects))
        total = self.seconds["total"]
        out.append(t("time", **self.seconds, rate=self.rows_read / total if total else 0))
        return out


def evaluate_file(
    input: str | Path,
    output: str | Path,
    rejects: str | Path | None = None,
    *,
    as_of: date | str | None = None,
    rules: str | Path | Rules | None = None,
    progress: Progress | None = None,
    **common: Unpack[RunKwargs],
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
    o = RunOptions(**common)
    lang, overwrite = o.lang, o.overwrite
    inp, out = Path(input), Path(output)
    rej = Path(rejects) if rejects is not None else None
    kind_of(inp)
    check_table_target(out, [inp], overwrite)
    if rej is not None:
        check_table_target(rej, [inp], overwrite, option="--rejects",
                           outputs=[("-o/--output", out)])
    r = load_rules(rules)
    # one date for the whole run, even across midnight; ISO text read as its date
    day = date_argument(as_of, "as_of", lang) or date.today()
    pass_secs: dict[str, float] = {}
    with PopulationRun(inp, options=o, rejects=rej, progress=progress,
                       seconds=pass_secs) as run:
        src = run.source
        if kind_of(out) == "xlsx" and src.kind != "csv" and src.total > XLSX_MAX_ROWS:
            raise FileProblem("xlsx_too_big", file=str(out), rows=f"{src.total:,}",
                              limit=f"{XLSX_MAX_ROWS:,}")
        summary = Summary(str(inp), str(out), str(rej) if rej else None, r.version, day,
                          carried=list(src.carried))
        secs = summary.seconds
        out_sink = run.output(out)

        def decide(frame: pl.DataFrame) -> tuple[tuple[pl.DataFrame, ...], pl.DataFrame]:
            # carried columns are kept apart from the engine's by the core
            res = evaluate_frame(frame, as_of=day, rules=r, lang=lang, require_id=True)
            return (res.determinations,), res.rejected

        def use(d: Decided) -> None:
            det = d.kept[0]
            for status, n in det["status"].value_counts().iter_rows():
                summary.by_status[status] = summary.by_status.get(status, 0) + n
            run.write(out_sink, det)

        tally = run.run(decide, use)
        summary.rows_read, summary.rows_rejected = tally.rows_read, tally.rows_rejected
        summary.problems, summary.blank = tally.problems, tally.blank
        secs.update(read=pass_secs["read"], evaluate=pass_secs["decide"],
                    write=pass_secs["write"])
        if summary.rows_read == 0:
            raise FileProblem("no_rows", file=str(inp))
        summary.check()
        if out_sink.rows != summary.rows_determined:
            raise AccountingError(f"{summary.rows_determined} determined, "
                                  f"{out_sink.rows} written")
        tick = time.perf_counter()
        run.commit()  # both outputs or neither: see put_in_place
        secs["write"] += time.perf_counter() - tick
        summary.sample = run.sample
    secs["total"] = time.perf_counter() - started
    return summary


__all__ = ["AccountingError", "DEFAULT_CHUNK_ROWS", "REJECT_COLUMNS", "Summary", "evaluate_file"]
