"""`diferida serve`, `diferida db upgrade` and `diferida users …`."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request

import pytest
from click.testing import CliRunner
from sqlalchemy import text

from diferida.cli import main
from diferida.service.store import Store, hash_token
from diferida.service.store.migrate import head_revision
from diferida.service.testing import database_for_tests, free_port


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    with database_for_tests(request.param, tmp_path) as u:
        yield u


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_db_upgrade_brings_an_empty_database_to_the_newest_schema(url):
    r = run("db", "upgrade", "--database-url", url)
    assert r.exit_code == 0, r.output
    assert f"revision {head_revision()}" in r.output
    assert f"database: {head_revision()}" in run("db", "current", "--database-url", url).output


def test_users_add_prints_a_token_once_and_stores_only_its_hash(url):
    r = run("users", "add", "maria", "--role", "analyst", "--no-password", "--database-url", url)
    assert r.exit_code == 0, r.output
    token = r.stdout.strip().splitlines()[-1]
    assert len(token) > 40
    store = Store(url)
    try:
        user = store.user_for_token(token)
        assert (user.name, user.role, user.token_hash) == ("maria", "analyst", hash_token(token))
        with store.engine.connect() as conn:
            rows = [str(r) for r in conn.execute(text("SELECT * FROM users"))]
        assert not any(token in row for row in rows)
    finally:
        store.dispose()
    listing = run("users", "list", "--database-url", url).output
    assert "maria" in listing and token not in listing
    again = run("users", "add", "maria", "--role", "auditor", "--no-password",
                "--database-url", url)
    assert again.exit_code != 0 and "already exists" in again.output


def test_users_add_refuses_a_role_other_than_analyst_or_auditor(tmp_path):
    r = run("users", "add", "x", "--role", "admin", "--database-url",
            f"sqlite:///{tmp_path / 'x.db'}")
    assert r.exit_code == 2 and "admin" in r.output


def test_a_disabled_user_token_stops_working(tmp_path):
    url = f"sqlite:///{tmp_path / 'x.db'}"
    token = run("users", "add", "x", "--role", "auditor", "--no-password", "--database-url",
                url).stdout.strip().splitlines()[-1]
    assert run("users", "disable", "x", "--database-url", url).exit_code == 0
    store = Store(url)
    assert store.user_for_token(token) is None
    store.dispose()
    assert run("users", "disable", "nobody", "--database-url", url).exit_code != 0


@pytest.mark.slow
def test_serve_creates_its_sqlite_database_under_var_on_first_start(tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIFERIDA_")}
    log = open(tmp_path / "serve.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen([sys.executable, "-m", "diferida.cli", "serve", "--port", str(port)],
                            cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    assert r.status == 200
                    break
            except OSError:
                assert time.monotonic() < deadline, "no answer from the service"
                time.sleep(0.2)
        assert (tmp_path / "var" / "diferida.db").is_file()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()
    # the setup check: no administrator's letter texts yet, said at start by name
    said = (tmp_path / "serve.log").read_text("utf-8")
    for needle in ("no se emitirá ninguna carta en español", "letter_office.telephone",
                   "letter_office.hours", "letter_office.address",
                   "letter_next.reconsideration", "no letter will be issued in English"):
        assert needle in said, said


def test_a_database_url_that_is_neither_sqlite_nor_postgresql_is_refused():
    r = run("db", "upgrade", "--database-url", "mysql://x@localhost/db")
    assert r.exit_code == 2 and "unsupported database" in r.output
