"""Letters and reproduction: a version's letter as HTML or PDF, the issued
letter's stored bytes (served only when they match the chain), and
`reproduce` (a stored version recomputed with its stored inputs and
rules)."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from sqlalchemy import select

from ..store import (
    Case,
    Letter,
    Store,
    User,
)
from ..store import WorkflowEvent as WorkflowRow
from .common import READERS, CaseView, Refused, _audit, _refuse, _require, _text, user_lang
from .views import view

#: keys of a determination that are words, not decisions
TEXT_KEYS = ("headline", "explanation", "rules_title")


def reproduce(store: Store, user: User, case_id: int) -> dict[str, Any]:
    """Recompute one stored version with its stored inputs, its stored rules
    content and its as_of date, and compare with the stored result:
    `identical`, `decision_identical` (only words differ), `differences`
    (key, stored, recomputed), `added` (keys a later release added),
    `recomputed`, and `problem` (why it could not be recomputed, or None).
    The caller records the reading."""
    from ...core import InputError, evaluate
    from ...rules import RulesError, rules_from_resolved

    _require(store, user, "read", READERS, case_id)
    case = store.case(case_id)
    if case is None:
        raise _refuse(store, user, "read", Refused("not_found", case_id=case_id),
                      case_id=case_id)
    stored = json.loads(case.result)
    base = {"case_id": case.id, "rules_version": case.rules_version,
            "as_of": case.as_of.isoformat()}
    content = store.rules_content(case.rules_version)
    try:
        if content is None:
            raise RulesError(f"rules version {case.rules_version} is not in the store")
        rules = rules_from_resolved(content, origin=case.rules_version)
        if rules.version != case.rules_version:
            raise RulesError(f"the stored rules content hashes to {rules.version}, "
                             f"not {case.rules_version}")
        recomputed = evaluate(json.loads(case.inputs), as_of=case.as_of, rules=rules,
                              lang=case.lang).to_dict()
    except (RulesError, InputError) as exc:
        return {**base, "identical": False, "decision_identical": False, "differences": [],
                "added": [], "recomputed": None, "problem": str(exc)}
    # A key the stored determination lacks was added by a later release: it is
    # reported under "added", not as a difference in what was decided.
    keys = list(dict.fromkeys([*stored, *recomputed]))
    differences = [{"key": k, "stored": stored.get(k), "recomputed": recomputed.get(k)}
                   for k in keys if k in stored and stored.get(k) != recomputed.get(k)]
    added = sorted(k for k in recomputed if k not in stored)
    return {**base, "identical": not differences,
            "decision_identical": not [x for x in differences if x["key"] not in TEXT_KEYS],
            "differences": differences, "added": added, "recomputed": recomputed,
            "problem": None}


# -- letters --------------------------------------------------------------------------


def _facts(v: CaseView, lang: str, *, approved_by: str | None = None,
           approved_at: datetime | None = None):
    """The facts of one version's letter, as approval gives them."""
    from ...letter import LetterFacts

    return LetterFacts(
        case_id=v.number, version=v.version, lang=lang, inputs=v.inputs, result=v.result,
        as_of=v.as_of, rules_version=v.rules_version, prepared_by=v.changed_by,
        prepared_at=v.created_at, addressee_name=v.name, addressee_address=v.address,
        application_date=v.application_date, approved_by=approved_by,
        approved_at=approved_at, corrects_version=v.corrects_version,
        correction_reason=(v.correction_reason or _text(lang, "no_reason_recorded"))
        if v.corrects_version else None,
        acknowledgements=tuple({"by": a.by, "role": a.role, "at": a.at,
                                "warnings": list(a.warnings), "note": a.note}
                               for a in v.acknowledgements))


def _render(v: CaseView, lang: str, *, approved_by: str | None = None,
            approved_at: datetime | None = None) -> bytes:
    from ...letter import letter_pdf

    return letter_pdf(_facts(v, lang, approved_by=approved_by, approved_at=approved_at))


def _version_id(store: Store, user: User, action: str, case_id: int,
                version: int | None) -> int:
    """The id of version `version` of the case `case_id` belongs to
    (default: `case_id` itself)."""
    if version is None:
        return case_id
    with store.reading() as session:
        case = session.get(Case, case_id)
        found = None if case is None else session.scalar(select(Case.id).where(
            Case.participant_id == case.participant_id, Case.version == version))
    if found is None:
        raise _refuse(store, user, action, Refused("not_found", case_id=case_id),
                      case_id=case_id)
    return found


def letter_html(store: Store, user: User, case_id: int, version: int | None = None, *,
                lang: str | None = None) -> str:
    """The letter of one version as HTML. For an approved version: the letter
    as issued (its language, its approval), whatever `lang`; otherwise the
    draft, marked as such, in `lang` (default: the case's). Refused
    ("invalid", letter_unavailable) when it cannot be written."""
    from ...letter import LetterError
    from ...letter import letter_html as write_html

    _require(store, user, "read", READERS, case_id)
    target = _version_id(store, user, "letter", case_id, version)
    with store.reading() as session:
        stored, pdf = _issued_letter(session, target)
        issued_lang = stored.lang if stored is not None else None
    if stored is not None and pdf is None:  # the letter as issued is in doubt
        raise _letter_refused(store, user, "letter", target)
    v = view(store, user, target, _audit_read=False)
    if issued_lang is not None:
        chosen = user_lang(issued_lang)
        facts = _facts(v, chosen, approved_by=v.approved_by, approved_at=v.approved_at)
    else:
        chosen = user_lang(lang or v.lang)
        facts = _facts(v, chosen)
    try:
        html = write_html(facts)
    except LetterError as exc:
        raise _refuse(store, user, "letter", Refused("invalid", problems=[{
            "field": "lang", "code": "letter_unavailable",
            "message": _text(chosen, "letter_unavailable", detail=str(exc)),
            "value": lang}]), case_id=target) from None
    _audit(store, user, "letter", 200, case_id=target,
           detail="issued letter (html)" if issued_lang else "draft letter (html)")
    return html


def letter(store: Store, user: User, case_id: int, version: int | None = None, *,
           lang: str | None = None) -> bytes:
    """The letter of one version as PDF: for an approved version the bytes
    stored at approval, exactly (whatever `lang`); otherwise rendered now,
    marked as a draft, never stored. `version` picks a version of the case by
    its number (default: the version whose id is `case_id`)."""
    _require(store, user, "read", READERS, case_id)
    target = _version_id(store, user, "letter", case_id, version)
    with store.reading() as session:
        stored, pdf = _issued_letter(session, target)
    if stored is not None and pdf is None:
        raise _letter_refused(store, user, "letter", target)
    if pdf is None:
        from ...letter import LetterError

        v = view(store, user, target, _audit_read=False)
        chosen = user_lang(lang or v.lang)
        try:
            pdf = _render(v, chosen)
        except LetterError as exc:  # e.g. no letter in that language for this version
            raise _refuse(store, user, "letter", Refused("invalid", problems=[{
                "field": "lang", "code": "letter_unavailable",
                "message": _text(chosen, "letter_unavailable", detail=str(exc)),
                "value": lang}]), case_id=target) from None
    _audit(store, user, "letter", 200, case_id=target,
           detail="issued letter" if stored is not None else "draft letter")
    return pdf


def correction_reason(store: Store, case: Case, lang: str) -> str | None:
    """Why a version corrects the one before it: the reason of its
    `corrected` event, else the API's note, else words saying none was
    recorded; None for a first version."""
    if case.supersedes is None:
        return None
    with store.reading() as session:
        reason = session.scalar(select(WorkflowRow.reason).where(
            WorkflowRow.case_id == case.id, WorkflowRow.action == "corrected")
            .order_by(WorkflowRow.id).limit(1))
    return reason or case.note or _text(user_lang(lang), "no_reason_recorded")


def _issued_letter(session, case_id: int) -> tuple[Letter | None, bytes | None]:
    """The letter stored for version `case_id` and its bytes, but the bytes
    only when their SHA-256 is the one its chained `letter_stored` event
    recorded (and the letters row's own): (row, None) when they are not."""
    stored = session.get(Letter, case_id)
    if stored is None:
        return None, None
    pdf = bytes(stored.pdf) if stored.pdf is not None else b""
    chained = session.scalars(select(WorkflowRow.letter_sha256).where(
        WorkflowRow.case_id == case_id, WorkflowRow.action == "letter_stored")).all()
    digest = hashlib.sha256(pdf).hexdigest()
    ok = len(chained) == 1 and chained[0] == digest == stored.sha256
    return stored, pdf if ok else None


def _letter_refused(store: Store, user: User | None, action: str, case_id: int) -> Refused:
    """A stored letter that fails its check: refused and recorded."""
    return _refuse(store, user, action, Refused("letter_check", case_id=case_id),
                   case_id=case_id)


def stored_letter(store: Store, case_id: int, user: User | None = None) -> bytes | None:
    """The PDF issued for an approved version, exactly as issued, or None
    when none was issued. Refused (letter_check, recorded) when the stored
    bytes no longer match the SHA-256 its chained event recorded."""
    with store.reading() as session:
        stored, pdf = _issued_letter(session, case_id)
    if stored is not None and pdf is None:
        raise _letter_refused(store, user, "letter", case_id)
    return pdf
