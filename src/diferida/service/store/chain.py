"""The hash chains that make the store tamper-evident.

Every row of `cases`, `audit_events` and `users` (and, from migration 0003,
`user_passwords`, `case_applications` and `workflow_events`; from 0005,
`user_profiles`) carries `row_hash`, the
SHA-256 of the canonical JSON of the row's content together with the hash of
the row before it in the same table (`prev_hash`; the first row follows
`GENESIS`). Rows are chained in id order; writers take the chain's head row
(`chain_heads`) in their transaction first, so the chain stays linear when
many write at once. A row changed, removed or inserted after the fact breaks
the chain at that row, and `verify` names the first broken link of each chain.

The content of a row is every column except the two hashes, with two
exceptions: a user's `disabled_at` is left out (disabling a user is the one
change the store allows, and the database allows only that), and a case's
content includes the SHA-256 of the stored rules content it was decided with,
so the rules a case is reproduced with are covered by its hash too. A column
added to a chained table later (`ADDED`) is part of the content only when it
holds a value: the rows stored before it keep their hash.

This module is used by a migration: the hash of a row must never change
meaning. A new content layout is a new `CHAIN_FORMAT`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from ...errors import DiferidaError

CHAIN_FORMAT = 1
GENESIS = "0" * 64

# The columns each chain covers, in addition to `id`.
CHAINS: dict[str, tuple[str, ...]] = {
    "cases": ("participant_id", "version", "supersedes", "inputs", "result", "rules_version",
              "as_of", "lang", "status", "author_id", "note", "created_at"),
    "audit_events": ("at", "user_id", "user_name", "role", "action", "case_id",
                     "participant_id", "method", "path", "status_code", "detail"),
    "users": ("name", "role", "token_hash", "created_at"),
    # migration 0003: the workbench
    "user_passwords": ("user_id", "password_hash", "created_at"),
    "case_applications": ("case_id", "name", "address", "application_date", "note",
                          "created_at"),
    "workflow_events": ("at", "number", "case_id", "version", "action", "user_id", "user_name",
                        "role", "reason", "corrects", "letter_sha256"),
    # migration 0005: the names and titles letters are signed with
    "user_profiles": ("user_id", "full_name", "title", "created_at"),
}

# Columns a later migration added to a chained table (0006: the language of
# the addressee's letter): in a row's content only when they hold a value, so
# the rows stored before the column existed (NULL there) keep their hash.
ADDED: dict[str, tuple[str, ...]] = {
    "case_applications": ("letter_lang",),
}


def _plain(value: Any) -> Any:
    """One JSON form per value, whatever the database driver returned."""
    if isinstance(value, datetime):
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return value.isoformat(timespec="microseconds")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bool):
        return int(value)
    if value is None or isinstance(value, (str, int)):
        return value
    raise TypeError(f"no canonical form for {type(value).__name__}")


def content_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def row_hash(chain: str, prev_hash: str, row: Mapping[str, Any],
             rules_sha256: str | None = None) -> str:
    """The hash of one row: canonical JSON (sorted keys, ASCII, no spaces) of
    the chain's name and format, the previous hash and the row's content."""
    content = {"id": int(row["id"]), **{c: _plain(row[c]) for c in CHAINS[chain]}}
    for c in ADDED.get(chain, ()):
        if row.get(c) is not None:
            content[c] = _plain(row[c])
    if chain == "cases":
        if rules_sha256 is None:
            raise ValueError("a case's hash needs the SHA-256 of its rules content")
        content["rules_content_sha256"] = rules_sha256
    doc = {"chain": chain, "format": CHAIN_FORMAT, "prev": prev_hash, "row": content}
    text = json.dumps(doc, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


class UnreadableRow(DiferidaError):
    """A row of a chain that the database driver cannot turn into values (a
    date that is no date, say): written around the application."""

    def __init__(self, row_id: int | None, reason: str):
        super().__init__(reason)
        self.row_id, self.reason = row_id, reason


@dataclass
class ChainReport:
    chain: str
    rows: int = 0
    last_id: int | None = None
    last_hash: str = GENESIS
    broken: str | None = None  # the first broken link, in words
    broken_id: int | None = None

    @property
    def intact(self) -> bool:
        return self.broken is None

    def summary(self) -> str:
        if self.broken:
            return f"{self.chain}: BROKEN at {self.broken}"
        if self.last_id is None:
            return f"{self.chain}: 0 rows, chain intact"
        return (f"{self.chain}: {self.rows} rows, chain intact; "
                f"anchor {self.chain}:{self.last_id}:{self.last_hash}")


@dataclass
class VerifyReport:
    chains: list[ChainReport] = field(default_factory=list)
    rules_checked: int = 0
    # what is wrong outside the chains: rules content, re-enabled users
    findings: list[str] = field(default_factory=list)
    # the protecting triggers (see .triggers): absent or never firing, not as
    # the migrations define them (or the function they run), and others found
    # on the store's tables
    missing_triggers: list[str] = field(default_factory=list)
    changed_triggers: list[str] = field(default_factory=list)
    unexpected_triggers: list[str] = field(default_factory=list)

    @property
    def intact(self) -> bool:
        return (all(c.intact for c in self.chains) and not self.findings
                and not self.missing_triggers and not self.changed_triggers
                and not self.unexpected_triggers)

    def lines(self) -> list[str]:
        out = [c.summary() for c in self.chains]
        out.append(f"rules_versions: {self.rules_checked} rows checked against their "
                   f"version's digest")
        out += [f"BROKEN at {f}" for f in self.findings]
        if self.missing_triggers:
            out.append("triggers MISSING or disabled (the database no longer refuses changes): "
                       + ", ".join(self.missing_triggers))
        out += [f"trigger CHANGED (the database may no longer refuse changes): {c}"
                for c in self.changed_triggers]
        out += [f"trigger NOT CREATED by the migrations: {u}" for u in self.unexpected_triggers]
        if not (self.missing_triggers or self.changed_triggers or self.unexpected_triggers):
            out.append("triggers: all in place, as the migrations define them")
        return out


def verify_chain(chain: str, rows: Iterable[Mapping[str, Any]],
                 head: Mapping[str, Any] | None,
                 rules_sha256: Mapping[str, str] | None = None,
                 anchors: Iterable[tuple[int, str]] = ()) -> ChainReport:
    """Re-check one chain, rows in id order, and its head row. Stops at the
    first broken link. An anchor is an (id, hash) pair recorded outside the
    database earlier (`audit verify` prints one for each chain): a chain
    rewritten and re-hashed from that row or before no longer has it."""
    report = ChainReport(chain)
    pending = dict(anchors)
    prev_hash, prev_id = GENESIS, None
    try:
        for row in rows:
            rid = int(row["id"])
            where = f"{chain} id {rid}"
            if row["row_hash"] is None or row["prev_hash"] is None:
                return _broken(report, rid, f"{where}: the row has no hash (inserted outside "
                                            f"the application)")
            if row["prev_hash"] != prev_hash:
                before = f"id {prev_id}" if prev_id is not None else "the start of the chain"
                return _broken(report, rid, f"{where}: its previous hash does not match {before} "
                                            f"(a row between them was removed, or {before} or "
                                            f"this row was changed)")
            rules = None
            if chain == "cases":
                rules = (rules_sha256 or {}).get(row["rules_version"])
                if rules is None:
                    return _broken(report, rid, f"{where}: its rules version "
                                                f"{row['rules_version']!r} is not stored")
            try:
                expected = row_hash(chain, prev_hash, row, rules)
            except (TypeError, ValueError) as exc:
                return _broken(report, rid, f"{where}: the content cannot be read ({exc})")
            if row["row_hash"] != expected:
                what = "or the rules content it names " if chain == "cases" else ""
                return _broken(report, rid, f"{where}: the stored content {what}does not match "
                                            f"its hash (changed after it was recorded)")
            if rid in pending and pending.pop(rid) != row["row_hash"]:
                return _broken(report, rid, f"{where}: its hash is not the anchor recorded for it "
                                            f"(the chain was rewritten from this row or before)")
            prev_hash, prev_id = row["row_hash"], rid
            report.rows += 1
    except UnreadableRow as exc:
        where = (f"{chain} id {exc.row_id}" if exc.row_id is not None
                 else f"{chain} after id {prev_id}")
        return _broken(report, exc.row_id, f"{where}: the row cannot be read ({exc.reason})")
    report.last_id, report.last_hash = prev_id, prev_hash
    if pending:
        rid = min(pending)
        return _broken(report, rid, f"{chain} id {rid}: anchored, but no longer in the chain")
    if head is None:
        return _broken(report, None, f"{chain}: the chain head row is missing")
    problem = _head_problem(head)
    if problem is not None:
        return _broken(report, None, f"{chain} end: the chain head row cannot be read "
                                     f"({problem})")
    if (head["length"], head["last_id"], head["last_hash"]) != (
            report.rows, prev_id, prev_hash):
        return _broken(report, None,
                       f"{chain} end: the chain head records {head['length']} rows ending at "
                       f"id {head['last_id']}, the table has {report.rows} ending at id "
                       f"{prev_id} (rows removed from the end, or the head was changed)")
    return report


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _head_problem(head: Mapping[str, Any]) -> str | None:
    """What makes a chain head row something no writer of the store wrote:
    a length or last id that is not a whole number, a hash that is not text."""
    length, last_id, last_hash = head["length"], head["last_id"], head["last_hash"]
    if not _whole(length) or length < 0:
        return f"its length is {_shown(length)}, not a whole number"
    if last_id is not None and not _whole(last_id):
        return f"its last id is {_shown(last_id)}, not a whole number"
    if not isinstance(last_hash, str):
        return f"its last hash is {_shown(last_hash)}, not text"
    return None


def _shown(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def parse_anchor(text: str) -> tuple[str, int, str]:
    """`chain:id:hash`, as `audit verify` prints it."""
    parts = text.strip().split(":")
    if (len(parts) != 3 or parts[0] not in CHAINS
            or not (parts[1].isascii() and parts[1].isdigit())  # the digits 0-9 only
            or len(parts[2]) != 64 or any(c not in "0123456789abcdef" for c in parts[2])):
        raise ValueError(f"{text!r} is not CHAIN:ID:HASH (CHAIN one of {', '.join(CHAINS)}, "
                         f"HASH 64 hex digits)")
    return parts[0], int(parts[1]), parts[2]


def _broken(report: ChainReport, rid: int | None, message: str) -> ChainReport:
    report.broken, report.broken_id = message, rid
    return report


def chained(chain: str, rows: Iterable[Mapping[str, Any]],
            rules_sha256: Mapping[str, str] | None = None,
            ) -> Iterator[tuple[int, str, str]]:
    """(id, prev_hash, row_hash) for rows in id order, computed afresh: how
    existing rows were given their hashes."""
    prev = GENESIS
    for row in rows:
        rules = (rules_sha256 or {}).get(row["rules_version"]) if chain == "cases" else None
        h = row_hash(chain, prev, row, rules)
        yield int(row["id"]), prev, h
        prev = h
