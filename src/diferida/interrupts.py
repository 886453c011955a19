"""What an interrupt (SIGINT, SIGTERM) says, and whether a run's outputs
are in place: shared by the entry point (`_entry.py`, which must load
nothing heavy) and the commands. Standard library only."""

from __future__ import annotations

# The only texts outside the catalogs: they are said while the program is
# still loading, when nothing but the standard library may be read.
_MESSAGE = {"es": "Interrumpido: no se escribió ningún resultado (los archivos que ya existían "
                  "quedan como estaban)\n",
            "en": "Interrupted: no output was written (files that already existed are left "
                  "as they were)\n"}
_AFTER = {"es": "Interrumpido después de escribir los resultados: están completos\n",
          "en": "Interrupted after the outputs were written: they are complete\n"}
WRITING = ("batch", "project", "compare")  # the commands whose outputs an interrupt must not split
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
