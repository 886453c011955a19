"""A whole-process yardstick for `diferida batch`: the same rules, written
directly in numpy (`numpy_baseline.determine`), from a member file to a
determinations file, in one thread, with exact cents.

    .venv/bin/python bench/kernel.py IN.parquet|IN.csv OUT.parquet|OUT.csv --as-of 2026-11-29

It reads the file with PyArrow (one thread), takes the SPEC §1 fields as
typed arrays (dates as days, service in 1/10,000 years, compensation in
cents), decides every row and writes one row per member: the id, the
status, the route, the eligibility and start dates, the annual and monthly
amounts (exact, two decimals). What it leaves out, and `diferida batch`
does not: validation of every field with a message per bad one (the kernel
assumes a clean file: a value it cannot read stops it), duplicate ids, the
reasons and warnings as text, the carried columns, both-or-none outputs,
progress. It is the floor the machine allows, not a competitor.
"""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy_baseline as nb  # noqa: E402

from diferida.fields import SERVICE_UNITS  # noqa: E402
from diferida.rules import load_rules  # noqa: E402

DATES = ("birth_date", "entry_date", "separation_date", "requested_start_date")
STATUS = np.array(["eligible", "not_yet_eligible", "not_entitled"], dtype=object)


def read(path: Path) -> pa.Table:
    if path.suffix == ".parquet":
        # ParquetFile reads without loading the dataset layer (0.3 s of imports)
        return pq.ParquetFile(path).read(use_threads=False)
    types = {**dict.fromkeys(DATES, pa.date32()),
             "creditable_service_years": pa.decimal128(10, 4),
             "average_compensation": pa.decimal128(14, 2),
             "refund_requested": pa.bool_(), "deferred_right_1960": pa.bool_(),
             "participant_id": pa.string(), "group": pa.string()}
    return pcsv.read_csv(path, read_options=pcsv.ReadOptions(use_threads=False),
                         convert_options=pcsv.ConvertOptions(column_types=types))


def arrays(t: pa.Table, as_of: date) -> dict[str, np.ndarray]:
    def days(c: str) -> np.ndarray:
        col = pc.cast(t[c], pa.int32()).to_numpy(zero_copy_only=False)
        return np.where(np.isnan(col), nb.NONE, col).astype(np.int64) \
            if col.dtype.kind == "f" else col.astype(np.int64)

    def scaled(c: str, factor: int) -> np.ndarray:
        return pc.cast(pc.multiply(t[c], pa.scalar(factor)), pa.int64()).to_numpy()

    # codes by PyArrow (text to a numpy object array would load pandas: 0.3 s)
    codes = pc.fill_null(pc.index_in(t["group"], value_set=pa.array(
        ["general", "police", "firefighter"])), -1).to_numpy().astype(np.int8)
    n = t.num_rows
    return {
        "birth": days("birth_date"), "entry": days("entry_date"),
        "sep": days("separation_date"), "req": days("requested_start_date"),
        "as_of": np.full(n, (as_of - nb.EPOCH).days, dtype=np.int64),
        "units": scaled("creditable_service_years", SERVICE_UNITS),
        "cents": scaled("average_compensation", 100),
        "group": codes,
        "refund": pc.fill_null(t["refund_requested"], False).to_numpy(zero_copy_only=False),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("input", type=Path)
    p.add_argument("output", type=Path)
    p.add_argument("--as-of", default="2026-11-29")
    a = p.parse_args()
    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)
    rules = load_rules()
    t = read(a.input)
    arr = arrays(t, date.fromisoformat(a.as_of))
    # the 19.6 right, derived as the engine does: entry on or before the cut-off
    cutoff = (rules.deferred_right_cutoff - nb.EPOCH).days
    declared = t["deferred_right_1960"]
    derived = arr["entry"] <= cutoff
    arr["right1960"] = np.where(pc.is_null(declared).to_numpy(zero_copy_only=False), derived,
                                pc.fill_null(declared, False).to_numpy(zero_copy_only=False))
    out = nb.determine(arr, rules)
    ids = [r.id for r in rules.routes]

    def dates(v: np.ndarray) -> pa.Array:
        big = np.iinfo(np.int64).max
        mask = (v == nb.NONE) | (v == big)
        return pa.array(np.where(mask, 0, v).astype(np.int32), type=pa.int32(),
                        mask=mask).cast(pa.date32())

    def money(cents: np.ndarray) -> pa.Array:
        """Exact dollars and cents from integer cents (null where none)."""
        # a decimal128 is its unscaled integer in 16 bytes: cents, scale 2
        words = np.zeros((cents.size, 2), dtype=np.int64)
        words[:, 0] = np.where(cents < 0, 0, cents)
        valid = pa.array(cents >= 0).buffers()[1]
        return pa.Array.from_buffers(pa.decimal128(14, 2), cents.size,
                                     [valid, pa.py_buffer(words.tobytes())])

    def words(codes: np.ndarray, names: list[str]) -> pa.Array:
        """Codes (-1: none) as text, by a take from the list of names."""
        idx = pa.array(codes.astype(np.int32), mask=codes < 0)
        return pa.array(names, type=pa.string()).take(idx)

    result = pa.table({
        "participant_id": t["participant_id"],
        "status": words(out["status"], list(STATUS)),
        "route": words(out["route"], ids),
        "eligibility_date": dates(out["eligibility"]),
        "start_date": dates(out["start"]),
        "annual_amount": money(out["annual_cents"]),
        "monthly_amount": money(out["monthly_cents"]),
        "minimum_applied": pa.array(out["minimum_applied"]),
    })
    if a.output.suffix == ".parquet":
        pq.write_table(result, a.output)
    else:
        pcsv.write_csv(result, a.output)


if __name__ == "__main__":
    main()
