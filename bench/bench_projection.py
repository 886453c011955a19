"""Speed and memory of `diferida project` (a benchmark, not a test).

    python bench/bench_projection.py 100000 1000000 [--rates 0.04,0.05,0.0625]
        [--cola 0.02] [--sensitivity]

For each size: a synthetic population (bench/generate.py, seed 1, typed
Parquet) is written once under bench/out/, then projected in a child
process to age 120, three discount rates, Pub-2010 with MP-2020, COLA 0,
per-member output off (with --sensitivity, the standard grid too: one full
projection per scenario); the child reports its wall time per phase, its
CPU time (user + system, all threads) and its peak resident memory
(ru_maxrss). The machine's load is printed with them: on a shared machine
the CPU time is the steadier figure.
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


def child(path: str, rates: str, cola: str, sensitivity: bool) -> None:
    from datetime import date

    from diferida.projection import project_file

    tick = time.perf_counter()
    target = OUT / f"flows-{Path(path).stem}.csv"
    s = project_file(path, target, discount=rates, mortality="pub2010", improvement="mp2020",
                     as_of=date(2026, 11, 29), overwrite=True, cola=cola,
                     sensitivity=sensitivity)
    wall = time.perf_counter() - tick
    use = resource.getrusage(resource.RUSAGE_SELF)
    peak = use.ru_maxrss * 1024
    print(json.dumps({"rows": s.rows_read, "projected": s.projected,
                      "fiscal_years": s.assumptions["counts"]["fiscal_years"],
                      "wall_s": round(wall, 2), "phases_s": s.seconds,
                      "cpu_s": round(use.ru_utime + use.ru_stime, 2),
                      "peak_rss_mib": round(peak / 2**20)}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("sizes", nargs="+", type=int)
    ap.add_argument("--rates", default="0.04,0.05,0.0625")
    ap.add_argument("--cola", default="0")
    ap.add_argument("--sensitivity", action="store_true")
    ap.add_argument("--child", default=None)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.rates, args.cola, args.sensitivity)
        return
    sys.path.insert(0, str(HERE))
    from generate import population

    OUT.mkdir(exist_ok=True)
    for n in args.sizes:
        path = OUT / f"project-members-{n}.parquet"
        if not path.exists():
            population(n).write_parquet(path)
        load = os.getloadavg()
        r = subprocess.run([sys.executable, __file__, "0", "--child", str(path), "--rates",
                            args.rates, "--cola", args.cola,
                            *(["--sensitivity"] if args.sensitivity else [])],
                           capture_output=True, text=True, check=True)
        result = json.loads(r.stdout.strip().splitlines()[-1])
        print(f"{n:>9,} members: {result['wall_s']:.1f} s (CPU {result['cpu_s']:.1f} s), "
              f"peak {result['peak_rss_mib']:,} MiB, "
              f"{result['projected']:,} projected, {result['fiscal_years']} fiscal years; "
              f"phases {result['phases_s']}; load average before {load[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
