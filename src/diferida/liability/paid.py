"""The optional `paid_in_year` column of a census: what each member was
actually paid in the fiscal year that ends at the measurement date, in
dollars and cents (0 for a member paid nothing). With it the schedule of
changes shows the actual benefit payments, and the difference from the
expected ones as experience. A column that is there is read for every row:
an empty value or one that is not an amount rejects the row, named with its
row, id and value (never taken as 0). A member not yet in pay (benefit
status deferred, the status of every member of a census without the
column) was paid nothing in the year: an amount other than 0 on such a row
rejects it too, naming the field (it is not counted as a payment)."""

from __future__ import annotations

import numpy as np
import polars as pl

from ..bounded import shown
from ..fields import MONEY_DIGITS, MONEY_PLACES
from ..i18n import catalog
from ..projection.status import DEFERRED
from ..validation import text_units
from .columns import checked, text_of

PAID_COLUMN = "paid_in_year"
_AMOUNT_RE = rf"^\+?[0-9]{{1,{MONEY_DIGITS}}}(\.[0-9]{{0,2}}0*)?$"


def with_paid(frame: pl.DataFrame, kept: tuple[pl.DataFrame, ...], bad: pl.DataFrame,
              lang: str) -> tuple[tuple[pl.DataFrame, ...], pl.DataFrame]:
    """The kept tables with each member's actual payments in cents
    (`_paid_cents`); a row whose value is empty or not an amount, or an
    amount other than 0 for a deferred member, rejected."""
    h = frame.height
    m = catalog(lang)["liability_paid"]
    text = text_of(frame, PAID_COLUMN)
    empty = (text.is_null() | (text == "")).to_numpy()
    ok = text.str.contains(_AMOUNT_RE).fill_null(False).to_numpy()
    cents = pl.select(text_units(pl.lit(text.str.strip_prefix("+")), MONEY_PLACES)) \
        .to_series().fill_null(0).to_numpy() if ok.any() else np.zeros(h, dtype=np.int64)
    cents = np.where(ok, cents, 0).astype(np.int64)
    deferred = _deferred(frame, kept, bad)
    paid_deferred = ok & (cents != 0) & deferred
    pos = np.flatnonzero(empty | ~ok | paid_deferred)
    values = text.gather(pos).to_list()

    def code(p: int) -> str:
        return "paid_missing" if empty[p] else "paid_deferred" if paid_deferred[p] \
            else "paid_invalid"

    return checked(frame, kept, bad, PAID_COLUMN, pos, [code(int(p)) for p in pos],
                   [m[code(int(p)).removeprefix("paid_")].format(value=shown(v or ""))
                    for p, v in zip(pos, values, strict=True)],
                   pl.Series("_paid_cents", cents, dtype=pl.Int64))


def _deferred(frame: pl.DataFrame, kept: tuple[pl.DataFrame, ...], bad: pl.DataFrame
              ) -> np.ndarray:
    """Per row of the chunk: whether the member is known to be deferred (not
    yet in pay). The kept determinations hold the rows not rejected, in
    order, with their status (`_bstatus`) when the census has the column;
    a row already rejected is not known (False)."""
    h = frame.height
    rejected = np.zeros(h, dtype=bool)
    if bad.height:
        rejected[bad["row"].to_numpy()] = True
    out = np.zeros(h, dtype=bool)
    det = kept[0]
    out[~rejected] = det["_bstatus"].to_numpy() == DEFERRED if "_bstatus" in det.columns \
        else True
    return out


def actual_cents(members: pl.DataFrame, gone: pl.DataFrame) -> int:
    """The census's actual payments of the year: every row read (projected,
    in pay, deceased, refunded, not entitled)."""
    return int(sum(f["_paid_cents"].cast(pl.Int64).sum() or 0 for f in (members, gone)
                   if "_paid_cents" in f.columns))
