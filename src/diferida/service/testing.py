"""Helpers for tests and benchmarks of the service: a real server in its own
process on a free loopback port, and throw-away PostgreSQL schemas."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

DEFAULT_TEST_POSTGRES_URL = "postgresql+psycopg://diferida:diferida@127.0.0.1:5432/diferida_test"


def services_required() -> bool:
    """Whether a test of a real part (PostgreSQL, chromium) fails, rather than
    skips, when the part is missing: under `make test` and in CI."""
    return (os.environ.get("DIFERIDA_REQUIRE_SERVICES", "") not in ("", "0")
            or os.environ.get("CI", "").lower() == "true")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def running_server(database_url: str, *, workers: int = 1, log_path: Path | None = None,
                   env: dict[str, str] | None = None, log_level: str = "info",
                   timeout: float = 60.0) -> Iterator[str]:
    """Start `diferida serve` (uvicorn) in a subprocess and yield its base URL
    once /health answers; stop it afterwards."""
    port = free_port()
    cmd = [sys.executable, "-m", "diferida.cli", "serve", "--host", "127.0.0.1",
           "--port", str(port), "--workers", str(workers), "--log-level", log_level]
    full_env = {**os.environ, "DIFERIDA_DATABASE_URL": database_url, **(env or {})}
    out = open(log_path, "ab") if log_path else subprocess.DEVNULL  # noqa: SIM115
    proc = subprocess.Popen(cmd, env=full_env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the server exited with status {proc.returncode}"
                                   + (f"; see {log_path}" if log_path else ""))
            try:
                with urllib.request.urlopen(base + "/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the server did not answer /health in time")
            time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if log_path:
            out.close()


def with_search_path(url: str, schema: str) -> str:
    """The PostgreSQL URL with every connection's search_path set to `schema`."""
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options={quote(f'-csearch_path={schema}')}"


@contextmanager
def postgres_schema(url: str) -> Iterator[str]:
    """A fresh, empty schema for one test run; yields a URL that uses it, and
    drops the schema (with everything in it) afterwards."""
    from sqlalchemy import create_engine, text

    schema = f"t_{os.getpid()}_{secrets.token_hex(4)}"
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
        yield with_search_path(url, schema)
    finally:
        with engine.begin() as conn:
            conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        engine.dispose()


def postgres_reachable(url: str) -> str | None:
    """None when a server answers at `url`, else why not."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url, connect_args={"connect_timeout": 3})
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        return None
    except Exception as exc:  # any failure to connect is the answer
        return f"{type(exc).__name__}: {exc}".splitlines()[0]
    finally:
        engine.dispose()


@contextmanager
def database_for_tests(kind: str, folder: Path) -> Iterator[str]:
    """A database URL for one test run: an SQLite file under `folder`, or a
    fresh schema on the PostgreSQL server of DIFERIDA_TEST_POSTGRES_URL.
    Without a reachable server the PostgreSQL tests are skipped, except under
    `make test` (DIFERIDA_REQUIRE_SERVICES=1) or in CI (CI=true), where they fail."""
    import pytest

    if kind == "sqlite":
        yield f"sqlite:///{folder / 'cases.db'}"
        return
    base = os.environ.get("DIFERIDA_TEST_POSTGRES_URL", DEFAULT_TEST_POSTGRES_URL)
    why = postgres_reachable(base)
    if why is not None:
        if services_required():
            pytest.fail(f"PostgreSQL is required (make test) and is not reachable: {why}")
        pytest.skip(f"no PostgreSQL server reachable ({why})")
    with postgres_schema(base) as url:
        yield url
