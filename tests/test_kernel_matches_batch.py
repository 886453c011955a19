"""bench/kernel.py, the numpy yardstick the batch's speed is measured
against, writes what `diferida batch` writes: the same file, cell for cell,
on a generated population of every kind of member (both regimes, every
group, the not covered, refunds, 1960 rights, starts asked before and after
the determination's date, early and late)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

ROOT = Path(__file__).resolve().parents[1]
AS_OF = "2026-11-29"


@pytest.mark.slow
def test_the_kernel_writes_what_the_batch_writes(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from generate import population, typed
    finally:
        sys.path.remove(str(ROOT / "bench"))
    members = tmp_path / "members.parquet"
    typed(population(20_000, seed=7)).write_parquet(members)
    kernel, batch = tmp_path / "kernel.parquet", tmp_path / "batch.parquet"
    subprocess.run([sys.executable, str(ROOT / "bench" / "kernel.py"), str(members),
                    str(kernel), "--as-of", AS_OF], check=True)
    r = subprocess.run([sys.executable, "-m", "diferida.cli", "batch", str(members), "-o",
                        str(batch), "--as-of", AS_OF, "--quiet"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    a, b = pl.read_parquet(kernel), pl.read_parquet(batch)
    assert a.columns == b.columns and a.schema == b.schema
    warned = b.filter(pl.col("warnings").str.contains("start_before_determination")).height
    assert warned > 0  # the case the kernel once left out is in the population
    differ = a.with_row_index().join(b.with_row_index(), on="index", suffix="_batch")
    for c in a.columns:
        bad = differ.filter(pl.col(c).ne_missing(pl.col(f"{c}_batch"))).height
        assert bad == 0, f"{c}: {bad} rows differ"
