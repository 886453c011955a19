"""`diferida census`: the review of a member file: an HTML page and a
workbook (distributions, outliers, the backlog, changes since a prior file).

Exit status: 0 when the run completed (rejected rows included, unless
--strict); 1 with --strict when a row was rejected; 2 when a file or an
option cannot be used (nothing is written); 3 when the row accounting fails
(a bug: nothing is written); 130 when interrupted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..batch import cli as batch_cli
from ..batch.options import IN_FILE, echo_rejects_sample, file_options, read_date
from ..i18n import LANGS, catalog, help_text
from ..rules import builtin_names

EXIT_STRICT, EXIT_UNUSABLE, EXIT_ACCOUNTING = 1, 2, 3
FILE = click.Path(path_type=Path, dir_okay=False)
# i18n/<lang>/census.toml and cli.toml
TEXT = {lang: {**catalog(lang)["census_run"], **batch_cli.RUN_TEXT[lang]} for lang in LANGS}


@click.command("census", help=help_text("cmd.census"))
@click.argument("input", type=IN_FILE)
@click.option("-o", "--output", type=FILE, default=None,
              help=help_text("cli.census_output"))
@click.option("--html", type=FILE, default=None, help=help_text("cli.census_html"))
@click.option("--prior", type=IN_FILE, default=None,
              help=help_text("cli.prior"))
@click.option("--rules", "rules_name", default=None, metavar="NAME|PATH",
              help=help_text("cli.rules", names=", ".join(builtin_names())))
@file_options(as_of_help=help_text("cli.census_as_of"),
              lang_help=help_text("cli.census_lang"))
def census_cmd(input, output, html, prior, rules_name, rejects, as_of, lang, separator,
               columns_map, strict, overwrite, quiet, as_json, chunk_rows) -> None:
    from ..projection.options import OptionError
    from .runner import census_file

    t = TEXT[lang]
    day = read_date(as_of, "--as-of")
    bars = batch_cli.PhaseBars(TEXT[lang], enabled=not quiet and sys.stderr.isatty())
    with batch_cli.Interruptible(t["interrupted"], bars.close) as run:
        summary = batch_cli.run_file(
            lambda: census_file(input, output, html, rejects, prior=prior, as_of=day,
                                rules=rules_name, lang=lang, separator=separator,
                                columns=columns_map, overwrite=overwrite,
                                chunk_rows=chunk_rows, progress=bars,
                                on_rename=batch_cli.start_placing),
            bars, lang, t, unusable=(OptionError,))
        run.completed(t["interrupted_after"])
        bars.close()
        _report(summary, lang, rejects is None, quiet, as_json)
    if strict and summary.rows_rejected:
        click.echo(t["strict"], err=True)
        sys.exit(EXIT_STRICT)


def _report(summary, lang: str, no_rejects_file: bool, quiet: bool, as_json: bool) -> None:
    t = TEXT[lang]
    if no_rejects_file and summary.problems:
        echo_rejects_sample(summary, t["no_rejects_file"], t["more"])
    if as_json:
        click.echo(json.dumps(summary.to_dict(), ensure_ascii=False, indent=2))
        return
    if quiet:
        return
    f = summary.figures
    c = summary.current
    lines = [t["title"].format(input=summary.input), t["read"].format(n=c.rows_read),
             t["members"].format(n=c.members),
             t["rejected"].format(n=c.rows_rejected, p=c.problems),
             t["backlog"].format(n=f["backlog"]),
             t["outliers"].format(n=sum(f["outliers"].values()))]
    if summary.prior is not None:
        lines.append(t["prior"].format(input=summary.prior.input, joiners=f["joiners"],
                                       leavers=f["leavers"], changed=f["members_changed"]))
        if f["benefit_compared"]:
            by = f["changes_by_field"]
            lines.append(t["benefit"].format(status=by["benefit_status"],
                                             amount=by["monthly_in_pay"],
                                             since=by["in_pay_since"]))
    for p in (summary.output, summary.html, summary.rejects):
        if p:
            lines.append(t["file"].format(path=p))
    lines.append(t["time"].format(**summary.seconds))
    click.echo("\n".join(lines))
