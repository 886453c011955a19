"""Requests evaluated together give each participant exactly the answer it
gets alone: same determination, same problems, whatever else is in the batch."""

from __future__ import annotations

import asyncio
import random
from datetime import date, timedelta

import pytest

from diferida.service.evaluator import Evaluator, evaluate_many
from diferida.service.participant import RequestProblems, determine, parse

from .conftest import run_async

OPTIONAL = ("participant_id", "separation_date", "deferred_right_1960", "requested_start_date",
            "as_of")


def random_body(rnd: random.Random, i: int) -> dict:
    birth = date(1940, 1, 1) + timedelta(days=rnd.randrange(365 * 45))
    entry = birth + timedelta(days=rnd.randrange(365 * 10, 365 * 40))
    sep = entry + timedelta(days=rnd.randrange(-400, 365 * 35))
    body = {
        "participant_id": f"R-{i}", "birth_date": birth.isoformat(),
        "entry_date": entry.isoformat(), "separation_date": sep.isoformat(),
        "creditable_service_years": rnd.choice(
            [str(rnd.randrange(0, 40)), f"{rnd.randrange(0, 40)}.{rnd.randrange(10000):04d}",
             rnd.randrange(0, 40)]),
        "average_compensation": rnd.choice(
            [f"{rnd.randrange(1, 99999)}.{rnd.randrange(100):02d}", rnd.randrange(1, 99999)]),
        "group": rnd.choice(["general", "police", "firefighter"]),
        "refund_requested": rnd.choice([False, False, False, True, "false", "TRUE"]),
        "deferred_right_1960": rnd.choice([True, False, None]),
        "requested_start_date": (birth + timedelta(days=365 * rnd.randrange(45, 70))).isoformat(),
        "as_of": rnd.choice(["2026-11-29", "2010-01-01", "2040-06-30", None]),
        "lang": rnd.choice(["es", "en"]),
        "rules": rnd.choice([None, "article19-strict-19_4"]),
    }
    bad = {"creditable_service_years": ["-1", "12.34567", "many"],
           "average_compensation": ["0", "100.001"], "group": ["navy"],
           "refund_requested": ["maybe"], "entry_date": ["1988-02-30"]}
    for key, values in bad.items():
        if rnd.random() < 0.05:
            body[key] = rnd.choice(values)
    for key in OPTIONAL:
        if rnd.random() < 0.3:
            body.pop(key)
    if rnd.random() < 0.05:
        body.pop("birth_date")
    return {k: v for k, v in body.items() if v is not None or k in OPTIONAL}


def outcome(fn, parsed):
    try:
        return ("ok", fn(parsed).to_dict())
    except RequestProblems as exc:
        return ("refused", exc.problems)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.slow
def test_a_batch_of_varied_participants_gets_exactly_the_answers_each_gets_alone(seed):
    rnd = random.Random(seed)
    bodies = [random_body(rnd, i) for i in range(120)]
    together = evaluate_many([parse(b) for b in bodies])
    kinds = set()
    for body, result in zip(bodies, together):
        alone = outcome(determine, parse(body))
        got = (("refused", result.problems) if isinstance(result, RequestProblems)
               else ("ok", result.to_dict()))
        assert got == alone, body
        # alone through the evaluator too: a table of only its own fields
        (single,) = evaluate_many([parse(body)])
        assert (("refused", single.problems) if isinstance(single, RequestProblems)
                else ("ok", single.to_dict())) == alone, body
        kinds.add(got[0] if got[0] == "refused" else got[1]["status"])
    # the sample covers refusals and every status
    assert kinds == {"refused", "eligible", "not_yet_eligible", "not_entitled"}


@pytest.mark.slow
def test_concurrent_requests_through_the_evaluator_are_answered_each_with_its_own_result():
    rnd = random.Random(7)
    bodies = [random_body(rnd, i) for i in range(60)]

    async def all_at_once():
        ev = Evaluator(max_batch=16)
        return await asyncio.gather(*[ev(parse(b)) for b in bodies],
                                    return_exceptions=True)

    results = run_async(all_at_once())
    for body, result in zip(bodies, results):
        alone = outcome(determine, parse(body))
        got = (("refused", result.problems) if isinstance(result, RequestProblems)
               else ("ok", result.to_dict()))
        assert got == alone
