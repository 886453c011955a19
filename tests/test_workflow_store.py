"""The workbench's store: migration 0003 on a store made by the previous
release (every case and chain stays valid, the cases carry on into the
workflow), migration 0004 on a store of 0003 with cases in every state
(`audit verify` finds it intact, each case where it stood), passwords
kept only as argon2 hashes, and `audit verify` finding a workflow row, a
letter or a case's state changed behind the store's back; on SQLite and
PostgreSQL."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import UTC, date, datetime

import pytest
from click.testing import CliRunner
from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError

import diferida
from diferida.cli import main
from diferida.service import workflow as wf
from diferida.service.store import NewEvent, Store, User
from diferida.service.store.chain import content_sha256, row_hash
from diferida.service.store.migrate import head_revision, upgrade
from diferida.service.store.repository import canonical_json
from diferida.service.testing import database_for_tests
from diferida.service.workflow import actions as wf_actions
from diferida.service.workflow import common as wf_common
from diferida.service.workflow import letters as wf_letters

from .workbench_helpers import around_the_triggers, signer

AS_OF = date(2026, 11, 29)
PERSON = {"participant_id": "P-1", "birth_date": "1970-05-10", "entry_date": "1988-07-01",
          "separation_date": "2010-06-30", "creditable_service_years": "22",
          "average_compensation": "30000.00", "group": "general", "refund_requested": False}
ADDRESS = "Calle Luna 12\nSan Juan, PR 00901"
KINDS = ["sqlite", "postgresql"]


def _release_case(store: Store, author_id: int, inputs: dict, supersedes: int | None) -> int:
    """A case version written as the previous release's repository writes it
    (schema 0002): the row with its place in the cases chain, the rules
    content it names, and the audit event of its creation."""
    rules = diferida.load_rules()
    result = diferida.evaluate(inputs, as_of=AS_OF, rules=rules, lang="en").to_dict()
    content = canonical_json(rules.resolved)
    at = datetime.now(UTC)
    with store.engine.begin() as conn:
        if conn.execute(text("SELECT count(*) FROM rules_versions WHERE version = :v"),
                        {"v": rules.version}).scalar() == 0:
            conn.execute(text("INSERT INTO rules_versions VALUES (:v, :n, :c, :at)"),
                         {"v": rules.version, "n": rules.name, "c": content, "at": at})
        version = 1
        if supersedes is not None:
            version = conn.execute(text("SELECT version FROM cases WHERE id = :i"),
                                   {"i": supersedes}).scalar() + 1
        ids = {}
        for chain, row in (("cases", {
                "participant_id": inputs["participant_id"], "version": version,
                "supersedes": supersedes, "inputs": canonical_json(inputs),
                "result": canonical_json(result), "rules_version": rules.version,
                "as_of": AS_OF, "lang": "en", "status": result["status"],
                "author_id": author_id, "note": None, "created_at": at}),
                ("audit_events", {
                    "at": at, "user_id": author_id, "user_name": "ana", "role": "analyst",
                    "action": "case.correct" if supersedes else "case.create",
                    "case_id": None, "participant_id": inputs["participant_id"],
                    "method": "POST", "path": "/api/v1/cases", "status_code": 201,
                    "detail": None})):
            head = conn.execute(text("SELECT length, last_id, last_hash FROM chain_heads "
                                     "WHERE chain = :c"), {"c": chain}).one()
            if chain == "audit_events":
                row["case_id"] = ids["cases"]
            row["id"] = (head.last_id or 0) + 1
            stamp = row.get("created_at", row.get("at"))
            h = row_hash(chain, head.last_hash, row,
                         content_sha256(content) if chain == "cases" else None)
            values = {**row, "prev_hash": head.last_hash, "row_hash": h}
            if conn.dialect.name == "sqlite":  # as the release's UTC column stores it
                key = "created_at" if chain == "cases" else "at"
                values[key] = stamp.strftime("%Y-%m-%d %H:%M:%S.%f")
            conn.execute(text(f"INSERT INTO {chain} ({', '.join(values)}) VALUES "
                              f"({', '.join(':' + k for k in values)})"), values)
            conn.execute(text("UPDATE chain_heads SET length = :n, last_id = :i, "
                              "last_hash = :h WHERE chain = :c"),
                         {"n": head.length + 1, "i": row["id"], "h": h, "c": chain})
            ids[chain] = row["id"]
    return ids["cases"]


@pytest.mark.parametrize("kind", KINDS)
def test_migration_0003_keeps_a_release_store_valid_and_its_cases_carry_on(kind, tmp_path):
    with database_for_tests(kind, tmp_path) as url:
        store = Store(url)
        try:
            upgrade(store.engine, "0002")
            # users, cases and events as the previous release writes them
            ana, ana_token = store.add_user("ana", "analyst")
            store.add_user("ines", "auditor")
            store.add_user("old", "analyst")
            first = _release_case(store, ana.id, PERSON, None)
            second = _release_case(store, ana.id, {**PERSON, "creditable_service_years": "23"},
                                   first)
            other = _release_case(store, ana.id, {**PERSON, "participant_id": "P-2"}, None)
            store.audit(NewEvent("case.read", "GET", "/api/v1/cases/1", 200, user=ana,
                                 case_id=first, participant_id="P-1"))
            assert store.disable_user("old")
            # where each chain of the release's store ends (as `audit verify` of
            # that release prints it): after the migration each must still be there
            with store.engine.connect() as conn:
                anchors = [tuple(r) for r in conn.execute(text(
                    "SELECT chain, last_id, last_hash FROM chain_heads ORDER BY chain"))]
            assert [(c, i) for c, i, _ in anchors] == [
                ("audit_events", 5), ("cases", 3), ("users", 3)]
            store.upgrade()
            assert store.revision() == head_revision() == "0006"
            after = store.verify(anchors)
            assert after.intact, after.lines()
            assert [(c.chain, c.rows) for c in after.chains] == [
                ("cases", 3), ("audit_events", 5), ("users", 3), ("user_passwords", 0),
                ("case_applications", 0), ("workflow_events", 0), ("user_profiles", 0)]
            # the old token still works, the stored cases are drafts in the workbench
            assert store.user_for_token(ana_token).name == "ana"
            sofia = store.add_user("sofia", "supervisor", **signer("sofia"))[0]
            store.set_profile("ana", **signer("ana"))
            drafts = wf.queue(store, ana, "drafts")
            assert [(c.case_id, c.number, c.version, c.state) for c in drafts.items] == [
                (other, other, 1, "draft"), (second, first, 2, "draft")]
            h = wf.history(store, ana, first)
            assert [v.state for v in h.versions] == ["draft", "draft"] and h.events == []
            # a release's case has no addressee: not sent until it has one
            with pytest.raises(wf.Refused) as info:
                wf.submit(store, ana, second)
            assert [p["field"] for p in info.value.problems] == ["name", "address",
                                                                 "letter_lang"]
            third = wf.correct(store, ana, second, {
                **PERSON, "creditable_service_years": "21", "name": "Persona Uno",
                "letter_lang": "es", "address": "Calle 1\nSan Juan, PR 00901"},
                reason="Destinatario",
                lang="es", as_of=AS_OF).case_id
            wf.submit(store, ana, third)
            approved = wf.approve(store, sofia, third)
            assert approved.letter_sha256 and approved.number == first
            with pytest.raises(wf.Refused) as info:
                wf.submit(store, ana, first)
            assert info.value.code == "stale"
            final = store.verify(anchors)
            assert final.intact, final.lines()
            assert store.disable_user("ines") and store.verify().intact
        finally:
            store.dispose()


def _every_state(store: Store) -> dict[str, int]:
    """Cases in every state of the workflow, as the workbench writes them:
    name → the id of the case's current version."""
    ana = store.add_user("ana", "analyst")[0]
    sofia = store.add_user("sofia", "supervisor")[0]
    store.add_user("ines", "auditor")
    store.set_password("ana", wf.hash_password("la contraseña de ana"))

    def opened(pid: str) -> int:
        return wf.open_draft(store, ana, {**PERSON, "participant_id": pid,
                                          "name": f"Persona {pid}", "address": ADDRESS},
                             lang="es", as_of=AS_OF).case_id

    cases = {name: opened(f"P-{name}") for name in (
        "draft", "submitted", "returned", "approved", "corrected", "corrected_approved")}
    for name in ("submitted", "returned", "approved", "corrected", "corrected_approved"):
        wf.submit(store, ana, cases[name])
    for name in ("returned", "corrected"):
        wf.return_case(store, sofia, cases[name], reason="Falta la fecha de la solicitud")
    for name in ("approved", "corrected_approved"):
        wf.approve(store, sofia, cases[name])
    for name in ("corrected", "corrected_approved"):
        cases[name] = wf.correct(store, ana, cases[name], {
            **PERSON, "creditable_service_years": "21", "application_date": "2026-11-02",
            "name": "Persona corregida", "address": ADDRESS},
            reason="Años de servicio revisados", lang="es", as_of=AS_OF).case_id
    return cases


def _without_letter_lang(requirements):
    """`letters.requirements` as a store without migration 0006 had them."""
    def before_0006(*args, **kwargs):
        return [p for p in requirements(*args, **kwargs) if p["field"] != "letter_lang"]
    return before_0006


@pytest.mark.parametrize("kind", KINDS)
def test_migration_0004_keeps_a_store_of_0003_in_every_state_intact(kind, tmp_path,
                                                                    monkeypatch):
    with database_for_tests(kind, tmp_path) as url:
        store = Store(url)
        try:
            upgrade(store.engine, "0003")
            # today's code writes the addressee's language (migration 0006):
            # its column is there while the cases of 0003 are written (all
            # NULL, left out of their hashes) and gone before the upgrade
            with store.engine.begin() as conn:
                conn.execute(text("ALTER TABLE case_applications "
                                  "ADD COLUMN letter_lang VARCHAR(2)"))
            # the workbench of 0003 signed letters with the user's name; a
            # store of 0003 has no profiles (migration 0005): given here
            with monkeypatch.context() as m:
                m.setattr(Store, "profile", lambda self, user_id: ("Firma", "Puesto"))
                # and its pages named people by their sign-in names
                m.setattr(wf_common, "people", lambda session, ids: dict(session.execute(
                    select(User.id, User.name).where(User.id.in_(list(ids)))).all()))
                # nor a column for the addressee's language (migration 0006): its
                # cases went for approval without one, and were issued in the
                # case's language
                m.setattr(wf_letters, "requirements",
                          _without_letter_lang(wf_letters.requirements))
                m.setattr(wf_actions, "_letter_lang_of", lambda store, case_id: "es")
                cases = _every_state(store)
                ana = next(u for u in store.users() if u.name == "ana")
                states = {name: wf.view(store, ana, cid).state for name, cid in cases.items()}
            assert states == {"draft": "draft", "submitted": "submitted",
                              "returned": "returned", "approved": "approved",
                              "corrected": "draft", "corrected_approved": "draft"}
            with store.engine.connect() as conn:
                anchors = [f"{c}:{i}:{h}" for c, i, h in conn.execute(text(
                    "SELECT chain, last_id, last_hash FROM chain_heads ORDER BY chain"))]
                letters = conn.execute(text("SELECT case_id, sha256 FROM letters "
                                            "ORDER BY case_id")).all()
            assert len(letters) == 2
            with store.engine.begin() as conn:
                assert conn.execute(text("SELECT count(*) FROM case_applications "
                                         "WHERE letter_lang IS NOT NULL")).scalar() == 0
                conn.execute(text("ALTER TABLE case_applications DROP COLUMN letter_lang"))
            store.dispose()
            store = Store(url)
            verify = ["audit", "verify", "--database-url", url,
                      *[a for anchor in anchors for a in ("--anchor", anchor)]]
            before = CliRunner().invoke(main, verify, catch_exceptions=False)
            assert before.exit_code == 2 and "run `diferida db upgrade` first" in before.output
            store.upgrade()
            assert store.revision() == head_revision() == "0006"
            after = CliRunner().invoke(main, verify, catch_exceptions=False)
            assert after.exit_code == 0, after.output
            assert after.output.rstrip().endswith("audit verify: intact")
            assert "triggers: all in place" in after.output
            # every case where it stood, the letters as issued
            assert {name: wf.view(store, ana, cid).state
                    for name, cid in cases.items()} == states
            with store.engine.connect() as conn:
                assert conn.execute(text("SELECT case_id, sha256 FROM letters "
                                         "ORDER BY case_id")).all() == letters
            # and the workflow carries on from them
            sofia = next(u for u in store.users() if u.name == "sofia")
            for name in ("ana", "sofia"):
                store.set_profile(name, **signer(name))
            # a version submitted without the addressee's language is not
            # approved in a language guessed: returned, corrected with it
            with pytest.raises(wf.Refused) as refused:
                wf.approve(store, sofia, cases["submitted"])
            assert [p["field"] for p in refused.value.problems] == ["letter_lang"]
            wf.return_case(store, sofia, cases["submitted"], reason="Falta el idioma")
            fixed = wf.correct(store, ana, cases["submitted"], {
                **PERSON, "participant_id": "P-submitted", "name": "Persona P-submitted",
                "address": ADDRESS, "letter_lang": "en"}, reason="Idioma del destinatario",
                lang="es", as_of=AS_OF).case_id
            wf.submit(store, ana, fixed)
            assert wf.approve(store, sofia, fixed).letter_lang == "en"
            with pytest.raises(wf.Refused) as refused:  # a draft of 0003 alike
                wf.submit(store, ana, cases["corrected"])
            assert [p["field"] for p in refused.value.problems] == ["letter_lang"]
            final = store.verify()
            assert final.intact, final.lines()
        finally:
            store.dispose()


@pytest.fixture(params=KINDS)
def store(request, tmp_path) -> Iterator[Store]:
    with database_for_tests(request.param, tmp_path) as url:
        s = Store(url)
        s.upgrade()
        yield s
        s.dispose()


def _issued(store: Store) -> tuple[int, int]:
    ana = store.add_user("ana", "analyst", **signer("ana"))[0]
    sofia = store.add_user("sofia", "supervisor", **signer("sofia"))[0]
    store.set_password("ana", wf.hash_password("la contraseña de ana"))
    a = wf.open_draft(store, ana, {**PERSON, "name": "Marta Prueba", "letter_lang": "es",
                                   "address": ADDRESS},
                      lang="es", as_of=AS_OF)
    wf.submit(store, ana, a.case_id)
    wf.approve(store, sofia, a.case_id)
    b = wf.open_draft(store, ana, {**PERSON, "participant_id": "P-2"}, lang="es", as_of=AS_OF)
    assert store.verify().intact
    return a.case_id, b.case_id


def _verify_cli(store: Store) -> tuple[int, str]:
    r = CliRunner().invoke(main, ["audit", "verify", "--database-url", store.url],
                           catch_exceptions=False)
    return r.exit_code, r.output


TAMPERING = {
    "the approver's name rewritten": (
        [("UPDATE workflow_events SET user_name = 'pedro' WHERE action = 'approved'", {})],
        r"workflow_events id 3: the stored content does not match its hash"),
    "an approval removed": (
        [("DELETE FROM workflow_events WHERE action = 'approved'", {})],
        r"workflow_events id 4: its previous hash does not match id 2"),
    "an address rewritten": (
        [("UPDATE case_applications SET address = 'Otra calle' WHERE id = 1", {})],
        r"case_applications id 1: the stored content does not match its hash"),
    "a password hash swapped": (
        [("UPDATE user_passwords SET password_hash = :h",
          {"h": wf.hash_password("contraseña del intruso")})],
        r"user_passwords id 1: the stored content does not match its hash"),
    "the issued letter replaced": (
        [("UPDATE letters SET pdf = :p", {"p": b"%PDF-1.7 forged"})],
        r"letters case 1: the stored PDF does not match the SHA-256"),
    "a draft shown as approved": (
        [("UPDATE case_states SET state = 'approved' WHERE participant_id = 'P-2'", {})],
        r"case_states case 2: says 'approved', its workflow events say 'draft'"),
    # the owner makes a supervisor's own case look like an analyst's (four-eyes)
    "who prepared a case rewritten": (
        [("UPDATE case_states SET prepared_by = 2, changed_by = 2 "
          "WHERE participant_id = 'P-2'", {})],
        r"case_states case 2: says prepared_by = user 2, its versions and workflow events "
        r"say user 1"),
}


@pytest.mark.parametrize("name", TAMPERING)
def test_audit_verify_finds_a_workflow_row_changed_behind_the_stores_back(store, name):
    _issued(store)
    statements, expected = TAMPERING[name]
    around_the_triggers(store, statements)
    report = store.verify()
    assert not report.intact
    code, output = _verify_cli(store)
    assert code == 1 and "TAMPERING DETECTED" in output
    import re

    assert re.search(expected, output), output


def test_the_database_refuses_rewriting_the_workflow_record(store):
    _issued(store)
    refused, accepted = [], []
    for sql in ("UPDATE workflow_events SET reason = 'x'", "DELETE FROM workflow_events",
                "UPDATE case_applications SET name = 'x'", "DELETE FROM case_applications",
                "UPDATE letters SET pdf = pdf", "DELETE FROM letters",
                "UPDATE user_passwords SET password_hash = 'x'",
                "INSERT INTO workflow_events (id, at, number, case_id, version, action, "
                "user_id, user_name, role) VALUES (99, '2026-12-01 00:00:00', 1, 1, 1, "
                "'approved', 1, 'ana', 'analyst')"):
        try:
            with store.engine.begin() as conn:
                conn.execute(text(sql))
        except DBAPIError:
            refused.append(sql)
            continue
        accepted.append(sql)
    assert accepted == [] and len(refused) == 8
    assert store.verify().intact


def test_passwords_are_stored_only_as_argon2_hashes_and_the_latest_wins(store, caplog):
    password, newer = "una contraseña larga 1", "otra contraseña larga 2"
    with caplog.at_level("DEBUG"):
        r = CliRunner().invoke(main, ["users", "add", "sofia", "--role", "supervisor",
                                      "--password-stdin", "--database-url", store.url],
                               input=password + "\n", catch_exceptions=False)
        assert r.exit_code == 0, r.output
        assert password not in r.output
        assert wf.authenticate(store, "sofia", password).role == "supervisor"
        assert wf.authenticate(store, "sofia", "wrong") is None
        assert wf.authenticate(store, "nadie", password) is None
        r = CliRunner().invoke(main, ["users", "passwd", "sofia", "--password-stdin",
                                      "--database-url", store.url], input=newer + "\n",
                               catch_exceptions=False)
        assert r.exit_code == 0 and newer not in r.output
        assert wf.authenticate(store, "sofia", password) is None
        assert wf.authenticate(store, "sofia", newer).name == "sofia"
        short = CliRunner().invoke(main, ["users", "passwd", "sofia", "--password-stdin",
                                          "--database-url", store.url], input="corta\n")
        assert short.exit_code == 2 and "10 characters" in short.output
    dump = []
    with store.engine.connect() as conn:
        for table in ("users", "user_passwords", "audit_events", "chain_heads"):
            dump += [str(tuple(row)) for row in conn.execute(text(f"SELECT * FROM {table}"))]
        hashes = [h for (h,) in conn.execute(text(
            "SELECT password_hash FROM user_passwords ORDER BY id"))]
    everything = "\n".join(dump) + caplog.text
    for secret in (password, newer, "contraseña"):
        assert secret not in everything
    assert len(hashes) == 2 and all(h.startswith("$argon2id$") for h in hashes)
    assert hashlib.sha256(password.encode()).hexdigest() not in everything
    assert store.disable_user("sofia")
    assert wf.authenticate(store, "sofia", newer) is None
    passwd_events = [json.loads(e) for (e,) in store.engine.connect().execute(text(
        "SELECT detail FROM audit_events WHERE action = 'user.passwd'"))]
    assert [e["name"] for e in passwd_events] == ["sofia", "sofia"]
    assert store.verify().intact


# ---- the names and titles letters are signed with (migration 0005) ----------

def test_users_add_and_users_profile_set_the_full_name_and_title_a_letter_signs_with(store):
    def run(*args: str):
        return CliRunner().invoke(main, [*args, "--database-url", store.url],
                                  catch_exceptions=False)

    r = run("users", "add", "sofia", "--role", "supervisor", "--no-password",
            "--full-name", "Sofía Méndez Ruiz", "--title", "Supervisora de Beneficios")
    assert r.exit_code == 0, r.output
    sofia = next(u for u in store.users() if u.name == "sofia")
    assert store.profile(sofia.id) == ("Sofía Méndez Ruiz", "Supervisora de Beneficios")
    # a user added without them has none, and the listing says they cannot sign
    assert run("users", "add", "ana", "--role", "analyst", "--no-password").exit_code == 0
    listing = run("users", "list").output
    assert "Sofía Méndez Ruiz, Supervisora de Beneficios" in listing
    assert "(sin nombre ni puesto: no puede firmar cartas)" in listing
    # given later, and changed: the latest wins, the earlier stays in the chain
    assert run("users", "profile", "ana", "--full-name", "Ana Rivera",
               "--title", "Analista").exit_code == 0
    r = run("users", "profile", "ana", "--full-name", " Ana Rivera Colón ",
            "--title", "Analista de Beneficios")
    assert r.exit_code == 0 and "Ana Rivera Colón, Analista de Beneficios" in r.output
    assert store.profile_by_name("ana") == ("Ana Rivera Colón", "Analista de Beneficios")
    report = store.verify()
    assert report.intact, report.lines()
    assert ("user_profiles", 3) in [(c.chain, c.rows) for c in report.chains]
    with store.engine.connect() as conn:
        actions = [a for (a,) in conn.execute(text(
            "SELECT action FROM audit_events WHERE action = 'user.profile'"))]
    assert actions == ["user.profile"] * 3


@pytest.mark.parametrize("args, words", [
    (["--full-name", " ", "--title", "Analista"], ("nombre completo (--full-name): falta",
                                                   "full name (--full-name): missing")),
    (["--full-name", "Ana", "--title", "x" * 201], ("puesto (--title): admite como máximo 200",
                                                    "title (--title): at most 200")),
    (["--full-name", "Ana\x1b[2J", "--title", "Analista"],
     ("no puede contener caracteres de control", "must not contain control characters")),
])
def test_a_full_name_or_title_that_cannot_be_signed_is_refused_naming_the_option(
        store, args, words):
    store.add_user("ana", "analyst")
    r = CliRunner().invoke(main, ["users", "profile", "ana", *args, "--database-url",
                                  store.url])
    assert r.exit_code == 2
    for w in words:
        assert w in r.output, r.output
    added = CliRunner().invoke(main, ["users", "add", "beto", "--role", "analyst",
                                      "--no-password", *args, "--database-url", store.url])
    assert added.exit_code == 2 and words[0] in added.output
    assert [u.name for u in store.users()] == ["ana"]
    assert store.profile_by_name("ana") is None
    with pytest.raises(ValueError, match="--full-name|--title"):
        store.set_profile("ana", *args[1::2])
    nobody = CliRunner().invoke(main, ["users", "profile", "nadie", "--full-name", "N",
                                       "--title", "T", "--database-url", store.url])
    assert nobody.exit_code == 2 and "no user named 'nadie'" in nobody.output


def test_a_profile_rewritten_behind_the_stores_back_is_found_and_the_database_refuses_it(
        store):
    store.add_user("sofia", "supervisor", full_name="Sofía Méndez Ruiz",
                   title="Supervisora de Beneficios")
    for sql in ("UPDATE user_profiles SET title = 'Directora'", "DELETE FROM user_profiles"):
        with pytest.raises(DBAPIError):
            with store.engine.begin() as conn:
                conn.execute(text(sql))
    around_the_triggers(store, [("UPDATE user_profiles SET full_name = :n",
                                 {"n": "Otra Persona"})])
    report = store.verify()
    assert not report.intact
    assert any("user_profiles id 1: the stored content does not match its hash" in line
               for line in report.lines()), report.lines()
