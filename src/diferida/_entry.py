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

_MESSAGE = {"es": "Interrumpido: no se escribió ningún resultado (los archivos que ya existían "
                  "quedan como estaban)\n",
            "en": "Interrupted: no output was written (files that already existed are left "
                  "as they were)\n"}
_AFTER = {"es": "Interrumpido después de escribir los resultados: están completos\n",
          "en": "Interrupted after the outputs were written: they are complete\n"}
WRITING = ("batch", "project", "compare")  # the commands whose outputs an interrupt must not split
_DEFAULT_LANG = {"project": "en"}  # each command's default --lang (else es)
_written: list[bool] = []


def outputs_written(done: bool = True) -> None:
    """Whether the run's outputs are in place (a command says so once they
    are, and `False` as it starts): what an interrupt says from then on."""
    _written[:] = [True] if done else []


def interrupted_text(lang: str) -> str:
    """What an interrupt says: no output was written, or all are complete."""
    text = _AFTER if _written else _MESSAGE
    return text.get(lang, text["en"])


def _lang(argv: list[str]) -> str:
    for i, arg in enumerate(argv):
        if arg == "--lang" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--lang="):
            return arg.split("=", 1)[1]
    return _DEFAULT_LANG.get(argv[1] if len(argv) > 1 else "", "es")


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001, S110 (a closed pipe, a write under way)
            pass


def _interrupted(signum, frame):  # noqa: ARG001
    _flush()
    os.write(2, interrupted_text(_lang(sys.argv)).encode())
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
