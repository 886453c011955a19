"""The optional benefit columns of a member file, checked like the rules §1
fields (never read by the Article 19 determination):

* `benefit_status`: `deferred` (the default when the column is absent),
  `in_pay`, `deceased` or `refunded`; an empty value or any other word
  rejects the row (a column that is there is read, never defaulted);
* `monthly_in_pay`: the monthly amount being paid, in dollars and cents
  (more than 0, at most two decimals), required for `in_pay` and refused
  for any other status;
* `in_pay_since`: the date payments began (YYYY-MM-DD, on or after the
  birth date, on or before the as-of date), likewise.

Each bad value is one reject line naming the row, the id, the field, the
value and why, exactly as a bad field of the determination is."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import cast

import numpy as np
import polars as pl

from ..fields import MONEY_DIGITS, MONEY_PLACES
from ..i18n import LANGS, catalog
from ..validation import text_units

STATUS_COLUMN = "benefit_status"
AMOUNT_COLUMN = "monthly_in_pay"
SINCE_COLUMN = "in_pay_since"
COLUMNS = (STATUS_COLUMN, AMOUNT_COLUMN, SINCE_COLUMN)
STATUSES = ("deferred", "in_pay", "deceased", "refunded")
DEFERRED, IN_PAY, DECEASED, REFUNDED = range(4)
_AMOUNT_RE = rf"^\+?[0-9]{{1,{MONEY_DIGITS}}}(\.[0-9]{{0,2}}0*)?$"
_DATE_RE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
DATE_CELL = r"^\s*([0-9]{4}-[0-9]{2}-[0-9]{2}) 00:00:00\s*$"
MESSAGES = {lang: catalog(lang)["valuation_status"] for lang in LANGS}  # i18n/<lang>/valuation.toml


@dataclass
class StatusColumns:
    """Per row of a chunk: the status code, the amount in pay in cents (0
    where not in pay) and the day number payments began (0 where not)."""

    code: np.ndarray
    cents: np.ndarray
    since: np.ndarray


def _text(frame: pl.DataFrame, name: str) -> pl.Series:
    if name not in frame.columns:
        return pl.Series(name, [None] * frame.height, dtype=pl.String)
    raw = frame.get_column(name)
    if isinstance(raw.dtype, pl.Datetime):
        # a spreadsheet date arrives as midnight; any other time is not a date
        text = pl.select(pl.when(raw.dt.time() == pl.time(0, 0, 0)).then(
            raw.dt.date().cast(pl.String)).otherwise(raw.cast(pl.String))).to_series()
    elif raw.dtype == pl.String:
        # a date cell of a workbook arrives from its reader as text at
        # midnight ("2015-07-01 00:00:00"), as the determination's dates do
        # (batch/io.py reads those); any other time is not a date
        text = raw.str.replace(DATE_CELL, "${1}") if name == SINCE_COLUMN else raw
    else:
        text = raw.cast(pl.String)
    return text.str.strip_chars().replace("", None)


def _cents(amount: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """Which amounts are written as money, and each in cents (0 where not)."""
    ok = amount.str.contains(_AMOUNT_RE).fill_null(False).to_numpy()
    cents = np.zeros(amount.len(), dtype=np.int64)
    if ok.any():
        parsed = pl.select(text_units(pl.lit(amount.str.strip_prefix("+")), MONEY_PLACES)
                           ).to_series()
        cents = np.where(ok, parsed.fill_null(-1).to_numpy(), 0)
    return ok, cents


def check_status(frame: pl.DataFrame, birth: pl.Series | None, as_of: date, lang: str
                 ) -> tuple[StatusColumns, pl.DataFrame]:
    """(the columns as read, one error row per bad value with `row` the
    0-based position in `frame`). `birth`: the rows' birth dates as read
    (null where unreadable: that field's own error says so)."""
    h = frame.height
    m = MESSAGES.get(lang, MESSAGES["en"])
    status = _text(frame, STATUS_COLUMN) if STATUS_COLUMN in frame.columns else \
        pl.Series(STATUS_COLUMN, ["deferred"] * h, dtype=pl.String)
    amount = _text(frame, AMOUNT_COLUMN)
    since = _text(frame, SINCE_COLUMN)
    code = np.full(h, -1, dtype=np.int8)
    for i, word in enumerate(STATUSES):
        code[(status == word).fill_null(False).to_numpy()] = i
    in_pay = code == IN_PAY
    amount_given = amount.is_not_null().to_numpy()
    since_given = since.is_not_null().to_numpy()

    amount_ok, cents = _cents(amount)
    dates = pl.select(pl.when(since.str.contains(_DATE_RE)).then(
        since.str.to_date("%Y-%m-%d", strict=False))).to_series()
    since_day = dates.cast(pl.Int32).fill_null(0).to_numpy().astype(np.int64)
    date_ok = dates.is_not_null().to_numpy()
    as_of_day = (as_of - date(1970, 1, 1)).days
    birth_day = birth.cast(pl.Int32).to_numpy() if birth is not None else None

    # row, field, code, value, message
    errors: list[tuple[int | np.integer, str, str, str | None, str]] = []
    status_list, amount_list, since_list = status.to_list(), amount.to_list(), since.to_list()
    for r in np.flatnonzero(code < 0):
        v = status_list[r]
        key = "status_missing" if v is None else "status_unknown"
        errors.append((r, STATUS_COLUMN, key, v, m[key].format(value=v)))
    for r in np.flatnonzero(in_pay & ~amount_given):
        errors.append((r, AMOUNT_COLUMN, "amount_missing", None, m["amount_missing"]))
    for r in np.flatnonzero(in_pay & amount_given & (~amount_ok | (cents <= 0))):
        v = amount_list[r]
        key = "amount_not_positive" if amount_ok[r] else "amount_invalid"
        errors.append((r, AMOUNT_COLUMN, key, v, m[key].format(value=v)))
    for r in np.flatnonzero(in_pay & ~since_given):
        errors.append((r, SINCE_COLUMN, "since_missing", None, m["since_missing"]))
    bad_date = in_pay & since_given & ~date_ok
    for r in np.flatnonzero(bad_date):
        v = since_list[r]
        errors.append((r, SINCE_COLUMN, "since_invalid", v, m["since_invalid"].format(value=v)))
    late = in_pay & date_ok & (since_day > as_of_day)
    for r in np.flatnonzero(late):
        v = since_list[r]
        errors.append((r, SINCE_COLUMN, "since_after_as_of", v,
                       m["since_after_as_of"].format(value=v, as_of=as_of.isoformat())))
    if birth is not None and birth_day is not None:  # the one is there with the other
        bn = birth.is_not_null().to_numpy()
        early = in_pay & date_ok & bn & (since_day < np.where(bn, birth_day, 0))
        for r in np.flatnonzero(early):
            v = since_list[r]
            errors.append((r, SINCE_COLUMN, "since_before_birth", v,
                           m["since_before_birth"].format(value=v)))
    other = (code >= 0) & ~in_pay
    for col, given, values in ((AMOUNT_COLUMN, amount_given, amount_list),
                               (SINCE_COLUMN, since_given, since_list)):
        for r in np.flatnonzero(other & given):
            v = values[r]
            errors.append((r, col, "not_in_pay", v,
                           m["not_in_pay"].format(field=col, value=v,
                                                  status=STATUSES[code[r]])))
    return StatusColumns(code, np.where(in_pay, cents, 0), np.where(in_pay, since_day, 0)), \
        _error_table(frame, errors)


def _error_table(frame: pl.DataFrame,
                 errors: list[tuple[int | np.integer, str, str, str | None, str]]
                 ) -> pl.DataFrame:
    """The errors as rows (row, participant_id, field, code, value,
    message), in the order of the rows."""
    errors.sort(key=lambda e: e[0])
    ids = frame.get_column("participant_id").cast(pl.String).str.strip_chars() \
        if "participant_id" in frame.columns else pl.Series([None] * frame.height,
                                                           dtype=pl.String)
    pos = [e[0] for e in errors]
    return pl.DataFrame({
        "row": pl.Series(pos, dtype=pl.UInt32),
        # numpy's integers among them, which Polars takes as ints
        "participant_id": ids.gather(cast(list[int], pos)).replace("", None) if pos else
        pl.Series([], dtype=pl.String),
        "field": pl.Series([e[1] for e in errors], dtype=pl.String),
        "code": pl.Series([e[2] for e in errors], dtype=pl.String),
        "value": pl.Series([e[3] for e in errors], dtype=pl.String),
        "message": pl.Series([e[4] for e in errors], dtype=pl.String),
    })
