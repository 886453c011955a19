"""`diferida project`: the deferred pensions of a member file, fiscal year by
fiscal year, and their present value.

Exit status: 0 when the run completed (rejected rows included, unless
--strict); 1 with --strict when a row was rejected; 2 when a file, a table
or an option cannot be used (nothing is written); 3 when the row accounting
fails (a bug: nothing is written); 130 when interrupted (nothing is written,
or, once the completed outputs were being put in place, all of them are).
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
from .options import OptionError, projection_options, valuation_options

EXIT_STRICT, EXIT_UNUSABLE, EXIT_ACCOUNTING, EXIT_INTERRUPTED = 1, 2, 3, 130

# i18n/<lang>/cli.toml: what `project` says, and what every run says when it stops short
TEXT = {lang: {**catalog(lang)["project_run"], **batch_cli.RUN_TEXT[lang]} for lang in LANGS}


@click.command("project", help=help_text("cmd.project"))
@click.argument("input", type=IN_FILE)
@click.option("-o", "--output", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help=help_text("cli.projection_output"))
@projection_options(required=True)
@valuation_options()
@click.option("--per-member", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help=help_text("cli.per_member"))
@click.option("--chart", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help=help_text("cli.chart"))
@click.option("--rules", "rules_name", default=None, metavar="NAME|PATH",
              help=help_text("cli.rules", names=", ".join(builtin_names())))
@file_options(as_of_help=help_text("cli.projection_as_of"),
              lang_help=help_text("cli.projection_lang"))
def project_cmd(input, output, discount, mortality, improvement, cola, start, horizon,
                sex_blend, valuation_date, claim_rates, mortality_scale, by, sensitivity,
                per_member, chart, rejects, as_of, rules_name, lang, separator,
                columns_map, strict, overwrite, quiet, as_json, chunk_rows) -> None:
    from .engine import AmountTooLarge
    from .mortality import TableError
    from .runner import project_file

    t = TEXT[lang]
    day = read_date(as_of, "--as-of")
    v_day = read_date(valuation_date, "--valuation-date")
    bars = batch_cli.PhaseBars(TEXT[lang], enabled=not quiet and sys.stderr.isatty())
    with batch_cli.Interruptible(t["interrupted"], bars.close) as run:
        summary = batch_cli.run_file(
            lambda: project_file(
                input, output, rejects, discount=discount, mortality=mortality,
                improvement=improvement, cola=cola, start=start, horizon=horizon,
                sex_blend=sex_blend, per_member=per_member, chart=chart, as_of=day,
                rules=rules_name, lang=lang, separator=separator, columns=columns_map,
                overwrite=overwrite, chunk_rows=chunk_rows, progress=bars,
                on_rename=batch_cli.start_placing, valuation_date=v_day,
                claim_rates=claim_rates, mortality_scale=mortality_scale, by=by,
                sensitivity=sensitivity),
            bars, lang, t, unusable=(OptionError, TableError, AmountTooLarge))
        # an interrupt (or what a Polars call made of it) is Interruptible's
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
    lines = [t["title"].format(input=summary.input), t["read"].format(n=summary.rows_read),
             t["projected"].format(n=summary.projected)]
    if summary.valuation_extras:
        lines += valuation_lines(summary, lang)
    lines += [t["not_entitled"].format(n=summary.not_entitled),
              t["rejected"].format(n=summary.rows_rejected, p=summary.problems)]
    if summary.assumptions["assumptions"]["mortality"]["table"] != "none":
        lines.append(t["sex"].format(given=summary.sex_given, blended=summary.sex_blended))
    lines.append(t["payments"].format(v=f"{float(summary.totals['payments']):,.2f}"))
    for rate, v in summary.totals.items():
        if rate != "payments":
            lines.append(t["pv"].format(rate=rate, v=f"{float(v):,.2f}"))
    lines.append(t["output"].format(path=summary.output))
    for p in (summary.assumptions_file, *summary.extra_files, summary.per_member,
              summary.chart, summary.rejects):
        if p:
            lines.append(t["file"].format(path=p))
    lines.append(t["time"].format(**summary.seconds))
    click.echo("\n".join(lines))


def valuation_lines(summary, lang: str) -> list[str]:
    """What a valuation adds to the summary: in pay, left out, the starts of
    the first fiscal year, the two dates."""
    v = catalog(lang)["valuation"]
    n = summary.starts_first_year
    return [v["in_pay_line"].format(n=summary.in_pay),
            v["excluded_line"].format(deceased=summary.deceased, refunded=summary.refunded),
            v["starts_line"].format(n=f"{n:,}" if isinstance(n, int) else f"{n:,.2f}"),
            v["valuation_line"].format(valuation=summary.valuation_date.isoformat(),
                                       as_of=summary.as_of.isoformat())]
