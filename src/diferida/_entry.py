"""The `diferida` command's entry point. Ctrl-C while the program is still
loading (its libraries take a moment) ends it with one line and exit status
130, not a traceback; `diferida batch` then puts its own handling in place
before it writes anything."""

from __future__ import annotations

import _signal  # not `signal`, which imports enum: this must be in place at once
import os
import sys

_MESSAGE = {"es": "Interrumpido: no se escribió ningún resultado (los archivos que ya existían "
                  "quedan como estaban)\n",
            "en": "Interrupted: no output was written (files that already existed are left "
                  "as they were)\n"}


def _lang(argv: list[str]) -> str:
    for i, arg in enumerate(argv):
        if arg == "--lang" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--lang="):
            return arg.split("=", 1)[1]
    return "es"


def _while_loading(signum, frame):  # noqa: ARG001
    os.write(2, _MESSAGE.get(_lang(sys.argv), _MESSAGE["en"]).encode())
    os._exit(130)


def main() -> None:
    previous = _signal.signal(_signal.SIGINT, _while_loading)
    from .cli import main as cli

    if sys.argv[1:2] != ["batch"]:
        _signal.signal(_signal.SIGINT, previous)
    cli()
