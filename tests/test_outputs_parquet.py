"""The Parquet output: one file written by Polars' streaming sink from
frames given one at a time, complete only when the run is."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import polars as pl
import pytest

from diferida.batch import FileProblem
from diferida.batch.outputs import open_sink


def _frame(start: int, n: int) -> pl.DataFrame:
    return pl.DataFrame({
        "participant_id": [f"P{i}" for i in range(start, start + n)],
        "eligibility_date": [date(2030, 1, 1 + i % 28) for i in range(n)],
        "annual_amount": pl.Series([Decimal(f"{i}.05") for i in range(n)],
                                   dtype=pl.Decimal(20, 2)),
    })


def test_frames_given_one_at_a_time_make_one_file_in_their_order(tmp_path):
    out = tmp_path / "out.parquet"
    sink = open_sink(out, overwrite=False)
    frames = [_frame(0, 1000), _frame(1000, 0), _frame(1000, 7), _frame(1007, 3000)]
    for f in frames:
        sink.write(f)
    assert not out.exists()  # nothing under the output's name before the end
    sink.finish()
    back = pl.read_parquet(out)
    assert back.equals(pl.concat(frames))
    assert back.schema == frames[0].schema
    assert sink.rows == 4007


def test_a_run_with_no_rows_still_writes_a_readable_file_with_the_columns(tmp_path):
    out = tmp_path / "out.parquet"
    sink = open_sink(out, overwrite=False)
    sink.write(_frame(0, 0))
    sink.finish()
    back = pl.read_parquet(out)
    assert back.height == 0 and back.schema == _frame(0, 0).schema


def test_an_abandoned_output_leaves_no_file_and_no_thread(tmp_path):
    out = tmp_path / "out.parquet"
    sink = open_sink(out, overwrite=False)
    for i in range(5):
        sink.write(_frame(i * 100, 100))
    sink.abort()
    assert list(tmp_path.iterdir()) == []
    assert sink._thread is None


def test_a_frame_the_sink_cannot_write_is_an_error_naming_the_output(tmp_path):
    out = tmp_path / "out.parquet"
    sink = open_sink(out, overwrite=False)
    sink.write(_frame(0, 10))
    with pytest.raises(FileProblem) as err:
        # a frame of other columns than the first: the sink stops with an error,
        # raised here (on a later write) or when the file is completed
        sink.write(pl.DataFrame({"other": [1, 2]}))
        sink.write(_frame(10, 10))
        sink.complete()
    assert err.value.code == "cannot_write"
    assert str(out) in str(err.value)
    # the error stays: a later write or completing the file never passes for a whole file
    with pytest.raises(FileProblem):
        sink.write(_frame(20, 10))
    with pytest.raises(FileProblem):
        sink.complete()
    sink.abort()
    assert list(tmp_path.iterdir()) == []
