"""The speed layer changes how the rules run, never what they answer: the
same participants decided with the layer on and off (`DIFERIDA_SPEED_LAYER`,
read at each call) give the same tables and the same determinations, to
the last column and sentence. This shadow comparison is how `make test`
holds the layer off; `make test-full` also runs the engine's tests whole
with the layer off (see CONTRIBUTING.md, "Test tiers").

The population covers what the engine's tests reach: every rules §8 worked
example, a synthetic file with bad rows (bench/generate.py, its documented
distributions), the boundaries of each route's age and service, and the
small tables of one to a few rows that the layer serves differently
(flattened stages, prepared plans)."""

from __future__ import annotations

from datetime import date

import polars as pl
import pytest
from bench.generate import population
from polars.testing import assert_frame_equal

import diferida
from diferida.core import InputError, evaluate_frame

from .conftest import AS_OF, participant
from .test_spec_examples import EXAMPLES

LANGS = ("es", "en")


def _both(monkeypatch, fn):
    """`fn()` with the speed layer on, then off."""
    out = []
    for switch in ("on", "off"):
        monkeypatch.setenv("DIFERIDA_SPEED_LAYER", switch)
        out.append(fn())
    monkeypatch.delenv("DIFERIDA_SPEED_LAYER")
    return out


def _boundary_rows() -> list[dict[str, object]]:
    """Each route's age and service thresholds, a day and a year either side,
    in both regimes, for each group, refunds, 19.6 and requested starts."""
    rows: list[dict[str, object]] = []
    n = 0
    for entry in ("1959-07-01", "1975-07-01", "1990-04-01", "1990-04-02", "1999-12-31",
                  "2000-01-01"):
        for years in ("9.9999", "10", "10.0001", "19.9999", "20", "25", "30", "35"):
            for birth in ("1940-02-29", "1955-06-30", "1962-01-01", "1970-05-10"):
                for group in ("general", "police", "firefighter"):
                    n += 1
                    rows.append(participant(
                        participant_id=f"B-{n}", entry_date=entry, birth_date=birth,
                        creditable_service_years=years, group=group,
                        separation_date="2010-06-30" if entry < "2000" else "2012-01-31",
                        refund_requested="true" if n % 17 == 0 else "false",
                        deferred_right_1960="true" if n % 5 == 0 else None,
                        requested_start_date="2030-01-01" if n % 7 == 0 else None))
    return rows


def _table(rows: list[dict[str, object]]) -> pl.DataFrame:
    names = sorted({k for r in rows for k in r})
    return pl.DataFrame([{k: (None if r.get(k) is None else str(r[k])) for k in names}
                         for r in rows], schema=dict.fromkeys(names, pl.String))


@pytest.mark.parametrize("lang", LANGS)
def test_a_population_gets_the_same_tables_with_the_speed_layer_on_and_off(monkeypatch, lang):
    frames = [population(3000, invalid=0.05, seed=11), _table(_boundary_rows())]
    for frame in frames:
        on, off = _both(monkeypatch, lambda f=frame: evaluate_frame(f, as_of=AS_OF, lang=lang))
        assert on.determinations.height > 0
        assert_frame_equal(on.determinations, off.determinations)
        assert_frame_equal(on.rejected, off.rejected)


def test_small_tables_get_the_same_tables_with_the_speed_layer_on_and_off(monkeypatch):
    rows = _boundary_rows()
    for size in (1, 2, 3, 7):
        for start in range(0, len(rows), 97):
            frame = _table(rows[start:start + size])
            on, off = _both(monkeypatch, lambda f=frame: evaluate_frame(f, as_of=AS_OF))
            assert_frame_equal(on.determinations, off.determinations)
            assert_frame_equal(on.rejected, off.rejected)


def _determination(p: dict[str, object], lang: str, as_of: date):
    try:
        return diferida.evaluate(p, as_of=as_of, lang=lang).to_dict()
    except InputError as exc:
        return [pr.to_dict() for pr in exc.problems]


@pytest.mark.parametrize("lang", LANGS)
def test_every_worked_example_and_boundary_reads_the_same_with_the_layer_off(monkeypatch,
                                                                              lang):
    people = [({**inputs, "participant_id": f"spec-{n}"}, AS_OF)
              for n, inputs, _expected, _findings in EXAMPLES]
    people += [(p, AS_OF) for p in _boundary_rows()[::23]]
    people += [(participant(birth_date="1970-02-30"), AS_OF),
               (participant(average_compensation="$30.000"), AS_OF)]
    for p, as_of in people:
        on, off = _both(monkeypatch, lambda p=p, a=as_of: _determination(p, lang, a))
        assert on == off, p
