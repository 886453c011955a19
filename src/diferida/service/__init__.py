"""The service: an HTTP API over the core, and a store of cases with an
audit trail, on SQLite or PostgreSQL.

    >>> from diferida.service import create_app, Settings
    >>> app = create_app(Settings(database_url="sqlite:///var/diferida.db"))

That is the API alone. The whole site, with the calculator's and the
workbench's pages (`diferida.web`, built on this package), is
`diferida.server.create_app`, which `diferida serve` runs.
"""

from ..lazy import lazy_attributes

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from .app import create_app
    from .settings import Settings

__all__ = ["Settings", "create_app"]

# Imported when first used, so that the commands of diferida.service.cli
# (`diferida db --help`, ...) do not load FastAPI.
_LAZY = {"create_app": ".app", "Settings": ".settings"}


__getattr__ = lazy_attributes(__name__, _LAZY)
