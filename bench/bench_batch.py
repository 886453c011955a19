"""End-to-end speed and memory of `diferida batch`: the whole process, from
start to exit, as a user runs it.

    .venv/bin/python bench/bench_batch.py            # 10^5 and 10^6 rows
    .venv/bin/python bench/bench_batch.py --full     # also 10^7 rows (or DIFERIDA_BENCH_FULL=1)

For each size it generates synthetic populations (bench/generate.py: CSV
text with 2% invalid rows, typed Parquet), runs `diferida batch` as a
subprocess and reports wall time, rows per second, the peak resident memory
of the process (from wait4), and the split between reading, evaluating and
writing that the run itself measured (its --json summary).

Goals: 10^6 rows Parquet -> Parquet under 2 s, CSV -> CSV under 4 s;
10^7 rows CSV -> Parquet with peak memory under 2 GiB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.generate import write  # noqa: E402

OUT = ROOT / "bench" / "out"
DIFERIDA = str(Path(sys.executable).parent / "diferida")
GIB = 1 << 30
# (rows, input kind, output kind, goal seconds or None, goal peak bytes or None)
CASES = [
    (100_000, "parquet", "parquet", None, None),
    (100_000, "csv", "csv", None, None),
    (100_000, "csv", "parquet", None, None),
    (1_000_000, "parquet", "parquet", 2.0, None),
    (1_000_000, "csv", "csv", 4.0, None),
    (1_000_000, "csv", "parquet", None, None),
]
FULL_CASES = [
    (10_000_000, "csv", "parquet", None, 2 * GIB),
    (10_000_000, "parquet", "parquet", None, 2 * GIB),
]


def population_file(rows: int, kind: str) -> Path:
    path = OUT / f"members-{rows}.{kind}"
    if not path.exists():
        t = time.perf_counter()
        tmp = path.with_name(f".{path.name}.tmp{path.suffix}")
        write(rows, tmp, invalid=0.02 if kind == "csv" else 0.0)
        tmp.rename(path)
        print(f"   generated {path.name} in {time.perf_counter() - t:.1f} s", flush=True)
    return path


def run(rows: int, src_kind: str, out_kind: str) -> dict:
    src = population_file(rows, src_kind)
    out = OUT / f"determinations-{rows}-{src_kind}.{out_kind}"
    rej = OUT / f"rejects-{rows}-{src_kind}.csv"
    cmd = [DIFERIDA, "batch", str(src), "-o", str(out), "--rejects", str(rej),
           "--as-of", "2026-11-29", "--overwrite", "--json"]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    stdout, stderr = proc.stdout.read(), proc.stderr.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{stderr.decode()}")
    summary = json.loads(stdout)
    return {"rows": rows, "case": f"{src_kind} -> {out_kind}", "wall_s": wall,
            "cpu_s": usage.ru_utime + usage.ru_stime, "load": os.getloadavg()[0],
            "rows_per_s": rows / wall, "peak_bytes": usage.ru_maxrss * 1024,
            "seconds": summary["seconds"], "rejected": summary["rows_rejected"]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--full", action="store_true", help="also 10^7 rows (slow)")
    p.add_argument("--repeat", type=int, default=2, help="runs per case; the best is kept")
    a = p.parse_args()
    full = a.full or os.environ.get("DIFERIDA_BENCH_FULL") == "1"
    OUT.mkdir(parents=True, exist_ok=True)
    cases = CASES + (FULL_CASES if full else [])
    header = (f"{'rows':>11} {'case':<19} {'wall s':>7} {'cpu s':>6} {'rows/s':>10} "
              f"{'peak MiB':>9} {'read':>6} {'eval':>6} {'write':>6} {'load':>5}  goal")
    print(header)
    results = []
    for rows, src_kind, out_kind, goal_s, goal_mem in cases:
        best = min((run(rows, src_kind, out_kind) for _ in range(a.repeat if rows < 10**7 else 1)),
                   key=lambda r: r["wall_s"])
        goals = []
        if goal_s is not None:
            goals.append(f"< {goal_s:g} s: {'met' if best['wall_s'] < goal_s else 'MISSED'}")
        if goal_mem is not None:
            goals.append(f"< {goal_mem / GIB:g} GiB: "
                         f"{'met' if best['peak_bytes'] < goal_mem else 'MISSED'}")
        best["goals"] = goals
        s = best["seconds"]
        print(f"{rows:>11,} {best['case']:<19} {best['wall_s']:>7.2f} {best['cpu_s']:>6.2f} "
              f"{best['rows_per_s']:>10,.0f} {best['peak_bytes'] / 2**20:>9,.0f} "
              f"{s['read']:>6.2f} {s['evaluate']:>6.2f} {s['write']:>6.2f} {best['load']:>5.1f}"
              f"  {'; '.join(goals)}", flush=True)
        results.append(best)
    (OUT / "bench_batch.json").write_text(json.dumps(results, indent=2))
    print("(wall: the whole process, start to exit; cpu: its user + system time; read/eval/"
          "write: seconds inside the run, writing overlapping evaluation in a thread of its "
          "own; load: the machine's 1-minute load average, on 2 cores figures are only "
          f"comparable near 0; results in {OUT / 'bench_batch.json'})")


if __name__ == "__main__":
    main()
