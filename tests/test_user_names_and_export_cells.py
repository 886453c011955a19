"""Hardening, round three: a user name is a plain word; no cell of the
workbench's exports is read as a formula or a link by a spreadsheet; the
test services wait for the package manager's lock. Each test is written as
the attack it stops.

(The rules files' bounds on every command: tests/test_rules_bounds.py. The
calendar over every year validation accepts: tests/test_dates_whole_range.py.)"""

from __future__ import annotations

import csv
import fcntl
import io
import os
import re
import subprocess
import zipfile
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from sqlalchemy import select

from diferida.cli import main
from diferida.i18n import LANGS, catalog
from diferida.service import usernames
from diferida.service import workflow as wf
from diferida.service.cells import FORMULA_STARTS, neutral, neutral_frame
from diferida.service.store import Store
from diferida.service.store.models import User
from diferida.service.testing import database_for_tests

AS_OF = date(2026, 11, 29)


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path) -> Iterator[Store]:
    with database_for_tests(request.param, tmp_path) as url:
        s = Store(url)
        s.upgrade()
        yield s
        s.dispose()


def _names(store: Store) -> list[str]:
    with store.reading() as session:
        return list(session.scalars(select(User.name).order_by(User.id)))


# ---- user names: a plain set of characters ----------------------------------

BAD_NAMES = [
    '=HYPERLINK("http://x","y")',  # a formula once exported to a spreadsheet
    "ana\tsupervisor",  # a TAB splits an exported column
    "ana\n", "ana\r", "\x1b[31mana",  # a line break, a terminal's escape code
    "-ana", ".ana", "_ana", "+ana", "@ana",  # not starting with a letter or digit
    "ana maria", "josé", "ana١", "ﬁna", "ana/b", "ana;b", "ana'b", "ana,b",
    "", " ", "a" * 65,
]
GOOD_NAMES = ["maria", "j.perez", "ana-2", "A_b", "7", "a" * 64, "x.y_z-0"]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_user_name_outside_the_plain_set_is_refused_by_the_store(tmp_path, name):
    s = Store(f"sqlite:///{tmp_path / 'cases.db'}")
    s.upgrade()
    try:
        with pytest.raises(ValueError) as err:
            s.add_user(name, "analyst")
        assert str(err.value) == usernames.refusal(name)
        assert "ASCII letters (no accents), digits, '.', '_' and '-'" in str(err.value)
        assert "starts with a letter or a digit" in str(err.value)
        assert _names(s) == []
    finally:
        s.dispose()


def test_the_store_takes_plain_names_and_refuses_the_others_on_both_databases(store):
    for name in GOOD_NAMES:
        assert store.add_user(name, "analyst")[0].name == name
    for name in ('=HYPERLINK("http://x","y")', "ana\tsupervisor", "a" * 65):
        with pytest.raises(ValueError, match="user name"):
            store.add_user(name, "analyst")
    assert _names(store) == GOOD_NAMES
    assert store.verify().intact


def test_users_add_refuses_a_formula_name_in_both_languages_before_the_password(store):
    for name in ('=HYPERLINK("http://x","y")', "ana\tb"):
        # no --no-password and no input: the name is refused before any prompt
        r = CliRunner().invoke(main, ["users", "add", name, "--role", "analyst",
                                      "--database-url", store.url])
        assert r.exit_code == 2, r.output
        assert "password" not in r.output.lower()
        for lang in LANGS:
            assert usernames.refusal(name, lang) in r.output
        assert repr(name) in r.output  # shown escaped: a TAB as \t
    assert _names(store) == []
    ok = CliRunner().invoke(main, ["users", "add", "j.perez", "--role", "analyst",
                                   "--no-password", "--database-url", store.url])
    assert ok.exit_code == 0, ok.output
    assert _names(store) == ["j.perez"]


def test_the_refusal_says_the_allowed_set_in_each_language():
    for lang in LANGS:
        text = catalog(lang)["users"]["name_not_allowed"]
        assert "{value}" in text and "{most}" in text and "'.', '_'" in text
    assert "64" in usernames.refusal("x y")
    # a long name is shown cut, never whole
    assert len(usernames.refusal("a" * 5000)) < 400


# ---- the exports: no cell read as a formula --------------------------------

HEAD = ("participant_id,birth_date,entry_date,separation_date,creditable_service_years,"
        "average_compensation,group,refund_requested,application_date\n")
ATTACKS = ['=HYPERLINK("http://evil.example","ver")', "+cmd|' /C calc'!A0",
           "-2+3+cmd|' /C calc'!A0", "@SUM(1+1)*cmd|' /C calc'!A0", "http://evil.example"]


def _import(store: Store, user, ids: list[str]) -> list[str]:
    buf = io.StringIO()
    w = csv.writer(buf)
    for pid in ids:
        w.writerow([pid, "1970-05-10", "1988-07-01", "2010-06-30", "22", "30000.00",
                    "general", "false", "2026-10-01"])
    result = wf.import_applications(store, user, (HEAD + buf.getvalue()).encode(), "a.csv",
                                    lang="en", as_of=AS_OF)
    assert result.rejected == [], result.rejected
    return [c.participant_id for c in result.created]


def _old_user(store: Store, monkeypatch, name: str, role: str):
    """A user added before names were limited (the store keeps them as they are)."""
    with monkeypatch.context() as m:
        m.setattr(usernames, "allowed", lambda _name: True)
        return store.add_user(name, role)[0]


def _csv(store: Store, user, kind: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(wf.export(store, user, kind, "csv").decode())))


def _xlsx_cells(data: bytes) -> tuple[list[str], str]:
    """The shared strings of a workbook (its text cells) and its sheet's XML."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        sheet = z.read("xl/worksheets/sheet1.xml").decode()
        shared = z.read("xl/sharedStrings.xml").decode()
        rels = [n for n in z.namelist() if n.startswith("xl/worksheets/_rels/")]
        links = "".join(z.read(n).decode() for n in rels)
    texts = [re.sub(r"_x([0-9A-F]{4})_", lambda m: chr(int(m.group(1), 16)),  # \r: _x000D_
                    t.replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
                    .replace("&amp;", "&"))
             for t in re.findall(r"<t[^>]*>(.*?)</t>", shared, re.S)]
    assert "hyperlink" not in links, "a text was written as a live link"
    return texts, sheet


def _formula_like(text: str) -> bool:
    return text.startswith(FORMULA_STARTS)


def test_participant_ids_beginning_as_formulas_are_exported_quoted(store, monkeypatch):
    ana = store.add_user("ana", "analyst")[0]
    ines = store.add_user("ines", "auditor")[0]
    ids = _import(store, ana, ATTACKS)
    assert ids == ATTACKS  # the import keeps them as they came
    cases = _csv(store, ines, "cases")
    assert [r["participant_id"] for r in cases] == [
        "'" + i if i[0] in "=+-@" else i for i in ATTACKS]
    assert not any(_formula_like(v) for r in cases for v in r.values())
    # numbers stay numbers: the case ids and versions are written bare
    assert [r["case_id"] for r in cases] == [str(i) for i in range(1, len(ATTACKS) + 1)]
    for kind in ("cases", "events", "summary"):
        texts, sheet = _xlsx_cells(wf.export(store, ines, kind, "xlsx"))
        assert "<f>" not in sheet and "<f " not in sheet, kind  # no formula element
        assert not any(_formula_like(t) for t in texts), (kind, texts)
    texts, _ = _xlsx_cells(wf.export(store, ines, "cases", "xlsx"))
    assert "'" + ATTACKS[0] in texts and "http://evil.example" in texts


def test_user_names_beginning_as_formulas_or_with_a_tab_are_exported_quoted(store,
                                                                               monkeypatch):
    ines = store.add_user("ines", "auditor")[0]
    names = {"=": '=HYPERLINK("http://x","y")', "@": "@SUM(1)", "+": "+1",
             "-": "-1", "\t": "\t=1+1", "\r": "\r=1+1"}
    for i, name in enumerate(names.values()):
        user = _old_user(store, monkeypatch, name, "analyst")
        _import(store, user, [f"U-{i}"])
    events = _csv(store, ines, "events")
    assert sorted(r["user"] for r in events) == sorted("'" + n for n in names.values())
    texts, sheet = _xlsx_cells(wf.export(store, ines, "events", "xlsx"))
    assert "<f>" not in sheet
    assert {"'" + n for n in names.values()} <= set(texts)
    assert not any(_formula_like(t) for t in texts)


def test_the_rule_neutralises_text_only_and_leaves_numbers_numbers():
    assert [neutral(c + "x") for c in "=+-@\t\r"] == ["'" + c + "x" for c in "=+-@\t\r"]
    assert [neutral(v) for v in ("x", "", None, "'=x", "a=b", " =x")] == [
        "x", "", None, "'=x", "a=b", " =x"]
    frame = pl.DataFrame({"text": ["-5", "=1", "ok", None], "n": [-5, 1, 2, None],
                          "d": [date(2026, 1, 1)] * 4, "b": [True, False, True, None]})
    out = neutral_frame(frame)
    assert out["text"].to_list() == ["'-5", "'=1", "ok", None]
    assert out.schema == frame.schema
    assert out.drop("text").equals(frame.drop("text"))
    assert "-5" in pl.DataFrame({"n": [-5]}).pipe(neutral_frame).write_csv()


# ---- make test waits for the package manager's lock --------------------------

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
FAKE_APT_GET = """#!/usr/bin/env bash
# apt-get as it behaves with a lock taken: it fails at once (exit 100)
echo "$*" >> "$CALLS"
if python3 -c 'import fcntl, sys
f = open(sys.argv[1], "rb+")
try:
    fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    sys.exit(0)
sys.exit(1)' "$DIFERIDA_APT_LISTS_LOCK" 2>/dev/null; then
    echo "E: Could not get lock $DIFERIDA_APT_LISTS_LOCK" >&2
    exit 100
fi
"""


class HeldLock:
    """A lock file held as apt and dpkg hold theirs (a POSIX record lock)."""

    def __init__(self, path: Path):
        path.touch()
        self.file = path.open("rb+")
        fcntl.lockf(self.file, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def release(self) -> None:
        fcntl.lockf(self.file, fcntl.LOCK_UN)
        self.file.close()


def _sourced(code: str, tmp_path: Path, **env: str) -> subprocess.Popen:
    """bash running `code` after sourcing scripts/apt-locks.sh, with a fake
    apt-get first on PATH that records its calls in tmp_path/calls."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "apt-get"
    fake.write_text(FAKE_APT_GET)
    fake.chmod(0o755)
    inherited = {k: v for k, v in os.environ.items() if k != "DIFERIDA_APT_LOCK_WAIT"}
    full = {**inherited, "PATH": f"{bin_dir}:{os.environ['PATH']}",
            "CALLS": str(tmp_path / "calls"),
            "DIFERIDA_APT_LISTS_LOCK": str(tmp_path / "lists-lock"),
            "DIFERIDA_DPKG_LOCKS": f"{tmp_path / 'lock-frontend'} {tmp_path / 'lock'}", **env}
    return subprocess.Popen(["bash", "-c", f"source {SCRIPTS / 'apt-locks.sh'}; {code}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full)


def _calls(tmp_path: Path) -> list[str]:
    calls = tmp_path / "calls"
    return calls.read_text().splitlines() if calls.exists() else []


def test_apt_get_update_waits_while_another_process_holds_the_lists_lock(tmp_path):
    held = HeldLock(tmp_path / "lists-lock")
    proc = _sourced('apt_get_update 600; echo "status=$?"', tmp_path)
    try:
        said = proc.stderr.readline()  # the first look finds the lock taken
        assert "waiting for the package manager's lock" in said
        assert str(tmp_path / "lists-lock") in said and "DIFERIDA_APT_LOCK_WAIT" in said
        assert proc.poll() is None and _calls(tmp_path) == []  # apt-get not yet run
    finally:
        held.release()
    out, err = proc.communicate(timeout=120)
    assert "status=0" in out, (out, err)
    assert _calls(tmp_path) == ["update -q"]
    assert "Could not get lock" not in err


def test_the_wait_is_bounded_and_says_what_it_waited_for(tmp_path):
    held = HeldLock(tmp_path / "lock-frontend")
    try:
        proc = _sourced(f'wait_for_locks 1 {tmp_path / "lock-frontend"} '
                        f'{tmp_path / "absent"}; echo "status=$?"', tmp_path)
        out, err = proc.communicate(timeout=120)
    finally:
        held.release()
    assert "status=1" in out, (out, err)
    assert "is still held by another process after 1 s" in err
    assert str(tmp_path / "lock-frontend") in err and "absent" not in err


def test_apt_get_install_passes_the_wait_left_to_apt_and_free_locks_cost_nothing(tmp_path):
    proc = _sourced('apt_get_install 600 chromium poppler-utils; echo "status=$?"', tmp_path)
    out, err = proc.communicate(timeout=120)
    assert "status=0" in out, (out, err)
    assert "waiting" not in err  # no lock file is held (none exists)
    [call] = _calls(tmp_path)
    found = re.fullmatch(r"-o DPkg::Lock::Timeout=(\d+) install -y -q chromium poppler-utils",
                         call)
    assert found and 0 < int(found.group(1)) <= 600, call


@pytest.mark.parametrize(("given", "said"), [("", "600"), ("0900", "900"), ("5", "5"),
                                             ("ten", None), ("-1", None), ("1e3", None)])
def test_the_longest_wait_is_a_whole_number_of_seconds_or_refused(tmp_path, given, said):
    env = {"DIFERIDA_APT_LOCK_WAIT": given} if given else {}
    proc = _sourced('apt_lock_wait; echo "status=$?"', tmp_path, **env)
    out, err = proc.communicate(timeout=60)
    if said is None:
        assert "status=2" in out and f"DIFERIDA_APT_LOCK_WAIT: '{given}' is not a whole" in err
    else:
        assert out.split() == [said, "status=0"], (out, err)
