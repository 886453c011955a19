"""What an interrupt (SIGINT, SIGTERM) says, whether a run's outputs are
in place, and the moments an interrupt waits for (`held`): shared by the
entry point (`_entry.py`, which must load nothing heavy) and the commands.
Standard library only."""

from __future__ import annotations

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from collections.abc import Iterator

# The only texts outside the catalogs: they are said while the program is
# still loading, when nothing but the standard library may be read.
_MESSAGE = {"es": "Interrumpido: no se escribió ningún resultado (los archivos que ya existían "
                  "quedan como estaban)\n",
            "en": "Interrupted: no output was written (files that already existed are left "
                  "as they were)\n"}
_AFTER = {"es": "Interrumpido después de escribir los resultados: están completos\n",
          "en": "Interrupted after the outputs were written: they are complete\n"}
# the commands whose outputs an interrupt must not split
WRITING = ("batch", "project", "compare", "census")
DEFAULT_LANG = "es"  # every command's default --lang (i18n.DEFAULT_LANG)
_written: list[bool] = []


def outputs_written(done: bool = True) -> None:
    """Whether the run's outputs are in place (a command says so once they
    are, and `False` as it starts): what an interrupt says from then on."""
    _written[:] = [True] if done else []


def interrupted_text(lang: str) -> str:
    """What an interrupt says: no output was written, or all are complete."""
    text = _AFTER if _written else _MESSAGE
    return text.get(lang, text["en"])


def lang_of(argv: list[str]) -> str:
    """The --lang of a command line, or its command's default."""
    for i, arg in enumerate(argv):
        if arg == "--lang" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--lang="):
            return arg.split("=", 1)[1]
    return DEFAULT_LANG


class held:
    """`with held():` SIGINT and SIGTERM wait until the block ends, then are
    answered as they would have been when they came, each in turn (a
    KeyboardInterrupt raised then has the block's own error as its
    context). For the moments a run must finish once begun: putting its
    outputs in place, and removing what it had started to write. Only a
    handler written in Python can wait (the default SIGTERM ends the process
    at once, as it always does), and only in the main thread, the one
    signals reach."""

    def __enter__(self) -> None:
        import signal
        import threading

        self._previous: dict[int, object] = {}
        self._came: list[tuple[int, object]] = []
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in (signal.SIGINT, signal.SIGTERM):
            handler = signal.getsignal(signum)
            if callable(handler):
                self._previous[signum] = handler
                signal.signal(signum, self._hold)

    def _hold(self, signum: int, frame: object) -> None:
        self._came.append((signum, frame))

    def __exit__(self, *_: object) -> None:
        import signal

        for signum, handler in self._previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]
        _answer(iter(self._came), self._previous)


def _answer(came: Iterator[tuple[int, object]], handlers: dict[int, object]) -> None:
    """Each held signal to its handler, in the order they came, even when one raises."""
    for signum, frame in came:
        try:
            handlers[signum](signum, frame)  # type: ignore[operator]
        finally:
            _answer(came, handlers)
        return
