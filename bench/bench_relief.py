"""Speed of costing a relief with `diferida compare` (a benchmark, not a test).

    python bench/bench_relief.py                 # 10^6 members
    python bench/bench_relief.py --members 200000 --repeat 3

A census shaped like the System's (bench/generate_census.py, seed 2038;
typed Parquet under bench/out/): 80 % of the members in pay, 20 % deferred,
with employers. Then, in a child process, the whole command as a user runs
it:

    diferida compare CENSUS --rules article19 --rules relief-pc2038-illustrative
        -o OUT.csv --as-of 2026-06-30 --discount 0.04 --mortality pub2010 -q --json

(both sides decided, the members in pay projected from their amounts, each
side with its rules' relief: the +10 % at most $300 and the COLA series of
the illustrative file). Reported: wall time, CPU time of the child (user +
system) and its peak resident memory. Goal: under 30 s for 10^6 members.
Figures depend on the machine's load (printed); `--repeat N` keeps the best.
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
DIFERIDA = str(Path(sys.executable).parent / "diferida")
GOAL = 30.0


def census(members: int) -> Path:
    path = OUT / f"relief-census-{members}.parquet"
    if not path.exists():
        OUT.mkdir(exist_ok=True)
        in_pay = members * 4 // 5
        subprocess.run([sys.executable, str(HERE / "generate_census.py"), "-o", str(path),
                        "--in-pay", str(in_pay), "--deferred", str(members - in_pay)],
                       check=True)
    return path


def run(path: Path, relief: str) -> dict:
    out = OUT / "relief-compare.csv"
    cmd = [DIFERIDA, "compare", str(path), "--rules", "article19", "--rules", relief,
           "-o", str(out), "--as-of", "2026-06-30", "--discount", "0.04",
           "--mortality", "pub2010", "--overwrite", "-q", "--json", "--lang", "en"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    summary = json.loads(proc.stdout)
    return {"wall": wall,
            "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "peak_mib": after.ru_maxrss / 1024, "summary": summary}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--members", type=int, default=1_000_000)
    ap.add_argument("--relief", default="relief-pc2038-illustrative")
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    path = census(a.members)
    print(f"load average {os.getloadavg()[0]:.1f}; {a.members:,} members ({path.name})")
    best = min((run(path, a.relief) for _ in range(a.repeat)), key=lambda r: r["wall"])
    s = best["summary"]
    pv = next((v for k, v in s.items() if k.startswith("pv_") and k.endswith("_difference")),
              None) if isinstance(s, dict) else None
    print(f"compare article19 → {a.relief}: {best['wall']:.1f} s wall, "
          f"{best['cpu']:.1f} s CPU, peak {best['peak_mib']:,.0f} MiB"
          + (f"; present value of the relief {pv}" if pv is not None else ""))
    ok = best["wall"] < GOAL
    print(f"goal under {GOAL:.0f} s: {'met' if ok else 'NOT met'}")
    (OUT / "relief.json").write_text(json.dumps(
        {k: v for k, v in best.items() if k != "summary"} | {"members": a.members}, indent=2))


if __name__ == "__main__":
    main()
