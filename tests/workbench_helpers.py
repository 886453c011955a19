"""Shared by the workbench's tests: the users (one of each role, a second
analyst, one to disable), signing in through the page, the CSRF token of a
page, an application (rules §8 example 1 with a name and an address), and
a write around the store's triggers (the tamper tests)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import text

PASSWORDS = {"ana": "ana-pass-1234", "ana2": "ana2-pass-1234", "sol": "sol-pass-1234",
             "sam": "sam-pass-1234", "aud": "aud-pass-1234", "gone": "gone-pass-1234"}
ROLES = {"ana": "analyst", "ana2": "analyst", "sol": "supervisor", "sam": "supervisor",
         "aud": "auditor", "gone": "analyst"}

# rules §8 example 1, as an application typed into the form
APPLICATION = {
    "participant_id": "W-0001", "name": "Carmen Rivera Ortiz",
    "address": "Calle Sol 12\nSan Juan, PR 00901", "letter_lang": "es",
    "application_date": "2026-11-02",
    "note": "Solicitud recibida por correo", "birth_date": "1970-05-10",
    "entry_date": "1988-07-01", "separation_date": "2010-06-30",
    "creditable_service_years": "22", "average_compensation": "30000.00",
    "group": "general", "refund_requested": "false", "as_of": "2026-11-29",
}


# the full names and titles letters are signed with (`diferida users add
# --full-name --title`); any user name not listed gets one made from it
SIGNERS = {"ana": ("Ana Rivera Colón", "Analista de Beneficios"),
           "ana2": ("Ana Luisa Torres", "Analista de Beneficios"),
           "beto": ("Beto Colón Díaz", "Analista de Beneficios"),
           "sol": ("Sol Marrero Vega", "Supervisora de Beneficios"),
           "sofia": ("Sofía Méndez Ruiz", "Supervisora de Beneficios"),
           "sam": ("Samuel Ortiz Cruz", "Supervisor de Beneficios"),
           "pedro": ("Pedro Ortiz Santiago", "Supervisor de Beneficios")}


def signer(name: str) -> dict[str, str]:
    """`full_name` and `title` for `Store.add_user`: a user who may sign."""
    full, title = SIGNERS.get(name, (f"{name.capitalize()} de Prueba", "Técnico de Beneficios"))
    return {"full_name": full, "title": title}


def add_users(store) -> None:
    """The users of the tests, each with a password (as `diferida users add`
    and `diferida users passwd` make them) and, but the auditor, the full
    name and title a letter's signature prints."""
    from diferida.service.workflow import hash_password

    for name, role in ROLES.items():
        store.add_user(name, role, **({} if role == "auditor" else signer(name)))
        store.set_password(name, hash_password(PASSWORDS[name]))


_TOKEN = re.compile(r'name="csrf_token" value="([^"]*)"')


def csrf_of(html: str) -> str:
    found = _TOKEN.search(html)
    assert found, "the page has no form with a CSRF token"
    return found.group(1)


def sign_in(client, name: str, *, lang: str = "es", headers: dict | None = None):
    """Sign in through the sign-in page; the answer of the post (303)."""
    page = client.get(f"/analista/entrar?lang={lang}", headers=headers)
    r = client.post("/analista/entrar", data={"name": name, "password": PASSWORDS[name],
                                              "csrf_token": csrf_of(page.text), "lang": lang},
                    headers=headers, follow_redirects=False)
    assert r.status_code == 303, (r.status_code, r.text[:500])
    return r


def around_the_triggers(store, statements: list[tuple[str, dict]]) -> None:
    """Write as the owner of the database, who goes around the triggers;
    they are in force again afterwards, so only the chains can tell."""
    with store.engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SET LOCAL session_replication_role = replica"))
            for sql, params in statements:
                conn.execute(text(sql), params)
            return
        saved = conn.execute(text("SELECT name, sql FROM sqlite_master "
                                  "WHERE type = 'trigger'")).all()
        for name, _ in saved:
            conn.execute(text(f"DROP TRIGGER {name}"))
        for sql, params in statements:
            conn.execute(text(sql), params)
        for _, sql in saved:
            conn.execute(text(sql))


@contextmanager
def workbench_app(kind: str, tmp_path, **settings) -> Iterator[tuple]:
    """The application (`create_app`) on a fresh store of `kind` (sqlite or
    postgresql), migrated, with the tests' users: the app and a test
    client that has run its start-up."""
    import warnings

    from diferida.server import create_app
    from diferida.service.settings import Settings
    from diferida.service.store import Store
    from diferida.service.testing import database_for_tests

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    with database_for_tests(kind, tmp_path) as url:
        schema = Store(url)
        schema.upgrade()
        schema.dispose()
        app = create_app(Settings(database_url=url, rate_limit_public="off", **settings))
        with TestClient(app) as client:
            add_users(app.state.store)
            yield app, client
