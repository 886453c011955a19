"""Where the test suite's time goes: worker-seconds per test file, from the
JUnit XML file pytest writes (`--junitxml`), and how busy the workers were.

    scripts/with-test-services .venv/bin/pytest -n 2 --dist worksteal \
        --junitxml=/tmp/suite.xml
    .venv/bin/python bench/suite_time.py /tmp/suite.xml --workers 2

CPU-seconds per file (the goal of each tier is set in CPU-seconds: wall time
on a shared machine varies several times over): run the suite with
DIFERIDA_SUITE_CPU=FOLDER (tests/conftest.py then writes, per test, the CPU
seconds of the test process and every process below it: its servers,
chromium, the commands it runs), and give the folder:

    DIFERIDA_SUITE_CPU=/tmp/cpu scripts/with-test-services .venv/bin/pytest -n 2 \
        --dist worksteal --junitxml=/tmp/suite.xml
    .venv/bin/python bench/suite_time.py /tmp/suite.xml --cpu /tmp/cpu

(`scripts/with-test-services`, as `make test` runs it: with a PostgreSQL
server, so that the store's tests on PostgreSQL run rather than skip.)

Each test's time is its setup, call and teardown, as pytest reports it. The
busy share is the sum of the tests' times over (workers x the run's time):
near 100 % the run is bound by the work itself, and only less work (or a
faster machine) makes it shorter; well under, the workers wait (for a
subprocess, a server, a sleep) and more workers could help."""

from __future__ import annotations

import argparse
import collections
import xml.etree.ElementTree as ET
from pathlib import Path


def per_file(junit: Path) -> tuple[float, dict[str, tuple[float, int]]]:
    """The run's time in seconds, and each test file's (seconds, tests)."""
    root = ET.parse(junit).getroot()  # ET.ParseError, OSError: main() says which
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    wall = sum(float(s.get("time", 0)) for s in suites)
    seconds: dict[str, float] = collections.Counter()
    tests: dict[str, int] = collections.Counter()
    for case in root.iter("testcase"):
        name = case.get("classname", "").split(".")[-1] or "?"
        seconds[name] += float(case.get("time", 0))
        tests[name] += 1
    return wall, {name: (seconds[name], tests[name]) for name in seconds}


def cpu_per_file(folder: Path) -> dict[str, tuple[float, int]]:
    """Each test file's (CPU seconds, tests) from the cpu-*.tsv files."""
    seconds: dict[str, float] = collections.Counter()
    tests: dict[str, int] = collections.Counter()
    for path in sorted(folder.glob("cpu-*.tsv")):
        for line in path.read_text("utf-8").splitlines():
            nodeid, _, spent = line.rpartition("\t")
            name = nodeid.split("::")[0].rsplit("/", 1)[-1].removesuffix(".py")
            seconds[name] += float(spent)
            tests[name] += 1
    return {name: (seconds[name], tests[name]) for name in seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("junit", type=Path, help="the file pytest --junitxml wrote")
    parser.add_argument("--workers", type=int, default=2, help="pytest -n (default 2)")
    parser.add_argument("--top", type=int, default=25, help="files to list (default 25)")
    parser.add_argument("--cpu", type=Path, default=None,
                        help="the folder DIFERIDA_SUITE_CPU named: list CPU-seconds per file")
    args = parser.parse_args()
    if args.workers < 1:
        parser.error("--workers: at least 1")
    try:
        wall, files = per_file(args.junit)
    except (OSError, ET.ParseError) as exc:
        parser.error(f"{args.junit}: not a JUnit file pytest wrote ({exc})")
    total = sum(s for s, _ in files.values())
    count = sum(n for _, n in files.values())
    if count == 0 or wall <= 0:
        parser.error(f"{args.junit}: no test with a time in it")
    print(f"{count} tests in {wall:.0f} s on {args.workers} workers: "
          f"{total:.0f} worker-seconds, busy {100 * total / (args.workers * wall):.1f} %")
    _ranked(files, "seconds", args.top)
    if args.cpu is None:
        return
    cpu = cpu_per_file(args.cpu)
    if not cpu:
        parser.error(f"{args.cpu}: no cpu-*.tsv file (run with DIFERIDA_SUITE_CPU={args.cpu})")
    spent = sum(s for s, _ in cpu.values())
    print(f"\nCPU: {spent:.0f} CPU-seconds in the tests' processes "
          f"({sum(n for _, n in cpu.values())} tests)")
    _ranked(cpu, "CPU-s", args.top)


def _ranked(files: dict[str, tuple[float, int]], unit: str, top: int) -> None:
    """The files, most `unit` first: the first `top`, then the rest together."""
    total = sum(s for s, _ in files.values()) or 1.0
    print(f"{unit:>8} {'share':>6} {'tests':>6}  file")
    ranked = sorted(files.items(), key=lambda kv: kv[1][0], reverse=True)
    for name, (seconds, n) in ranked[:top]:
        print(f"{seconds:8.1f} {100 * seconds / total:5.1f}% {n:6d}  {name}")
    rest = ranked[top:]
    if rest:
        seconds = sum(s for _, (s, _) in rest)
        print(f"{seconds:8.1f} {100 * seconds / total:5.1f}% {sum(n for _, (_, n) in rest):6d}"
              f"  the other {len(rest)} files")


if __name__ == "__main__":
    main()
