"""The actions that change a case: open, import, correct, submit, approve,
return. Each checks the role and the state, writes the new version or event
in one transaction, and records itself (or its refusal) in the audit
trail."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import select

from ...determination import Determination
from ...i18n import DEFAULT_LANG, LANGS
from ..participant import control_character
from ..store import (
    Case,
    CaseConflict,
    CaseProblem,
    CaseState,
    NewEvent,
    Store,
    User,
    WorkflowConflict,
)
from . import common
from .applications import _evaluate, _parse_application, _Parsed
from .common import (
    APPROVERS,
    CHECK_WARNINGS,
    LIMITS,
    METHOD,
    MIN_VISIBLE,
    PREPARERS,
    Acknowledgement,
    CaseView,
    ImportResult,
    Refused,
    _audit,
    _refuse,
    _require,
    _text,
    user_lang,
    visible_letters,
)
from .imports import _decide_import, _store_imported
from .letters import _render, ready, signers
from .views import view


def _store_version(store: Store, user: User, action: str, parsed: _Parsed,
                   d: Determination, lang: str, supersedes: int | None,
                   reason: str | None) -> Case:
    inputs = dict(parsed.fields)
    inputs["participant_id"] = d.participant_id
    rules = parsed.rules

    def event(case: Case) -> NewEvent:
        return NewEvent(f"workflow.{action}", METHOD, f"workflow.{action}", 201, user=user,
                        case_id=case.id, participant_id=case.participant_id,
                        detail=f"version {case.version}" + (
                            f", corrects {case.supersedes}" if case.supersedes else ""))

    try:
        return store.record_case(
            participant_id=d.participant_id, inputs=inputs, result=d.to_dict(),
            rules_version=rules.version, rules_name=rules.name, rules_content=rules.resolved,
            as_of=d.as_of, lang=lang, author=user, supersedes=supersedes, note=None,
            event=event, application=parsed.application, reason=reason)
    except CaseConflict as exc:
        code = {"case_exists": "exists", "stale_version": "stale"}.get(exc.code, exc.code)
        raise _refuse(store, user, action, Refused(code, current=exc.current_id,
                                                   case_id=supersedes),
                      case_id=supersedes, participant_id=d.participant_id) from None
    except CaseProblem as exc:
        raise _refuse(store, user, action, Refused("not_found", case_id=exc.value),
                      case_id=supersedes) from None


def open_draft(store: Store, user: User, application: Mapping[str, Any], *, lang: str,
               as_of: date | None = None) -> CaseView:
    """A new case (version 1, draft) from an application: the rules §1 fields
    plus name, address, application_date (YYYY-MM-DD) and note. Values may be
    text as typed in a form or JSON values."""
    lang = lang if lang in LANGS else DEFAULT_LANG
    _require(store, user, "open", PREPARERS)
    parsed = _parse_application(application, lang)
    try:
        d = _evaluate(parsed, lang, as_of)
    except Refused as refusal:
        raise _refuse(store, user, "open", refusal) from None
    case = _store_version(store, user, "open", parsed, d, lang, None, None)
    return view(store, user, case.id, _audit_read=False)


def import_applications(store: Store, user: User, data: bytes, filename: str, *,
                        lang: str, as_of: date | None = None,
                        limits: Any = None) -> ImportResult:
    """Drafts from a CSV or .xlsx of applications (columns: the rules §1 fields
    and name, address, application_date, note).

    The file is read by the batch readers within `limits` (a
    `batch.limits.Limits`; by default an upload's, `settings.upload_limits`,
    as for POST /api/v1/batches): rows, cells and text once read, and an
    .xlsx's declared area and unzipped size, checked before the file is read
    where the file tells, else chunk by chunk as it is read. A file over one
    is Refused("too_large") (413), its message naming the limit. The file is
    decided by the population pass (`batch.population`), a chunk at a time
    and column-wise: the engine's checks of the rules §1 fields and the
    checks of `_parse_application` on the application's columns, with the
    same messages (`_import_problems`). Nothing is stored before the whole
    file is decided; the drafts are then stored IMPORT_BATCH to a
    transaction (`Store.record_drafts`, one audit event per transaction).

    Every rejected row is named with its row number, participant id, field
    and reason; rows in = drafts created + rows rejected. An id given again
    later in the file is rejected (duplicate_in_file), and so is an id that
    already has a case (exists): those are recorded in one audit event with
    their count. A file that cannot be read at all is Refused("invalid")
    with the reader's message."""
    from ...batch.errors import FileProblem
    from ...batch.limits import TOO_LARGE
    from ..settings import upload_limits

    lang = lang if lang in LANGS else DEFAULT_LANG
    _require(store, user, "import", PREPARERS)
    try:
        decided = _decide_import(data, filename, lang, as_of,
                                 limits if limits is not None else upload_limits())
    except FileProblem as exc:
        code = "too_large" if exc.code in TOO_LARGE else "invalid"
        raise _refuse(store, user, "import", Refused(code, problems=[{
            "field": "file", "code": exc.code, "message": exc.text(lang),
            "value": None, "line": exc.line}])) from None
    created, rejected, exists = _store_imported(store, user, decided, lang)
    result = ImportResult(decided.rows_in, created, rejected)
    if result.rows_in != len(created) + result.rows_rejected:
        from ...batch.population import AccountingError

        raise AccountingError(f"import: {result.rows_in} rows in, {len(created)} drafts, "
                              f"{result.rows_rejected} rejected")
    if exists:
        _audit(store, user, "import", Refused.STATUS["exists"],
               detail=f"refused: exists, {exists} rows (participants with a case)")
    _audit(store, user, "import", 200,
           detail=f"{result.rows_in} rows: {len(created)} drafts, "
                  f"{result.rows_rejected} rejected")
    return result


# -- transitions ------------------------------------------------------------------


def _note(store: Store, user: User, action: str, value: Any, lang: str, case_id: int,
          field: str, required: str, kind: str | None = None) -> str:
    """A text the person writes for an action (a reason, a note saying what
    was checked): the one check of both. Stripped of the spaces around it,
    required, without control characters, at most LIMITS["reason"]
    characters, and holding at least MIN_VISIBLE[field] letters or digits a
    reader can see (`common.visible_letters`: read in NFKC form, format
    characters, controls, marks, spaces, fillers and punctuation not
    counted), so that a note made of invisible characters or of a dot never
    stands in the chain as someone's record. Otherwise refused (422,
    recorded) naming `field`, with the message `required` when it is
    missing. The text is kept as typed (only the spaces around it trimmed):
    the check reads its normalised form and never changes it."""
    kind = kind or field  # the kind of text (MIN_VISIBLE's key), when field names one of several
    text = value.strip() if isinstance(value, str) else ""
    minimum, seen = MIN_VISIBLE[kind], 0
    problem = None
    if not text:
        problem = "required"
    elif "\x00" in text or control_character(text.replace("\n", "").replace("\r", "")):
        problem = "control_character"
    elif len(value) > LIMITS["reason"]:  # as given, as the API's document counts it
        problem = "too_long"
    else:
        seen = visible_letters(text)
        if seen == 0:
            problem = "invisible_text"
        elif seen < minimum:
            problem = "too_short"
    if problem is not None:
        from .. import messages

        if problem == "required":
            message = required
        elif problem in ("invisible_text", "too_short"):
            message = _text(lang, f"note.{problem}", field_text=_text(lang, f"note.{kind}"),
                            minimum=minimum, count=seen)
        else:
            message = messages.text(lang, problem, field, limit=LIMITS["reason"], char="?")
        raise _refuse(store, user, action, Refused("invalid", problems=[{
            "field": field, "code": f"{kind}_required" if problem == "required" else problem,
            "message": message, "value": None}]), case_id=case_id)
    return text


def _reason(store: Store, user: User, action: str, reason: Any, lang: str,
            case_id: int) -> str:
    return _note(store, user, action, reason, lang, case_id, "reason",
                 _text(lang, "reason_required"))


def _conflict(store: Store, user: User, action: str, exc: WorkflowConflict) -> Refused:
    values = dict(exc.values)
    if exc.code == "wrong_state":
        values["action"] = action
    return _refuse(store, user, action, Refused(exc.code, **values),
                   case_id=exc.values.get("case_id"))


def correct(store: Store, user: User, case_id: int, application: Mapping[str, Any], *,
            reason: str, lang: str, as_of: date | None = None) -> CaseView:
    """A new version of the case (draft) from a corrected application,
    naming the version it corrects and why (`reason`, required). The
    participant id cannot change (it is the case's)."""
    lang = lang if lang in LANGS else DEFAULT_LANG
    _require(store, user, "correct", PREPARERS, case_id)
    case = store.case(case_id)
    if case is None:
        raise _refuse(store, user, "correct", Refused("not_found", case_id=case_id),
                      case_id=case_id)
    why = _reason(store, user, "correct", reason, lang, case_id)
    app = dict(application)
    app["participant_id"] = case.participant_id
    parsed = _parse_application(app, lang)
    try:
        d = _evaluate(parsed, lang, as_of)
    except Refused as refusal:
        raise _refuse(store, user, "correct", refusal, case_id=case_id) from None
    new = _store_version(store, user, "correct", parsed, d, lang, case_id, why)
    return view(store, user, new.id, _audit_read=False)


def _checks_of(case: Case | None) -> tuple[str, ...]:
    """The warnings of a version that ask someone to check its inputs."""
    if case is None:
        return ()
    warnings = json.loads(case.result).get("warnings") or ()
    return tuple(w for w in warnings if w in CHECK_WARNINGS)


def contradicted(case: Case | None, lang: str) -> list[dict[str, Any]]:
    """The checks of a stored version that its own facts contradict, as
    problems (`common.contradicted`)."""
    if case is None:
        return []
    return common.contradicted(json.loads(case.result), json.loads(case.inputs), case.as_of,
                               lang)


def _acknowledgement(store: Store, user: User, action: str, note: Any, lang: str,
                     case_id: int, checks: tuple[str, ...]) -> dict[str, str] | None:
    """The notes saying what was checked and found, one per warning asking
    for a check (CHECK_WARNINGS), as {warning: note}: required when the
    version has any (refused, naming the field, without one). `note` is a
    mapping {warning: note}, or a text when the version has exactly one such
    warning; a version with several needs one note each (field
    `acknowledgement.<warning>`). None when the version has none and none is
    given. A note given for a version without such a warning, or for a
    warning it does not have, is checked as any note is (too long,
    invisible, ...) and then refused (acknowledgement_not_asked): there is
    nothing for it to record, and a note is never dropped without a word."""
    if checks:
        if isinstance(note, Mapping):
            notes = dict(note)
        elif len(checks) == 1 or note is None:
            notes = {checks[0]: note} if len(checks) == 1 else {}
        else:
            if isinstance(note, str) and note.strip():
                _note(store, user, action, note, lang, case_id, "acknowledgement",
                      _text(lang, "acknowledgement_each", warnings=check_names(checks, lang)))
            raise _refuse(store, user, action, Refused("invalid", problems=[{
                "field": "acknowledgement", "code": "acknowledgement_each",
                "message": _text(lang, "acknowledgement_each",
                                 warnings=check_names(checks, lang)),
                "value": None}]), case_id=case_id)
        out: dict[str, str] = {}
        for code in checks:
            field = "acknowledgement" if len(checks) == 1 else f"acknowledgement.{code}"
            out[code] = _note(store, user, action, notes.get(code), lang, case_id, field,
                              _text(lang, "acknowledgement_required",
                                    warnings=check_names((code,), lang)),
                              kind="acknowledgement")
        extra = [k for k in notes if k not in checks]
        if extra:
            raise _refuse(store, user, action, Refused("invalid", problems=[{
                "field": f"acknowledgement.{k}", "code": "acknowledgement_not_asked",
                "message": _text(lang, "acknowledgement_not_this",
                                 warning=_text(lang, f"checks.{k}") if k in CHECK_WARNINGS
                                 else str(k)[:40]),
                "value": None} for k in extra]), case_id=case_id)
        return out
    if note is None:
        return None
    not_asked = _text(lang, "acknowledgement_not_asked")
    if isinstance(note, str) and note.strip():
        _note(store, user, action, note, lang, case_id, "acknowledgement", not_asked)
    raise _refuse(store, user, action, Refused("invalid", problems=[{
        "field": "acknowledgement", "code": "acknowledgement_not_asked",
        "message": not_asked, "value": None}]), case_id=case_id)


def _stop_contradicted(store: Store, user: User, action: str, case: Case | None, lang: str,
                       case_id: int) -> None:
    problems = contradicted(case, lang)
    if problems:
        raise _refuse(store, user, action, Refused("invalid", problems=problems),
                      case_id=case_id)


def check_names(checks: tuple[str, ...] | list[str], lang: str) -> str:
    """The warnings asking for a check, named in words and listed."""
    from ...i18n import fmt_date
    from ...rules import load_rules

    # the day Act 3-2013 froze accruals, from the rules data (rules §9)
    frozen = fmt_date(load_rules().act_3_2013.accruals_frozen_after, lang)
    names = [_text(lang, f"checks.{c}", date=frozen) for c in checks]
    if len(names) < 2:
        return "".join(names)
    return ", ".join(names[:-1]) + _text(lang, "checks.and") + names[-1]


def submit(store: Store, user: User, case_id: int, *, acknowledgement: str | None = None,
           lang: str = DEFAULT_LANG) -> CaseView:
    """Send a draft for approval. A version whose warnings ask for a check
    (CHECK_WARNINGS) is sent only with `acknowledgement`, a note saying what
    was checked, chained as an `acknowledged` workflow event."""
    _require(store, user, "submit", PREPARERS, case_id)
    lang = lang if lang in LANGS else DEFAULT_LANG
    ready(store, user, "submit", case_id, lang, ("draft",))  # addressee, who signs
    with store.reading() as session:
        case = session.get(Case, case_id)
        st = None if case is None else session.scalar(
            select(CaseState).where(CaseState.participant_id == case.participant_id))
    # a version that cannot be submitted is refused for that (the transition's
    # stale or wrong_state), not for a missing note
    sendable = _precheck(case, st, case_id, ("draft",), "submit") is None
    if sendable:  # a check the facts contradict stops it, whatever the note
        _stop_contradicted(store, user, "submit", case, lang, case_id)
    checks = _checks_of(case) if sendable else ()
    note = _acknowledgement(store, user, "submit", acknowledgement, lang, case_id,
                            checks) if sendable else None
    try:
        store.transition(case_id, user, "submitted", from_states=("draft",),
                         to_state="submitted", acknowledged=_in_order(note, checks),
                         event=NewEvent(
                             "workflow.submit", METHOD, "workflow.submit", 200, user=user,
                             case_id=case_id, detail=_ack_detail(note, checks)))
    except WorkflowConflict as exc:
        raise _conflict(store, user, "submit", exc) from None
    return view(store, user, case_id, _audit_read=False)


def _in_order(notes: dict[str, str] | None, checks: tuple[str, ...]) -> tuple[str, ...] | None:
    # one `acknowledged` event per warning, in the order of the version's
    # checks (views.py pairs them back)
    return None if notes is None else tuple(notes[c] for c in checks)


def _ack_detail(note: dict[str, str] | None, checks: tuple[str, ...]) -> str | None:
    # the audit event names the warnings checked by code; the note is in the
    # workflow event (a note may name the person: never in the trail's detail)
    return f"acknowledged warnings: {', '.join(checks)}" if note is not None else None


def approve(store: Store, user: User, case_id: int, *, lang: str | None = None,
            letter_lang: str | None = None,
            acknowledgement: str | None = None) -> CaseView:
    """Approve a submitted version: its letter is rendered once
    (`diferida.letter.letter_pdf`), stored, and its SHA-256 entered in the
    chain. The letter is issued in the addressee's language, as the
    version's application gives it (`CaseView.letter_lang`), whatever the
    approver's page: `lang` is the language of the refusals' messages (the
    approver's; default the case's). `letter_lang`, when a request names a
    language for the letter, must be the application's: another is refused
    in words (422, field lang), never followed or ignored. Refused
    (own_case) to a supervisor who prepared the case, changed it last or
    submitted it. A version whose warnings ask for a check is approved only
    with `acknowledgement` (the supervisor's note), chained before the
    approval and stated in the letter with the analyst's."""
    _require(store, user, "approve", APPROVERS, case_id)
    with store.reading() as session:
        case = session.get(Case, case_id)
        st = None if case is None else session.scalar(
            select(CaseState).where(CaseState.participant_id == case.participant_id))
        pre = _precheck(case, st, case_id, ("submitted",), "approve")
        own = pre is None and common.is_own(user, st, session, case)
    if pre is not None:
        raise _refuse(store, user, "approve", pre, case_id=case_id)

    def check(session, locked: Case, state: CaseState) -> None:
        # again inside the approving transaction, the case's row locked
        if common.is_own(user, state, session, locked):
            raise WorkflowConflict("own_case", case_id=case_id)

    if own:
        raise _refuse(store, user, "approve", Refused("own_case", case_id=case_id),
                      case_id=case_id)
    at = datetime.now(UTC)
    shown = user_lang(lang or case.lang)
    addressee = _letter_lang_of(store, case_id)
    if letter_lang is not None and addressee is not None and letter_lang != addressee:
        raise _refuse(store, user, "approve", _lang_differs(shown, letter_lang, addressee),
                      case_id=case_id)
    # addressee (with the language), names and titles of who signs, the
    # administrator's texts in the letter's language
    ready(store, user, "approve", case_id, shown, ("submitted",), approver=user,
          letter_lang=addressee)
    letter_lang = str(addressee)
    _stop_contradicted(store, user, "approve", case, shown, case_id)
    checks = _checks_of(case)
    note = _acknowledgement(store, user, "approve", acknowledgement, shown, case_id, checks)
    v = view(store, user, case_id, _audit_read=False)
    if note is not None:  # the letter states it with the analyst's
        with store.reading() as session:
            me = common.people(session, [user.id]).get(user.id, user.name)
        v = replace(v, acknowledgements=(*v.acknowledgements, *(Acknowledgement(
            me, user.role, at, (code,), note[code]) for code in checks)))
    from ...letter import LetterError

    try:
        pdf = _render(v, letter_lang, approved_by=user.name, approved_at=at,
                      signed=(signers(store, case_id)[0], store.profile(user.id)))
    except LetterError as exc:  # the facts cannot be written as a letter: nothing issued
        raise _refuse(store, user, "approve", Refused("invalid", problems=[{
            "field": None, "code": "letter_unavailable",
            "message": _text(letter_lang, "letter_unavailable", detail=str(exc)),
            "value": None}]), case_id=case_id) from None
    try:
        store.transition(case_id, user, "approved", from_states=("submitted",),
                         to_state="approved", check=check, letter=(pdf, letter_lang), at=at,
                         acknowledged=_in_order(note, checks),
                         event=NewEvent("workflow.approve", METHOD, "workflow.approve", 200,
                                        user=user, case_id=case_id,
                                        participant_id=case.participant_id,
                                        detail="letter sha256 "
                                               + hashlib.sha256(pdf).hexdigest()
                                               + (f"; {_ack_detail(note, checks)}"
                                                  if note is not None else "")))
    except WorkflowConflict as exc:
        raise _conflict(store, user, "approve", exc) from None
    return view(store, user, case_id, _audit_read=False)


def _letter_lang_of(store: Store, case_id: int) -> str | None:
    """The addressee's language as version `case_id`'s application gives it."""
    from ..store import CaseApplication

    with store.reading() as session:
        return session.scalar(select(CaseApplication.letter_lang)
                              .where(CaseApplication.case_id == case_id))


def _lang_differs(lang: str, asked: str, letter: str) -> Refused:
    from ...i18n import catalog

    t = catalog(lang)["letter_requirements"]
    return Refused("invalid", problems=[{
        "field": "lang", "code": "letter_lang_differs", "value": asked,
        "message": t["lang_differs"].format(letter=t["langs"][letter],
                                            asked=t["langs"].get(asked, asked))}])


def _precheck(case: Case | None, st: CaseState | None, case_id: int,
              states: tuple[str, ...], action: str) -> Refused | None:
    if case is None:
        return Refused("not_found", case_id=case_id)
    if st is None or st.case_id != case_id:
        return Refused("stale", case_id=case_id, current=st.case_id if st else None)
    if st.state not in states:
        return Refused("wrong_state", case_id=case_id, state=st.state, action=action)
    return None


def return_case(store: Store, user: User, case_id: int, *, reason: str,
                lang: str = DEFAULT_LANG) -> CaseView:
    """Return a submitted version to be corrected, with a reason (required)."""
    _require(store, user, "return", APPROVERS, case_id)
    why = _reason(store, user, "return", reason, lang, case_id)
    try:
        store.transition(case_id, user, "returned", from_states=("submitted",),
                         to_state="returned", reason=why, event=NewEvent(
                             "workflow.return", METHOD, "workflow.return", 200, user=user,
                             case_id=case_id))
    except WorkflowConflict as exc:
        raise _conflict(store, user, "return", exc) from None
    return view(store, user, case_id, _audit_read=False)
