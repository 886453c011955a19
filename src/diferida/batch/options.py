"""The command-line options every command that reads a population file
shares (`batch`, `project`, `compare`), declared once: the same names,
defaults, help and one default language (es)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..i18n import DEFAULT_LANG, LANGS
from .defaults import DEFAULT_CHUNK_ROWS

FILE = click.Path(path_type=Path, dir_okay=False)


def apply_options(options: list[Callable[[Any], Any]]) -> Callable[[Any], Any]:
    def decorate(f: Any) -> Any:
        for option in reversed(options):  # shown in --help in the order listed
            f = option(f)
        return f
    return decorate


def file_options(*, as_of_help: str = "Date the determinations speak for (default: today).",
                 lang_help: str = "Language of the messages.") -> Callable[[Any], Any]:
    """--rejects, --as-of, --lang, --separator, --columns, --strict,
    --overwrite, -q/--quiet, --json, --chunk-rows."""
    return apply_options([
        click.option("--rejects", type=FILE, default=None,
                     help="Rejected rows, one line per bad field: .csv, .parquet or .xlsx."),
        click.option("--as-of", default=None, metavar="YYYY-MM-DD", help=as_of_help),
        click.option("--lang", type=click.Choice(LANGS), default=DEFAULT_LANG,
                     show_default=True, help=lang_help),
        click.option("--separator", default=None, metavar="CHAR",
                     help="CSV separator (default: detected from the header, ',' or ';')."),
        click.option("--columns", "columns_map", default=None, metavar="MAP.toml", type=FILE,
                     help="Map of the file's column names to the fields "
                          "(docs/columns.example.toml)."),
        click.option("--strict", is_flag=True, help="Exit 1 if any row is rejected."),
        click.option("--overwrite", is_flag=True, help="Replace existing output files."),
        click.option("-q", "--quiet", is_flag=True, help="No progress bar and no summary."),
        click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON."),
        click.option("--chunk-rows", type=click.IntRange(min=1), default=DEFAULT_CHUNK_ROWS,
                     show_default=True, help="Rows decided at a time (bounds memory)."),
    ])
