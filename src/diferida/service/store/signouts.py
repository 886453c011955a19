"""Workbench sessions signed out (table `signed_out_sessions`, migration
0004), shared by every process of the service through the database.

A session is named by the SHA-256 of its random id: the id itself (which,
with the signing key, is the cookie's content) is never stored. A row is
needed only while a copy of the session's cookie could still be good: each
sign-out deletes, in the same transaction, the rows of sessions signed in
before the point its caller names (the workbench: its absolute lifetime,
its idle time and an hour ago; see `diferida.web.workbench.session`).

The sign-out is written with `INSERT ... ON CONFLICT DO NOTHING`: a session
signed out twice at once (two clicks, two tabs) is one row and no error.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from sqlalchemy import Engine, delete, select
from sqlalchemy.dialects import postgresql, sqlite

from .models import SignedOutSession

TABLE = SignedOutSession.__table__


def session_sha256(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8")).hexdigest()


def record_sign_out(engine: Engine, session_id: str, *, signed_in: datetime,
                    signed_out: datetime, forget_before: datetime) -> None:
    """Remember that the session `session_id` was signed out, and forget the
    sessions signed in before `forget_before` (their cookies have expired)."""
    insert = postgresql.insert if engine.dialect.name == "postgresql" else sqlite.insert
    statement = insert(TABLE).values(
        session_sha256=session_sha256(session_id), signed_in_at=signed_in,
        signed_out_at=signed_out).on_conflict_do_nothing(index_elements=["session_sha256"])
    with engine.execution_options(write=True).begin() as conn:
        conn.execute(delete(TABLE).where(TABLE.c.signed_in_at < forget_before))
        conn.execute(statement)


def is_signed_out(engine: Engine, session_id: str) -> bool:
    with engine.connect() as conn:
        return conn.execute(select(TABLE.c.session_sha256).where(
            TABLE.c.session_sha256 == session_sha256(session_id))).first() is not None
