"""Recorded query plans. Building hundreds of Polars expressions costs more
than evaluating them on one row, so the stages of validation and of the
rules are recorded once per (rules version, input schema, options) and
replayed on every table: the same expressions, built once. A stage whose
expression would repeat a sub-expression reads it from a column of an
earlier stage instead: Polars plans, and evaluates, a sub-expression once
per repetition, and on one row planning is most of the cost."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from typing import Any

import polars as pl

from . import enabled
from .flatten import flatten


class Stages:
    """Records LazyFrame calls (with_columns, drop, rename) for replay."""

    def __init__(self) -> None:
        self.ops: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self._flat: list[tuple[str, tuple[Any, ...], dict[str, Any]]] | None = None
        self._small_replays = 0

    def _rec(self, name: str, args: tuple, kwargs: dict) -> Stages:
        self.ops.append((name, args, kwargs))
        self._flat = None
        return self

    def with_columns(self, *args: Any, **kwargs: Any) -> Stages:
        return self._rec("with_columns", args, kwargs)

    def drop(self, *args: Any, **kwargs: Any) -> Stages:
        return self._rec("drop", args, kwargs)

    def rename(self, *args: Any, **kwargs: Any) -> Stages:
        return self._rec("rename", args, kwargs)

    def replay(self, lf: pl.LazyFrame, *, sequential: bool = False) -> pl.LazyFrame:
        """The recorded calls on `lf`. `sequential` (a few rows): the stages
        flattened (`flatten.py`: on one row, planning deep expressions costs
        more than computing them) and each one's expressions evaluated one
        after the other on the calling thread (handing them to Polars' thread
        pool costs more than it saves)."""
        ops = self.ops
        if sequential and not enabled():
            ops = [("with_columns_seq" if n == "with_columns" else n, a, k)
                   for n, a, k in self.ops]
        elif sequential:
            # flattened from the second time on: flattening costs more than one
            # evaluation saves (a process that evaluates once never pays it)
            self._small_replays += 1
            if self._flat is None and self._small_replays > 1:
                self._flat = flatten(self.ops)
            ops = self._flat or [("with_columns_seq" if n == "with_columns" else n, a, k)
                                 for n, a, k in self.ops]
        for name, args, kwargs in ops:
            lf = getattr(lf, name)(*args, **kwargs)
        return lf


class Prepared:
    """A whole plan built once over a stand-in source and replayed on one
    small table after another, for as long as the tables have its schema.

    Polars turns a query into its internal form on every `collect`, unless
    that form is already known: once `collect_schema` has resolved a plan,
    it keeps the resolved form. A table put in a plan is part of the plan,
    so the plan reads its table from an IO source (Polars' hook for readers)
    that hands over whichever table `collect` was given. The expressions are
    the same recorded ones; only the planning is not done again. One table
    at a time: `PreparedPlans` lends a plan to one caller at once."""

    def __init__(self, schema: pl.Schema, build: Callable[[pl.LazyFrame], pl.LazyFrame]):
        from polars.io.plugins import register_io_source

        self.busy = threading.Lock()
        self._table: pl.DataFrame | None = None
        self.plan = build(register_io_source(self._read, schema=schema))
        self.plan.collect_schema()  # resolved once, here

    def _read(self, with_columns: list[str] | None, predicate: pl.Expr | None,
              n_rows: int | None, batch_size: int | None) -> Iterator[pl.DataFrame]:
        table = self._table
        if table is None:
            raise RuntimeError("a prepared plan was read outside its collect")
        if with_columns is not None:
            table = table.select(with_columns)
        if predicate is not None:
            table = table.filter(predicate)
        if n_rows is not None:
            table = table.head(n_rows)
        yield table

    def collect(self, table: pl.DataFrame, **options: Any) -> pl.DataFrame:
        self._table = table
        try:
            return self.plan.collect(**options)
        finally:
            self._table = None


class PreparedPlans:
    """The most recently used prepared plans, by key (a shape of table and
    what the plan depends on). A plan is prepared the second time its key is
    seen (preparing costs about one evaluation: a process that evaluates once
    never pays it). A plan another thread is using is not waited for: the
    table is then planned as usual, which gives the same result."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._plans: OrderedDict[Hashable, Prepared] = OrderedDict()
        self._seen: OrderedDict[Hashable, None] = OrderedDict()
        self._lock = threading.Lock()

    def collect(self, key: Hashable, table: pl.DataFrame,
                build: Callable[[pl.LazyFrame], pl.LazyFrame], **options: Any) -> pl.DataFrame:
        if not enabled():
            return build(table.lazy()).collect(**options)
        with self._lock:
            prepared = self._plans.get(key)
            if prepared is not None:
                self._plans.move_to_end(key)
        if prepared is None:
            with self._lock:
                first = key not in self._seen
                self._seen[key] = None
                while len(self._seen) > 4 * self.size:
                    self._seen.popitem(last=False)
            if first:
                return build(table.lazy()).collect(**options)
            prepared = Prepared(table.schema, build)
            with self._lock:
                prepared = self._plans.setdefault(key, prepared)
                while len(self._plans) > self.size:
                    self._plans.popitem(last=False)
        if not prepared.busy.acquire(blocking=False):
            return build(table.lazy()).collect(**options)
        try:
            return prepared.collect(table, **options)
        finally:
            prepared.busy.release()
