"""Every file the project reads, read through one bounded reader.

A path given on the command line or in a rules file may name anything:
`/dev/zero` (a device that never ends), a FIFO (whose `open` waits for a
writer that may never come), a folder, a file that grows while it is read, or
simply a file far larger than any table of its kind. `read_bounded` refuses
each of these before it reads past its limit: it looks at what the path is
(a regular file, or not) before it opens it, opens it without waiting, looks
again at what it opened, and reads at most `limit + 1` bytes, so that "over
the limit" is known without reading the rest.

`regular_size` is the same check for the large inputs (censuses) that a table
library opens by its path: a regular file and its size, or a refusal; the
table's own bounds (`batch.limits.Limits`) hold what it may contain.

A refusal is a `Refused` with a reason code; each caller words it for its
option (`--employer-names FILE: ...`) in the user's language from the
catalogs' section `[bounded]` (i18n/<lang>/files.toml).

`shown` cuts a value a message quotes: a message names the field and quotes
at most a short beginning of what was given, never the whole of it.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import tomllib
from typing import IO, Any

from .errors import DiferidaError

__all__ = ["BadToml", "Refused", "load_toml", "read_bounded", "read_line_bounded",
           "regular_size", "shown"]

# at most this many characters of a value are quoted in a message
SHOWN_CHARS = 40


class Refused(DiferidaError):
    """A file not read: `reason` is one of no_file, directory, not_regular
    (with `kind`: fifo, device, socket, other), unreadable (with `detail`),
    too_big (with `limit`)."""

    def __init__(self, reason: str, path: str | os.PathLike[str], **values: Any):
        self.reason, self.path, self.values = reason, str(path), values
        super().__init__(self.text("en"))

    def text(self, lang: str = "en") -> str:
        """What is wrong with the file, in `lang`, without the file's name
        (the caller puts the option and the name before it)."""
        from .i18n import catalog

        m = catalog(lang)["bounded"]
        values = dict(self.values)
        if "kind" in values:
            values["kind"] = m[f"kind_{values['kind']}"]
        if "limit" in values:
            values["limit"] = f"{values['limit']:,}"
        return m[self.reason].format(**values)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "other"


def _check_mode(path: str | os.PathLike[str], mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise Refused("directory", path)
    if not stat.S_ISREG(mode):
        raise Refused("not_regular", path, kind=_kind(mode))


def regular_size(path: str | os.PathLike[str]) -> int:
    """The size of the regular file at `path`; anything else refused (no
    such file, a folder, a FIFO, a device, a socket, unreadable)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise Refused("no_file", path) from None
    except (OSError, ValueError) as exc:
        raise Refused("unreadable", path, detail=getattr(exc, "strerror", None) or exc
                      ) from None
    _check_mode(path, st.st_mode)
    return st.st_size


def read_bounded(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them:
    a file over the limit (by its size, or by what a read gives) is refused
    having read at most `limit + 1` bytes."""
    size = regular_size(path)
    if size > limit:
        raise Refused("too_big", path, limit=limit)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise Refused("no_file", path) from None
    except OSError as exc:
        raise Refused("unreadable", path, detail=exc.strerror or exc) from None
    try:
        _check_mode(path, os.fstat(fd).st_mode)  # what was opened, not what was looked at
        chunks: list[bytes] = []
        got = 0
        while got <= limit:
            try:
                piece = os.read(fd, min(limit + 1 - got, 1 << 20))
            except OSError as exc:
                raise Refused("unreadable", path, detail=exc.strerror or exc) from None
            if not piece:
                break
            chunks.append(piece)
            got += len(piece)
    finally:
        os.close(fd)
    if got > limit:
        raise Refused("too_big", path, limit=limit)
    return b"".join(chunks)


def read_line_bounded(stream: IO[str], limit: int) -> str | None:
    """One line of `stream` (standard input), without its end; None when it
    holds more than `limit` characters before the line's end."""
    line = stream.readline(limit + 1)
    text = line.rstrip("\r\n")
    if len(text) > limit:
        return None
    return text


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """`value` as a message quotes it: whole when short, else its first
    `limit - 1` characters and "…"."""
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


# an integer TOML would turn into a Python int longer than Python converts
_MOST_DIGITS = sys.get_int_max_str_digits()
_LONG_DIGITS = re.compile(f"[0-9_]{{{_MOST_DIGITS + 1},}}")
_AT_LINE = re.compile(r"\(at line ([0-9]+)")
# brackets and braces open at once before a line counts as nested too deeply
_DEEP = 100


class BadToml(DiferidaError, ValueError):
    """A text that is not TOML a file of the project can hold: `line` (or
    None) and `reason`, one of syntax (with `detail`, the reader's words,
    cut), digits (an integer of more digits than are read), nested."""

    def __init__(self, reason: str, line: int | None, detail: str = ""):
        self.reason, self.line, self.detail = reason, line, detail
        super().__init__(self.text("en"))

    def text(self, lang: str = "en") -> str:
        """What is wrong, in `lang`, with its line when known."""
        from .i18n import catalog

        m = catalog(lang)["bounded"]
        what = m[f"toml_{self.reason}"].format(detail=self.detail, most=f"{_MOST_DIGITS:,}")
        return what if self.line is None else m["at_line"].format(line=self.line, what=what)


def load_toml(text: str) -> dict[str, Any]:
    """tomllib.loads, every way it fails a BadToml with the line: a syntax
    error (the reader's own line), an integer too long to read, values
    nested too deeply (where tomllib would recurse out of its stack)."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        at = _AT_LINE.search(str(exc))
        raise BadToml("syntax", int(at.group(1)) if at else None,
                      shown(str(exc).split(" (at line")[0], 120)) from None
    except RecursionError:
        raise BadToml("nested", _deep_line(text)) from None
    except ValueError:  # an integer of more digits than Python converts
        m = _LONG_DIGITS.search(text)
        raise BadToml("digits", text.count("\n", 0, m.start()) + 1 if m else None) from None


def _deep_line(text: str) -> int | None:
    """The line where brackets and braces first stand open more than _DEEP deep."""
    depth, line = 0, 1
    for ch in text:
        if ch in "[{":
            depth += 1
            if depth > _DEEP:
                return line
        elif ch in "]}":
            depth -= 1
        elif ch == "\n":
            line += 1
    return None
