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
    CaseState,
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


Signer = tuple[str, str]  # a full name and a title, as a signature prints them


def signers(store: Store, case_id: int) -> tuple[Signer | None, Signer | None]:
    """Who signs the letter of version `case_id`: its author (who prepared
    it) and, once approved, its approver, each as their profile (`diferida
    users profile`) gives them; None for one without a profile, or not yet."""
    with store.reading() as session:
        author = session.scalar(select(Case.author_id).where(Case.id == case_id))
        approver = session.scalar(select(WorkflowRow.user_id).where(
            WorkflowRow.case_id == case_id, WorkflowRow.action == "approved").limit(1))
    return (store.profile(author) if author is not None else None,
            store.profile(approver) if approver is not None else None)


def ready(store: Store, user: User, action: str, case_id: int, lang: str,
          states: tuple[str, ...], *, approver: User | None = None,
          letter_lang: str | None = None) -> None:
    """Refuse (422, recorded; each problem naming its field) to submit or
    approve a version that lacks what its letter needs (`requirements`).
    A version that does not exist or is not in `states` is left to the
    action's own refusal."""
    with store.reading() as session:
        case = session.get(Case, case_id)
        st = None if case is None else session.scalar(
            select(CaseState).where(CaseState.participant_id == case.participant_id))
    if case is None or st is None or st.case_id != case_id or st.state not in states:
        return
    v = view(store, user, case_id, _audit_read=False)
    problems = requirements(store, v, lang, approver=approver, letter_lang=letter_lang)
    if problems:
        raise _refuse(store, user, action, Refused("invalid", problems=problems),
                      case_id=case_id)


def requirements(store: Store, v: CaseView, lang: str, *, approver: User | None = None,
                 letter_lang: str | None = None) -> list[dict[str, Any]]:
    """What a version still needs before it may be submitted (`approver`
    None) or approved and its letter issued: the addressee's name, postal
    address and language (the letter's, `letter_lang`); the full name and
    title of whoever signs (the version's author, and the approver); for an
    approval, the administrator's letter texts in the letter's language.
    Each as a problem naming its field, in `lang`."""
    from ...i18n import catalog
    from ...letter.texts import missing_texts

    t = catalog(user_lang(lang))["letter_requirements"]
    out: list[dict[str, Any]] = []
    for field in ("name", "address", "letter_lang"):
        if not (getattr(v, field) or "").strip():
            out.append({"field": field, "code": "required", "value": None,
                        "message": t[f"{field}_required"]})
    with store.reading() as session:
        author = session.get(User, session.scalar(select(Case.author_id)
                                                  .where(Case.id == v.case_id)))
    signing = [("prepared_by", author)]
    if approver is not None:
        signing.append(("approved_by", approver))
    for field, who in signing:
        if who is not None and store.profile(who.id) is None:
            out.append({"field": field, "code": "profile_required", "value": None,
                        "message": t["profile_required"].format(name=who.name)})
    if approver is not None and (letter_lang or v.letter_lang):
        issued = user_lang(letter_lang or v.letter_lang)
        missing = missing_texts(issued)
        if missing:
            out.append({"field": "letter_texts", "code": "letter_texts_missing",
                        "value": None, "message": t["texts_missing"].format(
                            lang=t["langs"][issued],
                            missing=", ".join(t["texts"][m] for m in missing))})
    return out


def letter_facts(v: CaseView, lang: str, *, approved_by: str | None = None,
           approved_at: datetime | None = None,
           signed: tuple[Signer | None, Signer | None] = (None, None)):
    """The facts of one version's letter, as approval gives them; `signed`:
    the profiles of who prepared and who approved it (`signers`)."""
    from ...letter import LetterFacts

    prepared, approved = signed
    return LetterFacts(
        case_id=v.number, version=v.version, lang=lang, inputs=v.inputs, result=v.result,
        as_of=v.as_of, rules_version=v.rules_version,
        prepared_by=prepared[0] if prepared else v.changed_by,
        prepared_title=prepared[1] if prepared else None,
        prepared_at=v.created_at, addressee_name=v.name, addressee_address=v.address,
        application_date=v.application_date,
        approved_by=(approved[0] if approved else approved_by) if approved_by else None,
        approved_title=approved[1] if approved and approved_by else None,
        approved_at=approved_at, corrects_version=v.corrects_version,
        correction_reason=(v.correction_reason or _text(lang, "no_reason_recorded"))
        if v.corrects_version else None,
        acknowledgements=tuple({"by": a.by, "role": a.role, "at": a.at,
                                "warnings": list(a.warnings), "note": a.note}
                               for a in v.acknowledgements))


def _render(v: CaseView, lang: str, *, approved_by: str | None = None,
            approved_at: datetime | None = None,
            signed: tuple[Signer | None, Signer | None] = (None, None)) -> bytes:
    from ...letter import letter_pdf

    return letter_pdf(letter_facts(v, lang, approved_by=approved_by, approved_at=approved_at,
                             signed=signed))


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


def _other_language(store: Store, user: User, target: int, issued: str,
                    asked: str | None) -> None:
    """An issued letter asked for in another language than it was issued in:
    refused in words, in the language asked (422, field `lang`): the letter
    issued is the only one, and is not written again in another language."""
    if asked is None or asked == issued:
        return
    from ...i18n import catalog

    v = view(store, user, target, _audit_read=False)
    t = catalog(user_lang(asked))["letter_requirements"]
    raise _refuse(store, user, "letter", Refused("invalid", problems=[{
        "field": "lang", "code": "letter_issued_in_other_language", "value": asked,
        "message": t["issued_in"].format(number=v.number, version=v.version,
                                         issued=t["langs"][user_lang(issued)],
                                         issued_code=issued)}]), case_id=target)


def refuse_other_language(store: Store, user: User, case_id: int, asked: str | None) -> None:
    """For the older API's print route: version `case_id`'s issued letter
    asked for in `asked` (None: not asked) is refused in words when it was
    issued in another language (`_other_language`); nothing when it was not
    issued."""
    with store.reading() as session:
        stored = session.get(Letter, case_id)
    if stored is not None:
        _other_language(store, user, case_id, stored.lang, asked)


def letter_html(store: Store, user: User, case_id: int, version: int | None = None, *,
                lang: str | None = None, asked_lang: str | None = None,
                back: str | None = None) -> str:
    """The letter of one version as HTML. For an approved version: the letter
    as issued (its language, its approval); asked for in another language
    (`asked_lang`, a language the request itself named) it is refused in
    words (`_other_language`). Otherwise the draft, marked as such, in
    `asked_lang` or `lang` (default: the case's). `back`: the address of
    the case's page, linked on screen only (never printed). Refused
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
    if issued_lang is not None:
        _other_language(store, user, target, issued_lang, asked_lang)
    v = view(store, user, target, _audit_read=False)
    if issued_lang is not None:
        chosen = user_lang(issued_lang)
        facts = letter_facts(v, chosen, approved_by=v.approved_by, approved_at=v.approved_at,
                       signed=signers(store, target))
    else:
        # the draft in the letter's language, the addressee's (the page's
        # only while the application does not give one)
        chosen = user_lang(asked_lang or v.letter_lang or lang or v.lang)
        facts = letter_facts(v, chosen, signed=(signers(store, target)[0], None))
    try:
        html = write_html(facts, back=back)
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
    stored at approval, exactly (`lang`, when given, must be the language it
    was issued in: another is refused in words); otherwise rendered now,
    marked as a draft, never stored. `version` picks a version of the case by
    its number (default: the version whose id is `case_id`)."""
    _require(store, user, "read", READERS, case_id)
    target = _version_id(store, user, "letter", case_id, version)
    with store.reading() as session:
        stored, pdf = _issued_letter(session, target)
    if stored is not None and pdf is None:
        raise _letter_refused(store, user, "letter", target)
    if stored is not None:
        _other_language(store, user, target, stored.lang, lang)
    if pdf is None:
        from ...letter import LetterError

        v = view(store, user, target, _audit_read=False)
        chosen = user_lang(lang or v.letter_lang or v.lang)
        try:
            pdf = _render(v, chosen, signed=(signers(store, target)[0], None))
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
