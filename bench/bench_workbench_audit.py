"""Speed of the auditor's page (/analista/auditoria) with 100,000 cases
stored in SQLite.

Fills a store as bench_workbench_queue.py does (N cases of 8 users, with
their applications, workflow events and states, in their hash chains), then
adds to the audit trail what the office's work leaves there: EVENTS more
events a case (reads, submissions, approvals, searches), in the audit chain
(`audit verify` passes on the result). Then, through the real application
(TestClient), signed in as an auditor, times:

- GET /analista/auditoria: the page as it opens (the newest events and the
  last verification recorded; the chains are not read);
- the filters posted: a user, an action, a case, a week, a deep page;
- once, "Verificar ahora" (every chain read again): for information, it is
  the cost the page no longer pays on arrival.

Goal: median under 1 s for the page and every filter.

    .venv/bin/python bench/bench_workbench_audit.py [--cases 100000] [--events 4] [--repeat 15]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import insert, select, update

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_workbench_queue import fill, timed  # noqa: E402

from diferida.service.store import Store  # noqa: E402
from diferida.service.store.chain import row_hash  # noqa: E402
from diferida.service.store.models import AuditEvent, ChainHead  # noqa: E402

ACTIONS = [("workflow.read", 200, None), ("workflow.submit", 200, None),
           ("workflow.search", 200, "by participant id: 1 found"),
           ("workflow.approve", 200, None), ("workflow.letter", 200, "draft letter")]
BLOCK = 20_000
PASSWORD = "auditor-bench-password-1"


def more_events(store: Store, per_case: int) -> int:
    """`per_case` more audit events for each case, appended to the audit chain."""
    heads = ChainHead.__table__
    with store.engine.connect() as conn:
        head = conn.execute(select(heads).where(heads.c.chain == "audit_events")).one()
        users = conn.execute(select(AuditEvent.case_id, AuditEvent.participant_id,
                                    AuditEvent.user_id, AuditEvent.user_name,
                                    AuditEvent.role, AuditEvent.at)
                             .where(AuditEvent.action == "workflow.open")
                             .order_by(AuditEvent.id)).all()
    length, last_id, last_hash = head.length, head.last_id or 0, head.last_hash
    rows: list[dict] = []
    added = 0

    def flush() -> None:
        with store.engine.begin() as conn:
            conn.execute(insert(AuditEvent), rows)
        rows.clear()

    for case_id, pid, uid, name, role, at in users:
        for k in range(per_case):
            action, status, detail = ACTIONS[k % len(ACTIONS)]
            last_id += 1
            row = {"id": last_id, "at": at + timedelta(minutes=k + 1), "user_id": uid,
                   "user_name": name, "role": role, "action": action, "case_id": case_id,
                   "participant_id": pid, "method": "WORKFLOW", "path": action,
                   "status_code": status, "detail": detail, "prev_hash": last_hash}
            row["row_hash"] = last_hash = row_hash("audit_events", last_hash, row)
            rows.append(row)
            added += 1
            if len(rows) >= BLOCK:
                flush()
                print(f"  {added:,} more audit events", file=sys.stderr, end="\r")
    if rows:
        flush()
    with store.engine.begin() as conn:
        conn.execute(update(heads).where(heads.c.chain == "audit_events").values(
            length=length + added, last_id=last_id, last_hash=last_hash))
    print(file=sys.stderr)
    return added


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--events", type=int, default=4,
                        help="Audit events a case besides its opening (default 4).")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--db", type=Path, default=None,
                        help="Keep the filled store in this SQLite file (reused when it "
                             "exists) instead of a temporary one.")
    args = parser.parse_args()
    os.environ.setdefault("DIFERIDA_PASSWORD_PROFILE", "CHEAPEST")  # one sign-in, not timed
    from fastapi.testclient import TestClient

    from diferida.server import create_app
    from diferida.service.settings import Settings
    from diferida.service.workflow import hash_password

    with tempfile.TemporaryDirectory() as tmp:
        path = args.db or Path(tmp) / "bench.db"
        reuse = path.exists()
        url = f"sqlite:///{path}"
        store = Store(url)
        store.upgrade()
        if not reuse:
            t = time.perf_counter()
            fill(store, args.cases)
            added = more_events(store, args.events)
            store.add_user("auditor0", "auditor")
            store.set_password("auditor0", hash_password(PASSWORD))
            print(f"filled {args.cases:,} cases and {added + args.cases:,} audit events in "
                  f"{time.perf_counter() - t:.0f} s", file=sys.stderr)
        cases = store.count_cases()
        with store.engine.connect() as conn:
            events = conn.execute(select(ChainHead.length)
                                  .where(ChainHead.chain == "audit_events")).scalar_one()
        store.dispose()
        app = create_app(Settings(database_url=url, rate_limit_public="off"))
        with TestClient(app) as c:
            page = c.get("/analista/entrar")
            token = re.search(r'name="csrf_token" value="([^"]*)"', page.text).group(1)
            r = c.post("/analista/entrar", data={"name": "auditor0", "password": PASSWORD,
                                                 "csrf_token": token}, follow_redirects=False)
            assert r.status_code == 303, r.status_code
            token = re.search(r'name="csrf_token" value="([^"]*)"',
                              c.get("/analista/auditoria").text).group(1)

            def get():
                r = c.get("/analista/auditoria")
                assert r.status_code == 200 and 'id="audit-events"' in r.text, r.status_code
                return r

            def post(**data):
                def go():
                    r = c.post("/analista/auditoria", data={**data, "csrf_token": token})
                    assert r.status_code == 200, (data, r.status_code)
                    return r
                return go

            mid = cases // 2
            week = (datetime(2025, 1, 1, tzinfo=UTC) + timedelta(minutes=mid * 5)).date()
            until = week + timedelta(days=6)
            pages = {
                "GET /analista/auditoria (as it opens)": get,
                "filter: a user": post(quien="analista0"),
                "filter: an action": post(accion="workflow.approve"),
                "filter: a case": post(caso=str(mid)),
                "filter: a week": post(desde=week.isoformat(), hasta=until.isoformat()),
                "filter: a user and an action": post(quien="supervisor1",
                                                     accion="workflow.approve"),
                "no filter, page 1000": post(pagina="1000"),
            }
            results = {}
            for name, fn in pages.items():
                median, p95 = timed(fn, args.repeat)
                results[name] = {"median_ms": round(median, 1), "p95_ms": round(p95, 1)}
                print(f"{name:<40} median {median:8.1f} ms   p95 {p95:8.1f} ms")
            t = time.perf_counter()
            r = c.post("/analista/auditoria", data={"verificar": "1", "csrf_token": token})
            verify_s = time.perf_counter() - t
            assert r.status_code == 200 and 'data-intact="yes"' in r.text, r.status_code
            print(f"{'Verificar ahora (once, every chain)':<40} {verify_s:8.1f} s")
            median, p95 = timed(get, args.repeat)
            assert 'id="verify-last"' in get().text
            results["GET after a verification"] = {"median_ms": round(median, 1),
                                                   "p95_ms": round(p95, 1)}
            print(f"{'GET after a verification':<40} median {median:8.1f} ms   "
                  f"p95 {p95:8.1f} ms")
        worst = max(r["median_ms"] for r in results.values())
        print(f"{cases:,} cases, {events:,} audit events; worst median: {worst:.1f} ms "
              f"(goal: under 1000 ms) — {'met' if worst < 1000 else 'NOT met'}")
        print(json.dumps({"cases": cases, "audit_events": events, "results": results,
                          "verify_now_s": round(verify_s, 1)}, indent=1), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
