"""The command line: `diferida evaluate`, `diferida examples`, `diferida rules`.

Thin: it parses options into rules §1 fields, calls the core, renders.
Exit status: 0 for any determination, 2 for bad input (every bad field named).
"""

from __future__ import annotations

import json
import sys
from datetime import date
from importlib import resources

import click

from .bounded import shown
from .digits import iso_date
from .i18n import LANGS, help_text
from .rules import RulesError, builtin_names, load_rules

EXIT_BAD_INPUT = 2

# CLI option -> rules §1 field, so messages name what the user typed
OPTIONS = {
    "participant_id": "--id",
    "birth_date": "--birth-date",
    "entry_date": "--entry-date",
    "separation_date": "--separation-date",
    "creditable_service_years": "--service",
    "average_compensation": "--compensation",
    "group": "--group",
    "refund_requested": "--refund/--no-refund",
    "deferred_right_1960": "--deferred-right-1960",
    "requested_start_date": "--start",
    "as_of": "--as-of",
}

lang_option = click.option("--lang", type=click.Choice(LANGS), default="es", show_default=True,
                           help=help_text("cli.lang"))
rules_option = click.option("--rules", "rules_name", default=None, metavar="NAME|PATH",
                            help=help_text("cli.rules", names=", ".join(builtin_names())))
as_of_option = click.option("--as-of", default=None, metavar="YYYY-MM-DD",
                            help=help_text("cli.as_of"))


def _parse_as_of(value: str | None) -> date | None:
    if value is None:
        return None
    day = iso_date(value)  # not fromisoformat alone: it takes 20260630 and week dates
    if day is None:
        click.echo(f"--as-of (as_of): '{shown(value)}' is not a valid YYYY-MM-DD date", err=True)
        sys.exit(EXIT_BAD_INPUT)
    return day


def _load_rules_or_exit(name: str | None):
    try:
        return load_rules(name)
    except RulesError as exc:
        click.echo(f"--rules: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)


def _lazy_command(name: str) -> click.Command:
    """The command `name` of another part of the package, imported when it is
    used. Real import statements, not module names in a table: the layer test
    (tests/test_layers.py) reads them, so the command line's place above
    each of these parts is checked like any other import."""
    if name == "batch":
        from .batch.cli import batch_cmd as command
    elif name == "project":
        from .projection.cli import project_cmd as command
    elif name == "compare":
        from .compare.cli import compare_cmd as command
    elif name == "census":
        from .census.cli import census_cmd as command
    elif name == "valuation":
        from .liability.cli import valuation_cmd as command
    elif name == "serve":
        from .server import serve_cmd as command
    elif name == "db":
        from .service.cli import db_group as command
    elif name == "users":
        from .service.cli import users_group as command
    elif name == "audit":
        from .service.cli import audit_group as command
    else:
        raise KeyError(name)
    return command


class LazyGroup(click.Group):
    """Commands of the other parts (batch, service, the site) are imported only
    when used, so `diferida evaluate` stays quick and each part owns its
    module. Their modules import only click at first (the libraries a command
    needs load when it runs), so `diferida --help` can list them all quickly."""

    LAZY = ("batch", "project", "compare", "census", "valuation", "serve", "db", "users",
            "audit")

    def list_commands(self, ctx):
        return sorted([*super().list_commands(ctx), *self.LAZY])

    def get_command(self, ctx, name):
        if name in self.LAZY:
            return _lazy_command(name)
        return super().get_command(ctx, name)

    def invoke(self, ctx):
        """An interrupt that reaches here from a command that writes outputs
        (one that came at the very edge of its own handling) ends it as the
        command would, with exit status 130, not click's "Aborted!" (exit 1)."""
        from .interrupts import WRITING, interrupted_text, lang_of

        words = [*getattr(ctx, "_protected_args", ()), *ctx.args]
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            if not words or words[0] not in WRITING:
                raise
            outputs = sys.modules.get("diferida.batch.outputs")
            if outputs is not None:
                outputs.discard_unfinished()
            click.echo(interrupted_text(lang_of(["diferida", *words])).rstrip("\n"), err=True)
            sys.exit(130)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]},
             help=help_text("cmd.main"))
@click.version_option(package_name="diferida")
def main() -> None:
    """The `diferida` command; its help and every command's and option's:
    i18n/<lang>/help.toml (sections [help.cmd] and [help.cli])."""


@main.command("evaluate", help=help_text("cmd.evaluate"))
@click.option("--id", "participant_id", default=None, help=help_text("cli.participant_id"))
@click.option("--birth-date", default=None, metavar="YYYY-MM-DD", help=help_text("cli.birth_date"))
@click.option("--entry-date", default=None, metavar="YYYY-MM-DD",
              help=help_text("cli.entry_date"))
@click.option("--separation-date", default=None, metavar="YYYY-MM-DD",
              help=help_text("cli.separation_date"))
@click.option("--service", default=None, metavar="YEARS",
              help=help_text("cli.service"))
@click.option("--compensation", default=None, metavar="DOLLARS",
              help=help_text("cli.compensation"))
@click.option("--group", default="general", show_default=True,
              metavar="general|police|firefighter",
              help=help_text("cli.group"))
@click.option("--refund/--no-refund", "refund", default=None,
              help=help_text("cli.refund"))
@click.option("--deferred-right-1960/--no-deferred-right-1960", "deferred_right_1960",
              default=None,
              help=help_text("cli.deferred_right_1960"))
@click.option("--start", "requested_start_date", default=None, metavar="YYYY-MM-DD",
              help=help_text("cli.start"))
@as_of_option
@click.option("--rules", "rules_name", default=None, multiple=True, metavar="NAME|PATH",
              help=help_text("cli.rules_twice", names=", ".join(builtin_names())))
@lang_option
@click.option("--json", "as_json", is_flag=True, help=help_text("cli.json_determination"))
def evaluate_cmd(participant_id, birth_date, entry_date, separation_date, service, compensation,
                 group, refund, deferred_right_1960, requested_start_date, as_of, rules_name,
                 lang, as_json) -> None:
    from .core import InputError, evaluate
    from .render import render_text

    fields = {
        "participant_id": participant_id, "birth_date": birth_date, "entry_date": entry_date,
        "separation_date": separation_date, "creditable_service_years": service,
        "average_compensation": compensation, "group": group, "refund_requested": refund,
        "deferred_right_1960": deferred_right_1960, "requested_start_date": requested_start_date,
        "as_of": as_of,
    }
    names = list(rules_name or ())
    if len(names) > 2:
        click.echo(f"--rules: give one rule set, or two to compare (got {len(names)})",
                   err=True)
        sys.exit(EXIT_BAD_INPUT)
    loaded = [_load_rules_or_exit(n) for n in (names or [None])]
    given = {k: v for k, v in fields.items() if v is not None}
    try:
        ds = [evaluate(given, rules=r, lang=lang) for r in loaded]
    except InputError as exc:
        if as_json:
            click.echo(json.dumps({"errors": [
                {**p.to_dict(), "option": OPTIONS.get(p.field)} for p in exc.problems
            ]}, ensure_ascii=False, indent=2))
        for p in exc.problems:
            click.echo(f"{OPTIONS.get(p.field, p.field)}: {p.message}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    if len(ds) == 2:
        _print_two(*ds, lang=lang, as_json=as_json)
        return
    d = ds[0]
    if as_json:
        click.echo(json.dumps(d.to_dict(), ensure_ascii=False, indent=2))
    else:
        click.echo(render_text(d))


def _print_two(a, b, *, lang: str, as_json: bool) -> None:
    """Both determinations of one person, and what differs with its reason
    (diferida.compare.person: the same comparison the web calculator shows)."""
    from .compare.person import compare_person
    from .i18n import catalog
    from .render import render_text

    comparison = compare_person(a, b)
    if as_json:  # the codes and ISO dates, for programs
        click.echo(json.dumps(comparison.to_dict(), ensure_ascii=False, indent=2))
        return
    side = catalog(lang)["compare_person"]["side"]
    for label, d in (("A", a), ("B", b)):
        click.echo("=" * 78)
        click.echo(side.format(side=label, name=d.rules_name, version=d.rules_version))
        click.echo(render_text(d))
    click.echo("=" * 78)
    click.echo(comparison.text())  # in words, in the language asked for


@main.command("examples", help=help_text("cmd.examples"))
@as_of_option
@rules_option
@lang_option
def examples_cmd(as_of, rules_name, lang) -> None:
    import textwrap

    import polars as pl

    from .core import determination_from_row, run
    from .explain import cite
    from .i18n import catalog, fmt_date
    from .money import format_money
    from .render import LABELS, render_text

    path = resources.files("diferida") / "data" / "spec_examples.csv"
    frame = pl.read_csv(path.read_bytes(), infer_schema=False)
    rules = _load_rules_or_exit(rules_name)
    full, errors, r = run(frame, as_of=_parse_as_of(as_of), rules=rules)
    assert errors.height == 0, errors
    words, labels, status = catalog(lang)["examples"], LABELS[lang], catalog(lang)["status"]
    summary = []
    for n, row in enumerate(full.iter_rows(named=True), start=1):
        d = determination_from_row(row, r, lang)
        name = words["title"].format(n=n, id=row["participant_id"])
        click.echo("=" * 78)
        click.echo(name)
        click.echo(render_text(d))
        parts = [status[d.status]]
        if d.status != "not_entitled" and d.route is not None:
            parts += [f"{labels['route']}: {cite(r.route(d.route).citation, lang)}",
                      f"{labels['eligibility_date']}: {fmt_date(d.eligibility_date, lang)}",
                      f"{labels['annual']}: {format_money(d.annual_amount)}",
                      f"{labels['monthly']}: {format_money(d.monthly_amount)}"]
        summary.append(f"{name}: " + "; ".join(parts) + ".")
    click.echo("=" * 78)
    click.echo(words["summary"])
    # in words, every example whole: long lines wrap, nothing is cut with "…"
    for line in summary:
        click.echo(textwrap.fill(line, 78, initial_indent="  ", subsequent_indent="    ",
                                 break_long_words=False, break_on_hyphens=False))


@main.group("rules", help=help_text("cmd.rules"))
def rules_group() -> None:
    pass


@rules_group.command("list")
def rules_list() -> None:
    names = builtin_names()
    sets = [load_rules(name) for name in names]
    # columns as wide as the longest name and version (a relief's name is long)
    wn = max((len(n) for n in names), default=0)
    wv = max((len(r.version) for r in sets), default=0)
    for name, r in zip(names, sets, strict=True):
        click.echo(f"{name:<{wn}}  {r.version:<{wv}}  {r.description}")
    click.echo("\nCompare two with: diferida rules diff A B")


@rules_group.command("diff", help=help_text("cmd.rules_diff"))
@click.argument("a")
@click.argument("b")
@click.option("--json", "as_json", is_flag=True, help=help_text("cli.json_differences"))
@click.option("--lang", type=click.Choice(LANGS), default=LANGS[0], show_default=True,
              help=help_text("cli.lang_table"))
def rules_diff_cmd(a: str, b: str, as_json: bool, lang: str) -> None:
    from .compare.diff import diff_rows

    ra, rb = _load_rules_or_exit(a), _load_rules_or_exit(b)
    rows = diff_rows(ra, rb)
    if as_json:
        click.echo(json.dumps({"a": ra.version, "b": rb.version, "differences": [
            {"key": k, "a": va, "b": vb, "citation": c} for k, va, vb, c in rows]},
            ensure_ascii=False, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    from .i18n import catalog

    words = catalog(lang)["rules_diff"]
    console = Console()
    for label, r in (("A", ra), ("B", rb)):
        note = f"  [bold]{words['illustrative']}[/bold]" if r.illustrative else ""
        console.print(f"{label}: {r.name} ({r.version}){note}", highlight=False)
    if not rows:
        console.print(words["none"])
        return
    t = Table(show_header=True, header_style="bold", show_lines=True)
    for head in (words["what"], f"A: {ra.name}", f"B: {rb.name}", words["citation"]):
        t.add_column(head, overflow="fold")
    for row in rows:
        t.add_row(*row)
    console.print(t)


@rules_group.command("show")
@click.argument("name", default="article19")
def rules_show(name: str) -> None:
    r = _load_rules_or_exit(name)
    click.echo(json.dumps({"version": r.version, "rules": r.resolved}, ensure_ascii=False,
                          indent=2))


if __name__ == "__main__":
    main()
