"""`diferida batch` against the hand-written numpy kernel (`bench/kernel.py`),
whole processes, run interleaved on the same file, median of N.

    .venv/bin/python bench/bench_kernel.py                 # 10^6 rows, 5 runs each
    .venv/bin/python bench/bench_kernel.py --rows 100000 --runs 3
    .venv/bin/python bench/bench_kernel.py --full          # also 10^7 rows

Goals (issue 11): Parquet -> Parquet within 1.5x the kernel; CSV -> CSV
within 2x; 10^7 rows CSV -> Parquet under 1.5 GiB peak. Both sides write
the same determinations (checked after the first run: every status, route,
date and amount equal). The ratio is of medians of wall time; the load of
the machine is printed, since a busy machine skews it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402
from bench.bench_batch import OUT, population_file  # noqa: E402

DIFERIDA = str(Path(sys.executable).parent / "diferida")
GIB = 1 << 30
GOALS = {("parquet", "parquet"): 1.5, ("csv", "csv"): 2.0}
COMPARED = ("status", "route", "eligibility_date", "start_date", "annual_amount",
            "monthly_amount", "minimum_applied")


def measure(cmd: list[str]) -> dict:
    """Wall and CPU time and peak memory of one whole process. The peak is
    GNU time's: a child's own ru_maxrss starts from this process's size at
    the fork (Linux), which grows once the outputs have been compared."""
    peak_file = OUT / ".peak"
    timed = ["/usr/bin/time", "-f", "%M", "-o", str(peak_file), *cmd] \
        if Path("/usr/bin/time").exists() else cmd
    start = time.perf_counter()
    proc = subprocess.Popen(timed, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err}")
    peak = int(peak_file.read_text().split()[-1]) * 1024 if timed is not cmd \
        else usage.ru_maxrss * 1024
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "peak": peak}


def agree(ours: Path, kernel: Path) -> int:
    read = pl.read_parquet if ours.suffix == ".parquet" else (
        lambda p: pl.read_csv(p, infer_schema=False))
    a, b = read(ours), read(kernel)
    if ours.suffix != ".parquet":
        a = a.select("participant_id", *COMPARED)
        b = b.select("participant_id", *[pl.col(c).cast(pl.String) for c in COMPARED])
        b = b.with_columns(pl.col("minimum_applied").str.to_lowercase())
        a = a.with_columns(pl.col("minimum_applied").str.to_lowercase())
    j = a.join(b, on="participant_id", suffix="_k")
    if j.height != b.height:
        return abs(b.height - j.height)
    return sum(int(j[c].ne_missing(j[f"{c}_k"]).sum()) for c in COMPARED)


def case(rows: int, src_kind: str, out_kind: str, runs: int) -> dict:
    # the kernel reads a clean file; the CSV has no invalid rows here
    src = population_file(rows, src_kind) if src_kind == "parquet" else _clean_csv(rows)
    ours = OUT / f"kb-ours-{rows}.{out_kind}"
    kern = OUT / f"kb-kernel-{rows}.{out_kind}"
    batch = [DIFERIDA, "batch", str(src), "-o", str(ours), "--as-of", "2026-11-29",
             "--overwrite", "-q"]
    kernel = [sys.executable, str(ROOT / "bench" / "kernel.py"), str(src), str(kern),
              "--as-of", "2026-11-29"]
    a, b = [], []
    for _ in range(runs):  # interleaved, so both see the same machine
        a.append(measure(batch))
        b.append(measure(kernel))
    wrong = agree(ours, kern)
    med = lambda xs, k: statistics.median(x[k] for x in xs)  # noqa: E731
    return {"rows": rows, "case": f"{src_kind} -> {out_kind}",
            "batch_wall": med(a, "wall"), "batch_cpu": med(a, "cpu"),
            "batch_peak": max(x["peak"] for x in a),
            "kernel_wall": med(b, "wall"), "kernel_cpu": med(b, "cpu"),
            "kernel_peak": max(x["peak"] for x in b),
            "ratio": med(a, "wall") / med(b, "wall"), "disagreements": wrong,
            "load": os.getloadavg()[0], "goal": GOALS.get((src_kind, out_kind))}


def _clean_csv(rows: int) -> Path:
    path = OUT / f"members-clean-{rows}.csv"
    if not path.exists():
        pl.read_parquet(population_file(rows, "parquet")).write_csv(path)
    return path


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--full", action="store_true", help="also 10^7 rows (slow)")
    p.add_argument("--only-full", action="store_true", help="only the 10^7-row cases")
    a = p.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    cases = [] if a.only_full else [(a.rows, "parquet", "parquet"), (a.rows, "csv", "csv")]
    if a.full or a.only_full:
        cases += [(10_000_000, "csv", "parquet"), (10_000_000, "parquet", "parquet")]
    print(f"{'rows':>11} {'case':<19} {'batch s':>8} {'cpu':>6} {'peak MiB':>9} "
          f"{'kernel s':>9} {'cpu':>6} {'peak MiB':>9} {'ratio':>6} {'load':>5}  goal")
    results = []
    for rows, s, o in cases:
        r = case(rows, s, o, a.runs if rows < 10_000_000 else 1)
        results.append(r)
        goal = r["goal"]
        verdict = "" if goal is None else (
            f"<= {goal}x: {'met' if r['ratio'] <= goal else 'MISSED'}")
        if rows >= 10_000_000 and s == "csv":
            verdict = f"peak < 1.5 GiB: {'met' if r['batch_peak'] < 1.5 * GIB else 'MISSED'}"
        print(f"{rows:>11,} {r['case']:<19} {r['batch_wall']:>8.2f} {r['batch_cpu']:>6.2f} "
              f"{r['batch_peak'] / 2**20:>9.0f} {r['kernel_wall']:>9.2f} {r['kernel_cpu']:>6.2f} "
              f"{r['kernel_peak'] / 2**20:>9.0f} {r['ratio']:>6.2f} {r['load']:>5.1f}  {verdict}"
              + (f"  DISAGREE: {r['disagreements']}" if r["disagreements"] else ""),
              flush=True)
    (OUT / "bench_kernel.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
