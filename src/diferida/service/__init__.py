"""The service: an HTTP API over the core, and a store of cases with an
audit trail, on SQLite or PostgreSQL.

    >>> from diferida.service import create_app, Settings
    >>> app = create_app(Settings(database_url="sqlite:///var/diferida.db"))
"""

from .app import create_app
from .settings import Settings

__all__ = ["Settings", "create_app"]
