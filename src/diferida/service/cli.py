"""Commands of the service: `diferida db …`, `diferida users …`,
`diferida audit verify`; and what `diferida serve` (diferida/server.py) shares
with them: the database option, opening the store, bringing its schema up
to date."""

from __future__ import annotations

import sys

import click

from ..bounded import read_line_bounded
from ..i18n import help_text
from .settings import default_database_url

database_url_option = click.option(
    "--database-url", default=None, envvar="DIFERIDA_DATABASE_URL", show_envvar=True,
    metavar="URL",
    help=help_text("cli.database_url"))


def open_store(url: str | None):
    """The store at `url` (or the default one); a malformed URL is a usage
    error naming --database-url."""
    from .store import DatabaseURLError, Store

    try:
        return Store(url or default_database_url())
    except DatabaseURLError as exc:
        raise click.UsageError(f"--database-url: {exc}") from None


def upgrade_or_exit(store) -> None:
    """Bring the store's schema up to date, or say why not and exit 1."""
    from sqlalchemy.exc import SQLAlchemyError

    try:
        store.upgrade()
    except SQLAlchemyError as exc:
        click.echo(f"database {shown_url(store.url)}: {type(exc).__name__}: "
                   f"{getattr(exc, 'orig', None) or exc}", err=True)
        sys.exit(1)


def shown_url(url: str) -> str:
    """The database URL as it may be printed: without its password."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


@click.group("db", help=help_text("cmd.db"))
def db_group() -> None:
    pass


@db_group.command("upgrade", help=help_text("cmd.db_upgrade"))
@database_url_option
def db_upgrade(database_url: str | None) -> None:
    store = open_store(database_url)
    upgrade_or_exit(store)
    click.echo(f"{shown_url(store.url)}: schema at revision {store.revision()}")
    store.dispose()


@db_group.command("current", help=help_text("cmd.db_current"))
@database_url_option
def db_current(database_url: str | None) -> None:
    from .store.migrate import head_revision

    store = open_store(database_url)
    click.echo(f"database: {store.revision() or '(empty)'}; newest: {head_revision()}")
    store.dispose()


@click.group("users", help=help_text("cmd.users"))
def users_group() -> None:
    pass


MIN_PASSWORD = 10
# a line of standard input read for a password, at most: /dev/zero has no line end
MAX_PASSWORD_LINE = 1024


def _password(password_stdin: bool) -> str:
    """A new password: one line of standard input, or asked twice without
    echo. Never printed, never logged; only its argon2 hash is stored."""
    if password_stdin:
        line = read_line_bounded(sys.stdin, MAX_PASSWORD_LINE)
        if line is None:
            raise click.UsageError(f"the password must have at most {MAX_PASSWORD_LINE} "
                                   "characters (one line of standard input)")
        password = line
    else:
        password = click.prompt("password", hide_input=True, confirmation_prompt=True,
                                err=True)
    if len(password) < MIN_PASSWORD:
        raise click.UsageError(f"the password must have at least {MIN_PASSWORD} characters")
    if "\x00" in password:
        raise click.UsageError("the password must not contain the NUL character")
    return password


@users_group.command("add", help=help_text("cmd.users_add"))
@click.argument("name")
@click.option("--role", required=True, type=click.Choice(["analyst", "supervisor", "auditor"]),
              help=help_text("cli.role"))
@click.option("--password-stdin", is_flag=True,
              help=help_text("cli.password_stdin"))
@click.option("--no-password", is_flag=True,
              help=help_text("cli.no_password"))
@click.option("--full-name", default=None, metavar="TEXT", help=help_text("cli.full_name"))
@click.option("--title", default=None, metavar="TEXT", help=help_text("cli.title"))
@database_url_option
def users_add(name: str, role: str, password_stdin: bool, no_password: bool,
              full_name: str | None, title: str | None, database_url: str | None) -> None:
    if password_stdin and no_password:
        raise click.UsageError("--password-stdin and --no-password exclude each other")
    from .usernames import allowed, profile_problem, refusal_in_every_language

    if not allowed(name):  # before the password is asked for
        raise click.UsageError(refusal_in_every_language(name))
    # both or neither: a user without them exists, but signs no letter
    if (full_name, title) != (None, None) and (
            problem := profile_problem(full_name, title)) is not None:
        raise click.UsageError(problem)
    password = None if no_password else _password(password_stdin)
    store = open_store(database_url)
    upgrade_or_exit(store)
    try:
        user, token = store.add_user(name, role, full_name=full_name, title=title)
        if password is not None:
            from .workflow import hash_password

            store.set_password(name, hash_password(password))
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    finally:
        store.dispose()
    click.echo(f"user {user.name} ({user.role}) added; token (shown only once):", err=True)
    click.echo(token)


@users_group.command("passwd", help=help_text("cmd.users_passwd"))
@click.argument("name")
@click.option("--password-stdin", is_flag=True,
              help=help_text("cli.password_stdin"))
@database_url_option
def users_passwd(name: str, password_stdin: bool, database_url: str | None) -> None:
    from .workflow import hash_password

    password = _password(password_stdin)
    store = open_store(database_url)
    upgrade_or_exit(store)
    try:
        store.set_password(name, hash_password(password))
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    finally:
        store.dispose()
    click.echo(f"password of {name} set")


@users_group.command("profile", help=help_text("cmd.users_profile"))
@click.argument("name")
@click.option("--full-name", required=True, metavar="TEXT", help=help_text("cli.full_name"))
@click.option("--title", required=True, metavar="TEXT", help=help_text("cli.title"))
@database_url_option
def users_profile(name: str, full_name: str, title: str, database_url: str | None) -> None:
    from ..i18n import DEFAULT_LANG, catalog
    from .usernames import profile_problem

    if (problem := profile_problem(full_name, title)) is not None:
        raise click.UsageError(problem)
    store = open_store(database_url)
    upgrade_or_exit(store)
    try:
        store.set_profile(name, full_name, title)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    finally:
        store.dispose()
    click.echo(catalog(DEFAULT_LANG)["users"]["profile_added"].format(
        name=name, full_name=full_name.strip(), title=title.strip()))


@users_group.command("list", help=help_text("cmd.users_list"))
@database_url_option
def users_list(database_url: str | None) -> None:
    from ..i18n import DEFAULT_LANG, catalog

    store = open_store(database_url)
    upgrade_or_exit(store)
    for u in store.users():
        state = f"disabled {u.disabled_at:%Y-%m-%d}" if u.disabled_at else "active"
        profile = store.profile(u.id)
        signs = (f"{profile[0]}, {profile[1]}" if profile is not None
                 else catalog(DEFAULT_LANG)["users"]["no_profile"])
        click.echo(f"{u.name:<24} {u.role:<8} {state:<20} since {u.created_at:%Y-%m-%d}  "
                   f"{signs}")
    store.dispose()


@users_group.command("disable", help=help_text("cmd.users_disable"))
@click.argument("name")
@database_url_option
def users_disable(name: str, database_url: str | None) -> None:
    store = open_store(database_url)
    upgrade_or_exit(store)
    found = store.disable_user(name)
    store.dispose()
    if not found:
        raise click.UsageError(f"no user named {name!r}")
    click.echo(f"user {name} disabled")


EXIT_TAMPERED = 1
EXIT_CANNOT_VERIFY = 2


@click.group("audit", help=help_text("cmd.audit"))
def audit_group() -> None:
    pass


@audit_group.command("verify", help=help_text("cmd.audit_verify"))
@database_url_option
@click.option("--anchor", "anchors", multiple=True, metavar="CHAIN:ID:HASH",
              help=help_text("cli.anchor"))
def audit_verify(database_url: str | None, anchors: tuple[str, ...]) -> None:
    from sqlalchemy.exc import SQLAlchemyError

    from .store import sqlite_path
    from .store.chain import parse_anchor
    from .store.migrate import head_revision

    try:
        parsed = [parse_anchor(a) for a in anchors]
    except ValueError as exc:
        raise click.UsageError(f"--anchor: {exc}") from None
    url = database_url or default_database_url()
    path = sqlite_path(url)
    if path is not None and not path.exists():
        click.echo(f"no database at {path}", err=True)
        sys.exit(EXIT_CANNOT_VERIFY)
    store = open_store(url)
    try:
        try:
            store.ping()
            revision = store.revision()
        except SQLAlchemyError as exc:
            click.echo(f"database {shown_url(url)}: {type(exc).__name__}: "
                       f"{getattr(exc, 'orig', None) or exc}", err=True)
            sys.exit(EXIT_CANNOT_VERIFY)
        if revision != head_revision():
            click.echo(f"database {shown_url(url)} is at schema revision {revision or '(none)'}, "
                       f"the newest is {head_revision()}: run `diferida db upgrade` first",
                       err=True)
            sys.exit(EXIT_CANNOT_VERIFY)
        try:
            report = store.verify(parsed)
        except Exception as exc:
            # a table or column the schema revision promises cannot be read,
            # or what is stored is nothing the store writes
            reason = getattr(exc, "orig", None) or exc
            click.echo(f"database {shown_url(url)}: the store cannot be read as recorded: "
                       f"{type(exc).__name__}: {' '.join(str(reason).split())[:300]}")
            click.echo("audit verify: TAMPERING DETECTED")
            sys.exit(EXIT_TAMPERED)
    finally:
        store.dispose()
    for line in report.lines():
        click.echo(line)
    if not report.intact:
        click.echo("audit verify: TAMPERING DETECTED")
        sys.exit(EXIT_TAMPERED)
    click.echo("audit verify: intact")
