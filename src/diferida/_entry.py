"""The `diferida` command's entry point. Ctrl-C while the program is still
loading (its libraries take a moment) ends it with one line and exit status
130, not a traceback.

The commands that write outputs (`batch`, `project`, `compare`) answer an
interrupt, SIGINT or SIGTERM, with exit status 130 at every moment of the
process: from here until the run puts its own handling in place, and from
the moment it puts it away until the process ends (the end is `os._exit`,
once the standard streams are flushed, so that no interrupt can land in the
interpreter's own teardown, where it would kill the process or become
click's "Aborted!"). What the message says then depends on whether the
run's outputs were put in place (`outputs_written`)."""

from __future__ import annotations

import _signal  # not `signal`, which imports enum: this must be in place at once
import os
import sys

from .interrupts import WRITING, interrupted_text, lang_of


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001, S110 (a closed pipe, a write under way)
            pass


def _interrupted(signum, frame):  # noqa: ARG001
    _flush()
    os.write(2, interrupted_text(lang_of(sys.argv)).encode())
    os._exit(130)


def main() -> None:
    writing = len(sys.argv) > 1 and sys.argv[1] in WRITING
    previous = _signal.signal(_signal.SIGINT, _interrupted)
    if writing:
        _signal.signal(_signal.SIGTERM, _interrupted)
    from .cli import main as cli

    if not writing:
        _signal.signal(_signal.SIGINT, previous)
        cli()
        return
    try:
        cli()
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    _flush()
    os._exit(code)
