"""The one error of the batch layer: a file that cannot be used as it is."""

from __future__ import annotations

from typing import Any

from ..errors import DiferidaError
from .messages import problem_codes, problem_text


class FileProblem(DiferidaError):
    """A file that cannot be used: not what its suffix says, empty, without a
    required column, badly encoded, a ragged line... The message names the
    file, the line where it applies, and what is wrong.

    `FileProblem(code, **params)` with a code of the catalogs' [batch_problems], or
    `FileProblem("any message")`. `str()` is English; `text(lang)` either."""

    def __init__(self, code_or_message: str, **params: Any):
        self.code = code_or_message if code_or_message in problem_codes() else "other"
        self.params = params
        self._literal = None if self.code != "other" else code_or_message
        self.line: int | None = params.get("line")
        self.file: str | None = params.get("file")
        super().__init__(self.text("en"))

    def text(self, lang: str = "en") -> str:
        if self._literal is not None:
            return self._literal
        return problem_text(self.code, lang, self.params)

    @property
    def message(self) -> str:
        return self.text("en")
