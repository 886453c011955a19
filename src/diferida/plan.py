"""Recorded query plans. Building hundreds of Polars expressions costs more
than evaluating them on one row, so the stages of validation and of the
rules are recorded once per (rules version, input schema, options) and
replayed on every table: the same expressions, built once. A stage whose
expression would repeat a sub-expression reads it from a column of an
earlier stage instead: Polars plans, and evaluates, a sub-expression once
per repetition, and on one row planning is most of the cost."""

from __future__ import annotations

from typing import Any

import polars as pl


class Stages:
    """Records LazyFrame calls (with_columns, drop, rename) for replay."""

    def __init__(self) -> None:
        self.ops: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def _rec(self, name: str, args: tuple, kwargs: dict) -> Stages:
        self.ops.append((name, args, kwargs))
        return self

    def with_columns(self, *args: Any, **kwargs: Any) -> Stages:
        return self._rec("with_columns", args, kwargs)

    def drop(self, *args: Any, **kwargs: Any) -> Stages:
        return self._rec("drop", args, kwargs)

    def rename(self, *args: Any, **kwargs: Any) -> Stages:
        return self._rec("rename", args, kwargs)

    def replay(self, lf: pl.LazyFrame, *, sequential: bool = False) -> pl.LazyFrame:
        """The recorded calls on `lf`. `sequential`: each stage's expressions
        evaluated one after the other on the calling thread (for a few rows,
        handing them to Polars' thread pool costs more than it saves)."""
        for name, args, kwargs in self.ops:
            if sequential and name == "with_columns":
                name = "with_columns_seq"
            lf = getattr(lf, name)(*args, **kwargs)
        return lf
