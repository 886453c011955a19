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

from ..fields import MONEY_DIGITS, MONEY_PLACES
from ..i18n import catalog
from ..validation import text_units
from .columns import checked, text_of

PAID_COLUMN = "paid_in_year"
_AMOUNT_RE = rf"^\+?[0-9]{{1,{MONEY_DIGITS}}}(\.[0-9]{{0,2}}0*)?$"


def with_paid(frame: pl.DataFrame, kept: tuple[pl.DataFrame, ...], bad: pl.DataFrame,
              lang: str) -> tuple[tuple[pl.DataFrame, ...], pl.DataFrame]:
    """The kept tables with each member's actual payments in cents
    (`_paid_cents`); a row whose value is empty or not an amount rejected."""
    h = frame.height
    m = catalog(lang)["liability_paid"]
    text = text_of(frame, PAID_COLUMN)
    empty = (text.is_null() | (text == "")).to_numpy()
    ok = text.str.contains(_AMOUNT_RE).fill_null(False).to_numpy()
    cents = pl.select(text_units(pl.lit(text.str.strip_prefix("+")), MONEY_PLACES)) \
        .to_series().fill_null(0).to_numpy() if ok.any() else np.zeros(h, dtype=np.int64)
    cents = np.where(ok, cents, 0).astype(np.int64)
    pos = np.flatnonzero(empty | ~ok)
    values = text.gather(pos).to_list()
    return checked(frame, kept, bad, PAID_COLUMN, pos,
                   ["paid_missing" if empty[p] else "paid_invalid" for p in pos],
                   [m["missing"] if empty[p] else m["invalid"].format(value=v)
                    for p, v in zip(pos, values, strict=True)],
                   pl.Series("_paid_cents", cents, dtype=pl.Int64))


def actual_cents(members: pl.DataFrame, gone: pl.DataFrame) -> int:
    """The census's actual payments of the year: every row read (projected,
    in pay, deceased, refunded, not entitled)."""
    return int(sum(f["_paid_cents"].cast(pl.Int64).sum() or 0 for f in (members, gone)
                   if "_paid_cents" in f.columns))
