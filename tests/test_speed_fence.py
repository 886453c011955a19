"""Polars' unstable APIs are used only inside the speed layer
(`src/diferida/speed/`), each with a stable way taken when
`DIFERIDA_SPEED_LAYER=off` (docs/speed.md).

The fence reads the source (`ast`): every name, attribute, imported name,
keyword argument and string constant of every module outside `speed/` is
looked up in `speed.unstable.UNSTABLE`. The list itself is held to the
installed Polars: each entry is still documented unstable there, so an
upgrade that makes one stable shows, and a name is never listed by mistake."""

from __future__ import annotations

import ast
import importlib
import io
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import diferida
from diferida.speed import unstable
from diferida.speed.unstable import EXCEPTIONS, UNSTABLE

ROOT = Path(diferida.__file__).parent


def _names(source: str) -> set[str]:
    """Every name the code could reach Polars by: names, attributes, imported
    names, keyword arguments, and strings that are exactly a name
    (`getattr(lf, "collect_batches")`, `{"optimizations": ...}`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.alias):
            found.update(node.name.split("."))
        elif isinstance(node, ast.keyword) and node.arg:
            found.add(node.arg)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.add(node.value)
    return found


def _outside_the_fence(root: Path) -> dict[str, list[str]]:
    wrong: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("speed/"):
            continue
        used = sorted(n for n in _names(path.read_text(encoding="utf-8")) & UNSTABLE.keys()
                      if EXCEPTIONS.get(n, ("",))[0] != rel)
        if used:
            wrong[rel] = used
    return wrong


def test_no_unstable_polars_api_is_used_outside_the_speed_layer():
    assert _outside_the_fence(ROOT) == {}


def test_the_fence_sees_each_way_of_reaching_an_unstable_api(tmp_path):
    """The three uses that stood outside the fence, as they were written, and
    the other ways a name can be reached; the speed layer's own uses are
    inside it."""
    (tmp_path / "core.py").write_text(
        'import polars as pl\n'
        'def opts():\n'
        '    return {"engine": "in-memory", "optimizations": pl.QueryOptFlags.none()}\n')
    (tmp_path / "io.py").write_text(
        "def chunks(lf):\n    yield from lf.collect_batches(chunk_size=10)\n")
    (tmp_path / "outputs.py").write_text(
        "def sink(frames, schema, tmp):\n"
        "    from polars.io.plugins import register_io_source\n"
        "    register_io_source(frames, schema=schema).sink_parquet(tmp)\n")
    (tmp_path / "other.py").write_text(
        "import polars.io.plugins\n"
        "def f(lf):\n"
        "    getattr(lf, 'sink_batches')\n"
        "    return lf.collect(background=True)\n")
    (tmp_path / "speed").mkdir()
    (tmp_path / "speed" / "inside.py").write_text("lf.collect_batches()\n")
    assert _outside_the_fence(tmp_path) == {
        "core.py": ["QueryOptFlags", "optimizations"],
        "io.py": ["collect_batches"],
        "other.py": ["background", "sink_batches"],
        "outputs.py": ["register_io_source"],
    }
    # the named exception holds in its own module only
    (tmp_path / "money.py").write_text("import polars as pl\nEXACT = pl.Int128\n")
    (tmp_path / "article.py").write_text("import polars as pl\nx = pl.lit(1, dtype=pl.Int128)\n")
    assert "money.py" not in _outside_the_fence(tmp_path)
    assert _outside_the_fence(tmp_path)["article.py"] == ["Int128"]


_INSTANCES = {"Expr": lambda: pl.col("x"), "LazyFrame": lambda: pl.LazyFrame()}


def _resolve(path: str):
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
            break
        except ImportError:
            continue
    for part in parts[cut:]:
        # a namespace (Expr.str, Expr.meta) is a property: read it on an instance
        obj = _INSTANCES[part]() if part in _INSTANCES else getattr(obj, part)
    return obj


@pytest.mark.parametrize("name", sorted(UNSTABLE))
def test_each_listed_name_is_unstable_in_the_installed_polars(name):
    where = UNSTABLE[name]
    obj = _resolve(where)
    code = getattr(getattr(obj, "__func__", obj), "__code__", None)
    if code is not None and Path(code.co_filename).as_posix().endswith("_utils/unstable.py"):
        return  # wrapped by Polars' @unstable() (which warns when called)
    doc = obj.__doc__ or ""
    if where.rsplit(".", 1)[-1] != name:  # a parameter of `where`
        start = doc.index(f"\n        {name}\n")
        end = doc.find("\n        ", doc.find("\n", start + len(name) + 10) + 1)
        nxt = [i for i in (doc.find(f"\n        {w}\n", start + 1)
                           for w in ("engine", "background", "optimizations", "Returns"))
               if i > start]
        doc = doc[start:min(nxt) if nxt else max(end, len(doc))]
    assert ("considered **unstable**" in doc
            or "Serialization is not stable across Polars versions" in doc), where


def test_every_exception_is_a_listed_name_with_a_reason():
    for name, (module, reason) in EXCEPTIONS.items():
        assert name in UNSTABLE and (ROOT / module).is_file() and len(reason) > 40


# ---- the stable ways, taken when the switch is off ----------------------------------------

@pytest.fixture
def refuse_unstable(monkeypatch):
    """The switch off, and each unstable API the layer calls made to fail."""
    import polars.io.plugins

    def refused(*args, **kwargs):
        raise AssertionError("an unstable Polars API was called with the speed layer off")

    monkeypatch.setenv("DIFERIDA_SPEED_LAYER", "off")
    monkeypatch.setattr(pl.LazyFrame, "collect_batches", refused)
    monkeypatch.setattr(polars.io.plugins, "register_io_source", refused)
    monkeypatch.setattr(pl, "QueryOptFlags", refused)


def _frame(rows: int) -> pl.DataFrame:
    return pl.DataFrame({"n": range(rows), "t": [f"v{i % 7}" for i in range(rows)],
                         "d": pl.date_range(pl.date(2000, 1, 1), pl.date(2000, 1, 1),
                                            eager=True).extend_constant(None, rows - 1)})


def _parquet(frame: pl.DataFrame) -> bytes:
    out = io.BytesIO()
    frame.write_parquet(out)
    return out.getvalue()


@pytest.mark.parametrize("rows", [0, 1, 19_999, 20_000, 50_001])
def test_batches_are_the_same_frames_either_way(monkeypatch, rows):
    data = _parquet(_frame(max(rows, 1)).head(rows))
    got = {}
    for switch in ("on", "off"):
        monkeypatch.setenv("DIFERIDA_SPEED_LAYER", switch)
        got[switch] = list(unstable.batches(pl.scan_parquet(io.BytesIO(data)), 20_000))
    assert [f.height for f in got["on"]] == [f.height for f in got["off"]]
    for a, b in zip(got["on"], got["off"], strict=True):
        assert_frame_equal(a, b)


def test_the_stable_ways_call_no_unstable_api(refuse_unstable, tmp_path):
    frame = _frame(45_000)
    data = _parquet(frame)
    assert [f.height for f in unstable.batches(pl.scan_parquet(io.BytesIO(data)), 20_000)] == [
        20_000, 20_000, 5_000]
    assert "optimizations" not in unstable.small_collect_options()
    path = tmp_path / "out.parquet"
    unstable.sink_parquet(lambda cols: iter(frame.iter_slices(10_000)), frame.schema, path)
    assert_frame_equal(pl.read_parquet(path), frame)
    assert [p.name for p in tmp_path.iterdir()] == ["out.parquet"]  # the parts are gone


@pytest.mark.parametrize("switch", ["on", "off"])
def test_sink_parquet_writes_the_frames_and_leaves_nothing_on_an_error(monkeypatch, tmp_path,
                                                                       switch):
    monkeypatch.setenv("DIFERIDA_SPEED_LAYER", switch)
    frame = _frame(30_000)
    path = tmp_path / "out.parquet"
    unstable.sink_parquet(lambda cols: iter(frame.iter_slices(7_000)), frame.schema, path)
    assert_frame_equal(pl.read_parquet(path), frame)

    def failing(cols):
        yield frame.head(10)
        raise OSError("the disk is full")

    with pytest.raises(Exception, match="the disk is full"):
        unstable.sink_parquet(failing, frame.schema, tmp_path / "bad.parquet")
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("bad")) == [
        "out.parquet"]


def test_a_batch_run_gives_the_same_files_either_way(monkeypatch, tmp_path):
    """Parquet in, Parquet and CSV out, through the command: the switch off
    changes no byte of the CSV and no value of the Parquet."""
    from click.testing import CliRunner

    from diferida.cli import main

    from .conftest import AS_OF, participant

    rows = [participant(participant_id=f"P-{i}", creditable_service_years=str(10 + i % 20))
            for i in range(300)]
    rows[7]["birth_date"] = "not a date"
    source = tmp_path / "in.parquet"
    pl.DataFrame(rows).write_parquet(source)
    out = {}
    for switch in ("on", "off"):
        monkeypatch.setenv("DIFERIDA_SPEED_LAYER", switch)
        for kind in ("csv", "parquet"):
            target = tmp_path / f"{switch}.{kind}"
            result = CliRunner().invoke(main, [
                "batch", str(source), "-o", str(target), "--as-of", AS_OF.isoformat(),
                "--chunk-rows", "64", "--rejects", str(tmp_path / f"{switch}-{kind}-rej.csv")])
            assert result.exit_code == 0, result.output
            out[switch, kind] = target
    assert out["on", "csv"].read_bytes() == out["off", "csv"].read_bytes()
    assert_frame_equal(pl.read_parquet(out["on", "parquet"]),
                       pl.read_parquet(out["off", "parquet"]))
    assert pl.read_parquet(out["on", "parquet"]).height == 299
