"""The workbench's JSON API, /api/v1/workbench: every action of the web
pages (`/analista`), through the same service layer (`workflow`). Bearer
tokens; the role each action needs is the service layer's to decide, and
its refusals come back in the API's one error shape with their status
(403, 404, 409, 422), recorded in the audit trail."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, File, Path, Query, Request, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response
from pydantic import Field

from ..i18n import LANGS, help_text
from . import messages, workflow
from .auth import Anyone, store_of
from .errors import APIError, parse_json_object, problem
from .schemas import WHOLE_NUMBER, CaseBody, ParamDateTime, ParamInt, refusal, said

__all__ = ["router"]

router = APIRouter(prefix="/api/v1/workbench", tags=["workbench"])
MAX_DB_ID = 2**63 - 1
# whole numbers read as the document says (schemas.WHOLE_NUMBER), their bounds first
DbId = Annotated[int, Field(ge=1, le=MAX_DB_ID), WHOLE_NUMBER]
CaseId = Annotated[DbId, Path(description=help_text("api.version_id"))]
PageNo = Annotated[int, Field(ge=1, le=10**9), WHOLE_NUMBER,
                   Query(description=help_text("api.page"))]
PerPage = Annotated[int, Field(ge=1, le=workflow.MAX_PER_PAGE), WHOLE_NUMBER, Query()]
Version = Annotated[int, Field(ge=1, le=2**31 - 1), WHOLE_NUMBER]

REFUSALS = {
    401: refusal("wf_token"),
    403: refusal("wf_role"),
    404: refusal("wf_no_case"),
    409: refusal("wf_state"),
    422: refusal("bad_input"),
}
# an import: a file larger, or holding more, than an upload may
TOO_LARGE = {413: refusal("wf_too_large")}
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PDF = {200: {"content": {"application/pdf": {}}, "description": said("wf_letter")}}


def _lang(request: Request) -> str:
    return messages.pick_lang(request.query_params.get("lang"),
                              request.headers.get("accept-language"))


async def _call(request: Request, fn, *args, **kwargs):
    """Run a service action off the event loop; a refusal becomes the API's
    error answer."""
    try:
        return await run_in_threadpool(fn, store_of(request), *args, **kwargs)
    except workflow.Refused as refusal:
        raise APIError(refusal.status, refusal.to_problems(_lang(request))) from None


def request_body(schema: dict[str, Any]) -> dict[str, Any]:
    """`openapi_extra` documenting a JSON body by its schema: the endpoint
    reads the raw body itself (`errors.parse_json_object`), then the service
    layer validates it (`schemas.ApplicationBody` through `participant.parse`)."""
    return {"requestBody": {"required": True, "content": {"application/json": {
        "schema": schema}}}}


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(data, status_code=status, headers=headers)


def _application_schema(reason: bool = False) -> dict[str, Any]:
    schema = CaseBody.model_json_schema()
    props = dict(schema["properties"])
    for name in ("supersedes", "note", "rules"):
        props.pop(name, None)
    props["name"] = {"anyOf": [{"type": "string", "maxLength": workflow.LIMITS["name"]},
                               {"type": "null"}], "description": help_text("api.wf_name")}
    props["address"] = {"anyOf": [{"type": "string", "maxLength": workflow.LIMITS["address"]},
                                  {"type": "null"}],
                        "description": help_text("api.wf_address")}
    props["application_date"] = {"anyOf": [{"type": "string", "format": "date"},
                                           {"type": "null"}],
                                 "description": help_text("api.wf_application_date")}
    props["note"] = {"anyOf": [{"type": "string", "maxLength": workflow.LIMITS["note"]},
                               {"type": "null"}], "description": help_text("api.wf_note")}
    props["letter_lang"] = {"anyOf": [{"type": "string", "enum": list(LANGS)}, {"type": "null"}],
                            "description": help_text("api.wf_letter_lang")}
    required = list(schema.get("required", []))
    if reason:
        props["reason"] = {"type": "string", "minLength": workflow.MIN_VISIBLE["reason"],
                           "maxLength": workflow.LIMITS["reason"],
                           "description": help_text("api.wf_reason")}
        required = [r for r in required if r != "participant_id"] + ["reason"]
        props.pop("participant_id", None)
    return {**schema, "properties": props, "required": required}


async def _body(request: Request) -> dict[str, Any]:
    return parse_json_object(await request.body(), _lang(request))


# -- preparing a case ---------------------------------------------------------------

@router.post("/preview", responses=REFUSALS,
             openapi_extra=request_body(_application_schema()))
async def preview(request: Request, user: Anyone) -> JSONResponse:
    """The engine's answer for an application, before saving. Stores nothing."""
    body = await _body(request)
    result = await run_in_threadpool(workflow.preview, body, lang=_lang(request))
    if isinstance(result, workflow.Refused):
        raise APIError(422, result.problems)
    return _json(result.to_dict())


@router.post("/cases", status_code=201, response_model=workflow.CaseView,
             responses=REFUSALS, openapi_extra=request_body(_application_schema()))
async def open_draft(request: Request, user: Anyone) -> JSONResponse:
    """Open a case from an application (analyst, supervisor): version 1, a draft."""
    body = await _body(request)
    v = await _call(request, workflow.open_draft, user, body, lang=_lang(request))
    return _json(v.to_dict(), 201, {"Location": f"/api/v1/workbench/cases/{v.case_id}"})


@router.post("/imports", response_model=workflow.ImportResult,
             responses={**REFUSALS, **TOO_LARGE})
async def import_applications(
    request: Request, user: Anyone,
    file: Annotated[UploadFile | None, File(description=help_text("api.import_file"))] = None,
) -> JSONResponse:
    """Drafts from a file of applications (analyst, supervisor); every
    rejected row named with its row number, field and reason. The file is
    bounded as an upload to /api/v1/batches is (bytes, rows, cells, text
    once read, an .xlsx's declared area): over a limit, 413 naming it."""
    lang = _lang(request)
    if file is None:
        raise APIError(422, [problem("file", "file_missing", messages.text(lang,
                                                                           "file_missing"))])
    settings = request.app.state.settings
    limit = settings.max_upload_bytes
    data = await file.read(limit + 1)
    if len(data) > limit:
        raise APIError(413, [problem("file", "payload_too_large", messages.text(
            lang, "payload_too_large", limit=limit), limit=limit)])
    result = await _call(request, workflow.import_applications, user, data,
                         file.filename or "upload.csv", lang=lang,
                         limits=settings.file_limits())
    return _json(result.to_dict())


@router.post("/cases/{case_id}/corrections", status_code=201,
             response_model=workflow.CaseView, responses=REFUSALS,
             openapi_extra=request_body(_application_schema(reason=True)))
async def correct(request: Request, case_id: CaseId, user: Anyone) -> JSONResponse:
    """A corrected application as a new version (draft) of the case, naming
    the version it corrects and why; the participant id stays the case's."""
    body = await _body(request)
    reason = body.pop("reason", None)
    body.pop("participant_id", None)
    v = await _call(request, workflow.correct, user, case_id, body, reason=reason,
                    lang=_lang(request))
    return _json(v.to_dict(), 201, {"Location": f"/api/v1/workbench/cases/{v.case_id}"})


# -- the lifecycle ------------------------------------------------------------------

# the note saying the warnings that ask for a check were checked (optional
# body; required by the workflow when the version has such a warning, refused
# when it has none). Its length is counted as given; at least MIN_VISIBLE
# letters or digits a reader can see, so at least as many characters.
ACKNOWLEDGEMENT_BODY = request_body({"type": "object", "properties": {"acknowledgement": {
    "anyOf": [{"type": "string", "minLength": workflow.MIN_VISIBLE["acknowledgement"],
               "maxLength": workflow.LIMITS["reason"]},
              # one note per warning asking for a check, by its code
              {"type": "object", "propertyNames": {"enum": list(workflow.CHECK_WARNINGS)},
               "additionalProperties": {
                   "type": "string", "minLength": workflow.MIN_VISIBLE["acknowledgement"],
                   "maxLength": workflow.LIMITS["reason"]}},
              {"type": "null"}],
    "description": help_text("api.wf_acknowledgement",
                             minimum=workflow.MIN_VISIBLE["acknowledgement"],
                             max=workflow.LIMITS["reason"])}}})


async def _acknowledgement(request: Request) -> Any:
    """The optional body's `acknowledgement` (no body: None)."""
    raw = await request.body()
    return parse_json_object(raw, _lang(request)).get("acknowledgement") if raw.strip() \
        else None


@router.post("/cases/{case_id}/submit", response_model=workflow.CaseView, responses=REFUSALS,
             openapi_extra=ACKNOWLEDGEMENT_BODY)
async def submit(request: Request, case_id: CaseId, user: Anyone) -> JSONResponse:
    """Send a draft for approval (analyst, supervisor); a version whose
    warnings ask for a check (`checks`) needs `acknowledgement`."""
    note = await _acknowledgement(request)
    return _json((await _call(request, workflow.submit, user, case_id, acknowledgement=note,
                              lang=_lang(request))).to_dict())


@router.post("/cases/{case_id}/approve", response_model=workflow.CaseView, responses=REFUSALS,
             openapi_extra=ACKNOWLEDGEMENT_BODY)
async def approve(request: Request, case_id: CaseId, user: Anyone) -> JSONResponse:
    """Approve a submitted version (supervisor; never one they prepared,
    changed last or submitted): its letter is issued, stored and its SHA-256
    entered in the chain. The letter is issued in the addressee's language,
    as the application gives it (`letter_lang`); a `?lang=` naming another
    is refused in words (422, field lang). A version whose warnings ask for
    a check (`checks`) needs `acknowledgement`."""
    asked = request.query_params.get("lang")
    note = await _acknowledgement(request)
    v = await _call(request, workflow.approve, user, case_id, lang=_lang(request),
                    letter_lang=asked, acknowledgement=note)
    return _json(v.to_dict())


@router.post("/cases/{case_id}/return", response_model=workflow.CaseView, responses=REFUSALS,
             openapi_extra=request_body({"type": "object", "required": ["reason"],
                                         "properties": {"reason": {
                                             "type": "string",
                                             "minLength": workflow.MIN_VISIBLE["reason"],
                                             "maxLength": workflow.LIMITS["reason"]}}}))
async def return_case(request: Request, case_id: CaseId, user: Anyone) -> JSONResponse:
    """Return a submitted version to be corrected, with a reason (supervisor)."""
    body = await _body(request)
    v = await _call(request, workflow.return_case, user, case_id, reason=body.get("reason"),
                    lang=_lang(request))
    return _json(v.to_dict())


# -- reading ---------------------------------------------------------------------------

@router.get("/queues/{kind}", response_model=workflow.Page, responses=REFUSALS)
async def queue(request: Request, user: Anyone,
                kind: Annotated[str, Path(description=help_text("api.queue"),
                                          pattern="^(drafts|returned|awaiting|issued)$")],
                page: PageNo = 1, per_page: PerPage = workflow.PER_PAGE) -> JSONResponse:
    """A page of one queue."""
    result = await _call(request, workflow.queue, user, kind, page=page, per_page=per_page)
    return _json(result.to_dict())


@router.get("/search", response_model=workflow.Page, responses=REFUSALS)
async def search(request: Request, user: Anyone,
                 case_id: Annotated[DbId | None, Query()] = None,
                 participant_id: Annotated[str | None, Query(max_length=200)] = None,
                 page: PageNo = 1) -> JSONResponse:
    """Find a case by its number (or a version's id) or by participant id."""
    result = await _call(request, workflow.search, user, case_id=case_id,
                         participant_id=participant_id, page=page)
    return _json(result.to_dict())


@router.get("/cases/{case_id}", response_model=workflow.CaseView, responses=REFUSALS)
async def read(request: Request, case_id: CaseId, user: Anyone) -> JSONResponse:
    """One version of a case: its application, determination and state."""
    return _json((await _call(request, workflow.view, user, case_id)).to_dict())


@router.get("/cases/{case_id}/history", response_model=workflow.CaseHistory,
            responses=REFUSALS)
async def history(request: Request, case_id: CaseId, user: Anyone) -> JSONResponse:
    """Every version of the case, its workflow events (UTC) and the changes
    between versions in words."""
    lang = request.query_params.get("lang")
    return _json((await _call(request, workflow.history, user, case_id,
                              lang=lang if lang in LANGS else None)).to_dict())


@router.get("/cases/{case_id}/letter", response_class=Response,
            responses={**REFUSALS, **PDF})
async def letter(request: Request, case_id: CaseId, user: Anyone,
                 version: Annotated[Version | None, Query()] = None
                 ) -> Response:
    """The letter of a version as PDF: for an approved version the letter
    issued, byte for byte; otherwise a draft marked as such, rendered now."""
    lang = request.query_params.get("lang")
    pdf = await _call(request, workflow.letter, user, case_id, version,
                      lang=lang if lang in LANGS else None)
    return Response(pdf, media_type="application/pdf", headers={
        "Content-Disposition": f'inline; filename="caso-{case_id}.pdf"',
        "Cache-Control": "no-store"})


# -- the auditor's view ---------------------------------------------------------------

@router.get("/audit", response_model=workflow.Page, responses=REFUSALS)
async def audit(request: Request, user: Anyone,
                who: Annotated[str | None, Query(description=(
                    help_text("api.wf_who")))] = None,
                action: Annotated[str | None, Query(description=(
                    help_text("api.wf_action")))] = None,
                case_id: Annotated[ParamInt | None, Query(description=(
                    help_text("api.wf_case", max=MAX_DB_ID)))] = None,
                since: Annotated[ParamDateTime | None, Query(description=(
                    help_text("api.wf_since")))]
                = None,
                until: Annotated[ParamDateTime | None, Query(description=(
                    help_text("api.wf_until")))] = None,
                page: PageNo = 1, per_page: PerPage = workflow.PER_PAGE) -> JSONResponse:
    """The audit trail, newest first, with filters (auditor). A filter the
    store cannot take (a control character, too long, a time out of range)
    is refused (422) naming it. The reading is recorded with the kinds of
    filters used, never their values."""

    def utc(t: datetime | None) -> datetime | None:
        return t.replace(tzinfo=UTC) if t is not None and t.tzinfo is None else t

    result = await _call(request, workflow.audit_view, user, who=who, action=action,
                         case_id=case_id, since=utc(since), until=utc(until),
                         page=page, per_page=per_page, lang=_lang(request))
    return _json(result.to_dict())


@router.get("/audit/verify", responses=REFUSALS)
async def verify(request: Request, user: Anyone) -> JSONResponse:
    """Verify every chain now, as `diferida audit verify` does (auditor): a
    request to verify, which reads every row of the store. The result
    (`intact`, `findings`, `lines`, `at`, `user`) is recorded in the audit
    trail as an `audit.verify` event; the auditor's page shows the latest."""
    done = await _call(request, workflow.verify_now, user)
    return _json(done.to_dict())


@router.get("/exports/{kind}.{fmt}", response_class=Response,
            responses={**REFUSALS, 200: {"content": {"text/csv": {}, XLSX: {}},
                                         "description": said("wf_export")}})
async def export(request: Request, user: Anyone,
                 kind: Annotated[str, Path(pattern="^(cases|events|summary)$")],
                 fmt: Annotated[str, Path(pattern="^(csv|xlsx)$")]) -> Response:
    """Cases (one row per version, with the days from application to
    approval), workflow events, or a summary (counts by state and status),
    as CSV or .xlsx (supervisor, auditor). No names or addresses."""
    data = await _call(request, workflow.export, user, kind, fmt)
    return Response(data, media_type="text/csv; charset=utf-8" if fmt == "csv" else XLSX,
                    headers={"Content-Disposition": f'attachment; filename="{kind}.{fmt}"'})


