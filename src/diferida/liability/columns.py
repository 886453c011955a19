"""What the census's own columns (`employer`, `paid_in_year`) share: the
column read as stripped text, each bad value one reject line (row, id,
field, code, value, message, as every field's), and the checked values
added to the kept tables of the rows not rejected."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from ..batch.population import reject_rows


def text_of(frame: pl.DataFrame, column: str) -> pl.Series:
    raw = frame.get_column(column)
    return (raw if raw.dtype == pl.String else raw.cast(pl.String)).str.strip_chars()


def checked(frame: pl.DataFrame, kept: tuple[pl.DataFrame, ...], bad: pl.DataFrame,
            column: str, pos: np.ndarray, codes: Sequence[str], messages: Sequence[str],
            values: pl.Series) -> tuple[tuple[pl.DataFrame, ...], pl.DataFrame]:
    """`kept` with `values` (a value per row of `frame`) added to the rows
    not rejected, and the rows at `pos` rejected with their codes and
    messages, the value as read shown."""
    h = frame.height
    ids = frame.get_column("participant_id").cast(pl.String).str.strip_chars() \
        if "participant_id" in frame.columns else pl.Series([None] * h, dtype=pl.String)
    shown = text_of(frame, column).gather(pos).to_list()
    errors = pl.DataFrame({
        "row": pl.Series(pos, dtype=pl.UInt32),
        "participant_id": ids.gather(pos).replace("", None),
        "field": pl.Series([column] * len(pos), dtype=pl.String),
        "code": pl.Series(list(codes), dtype=pl.String),
        "value": pl.Series([v if v else None for v in shown], dtype=pl.String),
        "message": pl.Series(list(messages), dtype=pl.String),
    })
    rejected = np.zeros(h, dtype=bool)
    if bad.height:
        rejected[bad["row"].to_numpy()] = True
    keep = values.filter(pl.Series(~rejected))
    kept = tuple(k.with_columns(keep) for k in kept)
    return reject_rows(kept, bad, errors, h)
