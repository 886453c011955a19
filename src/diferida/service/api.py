"""The JSON API, /api/v1. Thin: parse, call the core or the store, render.

* POST /api/v1/determinations — one participant; public; stores nothing.
* POST /api/v1/batches — a CSV, Parquet or .xlsx file; public; stores nothing.
* /api/v1/cases — recorded determinations, append-only, with versions.
* GET /api/v1/audit — who did what to which case, when.
* GET /health
"""

from __future__ import annotations

import asyncio
import functools
import json
from datetime import date, datetime
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Path, Query, Request, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import Field

from .. import __version__
from ..i18n import LANGS, help_text
from ..rules import builtin_names, load_rules
from . import messages
from .auth import Analyst, Auditor, Reader, store_of
from .errors import APIError, parse_json_object, problem
from .participant import RequestProblems, field_problem, id_problem, normalised_id, parse
from .schemas import (
    ID_PATTERN,
    MAX_DB_ID,
    WHOLE_NUMBER,
    AuditList,
    BatchOut,
    CaseBody,
    CaseList,
    CaseOut,
    Determination,
    Errors,
    Health,
    ParamDateTime,
    ParticipantBody,
    Reproduction,
    refusal,
    request_body,
    said,
)
from .store import AuditQuery, Case, CaseConflict, CaseProblem, NewEvent, Store, User

__all__ = ["router"]

router = APIRouter()
PID_LIMIT = 200  # the store's column
# Texts of the explanation may be reworded between releases without changing
# the decision; `decision_identical` compares everything else.

ERRORS_422 = {422: refusal("bad_input")}
ERRORS_AUTH = {401: refusal("no_token"),
               403: refusal("role_may_not")}


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(data, status_code=status, headers=headers)


def _lang(request: Request) -> str:
    return messages.pick_lang(request.query_params.get("lang"),
                              request.headers.get("accept-language"))


# -- health -----------------------------------------------------------------

@router.get("/health", response_model=Health, tags=["service"],
            responses={503: {"model": Health, "description": said("unreachable")}})
def health(request: Request) -> JSONResponse:
    store: Store = store_of(request)
    try:
        store.ping()
        revision = store.revision()
    except Exception:  # any database failure means "not ready"; the detail stays in the server
        return _json({"status": "unavailable", "database": "unreachable", "schema_revision": None,
                      "version": __version__}, 503)
    return _json({"status": "ok", "database": store.engine.dialect.name,
                  "schema_revision": revision, "version": __version__})


# -- one participant ----------------------------------------------------------

@router.post("/api/v1/determinations", tags=["determinations"],
             response_model=Determination, responses=ERRORS_422,
             openapi_extra=request_body(ParticipantBody))
async def post_determination(request: Request) -> JSONResponse:
    """Evaluate one participant: a JSON object of rules §1 fields, plus `lang`
    (es | en) and optionally `rules`. Public; nothing is stored or logged."""
    body = parse_json_object(await request.body(), _lang(request))
    parsed = parse(body)
    evaluator = request.app.state.evaluator
    try:
        d = await evaluator(parsed)
    except RequestProblems as exc:
        raise APIError(422, exc.problems) from None
    return _json(d.to_dict())


# -- a file of participants ---------------------------------------------------------

@router.post("/api/v1/batches", tags=["determinations"], response_model=BatchOut,
             responses={**ERRORS_422,
                        413: refusal("batch_too_large"),
                        503: refusal("batch_busy")})
async def post_batch(
    request: Request,
    file: Annotated[UploadFile | None, File(description=help_text("api.batch_file"))] = None,
    as_of: Annotated[str | None, Form(description=help_text("api.batch_as_of"))] = None,
    lang: Annotated[str | None, Form(description=help_text("api.batch_lang"))] = None,
    rules: Annotated[str | None, Form(description=help_text("api.batch_rules"))] = None,
    separator: Annotated[str | None, Form(description=help_text("api.batch_separator"))]
    = None,
) -> Response:
    """Evaluate a whole file. Every row is either determined or rejected with
    its row number, participant id, field and reason. Public; stores nothing."""
    lang_ = lang if lang in LANGS else messages.pick_lang(None,
                                                          request.headers.get("accept-language"))
    problems = []
    if lang is not None and lang not in LANGS:
        problems.append(field_problem(lang_, "lang", "unknown_lang", lang))
    as_of_date = None
    if as_of:
        try:
            as_of_date = date.fromisoformat(as_of)
        except ValueError:
            problems.append(field_problem(lang_, "as_of", "not_a_date", as_of))
    rules_obj = load_rules(None)
    if rules is not None:
        if rules in builtin_names():
            rules_obj = load_rules(rules)
        else:
            problems.append(field_problem(lang_, "rules", "unknown_rules", rules,
                                          names=", ".join(builtin_names())))
    if separator is not None and len(separator) != 1:
        problems.append(field_problem(lang_, "separator", "invalid", separator,
                                      detail="one character"))
    if file is None:
        problems.append(problem("file", "file_missing", messages.text(lang_, "file_missing")))
    if problems:
        raise APIError(422, problems)
    settings = request.app.state.settings
    limit = settings.max_upload_bytes
    data = await file.read(limit + 1)
    if len(data) > limit:
        raise APIError(413, [problem("file", "payload_too_large", messages.text(
            lang_, "payload_too_large", limit=limit), limit=limit)])
    filename = file.filename or "upload"
    # a bounded number of files at once per process, each bounded in size: memory is
    # bounded; one more waits for no one and is told when to try again
    slots = getattr(request.app.state, "batch_slots", None)
    if slots is None:
        slots = request.app.state.batch_slots = asyncio.Semaphore(
            max(1, settings.batch_concurrency))
    if slots.locked():
        raise APIError(503, [problem("file", "busy", messages.text(lang_, "busy"))],
                       headers={"Retry-After": str(BATCH_RETRY_AFTER)})
    async with slots:
        body = await run_in_threadpool(_evaluate_file, data, filename, separator, as_of_date,
                                       rules_obj, lang_, _batch_limits(settings))
    return Response(body, media_type="application/json")


BATCH_RETRY_AFTER = 5  # seconds


def _batch_limits(settings):
    # the bounds of one upload, shared with the workbench's import (settings.upload_limits)
    return settings.file_limits()


def _evaluate_file(data: bytes, filename: str, separator: str | None, as_of: date | None,
                   rules, lang: str, limits=None) -> bytes:
    import polars as pl

    from ..batch.io import FileProblem, load_table, row_numbers
    from ..batch.limits import TOO_LARGE
    from ..core import evaluate_frame

    try:
        table = load_table(data, filename, separator=separator, limits=limits)
    except FileProblem as exc:
        status = 413 if exc.code in TOO_LARGE else 422
        raise APIError(status, [problem("file", exc.code, exc.text(lang), None,
                                        line=exc.line)]) from None
    as_of = as_of or date.today()
    result = evaluate_frame(table.frame, as_of=as_of, rules=rules, lang=lang)
    # rows numbered as a person opening the file would number them
    rejects = result.rejected.with_columns(
        row_numbers(table.kind, result.rejected["row"], table.rows))

    def rows_json(df: pl.DataFrame) -> bytes:
        # dates and exact decimals as text, so nothing passes through a float
        df = df.with_columns(pl.col(pl.Date, pl.Datetime, pl.Decimal, pl.Time,
                                    pl.Duration).cast(pl.String))
        return df.write_json().encode() if df.height else b"[]"

    by_status = dict(result.determinations.group_by("status").len().iter_rows())
    summary = {"filename": filename, "rows_in": result.rows_in,
               "rows_determined": result.determinations.height,
               "rows_rejected": result.rows_rejected, "by_status": by_status,
               "blank_rows_skipped": table.blank, "rules_version": result.rules.version,
               "as_of": as_of.isoformat(), "lang": lang}
    return b"".join([b'{"summary":', json.dumps(summary, ensure_ascii=False).encode(),
                     b',"determinations":', rows_json(result.determinations),
                     b',"rejects":', rows_json(rejects), b"}"])


# -- cases ----------------------------------------------------------------------

# Query texts: no NUL (no database stores it).
TEXT_PATTERN = r"^[^\x00]*$"
# A participant id given as a filter is checked by `_id_filter`, with a message
# naming what is wrong; the pattern documents what it accepts.
ID_QUERY_DOC = {"pattern": ID_PATTERN}


def _id_filter(value: str | None, lang: str) -> str | None:
    """A participant id given as a filter, trimmed as the core trims ids;
    an id no case can have (blank, or holding a control character) is 422."""
    if value is None:
        return None
    bad = id_problem(lang, value)
    if bad is not None:
        raise APIError(422, [bad])
    pid = normalised_id(value)
    if pid is None:
        raise APIError(422, [field_problem(lang, "participant_id", "blank", value)])
    return pid


def case_json(case: Case, superseded_by: int | None, author: str) -> dict[str, Any]:
    return {
        "id": case.id, "participant_id": case.participant_id, "version": case.version,
        "supersedes": case.supersedes, "superseded_by": superseded_by,
        "current": superseded_by is None, "inputs": json.loads(case.inputs),
        "result": json.loads(case.result), "rules_version": case.rules_version,
        "as_of": case.as_of.isoformat(), "lang": case.lang, "author": author,
        "note": case.note, "created_at": case.created_at.isoformat(),
    }


def _cases_json(store: Store, cases: list[Case]) -> list[dict[str, Any]]:
    later = store.superseded_by(c.id for c in cases)
    authors = store.authors(c.author_id for c in cases)
    return [case_json(c, later.get(c.id), authors.get(c.author_id, "?")) for c in cases]


def _check_case_options(parsed, lang: str) -> tuple[int | None, str | None]:
    """The case's options (their types checked by `CaseBody`) and its
    participant id, which a case must have."""
    supersedes = parsed.options.get("supersedes")
    note = parsed.options.get("note")
    # the id as the core reads it (trimmed): "AZ-1 " and "AZ-1" are one participant
    pid = normalised_id(parsed.fields.get("participant_id"))
    if pid is None:
        if not any(p["field"] == "participant_id" for p in parsed.problems):
            parsed.problems.append(field_problem(lang, "participant_id", "missing"))
    elif len(pid) > PID_LIMIT:
        parsed.problems.append(field_problem(lang, "participant_id", "too_long", None,
                                             limit=PID_LIMIT))
    return supersedes, note


@router.post("/api/v1/cases", tags=["cases"], status_code=201, response_model=CaseOut,
             responses={**ERRORS_422, **ERRORS_AUTH,
                        409: refusal("case_conflict")},
             openapi_extra=request_body(CaseBody))
async def post_case(request: Request, user: Analyst) -> JSONResponse:
    """Record a determination for a participant. The server evaluates the inputs
    itself. A correction names the current version in `supersedes`; nothing is
    ever changed in place."""
    store: Store = store_of(request)
    path = request.url.path
    try:
        body = parse_json_object(await request.body(), _lang(request))
    except APIError as exc:
        await run_in_threadpool(store.audit, NewEvent(
            "case.create", request.method, path, exc.status, user=user,
            detail="refused: " + ", ".join(p["code"] for p in exc.problems)))
        raise
    parsed = parse(body, CaseBody)
    supersedes, note = _check_case_options(parsed, parsed.lang)
    action = "case.correct" if supersedes is not None else "case.create"
    pid = normalised_id(parsed.fields.get("participant_id"))
    pid = pid if pid is not None and len(pid) <= PID_LIMIT else None

    async def refused(status: int, problems: list[dict[str, Any]], detail: str,
                      current: int | None = None) -> APIError:
        # only field names and codes: the values may be personal data
        await run_in_threadpool(store.audit, NewEvent(
            action, request.method, path, status, user=user, case_id=supersedes,
            participant_id=pid, detail=detail))
        return APIError(status, problems)

    try:
        d = await request.app.state.evaluator(parsed)
    except RequestProblems as exc:
        detail = "refused: " + ", ".join(f"{p['field']}:{p['code']}" for p in exc.problems)
        raise await refused(422, exc.problems, detail) from None

    inputs = dict(parsed.fields)
    result = d.to_dict()
    rules = parsed.rules

    def event(case: Case) -> NewEvent:
        return NewEvent(action, request.method, path, 201, user=user, case_id=case.id,
                        participant_id=case.participant_id,
                        detail=f"version {case.version}" + (
                            f", supersedes {case.supersedes}" if case.supersedes else ""))

    try:
        case = await run_in_threadpool(
            lambda: store.record_case(
                participant_id=d.participant_id, inputs=inputs, result=result,
                rules_version=rules.version, rules_name=rules.name, rules_content=rules.resolved,
                as_of=d.as_of, lang=parsed.lang, author=user, supersedes=supersedes, note=note,
                event=event))
    except CaseProblem as exc:
        raise await refused(422, [field_problem(parsed.lang, exc.field, exc.code, exc.value)],
                            f"refused: {exc.field}:{exc.code}") from None
    except CaseConflict as exc:
        msg = messages.text(parsed.lang, exc.code, value=supersedes, current=exc.current_id)
        raise await refused(409, [problem("supersedes", exc.code, msg, supersedes,
                                          current_case_id=exc.current_id)],
                            f"refused: {exc.code}, current {exc.current_id}") from None
    body_out = case_json(case, None, user.name)
    return _json(body_out, 201, {"Location": f"/api/v1/cases/{case.id}"})


# whole numbers read as the document says (schemas.WHOLE_NUMBER), their bounds first
DbId = Annotated[int, Field(ge=1, le=MAX_DB_ID), WHOLE_NUMBER]
CaseId = Annotated[DbId, Path(description=help_text("api.case_id"))]
Limit = Annotated[int, Field(ge=1, le=1000), WHOLE_NUMBER, Query()]
Offset = Annotated[int, Field(ge=0, le=MAX_DB_ID), WHOLE_NUMBER, Query()]


async def _load_case(request: Request, store: Store, user: User, case_id: int,
                     action: str) -> Case:
    case = await run_in_threadpool(store.case, case_id)
    if case is None:
        await run_in_threadpool(store.audit, NewEvent(
            action, request.method, request.url.path, 404, user=user, case_id=case_id,
            detail="no such case"))
        raise APIError(404, [problem("case_id", "not_found", messages.text(
            _lang(request), "not_found", value=case_id), case_id)])
    return case


@router.get("/api/v1/cases/{case_id}", tags=["cases"], response_model=CaseOut,
            responses={**ERRORS_AUTH, 404: refusal("wf_no_case")})
async def get_case(request: Request, case_id: CaseId,
                   user: Reader) -> JSONResponse:
    """One case version, with the id of the case that superseded it, if any."""
    store: Store = store_of(request)
    case = await _load_case(request, store, user, case_id, "case.read")
    out = (await run_in_threadpool(_cases_json, store, [case]))[0]
    await run_in_threadpool(store.audit, NewEvent(
        "case.read", request.method, request.url.path, 200, user=user, case_id=case.id,
        participant_id=case.participant_id))
    return _json(out)


@router.get("/api/v1/cases/{case_id}/print", tags=["cases"], response_class=Response,
            responses={**ERRORS_AUTH, 404: refusal("wf_no_case"), 422: {"model": Errors},
                       409: refusal("letter_altered"),
                       200: {"content": {"text/html": {}, "application/pdf": {}},
                             "description": said("letter_print")}})
async def print_case(
    request: Request, case_id: CaseId, user: Reader,
    lang: Annotated[str | None, Query(
        description=help_text("api.letter_lang"))] = None,
) -> Response:
    """The determination letter of one stored case version (`diferida.letter`).
    An approved version answers with its letter as issued at approval (PDF,
    the stored bytes; `lang`, when given, must be the language it was issued
    in: another is refused in words, 422). Any other: its draft letter
    with its case id and version, written from the store as recorded (never
    recomputed), marked as a draft on every page; in the language it was
    decided in, or in `lang`."""
    from ..headers import SECURITY_HEADERS
    from ..letter import style_source
    from . import workflow

    store: Store = store_of(request)
    case = await _load_case(request, store, user, case_id, "case.print")
    try:
        pdf = await run_in_threadpool(workflow.stored_letter, store, case.id, user)
    except workflow.Refused as exc:  # the stored bytes fail their chained SHA-256
        raise APIError(exc.status, exc.to_problems(_lang(request))) from None
    if pdf is not None:
        from .workflow.letters import refuse_other_language

        try:  # issued in one language only: another asked for is answered in words
            await run_in_threadpool(refuse_other_language, store, user, case.id, lang)
        except workflow.Refused as exc:
            raise APIError(exc.status, exc.to_problems(_lang(request))) from None
        await run_in_threadpool(store.audit, NewEvent(
            "case.print", request.method, request.url.path, 200, user=user, case_id=case.id,
            participant_id=case.participant_id, detail="issued letter"))
        return Response(pdf, media_type="application/pdf", headers={
            "Content-Disposition": f'inline; filename="caso-{case.id}.pdf"',
            "Cache-Control": "no-store"})
    chosen = lang if lang in LANGS else None
    if lang is not None and chosen is None:
        await run_in_threadpool(store.audit, NewEvent(
            "case.print", request.method, request.url.path, 422, user=user, case_id=case.id,
            participant_id=case.participant_id, detail="refused: lang:unknown_lang"))
        raise APIError(422, [problem("lang", "unknown_lang", messages.text(
            _lang(request), "unknown_lang", value=lang), lang)])
    try:
        html = await run_in_threadpool(
            functools.partial(workflow.letter_html, store, user, case.id, lang=chosen))
    except workflow.Refused as exc:
        await run_in_threadpool(store.audit, NewEvent(
            "case.print", request.method, request.url.path, 422, user=user, case_id=case.id,
            participant_id=case.participant_id, detail="refused: no letter in that language"))
        raise APIError(422, [problem("lang", "no_letter", "; ".join(
            str(p["message"]) for p in exc.to_problems(chosen or case.lang)), lang)]) from None
    await run_in_threadpool(store.audit, NewEvent(
        "case.print", request.method, request.url.path, 200, user=user, case_id=case.id,
        participant_id=case.participant_id))
    # the letter is one self-contained document: its one style block allowed by hash
    csp = SECURITY_HEADERS["Content-Security-Policy"].replace(
        "style-src 'self'", f"style-src {style_source(html)}")
    return HTMLResponse(html, headers={**SECURITY_HEADERS, "Content-Security-Policy": csp})


@router.get("/api/v1/cases", tags=["cases"], response_model=CaseList,
            responses={**ERRORS_AUTH, **ERRORS_422})
async def list_cases(
    request: Request,
    user: Reader,
    participant_id: Annotated[str | None, Query(
        max_length=PID_LIMIT, json_schema_extra=ID_QUERY_DOC,
        description=help_text("api.participant_cases"))] = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> JSONResponse:
    """Cases in order: one participant's versions, or every case by id."""
    store: Store = store_of(request)
    participant_id = _id_filter(participant_id, _lang(request))
    cases = await run_in_threadpool(store.cases, participant_id, limit, offset)
    out = await run_in_threadpool(_cases_json, store, cases)
    await run_in_threadpool(store.audit, NewEvent(
        "case.list", request.method, request.url.path, 200, user=user,
        # a participant's id once it is a case's; what was typed, never
        participant_id=participant_id if cases else None,
        detail=f"{len(cases)} cases: " + ",".join(str(c.id) for c in cases[:200])))
    return _json({"participant_id": participant_id, "cases": out})


@router.get("/api/v1/cases/{case_id}/reproduce", tags=["cases"], response_model=Reproduction,
            responses={**ERRORS_AUTH, 404: refusal("wf_no_case")})
async def reproduce_case(request: Request, case_id: CaseId,
                         user: Reader) -> JSONResponse:
    """Recompute a stored case with its stored inputs, its stored rules content
    and its as_of date, and compare with the stored result."""
    store: Store = store_of(request)
    case = await _load_case(request, store, user, case_id, "case.reproduce")
    from .workflow import reproduce

    out = await run_in_threadpool(reproduce, store, user, case.id)
    await run_in_threadpool(store.audit, NewEvent(
        "case.reproduce", request.method, request.url.path, 200, user=user, case_id=case.id,
        participant_id=case.participant_id,
        detail="identical" if out["identical"] else (
            "decision identical, texts differ" if out["decision_identical"] else "DIFFERENT")))
    return _json(out)


# -- audit trail ---------------------------------------------------------------------

@router.get("/api/v1/audit", tags=["audit"], response_model=AuditList,
            responses={**ERRORS_AUTH, **ERRORS_422})
async def audit_trail(
    request: Request,
    user: Auditor,
    case_id: Annotated[DbId | None, Query()] = None,
    user_name: Annotated[str | None, Query(alias="user", max_length=100, pattern=TEXT_PATTERN,
                                           description=help_text("api.audit_who"))] = None,
    action: Annotated[str | None, Query(
        max_length=40, pattern=TEXT_PATTERN,
        description=help_text("api.audit_action"))] = None,
    participant_id: Annotated[str | None, Query(max_length=PID_LIMIT,
                                                json_schema_extra=ID_QUERY_DOC)] = None,
    since: Annotated[ParamDateTime | None,
                     Query(description=help_text("api.audit_since"))] = None,
    until: Annotated[ParamDateTime | None,
                     Query(description=help_text("api.audit_until"))] = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> JSONResponse:
    """The audit trail, oldest first: who created, corrected or read which
    case, and every refused attempt, with filters."""
    from datetime import UTC

    lang = _lang(request)

    def utc(name: str, t: datetime | None) -> datetime | None:
        if t is None:
            return None
        try:
            return t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)
        except OverflowError:  # 0001-01-01T00:00+05:00 is before the first UTC instant
            raise APIError(422, [field_problem(lang, name, "not_a_datetime",
                                               t.isoformat())]) from None

    since, until = utc("since", since), utc("until", until)
    participant_id = _id_filter(participant_id, lang)
    store: Store = store_of(request)
    q = AuditQuery(case_id=case_id, user=user_name, action=action,
                   participant_id=participant_id, since=since, until=until,
                   limit=limit, offset=offset)
    # the reading is recorded before it happens, so it appears in its own answer;
    # with the kinds of filters used, never their values (names are typed there)
    used = [name for name, value in (("case_id", case_id), ("user", user_name),
                                     ("action", action), ("participant_id", participant_id),
                                     ("since", since), ("until", until)) if value is not None]
    await run_in_threadpool(store.audit, NewEvent(
        "audit.read", request.method, request.url.path, 200, user=user,
        detail="filters: " + (", ".join(used) if used else "none")))
    events = await run_in_threadpool(store.audit_events, q)
    return _json({"events": [{
        "id": e.id, "at": e.at.isoformat(), "user": e.user_name, "role": e.role,
        "action": e.action, "case_id": e.case_id, "participant_id": e.participant_id,
        "method": e.method, "path": e.path, "status_code": e.status_code, "detail": e.detail,
    } for e in events], "limit": limit, "offset": offset})
