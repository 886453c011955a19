"""`diferida compare`: two rule sets over the same member file.

Exit status: 0 when the run completed (rejected rows included, unless
--strict, which makes any reject exit 1); 2 when a rules file, a file or an
option cannot be used (refused before any member is read; nothing is
written); 3 when the row accounting fails (a bug: nothing is written); 130
when interrupted, SIGINT or SIGTERM at any moment (nothing is written, or,
once the completed outputs were being put in place, all of them are: the
message says which; see batch.cli.Interruptible).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..batch import cli as batch_cli
from ..batch.options import IN_FILE, echo_rejects_sample, file_options, read_date
from ..i18n import LANGS, catalog, help_text
from ..projection.options import projection_options, valuation_options
from ..rules import builtin_names

EXIT_STRICT, EXIT_UNUSABLE, EXIT_ACCOUNTING, EXIT_INTERRUPTED = 1, 2, 3, 130

# i18n/<lang>/cli.toml: what `compare` says, and what every run says when it stops short
TEXT = {lang: {**catalog(lang)["compare_run"], **batch_cli.RUN_TEXT[lang]} for lang in LANGS}


@click.command("compare", help=help_text("cmd.compare"))
@click.argument("input", type=IN_FILE)
@click.option("--rules", "rules", multiple=True, required=True, metavar="NAME|PATH",
              help=help_text("cli.compare_rules", names=", ".join(builtin_names())))
@click.option("-o", "--output", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help=help_text("cli.compare_output"))
@click.option("--html", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help=help_text("cli.compare_html"))
@click.option("--bands", default=None, metavar="AMOUNTS",
              help=help_text("cli.compare_bands"))
@projection_options(required=False)
@valuation_options(by=False)
@file_options(as_of_help=help_text("cli.compare_as_of"),
              lang_help=help_text("cli.compare_lang"))
def compare_cmd(input, rules, output, html, bands, rejects, as_of, discount, mortality, improvement,
                cola, start, horizon, sex_blend, valuation_date, claim_rates, mortality_scale,
                sensitivity, lang, separator, columns_map, strict, overwrite, quiet, as_json,
                chunk_rows) -> None:
    from ..projection.engine import AmountTooLarge
    from ..projection.mortality import TableError
    from ..projection.options import OptionError
    from .runner import CompareOptionError, Projecting, compare_file

    t = TEXT[lang]

    def fail(message: str, code: int = EXIT_UNUSABLE):
        click.echo(message, err=True)
        sys.exit(code)

    if len(rules) != 2:
        fail(f"--rules: give exactly two rule sets, A then B (got {len(rules)})")
    day = read_date(as_of, "--as-of")
    v_day = read_date(valuation_date, "--valuation-date")
    projecting = None
    if (discount is None) != (mortality is None):
        fail("--discount and --mortality go together: give both to project the fiscal "
             "years, or neither")
    if discount is not None:
        projecting = Projecting(discount=discount, mortality=mortality,
                                improvement=improvement, cola=cola, start=start,
                                horizon=horizon, sex_blend=sex_blend, valuation_date=v_day,
                                claim_rates=claim_rates, mortality_scale=mortality_scale,
                                sensitivity=sensitivity, bands=bands)
    elif improvement is not None or horizon is not None or cola != "0" \
            or start != "eligibility" or sex_blend != "0.5" or valuation_date is not None \
            or claim_rates is not None or mortality_scale is not None or sensitivity \
            or bands is not None:
        fail("--improvement, --cola, --start, --horizon, --sex-blend, --valuation-date, "
             "--claim-rates, --mortality-scale, --sensitivity and --bands are projection "
             "options: give --discount and --mortality too")
    bars = batch_cli.PhaseBars(TEXT[lang], enabled=not quiet and sys.stderr.isatty())
    with batch_cli.Interruptible(t["interrupted"], bars.close) as run:
        summary = batch_cli.run_file(
            lambda: compare_file(input, output, list(rules), rejects=rejects, html=html,
                                 as_of=day, lang=lang, separator=separator,
                                 columns=columns_map, projecting=projecting,
                                 overwrite=overwrite, chunk_rows=chunk_rows, progress=bars,
                                 on_rename=batch_cli.start_placing),
            bars, lang, t,
            unusable=(CompareOptionError, OptionError, TableError, AmountTooLarge))
        # an interrupt (or what a Polars call made of it) is Interruptible's
        run.completed(t["interrupted_after"])
        bars.close()
        if rejects is None and summary.problems:
            echo_rejects_sample(summary, t["no_rejects_file"])
        if as_json:
            click.echo(json.dumps(summary.to_dict(), ensure_ascii=False, indent=2,
                                  default=str))
        elif not quiet:
            _print(summary, lang)
    if strict and summary.rows_rejected:
        fail(t["strict"], EXIT_STRICT)


def _print(summary, lang: str) -> None:
    from rich.console import Console
    from rich.table import Table

    t = TEXT[lang]
    table = Table(title=f"{summary.rules_a.name} (A) → {summary.rules_b.name} (B)",
                  show_header=True, header_style="bold")
    table.add_column(t["item"])
    table.add_column(t["value"], justify="right")
    # in words, as the HTML report writes them (the codes are in --json)
    from .report import summary_rows

    for (k, _), (label, text) in zip(summary.items(), summary_rows(summary, lang),
                                     strict=True):
        if not k.endswith("_title"):
            table.add_row(label, text)
    console = Console()
    console.print(table)
    for f in summary.files:
        console.print(t["written"].format(path=f), highlight=False)
