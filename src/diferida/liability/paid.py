"""The optional `paid_in_year` column of a census: what each member was
actually paid in the fiscal year that ends at the measurement date, in
dollars and cents (0 for a member paid nothing). With it the schedule of
changes shows the actual benefit payments, and the difference from the
expected ones as experience. A column that is there is read for every row:
an empty value or one that is not an amount rejects the row, named with its
row, id and value (never taken as 0)."""

from __future__ import annotations

import numpy as np
import polars as pl

from ..batch.population import reject_rows
from ..fields import MONEY_DIGITS, MONEY_PLACES
from ..i18n import catalog
from ..validation import text_units

PAID_COLUMN = "paid_in_year"
_AMOUNT_RE = rf"^\+?[0-9]{{1,{MONEY_DIGITS}}}(\.[0-9]{{0,2}}0*)?$"


def with_paid(frame: pl.DataFrame, kept: tuple[pl.DataFrame, ...], bad: pl.DataFrame,
              lang: str) -> tuple[tuple[pl.DataFrame, ...], pl.DataFrame]:
    """The kept tables with each member's actual payments in cents
    (`_paid_cents`); a row whose value is empty or not an amount rejected."""
    h = frame.height
    m = catalog(lang)["liability_paid"]
    raw = frame.get_column(PAID_COLUMN)
    text = (raw if raw.dtype == pl.String else raw.cast(pl.String)).str.strip_chars()
    empty = (text.is_null() | (text == "")).to_numpy()
    ok = text.str.contains(_AMOUNT_RE).fill_null(False).to_numpy()
    cents = pl.select(text_units(pl.lit(text.str.strip_prefix("+")), MONEY_PLACES)) \
        .to_series().fill_null(0).to_numpy() if ok.any() else np.zeros(h, dtype=np.int64)
    cents = np.where(ok, cents, 0).astype(np.int64)
    pos = np.flatnonzero(empty | ~ok)
    ids = frame.get_column("participant_id").cast(pl.String).str.strip_chars() \
        if "participant_id" in frame.columns else pl.Series([None] * h, dtype=pl.String)
    values = text.gather(pos).to_list()
    errors = pl.DataFrame({
        "row": pl.Series(pos, dtype=pl.UInt32),
        "participant_id": ids.gather(pos).replace("", None),
        "field": pl.Series([PAID_COLUMN] * len(pos), dtype=pl.String),
        "code": pl.Series(["paid_missing" if empty[p] else "paid_invalid" for p in pos],
                          dtype=pl.String),
        "value": pl.Series([v if v else None for v in values], dtype=pl.String),
        "message": pl.Series([m["missing"] if empty[p] else m["invalid"].format(value=v)
                              for p, v in zip(pos, values, strict=True)], dtype=pl.String),
    })
    rejected = np.zeros(h, dtype=bool)
    if bad.height:
        rejected[bad["row"].to_numpy()] = True
    column = pl.Series("_paid_cents", cents[~rejected], dtype=pl.Int64)
    kept = tuple(k.with_columns(column) for k in kept)
    return reject_rows(kept, bad, errors, h)


def actual_cents(members: pl.DataFrame, gone: pl.DataFrame) -> int:
    """The census's actual payments of the year: every row read (projected,
    in pay, deceased, refunded, not entitled)."""
    return int(sum(f["_paid_cents"].cast(pl.Int64).sum() or 0 for f in (members, gone)
                   if "_paid_cents" in f.columns))
