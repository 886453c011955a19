"""Recorded query plans. Building hundreds of Polars expressions costs more
than evaluating them on one row, so the stages of validation and of the
rules are recorded once per (rules version, input schema, options) and
replayed on every table: the same expressions, built once."""

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

    def replay(self, lf: pl.LazyFrame) -> pl.LazyFrame:
        for name, args, kwargs in self.ops:
            lf = getattr(lf, name)(*args, **kwargs)
        return lf
