"""The FastAPI application: the JSON API under /api/v1, /health, and the
web calculator's pages when the web package is installed."""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager

from fastapi import FastAPI

from .. import __version__
from .api import router as api_router
from .errors import GuardMiddleware, install_error_handlers
from .evaluator import Evaluator
from .settings import Settings

# uvicorn configures its own loggers; the startup line goes where its lines go
log = logging.getLogger("uvicorn.error")


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings.from_env()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        from sqlalchemy.engine import make_url

        from .store import Store

        store = Store(settings.database_url)
        if settings.migrate_on_start:
            store.upgrade()
        app.state.store = store
        app.state.evaluator = Evaluator()
        log.info("diferida %s: database %s", __version__,
                 make_url(settings.database_url).render_as_string(hide_password=True))
        try:
            yield
        finally:
            app.state.evaluator.close()
            store.dispose()

    app = FastAPI(
        title="diferida",
        version=__version__,
        summary="Deferred pensions under Article 19 (Puerto Rico Government Employees "
                "Retirement System): determinations, batches, and recorded cases.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    install_error_handlers(app)
    app.add_middleware(GuardMiddleware, max_json_bytes=settings.max_json_bytes,
                       max_upload_bytes=settings.max_upload_bytes)
    app.include_router(api_router)

    # The web calculator is optional for the API, but an import error inside
    # it must surface, never be mistaken for its absence.
    try:
        from diferida.web.routes import router as web_router
    except ModuleNotFoundError as exc:
        if exc.name != "diferida.web.routes" and exc.name != "diferida.web":
            raise
    else:
        app.include_router(web_router)
    return app
