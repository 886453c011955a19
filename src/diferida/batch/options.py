"""The command-line options every command that reads a population file
shares (`batch`, `project`, `compare`, `census`), declared once: the same
names, defaults, help and one default language (es); and their reading
(`read_date`) and the rejected rows shown when there is no --rejects file
(`echo_rejects_sample`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import click

from ..bounded import Refused, regular_size, shown
from ..digits import WholeNumber, iso_date
from ..i18n import DEFAULT_LANG, LANGS, help_text
from .defaults import DEFAULT_CHUNK_ROWS

FILE = click.Path(path_type=Path, dir_okay=False)


class InputFile(click.Path):
    """A file the command reads: one that exists must be a regular file (a
    FIFO, a device or a socket is refused here, naming the option, before
    anything is opened; bounded.py reads it within its limit). One that does
    not exist is for the command to say so, in the user's language."""

    def __init__(self) -> None:
        super().__init__(path_type=Path, dir_okay=False)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None
                ) -> Any:
        path = super().convert(value, param, ctx)
        try:
            regular_size(Path(os.fsdecode(path)))
        except Refused as exc:
            if exc.reason not in ("no_file", "unreadable"):
                self.fail(f"{shown(path, 200)}: {exc.text()}", param, ctx)
        return path


IN_FILE = InputFile()
EXIT_UNUSABLE = 2  # the exit status when a file or an option cannot be used


def apply_options(options: list[Callable[[Any], Any]]) -> Callable[[Any], Any]:
    def decorate(f: Any) -> Any:
        for option in reversed(options):  # shown in --help in the order listed
            f = option(f)
        return f
    return decorate


def file_options(*, as_of_help: str = help_text("cli.batch_as_of"),
                 lang_help: str = help_text("cli.batch_lang")) -> Callable[[Any], Any]:
    """--rejects, --as-of, --lang, --separator, --columns, --strict,
    --overwrite, -q/--quiet, --json, --chunk-rows."""
    return apply_options([
        click.option("--rejects", type=FILE, default=None,
                     help=help_text("cli.rejects")),
        click.option("--as-of", default=None, metavar="YYYY-MM-DD", help=as_of_help),
        click.option("--lang", type=click.Choice(LANGS), default=DEFAULT_LANG,
                     show_default=True, help=lang_help),
        click.option("--separator", default=None, metavar="CHAR",
                     help=help_text("cli.separator")),
        click.option("--columns", "columns_map", default=None, metavar="MAP.toml", type=IN_FILE,
                     help=help_text("cli.columns")),
        click.option("--strict", is_flag=True, help=help_text("cli.strict")),
        click.option("--overwrite", is_flag=True, help=help_text("cli.overwrite")),
        click.option("-q", "--quiet", is_flag=True, help=help_text("cli.quiet")),
        click.option("--json", "as_json", is_flag=True, help=help_text("cli.json_summary")),
        click.option("--chunk-rows", type=WholeNumber(min=1), default=DEFAULT_CHUNK_ROWS,
                     show_default=True, help=help_text("cli.chunk_rows")),
    ])


def read_date(value: str | None, option: str) -> date | None:
    """The date an option gives (YYYY-MM-DD), None when it is not given. A
    text that is not such a date stops the command: its message naming
    `option`, exit 2."""
    if value is None:
        return None
    day = iso_date(value)  # not fromisoformat alone: it takes 20260630 and week dates
    if day is None:
        click.echo(f"{option}: '{shown(value)}' is not a valid YYYY-MM-DD date", err=True)
        sys.exit(EXIT_UNUSABLE)
    return day


def echo_rejects_sample(summary: Any, intro: str, more: str | None = None) -> None:
    """With no --rejects file, the first rejected rows on stderr: `intro`
    (with {shown} and {problems}), a line per problem shown, then `more`
    (with {n}) when there were more problems than shown."""
    sample = summary.sample
    click.echo(intro.format(shown=sample.height, problems=summary.problems), err=True)
    for r in sample.iter_rows(named=True):
        click.echo(f"  {r['row']}: {r['participant_id'] or '-'}: {r['message']}", err=True)
    if more is not None and summary.problems > sample.height:
        click.echo(more.format(n=summary.problems - sample.height), err=True)
