"""`diferida valuation`: the total pension liability of a census at a
measurement date, its sensitivity, the schedule of changes since a prior
measurement and the employers' shares (docs/valuation.md).

Exit status as `diferida project`: 0 done (1 with --strict when a row was
rejected), 2 a file, a table or an option that cannot be used (nothing
written), 3 the row accounting failed, 130 interrupted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..batch import cli as batch_cli
from ..batch.options import IN_FILE, echo_rejects_sample, file_options, read_date
from ..i18n import LANGS, catalog, help_text
from ..projection.options import IMPROVEMENTS, MAX_REJECTED_SHARE

TEXT = {lang: {**catalog(lang)["project_run"], **batch_cli.RUN_TEXT[lang]} for lang in LANGS}
FILE = click.Path(path_type=Path, dir_okay=False)


@click.command("valuation", help=help_text("cmd.valuation"))
@click.argument("input", type=IN_FILE)
@click.option("-o", "--output", required=True, type=FILE, help=help_text("cli.valuation_output"))
@click.option("--discount", default=None, metavar="RATE", help=help_text("cli.valuation_discount"))
@click.option("--yield-curve", default=None, metavar="CURVE.csv", help=help_text("cli.yield_curve"))
@click.option("--measurement-date", default=None, metavar="YYYY-MM-DD",
              help=help_text("cli.measurement_date"))
@click.option("--mortality", default="none", show_default=True,
              metavar="none|pub2010|TABLE.csv", help=help_text("cli.mortality"))
@click.option("--improvement", default=None, metavar="|".join(IMPROVEMENTS),
              help=help_text("cli.improvement"))
@click.option("--mortality-scale", default=None, metavar="F",
              help=help_text("cli.mortality_scale"))
@click.option("--claim-rates", default=None, metavar="RATES.csv",
              help=help_text("cli.claim_rates"))
@click.option("--cola", default="0", show_default=True, metavar="RATE", help=help_text("cli.cola"))
@click.option("--start", default="eligibility", show_default=True,
              metavar="eligibility|age:N", help=help_text("cli.start_payments"))
@click.option("--sex-blend", default="0.5", show_default=True, metavar="W",
              help=help_text("cli.sex_blend"))
@click.option("--prior", default=None, type=IN_FILE, help=help_text("cli.prior_census"))
@click.option("--prior-date", default=None, metavar="YYYY-MM-DD",
              help=help_text("cli.prior_date"))
@click.option("--prior-assumptions", default=None, type=IN_FILE,
              help=help_text("cli.prior_assumptions"))
@click.option("--prior-rules", default=None, metavar="NAME|PATH",
              help=help_text("cli.prior_rules"))
@click.option("--prior-rejects", default=None, type=FILE, help=help_text("cli.prior_rejects"))
@click.option("--allow-rejects", is_flag=True, help=help_text(
    "cli.allow_rejects", share=f"{MAX_REJECTED_SHARE:%}"))
@click.option("--employer-names", default=None, type=IN_FILE, help=help_text("cli.employer_names"))
@click.option("--history", default=None, type=IN_FILE, help=help_text("cli.history"))
@click.option("--remaining-service-life", default=None, metavar="YEARS",
              help=help_text("cli.remaining_service_life"))
@click.option("--discount-index", default=None, metavar="NAME",
              help=help_text("cli.discount_index"))
@click.option("--discount-index-date", default=None, metavar="YYYY-MM-DD",
              help=help_text("cli.discount_index_date"))
@click.option("--payments-after", default=None, metavar="AMOUNT",
              help=help_text("cli.payments_after"))
@click.option("--roll-forward-from", default=None, metavar="YYYY-MM-DD",
              help=help_text("cli.roll_forward_from"))
@click.option("--roll-forward-adjustment", "roll_adjustments", multiple=True,
              metavar="LABEL=AMOUNT", help=help_text("cli.roll_forward_adjustment"))
@click.option("--reconcile-census", default=None, type=IN_FILE,
              help=help_text("cli.reconcile_census"))
@click.option("--payments-after-through", default=None, metavar="YYYY-MM-DD",
              help=help_text("cli.payments_after_through"))
@click.option("--rules", "rules_name", default=None, metavar="NAME|PATH",
              help=help_text("cli.rules", names="article19"))
@file_options(as_of_help=help_text("cli.valuation_as_of"),
              lang_help=help_text("cli.projection_lang"))
def valuation_cmd(input, output, discount, yield_curve, measurement_date, mortality,
                  improvement, mortality_scale, claim_rates, cola, start, sex_blend, prior,
                  prior_date, prior_assumptions, prior_rules, prior_rejects, allow_rejects,
                  employer_names, history, remaining_service_life, discount_index,
                  discount_index_date, payments_after, roll_forward_from, roll_adjustments,
                  reconcile_census,
                  payments_after_through, rules_name,
                  rejects, as_of, lang, separator, columns_map,
                  strict, overwrite, quiet, as_json, chunk_rows) -> None:
    from ..projection.engine import AmountTooLarge
    from ..projection.mortality import TableError
    from ..projection.options import OptionError
    from .employer import NamesError
    from .runner import value_file

    t = TEXT[lang]
    day = read_date(as_of, "--as-of")
    v = read_date(measurement_date, "--measurement-date")
    p_day = read_date(prior_date, "--prior-date")
    index_day = read_date(discount_index_date, "--discount-index-date")
    through = read_date(payments_after_through, "--payments-after-through")
    roll_day = read_date(roll_forward_from, "--roll-forward-from")
    bars = batch_cli.PhaseBars(TEXT[lang], enabled=False)
    with batch_cli.Interruptible(t["interrupted"], bars.close) as run:
        summary = batch_cli.run_file(
            lambda: value_file(
                input, output, rejects, discount=discount, yield_curve=yield_curve,
                mortality=mortality, improvement=improvement, mortality_scale=mortality_scale,
                claim_rates=claim_rates, cola=cola, start=start, sex_blend=sex_blend,
                measurement_date=v, as_of=day, rules=rules_name, prior=prior,
                prior_date=p_day, prior_assumptions=prior_assumptions,
                prior_rules=prior_rules, prior_rejects=prior_rejects,
                employer_names=employer_names, allow_rejects=allow_rejects,
                history=history, remaining_service_life=remaining_service_life,
                discount_index=discount_index, discount_index_date=index_day,
                payments_after=payments_after, payments_after_through=through,
                roll_forward_from=roll_day, roll_forward_adjustments=roll_adjustments,
                reconcile_census=reconcile_census, lang=lang,
                separator=separator, columns=columns_map, overwrite=overwrite,
                chunk_rows=chunk_rows, on_rename=batch_cli.start_placing),
            bars, lang, t, unusable=(OptionError, TableError, AmountTooLarge, NamesError))
        run.completed(t["interrupted_after"])
        _report(summary, lang, rejects is None, quiet, as_json)
    if strict and summary.rows_rejected:
        click.echo(t["strict"], err=True)
        sys.exit(1)


def _report(summary, lang: str, no_rejects_file: bool, quiet: bool, as_json: bool) -> None:
    if no_rejects_file and summary.problems:
        t = TEXT[lang]
        echo_rejects_sample(summary, t["no_rejects_file"], t["more"])
    if as_json:
        click.echo(json.dumps(summary.to_dict(), ensure_ascii=False, indent=2))
        return
    if quiet:
        return
    w = catalog(lang)["liability"]
    c = catalog(lang)["liability_changes"]
    li = summary.liability
    lines = [f"{w['title']} — {summary.input}",
             f"{w['measurement_date']}: {summary.measurement_date.isoformat()}",
             f"{w['total']}: {float(li['total']):,.2f}",
             f"  {w['deferred']}: {float(li['deferred']):,.2f}",
             f"  {w['in_pay']}: {float(li['in_pay']):,.2f}"]
    for key, label in (("rate_minus_1_point", "−1"), ("rate_plus_1_point", "+1")):
        if li[key] is not None:
            lines.append(f"  {label}: {float(li[key]):,.2f}")
    counts = summary.counts
    lines.append(", ".join(f"{k} {v:,}" for k, v in counts.items()))
    note = summary.rejected_rows
    if note and (note["census"]["rows_rejected"] or note["prior"]["rows_rejected"]):
        lines.append(note["note"])
    if summary.changes:
        lines.append(c["col_line"] + ":")
        for ch in summary.changes:
            lines.append(f"  {ch['line']}: {float(ch['amount']):,.2f}")
    g = summary.gasb73 or {}
    gw = catalog(lang)["gasb73"]
    if g.get("expense"):
        lines.append(f"{gw['expense_total']}: {float(g['expense']['total']):,.2f}")
    if summary.roll_forward:
        rf = summary.roll_forward
        lines.append(gw["roll_start"].format(date=rf["valued_at"]) +
                     f": {float(rf['at_rate']['start']):,.2f}")
    if g.get("history"):
        h = g["history"]
        lines.append(gw[f"history_{h['this_measurement']}"].format(
            file=h["file"], before=h["records_before"]))
    lines.append(f"→ {summary.output}")
    click.echo("\n".join(lines))
