"""Speed and memory of `diferida valuation` (a benchmark, not a test).

    python bench/bench_valuation.py 100000 1000000

For each size: two synthetic censuses (bench/generate.py, seeds 1 and 2
for the people; typed Parquet under bench/out/) with the valuation's
columns — `benefit_status` (about 70% deferred, 20% in pay, 5% deceased,
5% refunded), `monthly_in_pay`, `in_pay_since`, `employer` (40 codes) —
where the prior census differs from this year's as a year does: 2% of
this year's members are not in it (joiners), 2% of its members are not in
this year's (leavers), some members deceased now were deferred then, some
in pay now were deferred then, and in-pay amounts were 2% lower. Then a
full valuation in a child process: Pub-2010 with MP-2020, the liability
at 3.81% with the rates one point lower and higher, the schedule of
changes against the prior census (prior discount 3.54%, MP-2019), the
employers' schedule, and the GASB 73 report over a history holding two
earlier years (2024 and 2025, measured on the first 2,000 rows of the
prior census: the history's size, not its members, is what the full run
reads), with a recognition period of 4.5 years. The child reports wall
time per phase, CPU time (user + system, all threads) and peak resident
memory (ru_maxrss).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"


def censuses(n: int) -> tuple[Path, Path]:
    import numpy as np
    import polars as pl

    sys.path.insert(0, str(HERE))
    from generate import population, typed

    now, before = OUT / f"census-{n}.parquet", OUT / f"census-{n}-prior.parquet"
    if now.exists() and before.exists():
        return now, before
    OUT.mkdir(exist_ok=True)
    rng = np.random.default_rng(7)
    people = typed(population(n, seed=1))
    status = rng.choice(["deferred", "in_pay", "deceased", "refunded"], n,
                        p=[0.70, 0.20, 0.05, 0.05])
    amount = (rng.integers(40_000, 400_000, n) / 100).round(2)
    in_pay = status == "in_pay"
    current = people.with_columns(
        pl.Series("benefit_status", status),
        pl.Series("monthly_in_pay", [f"{a:.2f}" if p else None
                                     for a, p in zip(amount, in_pay, strict=True)]),
        pl.Series("in_pay_since", ["2016-07-01" if p else None for p in in_pay]),
        pl.Series("employer", [f"E{k:02d}" for k in rng.integers(0, 40, n)]),
    )
    # last year's: most of this year's members, as they were then
    keep = rng.random(n) >= 0.02  # 2% joined this year
    was = np.where(rng.random(n) < 0.5, "deferred", status)  # half the changes happened now
    was = np.where(np.isin(status, ["deceased", "in_pay"]), was, status)
    was_pay = was == "in_pay"
    prior = current.with_columns(
        pl.Series("benefit_status", was),
        pl.Series("monthly_in_pay", [f"{a * 0.98:.2f}" if p else None
                                     for a, p in zip(amount, was_pay, strict=True)]),
        pl.Series("in_pay_since", ["2016-07-01" if p else None for p in was_pay]),
    ).filter(pl.Series(keep))
    leavers = typed(population(n // 50, seed=2)).with_columns(
        (pl.lit("L") + pl.col("participant_id")).alias("participant_id"),
        pl.lit("deferred").alias("benefit_status"),
        pl.lit(None, dtype=pl.String).alias("monthly_in_pay"),
        pl.lit(None, dtype=pl.String).alias("in_pay_since"),
        pl.lit("E00").alias("employer"))
    pl.concat([prior, leavers.select(prior.columns)]).write_parquet(before)
    current.write_parquet(now)
    return now, before


def history(before: str) -> Path:
    """A history of two earlier measurements (2024, 2025) of a sample."""
    from datetime import date

    import polars as pl

    from diferida.liability import value_file

    sample = OUT / "history-sample.parquet"
    pl.read_parquet(before).head(2000).write_parquet(sample)
    path = OUT / "history.jsonl"
    path.unlink(missing_ok=True)
    common = dict(mortality="pub2010", improvement="mp2020", overwrite=True, lang="en",
                  history=path, remaining_service_life="4.5")
    value_file(sample, OUT / "history-2024.json", discount="0.0354", as_of=date(2024, 6, 30),
               **common)
    value_file(sample, OUT / "history-2025.json", discount="0.0354", as_of=date(2025, 6, 30),
               prior=sample, prior_date=date(2024, 6, 30), **common)
    return path


def child(now: str, before: str) -> None:
    from datetime import date

    from diferida.liability import value_file

    prior_toml = OUT / "prior-assumptions.toml"
    prior_toml.write_text('discount = "0.0354"\nimprovement = "mp2019"\n')
    kept = history(before)
    tick = time.perf_counter()
    s = value_file(now, OUT / f"valuation-{Path(now).stem}.json", discount="0.0381",
                   mortality="pub2010", improvement="mp2020", as_of=date(2026, 6, 30),
                   prior=before, prior_date=date(2025, 6, 30),
                   prior_assumptions=prior_toml, overwrite=True, lang="en",
                   history=kept, remaining_service_life="4.5")
    wall = time.perf_counter() - tick
    use = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"rows": s.counts["rows_read"], "prior_rows": s.prior_counts["rows_read"],
                      "employers": len(s.employers or []), "total": s.liability["total"],
                      "expense": (s.gasb73 or {}).get("expense", {}).get("total"),
                      "history_before": (s.gasb73 or {}).get("history", {}).get(
                          "records_before"),
                      "wall_s": round(wall, 2), "phases_s": {k: round(v, 2) for k, v in
                                                             s.seconds.items()},
                      "cpu_s": round(use.ru_utime + use.ru_stime, 2),
                      "peak_rss_mib": round(use.ru_maxrss / 1024)}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("sizes", nargs="*", type=int, default=[100_000])
    ap.add_argument("--child", nargs=2, default=None)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    for n in args.sizes:
        now, before = censuses(n)
        load = os.getloadavg()[0]
        out = subprocess.run([sys.executable, __file__, "--child", str(now), str(before)],
                             capture_output=True, text=True, check=True)
        print(f"{n:>9,} members (load {load:.1f}): {out.stdout.strip()}")


if __name__ == "__main__":
    main()
