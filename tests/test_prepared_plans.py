"""A few rows run on plans prepared once per shape of table (plan.Prepared):
every table gets exactly what planning it afresh gives, whichever tables
came before it, in whichever thread."""

from __future__ import annotations

import random
import threading
from datetime import date

import polars as pl
import pytest

import diferida
from diferida import core
from diferida.speed.plan import PreparedPlans
from tests.test_service_evaluator import random_body

AS_OF = date(2026, 11, 29)
FIELDS = ("participant_id", "birth_date", "entry_date", "separation_date",
          "creditable_service_years", "average_compensation", "group", "refund_requested",
          "deferred_right_1960", "requested_start_date", "as_of")


class Unprepared:
    """Every table planned afresh: the reference."""

    def collect(self, key, table, build, **options):
        return build(table.lazy()).collect(**options)


def table(rnd: random.Random, rows: int, start: int) -> pl.DataFrame:
    bodies = [random_body(rnd, start + i) for i in range(rows)]
    return pl.DataFrame([{k: (None if b.get(k) is None else str(b[k])) for k in FIELDS}
                         for b in bodies], schema=dict.fromkeys(FIELDS, pl.String))


def outcome(frame: pl.DataFrame, **kw) -> tuple:
    full, errors, _ = core.run(frame, as_of=AS_OF, **kw)
    return full.to_dicts(), errors.to_dicts()



@pytest.fixture(autouse=True)
def speed_layer_on(monkeypatch):
    """These tests are of the speed layer itself: on, whatever the run's switch."""
    monkeypatch.setenv("DIFERIDA_SPEED_LAYER", "on")

@pytest.mark.parametrize("keep", [None, ["status", "annual_cents", "warnings"]])
def test_tables_one_after_another_on_one_prepared_plan_get_what_fresh_planning_gives(
        monkeypatch, keep):
    rnd = random.Random(7)
    frames = [table(rnd, rows, 100 * i) for i, rows in enumerate([1, 5, 1, 37, 2, 1, 120, 3])]
    kw = {"keep": keep, "require_id": True}
    monkeypatch.setattr(core, "_PREPARED", PreparedPlans(4))
    prepared = [outcome(f, **kw) for f in frames]
    assert len(core._PREPARED._plans) == 1  # one shape: one plan, used by all
    monkeypatch.setattr(core, "_PREPARED", Unprepared())
    fresh = [outcome(f, **kw) for f in frames]
    assert prepared == fresh
    # the sample holds determinations and rejections
    assert all(p[0] for p in prepared[:2]) and any(p[1] for p in prepared)


def test_the_prepared_plans_are_bounded_and_the_newest_kept(monkeypatch):
    plans = PreparedPlans(2)
    monkeypatch.setattr(core, "_PREPARED", plans)
    frame = table(random.Random(1), 1, 0)
    for day in (date(2026, 1, 1), date(2026, 1, 2), date(2026, 1, 3)):
        core.run(frame, as_of=day)
        assert day not in [k[2] for k in plans._plans]  # prepared the second time only
        core.run(frame, as_of=day)
        assert day in [k[2] for k in plans._plans]
    assert [k[2] for k in plans._plans] == [date(2026, 1, 2), date(2026, 1, 3)]


@pytest.mark.slow
def test_threads_evaluating_at_once_each_get_their_own_answer():
    rnd = random.Random(3)
    people = [{k: v for k, v in random_body(rnd, i).items() if k not in ("lang", "rules")}
              for i in range(60)]

    def answer(p):
        try:
            return diferida.evaluate(p, as_of=AS_OF).to_dict()
        except diferida.InputError as exc:
            return [q.to_dict() for q in exc.problems]

    alone = [answer(p) for p in people]
    got: dict[int, object] = {}

    def work(k: int) -> None:
        for i in range(k, len(people), 4):
            got[i] = answer(people[i])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [got[i] for i in range(len(people))] == alone


@pytest.mark.parametrize("seed", range(3))
def test_a_few_rows_flattened_get_what_the_same_rows_get_planned_as_a_large_table(
        monkeypatch, seed):
    rnd = random.Random(seed)
    frames = [table(rnd, rows, 1000 * i) for i, rows in enumerate([1, 1, 2, 9, 60, 1, 250])]
    small = [outcome(f, require_id=True) for f in frames]
    monkeypatch.setattr(core, "_small", lambda frame: False)  # as if each were large
    large = [outcome(f, require_id=True) for f in frames]
    assert small == large
    statuses = {row["status"] for rows, _ in small for row in rows}
    assert statuses == {"eligible", "not_yet_eligible", "not_entitled"}


def test_flattening_splits_deep_and_repeated_expressions_and_keeps_the_rest():
    import polars as pl

    from diferida.speed.flatten import flatten

    x = pl.col("x")
    deep = ((((x + 1) * 2 - 3) * 4 + 5) * 6).alias("deep")
    twice = ((x * 7 + 1 > 3) & (x * 7 + 1 < 90)).alias("twice")
    ranked = (x * 2 + 1).rank().alias("ranked")  # not element-wise: stays in its stage
    ops = [("with_columns", (deep, twice, ranked), {})]
    flat = flatten(ops)
    assert len(flat) > 2 and flat[-1][0] == "drop"
    frame = pl.DataFrame({"x": [3, -1, 10, 0]})
    replayed = frame.lazy()
    for name, args, kwargs in flat:
        replayed = getattr(replayed, name)(*args, **kwargs)
    assert replayed.collect().equals(frame.with_columns(deep, twice, ranked))
