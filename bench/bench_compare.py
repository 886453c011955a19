"""Speed of `diferida compare` against one `diferida batch` run on the same
file (the whole process, start to exit).

    .venv/bin/python bench/bench_compare.py            # 10^5 and 10^6 members
    .venv/bin/python bench/bench_compare.py --rows 100000

Goal (issue 13): comparing two rule sets over 10^6 members costs at most
2.5x one `diferida batch` run on the same file, without projection options.
Three comparisons are timed, since the cost of explaining grows with the
members who change: the strict reading of 19.4 (few change: new police
officers and firefighters on 19.4), the illustrative age-67 reform of 19.2
(every new participant on 19.2), and a rate of 1.75% for 19.5(b) (every
entitled new participant). `--repeat N` keeps the best of N runs. Figures
depend on the machine's load (printed).
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

from bench.bench_batch import OUT, population_file  # noqa: E402

DIFERIDA = str(Path(sys.executable).parent / "diferida")
GOAL = 2.5


def timed(cmd: list[str]) -> tuple[float, dict]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return wall, json.loads(proc.stdout)


def _rate_reform() -> Path:
    """A reform of the amount (19.5(b) at 1.75%), the kind that changes most
    entitled new participants."""
    path = OUT / "reform-19_5b-rate-1_75.toml"
    path.write_text('base = "article19"\n[meta]\nname = "rate-19_5b-1_75"\n'
                    'title = "19.5(b) at 1.75% (a benchmark reform)"\n'
                    '[amount.new]\nbrackets = [{ threshold = "0", rate = "0.0175" }]\n')
    return path


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, action="append", help="sizes (default 10^5 and 10^6)")
    p.add_argument("--repeat", type=int, default=1, help="runs per case; the best is kept")
    a = p.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    results = []
    print(f"{'rows':>10} {'run':<34} {'wall s':>7} {'x batch':>8} {'changed':>9} "
          f"{'explain s':>9} {'load':>5}  goal")
    for rows in a.rows or [100_000, 1_000_000]:
        src = population_file(rows, "parquet")
        batch = [DIFERIDA, "batch", str(src), "-o", str(OUT / f"bench-cmp-det-{rows}.parquet"),
                 "--as-of", "2026-11-29", "--overwrite", "--json", "-q"]
        base = min(timed(batch)[0] for _ in range(a.repeat))
        print(f"{rows:>10,} {'batch (article19)':<34} {base:>7.2f} {1:>8.2f} {'':>9} "
              f"{'':>9} {os.getloadavg()[0]:>5.1f}", flush=True)
        for b in ("article19-strict-19_4", "reform-19_2-age-67", str(_rate_reform())):
            cmd = [DIFERIDA, "compare", str(src), "--rules", "article19", "--rules", b,
                   "-o", str(OUT / f"bench-cmp-{rows}.parquet"), "--as-of", "2026-11-29",
                   "--overwrite", "--json"]
            wall, summary = min((timed(cmd) for _ in range(a.repeat)), key=lambda x: x[0])
            ratio = wall / base
            goal = f"<= {GOAL}x: {'met' if ratio <= GOAL else 'MISSED'}"
            print(f"{rows:>10,} {'compare article19 / ' + Path(b).stem[:14]:<34} {wall:>7.2f} "
                  f"{ratio:>8.2f} {summary['members_changed']:>9,} "
                  f"{summary['seconds']['explain']:>9.2f} {os.getloadavg()[0]:>5.1f}  {goal}",
                  flush=True)
            results.append({"rows": rows, "rules_b": b, "wall_s": wall, "batch_s": base,
                            "ratio": ratio, "changed": summary["members_changed"],
                            "seconds": summary["seconds"]})
    (OUT / "bench_compare.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
