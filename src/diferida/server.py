"""The whole site, assembled: the service's API (`diferida.service`) with
the pages of `diferida.web` (the calculator, the analyst's workbench), and
`diferida serve`, which runs it.

Here, above both packages: the web pages are built on the service (the
workbench calls `service.workflow`), so the service never imports them; it
takes them as routers (`service.app.create_app(pages=...)`).

    uvicorn diferida.server:create_app --factory --no-proxy-headers
"""

from __future__ import annotations

import os
import sys

import click

from diferida.digits import WholeNumber
from diferida.i18n import help_text
from diferida.service.cli import database_url_option, open_store, shown_url, upgrade_or_exit
from diferida.service.settings import default_database_url

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from fastapi import APIRouter, FastAPI

    from diferida.service.settings import Settings


def web_pages() -> list[APIRouter]:
    """The routers of the web pages: the calculator, then the workbench
    (/analista); none when the web package is not installed. An import error
    inside it surfaces, never mistaken for its absence."""
    try:
        from diferida.web.routes import router as calculator
    except ModuleNotFoundError as exc:
        if exc.name not in ("diferida.web.routes", "diferida.web"):
            raise
        return []
    from diferida.web.workbench.routes import router as workbench

    return [calculator, workbench]


def create_app(settings: Settings | None = None) -> FastAPI:
    """The API (docs at /docs), the calculator and the workbench in one
    application, under the service's middleware, limits and store."""
    from diferida.service.app import create_app as create_service

    return create_service(settings, pages=web_pages())


@click.command("serve", help=help_text("cmd.serve"))
@click.option("--host", default="127.0.0.1", show_default=True, help=help_text("cli.host"))
@click.option("--port", default=8000, show_default=True, type=WholeNumber(0, 65535))
@click.option("--workers", default=1, show_default=True, type=WholeNumber(1, 64),
              help=help_text("cli.workers"))
@database_url_option
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["critical", "error", "warning", "info", "debug"]))
def serve_cmd(host: str, port: int, workers: int, database_url: str | None,
              log_level: str) -> None:
    import uvicorn

    from diferida.letter.texts import LetterTextsError, check_letter_texts
    from diferida.service.serving import NoDelayConfig
    from diferida.web.guidance import TextsError, check_texts

    try:  # an administrator's texts for the web pages and the letter (DIFERIDA_WEB_TEXTS_DIR)
        check_texts()
        check_letter_texts()
    except (TextsError, LetterTextsError) as exc:
        click.echo(f"cannot start: {exc}", err=True)
        sys.exit(1)
    from diferida.letter.texts import setup_report

    for line in setup_report():  # the letter texts an administrator must still write
        click.echo(line, err=True)
    url = database_url or default_database_url()
    store = open_store(url)
    upgrade_or_exit(store)
    store.dispose()
    click.echo(f"database: {shown_url(url)}", err=True)
    # the workers read their settings from the environment; the schema is
    # already current, so they need not each migrate
    os.environ["DIFERIDA_DATABASE_URL"] = url
    os.environ["DIFERIDA_MIGRATE_ON_START"] = "false"
    config = NoDelayConfig("diferida.server:create_app", factory=True, host=host, port=port,
                           workers=workers, log_level=log_level)
    try:
        if workers > 1:
            from uvicorn.supervisors import Multiprocess

            Multiprocess(config, sockets=[config.bind_socket()]).run()
        else:
            uvicorn.Server(config).run()
    except KeyboardInterrupt:
        pass
