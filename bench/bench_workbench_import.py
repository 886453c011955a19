"""Speed of the workbench's import of applications: a CSV of 20,000 rows
(the most an upload may hold by default) into an SQLite store, through the
service layer (`workflow.import_applications`) and through the API
(POST /api/v1/workbench/imports), each on a fresh store.

The rows are varied (birth, entry and separation dates, years, pay, group,
and every 50th row with a bad birth date, so the rejects are exercised
too); every other row is stored as a draft with its application, workflow
event and audit trail, and `audit verify` is run on the result.

Goal: the 20,000 rows in under 30 s.

    .venv/bin/python bench/bench_workbench_import.py [--rows 20000] [--runs 1]
        [--database-url postgresql+psycopg://...]   (a fresh, empty database)
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import random
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

from diferida.service import workflow as wf
from diferida.service.store import Store

AS_OF = date(2026, 11, 29)
COLUMNS = ("participant_id", "birth_date", "entry_date", "separation_date",
           "creditable_service_years", "average_compensation", "group", "refund_requested",
           "name", "address", "application_date", "note")
GOAL_SECONDS = 30.0


def applications(n: int, seed: int = 7) -> bytes:
    rnd = random.Random(seed)
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS)
    for i in range(n):
        birth = date(1950, 1, 1) + timedelta(days=rnd.randrange(0, 365 * 30))
        entry = birth + timedelta(days=365 * rnd.randrange(18, 35) + rnd.randrange(365))
        years = rnd.randrange(3, 35)
        separation = entry + timedelta(days=365 * years + rnd.randrange(0, 300))
        w.writerow([
            f"IMP-{i:06d}",
            "1970-02-30" if i % 50 == 49 else birth.isoformat(), entry.isoformat(),
            separation.isoformat(), f"{years}.{rnd.randrange(0, 100):02d}",
            f"{rnd.randrange(12_000, 90_000)}.{rnd.randrange(0, 100):02d}",
            rnd.choice(("general", "general", "police", "firefighter")),
            "false", f"Persona {i}", f"Calle {i}\nSan Juan, PR 00901",
            (AS_OF - timedelta(days=rnd.randrange(1, 400))).isoformat(),
            "" if i % 3 else "entregó certificado"])
    return out.getvalue().encode("utf-8")


def fresh_store(url: str | None, folder: Path, name: str) -> Store:
    store = Store(url or f"sqlite:///{folder / name}")
    store.upgrade()
    return store


def through_service(data: bytes, url: str | None, folder: Path, run: int) -> dict:
    store = fresh_store(url, folder, f"service{run}.db")
    ana = store.add_user(f"ana{run}", "analyst")[0]
    t = time.perf_counter()
    result = wf.import_applications(store, ana, data, "solicitudes.csv", lang="es",
                                    as_of=AS_OF)
    seconds = time.perf_counter() - t
    t = time.perf_counter()
    intact = store.verify().intact
    verify = time.perf_counter() - t
    store.dispose()
    return {"seconds": round(seconds, 2), "rows_in": result.rows_in,
            "drafts": len(result.created), "rejected": result.rows_rejected,
            "verify_seconds": round(verify, 2), "intact": intact}


def through_api(data: bytes, folder: Path, run: int) -> dict:
    from fastapi.testclient import TestClient

    from diferida.server import create_app
    from diferida.service.settings import Settings

    app = create_app(Settings(database_url=f"sqlite:///{folder / f'api{run}.db'}",
                              rate_limit_public="off"))
    with TestClient(app) as client:
        _user, token = app.state.store.add_user(f"ana{run}", "analyst")
        t = time.perf_counter()
        r = client.post("/api/v1/workbench/imports", headers={
            "Authorization": f"Bearer {token}"}, files={"file": ("solicitudes.csv", data)})
        seconds = time.perf_counter() - t
        body = r.json()
    return {"seconds": round(seconds, 2), "status": r.status_code,
            "rows_in": body.get("rows_in"), "drafts": body.get("rows_created"),
            "rejected": body.get("rows_rejected")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--database-url", default=None,
                        help="Time the service layer on this (empty) database instead of a "
                             "new SQLite file; the API run stays on SQLite.")
    parser.add_argument("--no-api", action="store_true")
    args = parser.parse_args()
    data = applications(args.rows)
    print(f"{args.rows:,} rows, {len(data) / 1e6:.1f} MB of CSV", file=sys.stderr)
    results: dict[str, list[dict]] = {"service": [], "api": []}
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs):
            if args.database_url and run:
                break  # one run: the database is no longer empty
            out = through_service(data, args.database_url, Path(tmp), run)
            results["service"].append(out)
            print(f"workflow.import_applications: {out['seconds']:6.2f} s  "
                  f"({out['drafts']:,} drafts, {out['rejected']:,} rejected; "
                  f"audit verify {'intact' if out['intact'] else 'NOT intact'} in "
                  f"{out['verify_seconds']:.1f} s)")
            if not args.no_api:
                out = through_api(data, Path(tmp), run)
                results["api"].append(out)
                print(f"POST /api/v1/workbench/imports: {out['seconds']:6.2f} s  "
                      f"(HTTP {out['status']}, {out['drafts']:,} drafts)")
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux
    print(f"peak memory of the process: {peak:,.0f} MB")
    worst = max(r["seconds"] for rs in results.values() for r in rs)
    ok = worst < GOAL_SECONDS and all(r["intact"] for r in results["service"])
    print(f"slowest: {worst:.1f} s for {args.rows:,} rows (goal: under {GOAL_SECONDS:.0f} s) — "
          f"{'met' if ok else 'NOT met'}")
    print(json.dumps({"rows": args.rows, "results": results}, indent=1), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
