"""`diferida batch` against the hand-written numpy kernel (`bench/kernel.py`),
whole processes, run interleaved on the same file, median of N.

    .venv/bin/python bench/bench_kernel.py                 # 10^6 rows, 5 runs each
    .venv/bin/python bench/bench_kernel.py --rows 100000 --runs 3
    .venv/bin/python bench/bench_kernel.py --full          # also 10^7 rows

Goals (issue 11): Parquet -> Parquet within 1.5x the kernel; CSV -> CSV
within 2x; 10^7 rows CSV -> Parquet under 1.5 GiB peak. Both sides write
the same file: after the runs, every column of the two outputs is compared,
names, order and types (Parquet) and every cell (CSV: as text, an empty
cell apart from a quoted ""), and the disagreements are printed per column.
The ratio is of medians of wall time; the load of the machine is printed,
since a busy machine skews it.
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


def agree(ours: Path, kernel: Path) -> dict[str, int]:
    """Disagreements between the two outputs, per column: cells that differ
    (a null and a value differ), and "<columns>" / "<types>" / "<arrow
    types>" / "<rows>" when the names and their order, the types (Polars'
    or the Arrow types a Parquet file records) or the number of rows are not
    the same. Empty when the files agree on every cell."""
    wrong: dict[str, int] = {}
    if ours.suffix == ".parquet":
        import pyarrow.parquet as pq

        # the Arrow types each file records (large_string, decimal128(20, 2), ...)
        sa, sb = pq.read_schema(ours), pq.read_schema(kernel)
        if sa.names == sb.names and sa.types != sb.types:
            wrong["<arrow types>"] = sum(x != y for x, y in zip(sa.types, sb.types))
        a, b = pl.read_parquet(ours), pl.read_parquet(kernel)
    else:  # all text: an empty cell is null, a quoted "" the empty text
        a, b = (pl.read_csv(p, infer_schema=False) for p in (ours, kernel))
    if a.columns != b.columns:
        wrong["<columns>"] = len(set(a.columns) ^ set(b.columns)) or 1
    if [a.schema.get(c) for c in a.columns] != [b.schema.get(c) for c in a.columns]:
        wrong["<types>"] = sum(a.schema[c] != b.schema.get(c) for c in a.columns)
    if a.height != b.height:
        wrong["<rows>"] = abs(a.height - b.height)
        return wrong
    for c in a.columns:
        if c not in b.columns:
            wrong[c] = a.height
            continue
        x, y = a[c], b[c]
        if x.dtype != y.dtype:
            x, y = x.cast(pl.String), y.cast(pl.String)
        n = int(x.ne_missing(y).sum())
        if n:
            wrong[c] = n
    return wrong


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
            "ratio": med(a, "wall") / med(b, "wall"),
            "disagreements": sum(wrong.values()), "disagreeing": wrong,
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
              + (f"  DISAGREE: {r['disagreements']} {r['disagreeing']}"
                 if r["disagreements"] else "  (every cell agrees)"),
              flush=True)
    (OUT / "bench_kernel.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
