"""The FastAPI application of the service: the JSON API under /api/v1 and
/health, with its middleware, limits, store and logs. The pages of
`diferida.web` (the calculator, the analyst's workbench) are routers the
caller passes in: `diferida.server.create_app` assembles the whole site, so
that this package never imports the web package, which is built on it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from contextlib import asynccontextmanager, suppress

from fastapi import APIRouter, FastAPI
from fastapi_offline import FastAPIOffline
from starlette.middleware.gzip import GZipMiddleware
from starlette.routing import Mount, Route

from .. import __version__
from .api import router as api_router
from .docs_pages import DocsHeaders
from .errors import GuardMiddleware, install_error_handlers
from .evaluator import Evaluator
from .logs import install_log_filters, register_routes
from .proxies import ForwardedClient
from .schemas import complete_responses
from .settings import Settings
from .throttle import FailureDigest, Limiter, PublicRateLimit
from .workflow_api import router as workflow_router

# uvicorn configures its own loggers; the startup line goes where its lines go
log = logging.getLogger("uvicorn.error")
# Swagger UI, ReDoc, and the files they load (fastapi-offline)
DOCS_URL, REDOC_URL, DOCS_STATIC_URL = "/docs", "/redoc", "/static-offline-docs"


def create_app(settings: Settings | None = None, *,
               pages: Sequence[APIRouter] = ()) -> FastAPI:
    """The API, and after it the routers in `pages` (HTML pages, outside the
    OpenAPI schema), under the same middleware, limits and store."""
    settings = settings or Settings.from_env()
    install_log_filters()

    lifespan = _lifespan(settings)

    # Swagger UI and ReDoc from files shipped in a package, not from a CDN:
    # /docs works offline and serves no third-party script where tokens are pasted.
    app = FastAPIOffline(
        docs_url=DOCS_URL,
        redoc_url=REDOC_URL,
        static_url=DOCS_STATIC_URL,
        title="diferida",
        version=__version__,
        summary="Deferred pensions under Article 19 (Puerto Rico Government Employees "
                "Retirement System): determinations, batches, and recorded cases.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    generated = app.openapi

    def openapi() -> dict:
        if app.openapi_schema is None:
            complete_responses(generated())
        return app.openapi_schema

    app.openapi = openapi
    app.state.limiter = Limiter(settings.public_limit, settings.auth_failure_limit)
    app.state.digest = FailureDigest(settings.audit_collapse_seconds)
    install_error_handlers(app)
    _add_middleware(app, settings)
    app.include_router(api_router)
    app.include_router(workflow_router)
    included = [api_router, workflow_router]
    for router in pages:
        app.include_router(router)
        included.append(router)
    # every route with its full path, for the Allow header of a 405
    app.state.route_table = [r for r in (*app.router.routes,
                                         *(r for x in included for r in x.routes))
                             if isinstance(r, Route)]
    register_routes([*app.state.route_table,
                     *(r for r in app.router.routes if isinstance(r, Mount))])
    return app


def _lifespan(settings: Settings):
    """The service's life: the store opened (and migrated when asked), the
    evaluator and the failure digest's flusher started; on the way out the
    digest written, everything closed."""
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
        flusher = asyncio.create_task(_flush_digest(app))
        try:
            yield
        finally:
            flusher.cancel()
            with suppress(asyncio.CancelledError):
                await flusher
            # the counts of repeated failures still open are written, never dropped
            for event in app.state.digest.flush(force=True):
                store.audit(event)
            app.state.evaluator.close()
            store.dispose()

    return lifespan


def _add_middleware(app: FastAPI, settings: Settings) -> None:
    """The middleware, innermost first."""
    # the documentation pages get the headers the calculator's pages have
    app.add_middleware(DocsHeaders, pages=(DOCS_URL, REDOC_URL,
                                           app.swagger_ui_oauth2_redirect_url),
                       static_prefix=DOCS_STATIC_URL)
    # the public limit sits inside the guard, so its refusals get the API's headers
    app.add_middleware(PublicRateLimit, limiter=app.state.limiter)
    app.add_middleware(GuardMiddleware, max_json_bytes=settings.max_json_bytes,
                       max_upload_bytes=settings.max_upload_bytes)
    # Outermost: every answer the client accepts gzip for is compressed, the
    # guard's refusals and 500s included; bodies under 1 KiB are sent as they
    # are (compressing them costs more than it saves). Starlette leaves alone
    # what is already compressed (images, zip, a Content-Encoding already
    # set) and partial (206) answers. Level 6: most of the gain of 9 for a
    # fraction of the time on large batch answers.
    app.add_middleware(GZipMiddleware, minimum_size=1024, compresslevel=6)
    # Outside everything: who the client is (X-Forwarded-For only from a
    # trusted proxy, DIFERIDA_TRUSTED_PROXIES), before any limit counts it.
    app.add_middleware(ForwardedClient, proxies=settings.proxy_networks)


async def _flush_digest(app: FastAPI) -> None:
    """Write the counts of collapsed failures as their windows close, even
    when no further failure comes to trigger it."""
    from fastapi.concurrency import run_in_threadpool

    digest: FailureDigest = app.state.digest
    period = max(1.0, min(digest.seconds, 30.0)) if digest.seconds > 0 else 30.0
    while True:
        await asyncio.sleep(period)
        for event in digest.flush():
            try:
                await run_in_threadpool(app.state.store.audit, event)
            except Exception as exc:  # the database is away: keep the count for later
                digest.restore(event)
                log.warning("audit trail not reachable (%s); collapsed count kept",
                            type(exc).__name__)
