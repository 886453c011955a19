"""The `diferida` command's entry point. Ctrl-C while the program is still
loading (its libraries take a moment) ends it with one line and exit status
130, not a traceback.

The first thing this module does, before it imports anything of its own, is
to hold a SIGINT: a signal that comes while the rest of it loads is kept and
answered as soon as the handler below is in place. Nothing runs before that
but the interpreter's own start, the launcher's `import re` and the few
assignments of `diferida/__init__.py`. (So this module has no
`from __future__ import annotations`: that line imports a module, and is
the first statement of any module that has it.) Only the launcher imports
this module.

The commands that write outputs (`batch`, `project`, `compare`, `census`:
`interrupts.WRITING`) answer an interrupt, SIGINT or SIGTERM, with exit
status 130 at every moment of the process: from here until the run puts its
own handling in place, and from the moment it puts it away until the
process ends (the end is `os._exit`, once the standard streams are flushed,
so that no interrupt can land in the interpreter's own teardown, where it
would kill the process or become click's "Aborted!"). What the message says
then depends on whether the run's outputs were put in place
(`outputs_written`)."""

try:
    import _signal  # not `signal`, which imports enum: this must be in place at once

    _held: list[bool] = []  # whether a SIGINT came while this module loaded
    _PREVIOUS = _signal.signal(_signal.SIGINT, lambda signum, frame: _held.append(True))
except KeyboardInterrupt:  # one came just before, and `signal` answered it with the old handler
    _held = [True]

import os  # noqa: E402 (after the signal is held)
import sys  # noqa: E402

from .interrupts import WRITING, interrupted_text, lang_of  # noqa: E402


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


if _held:  # a Ctrl-C while this module loaded
    _interrupted(None, None)
_signal.signal(_signal.SIGINT, _interrupted)
if _held:  # one that came as the handler was put in place
    _interrupted(None, None)


def main() -> None:
    writing = len(sys.argv) > 1 and sys.argv[1] in WRITING
    if writing:
        _signal.signal(_signal.SIGTERM, _interrupted)
    from .cli import main as cli

    if not writing:
        _signal.signal(_signal.SIGINT, _PREVIOUS)
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
