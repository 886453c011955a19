"""The documented PostgreSQL grants of the service's role, tested.

docs/service.md has the service run as a role that is not the owner of the
tables, with the grants of docs/postgresql_grants.sql (the one place they
are written: the doc points to the file, this test reads it). Granted
exactly those, in a fresh schema migrated by the owner, the role runs the
whole workflow — users added, a password changed and a user disabled with
`diferida users`, sign-in, opening, correcting, submitting, returning,
correcting, submitting and approving a case (the letter stored) through the
pages and through the API, the queues, search, the audit trail, the
exports, sign-out, `diferida audit verify` — without a single 5xx; and it
cannot change the record, the triggers or the schema. With the grants the
documentation gave before (no UPDATE on `case_states`), every submission,
correction, return and approval was a 500."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from diferida.cli import main
from diferida.server import create_app
from diferida.service.settings import Settings
from diferida.service.store import Store
from diferida.service.store.models import Base
from diferida.service.testing import database_for_tests, with_search_path
from diferida.web.workbench.session import COOKIE

from .workbench_helpers import APPLICATION, PASSWORDS, csrf_of, signer

GRANTS = Path(__file__).resolve().parents[1] / "docs" / "postgresql_grants.sql"
SERVICE_DOC = Path(__file__).resolve().parents[1] / "docs" / "service.md"
W = "/api/v1/workbench"
USERS = {"ana": "analyst", "sol": "supervisor", "aud": "auditor", "gone": "analyst"}
API_CASE = {key: value for key, value in APPLICATION.items() if key != "as_of"}


def grant_statements(schema: str, role: str) -> list[str]:
    """The statements of docs/postgresql_grants.sql, with psql's variables
    :"schema" and :"role" given (as psql -v gives them: quoted names)."""
    def quoted(name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    body = "\n".join(line.split("--", 1)[0] for line in GRANTS.read_text().splitlines())
    body = body.replace(':"schema"', quoted(schema)).replace(':"role"', quoted(role))
    assert ":" not in body.replace("::", ""), "a psql variable other than schema and role"
    return [s.strip() for s in body.split(";") if s.strip()]


@contextmanager
def service_role(owner_url: str) -> Iterator[str]:
    """A fresh schema migrated by its owner, and a new login role granted
    exactly the documented grants on it: yields the role's database URL
    (with the schema on its search_path); the role is dropped afterwards."""
    owner = Store(owner_url)
    owner.upgrade()
    role = f"diferida_service_{secrets.token_hex(4)}"
    password = secrets.token_urlsafe(16)
    with owner.engine.begin() as conn:
        schema = conn.execute(text("SELECT current_schema()")).scalar()
        conn.execute(text(f'CREATE ROLE "{role}" LOGIN PASSWORD \'{password}\''))
        for statement in grant_statements(schema, role):
            conn.execute(text(statement))
    base = make_url(owner_url).set(username=role, password=password, query={})
    try:
        yield with_search_path(base.render_as_string(hide_password=False), schema)
    finally:
        with owner.engine.begin() as conn:
            conn.execute(text(f'DROP OWNED BY "{role}"'))
            conn.execute(text(f'DROP ROLE "{role}"'))
        owner.dispose()


def cli(*args: str, stdin: str | None = None):
    return CliRunner().invoke(main, list(args), input=stdin, catch_exceptions=False)


class Watched:
    """A client of the application whose every answer is kept: none may be a 5xx."""

    def __init__(self, app, answers: list):
        self.client = TestClient(app)
        self.answers = answers

    def __getattr__(self, name):
        method = getattr(self.client, name)
        if name not in ("get", "post"):
            return method

        def call(url, *args, **kwargs):
            kwargs.setdefault("follow_redirects", False)
            r = method(url, *args, **kwargs)
            self.answers.append((name.upper(), url, r.status_code))
            return r
        return call


def _sign_in(c: Watched, name: str, password: str) -> None:
    page = c.get("/analista/entrar")
    r = c.post("/analista/entrar", data={"name": name, "password": password,
                                         "csrf_token": csrf_of(page.text)})
    assert r.status_code == 303 and c.client.cookies.get(COOKIE)


def _done(r, what: str) -> int:
    """The case id of a workbench action's redirect (`?hecho=what`)."""
    assert r.status_code == 303, (r.status_code, r.text[:300])
    found = re.fullmatch(rf"/analista/casos/(\d+)\?hecho={what}", r.headers["location"])
    assert found, r.headers["location"]
    return int(found.group(1))


def _token(c: Watched, path: str) -> str:
    page = c.get(path)
    assert page.status_code == 200, (path, page.status_code)
    return csrf_of(page.text)


def test_the_grants_file_is_the_one_docs_service_md_points_to():
    doc = SERVICE_DOC.read_text()
    assert "[postgresql_grants.sql](postgresql_grants.sql)" in doc
    assert "-f docs/postgresql_grants.sql" in doc
    # the doc shows no grant of its own, which could drift from the file
    assert "GRANT " not in doc
    statements = grant_statements("public", "diferida_service")
    assert statements[0] == 'GRANT USAGE ON SCHEMA "public" TO "diferida_service"'
    assert all(s.startswith("GRANT ") for s in statements)


@pytest.mark.parametrize("kind", ["postgresql"])
def test_a_role_with_exactly_the_documented_grants_runs_the_whole_workflow(kind, tmp_path):
    with database_for_tests(kind, tmp_path) as owner_url, service_role(owner_url) as url:
        # every table of the schema is in the file (a new table needs its grants)
        role = make_url(url).username
        owner = create_engine(owner_url)
        try:
            with owner.connect() as conn:
                unread = [t for t in ("alembic_version", *Base.metadata.tables) if not
                          conn.execute(text("SELECT has_table_privilege(:r, :t, 'SELECT')"),
                                       {"r": role, "t": t}).scalar()]
        finally:
            owner.dispose()
        assert unread == []
        # the operator's commands, with the service's credentials
        tokens = {}
        for name, role in USERS.items():
            signs = [] if role == "auditor" else [
                "--full-name", signer(name)["full_name"], "--title", signer(name)["title"]]
            r = cli("users", "add", name, "--role", role, "--password-stdin", *signs,
                    "--database-url", url, stdin=PASSWORDS[name] + "\n")
            assert r.exit_code == 0, r.output
            tokens[name] = r.stdout.strip().splitlines()[-1]
        new_password = "la nueva contraseña de ana"
        r = cli("users", "passwd", "ana", "--password-stdin", "--database-url", url,
                stdin=new_password + "\n")
        assert r.exit_code == 0, r.output
        assert cli("users", "disable", "gone", "--database-url", url).exit_code == 0
        assert cli("users", "list", "--database-url", url).exit_code == 0
        r = cli("db", "current", "--database-url", url)
        assert r.exit_code == 0 and "database: 0006" in r.output, r.output

        answers: list[tuple[str, str, int]] = []
        app = create_app(Settings(database_url=url, rate_limit_auth_failures="off",
                                  rate_limit_public="off"))
        with TestClient(app):  # `serve` as the role: the schema found current, then served
            ana, sol, aud = (Watched(app, answers) for _ in range(3))
            _sign_in(ana, "ana", new_password)
            _sign_in(sol, "sol", PASSWORDS["sol"])
            _sign_in(aud, "aud", PASSWORDS["aud"])
            # through the pages: open, correct, submit, return, correct, submit, approve
            case = _done(ana.post("/analista/nuevo", data={
                **APPLICATION, "action": "save", "csrf_token": _token(ana, "/analista/nuevo")}),
                "created")
            for step in range(2):
                path = f"/analista/casos/{case}/corregir"
                case = _done(ana.post(path, data={
                    **APPLICATION, "creditable_service_years": str(23 + step),
                    "reason": f"Corrección {step + 1}", "action": "save",
                    "csrf_token": _token(ana, path)}), "corrected")
                page = f"/analista/casos/{case}"
                # more years than the span: the warning asks for a check, noted
                _done(ana.post(f"{page}/enviar", data={"csrf_token": _token(ana, page),
                                                       "acknowledgement": "Verificado"}),
                      "submitted")
                if step == 0:
                    _done(sol.post(f"{page}/devolver", data={
                        "reason": "Revisar los años de servicio",
                        "csrf_token": _token(sol, page)}), "returned")
            _done(sol.post(f"{page}/aprobar", data={"csrf_token": _token(sol, page),
                                                    "confirmado": "1",
                                                    "acknowledgement": "Revisado el certificado"}),
                  "approved")
            pdf = ana.get(f"/analista/casos/{case}/carta.pdf")
            assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")
            # the queues, a search, the audit trail and the exports
            for who in (ana, sol, aud):
                for kind_ in ("drafts", "returned", "awaiting", "issued"):
                    assert who.get(f"/analista?lista={kind_}").status_code == 200
            r = ana.post("/analista/buscar", data={"participante": APPLICATION["participant_id"],
                                                   "csrf_token": _token(ana, "/analista")})
            assert r.status_code == 200
            audit = aud.get("/analista/auditoria")
            assert audit.status_code == 200
            for kind_ in ("cases", "events", "summary"):
                for fmt in ("csv", "xlsx"):
                    assert aud.get(f"/analista/auditoria/exportar/{kind_}.{fmt}"
                                   ).status_code == 200

            # the same through the API, with tokens
            def api(who: str) -> dict[str, str]:
                return {"Authorization": f"Bearer {tokens[who]}"}

            a = ana.post(f"{W}/cases", json={**API_CASE, "participant_id": "API-1"},
                         headers=api("ana"))
            assert a.status_code == 201, a.text
            v = a.json()["case_id"]
            for step in range(2):
                r = ana.post(f"{W}/cases/{v}/corrections", headers=api("ana"), json={
                    **API_CASE, "creditable_service_years": str(23 + step),
                    "reason": f"Corrección {step + 1}"})
                assert r.status_code == 201, r.text
                v = r.json()["case_id"]
                assert ana.post(f"{W}/cases/{v}/submit", headers=api("ana"),
                                json={"acknowledgement": "Verificado"}).status_code == 200
                if step == 0:
                    assert sol.post(f"{W}/cases/{v}/return", headers=api("sol"), json={
                        "reason": "Revisar"}).status_code == 200
            assert sol.post(f"{W}/cases/{v}/approve", headers=api("sol"),
                            json={"acknowledgement": "Revisado el certificado"}).status_code == 200
            assert ana.get(f"{W}/cases/{v}/letter", headers=api("ana")).status_code == 200
            for kind_ in ("drafts", "returned", "awaiting", "issued"):
                assert sol.get(f"{W}/queues/{kind_}", headers=api("sol")).status_code == 200
            assert aud.get(f"{W}/audit", headers=api("aud")).status_code == 200
            assert aud.get(f"{W}/exports/cases.csv", headers=api("aud")).status_code == 200
            checked = aud.get(f"{W}/audit/verify", headers=api("aud"))
            assert checked.status_code == 200 and checked.json()["intact"] is True
            # the case API of the service, and a user disabled refused
            r = ana.post("/api/v1/cases", headers=api("ana"), json={
                "participant_id": "API-2", "birth_date": "1970-05-10",
                "entry_date": "1988-07-01", "separation_date": "2010-06-30",
                "creditable_service_years": "22", "average_compensation": "30000.00",
                "group": "general", "refund_requested": False, "as_of": "2026-11-29"})
            assert r.status_code == 201, r.text
            assert ana.get(f"/api/v1/cases/{r.json()['id']}/print",
                           headers=api("ana")).status_code == 200
            assert ana.get("/api/v1/cases", headers=api("gone")).status_code == 401
            # signing out: the sign-out written, older ones deleted
            for who in (ana, sol, aud):
                r = who.post("/analista/salir", data={"csrf_token": _token(who, "/analista")})
                assert r.status_code == 303 and "aviso=signed_out" in r.headers["location"]

        failures = [a for a in answers if a[2] >= 500]
        assert failures == [] and len(answers) > 60
        r = cli("audit", "verify", "--database-url", url)
        assert r.exit_code == 0, r.output
        assert r.output.rstrip().endswith("audit verify: intact")

        # and nothing more: the role changes no record, trigger or schema
        engine = create_engine(url)
        try:
            for statement in (
                    "UPDATE cases SET note = 'x'", "DELETE FROM audit_events",
                    "DELETE FROM case_states", "UPDATE users SET role = 'supervisor'",
                    "INSERT INTO chain_heads (chain, length, last_id, last_hash) "
                    "VALUES ('x', 0, NULL, 'x')", "DELETE FROM chain_heads",
                    "UPDATE letters SET pdf = pdf", "TRUNCATE signed_out_sessions",
                    "UPDATE alembic_version SET version_num = '0003'",
                    "ALTER TABLE cases DISABLE TRIGGER cases_append_only",
                    "DROP TRIGGER workflow_events_append_only ON workflow_events",
                    "CREATE TABLE extra (id integer)"):
                with pytest.raises(DBAPIError) as refused, engine.begin() as conn:
                    conn.execute(text(statement))
                assert refused.value.orig.sqlstate == "42501", (statement, refused.value)
        finally:
            engine.dispose()
