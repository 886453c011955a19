"""`census_file`: a member file in, its shape out (an HTML report and a
workbook), before anyone projects it.

The file is read and decided exactly as `diferida project` does (the same
reader, column map, limits, engine, rules and sex check; the same rejects
with human row numbers), in the one population pass (batch/population.py).
Rows read = members kept + rows rejected, checked; the outputs appear only
when complete, all of them or none. The optional benefit columns
(`benefit_status`, `monthly_in_pay`, `in_pay_since`) are checked by the
projection's own check (projection/status.py), so a row the census keeps is
a row `diferida project` keeps, rejected with the same messages.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any, Unpack

import polars as pl

from ..batch.errors import FileProblem
from ..batch.io import kind_of
from ..batch.population import (
    AccountingError,
    Decided,
    check_other_target,
    check_table_target,
)
from ..batch.run import PopulationRun, RunKwargs, RunOptions
from ..core import MONEY, OUTPUT_NAMES, evaluate_frame
from ..fields import FIELD_NAMES
from ..i18n import DEFAULT_LANG, check_lang
from ..projection.options import OptionError
from ..projection.runner import with_sex, with_status
from ..projection.sex import SEX_COLUMN
from ..projection.status import COLUMNS as STATUS_COLUMNS
from ..projection.status import STATUS_COLUMN, STATUSES
from ..rules import Rules, load_rules
from . import profile

# the input fields the census keeps, typed as validated (the two numbers are
# read from the file's own cells of the rows kept: they are valid numbers)
NUMBERS = {"creditable_service_years": pl.Decimal(38, 4), "average_compensation": MONEY}
INPUTS = tuple(f for f in FIELD_NAMES if f not in ("participant_id", "as_of", *NUMBERS)
               and f not in OUTPUT_NAMES)
KEPT = ("row", "participant_id", *INPUTS, *NUMBERS, "status", "regime", "eligibility_date",
        "annual_amount", STATUS_COLUMN, "_sex", *profile.IN_PAY)

Progress = Callable[[str, int, int], None]


@dataclass
class FileCount:
    """What one pass over a file counted."""

    input: str
    rows_read: int = 0
    members: int = 0
    rows_rejected: int = 0
    problems: int = 0
    blank: int = 0
    has_status: bool = False

    def check(self) -> None:
        if self.rows_read != self.members + self.rows_rejected:
            raise AccountingError(f"{self.input}: {self.rows_read} rows read, {self.members} "
                                  f"kept, {self.rows_rejected} rejected")


@dataclass
class CensusSummary:
    input: str
    output: str | None
    html: str | None
    rejects: str | None
    as_of: date
    current: FileCount
    prior: FileCount | None = None
    figures: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=lambda: {
        "read_and_decide": 0.0, "profile": 0.0, "write": 0.0, "total": 0.0})
    sample: pl.DataFrame | None = None

    @property
    def rows_read(self) -> int:
        return self.current.rows_read

    @property
    def rows_rejected(self) -> int:
        return self.current.rows_rejected

    @property
    def problems(self) -> int:
        return self.current.problems

    def to_dict(self) -> dict[str, Any]:
        d = {"input": self.input, "output": self.output, "html": self.html,
             "rejects": self.rejects, "as_of": self.as_of.isoformat(),
             "rows_read": self.current.rows_read, "members": self.current.members,
             "rows_rejected": self.current.rows_rejected, "problems": self.current.problems,
             "blank_lines": self.current.blank, **self.figures,
             "seconds": {k: round(v, 3) for k, v in self.seconds.items()}}
        if self.prior is not None:
            d["prior"] = {"input": self.prior.input, "rows_read": self.prior.rows_read,
                          "members": self.prior.members,
                          "rows_rejected": self.prior.rows_rejected}
        return d


def read_members(run: PopulationRun, *, day: date, rules: Rules, lang: str
                 ) -> tuple[pl.DataFrame, FileCount]:
    """Every row of the run's file decided (`run`: opened with the
    projection's extra fields); the members kept (KEPT columns, one row
    each, in the file's order) and the count."""
    src = run.source
    has_sex = SEX_COLUMN in src.columns
    checked = any(c in src.columns for c in STATUS_COLUMNS)  # as `diferida project` does
    count = FileCount(src.file, has_status=STATUS_COLUMN in src.columns)
    parts: list[pl.DataFrame] = []

    def decide(frame: pl.DataFrame) -> tuple[tuple[pl.DataFrame, ...], pl.DataFrame]:
        res = evaluate_frame(frame, as_of=day, rules=rules, lang=lang, require_id=True,
                             inputs=INPUTS)
        kept, bad = with_sex(frame, (res.determinations,), res.rejected, has_sex, lang)
        if checked:
            kept, bad = with_status(frame, kept, bad, day, lang)
        return kept, bad

    def use(d: Decided) -> None:
        det = d.kept[0]
        raw = d.chunk.frame[d.positions]
        det = det.with_columns(
            raw.get_column(name).cast(pl.String).str.strip_chars().str.strip_prefix("+")
            .cast(dtype).alias(name) for name, dtype in NUMBERS.items())
        status = (det.get_column("_bstatus").replace_strict(
            dict(enumerate(STATUSES)), return_dtype=pl.String) if checked
            else pl.Series([STATUSES[0]] * det.height, dtype=pl.String))
        if not checked:  # nobody in pay (the columns are not there)
            det = det.with_columns(pl.lit(0, pl.Int64).alias("_pay_cents"),
                                   pl.lit(0, pl.Int64).alias("_pay_since"))
        paid = status == "in_pay"
        parts.append(det.with_columns(
            pl.Series("row", d.chunk.rows[d.positions], dtype=pl.Int64),
            status.alias(STATUS_COLUMN),
            pl.col("participant_id").cast(pl.String).str.strip_chars(),
            # in pay: the amount (dollars and cents) and the date payments began
            pl.when(paid).then(pl.col("_pay_cents").cast(MONEY) / 100).cast(MONEY)
            .alias(profile.IN_PAY[0]),
            pl.when(paid).then(pl.col("_pay_since").cast(pl.Int32).cast(pl.Date))
            .alias(profile.IN_PAY[1]),
        ).select(KEPT))

    tally = run.run(decide, use)
    count.rows_read, count.rows_rejected = tally.rows_read, tally.rows_rejected
    count.problems, count.blank = tally.problems, tally.blank
    if count.rows_read == 0:
        raise FileProblem("no_rows", file=src.file)
    members = pl.concat(parts) if parts else None
    count.members = members.height if members is not None else 0
    count.check()
    if members is None:
        raise FileProblem("no_rows", file=src.file)
    return members, count


def _census_files(overwrite: bool, input: str | Path, output: str | Path | None,
                  html: str | Path | None, rejects: str | Path | None,
                  prior: str | Path | None
                  ) -> tuple[Path, Path | None, Path | None, Path | None, Path | None]:
    """The files of a review, each checked before anything is read: (the
    census, the workbook, the page, the rejects, last year's census)."""
    if output is None and html is None:
        raise OptionError("give -o/--output FILE.xlsx, --html FILE.html, or both")
    inp = Path(input)
    out = Path(output) if output is not None else None
    page = Path(html) if html is not None else None
    rej = Path(rejects) if rejects is not None else None
    last = Path(prior) if prior is not None else None
    kind_of(inp)
    if last is not None:
        kind_of(last)
        if not last.is_file():
            raise FileProblem("not_found", file=str(last))
    inputs = [inp, *([last] if last is not None else [])]
    outputs: list[tuple[str, Path]] = []
    if out is not None:
        check_other_target(out, inputs, overwrite, [".xlsx"], option="-o/--output")
        outputs.append(("-o/--output", out))
    if page is not None:
        check_other_target(page, inputs, overwrite, [".html"], option="--html",
                           outputs=outputs)
        outputs.append(("--html", page))
    if rej is not None:
        check_table_target(rej, inputs, overwrite, option="--rejects", outputs=outputs)
        outputs.append(("--rejects", rej))
    if last is not None and last.resolve() == inp.resolve():
        raise OptionError("--prior: the prior file is the file under review")
    return inp, out, page, rej, last


def census_file(
    input: str | Path,
    output: str | Path | None = None,
    html: str | Path | None = None,
    rejects: str | Path | None = None,
    *,
    prior: str | Path | None = None,
    as_of: date | None = None,
    rules: str | Path | Rules | None = None,
    progress: Progress | None = None,
    **common: Unpack[RunKwargs],
) -> CensusSummary:
    """Review a member file (CSV, Parquet or .xlsx): write the workbook
    (`output`, .xlsx) and/or the HTML page (`html`). Raises OptionError for
    an option that cannot be used, FileProblem for a file, before anything
    is written."""
    started = time.perf_counter()
    check_lang(common.get("lang", DEFAULT_LANG), OptionError, "--lang")
    o = RunOptions(**common)
    lang, overwrite = o.lang, o.overwrite
    inp, out, page, rej, last = _census_files(overwrite, input, output, html, rejects, prior)
    r = load_rules(rules)
    day = as_of or date.today()
    summary = CensusSummary(str(inp), str(out) if out else None, str(page) if page else None,
                            str(rej) if rej else None, day, FileCount(str(inp)))
    secs = summary.seconds

    def reading(path: Path, options: RunOptions, **more: Any) -> PopulationRun:
        """Both files are read as `diferida project` reads one."""
        return PopulationRun(path, options=options,
                             extra_fields=(SEX_COLUMN, *STATUS_COLUMNS), **more)

    with reading(inp, o, rejects=rej, progress=(lambda d, t: progress("decide", d, t))
                 if progress is not None else None) as run:
        tick = time.perf_counter()
        members, summary.current = read_members(run, day=day, rules=r, lang=lang)
        before = None
        if last is not None:
            # last year's file: read only, its rows rejected counted, none kept
            with reading(last, replace(o, sample_rejects=0, on_rename=None)) as prior_run:
                before, summary.prior = read_members(prior_run, day=day, rules=r, lang=lang)
        secs["read_and_decide"] = time.perf_counter() - tick

        tick = time.perf_counter()
        review = profile.review(members, day, r, lang, summary.current.has_status, before,
                                summary.prior.has_status if summary.prior else False)
        summary.figures = review.figures()
        secs["profile"] = time.perf_counter() - tick

        tick = time.perf_counter()
        from . import book, report
        if out is not None:
            run.data(out, book.workbook(review, summary, r, lang))
        if page is not None:
            run.data(page, report.html_report(review, summary, r, lang))
        run.commit()  # every output, or none
        secs["write"] = time.perf_counter() - tick
        summary.sample = run.sample
    secs["total"] = time.perf_counter() - started
    return summary
