"""The optional `employer` column of a census (a code: the agency or
municipality that pays the member's pension as it falls due), checked like
every field: an empty value, or one longer than MAX_CODE characters,
rejects the row, named with its row, id and value; and the optional names
file (`--employer-names`, a CSV `employer,name`), checked line by line."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import polars as pl

from ..bounded import Refused, read_bounded, shown
from ..errors import DiferidaError
from ..i18n import catalog
from .columns import checked, text_of

EMPLOYER_COLUMN = "employer"
MAX_CODE = 40
MAX_NAMES_BYTES = 1 << 20


class NamesError(DiferidaError, ValueError):
    """An employer names file that cannot be used (the message names the line)."""


def with_employer(frame: pl.DataFrame, kept: tuple[pl.DataFrame, ...], bad: pl.DataFrame,
                  lang: str) -> tuple[tuple[pl.DataFrame, ...], pl.DataFrame]:
    """The kept tables with each member's employer code (`employer`); a row
    whose code is empty or too long rejected, one reject line each."""
    m = catalog(lang)["liability_employer"]
    text = text_of(frame, EMPLOYER_COLUMN)
    empty = (text.is_null() | (text == "")).to_numpy()
    long = (text.str.len_chars() > MAX_CODE).fill_null(False).to_numpy()
    pos = np.flatnonzero(empty | long)
    values = text.gather(pos).to_list()
    return checked(frame, kept, bad, EMPLOYER_COLUMN, pos,
                   ["employer_missing" if empty[p] else "employer_too_long" for p in pos],
                   [m["missing"] if empty[p] else
                    m["too_long"].format(n=len(v or ""), max=MAX_CODE)
                    for p, v in zip(pos, values, strict=True)],
                   text.alias(EMPLOYER_COLUMN))


def load_names(path: str | Path, lang: str) -> dict[str, str]:
    """employer code -> name, from a CSV `employer,name` (a code twice, an
    empty code or name, a line that is not two values: refused, named)."""
    m = catalog(lang)["liability_employer"]
    name = str(path)

    def fail(line: int | None, key: str, **kw) -> NamesError:
        where = m["where_line"].format(file=name, line=line) if line else name
        return NamesError(f"--employer-names {where}: {m[key].format(**kw)}")

    try:
        data = read_bounded(path, MAX_NAMES_BYTES)
    except Refused as exc:
        if exc.reason == "too_big":
            raise fail(None, "too_big", bytes=f"{MAX_NAMES_BYTES:,}") from None
        raise NamesError(f"--employer-names {shown(name, 200)}: {exc.text(lang)}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise fail(None, "not_utf8") from None
    rows = list(csv.reader(text.splitlines()))
    if not rows or [c.strip().lower() for c in rows[0]] != ["employer", "name"]:
        raise fail(1, "header")
    out: dict[str, str] = {}
    for n, row in enumerate(rows[1:], start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != 2 or not row[0].strip() or not row[1].strip():
            raise fail(n, "line")
        code = row[0].strip()
        if code in out:
            raise fail(n, "twice", code=code)
        out[code] = row[1].strip()
    return out
