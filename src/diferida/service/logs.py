"""What the server's logs may hold: no query strings (they carry ids, dates
and amounts), no path a client made up (it may hold a name), no exception
messages (they may quote a request's data), and
one line per event.

Filters on uvicorn's loggers, installed when the app is created, so they
apply whichever way uvicorn was started."""

from __future__ import annotations

import logging
import re
import traceback

ACCESS_LOGGER = "uvicorn.access"
ERROR_LOGGER = "uvicorn.error"


UNKNOWN_PATH = "<unknown path>"
# (path with digit-only parameters, any path of the route, what is logged for it)
_SHAPES: list[tuple[re.Pattern, re.Pattern, str]] = []
_PARAM = re.compile(r"\{[^}]*\}")


def register_routes(routes) -> None:
    """The app's routes, so the access log can tell a path it serves from one
    a client made up (which may hold anything, a person's name included)."""
    shapes = []
    for route in routes:
        template = getattr(route, "path", None)
        if not template:
            continue
        pieces = _PARAM.split(template)
        digits = r"\d{1,19}".join(re.escape(x) for x in pieces)
        anything = r"[^/]+".join(re.escape(x) for x in pieces)
        if not hasattr(route, "methods"):  # a mount: its files below it
            digits = anything = re.escape(template) + r"/[\w.-]+"
            template += "/…"
        shapes.append((re.compile(digits), re.compile(anything), template))
    _SHAPES[:] = shapes


def shown_path(path: str) -> str:
    """The path as the access log shows it: without its query string; as it
    is when it is one the app serves with ids that are numbers; as its route's
    template when a parameter holds anything else; else UNKNOWN_PATH."""
    path = path.split("?", 1)[0]
    for digits, anything, template in _SHAPES:
        if digits.fullmatch(path):
            return path
        if anything.fullmatch(path):
            return template
    return UNKNOWN_PATH if _SHAPES else path


class DropQueryString(logging.Filter):
    """uvicorn's access line is `'%s - "%s %s HTTP/%s" %d'` with the path and
    its query string as the third argument: keep what `shown_path` keeps."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) == 5 and isinstance(args[2], str):
            record.args = (args[0], args[1], shown_path(args[2]), *args[3:])
        elif isinstance(args, tuple):
            record.args = tuple(a.split("?", 1)[0] if isinstance(a, str) else a for a in args)
        return True


class OneLineErrors(logging.Filter):
    """An exception that reaches uvicorn itself is logged as one line: its
    type and where it was raised, never its message or its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
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


def where(exc: BaseException) -> str:
    """Where an exception was raised, on one line: the innermost frame of this
    package and the innermost frame of all (file:line function). Frames only:
    an exception's message may hold a request's data."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "?"

    def shown(f: traceback.FrameSummary) -> str:
        parts = f.filename.replace("\\", "/").split("/")
        name = "/".join(parts[parts.index("diferida"):]) if "diferida" in parts else parts[-1]
        return f"{name}:{f.lineno} {f.name}"

    ours = [f for f in frames if "/diferida/" in f.filename.replace("\\", "/")]
    out = [shown(frames[-1])]
    if ours and ours[-1] is not frames[-1]:
        out.append(shown(ours[-1]))
    return " < ".join(out)
