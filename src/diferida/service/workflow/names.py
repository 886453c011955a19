"""People as the pages name them: by the full name of their profile
(`diferida users add --full-name`, `diferida users profile`), never by
their sign-in name where a profile gives one (`common.people`).

- `full_names`: the sign-in names of a page of the trail, as full names;
- `sign_in_name`: what an auditor typed in the trail's user filter (a
  sign-in name, or a full name as the trail shows it) as the sign-in name
  the trail is filtered by;
- `last_changes`: who made the last change of each case of a listing (the
  transition its state and time come from: the approval of an issued case,
  by its approver);
- `trail_subjects`: the user each user event of the trail is about (the
  store records them as `{"name": …, "user_id": …}`), and how the event was
  made (`diferida users add` or `diferida users profile`).

These only read: the page that asks has recorded its own reading."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import func, select

from ..store import STATE_AFTER, AuditEvent, Store, User, UserProfile
from ..store import WorkflowEvent as WorkflowRow
from . import common


def full_names(store: Store, logins: Iterable[str | None]) -> dict[str, str]:
    """{sign-in name: the name pages give them} for the users named (the
    full name of their latest profile, else the sign-in name itself); a name
    no user has is left out."""
    wanted = sorted({n for n in logins if n})
    if not wanted:
        return {}
    with store.reading() as session:
        ids = dict(session.execute(select(User.id, User.name).where(User.name.in_(wanted))).all())
        named = common.people(session, ids)
    return {ids[uid]: full for uid, full in named.items() if uid in ids}


def sign_in_name(store: Store, typed: str | None) -> str | None:
    """The sign-in name the trail's user filter means: `typed` itself when a
    user signs in by it, else the one user whose full name (latest profile)
    it is, spaces and case aside; else `typed` as it was (which then finds
    nothing, as before)."""
    if typed is None or not typed.strip():
        return typed
    with store.reading() as session:
        if session.scalar(select(User.id).where(User.name == typed)) is not None:
            return typed
        latest = (select(UserProfile.user_id, func.max(UserProfile.id).label("last"))
                  .group_by(UserProfile.user_id).subquery())
        rows = session.execute(
            select(User.name, UserProfile.full_name)
            .join(latest, latest.c.user_id == User.id)
            .join(UserProfile, UserProfile.id == latest.c.last)).all()
    wanted = " ".join(typed.split()).casefold()
    found = [login for login, full in rows if " ".join((full or "").split()).casefold() == wanted]
    return found[0] if len(found) == 1 else typed


@dataclass(frozen=True)
class LastChange:
    """The last transition of a case's current version: what it was (the
    workflow's action: created, corrected, submitted, approved, returned)
    and who made it, as pages name them."""

    action: str
    by: str


def last_changes(store: Store, case_ids: Iterable[int]) -> dict[int, LastChange]:
    """{version id: its last transition} for the versions of a listing (a
    page of a queue or of search results, the drafts an import made), read
    500 at a time."""
    ids = sorted(set(case_ids))
    rows: list[tuple[int, str, int]] = []
    with store.reading() as session:
        for start in range(0, len(ids), 500):
            last = (select(WorkflowRow.case_id, func.max(WorkflowRow.id).label("last"))
                    .where(WorkflowRow.case_id.in_(ids[start:start + 500]),
                           WorkflowRow.action.in_(tuple(STATE_AFTER)))
                    .group_by(WorkflowRow.case_id).subquery())
            rows += [(cid, action, uid) for cid, action, uid in session.execute(
                select(WorkflowRow.case_id, WorkflowRow.action, WorkflowRow.user_id)
                .join(last, last.c.last == WorkflowRow.id)).all()]
        named = common.people(session, [uid for _, _, uid in rows])
    return {cid: LastChange(action, named.get(uid, "?")) for cid, action, uid in rows}


@dataclass(frozen=True)
class Subject:
    """The user a user event of the trail is about: their sign-in name, the
    name pages give them, and the command that made the event."""

    login: str
    name: str
    command: str


def trail_subjects(store: Store, event_ids: Iterable[int]) -> dict[int, Subject]:
    """{event id: its subject} for the user events (`user.*`) among
    `event_ids`, whose detail names the user as the store wrote it."""
    ids = sorted(set(event_ids))
    if not ids:
        return {}
    with store.reading() as session:
        rows = session.execute(select(AuditEvent.id, AuditEvent.path, AuditEvent.detail)
                               .where(AuditEvent.id.in_(ids),
                                      AuditEvent.action.like("user.%"))).all()
        about: dict[int, tuple[int, str, str]] = {}
        for event_id, path, detail in rows:
            try:
                said = json.loads(detail or "")
                about[event_id] = (int(said["user_id"]), str(said["name"]), path or "")
            except (ValueError, TypeError, KeyError):
                continue
        names = common.people(session, [uid for uid, _, _ in about.values()])
    return {event_id: Subject(login, names.get(uid, login), path)
            for event_id, (uid, login, path) in about.items()}
