"""The package's layers (docs/architecture.md): every import runs down. No
module imports, even inside a function, a module that imports it back, and
no part of the package (a top-level module or subpackage) imports a part
that imports it back; the service never imports the web pages built on it.

Imports are read from the source (`ast`), so imports inside functions count
as much as those at the top; those under `if TYPE_CHECKING:` never run and
do not count. What every module may import is the package's root
(`diferida/__init__.py`: the version and the public names, loaded on first
use)."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

import diferida

ROOT = Path(diferida.__file__).parent


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _runnable(tree: ast.AST):
    """Every node, but those under `if TYPE_CHECKING:` (read by type checkers
    only, never run)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            todo.extend(node.orelse)
        else:
            todo.extend(ast.iter_child_nodes(node))


def _imports(name: str, path: Path) -> set[str]:
    """The package's modules that `name` imports, anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _runnable(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            for alias in node.names:  # `from pkg import module` names the module
                sub = f"{module}.{alias.name}"
                found.add(sub if sub in MODULES else module)
    return {m for m in found if m in MODULES and m not in (name, "diferida")}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _part(module: str) -> str:
    return module.split(".")[1]


def _parts_graph() -> dict[str, set[str]]:
    parts: dict[str, set[str]] = {}
    for name, targets in GRAPH.items():
        if name == "diferida":
            continue
        parts.setdefault(_part(name), set()).update(
            _part(t) for t in targets if _part(t) != _part(name))
    return parts


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    try:
        list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        return exc.args[1]
    return None


def test_the_import_reader_finds_what_the_code_imports():
    # a from-import of a module, a relative import inside a function, a package
    assert "diferida.service.workflow" in GRAPH["diferida.web.workbench.routes"]
    assert "diferida.headers" in GRAPH["diferida.service.api"]
    assert "diferida.service.store" in GRAPH["diferida.service.cli"]
    assert "diferida.web.routes" in GRAPH["diferida.server"]
    assert "diferida.letter" not in GRAPH["diferida.letter.view"]  # under TYPE_CHECKING
    # and the check below finds a circle when there is one
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) is not None
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_no_module_imports_a_module_that_imports_it_back():
    assert _cycle(GRAPH) is None


def test_no_part_of_the_package_imports_a_part_that_imports_it_back():
    assert _cycle(_parts_graph()) is None


@pytest.mark.parametrize("above", ["diferida.web", "diferida.server", "diferida.cli",
                                   "diferida._entry"])
def test_the_service_imports_nothing_built_on_it(above):
    service = {n: t for n, t in GRAPH.items() if n.startswith("diferida.service")}
    wrong = {n: sorted(t for t in ts if t == above or t.startswith(above + "."))
             for n, ts in service.items()}
    assert {n: t for n, t in wrong.items() if t} == {}


def test_the_whole_site_is_assembled_above_the_service_and_the_pages():

    from diferida.server import create_app
    from diferida.service.app import create_app as create_service
    from diferida.service.settings import Settings

    def paths(app) -> set[str]:
        return {r.path for r in app.state.route_table}

    settings = Settings(database_url="sqlite:///:memory:")
    api, site = paths(create_service(settings)), paths(create_app(settings))
    assert "/api/v1/determinations" in api and "/" not in api and "/analista" not in api
    assert api < site and {"/", "/calcular", "/analista"} <= site


def test_the_command_line_sits_above_every_part_whose_commands_it_runs():
    """`diferida` loads the other parts' commands when they are used; those
    loads are imports this reader sees (not module names in a table), so the
    command line is held above the site, the service, batch, projection,
    compare and census, and only the entry point is above it."""
    from diferida.cli import LazyGroup, _lazy_command

    homes = {_lazy_command(name).callback.__module__ for name in LazyGroup.LAZY}
    assert {"diferida.server", "diferida.service.cli", "diferida.batch.cli"} <= homes
    assert homes <= GRAPH["diferida.cli"]
    assert {n for n, targets in GRAPH.items() if "diferida.cli" in targets} == {"diferida._entry"}
