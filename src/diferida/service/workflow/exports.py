"""Exports for supervisors and auditors: cases, events or a summary, as
CSV or .xlsx."""

from __future__ import annotations

import statistics
from datetime import date, datetime

from sqlalchemy import select

from ..store import (
    STATE_AFTER,
    Case,
    CaseApplication,
    CaseState,
    Store,
    User,
)
from ..store import WorkflowEvent as WorkflowRow
from .common import (
    EXPORTERS,
    EXPORTS,
    FORMATS,
    STATES,
    Refused,
    _audit,
    _refuse,
    _require,
    _text,
    user_lang,
)


def export(store: Store, user: User, kind: str, fmt: str) -> bytes:
    """kind "cases" (one row per version: state, status, application date,
    approval date, days from application to approval), "events" (the
    workflow events) or "summary" (counts by state and by determination
    status, and the days from application to approval: count, median, max),
    as "csv" or "xlsx". Names, addresses, notes and reasons are left out:
    these are management reports."""
    import polars as pl

    _require(store, user, "export", EXPORTERS)
    lang = user_lang(None)
    if kind not in EXPORTS or fmt not in FORMATS:
        bad, allowed = (("kind", kind), EXPORTS) if kind not in EXPORTS else (("fmt", fmt),
                                                                             FORMATS)
        raise _refuse(store, user, "export", Refused("invalid", problems=[{
            "field": bad[0], "code": "unknown_export",
            "message": _text(lang, "unknown_export", value=bad[1], allowed=", ".join(allowed)),
            "value": bad[1]}]))
    cases = _case_rows(store)
    if kind == "cases":
        frame = pl.DataFrame(cases, schema=_schema(CASE_COLUMNS), orient="row")
    elif kind == "events":
        with store.reading() as session:
            rows = session.execute(select(
                WorkflowRow.id, WorkflowRow.at, WorkflowRow.number,
                WorkflowRow.case_id, WorkflowRow.version, WorkflowRow.action,
                WorkflowRow.user_name, WorkflowRow.role, WorkflowRow.corrects,
                WorkflowRow.letter_sha256).order_by(WorkflowRow.id)).all()
        frame = pl.DataFrame([tuple(r) for r in rows], schema=_schema(EVENT_COLUMNS), orient="row")
    else:
        frame = _summary_frame(cases)
    _audit(store, user, "export", 200, detail=f"{kind} {fmt}: {frame.height} rows")
    from ..cells import csv_bytes, xlsx_bytes  # no text cell read as a formula (cells.py)

    if fmt == "csv":
        return csv_bytes(frame)
    # Excel keeps no time zone: the times are written in Puerto Rico's (AST)
    stamps = [c for c, t in frame.schema.items() if isinstance(t, pl.Datetime)]
    frame = frame.with_columns(
        pl.col(c).dt.convert_time_zone("America/Puerto_Rico").dt.replace_time_zone(None)
        for c in stamps).rename({c: f"{c}_ast" for c in stamps})
    return xlsx_bytes(frame, kind)


CASE_COLUMNS = [("number", "Int64"), ("case_id", "Int64"), ("participant_id", "String"),
                ("version", "Int64"), ("current", "Boolean"), ("state", "String"),
                ("status", "String"), ("as_of", "Date"), ("application_date", "Date"),
                ("created_at", "Datetime"), ("approved_at", "Datetime"),
                ("days_to_approval", "Int64")]
EVENT_COLUMNS = [("id", "Int64"), ("at", "Datetime"), ("number", "Int64"),
                 ("case_id", "Int64"), ("version", "Int64"), ("action", "String"),
                 ("user", "String"), ("role", "String"), ("corrects", "Int64"),
                 ("letter_sha256", "String")]


def _schema(columns):
    import polars as pl

    types = {"Int64": pl.Int64, "String": pl.String, "Boolean": pl.Boolean, "Date": pl.Date,
             "Datetime": pl.Datetime("us", "UTC")}
    return {n: types[t] for n, t in columns}


def _case_rows(store: Store) -> list[tuple]:
    with store.reading() as session:
        states = dict(session.execute(select(CaseState.participant_id, CaseState.case_id)).all())
        first = dict(session.execute(select(Case.participant_id, Case.id)
                                     .where(Case.version == 1)).all())
        after: dict[int, str] = {}
        approved: dict[int, datetime] = {}
        for cid, action, at in session.execute(
                select(WorkflowRow.case_id, WorkflowRow.action, WorkflowRow.at)
                .order_by(WorkflowRow.id)):
            after[cid] = STATE_AFTER.get(action, after.get(cid, "draft"))
            if action == "approved":
                approved[cid] = at
        applied = dict(session.execute(select(CaseApplication.case_id,
                                              CaseApplication.application_date)).all())
        rows = []
        for cid, pid, version, status, as_of, created in session.execute(
                select(Case.id, Case.participant_id, Case.version, Case.status, Case.as_of,
                       Case.created_at).order_by(Case.id)):
            at = approved.get(cid)
            app = applied.get(cid)
            days = (_pr_date(at) - app).days if at is not None and app is not None else None
            rows.append((first.get(pid), cid, pid, version, states.get(pid) == cid,
                         after.get(cid, "draft"), status, as_of, app, created, at, days))
    return rows


def _pr_date(at: datetime) -> date:
    """The calendar day in Puerto Rico (AST, UTC−4, no daylight saving)."""
    from datetime import timedelta, timezone

    return at.astimezone(timezone(timedelta(hours=-4))).date()


def _summary_frame(rows: list[tuple]):
    import polars as pl

    current = [r for r in rows if r[4]]
    out: list[tuple[str, str, int | None]] = []
    for state in STATES:
        out.append(("cases_by_state", state, sum(1 for r in current if r[5] == state)))
    for status in sorted({r[6] for r in current}):
        out.append(("cases_by_status", status, sum(1 for r in current if r[6] == status)))
    days = [r[11] for r in rows if r[11] is not None]
    out.append(("days_application_to_approval", "count", len(days)))
    out.append(("days_application_to_approval", "median",
                int(statistics.median_low(days)) if days else None))
    out.append(("days_application_to_approval", "max", max(days) if days else None))
    return pl.DataFrame(out, schema={"measure": pl.String, "key": pl.String,
                                     "value": pl.Int64}, orient="row")
