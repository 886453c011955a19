"""The optional `sex` column of a member file, validated like the rules §1
fields: its text stripped of surrounding spaces, then `F` or `M`; empty
means unknown (the two sexes' survival is then blended). Any other value
rejects the row, one reject line naming the row, the id, the field, the
value and why, exactly as a bad field of the determination does. The
Article 19 determination itself never reads this column."""

from __future__ import annotations

import numpy as np
import polars as pl

from ..i18n import LANGS, catalog
from .engine import FEMALE, MALE, UNKNOWN

SEX_COLUMN = "sex"
CODE = "unknown_sex"
MESSAGES = {lang: catalog(lang)["project_sex"]["invalid"] for lang in LANGS}  # i18n/<lang>/cli.toml


def check_sex(frame: pl.DataFrame, lang: str) -> tuple[np.ndarray, pl.DataFrame]:
    """(code per row: 0 F, 1 M, -1 unknown; one error row per bad value, with
    `row` the 0-based position in `frame`)."""
    raw = frame.get_column(SEX_COLUMN)
    text = raw.cast(pl.String).str.strip_chars() if raw.dtype != pl.String \
        else raw.str.strip_chars()
    blank = text.is_null() | (text == "")
    codes = np.full(frame.height, UNKNOWN, dtype=np.int8)
    codes[(text == "F").fill_null(False).to_numpy()] = FEMALE
    codes[(text == "M").fill_null(False).to_numpy()] = MALE
    bad = ~blank & ~text.is_in(["F", "M"])
    pos = np.flatnonzero(bad.to_numpy())
    ids = frame.get_column("participant_id").cast(pl.String).str.strip_chars() \
        if "participant_id" in frame.columns else pl.Series([None] * frame.height,
                                                            dtype=pl.String)
    values = text.gather(pos)
    template = MESSAGES.get(lang, MESSAGES["en"])
    errors = pl.DataFrame({
        "row": pl.Series(pos, dtype=pl.UInt32),
        "participant_id": ids.gather(pos).replace("", None),
        "field": pl.Series([SEX_COLUMN] * len(pos), dtype=pl.String),
        "code": pl.Series([CODE] * len(pos), dtype=pl.String),
        "value": values,
        "message": pl.Series([template.format(value=v) for v in values.to_list()],
                             dtype=pl.String),
    })
    return codes, errors
