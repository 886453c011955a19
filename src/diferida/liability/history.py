"""The measurements kept, year after year: a named history file that only
grows (`--history FILE`), one JSON line per measurement, each line carrying
the SHA-256 of the line before it and its own, so that a line changed,
taken out or put in between is found when the file is read. The pension
expense and the deferred amounts of a year rest on the amounts of the
earlier years kept here (gasb73.py), and the ten years of required
supplementary information are read from it: a year not kept is shown as
not available, never computed again. docs/valuation.md "The history".
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..bounded import Refused, read_bounded
from ..errors import DiferidaError

FORMAT = "diferida-valuation-history/1"
GENESIS = "0" * 64
MAX_BYTES = 1 << 24  # some hundreds of years of measurements with many employers
# what two records of one measurement date are compared on: the figures
FIGURES = ("measurement_date", "rules", "discount", "total", "deferred", "in_pay", "members",
           "layout", "bases", "proportions", "rate_minus_1_point", "rate_plus_1_point")


class HistoryError(DiferidaError, ValueError):
    """The history file cannot be used: `key` the message (i18n
    liability_options.history_<key>), `kw` its values."""

    def __init__(self, key: str, **kw: Any):
        super().__init__(key)
        self.key, self.kw = key, kw


def digest(record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "sha256"}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read(path: Path) -> list[dict[str, Any]]:
    """The records of the history at `path`, checked: [] for a file that does
    not exist yet. Raises HistoryError for a file that is not a history, a
    line that is not a record, or a broken chain (naming the line)."""
    if not path.exists():
        return []
    try:
        data = read_bounded(path, MAX_BYTES)
    except Refused as exc:
        raise HistoryError("refused", reason=exc) from None
    records: list[dict[str, Any]] = []
    previous = GENESIS
    for n, raw in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
        if not raw.strip():
            raise HistoryError("blank", line=n)
        try:
            rec = json.loads(raw)
        except json.JSONDecodeError:
            raise HistoryError("not_json", line=n) from None
        if not isinstance(rec, dict) or rec.get("format") != FORMAT:
            raise HistoryError("not_record", line=n)
        if rec.get("previous") != previous or rec.get("sha256") != digest(rec):
            raise HistoryError("chain", line=n)
        if records and rec["measurement_date"] <= records[-1]["measurement_date"]:
            raise HistoryError("order", line=n)
        previous = rec["sha256"]
        records.append(rec)
    return records


def same_figures(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(a.get(k) == b.get(k) for k in FIGURES)


def place(records: list[dict[str, Any]], new: dict[str, Any]) -> str:
    """Whether `new` is to be appended ("append"), is there already with the
    same figures ("kept"), or cannot be (HistoryError): a measurement date
    kept with other figures, or one earlier than the last kept."""
    for r in records:
        if r["measurement_date"] == new["measurement_date"]:
            if same_figures(r, new):
                return "kept"
            raise HistoryError("other_figures", date=new["measurement_date"],
                               recorded=r.get("recorded_at", ""))
    if records and new["measurement_date"] < records[-1]["measurement_date"]:
        raise HistoryError("earlier", date=new["measurement_date"],
                           last=records[-1]["measurement_date"])
    return "append"


def sealed(records: list[dict[str, Any]], body: dict[str, Any]) -> dict[str, Any]:
    """`body` as the next record: the format, the time, the chain."""
    rec = {"format": FORMAT, **body,
           "recorded_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
           "previous": records[-1]["sha256"] if records else GENESIS}
    rec["sha256"] = digest(rec)
    return rec


def append(path: Path, record: dict[str, Any]) -> None:
    """Add one line at the end of the file (created when missing), flushed
    to the disk before returning; nothing before it is rewritten."""
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
