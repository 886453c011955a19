"""Start-up and one-participant speed: the command line, `diferida.evaluate`
and `POST /api/v1/determinations`.

    .venv/bin/python bench/bench_cli.py [--runs 7] [--calls 500] [--api-seconds 5] [--no-api]
    .venv/bin/python bench/bench_cli.py --src OTHER/src   # another source tree, same venv
    .venv/bin/python bench/bench_cli.py --against OTHER/src --pairs 8

Whole processes are timed from the outside (fork to exit, as a user waits),
the median of `--runs` after one warm-up run (which also writes the byte
code, as any first run does); their CPU time (user + system) is printed
beside, as the figure that other load on the machine changes least.
`diferida.evaluate` is timed in this process, the median over `--calls`
varied participants after a warm-up. The API figure is the median latency at
one client of bench/bench_api.py's load (2 worker processes, SQLite).
Every figure is printed against its goal and written to bench/out/cli.json.
The machine's other load skews the figures: the load average is printed with
them.

`--against OTHER/src --pairs N` compares `diferida.evaluate` only, this
tree's code against another's, side by side: N pairs of processes, each
timing 2,000 varied participants, run one after the other (the order
alternating), and prints each pair and the median of the ratios, the figure
the machine's drift changes least.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

OUT = Path(__file__).parent / "out" / "cli.json"
AS_OF = date(2026, 11, 29)
GOAL_HELP_S = 0.25
GOAL_EVALUATE_PROCESS_S = 0.5
GOAL_EVALUATE_MS = 5.0
GOAL_API_MS = 10.0
COMMANDS = ("evaluate", "examples", "rules", "batch", "project", "compare", "serve", "db",
            "users", "audit")
EVALUATE_ARGS = ("evaluate", "--birth-date", "1970-05-10", "--entry-date", "1988-07-01",
                 "--separation-date", "2010-06-30", "--service", "22", "--compensation",
                 "30000.00", "--no-refund", "--as-of", AS_OF.isoformat())


def command(src: str | None) -> tuple[list[str], dict[str, str]]:
    """How to run `diferida`: the installed command, or `src`'s code with this Python."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as a user's machine: byte code is cached
    if src is None:
        exe = Path(sys.executable).parent / "diferida"
        return [str(exe)], env
    env["PYTHONPATH"] = str(Path(src).resolve())
    return [sys.executable, "-c", "import sys; sys.argv[0] = 'diferida'; "
            "from diferida._entry import main; sys.exit(main())"], env


def whole_process(cmd: list[str], env: dict[str, str], runs: int
                  ) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU (user + system) seconds of each run."""

    def once() -> tuple[float, float]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        r = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if r.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr.decode()}")
        return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

    once()  # warm-up
    runs_ = [once() for _ in range(runs)]
    return [w for w, _ in runs_], [c for _, c in runs_]


def pairs(other: str, n: int, calls: int) -> None:
    """This tree's `diferida.evaluate` against `other`'s, in alternating pairs."""
    def median_ms(src: Path) -> float:
        env = {**os.environ, "PYTHONPATH": str(src)}
        out = subprocess.run([sys.executable, __file__, "--child-calls", str(calls)], env=env,
                             check=True, capture_output=True, text=True).stdout
        return json.loads(out)["median_ms"]

    here, there = Path(__file__).resolve().parents[1] / "src", Path(other).resolve()
    ratios = []
    for i in range(n):
        order = (here, there) if i % 2 == 0 else (there, here)
        got = {src: median_ms(src) for src in order}
        ratios.append(got[here] / got[there])
        print(f"pair {i + 1}: this tree {got[here]:.2f} ms, the other {got[there]:.2f} ms, "
              f"ratio {ratios[-1]:.3f}", flush=True)
    print(f"median ratio (this tree / the other): {statistics.median(ratios):.3f} "
          f"over {n} pairs; load average {os.getloadavg()[0]:.2f}")


def in_process(calls: int) -> dict[str, float]:
    import bench_api

    import diferida

    people = [json.loads(b) for b in bench_api.participants(calls)]
    for p in people:
        p.pop("as_of")
    rules = diferida.load_rules()
    for p in people[:20]:  # warm-up: the plans are built on first use
        diferida.evaluate(p, as_of=AS_OF, rules=rules, lang=p.pop("lang", "es"))
    times = []
    for p in people:
        lang = p.pop("lang", "es")
        t = time.perf_counter()
        diferida.evaluate(p, as_of=AS_OF, lang=lang)
        times.append(time.perf_counter() - t)
    return {"calls": calls, "median_ms": statistics.median(times) * 1000,
            "p90_ms": statistics.quantiles(times, n=10)[-1] * 1000}


def api(seconds: float) -> dict:
    import bench_api

    from diferida.service.testing import running_server

    bodies = bench_api.participants(2000)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        with running_server(url, workers=2, log_level="warning",
                            log_path=Path(tmp) / "server.log",
                            env={"DIFERIDA_RATE_LIMIT_PUBLIC": "off"}) as base:
            asyncio.run(bench_api.load(base, 4, 3.0, bodies))  # warm-up
            return asyncio.run(bench_api.load(base, 1, seconds, bodies))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--api-seconds", type=float, default=5.0)
    ap.add_argument("--no-api", action="store_true")
    ap.add_argument("--src", default=None, help="run this source tree's code instead")
    ap.add_argument("--against", default=None, metavar="OTHER/src",
                    help="only diferida.evaluate, side by side with another source tree")
    ap.add_argument("--pairs", type=int, default=8)
    ap.add_argument("--child-calls", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_calls is not None:  # one side of a pair: the code on PYTHONPATH
        print(json.dumps(in_process(args.child_calls)))
        return
    if args.against is not None:
        pairs(args.against, args.pairs, 2000)
        return
    cmd, env = command(args.src)
    rows: list[tuple[str, float, float, str]] = []  # what, measured, goal, unit

    def process(label: str, argv: tuple[str, ...], goal: float) -> None:
        times, cpu = whole_process([*cmd, *argv], env, args.runs)
        rows.append((label, statistics.median(times), goal, "s"))
        print(f"{label:<44} {statistics.median(times):>8.3f} s  (min {min(times):.3f}, "
              f"max {max(times):.3f}; CPU {statistics.median(cpu):.3f} s; goal < {goal} s)",
              flush=True)

    load_before = os.getloadavg()[0]
    process("diferida --help", ("--help",), GOAL_HELP_S)
    for name in COMMANDS:
        process(f"diferida {name} --help", (name, "--help"), GOAL_HELP_S)
    process("diferida evaluate (one participant)", EVALUATE_ARGS, GOAL_EVALUATE_PROCESS_S)

    if args.src is not None:  # for this process, and the server it starts
        sys.path.insert(0, str(Path(args.src).resolve()))
        os.environ["PYTHONPATH"] = str(Path(args.src).resolve())
    one = in_process(args.calls)
    rows.append(("diferida.evaluate, median", one["median_ms"], GOAL_EVALUATE_MS, "ms"))
    print(f"{'diferida.evaluate, median':<44} {one['median_ms']:>8.2f} ms (p90 "
          f"{one['p90_ms']:.2f}, {one['calls']} calls; goal < {GOAL_EVALUATE_MS} ms)", flush=True)
    if not args.no_api:
        r = api(args.api_seconds)
        rows.append(("POST /api/v1/determinations, p50", r["median_ms"], GOAL_API_MS, "ms"))
        print(f"{'POST /api/v1/determinations, p50':<44} {r['median_ms']:>8.2f} ms (p99 "
              f"{r['p99_ms']}, {r['requests']} requests at 1 client; goal < {GOAL_API_MS} ms)")

    missed = [w for w, v, goal, _ in rows if v >= goal]
    report = {
        "figures": [{"what": w, "median": round(v, 4), "unit": u, "goal_below": goal,
                     "met": v < goal} for w, v, goal, u in rows],
        "runs": args.runs, "source": args.src or "installed",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_average_before_after": [round(load_before, 2),
                                                  round(os.getloadavg()[0], 2)]},
    }
    print(f"load average before/after: {report['machine']['load_average_before_after']}")
    print("every goal met" if not missed else f"goals NOT met: {', '.join(missed)}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written {OUT}")


if __name__ == "__main__":
    main()
