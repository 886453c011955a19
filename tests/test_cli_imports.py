"""The command line loads only what a command uses: listing the commands, or
any command's help, loads none of the web service, the store, the
spreadsheet writers, the plotting library, Polars or the rules file's schema
(pydantic: it loads the first time a rules table is read)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("polars", "numpy", "pyarrow", "fastapi", "uvicorn", "sqlalchemy", "xlsxwriter",
         "matplotlib", "pydantic", "diferida.rules_schema", "diferida.core",
         "diferida.batch.io", "diferida.batch.outputs", "diferida.projection.engine",
         "diferida.compare.engine", "diferida.service.app", "diferida.web.routes")

PROBE = """
import json, sys
sys.argv = ["diferida", *{args!r}]
from diferida.cli import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)), file=sys.stderr)
"""


def loaded(*args: str) -> list[str]:
    r = subprocess.run([sys.executable, "-c", PROBE.format(args=args, heavy=HEAVY)],
                       capture_output=True, text=True, timeout=120)
    return json.loads(r.stderr.strip().splitlines()[-1])


def test_importing_the_command_line_loads_no_heavy_library():
    r = subprocess.run([sys.executable, "-c", "import sys, diferida.cli; print(' '.join("
                        f"m for m in {HEAVY!r} if m in sys.modules))"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == []


@pytest.mark.parametrize("args", [
    ("--help",), ("evaluate", "--help"), ("examples", "--help"), ("rules", "--help"),
    ("batch", "--help"), ("project", "--help"), ("compare", "--help"), ("serve", "--help"),
    ("db", "--help"), ("users", "--help"), ("audit", "--help"),
])
def test_help_loads_no_heavy_library(args):
    assert loaded(*args) == []


def test_a_command_that_runs_loads_what_it_needs():
    ran = loaded("evaluate", "--birth-date", "1970-05-10", "--entry-date", "1988-07-01",
                 "--separation-date", "2010-06-30", "--service", "22", "--compensation",
                 "30000", "--no-refund", "--as-of", "2026-11-29")
    assert {"polars", "pydantic", "diferida.rules_schema"} <= set(ran)
