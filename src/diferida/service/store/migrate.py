"""Schema migrations with Alembic, configured from code so that they run the
same from any working directory and from an installed package."""

from __future__ import annotations

import threading
from importlib import resources
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine

# Alembic runs env.py through module-level state: one migration at a time per
# process. Between processes, the database's own lock orders them (env.py).
_LOCK = threading.Lock()


def _script_location() -> str:
    return str(Path(str(resources.files("diferida.service.store") / "migrations")))


def alembic_config(connection=None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", _script_location())
    cfg.attributes["connection"] = connection
    return cfg


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the database to `revision` (default: the newest)."""
    # One transaction for the whole upgrade, begun here: "write" asks for an
    # immediate write lock on SQLite, so two processes starting together
    # migrate one after the other. Alembic, left to itself, commits after each
    # revision on SQLite (no transactional DDL assumed), and a second process
    # could then read a half-migrated schema's revision and apply the next
    # revision again.
    with _LOCK, engine.connect().execution_options(write=True) as conn, conn.begin():
        command.upgrade(alembic_config(conn), revision)


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()
