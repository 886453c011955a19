"""Reading cases: one version (`view`), a case's history and its changes
in words, the queues and the search. Each read of a case is recorded."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from sqlalchemy import and_, func, or_, select

from ...i18n import catalog, fmt_date
from ...money import format_money
from ...words import field_label
from ..participant import field_problem, id_problem, normalised_id
from ..schemas import APPLICATION_FIELDS
from ..store import (
    STATE_AFTER,
    Case,
    CaseApplication,
    CaseState,
    Store,
    User,
)
from ..store import WorkflowEvent as WorkflowRow
from . import common
from .common import (
    ACKNOWLEDGED,
    APPROVERS,
    CHECK_WARNINGS,
    PER_PAGE,
    PREPARERS,
    QUEUES,
    READERS,
    Acknowledgement,
    CaseHistory,
    CaseSummary,
    CaseView,
    Page,
    Refused,
    VersionChange,
    WorkflowEvent,
    _audit,
    _case_number,
    _page_args,
    _refuse,
    _require,
    _text,
    contradicted_codes,
    user_lang,
)

# -- reading ------------------------------------------------------------------


def _names(session, ids) -> dict[int, str]:
    return common.people(session, ids)


def _paired(notes: list[Acknowledgement], checks: tuple[str, ...]) -> list[Acknowledgement]:
    """The notes of one action, each with the warning it was written for:
    one note per warning, in the order of the version's checks (a single
    note recorded for several warnings is for them all)."""
    if len(notes) == len(checks):
        return [replace(a, warnings=(code,)) for a, code in zip(notes, checks)]
    return notes


def _build_views(session, user: User, cases: list[Case], st: CaseState | None,
                 number: int) -> list[CaseView]:
    """Views of versions of one case (all of the same participant)."""
    ids = [c.id for c in cases]
    apps = {a.case_id: a for a in session.scalars(
        select(CaseApplication).where(CaseApplication.case_id.in_(ids)))}
    events = list(session.scalars(select(WorkflowRow).where(WorkflowRow.case_id.in_(ids))
                                  .order_by(WorkflowRow.id)))
    first_author = session.scalar(select(Case.author_id).where(Case.id == number))
    names = _names(session, [first_author, *(c.author_id for c in cases),
                             *(e.user_id for e in events)])
    versions = {c.id: c.version for c in session.execute(
        select(Case.id, Case.version).where(Case.participant_id == cases[0].participant_id))}
    out = []
    for c in cases:
        mine = [e for e in events if e.case_id == c.id]
        state = "draft"
        info: dict[str, Any] = {}
        result = json.loads(c.result)
        checks = tuple(w for w in result.get("warnings") or () if w in CHECK_WARNINGS)
        acks: list[Acknowledgement] = []
        pending: list[Acknowledgement] = []  # the notes of the action that follows them
        for e in mine:
            state = STATE_AFTER.get(e.action, state)
            who = names.get(e.user_id, e.user_name)
            if e.action == "corrected":
                info["correction_reason"] = e.reason
            elif e.action == "submitted":
                info.update(submitted_by=who, submitted_at=e.at)
            elif e.action == "approved":
                info.update(approved_by=who, approved_at=e.at)
            elif e.action == "returned":
                info.update(returned_by=who, return_reason=e.reason)
            elif e.action == "letter_stored":
                info["letter_sha256"] = e.letter_sha256
            elif e.action == ACKNOWLEDGED:
                pending.append(Acknowledgement(who, e.role, e.at, checks, e.reason or ""))
            if e.action != ACKNOWLEDGED and pending:
                acks += _paired(pending, checks)
                pending = []
        if c.supersedes and not info.get("correction_reason"):
            # recorded before the workbench: the API's note said why
            info["correction_reason"] = c.note
        current = st is not None and st.case_id == c.id
        a = apps.get(c.id)
        v = CaseView(
            case_id=c.id, number=number, participant_id=c.participant_id, version=c.version,
            state=state, current=current, inputs=json.loads(c.inputs),
            result=result, as_of=c.as_of, lang=c.lang,
            rules_name=result.get("rules_name"), checks=checks, acknowledgements=tuple(acks),
            contradicted=contradicted_codes(result),
            rules_version=c.rules_version, created_at=c.created_at,
            prepared_by=names.get(first_author, "?"), changed_by=names.get(c.author_id, "?"),
            name=a.name if a else None, address=a.address if a else None,
            application_date=a.application_date if a else None, note=a.note if a else None,
            letter_lang=a.letter_lang if a else None, corrects=c.supersedes,
            corrects_version=versions.get(c.supersedes) if c.supersedes else None, **info)
        out.append(_with_can(v, user, st, session, c))
    return out


def _with_can(v: CaseView, user: User, st: CaseState | None, session=None,
              case: Case | None = None) -> CaseView:
    from dataclasses import replace

    can = set()
    if v.current and st is not None:
        if user.role in PREPARERS and v.state in ("draft", "returned", "approved"):
            can.add("correct")
        if user.role in PREPARERS and v.state == "draft":
            can.add("submit")
    barred: tuple[str, ...] = ()
    if v.current and st is not None and user.role in APPROVERS and v.state == "submitted":
        can.add("return")
        if not common.is_own(user, st, session, case):
            can.add("approve")
        else:
            barred = _barred_because(user, st, session, case)
    return replace(v, can=frozenset(can), barred=barred)


def _barred_because(user: User, st: CaseState, session, case: Case | None) -> tuple[str, ...]:
    """Why `user` may not approve the version (maker-checker), read as
    `barred_from_approving` reads it: "version:<n>" for each version up to
    this one they wrote, "submitted" when they sent it for approval."""
    out: list[str] = []
    if session is not None and case is not None:
        written = session.scalars(select(Case.version).where(
            Case.participant_id == case.participant_id, Case.version <= case.version,
            Case.author_id == user.id).order_by(Case.version)).all()
        out += [f"version:{n}" for n in written]
        sent = session.scalar(select(func.count()).select_from(WorkflowRow).where(
            WorkflowRow.case_id == case.id, WorkflowRow.action == "submitted",
            WorkflowRow.user_id == user.id))
        if sent or st.submitted_by == user.id:
            out.append("submitted")
    if not out:  # the state row names them (prepared or changed it last)
        out.append("version:1" if st.prepared_by == user.id else "submitted"
                   if st.submitted_by == user.id else f"version:{st.version}")
    return tuple(out)


def view(store: Store, user: User, case_id: int, *, _audit_read: bool = True) -> CaseView:
    """One version of a case (the version whose id is given)."""
    _require(store, user, "read", READERS, case_id)
    with store.reading() as session:
        case, st, number = _case_read(session, store, user, case_id)
        v = _build_views(session, user, [case], st, number)[0]
    if _audit_read:
        _audit(store, user, "read", 200, case_id=case_id, participant_id=case.participant_id)
    return v


def _case_read(session, store: Store, user: User,
               case_id: int) -> tuple[Case, CaseState | None, int]:
    """The version `case_id` read by `user`, its case's state and case number;
    an unknown id refused (404) and recorded."""
    case = session.get(Case, case_id)
    if case is None:
        raise _refuse(store, user, "read", Refused("not_found", case_id=case_id),
                      case_id=case_id)
    st = session.scalar(select(CaseState).where(CaseState.participant_id == case.participant_id))
    return case, st, _case_number(session, case, st)


def history(store: Store, user: User, case_id: int, *,
            lang: str | None = None) -> CaseHistory:
    """Every version of the case, its events and the changes between
    versions in words (in `lang`, default the case's language); `current`
    is the current version."""
    _require(store, user, "read", READERS, case_id)
    with store.reading() as session:
        case, st, number = _case_read(session, store, user, case_id)
        cases = list(session.scalars(select(Case).where(
            Case.participant_id == case.participant_id).order_by(Case.version)))
        views = _build_views(session, user, cases, st, number)
        rows = list(session.scalars(select(WorkflowRow).where(WorkflowRow.number == number)
                                    .order_by(WorkflowRow.id)))
        names = _names(session, [e.user_id for e in rows])
        events = [WorkflowEvent(e.id, e.at, names.get(e.user_id, e.user_name), e.role,
                                e.action, e.case_id, e.version, e.reason, e.corrects,
                                e.letter_sha256)
                  for e in rows]
    lang = user_lang(lang or views[-1].lang)
    changes = [VersionChange(a.version, b.version, changes_in_words(a, b, lang))
               for a, b in zip(views, views[1:])]
    current = next((v for v in views if v.current), views[-1])
    _audit(store, user, "read", 200, case_id=case_id, participant_id=case.participant_id,
           detail="history")
    return CaseHistory(current, views, events, changes)


def changes_in_words(a: CaseView, b: CaseView, lang: str) -> list[str]:
    """What changed from version a to version b: inputs, application,
    determination status, dates and amounts, one sentence each."""
    lines = []
    empty = _text(lang, "changes.empty")
    for k in sorted(set(a.inputs) | set(b.inputs)):
        old, new = a.inputs.get(k), b.inputs.get(k)
        if old == new:
            continue
        label = field_label(lang, k)
        if old is None:
            lines.append(_text(lang, "changes.input_added", label=label, new=new))
        elif new is None:
            lines.append(_text(lang, "changes.input_removed", label=label, old=old))
        else:
            lines.append(_text(lang, "changes.input", label=label, old=old, new=new))
    langs = catalog(lang)["letter_requirements"]["langs"]
    for k in APPLICATION_FIELDS:
        old, new = getattr(a, k), getattr(b, k)
        if k == "letter_lang":  # the language in words, not its code
            old, new = langs.get(old, old), langs.get(new, new)
        if old != new:
            lines.append(_text(lang, "changes.application", label=_text(lang, f"fields.{k}"),
                               old=_shown(old, lang) if old is not None else empty,
                               new=_shown(new, lang) if new is not None else empty))
    statuses = catalog(lang)["status"]
    if a.result.get("status") != b.result.get("status"):
        lines.append(_text(lang, "changes.status",
                           old=statuses.get(a.result.get("status"), a.result.get("status")),
                           new=statuses.get(b.result.get("status"), b.result.get("status"))))
    for k in ("eligibility_date", "start_date"):
        old, new = a.result.get(k), b.result.get(k)
        if old != new:
            lines.append(_text(lang, "changes.date", label=_text(lang, f"changes.{k}"),
                               old=_date_text(old, lang) or empty,
                               new=_date_text(new, lang) or empty))
    for k in ("annual_amount", "monthly_amount"):
        old, new = a.result.get(k), b.result.get(k)
        if old != new:
            lines.append(_text(lang, "changes.amount", label=_text(lang, f"changes.{k}"),
                               old=_money_text(old) or empty, new=_money_text(new) or empty))
    return lines or [_text(lang, "changes.none")]


def _shown(value: Any, lang: str) -> str:
    if isinstance(value, date):
        return fmt_date(value, lang)
    return str(value).replace("\n", ", ")


def _date_text(value: str | None, lang: str) -> str | None:
    if not value:
        return None
    try:
        return fmt_date(date.fromisoformat(value), lang)
    except ValueError:
        return value


def _money_text(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return format_money(Decimal(value))
    except (InvalidOperation, TypeError):
        return str(value)


# -- queues and search ------------------------------------------------------------


def _summary_page(store: Store, where, order, page: int, per_page: int) -> Page:
    """A page of cases: counted and paged on the queue indexes alone, then
    the page's rows (at most `per_page`) fetched with their names."""
    with store.reading() as session:
        total = session.scalar(select(func.count()).select_from(CaseState).where(where)) or 0
        numbers = list(session.scalars(select(CaseState.number).where(where).order_by(*order)
                                       .limit(per_page).offset((page - 1) * per_page)))
        rows = session.execute(
            select(CaseState.number, CaseState.case_id, CaseState.participant_id,
                   CaseState.version, CaseState.state, CaseApplication.name, User.name,
                   CaseState.updated_at, CaseState.status)
            .outerjoin(CaseApplication, CaseApplication.case_id == CaseState.case_id)
            .outerjoin(User, User.id == CaseState.changed_by)
            .where(CaseState.number.in_(numbers)).order_by(*order)).all() if numbers else []
        items = [CaseSummary(number, case_id, pid, version, state, name, author or "?",
                             updated, status)
                 for number, case_id, pid, version, state, name, author, updated, status
                 in rows]
    return Page(items, page, per_page, total)


def queue(store: Store, user: User, kind: str, *, page: int = 1,
          per_page: int = PER_PAGE) -> Page:
    """A page of CaseSummary. kind: "drafts" (my drafts, newest change
    first), "returned" (returned to me, newest first), "awaiting" (submitted
    and waiting, oldest first: for a supervisor those they may approve, for
    an analyst those they submitted, for an auditor all), "issued" (approved,
    most recent first). A version is "mine" when I made it."""
    _require(store, user, "read", READERS)
    if kind not in QUEUES:
        raise _refuse(store, user, "read", Refused("invalid", problems=[{
            "field": "kind", "code": "unknown_queue",
            "message": _text(user_lang(None), "unknown_queue", value=kind), "value": kind}]))
    page, per_page = _page_args(page, per_page)
    newest = (CaseState.updated_at.desc(), CaseState.number.desc())
    if kind == "drafts":
        where = and_(CaseState.changed_by == user.id, CaseState.state == "draft")
        order = newest
    elif kind == "returned":
        where = and_(CaseState.changed_by == user.id, CaseState.state == "returned")
        order = newest
    elif kind == "awaiting":
        where = CaseState.state == "submitted"
        if user.role == "supervisor":
            where = and_(where, CaseState.prepared_by != user.id,
                         CaseState.changed_by != user.id,
                         or_(CaseState.submitted_by.is_(None),
                             CaseState.submitted_by != user.id))
        elif user.role == "analyst":
            where = and_(where, or_(CaseState.changed_by == user.id,
                                    CaseState.submitted_by == user.id))
        order = (CaseState.updated_at, CaseState.number)
    else:
        where = CaseState.state == "approved"
        order = newest
    return _summary_page(store, where, order, page, per_page)


def search(store: Store, user: User, *, case_id: int | None = None,
           participant_id: str | None = None, page: int = 1,
           per_page: int = PER_PAGE) -> Page:
    """Cases by case number (or the id of any of its versions) or by
    participant id (exact, surrounding spaces ignored): a page of
    CaseSummary (at most one case each)."""
    _require(store, user, "read", READERS)
    lang = user_lang(None)
    page, per_page = _page_args(page, per_page)
    pid = None
    if participant_id is not None:
        bad = id_problem(lang, participant_id) if isinstance(participant_id, str) else None
        pid = normalised_id(participant_id) if bad is None else None
        if pid is None:
            raise _refuse(store, user, "search", Refused("invalid", problems=[
                bad or field_problem(lang, "participant_id", "blank", participant_id)]))
    if case_id is None and pid is None:
        raise _refuse(store, user, "search", Refused("invalid", problems=[{
            "field": None, "code": "search_needs", "message": _text(lang, "search_needs"),
            "value": None}]))
    conditions = []
    if pid is not None:
        conditions.append(CaseState.participant_id == pid)
    if case_id is not None:
        with store.reading() as session:
            owner = session.scalar(select(Case.participant_id).where(Case.id == case_id))
        conditions.append(CaseState.participant_id == owner if owner is not None
                          else CaseState.number == case_id)
    result = _summary_page(store, and_(*conditions), (CaseState.number,), page, per_page)
    # what was typed is recorded as its kind, never as its text (a name or a
    # birth date typed into the search box would otherwise be in the trail);
    # the number of the case found is the case's, not what was typed
    kinds = " and ".join(k for k, v in (("case number", case_id), ("participant id", pid))
                         if v is not None)
    _audit(store, user, "search", 200,
           case_id=result.items[0].number if len(result.items) == 1 else None,
           detail=f"by {kinds}: {result.total} found")
    return result
