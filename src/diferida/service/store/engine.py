"""Database engines for SQLite and PostgreSQL, with the settings each needs
to take concurrent writers safely."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url

from ...errors import DiferidaError

SQLITE_BUSY_MS = 30_000


class DatabaseURLError(DiferidaError, ValueError):
    pass


def make_engine(url: str) -> Engine:
    try:
        u = make_url(url)
    except Exception as exc:  # sqlalchemy raises ArgumentError with the URL in it
        raise DatabaseURLError("the database URL cannot be parsed") from exc
    backend = u.get_backend_name()
    # Parameters are hidden from error messages: they hold participants' data.
    if backend == "sqlite":
        return _sqlite_engine(u)
    if backend == "postgresql":
        return create_engine(u, hide_parameters=True, pool_pre_ping=True, pool_size=10,
                             max_overflow=30)
    raise DatabaseURLError(f"unsupported database {backend!r}: use sqlite or postgresql")


def sqlite_path(url: str) -> Path | None:
    u = make_url(url)
    if u.get_backend_name() != "sqlite" or not u.database or u.database == ":memory:":
        return None
    return Path(u.database)


def create_private_file(path: Path) -> None:
    """Create the database file readable and writable by its owner only
    (0600), and each missing folder above it usable by its owner only (0700):
    the store holds birth dates and salaries. SQLite gives its -wal and -shm
    files the mode of the database file. An existing file or folder keeps its
    mode."""
    missing = [p for p in path.parents if not p.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    os.close(fd)


def _sqlite_engine(u) -> Engine:
    if u.database and u.database != ":memory:" and not u.database.startswith("file:"):
        create_private_file(Path(u.database))
    engine = create_engine(u, hide_parameters=True,
                           connect_args={"check_same_thread": False,
                                         "timeout": SQLITE_BUSY_MS / 1000})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record):
        # the driver's own transaction handling is switched off so that
        # `_on_begin` decides how each transaction starts
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_MS}")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn):
        # A writer takes the write lock at BEGIN; a deferred transaction that
        # later upgrades to a writer can fail at once with "database is locked"
        # instead of waiting its turn.
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("write")
                             else "BEGIN")

    return engine
