"""Running the core for the API without blocking the event loop, and without
paying the core's fixed cost once per request.

The core evaluates a table of participants in one pass, and a table of 30
costs little more than a table of one. So the requests that arrive while an
evaluation is running wait for it to end and are then evaluated together, as
one table (no timer: a lone request is evaluated at once). Each row's answer
is the core's own — `core.run` then `core.determination_from_row`, the path
`evaluate` takes — and a request whose row is rejected is evaluated alone by
`evaluate`, so its problems are exactly the core's.
"""

from __future__ import annotations

import asyncio
from datetime import date

import polars as pl
from fastapi.concurrency import run_in_threadpool

from ..core import determination_from_row, run, text_row
from ..determination import Determination
from ..fields import FIELD_NAMES
from ..validation import ROW
from .participant import Parsed, determine

MAX_BATCH = 64
_FIELDS = frozenset(FIELD_NAMES)


class Evaluator:
    """`await evaluator(parsed)` gives the Determination or raises
    RequestProblems, as `participant.determine` does."""

    def __init__(self, max_batch: int = MAX_BATCH):
        self.max_batch = max_batch
        self._pending: list[tuple[Parsed, asyncio.Future]] = []
        self._drainer: asyncio.Task | None = None

    async def __call__(self, parsed: Parsed) -> Determination:
        if parsed.problems or not parsed.fields or not set(parsed.fields) <= _FIELDS:
            # already known to be refused: the core alone words the problems
            return await run_in_threadpool(determine, parsed)
        future = asyncio.get_running_loop().create_future()
        self._pending.append((parsed, future))
        if self._drainer is None or self._drainer.done():
            self._drainer = asyncio.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        while self._pending:
            batch = self._pending[:self.max_batch]
            del self._pending[:self.max_batch]
            try:
                results = await run_in_threadpool(evaluate_many, [p for p, _ in batch])
            except Exception as exc:  # handed to each waiting request, which answers 500
                results = [exc] * len(batch)
            for (_, future), result in zip(batch, results):
                if future.done():  # the client went away
                    continue
                if isinstance(result, BaseException):
                    future.set_exception(result)
                else:
                    future.set_result(result)

    def close(self) -> None:
        if self._drainer is not None:
            self._drainer.cancel()


def _frame(items: list[Parsed]) -> pl.DataFrame:
    rows = [text_row(p.fields)[0] for p in items]
    # the fields any of them gives, in one order: a field none gives is not a
    # column at all (a missing field and a column of nulls validate alike, and
    # each column costs its checks); each set of fields has its recorded plan
    names = [n for n in FIELD_NAMES if any(n in row for row in rows)] or ["participant_id"]
    return pl.from_dicts([{n: row.get(n) for n in names} for row in rows],
                         schema=dict.fromkeys(names, pl.String))


def evaluate_many(items: list[Parsed]) -> list[Determination | Exception]:
    """Evaluate participants together; one Determination (or the exception
    that evaluating it alone raises) per item, in order."""
    out: list[Determination | Exception | None] = [None] * len(items)
    today = date.today()
    by_rules: dict[str, list[int]] = {}
    for i, p in enumerate(items):
        by_rules.setdefault(p.rules.version, []).append(i)
    for indices in by_rules.values():
        group = [items[i] for i in indices]
        rules = group[0].rules
        full, _errors, _ = run(_frame(group), as_of=today, rules=rules, require_id=False)
        for row in full.iter_rows(named=True):
            i = indices[row[ROW]]
            out[i] = determination_from_row(row, rules, items[i].lang)
    for i, result in enumerate(out):
        if result is None:
            try:
                out[i] = determine(items[i])
            except Exception as exc:  # RequestProblems, as for a single request
                out[i] = exc
    return out  # type: ignore[return-value]
