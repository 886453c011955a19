"""Instructions per `diferida.evaluate` call, counted by callgrind: the
figure the machine's other load does not change (wall-clock time on the
development machine drifts by a third within an hour).

    .venv/bin/python bench/bench_instructions.py                  # this tree
    .venv/bin/python bench/bench_instructions.py --src OTHER/src  # and another, beside it

One participant (the first worked example of rules §8) is evaluated 50 times in one
process and 250 times in another, each under `valgrind --tool=callgrind`;
the difference divided by 200 is the cost of one call, with start-up,
imports and the first (unprepared) call cancelled out. Where the calls go is
read from the same two profiles (`callgrind_annotate --inclusive=yes`):
Polars' `collect` and its parts, and Python (everything else in a call).
Needs valgrind; prints a line and exits 0 without it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out" / "instructions.json"
FEW, MANY = 50, 250
PARTICIPANT = dict(birth_date="1970-05-10", entry_date="1988-07-01",
                   separation_date="2010-06-30", creditable_service_years="22",
                   average_compensation="30000.00", refund_requested="false", group="general")
AS_OF = "2026-11-29"

# Polars functions (callgrind's names, non-recursive entries), what the
# figures call them
PARTS = {
    "collect (all of Polars' part)": r"PyLazyFrame>::__pymethod_collect__ ",
    "  planning the physical plan": r"polars_mem_engine::planner::lp::create_physical_plan ",
    "    of which: each node back into an expression": r"ir_to_dsl::node_to_expr ",
    "    of which: whether an operand is one value": r"aexpr::scalar::is_scalar_ae ",
    "  running it": r"StackExec as polars_mem_engine::executors::executor::Executor>::execute ",
    "  freeing it": r"drop_glue::<polars_mem_engine::executors::stack::StackExec> ",
    "  converting and optimising the query": r"LazyFrame>::to_alp_optimized ",
}


def child(calls: int) -> None:
    from datetime import date

    import diferida

    day = date.fromisoformat(AS_OF)
    for _ in range(calls):
        diferida.evaluate(PARTICIPANT, as_of=day)


def profile(src: Path, calls: int, folder: Path) -> tuple[int, dict[str, int]]:
    out = folder / f"cg-{calls}.out"
    env = {**os.environ, "PYTHONPATH": str(src)}
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                    sys.executable, __file__, "--child", str(calls)],
                   env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(out)],
                          check=True, capture_output=True, text=True).stdout
    total = int(re.search(r"^\s*([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS", text, re.M)
                .group(1).replace(",", ""))
    parts = {}
    for label, pattern in PARTS.items():
        found = [int(m.group(1).replace(",", "")) for m in
                 re.finditer(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+\S*" + pattern, text, re.M)
                 if "'2" not in m.group(0)]
        parts[label] = max(found, default=0)
    return total, parts


def per_call(src: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        few = profile(src, FEW, Path(tmp))
        many = profile(src, MANY, Path(tmp))
    n = MANY - FEW
    total = (many[0] - few[0]) / n
    parts = {k: (many[1][k] - few[1][k]) / n for k in PARTS}
    parts["Python (the rest of a call)"] = total - parts["collect (all of Polars' part)"]
    return {"src": str(src), "per_call": total, "parts": parts}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", default=None, help="also count another source tree's code")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child is not None:
        child(a.child)
        return
    if not (shutil.which("valgrind") and shutil.which("callgrind_annotate")):
        print("valgrind is not installed: no instruction counts")
        return
    trees = [ROOT / "src"] + ([Path(a.src).resolve()] if a.src else [])
    results = [per_call(t) for t in trees]
    for r in results:
        print(f"{r['src']}: {r['per_call'] / 1e6:.2f} M instructions per diferida.evaluate")
        for label, value in r["parts"].items():
            print(f"  {label:<48} {value / 1e6:6.2f} M  ({value / r['per_call']:5.1%})")
    if len(results) == 2:
        print(f"this tree / the other: {results[0]['per_call'] / results[1]['per_call']:.3f}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(results, indent=2))
    print(f"written {OUT}")


if __name__ == "__main__":
    main()
