"""No function in src/ is longer than MAX_LINES (its signature and
docstring included): a runner reads as a short sequence of named steps.
The few longer ones are named here and in CONTRIBUTING.md ("Short
functions") with why — those kept long on purpose, and those not yet split,
which may only leave the list: a function that grows past the limit, or one
listed that no longer needs to be, fails here by its name."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "diferida"
CONTRIBUTING = SRC.parent.parent / "CONTRIBUTING.md"
MAX_LINES = 80

# long on purpose
KEPT = {
    "service/store/migrations/versions/0003_workbench.py:upgrade":
        "a shipped migration is never edited",
    "article19.py:_determine_stages": "the article's routes in its order, one stage each",
    "validation.py:_build_stages": "the fields' checks in the order of the form, one stage each",
    "projection/engine.py:project": "the numpy kernel: one loop over the fiscal years, its "
                                    "arrays local (docs/speed.md)",
}
# not yet split (issue: short runners): may only leave this list
NOT_YET: set[str] = set()


def long_functions() -> dict[str, int]:
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_LINES:
                    out[f"{path.relative_to(SRC).as_posix()}:{node.name}"] = lines
    return out


def test_no_function_is_longer_than_the_limit_but_those_named():
    found = long_functions()
    unnamed = {k: v for k, v in found.items() if k not in KEPT and k not in NOT_YET}
    assert unnamed == {}, f"longer than {MAX_LINES} lines: split into named steps"
    gone = sorted(k for k in (*KEPT, *NOT_YET) if k not in found)
    assert gone == [], f"no longer over {MAX_LINES} lines: take them off the list"


def test_the_functions_kept_long_are_named_in_contributing_with_why():
    text = " ".join(CONTRIBUTING.read_text("utf-8").split())
    for name in KEPT:
        assert f"`{name}`" in text, name
    assert f"{len(NOT_YET)} not yet split" in text
