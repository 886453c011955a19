"""What the server's logs may hold: no query strings (they carry ids, dates
and amounts), no exception messages (they may quote a request's data), and
one line per event.

Filters on uvicorn's loggers, installed when the app is created, so they
apply whichever way uvicorn was started."""

from __future__ import annotations

import logging

ACCESS_LOGGER = "uvicorn.access"
ERROR_LOGGER = "uvicorn.error"


class DropQueryString(logging.Filter):
    """uvicorn's access line is `'%s - "%s %s HTTP/%s" %d'` with the path and
    its query string as the third argument: keep the path only."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple):
            record.args = tuple(a.split("?", 1)[0] if isinstance(a, str) and "?" in a else a
                                for a in args)
        return True


class OneLineErrors(logging.Filter):
    """An exception that reaches uvicorn itself is logged as one line: its
    type and where it was raised, never its message or its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            from .errors import where

            exc = record.exc_info[1]
            first = record.getMessage().strip().splitlines()
            record.msg = "%s: %s at %s"
            record.args = (first[0] if first else "error", type(exc).__name__, where(exc))
            record.exc_info = None
            record.exc_text = None
            record.stack_info = None
        return True


def _add_once(logger: logging.Logger, kind: type[logging.Filter]) -> None:
    if not any(isinstance(f, kind) for f in logger.filters):
        logger.addFilter(kind())


def install_log_filters() -> None:
    _add_once(logging.getLogger(ACCESS_LOGGER), DropQueryString)
    _add_once(logging.getLogger(ERROR_LOGGER), OneLineErrors)
    _add_once(logging.getLogger("diferida.service"), OneLineErrors)
