"""rules §1 duplicate ids: found on a hash of the id, confirmed on its text."""

from datetime import date

import polars as pl

import diferida
from diferida import validation


def _frame(ids):
    n = len(ids)
    return pl.DataFrame({
        "participant_id": ids, "birth_date": ["1970-05-10"] * n,
        "entry_date": ["1988-07-01"] * n, "separation_date": ["2010-06-30"] * n,
        "creditable_service_years": ["22"] * n, "average_compensation": ["30000"] * n,
        "group": ["general"] * n, "refund_requested": ["false"] * n,
    })


def test_each_later_row_with_an_id_already_seen_is_rejected_and_the_first_evaluated():
    result = diferida.evaluate_frame(_frame(["a", "b", "a", "c", "b", "a"]),
                                     as_of=date(2026, 11, 29))
    assert result.determinations["participant_id"].to_list() == ["a", "b", "c"]
    assert result.rejected["row"].to_list() == [2, 4, 5]
    assert set(result.rejected["code"]) == {"duplicate_id"}


def test_a_hash_collision_between_different_ids_never_rejects_a_row():
    # Two different ids given the same hash, as a collision would: only the
    # row whose text really repeats an earlier one stays rejected.
    rows = pl.DataFrame({
        validation.ROW: pl.Series([0, 1, 2], dtype=pl.UInt32),
        "participant_id": ["x", "y", "x"],
        "_pid_hash": pl.Series([7, 7, 7], dtype=pl.UInt64),
        "_ok": [True, False, False],
    }).with_columns(
        pl.Series("_err_participant_id", [None, "duplicate_id", "duplicate_id"]),
        *[pl.lit(None, dtype=pl.String).alias(f"_err_{k}")
          for k in validation.FIELD_NAMES if k != "participant_id"],
    )
    confirmed = validation._confirm_duplicates(rows)
    assert confirmed["_ok"].to_list() == [True, True, False]
    assert confirmed["_err_participant_id"].to_list() == [None, None, "duplicate_id"]
    assert "_pid_hash" not in confirmed.columns
