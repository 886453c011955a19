"""`diferida batch`: evaluate every participant of a file.

Exit status: 0 when the run completed (rejected rows included, unless
--strict, which makes any reject exit 1); 2 when a file or an option cannot
be used (nothing is written); 3 when the row accounting fails (a bug:
nothing is written); 130 when interrupted, SIGINT or SIGTERM at any moment
(nothing is written, or, when the interrupt came once the completed outputs
were being renamed into place, both outputs are complete: the message says
which). `Interruptible` holds that rule for `project`, `compare` and `census`
too.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click

from ..i18n import LANGS, catalog, help_text
from ..rules import RulesError, builtin_names
from .errors import FileProblem
from .messages import summary_text
from .options import IN_FILE, echo_rejects_sample, file_options, read_date

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

EXIT_STRICT, EXIT_UNUSABLE, EXIT_ACCOUNTING, EXIT_INTERRUPTED = 1, 2, 3, 130
PROGRESS_AFTER = 0.5  # seconds: shorter runs show no bar


# What a run of `project` or `compare` says when it stops short (`batch`
# has its own, with its summary, in messages.py).
RUN_TEXT = {lang: catalog(lang)["run_text"] for lang in LANGS}  # i18n/<lang>/cli.toml


class _Stopped(KeyboardInterrupt):
    """SIGINT or SIGTERM, raised as an interrupt so that temporary outputs are removed."""


_signals: list[int] = []
# Set once the completed outputs start being renamed into place: from then on
# an interrupt is remembered, not raised, so that the run ends with both
# outputs in place (never one without the other).
_renaming: list[bool] = []


# Interrupts raised where they could not come out (see `catch_interrupts`).
_swallowed: list[bool] = []


def _on_signal(signum, frame):  # noqa: ARG001
    # Remembered as well as raised: an interrupt raised inside a Polars call
    # can come out as another exception (seen: a TypeError).
    _signals.append(signum)
    if _renaming or len(_signals) > 1:  # a second interrupt lets the first one's cleanup end
        return
    raise _Stopped()


def catch_interrupts() -> Callable[[], None]:
    """Put a run's interrupt handling in place (SIGINT and SIGTERM raise
    `_Stopped`); returns the function that puts the previous one back.

    An interrupt can arrive while Python code runs on a library's behalf
    where no exception can come out (an object being freed, a callback
    Polars makes): Python would print it as "Exception ignored" with a
    traceback and go on. It is kept quiet instead, and raised at the run's
    next chunk (`_stop_if_swallowed`, from the progress callback)."""
    _signals.clear()
    _renaming.clear()
    _swallowed.clear()
    previous = {s: signal.signal(s, _on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    hook = sys.unraisablehook

    def quiet(unraisable) -> None:
        if isinstance(unraisable.exc_value, _Stopped):
            _swallowed.append(True)
        else:
            hook(unraisable)

    sys.unraisablehook = quiet

    def restore() -> None:
        for s, handler in previous.items():
            signal.signal(s, handler)
        sys.unraisablehook = hook
        _renaming.clear()

    return restore


def _stop_if_swallowed() -> None:
    if _swallowed and not _renaming:
        _swallowed.clear()
        raise _Stopped()


def start_placing() -> None:
    """A run's `on_rename`: its completed outputs are about to be renamed into
    place. An interrupt that came before and was not raised (see
    `catch_interrupts`) stops the run here, with nothing written; from here
    on an interrupt is held until every output is in place."""
    if _signals and not _renaming:
        raise _Stopped()
    _renaming.append(True)


class Interruptible:
    """A command's run, interrupts handled (`with Interruptible(...) as run:`).

    One rule: a run interrupted (SIGINT or SIGTERM) ends with exit status
    130, with no outputs (their temporary files removed, files that were
    there left as they were) or, when the interrupt came once they were
    being put in place, all of them complete; the message says which
    (`nothing`, or the text given to `completed`). Whatever the run was
    doing when it came (reading, writing, reporting a refusal, printing its
    summary), the interrupt is never click's "Aborted!" (exit 1), a
    traceback, or a run that goes on to exit 0. `close()` (a progress bar) is
    called before a message is printed. Before `__enter__` and after
    `__exit__`, the program's entry point answers interrupts (_entry.py)."""

    def __init__(self, nothing: str, close: Callable[[], None] = lambda: None):
        self.nothing, self.close = nothing, close
        self.complete: str | None = None

    def completed(self, message: str) -> None:
        """The outputs are in place; `message` is what an interrupt says from now on."""
        from ..interrupts import outputs_written

        self.complete = message
        outputs_written()

    def __enter__(self) -> Interruptible:
        from ..interrupts import outputs_written

        outputs_written(False)
        self._restore = catch_interrupts()
        return self

    def __exit__(self, kind, exc, tb) -> Literal[False]:
        _renaming.append(True)  # from here an interrupt is held, not raised
        from .outputs import discard_unfinished

        stopped = kind is not None and issubclass(kind, KeyboardInterrupt)
        try:
            if stopped or _signals:
                discard_unfinished()
        finally:
            self._restore()
        if kind is SystemExit and exc.code == EXIT_INTERRUPTED:
            return False  # already said
        if stopped or _signals:
            self.close()
            click.echo(self.complete or self.nothing, err=True)
            sys.exit(EXIT_INTERRUPTED)
        return False


class _Bar:
    """A rich progress bar on the terminal, shown only once a run has lasted a moment."""

    def __init__(self, label: str, enabled: bool):
        self.label, self.enabled = label, enabled
        self.started = time.monotonic()
        self.progress: Progress | None = None
        self.task: TaskID | None = None

    def __call__(self, done: int, total: int) -> None:
        _stop_if_swallowed()  # called after every chunk: see catch_interrupts
        if not self.enabled:
            return
        if self.progress is None:
            if time.monotonic() - self.started < PROGRESS_AFTER:
                return
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TaskProgressColumn, TimeElapsedColumn

            self.progress = Progress("{task.description}", BarColumn(), TaskProgressColumn(),
                                     TimeElapsedColumn(), console=Console(stderr=True),
                                     transient=True)
            self.progress.start()
            self.task = self.progress.add_task(self.label, total=total or None)
        assert self.task is not None  # added with the bar
        self.progress.update(self.task, completed=done)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()


class PhaseBars:
    """A progress bar per phase of a run (deciding, projecting…), on a
    terminal only; `labels` names each phase."""

    def __init__(self, labels: dict[str, str], enabled: bool):
        self.labels, self.enabled = labels, enabled
        self.bars: dict[str, _Bar] = {}

    def __call__(self, phase: str, done: int, total: int) -> None:
        if phase not in self.bars:
            for bar in self.bars.values():
                bar.close()
            self.bars[phase] = _Bar(self.labels.get(phase, phase), self.enabled)
        self.bars[phase](done, total)

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()


def run_file(run_it: Callable[[], Any], bars: PhaseBars, lang: str, t: dict[str, str],
             unusable: tuple[type[Exception], ...] = ()) -> Any:
    """`run_it()`, the run of `project`, `census` or `compare`, its failures
    turned into messages (in `lang`, `t` the command's texts) and exit
    codes: a file, the rules or an option (`unusable`) that cannot be used
    exits 2, a row accounting that fails exits 3 (nothing is written
    either way); an interrupt is left to `Interruptible`."""
    from .runner import AccountingError

    try:
        return run_it()
    except unusable as exc:
        bars.close()
        click.echo(str(exc), err=True)
        sys.exit(EXIT_UNUSABLE)
    except FileProblem as exc:
        bars.close()
        click.echo(exc.text(lang), err=True)
        sys.exit(EXIT_UNUSABLE)
    except RulesError as exc:
        bars.close()
        click.echo(f"{exc.option}: {exc}", err=True)
        sys.exit(EXIT_UNUSABLE)
    except AccountingError as exc:
        bars.close()
        click.echo(t["accounting"].format(detail=exc), err=True)
        sys.exit(EXIT_ACCOUNTING)


def _run(bar: _Bar, say: str, *args, **kwargs):
    """evaluate_file, its failures turned into messages (in `say`) and exit
    codes; an interrupt is left to `Interruptible`."""
    from .runner import AccountingError, evaluate_file

    try:
        try:
            return evaluate_file(*args, **kwargs, on_rename=start_placing)
        except BaseException as exc:
            if isinstance(exc, FileProblem | RulesError | AccountingError):
                raise
            if _signals or isinstance(exc, KeyboardInterrupt):
                raise _Stopped() from exc
            raise
    except FileProblem as exc:
        bar.close()
        click.echo(exc.text(say), err=True)
        sys.exit(EXIT_UNUSABLE)
    except RulesError as exc:
        bar.close()
        click.echo(f"{exc.option}: {exc}", err=True)
        sys.exit(EXIT_UNUSABLE)
    except AccountingError as exc:
        bar.close()
        click.echo(summary_text(say, "accounting", detail=exc), err=True)
        sys.exit(EXIT_ACCOUNTING)


@click.command("batch", help=help_text("cmd.batch"))
@click.argument("input", type=IN_FILE)
@click.option("-o", "--output", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help=help_text("cli.batch_output"))
@click.option("--rules", "rules_name", default=None, metavar="NAME|PATH",
              help=help_text("cli.rules", names=", ".join(builtin_names())))
@file_options()
def batch_cmd(input, output, rejects, as_of, rules_name, lang, separator, columns_map, strict,
              overwrite, quiet, as_json, chunk_rows) -> None:
    # Loaded here, while `diferida` still answers an interrupt as "still
    # loading" (see _entry.py): the run's handling is put in place once they are in.
    from .runner import evaluate_file  # noqa: F401 (used by _run)

    day = read_date(as_of, "--as-of (as_of)")
    bar = _Bar(summary_text(lang, "progress"), enabled=not quiet and sys.stderr.isatty())
    with Interruptible(summary_text(lang, "interrupted"), bar.close) as run:
        summary = _run(bar, lang, input, output, rejects, as_of=day, rules=rules_name,
                       lang=lang, separator=separator, columns=columns_map,
                       overwrite=overwrite, chunk_rows=chunk_rows, progress=bar)
        paths = " + ".join(p for p in (summary.output, summary.rejects) if p)
        run.completed(summary_text(lang, "interrupted_after", paths=paths))
        bar.close()
        _report(summary, lang, rejects is None, quiet, as_json)
    # an interrupt from here on is answered by the entry point: exit 130, complete
    if strict and summary.rows_rejected:
        click.echo(summary_text(lang, "strict"), err=True)
        sys.exit(EXIT_STRICT)


def _report(summary, lang: str, no_rejects_file: bool, quiet: bool, as_json: bool) -> None:
    if no_rejects_file and summary.problems:
        words = catalog(lang)["batch_summary"]
        echo_rejects_sample(summary, words["no_rejects_file"], words["more_rejects"])
    if as_json:
        click.echo(json.dumps(summary.to_dict(), ensure_ascii=False, indent=2))
    elif not quiet:
        click.echo("\n".join(summary.lines(lang)))
