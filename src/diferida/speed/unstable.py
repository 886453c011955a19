"""The Polars APIs Polars calls unstable, in one place: each one the code
uses is called here, behind `enabled()`, with a stable way to the same
result taken when `DIFERIDA_SPEED_LAYER=off`.

`UNSTABLE` lists the names (functions, methods, classes, parameters) that
Polars' documentation marks unstable ("This functionality is considered
**unstable**", the `@unstable()` decorator, or "not stable across Polars
versions"); `tests/test_speed_fence.py` fails when one of them is used in
`src/` outside this package, and holds each entry to what the installed
Polars says. A name Polars also gives to a stable API (`item`, `gather`,
`update`...) is not listed: the fence reads names, not types."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import polars as pl

from . import enabled

ParquetCompression = Literal["lz4", "uncompressed", "snappy", "gzip", "brotli", "zstd"]

# name -> where Polars marks it unstable (the object whose documentation says so)
UNSTABLE: dict[str, str] = {
    # used here, each with its stable fallback below
    "QueryOptFlags": "polars.QueryOptFlags",
    "optimizations": "polars.LazyFrame.collect",  # the parameter
    "collect_batches": "polars.LazyFrame.collect_batches",
    "register_io_source": "polars.io.plugins.register_io_source",
    # used by flatten.py (the JSON form of an expression)
    "serialize": "polars.Expr.meta.serialize",
    "deserialize": "polars.Expr.deserialize",
    # not used: listed so that a first use lands here
    "sink_batches": "polars.LazyFrame.sink_batches",
    "collect_async": "polars.LazyFrame.collect_async",
    "collect_all_async": "polars.collect_all_async",
    "background": "polars.LazyFrame.collect",  # the parameter
    "pipe_with_schema": "polars.LazyFrame.pipe_with_schema",
    "match_to_schema": "polars.LazyFrame.match_to_schema",
    "join_where": "polars.LazyFrame.join_where",
    "merge_sorted": "polars.merge_sorted",
    "explain_all": "polars.explain_all",
    "to_decimal": "polars.Expr.str.to_decimal",
    "extract_many": "polars.Expr.str.extract_many",
    "find_many": "polars.Expr.str.find_many",
    "cumulative_eval": "polars.Expr.cumulative_eval",
    "is_business_day": "polars.Expr.dt.is_business_day",
    "add_business_days": "polars.Expr.dt.add_business_days",
    "business_day_count": "polars.business_day_count",
    "linear_space": "polars.linear_space",
    "concat_arr": "polars.concat_arr",
    "dtype_of": "polars.dtype_of",
    "self_dtype": "polars.self_dtype",
    "struct_with_fields": "polars.struct_with_fields",
    "read_lines": "polars.read_lines",
    "scan_lines": "polars.scan_lines",
    "scan_pyarrow_dataset": "polars.scan_pyarrow_dataset",
    "json_normalize": "polars.json_normalize",
    "UInt128": "polars.UInt128",
    # the one named exception: money.EXACT (see EXCEPTIONS)
    "Int128": "polars.Int128",
}

# unstable names used outside this package, each in one module, with the reason
EXCEPTIONS: dict[str, tuple[str, str]] = {
    "Int128": ("money.py",
               "the exact amounts' 128-bit numerators (cents x rate x service units) are "
               "the rules' own arithmetic, not a way of running them faster: there is no "
               "second way to switch to; money.EXACT is the one place that names the type, "
               "and the engine's tests (the worked examples, the properties) hold its results"),
}


def small_collect_options() -> dict[str, Any]:
    """`collect` options for a few rows: the in-memory engine, and without the
    optimiser (the stages are explicit already; on one row, optimising costs
    more than it saves). Switched off: the in-memory engine with Polars'
    default optimisations (the same values, a little slower)."""
    if enabled():
        return {"engine": "in-memory", "optimizations": pl.QueryOptFlags.none()}
    return {"engine": "in-memory"}


def batches(lf: pl.LazyFrame, chunk_rows: int) -> Iterator[pl.DataFrame]:
    """The query's rows, `chunk_rows` at a time (the last batch shorter), in
    order. Polars' streaming batches; switched off: one slice of the query at
    a time (for a scan of Parquet, the slice is pushed down to the file's row
    groups), the same frames."""
    if enabled():
        # an iterator left unfinished is dropped with the generator, which ends its query
        yield from lf.collect_batches(chunk_size=chunk_rows)
        return
    offset = 0
    while True:
        frame = lf.slice(offset, chunk_rows).collect()
        if frame.height:
            yield frame
        if frame.height < chunk_rows:
            return
        offset += frame.height


def sink_parquet(frames: Callable[[list[str] | None], Iterator[pl.DataFrame]],
                 schema: pl.Schema, path: Path, *,
                 compression: ParquetCompression = "snappy") -> None:
    """Write the frames `frames(columns)` yields (every column when None) to
    one Parquet file, as they come: Polars' streaming sink reading them
    through an IO source. Switched off: each frame is written to a part file
    (Arrow IPC, in a folder beside `path`, removed at the end whatever
    happens) and the parts are then written to `path` by Polars' sink. The
    same rows and types; memory stays one frame, the disk holds the parts
    until the end."""
    if enabled():
        from polars.io.plugins import register_io_source

        register_io_source(lambda columns, *_: frames(columns), schema=schema).sink_parquet(
            path, compression=compression)
        return
    parts = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        files = []
        for i, frame in enumerate(frames(None)):
            files.append(parts / f"{i:09d}.arrow")
            frame.write_ipc(files[-1], compression="uncompressed")
        lf = pl.scan_ipc(files) if files else pl.LazyFrame(schema=schema)
        lf.sink_parquet(path, compression=compression)
    finally:
        shutil.rmtree(parts, ignore_errors=True)
