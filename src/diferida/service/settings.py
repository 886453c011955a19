"""Configuration of the service, from the environment (DIFERIDA_*) or given
directly. Nothing here holds a rule of Article 19."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_SQLITE_PATH = Path("var") / "diferida.db"
DEFAULT_MAX_UPLOAD_BYTES = 50 * 1024 * 1024
DEFAULT_MAX_JSON_BYTES = 1024 * 1024
DEFAULT_RATE_LIMIT_PUBLIC = "600/minute"
DEFAULT_RATE_LIMIT_AUTH_FAILURES = "30/minute"
DEFAULT_AUDIT_COLLAPSE_SECONDS = 60.0
# What one upload to POST /api/v1/batches may hold once read (see docs/service.md):
# larger populations are for `diferida batch`, which reads files in chunks.
DEFAULT_BATCH_MAX_ROWS = 20_000
DEFAULT_BATCH_MAX_CELLS = 500_000
DEFAULT_BATCH_MAX_TEXT_BYTES = 10 * 1024 * 1024
DEFAULT_BATCH_CONCURRENCY = 2


def default_database_url() -> str:
    """DIFERIDA_DATABASE_URL, else an SQLite file under ./var/."""
    url = os.environ.get("DIFERIDA_DATABASE_URL")
    if url:
        return url
    return f"sqlite:///{DEFAULT_SQLITE_PATH.as_posix()}"


def upload_limits(rows: int = DEFAULT_BATCH_MAX_ROWS, cells: int = DEFAULT_BATCH_MAX_CELLS,
                  text_bytes: int = DEFAULT_BATCH_MAX_TEXT_BYTES):
    """What one uploaded file may hold once read (`batch.limits.Limits`), for
    POST /api/v1/batches and the workbench's import alike: data rows, cells
    and bytes of text, and for an .xlsx the XML inside its zip: its text and
    at most ~100 bytes of markup per cell."""
    from ..batch.limits import Limits

    return Limits(rows=rows, cells=cells, text_bytes=text_bytes,
                  unzipped_bytes=text_bytes + 100 * cells)


def _int_env(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a whole number, got {raw!r}") from exc


def _str_env(name: str, default: str) -> str:
    raw = os.environ.get(name)
    return default if raw is None or raw == "" else raw


def _float_env(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise ValueError(f"{name} must be a number of seconds (0 or more), got {raw!r}")
    return value


def _bool_env(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{name} must be true or false, got {raw!r}")


@dataclass
class Settings:
    database_url: str = field(default_factory=default_database_url)
    # Largest batch upload accepted (bytes); larger ones get HTTP 413.
    max_upload_bytes: int = field(
        default_factory=lambda: _int_env("DIFERIDA_MAX_UPLOAD_BYTES", DEFAULT_MAX_UPLOAD_BYTES))
    # Largest JSON body accepted on the other endpoints (bytes).
    max_json_bytes: int = field(
        default_factory=lambda: _int_env("DIFERIDA_MAX_JSON_BYTES", DEFAULT_MAX_JSON_BYTES))
    # One batch upload, once read: data rows, cells (rows x columns) and bytes of
    # text in its cells (an .xlsx or Parquet file may hold far more than its size);
    # over any of them: HTTP 413, before the file is read where the file tells.
    batch_max_rows: int = field(
        default_factory=lambda: _int_env("DIFERIDA_BATCH_MAX_ROWS", DEFAULT_BATCH_MAX_ROWS))
    batch_max_cells: int = field(
        default_factory=lambda: _int_env("DIFERIDA_BATCH_MAX_CELLS", DEFAULT_BATCH_MAX_CELLS))
    batch_max_text_bytes: int = field(
        default_factory=lambda: _int_env("DIFERIDA_BATCH_MAX_TEXT_BYTES",
                                         DEFAULT_BATCH_MAX_TEXT_BYTES))
    # Batch uploads evaluated at once by each server process; more: HTTP 503
    # with Retry-After.
    batch_concurrency: int = field(
        default_factory=lambda: _int_env("DIFERIDA_BATCH_CONCURRENCY",
                                         DEFAULT_BATCH_CONCURRENCY))
    # Apply pending migrations when the app starts (off: run `diferida db upgrade`).
    migrate_on_start: bool = field(
        default_factory=lambda: _bool_env("DIFERIDA_MIGRATE_ON_START", True))

    # Public requests (calculator pages, /api/v1/determinations, /api/v1/batches,
    # /docs) per client, in the `limits` notation ("300/minute"), or "off".
    rate_limit_public: str = field(
        default_factory=lambda: _str_env("DIFERIDA_RATE_LIMIT_PUBLIC", DEFAULT_RATE_LIMIT_PUBLIC))
    # Failed sign-ins (401, 403) per client before further attempts get 429.
    rate_limit_auth_failures: str = field(
        default_factory=lambda: _str_env("DIFERIDA_RATE_LIMIT_AUTH_FAILURES",
                                         DEFAULT_RATE_LIMIT_AUTH_FAILURES))
    # Repeated anonymous failures of one kind are written to the audit trail
    # once per this many seconds, with their count (0: each one is written).
    audit_collapse_seconds: float = field(
        default_factory=lambda: _float_env("DIFERIDA_AUDIT_COLLAPSE_SECONDS",
                                           DEFAULT_AUDIT_COLLAPSE_SECONDS))

    # Reverse proxies whose X-Forwarded-For names the client (addresses or
    # CIDR networks, comma-separated); none by default: the client is the
    # address the connection comes from, whatever a request's headers say.
    trusted_proxies: str = field(
        default_factory=lambda: _str_env("DIFERIDA_TRUSTED_PROXIES", ""))

    def __post_init__(self) -> None:
        from .proxies import parse_proxies
        from .throttle import parse_limit

        self.proxy_networks = parse_proxies("DIFERIDA_TRUSTED_PROXIES", self.trusted_proxies)

        # a mistyped limit stops the start, never silently means "no limit"
        self.public_limit = parse_limit("DIFERIDA_RATE_LIMIT_PUBLIC", self.rate_limit_public)
        self.auth_failure_limit = parse_limit("DIFERIDA_RATE_LIMIT_AUTH_FAILURES",
                                              self.rate_limit_auth_failures)

    def file_limits(self):
        """The bounds of one uploaded file under these settings (`upload_limits`)."""
        return upload_limits(self.batch_max_rows, self.batch_max_cells,
                             self.batch_max_text_bytes)

    @classmethod
    def from_env(cls) -> Settings:
        return cls()
