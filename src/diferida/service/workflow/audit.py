"""The auditor's view: the trail with its filters (each refused by name
when the store cannot take it) and the chains' verification on request
(`verify_now`, recorded as an `audit.verify` event)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, func, select

from ..participant import control_character
from ..store import (
    AuditEvent,
    NewEvent,
    Store,
    User,
)
from .common import (
    AUDITORS,
    METHOD,
    PER_PAGE,
    AuditEntry,
    Page,
    Refused,
    _audit,
    _page_args,
    _refuse,
    _require,
    _text,
    user_lang,
)

# -- the auditor's view -------------------------------------------------------------


# the longest text each filter of the trail takes: its column's length
AUDIT_TEXT_LIMITS = {"who": 100, "action": 40}
# the years a time filter of the trail may fall in (UTC): wide enough for any
# question about the trail, narrow enough that a day's bounds are always times
AUDIT_YEARS = (1900, 3000)
# the ids of the store's columns (BIGINT on PostgreSQL, INTEGER on SQLite: 64 bits)
MAX_DB_ID = 2**63 - 1
AUDIT_FILTERS = ("who", "action", "case_id", "since", "until")
# the events that only read (a case, a queue, a search, the trail itself):
# the auditor's page folds them into a count per case unless asked for them
READ_ACTIONS = ("workflow.read", "workflow.search", "workflow.audit", "case.read",
                "case.list", "audit.read")


@dataclass(frozen=True)
class AuditPage(Page):
    """A page of the trail with its reads folded (`audit_view(fold_reads=
    True)`): the events shown leave the reads out; `reads` is how many reads
    match the filters and `reads_by_case` the cases most read, as (case id,
    reads), most read first."""

    reads: int = 0
    reads_by_case: list[tuple[int, int]] = field(default_factory=list)


def audit_filter_problems(lang: str | None, *, who: Any = None, action: Any = None,
                          case_id: Any = None, since: Any = None,
                          until: Any = None) -> list[dict[str, Any]]:
    """Why each filter of the audit trail cannot be used, as the API's
    problems (`field`: the filter's name, `code`: filter_control,
    filter_unicode, filter_too_long, filter_case, filter_time or
    filter_range, with `limit`, `first`, `last` where the message has them);
    an empty list when every filter can be. A filter is refused when the
    store cannot take it (PostgreSQL refuses a NUL, a column has a length
    and its integers a range) or when it can mean nothing in the trail (a
    control character, a time outside AUDIT_YEARS). Pure: records nothing."""
    lang = user_lang(lang)
    out: list[dict[str, Any]] = []

    def refuse(name: str, code: str, value: Any, **values: Any) -> None:
        out.append({"field": name, "code": code, "value": value, **values,
                    "message": _text(lang, code, filter=name, **values)})

    for name, text in (("who", who), ("action", action)):
        if text is None:
            continue
        if not isinstance(text, str):
            refuse(name, "filter_unicode", None)
            continue
        char = control_character(text)
        if char is not None:
            refuse(name, "filter_control", None, char=char)
        elif not _encodable(text):
            refuse(name, "filter_unicode", None)
        elif len(text) > AUDIT_TEXT_LIMITS[name]:
            refuse(name, "filter_too_long", None, limit=AUDIT_TEXT_LIMITS[name])
    if case_id is not None and (isinstance(case_id, bool) or not isinstance(case_id, int)
                                or not 1 <= case_id <= MAX_DB_ID):
        refuse("case_id", "filter_case", None, max=MAX_DB_ID)
    first, last = AUDIT_YEARS
    for name, moment in (("since", since), ("until", until)):
        if moment is None:
            continue
        if not isinstance(moment, datetime) or moment.tzinfo is None:
            refuse(name, "filter_time", None)
            continue
        try:
            year = moment.astimezone(UTC).year
        except OverflowError:  # year 1 east of UTC, year 9999 west of it
            year = None
        if year is None or not first <= year <= last:
            refuse(name, "filter_range", moment.isoformat(), first=first, last=last)
    return out


def _encodable(text: str) -> bool:
    """Whether `text` is valid Unicode (no lone surrogate, which no
    database driver can send)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def audit_view(store: Store, user: User, *, who: str | None = None, action: str | None = None,
               case_id: int | None = None, since: datetime | None = None,
               until: datetime | None = None, page: int = 1,
               per_page: int = PER_PAGE, lang: str | None = None,
               fold_reads: bool = False) -> Page:
    """A page of AuditEntry, newest first, with filters (auditors only):
    `who` (a user name), `action`, `case_id`, `since` (from this time) and
    `until` (before it; aware datetimes). A filter the store cannot take is
    refused ("invalid", 422: audit_filter_problems). The reading is recorded
    with the kinds of filters used ("filters: who, since"), never what was
    typed into them: staff type names and dates there. With `fold_reads`
    (and no `action` filter), the reads (READ_ACTIONS) are left out of the
    page and counted instead: an AuditPage."""
    _require(store, user, "audit", AUDITORS)
    problems = audit_filter_problems(lang, who=who, action=action, case_id=case_id,
                                     since=since, until=until)
    if problems:
        raise _refuse(store, user, "audit", Refused("invalid", problems=problems))
    page, per_page = _page_args(page, per_page)
    conditions = []
    if case_id is not None:
        conditions.append(AuditEvent.case_id == case_id)
    if who is not None:
        conditions.append(AuditEvent.user_name == who)
    if action is not None:
        conditions.append(AuditEvent.action == action)
    if since is not None:
        conditions.append(AuditEvent.at >= since)
    if until is not None:
        conditions.append(AuditEvent.at < until)
    fold = fold_reads and action is None
    reads_where = and_(True, *conditions, AuditEvent.action.in_(READ_ACTIONS))
    if fold:
        conditions.append(AuditEvent.action.not_in(READ_ACTIONS))
    where = and_(True, *conditions)
    used = [name for name, value in zip(AUDIT_FILTERS, (who, action, case_id, since, until),
                                        strict=True) if value is not None]
    if fold:
        used.append("reads folded")
    # the reading is recorded before it happens, so it appears in its own answer
    _audit(store, user, "audit", 200,
           detail="filters: " + (", ".join(used) if used else "none")
           + (f"; page {page}" if page > 1 else ""))
    # newest first, on the primary key (and on the filter's own index): a
    # page is read from the top of the trail, whatever its length
    with store.reading() as session:
        total = session.scalar(select(func.count()).select_from(AuditEvent).where(where)) or 0
        rows = session.scalars(select(AuditEvent).where(where).order_by(AuditEvent.id.desc())
                               .limit(per_page).offset((page - 1) * per_page)).all()
        if fold:
            reads = session.scalar(select(func.count()).select_from(AuditEvent)
                                   .where(reads_where)) or 0
            count = func.count().label("n")
            by_case = [(cid, n) for cid, n in session.execute(
                select(AuditEvent.case_id, count)
                .where(reads_where, AuditEvent.case_id.is_not(None))
                .group_by(AuditEvent.case_id).order_by(count.desc(), AuditEvent.case_id)
                .limit(READS_LISTED)).all()]
    items = [AuditEntry(e.id, e.at, e.user_name, e.role, e.action, e.case_id,
                        e.participant_id, e.status_code, e.detail) for e in rows]
    if fold:
        return AuditPage(items, page, per_page, total, reads, by_case)
    return Page(items, page, per_page, total)


# the most read cases listed beside a page of the trail whose reads are folded
READS_LISTED = 20


# each verification of the chains is an event of the trail (a chain itself):
# its result is kept where a restart does not lose it, and nobody can make it
# say "intact" after the fact
VERIFY_ACTION = "audit.verify"


@dataclass(frozen=True)
class Verification:
    """One verification of every chain (as `diferida audit verify`): when,
    by whom, intact or not, how many findings, and — for the one just made,
    not for one read back from the trail — its lines."""

    at: datetime
    user: str | None
    intact: bool
    findings: int
    lines: list[str] = field(default_factory=list)
    # each chain as verified: name, rows, intact, and its anchor (last id
    # and hash) — recorded in the event, so a verification read back from
    # the trail still says them (pages say them in their language)
    chains: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"at": self.at.isoformat(), "user": self.user, "intact": self.intact,
                "findings": self.findings, "lines": list(self.lines),
                "chains": [dict(c) for c in self.chains]}


def _verify_detail(intact: bool, findings: int, chains: list[dict[str, Any]] = ()) -> str:
    head = f"{'intact' if intact else 'TAMPERING DETECTED'}; {findings} findings"
    if not chains:
        return head
    return head + "; chains: " + ", ".join(
        f"{c['chain']}={c['rows']}:{'ok' if c['intact'] else 'broken'}:"
        f"{c['last_id'] if c['last_id'] is not None else '-'}:{c['last_hash']}"
        for c in chains)


def _chains_of(detail: str) -> list[dict[str, Any]]:
    """The chains recorded by _verify_detail, or [] (an older event)."""
    _, found, listed = detail.partition("; chains: ")
    out: list[dict[str, Any]] = []
    if not found:
        return out
    for item in listed.split(", "):
        name, _, rest = item.partition("=")
        parts = rest.split(":")
        if len(parts) != 4 or not parts[0].isdigit():
            return []
        rows, state, last_id, last_hash = parts
        out.append({"chain": name, "rows": int(rows), "intact": state == "ok",
                    "last_id": int(last_id) if last_id.isdigit() else None,
                    "last_hash": last_hash})
    return out


def verify_now(store: Store, user: User) -> Verification:
    """Verify every chain now (auditors only; it reads every row of the
    store) and record the result as an `audit.verify` event: intact or not
    and the number of findings (broken chains, rules, users, workflow rows
    and triggers found wrong)."""
    _require(store, user, "verify", AUDITORS)
    report = store.verify()
    findings = (sum(1 for c in report.chains if not c.intact) + len(report.findings)
                + len(report.missing_triggers) + len(report.changed_triggers)
                + len(report.unexpected_triggers))
    chains = [{"chain": c.chain, "rows": c.rows, "intact": c.intact, "last_id": c.last_id,
               "last_hash": c.last_hash} for c in report.chains]
    store.audit(NewEvent(VERIFY_ACTION, METHOD, VERIFY_ACTION, 200, user=user,
                         detail=_verify_detail(report.intact, findings, chains)))
    return Verification(datetime.now(UTC), user.name, report.intact, findings,
                        report.lines(), chains)


def last_verification(store: Store, user: User) -> Verification | None:
    """The latest verification recorded in the trail (auditors only), or
    None; one indexed read (`action`, newest first), whatever the store's
    size. Its lines are not kept: verify again to see them."""
    _require(store, user, "audit", AUDITORS)
    with store.reading() as session:
        row = session.execute(
            select(AuditEvent.at, AuditEvent.user_name, AuditEvent.detail)
            .where(AuditEvent.action == VERIFY_ACTION)
            .order_by(AuditEvent.id.desc()).limit(1)).first()
    if row is None:
        return None
    at, name, detail = row
    result, _, count = (detail or "").partition("; ")
    number = count.split(" ")[0]
    return Verification(at, name, result == "intact",
                        int(number) if number.isdigit() else 0,
                        chains=_chains_of(detail or ""))


def verify_view(store: Store, user: User) -> tuple[bool, list[str]]:
    """verify_now's result as (intact, lines)."""
    done = verify_now(store, user)
    return done.intact, done.lines
