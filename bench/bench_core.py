"""Speed of the core: a million participants in memory, the engine alone, one
participant at a time, and a plain numpy version of the rules for comparison.

    .venv/bin/python bench/bench_core.py [--rows 1000000] [--runs 5]

The population comes from bench/generate.py (seed 1; its distributions are
documented there). It is timed in three in-memory forms:

* "typed, decimal text" (the main figure): dates as pl.Date, booleans as
  pl.Boolean, group as text, service and compensation as decimal text — what
  a CSV read with typed dates or a form gives, and the amounts are parsed
  exactly by the core;
* "typed, pl.Decimal": service and compensation as pl.Decimal columns, as a
  database export to Parquet gives;
* "all text": every column as text, as a CSV read without type inference.

Figures are medians of `--runs` runs after one warm-up run; they are printed
and written to bench/out/core.json. Goals (from the issue): 1M in memory
under 0.3 s; one `diferida.evaluate` under 5 ms (median).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from datetime import date
from pathlib import Path

import generate
import numpy as np
import numpy_baseline
import polars as pl

import diferida
from diferida import article19, outcomes
from diferida.validation import validate

AS_OF = date(2026, 11, 29)
OUT = Path(__file__).parent / "out" / "core.json"
GOAL_FRAME_S = 0.3
GOAL_SINGLE_MS = 5.0
EXAMPLE_1 = {"birth_date": "1970-05-10", "entry_date": "1988-07-01",
             "separation_date": "2010-06-30", "creditable_service_years": "22",
             "average_compensation": "30000.00", "group": "general",
             "refund_requested": "false"}


def timed(fn, runs: int) -> tuple[list[float], object]:
    result = fn()  # warm-up: plans are built and cached on the first call
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return times, result


def engine_codes(full: pl.DataFrame, rules) -> dict[str, np.ndarray]:
    """The engine's result columns in the numpy baseline's codes."""
    ids = [r.id for r in rules.routes]

    def mask(col: str, names) -> np.ndarray:
        m = np.zeros(full.height, dtype=np.int64)
        for i, name in enumerate(names):
            hit = full[col].str.split(";").list.contains(name).to_numpy()
            m |= hit.astype(np.int64) << i
        return m

    def days(col: str) -> np.ndarray:
        return (full[col].cast(pl.Int32).cast(pl.Int64)
                .fill_null(numpy_baseline.NONE).to_numpy())

    return {
        "status": full["status"].replace_strict(
            {"eligible": 0, "not_yet_eligible": 1, "not_entitled": 2},
            return_dtype=pl.Int64).to_numpy(),
        "reasons": mask("reasons", outcomes.REASONS),
        "route": full["route"].replace_strict({r: i for i, r in enumerate(ids)}, default=-1,
                                              return_dtype=pl.Int64).to_numpy(),
        "routes_met": mask("routes_met", ids),
        "eligibility": days("eligibility_date"),
        "start": days("start_date"),
        "premature": full["premature_request"].to_numpy(),
        "annual_cents": full["annual_cents"].fill_null(-1).to_numpy(),
        "monthly_cents": full["monthly_cents"].fill_null(-1).to_numpy(),
        "minimum_applied": full["minimum_applied"].to_numpy(),
        "warnings": mask("warnings", outcomes.WARNINGS),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--single-calls", type=int, default=200)
    args = ap.parse_args()
    n, runs = args.rows, args.runs
    rules = diferida.load_rules()

    text = generate.population(n, seed=1)
    all_typed = generate.typed(text)
    forms = {
        "typed, decimal text": all_typed.with_columns(
            text["creditable_service_years"], text["average_compensation"]),
        "typed, pl.Decimal": all_typed,
        "all text": text,
    }
    figures: dict[str, dict] = {}

    def record(name: str, times: list[float], rows: int) -> None:
        med = statistics.median(times)
        figures[name] = {"rows": rows, "median_s": med, "min_s": min(times),
                         "max_s": max(times), "runs": len(times),
                         "rows_per_s": rows / med if med else None}

    for label, frame in forms.items():
        times, result = timed(lambda f=frame: diferida.evaluate_frame(f, as_of=AS_OF), runs)
        assert result.rows_in == n and result.rejected.height == 0, result.rejected.head()
        record(f"evaluate_frame ({label})", times, n)

    # the engine alone, on the validated typed table
    v = validate(forms["typed, decimal text"], rules, AS_OF)
    typed = v.typed.filter(pl.col("_ok")).drop("_ok")
    times, full = timed(lambda: article19.determine(typed, rules).collect(), runs)
    record("article19.determine (engine alone)", times, typed.height)

    # the same rules in plain numpy, from the same typed table
    arrays = numpy_baseline.arrays_from_typed(typed)
    times, baseline = timed(lambda: numpy_baseline.determine(arrays, rules), runs)
    record("numpy baseline (rules only)", times, typed.height)
    ours = engine_codes(full, rules)
    disagree = {k: int(np.count_nonzero(ours[k] != baseline[k])) for k in baseline}

    # one participant at a time
    diferida.evaluate(EXAMPLE_1, as_of=AS_OF)
    single = []
    for _ in range(args.single_calls):
        t = time.perf_counter()
        diferida.evaluate(EXAMPLE_1, as_of=AS_OF)
        single.append(time.perf_counter() - t)
    single_ms = statistics.median(single) * 1000
    single_p90_ms = statistics.quantiles(single, n=10)[-1] * 1000

    main_figure = figures["evaluate_frame (typed, decimal text)"]["median_s"]
    report = {
        "rows": n,
        "as_of": AS_OF.isoformat(),
        "rules_version": rules.version,
        "figures": figures,
        "single_evaluate": {"calls": len(single), "median_ms": single_ms,
                            "p90_ms": single_p90_ms},
        "numpy_baseline_disagreements": disagree,
        "goals": {
            "frame_1m_under_s": GOAL_FRAME_S, "frame_met": main_figure < GOAL_FRAME_S,
            "single_under_ms": GOAL_SINGLE_MS, "single_met": single_ms < GOAL_SINGLE_MS,
        },
        "machine": {"cpus": os.cpu_count(), "load_average_1min": os.getloadavg()[0],
                    "polars_threads": pl.thread_pool_size(),
                    "python": platform.python_version(), "polars": pl.__version__,
                    "numpy": np.__version__, "processor": platform.processor() or
                    platform.machine()},
    }

    print(f"{n:,} participants, as of {AS_OF}, {os.cpu_count()} CPUs, polars {pl.__version__}")
    print(f"{'what':<48} {'median s':>9} {'min s':>8} {'rows/s':>12}")
    for name, f in figures.items():
        print(f"{name:<48} {f['median_s']:>9.3f} {f['min_s']:>8.3f} {f['rows_per_s']:>12,.0f}")
    print(f"{'diferida.evaluate, one participant':<48} {single_ms / 1000:>9.4f}"
          f"   (median {single_ms:.2f} ms, p90 {single_p90_ms:.2f} ms, "
          f"{len(single)} calls)")
    if n == 1_000_000:
        print(f"goal 1M in memory < {GOAL_FRAME_S} s: "
              f"{'met' if report['goals']['frame_met'] else 'NOT met'} ({main_figure:.3f} s)")
    else:
        report["goals"]["frame_met"] = None  # the goal is stated for 1,000,000 rows
    print(f"goal one evaluate < {GOAL_SINGLE_MS} ms: "
          f"{'met' if report['goals']['single_met'] else 'NOT met'} ({single_ms:.2f} ms)")
    bad = {k: v for k, v in disagree.items() if v}
    print(f"load average at the end: {os.getloadavg()[0]:.2f} (figures are noisy when busy)")
    print("numpy baseline agrees with the engine on every row" if not bad
          else f"numpy baseline DISAGREES with the engine: {bad}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written {OUT}")


if __name__ == "__main__":
    main()
