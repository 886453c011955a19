"""Speed of the workbench's queue and search queries with 100,000 cases
stored in SQLite.

Fills a store (schema at the newest migration) with N cases of 8 users —
each case with its application, its workflow events and where it stands,
in their hash chains (`audit verify` passes on the result) — in states
40 % draft, 20 % submitted, 10 % returned, 30 % approved. Then times the
service layer's calls the pages make (`workflow.queue` for each queue, first
and a deep page; `workflow.search` by participant id and by case number),
each repeated, and reports the median and the 95th percentile.

Goal: median under 100 ms for every query.

    .venv/bin/python bench/bench_workbench_queue.py [--cases 100000] [--repeat 30]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from sqlalchemy import insert, update

import diferida
from diferida.service import workflow as wf
from diferida.service.store import Store
from diferida.service.store.chain import GENESIS, content_sha256, row_hash
from diferida.service.store.models import (
    AuditEvent,
    Case,
    CaseApplication,
    CaseState,
    ChainHead,
    RulesVersion,
    WorkflowEvent,
)
from diferida.service.store.repository import canonical_json

AS_OF = date(2026, 11, 29)
PERSON = {"birth_date": "1970-05-10", "entry_date": "1988-07-01",
          "separation_date": "2010-06-30", "creditable_service_years": "22",
          "average_compensation": "30000.00", "group": "general", "refund_requested": False}
STATES = ["draft"] * 4 + ["submitted"] * 2 + ["returned"] + ["approved"] * 3
BLOCK = 5000


class Chains:
    """Rows appended to the store's hash chains, as the store appends them."""

    def __init__(self, rules_sha: str):
        self.heads = {c: (0, None, GENESIS) for c in
                      ("cases", "case_applications", "workflow_events", "audit_events")}
        self.rules_sha = rules_sha

    def add(self, chain: str, row: dict) -> dict:
        length, last_id, last_hash = self.heads[chain]
        row["id"] = (last_id or 0) + 1
        row["prev_hash"] = last_hash
        row["row_hash"] = row_hash(chain, last_hash, row,
                                   self.rules_sha if chain == "cases" else None)
        self.heads[chain] = (length + 1, row["id"], row["row_hash"])
        return row


def fill(store: Store, n: int, seed: int = 21) -> None:
    rnd = random.Random(seed)
    users = [store.add_user(f"analista{i}", "analyst")[0] for i in range(5)]
    users += [store.add_user(f"supervisor{i}", "supervisor")[0] for i in range(3)]
    preparers, supervisors = users, users[5:]
    rules = diferida.load_rules()
    content = canonical_json(rules.resolved)
    result = diferida.evaluate({**PERSON, "participant_id": "X"}, as_of=AS_OF,
                               rules=rules, lang="es").to_dict()
    chains = Chains(content_sha256(content))
    start = datetime(2025, 1, 1, tzinfo=UTC)
    with store.engine.begin() as conn:
        conn.execute(insert(RulesVersion), [{"version": rules.version, "name": rules.name,
                                             "content": content, "created_at": start}])
    for block in range(0, n, BLOCK):
        cases, apps, events, audits, states = [], [], [], [], []
        for i in range(block, min(n, block + BLOCK)):
            pid = f"P-{i:07d}"
            at = start + timedelta(minutes=i * 5)
            author = rnd.choice(preparers)
            state = rnd.choice(STATES)
            res = {**result, "participant_id": pid}
            case = chains.add("cases", {
                "participant_id": pid, "version": 1, "supersedes": None,
                "inputs": canonical_json({**PERSON, "participant_id": pid}),
                "result": canonical_json(res), "rules_version": rules.version, "as_of": AS_OF,
                "lang": "es", "status": res["status"], "author_id": author.id, "note": None,
                "created_at": at})
            cases.append(case)
            apps.append(chains.add("case_applications", {
                "case_id": case["id"], "name": f"Persona {i}", "address": f"Calle {i}\nSan Juan",
                "application_date": (at - timedelta(days=30)).date(), "note": None,
                "created_at": at}))
            trail = [("created", author, None)]
            if state != "draft":
                trail.append(("submitted", author, None))
            if state == "returned":
                trail.append(("returned", rnd.choice(supervisors), "Revise"))
            if state == "approved":
                approver = rnd.choice([s for s in supervisors if s.id != author.id])
                trail.append(("approved", approver, None))
            for k, (action, who, reason) in enumerate(trail):
                events.append(chains.add("workflow_events", {
                    "at": at + timedelta(minutes=k), "number": case["id"],
                    "case_id": case["id"], "version": 1, "action": action, "user_id": who.id,
                    "user_name": who.name, "role": who.role, "reason": reason,
                    "corrects": None, "letter_sha256": None}))
            audits.append(chains.add("audit_events", {
                "at": at, "user_id": author.id, "user_name": author.name, "role": author.role,
                "action": "workflow.open", "case_id": case["id"], "participant_id": pid,
                "method": "WORKFLOW", "path": "workflow.open", "status_code": 201,
                "detail": "version 1"}))
            states.append({"number": case["id"], "participant_id": pid, "case_id": case["id"],
                           "version": 1, "state": state, "status": res["status"],
                           "prepared_by": author.id, "changed_by": author.id,
                           "submitted_by": author.id if state != "draft" else None,
                           "updated_at": at + timedelta(minutes=len(trail) - 1)})
        with store.engine.begin() as conn:
            conn.execute(insert(Case), cases)
            conn.execute(insert(CaseApplication), apps)
            conn.execute(insert(WorkflowEvent), events)
            conn.execute(insert(AuditEvent), audits)
            conn.execute(insert(CaseState), states)
        print(f"  {min(n, block + BLOCK):,} cases stored", file=sys.stderr, end="\r")
    heads = ChainHead.__table__
    with store.engine.begin() as conn:
        for chain, (length, last_id, last_hash) in chains.heads.items():
            conn.execute(update(heads).where(heads.c.chain == chain).values(
                length=length, last_id=last_id, last_hash=last_hash))
    print(file=sys.stderr)


def timed(fn, repeat: int) -> tuple[float, float]:
    fn()  # warm: the first call loads what later ones find ready
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--db", type=Path, default=None,
                        help="Keep the filled store in this SQLite file (reused when it "
                             "exists) instead of a temporary one.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.db or Path(tmp) / "bench.db"
        reuse = path.exists()
        store = Store(f"sqlite:///{path}")
        store.upgrade()
        if not reuse:
            t = time.perf_counter()
            fill(store, args.cases)
            print(f"filled {args.cases:,} cases in {time.perf_counter() - t:.0f} s",
                  file=sys.stderr)
        users = {u.name: u for u in store.users()}
        ana, sup = users["analista0"], users["supervisor0"]
        args.cases = store.count_cases()
        mid = args.cases // 2
        queries = {
            "queue drafts (analyst), page 1": lambda: wf.queue(store, ana, "drafts"),
            "queue drafts (analyst), page 50": lambda: wf.queue(store, ana, "drafts", page=50),
            "queue returned (analyst), page 1": lambda: wf.queue(store, ana, "returned"),
            "queue awaiting (supervisor), page 1": lambda: wf.queue(store, sup, "awaiting"),
            "queue awaiting (supervisor), page 100":
                lambda: wf.queue(store, sup, "awaiting", page=100),
            "queue issued, page 1": lambda: wf.queue(store, sup, "issued"),
            "search by participant id": lambda: wf.search(store, sup,
                                                          participant_id=f"P-{mid:07d}"),
            "search by case number": lambda: wf.search(store, ana, case_id=mid),
        }
        results = {}
        for name, fn in queries.items():
            page = fn()
            median, p95 = timed(fn, args.repeat)
            results[name] = {"median_ms": round(median, 2), "p95_ms": round(p95, 2),
                             "rows": len(page.items), "total": page.total}
            print(f"{name:<40} median {median:7.2f} ms   p95 {p95:7.2f} ms   "
                  f"({len(page.items)} of {page.total:,})")
        worst = max(r["median_ms"] for r in results.values())
        print(f"worst median: {worst:.2f} ms (goal: under 100 ms) — "
              f"{'met' if worst < 100 else 'NOT met'}")
        print(json.dumps({"cases": args.cases, "results": results}, indent=1),
              file=sys.stderr)
        store.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
