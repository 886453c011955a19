"""Speed and memory of `diferida census` (a benchmark, not a test).

    python bench/bench_census.py 100000 1000000 [--no-prior] [--html]

For each size: a synthetic population (bench/generate.py, seed 1) with the
benefit columns added (80% deferred, 12% in pay with an amount and a start
date, 4% deceased, 4% refunded), written once under bench/out/ as Parquet,
and a prior file of the same members a year earlier (2% of them not yet
there, 1% since left, some amounts in pay, statuses and pays changed). The
census of the one against the other is run in a child process, the workbook
written (and the HTML page with --html); the child reports its wall time per
phase, its CPU time (user + system, all threads) and its peak resident
memory (ru_maxrss), with the machine's load: on a shared machine the CPU
time is the steadier figure. Goal: 10^6 members under 15 s of CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
GOAL_CPU_S = 15.0
EPOCH = date(1970, 1, 1)


def with_status(frame: pl.DataFrame, seed: int) -> pl.DataFrame:
    """The benefit columns, consistent with each member's dates: in pay
    from a date between age 55 (or 1990) and 2026-06-30."""
    rng = np.random.default_rng(seed)
    n = frame.height
    status = rng.choice(np.array(["deferred", "in_pay", "deceased", "refunded"]), n,
                        p=[0.80, 0.12, 0.04, 0.04])
    paid = status == "in_pay"
    birth = frame["birth_date"].str.to_date("%Y-%m-%d").cast(pl.Int32).to_numpy()
    lo = np.maximum(birth + 55 * 365, (date(1990, 1, 1) - EPOCH).days)
    hi = (date(2026, 6, 30) - EPOCH).days
    lo = np.minimum(lo, hi)
    since = lo + (rng.random(n) * (hi - lo + 1)).astype(np.int64)
    cents = np.round(rng.lognormal(np.log(150_000), 0.4, n)).astype(np.int64)
    return frame.with_columns(
        pl.Series("benefit_status", status),
        pl.when(pl.Series(paid)).then(
            pl.concat_str(pl.Series(cents // 100).cast(pl.String), pl.lit("."),
                          pl.Series(cents % 100).cast(pl.String).str.zfill(2)))
        .alias("monthly_in_pay"),
        pl.when(pl.Series(paid)).then(
            pl.Series(since.astype(np.int32)).cast(pl.Date).dt.to_string("%Y-%m-%d"))
        .alias("in_pay_since"),
    )


def prior_of(frame: pl.DataFrame, seed: int) -> pl.DataFrame:
    """Last year's file: 2% of the members not yet there (joiners now), 1%
    more who have since left, 1% of the pays and 0.5% of the amounts in pay
    different, and some of today's pensioners still deferred."""
    rng = np.random.default_rng(seed)
    n = frame.height
    keep = rng.random(n) >= 0.02
    pay_moved = rng.random(n) < 0.01
    in_pay = (frame["benefit_status"] == "in_pay").to_numpy()
    amount_moved = in_pay & (rng.random(n) < 0.05)
    newly_paid = in_pay & ~amount_moved & (rng.random(n) < 0.1)
    prior = frame.with_columns(
        pl.when(pl.Series(pay_moved)).then(
            (pl.col("average_compensation").cast(pl.Float64) * 0.97).round(2).cast(pl.String))
        .otherwise("average_compensation").alias("average_compensation"),
        pl.when(pl.Series(amount_moved)).then(
            (pl.col("monthly_in_pay").cast(pl.Float64) * 0.98).round(2).cast(pl.String))
        .otherwise("monthly_in_pay").alias("monthly_in_pay"),
    ).with_columns(
        pl.when(pl.Series(newly_paid)).then(pl.lit("deferred"))
        .otherwise("benefit_status").alias("benefit_status"),
        *[pl.when(pl.Series(newly_paid)).then(pl.lit(None)).otherwise(c).alias(c)
          for c in ("monthly_in_pay", "in_pay_since")],
    ).filter(pl.Series(keep))
    left = frame.head(max(1, n // 100)).with_columns(
        ("L" + pl.col("participant_id").str.slice(1)).alias("participant_id"))
    return pl.concat([prior, left])


def files(n: int) -> tuple[Path, Path]:
    sys.path.insert(0, str(HERE))
    from generate import population

    OUT.mkdir(exist_ok=True)
    now, before = OUT / f"census-members-{n}.parquet", OUT / f"census-prior-{n}.parquet"
    if not (now.exists() and before.exists()):
        frame = with_status(population(n), seed=7)
        frame.write_parquet(now)
        prior_of(frame, seed=11).write_parquet(before)
    return now, before


def child(path: str, prior: str | None, html: bool) -> None:
    from diferida.census import census_file

    tick = time.perf_counter()
    stem = Path(path).stem
    s = census_file(path, OUT / f"{stem}.xlsx", OUT / f"{stem}.html" if html else None,
                    prior=prior, as_of=date(2026, 11, 29), overwrite=True, lang="en")
    wall = time.perf_counter() - tick
    use = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"rows": s.rows_read, "members": s.current.members,
                      "outliers": sum(s.figures["outliers"].values()),
                      "changed": s.figures.get("members_changed"),
                      "wall_s": round(wall, 2),
                      "phases_s": {k: round(v, 2) for k, v in s.seconds.items()},
                      "cpu_s": round(use.ru_utime + use.ru_stime, 2),
                      "peak_rss_mib": round(use.ru_maxrss / 1024)}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="*", type=int, default=[100_000, 1_000_000])
    ap.add_argument("--no-prior", action="store_true", help="no --prior file")
    ap.add_argument("--html", action="store_true", help="write the HTML page too")
    ap.add_argument("--child", default=None)
    ap.add_argument("--prior", default=None)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.prior, args.html)
        return
    for n in args.sizes:
        now, before = files(n)
        load = os.getloadavg()
        cmd = [sys.executable, __file__, "--child", str(now),
               *([] if args.no_prior else ["--prior", str(before)]),
               *(["--html"] if args.html else [])]
        r = subprocess.run(cmd, capture_output=True, text=True, check=True)
        res = json.loads(r.stdout.strip().splitlines()[-1])
        goal = ""
        if n == 1_000_000:
            goal = f"; goal CPU < {GOAL_CPU_S:g} s: " + \
                ("met" if res["cpu_s"] < GOAL_CPU_S else "MISSED")
        print(f"{n:>9,} members{'' if args.no_prior else ' and a prior file'}: "
              f"{res['wall_s']:.1f} s (CPU {res['cpu_s']:.1f} s), "
              f"peak {res['peak_rss_mib']:,} MiB, {res['outliers']:,} outliers, "
              f"{res['changed'] or 0:,} members changed; phases {res['phases_s']}; "
              f"load average before {load[0]:.1f}{goal}", flush=True)


if __name__ == "__main__":
    main()
