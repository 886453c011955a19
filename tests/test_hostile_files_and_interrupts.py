"""Hostile files and moments, second round: mortality tables, column maps and
read-only output folders through `diferida batch`, `project` and `compare`
(each refused with one message naming the file, the line and the field,
exit 2, nothing written, never a traceback); an interrupt at any moment of a
run (SIGINT or SIGTERM) ends it with exit 130 and either no outputs or
complete ones; and two messages that said something untrue (a row count,
two outputs given one path)."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from diferida.batch import FileProblem, evaluate_file
from diferida.batch.io import load_table
from diferida.batch.limits import Limits
from diferida.cli import main
from diferida.projection.mortality import TableError, load_csv_table

from .conftest import AS_OF, cli_command

V = AS_OF.isoformat()
HEADER = ("participant_id,birth_date,entry_date,separation_date,creditable_service_years,"
          "average_compensation,group,refund_requested")
ROWS = [
    "A1,1965-03-15,1985-01-01,2010-12-31,25,36000.00,general,false",
    "A2,1972-11-02,1995-08-01,2015-07-31,12.25,28500.00,police,false",
    "A3,1980-03-15,2000-01-01,2015-12-31,15,30000,general,false",
    "A4,1970-05-10,1988-07-01,2010-06-30,22,30000.00,general,false",
    "A5,1963-07-19,1990-01-01,2012-12-31,20,bad,firefighter,false",
]
STRICT = "article19-strict-19_4"


@pytest.fixture
def members(tmp_path) -> Path:
    path = tmp_path / "members.csv"
    path.write_text(HEADER + "\n" + "\n".join(ROWS) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def out(tmp_path) -> Path:
    folder = tmp_path / "out"
    folder.mkdir()
    return folder


def invoke(*args: str | Path):
    return CliRunner().invoke(main, [str(a) for a in args])


def refused(r, *says: str) -> str:
    """The run was refused: exit 2, one message, no traceback; returns stderr."""
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and "Aborted!" not in r.output, r.output
    for text in says:
        assert text in r.stderr, (text, r.stderr)
    assert len(r.stderr) < 2_000, r.stderr[:2_000]  # one message, not the file echoed
    return r.stderr


def nothing_in(folder: Path) -> None:
    assert sorted(p.name for p in folder.iterdir()) == []


# ------------------------------------------------------------ mortality tables


def table_lines(age_text: dict[int, str] | None = None, qx_text: dict[int, str] | None = None
                ) -> list[str]:
    """A complete table (ages 0..120, F and M), with some ages or rates of F
    written otherwise."""
    age_text, qx_text = age_text or {}, qx_text or {}
    lines = ["age,sex,qx"]
    for sex in "FM":
        for a in range(121):
            q = "1" if a == 120 else "0.01"
            if sex == "F":
                lines.append(f"{age_text.get(a, a)},F,{qx_text.get(a, q)}")
            else:
                lines.append(f"{a},M,{q}")
    return lines


def table_bytes(lines: list[str], nl: str = "\n") -> bytes:
    return (nl.join(lines) + nl).encode()


HUGE = "1" + "0" * 200_000  # a 200 KB field
# line of F's age 50 in table_lines(): header, then ages 0..49
LINE_50 = 52


@dataclass(frozen=True)
class Table:
    name: str
    data: bytes
    line: int
    field: str  # what the message must name


TABLES = [
    Table("superscript_age", table_bytes(table_lines({50: "²"})), LINE_50, "age"),
    Table("superscript_in_age", table_bytes(table_lines({50: "5²"})), LINE_50, "age"),
    Table("age_of_5000_digits", table_bytes(table_lines({50: "5" * 5000})), LINE_50, "age"),
    Table("arabic_indic_age", table_bytes(table_lines({50: "٥٠"})), LINE_50, "age"),
    Table("fullwidth_age", table_bytes(table_lines({50: "５０"})), LINE_50, "age"),
    Table("arabic_indic_rate", table_bytes(table_lines(qx_text={50: "٠.٠١"})), LINE_50, "qx"),
    Table("fullwidth_rate", table_bytes(table_lines(qx_text={50: "０.０１"})), LINE_50, "qx"),
    Table("underscore_in_rate", table_bytes(table_lines(qx_text={50: "0.0_1"})), LINE_50, "qx"),
    Table("cr_only", table_bytes(table_lines(), nl="\r"), 1, "CR"),
    Table("stray_cr", table_bytes(table_lines(qx_text={50: "0.01\r0.02"})), LINE_50, "CR"),
    Table("field_of_200kb_in_rate", table_bytes(table_lines(qx_text={50: HUGE})), LINE_50,
          "qx"),
    Table("field_of_200kb_in_age", table_bytes(table_lines({50: HUGE})), LINE_50, "age"),
    Table("field_of_200kb_in_header", table_bytes(["age,sex,qx" + "x" * 200_000]
                                                  + table_lines()[1:]), 1, "header"),
    Table("quoted_field_of_200kb", table_bytes(table_lines(qx_text={50: f'"{HUGE}"'})),
          LINE_50, "qx"),
    Table("quoted_lines_of_200kb", table_bytes(table_lines(qx_text={
        50: '"' + "\n".join(["0" * 900] * 250) + '"'})), LINE_50, "qx"),
]


@pytest.mark.parametrize("case", TABLES, ids=lambda c: c.name)
def test_a_bad_mortality_table_is_refused_naming_its_line_and_field(case, tmp_path):
    path = tmp_path / "table.csv"
    path.write_bytes(case.data)
    with pytest.raises(TableError) as caught:
        load_csv_table(path)
    message = str(caught.value)
    assert message.startswith(f"--mortality {path}")
    assert f"line {case.line}:" in message and case.field in message, message
    assert len(message) < 400, message[:400]


@pytest.mark.parametrize("case", TABLES, ids=lambda c: c.name)
def test_a_bad_mortality_table_through_project_and_compare(case, members, out, tmp_path):
    path = tmp_path / "table.csv"
    path.write_bytes(case.data)
    r = invoke("project", members, "-o", out / "flows.csv", "--discount", "0.04",
               "--mortality", path, "--as-of", V, "--rejects", out / "rej.csv")
    refused(r, f"--mortality {path}, line {case.line}:", case.field)
    nothing_in(out)
    r = invoke("compare", members, "--rules", "article19", "--rules", STRICT, "-o",
               out / "c.xlsx", "--discount", "0.04", "--mortality", path, "--as-of", V)
    refused(r, f"--mortality {path}, line {case.line}:", case.field)
    nothing_in(out)


def test_ascii_numbers_as_real_tables_write_them_are_read_and_only_they(tmp_path):
    # exponents, a leading point, quotes, CR-LF line ends, a byte-order mark
    lines = table_lines(qx_text={10: "1.5E-04", 11: ".0002", 12: '"0.0003"', 13: "2e-4"})
    path = tmp_path / "table.csv"
    path.write_bytes(b"\xef\xbb\xbf" + table_bytes(lines, nl="\r\n"))
    table = load_csv_table(path)
    f = table.q[("general", "F", "before")]
    assert (f[10], f[11], f[12], f[13], f[120]) == (1.5e-4, 2e-4, 3e-4, 2e-4, 1.0)
    # the same table with one rate in digits that only look like ASCII ones
    path.write_bytes(table_bytes(table_lines(qx_text={13: "２e-4"}), nl="\r\n"))
    with pytest.raises(TableError, match="line 15: qx '２e-4' is not a number"):
        load_csv_table(path)


# ----------------------------------------------------------------- column maps


DEEP = 100_000
# a dotted table name is not parsed by recursion, but tomllib's time grows
# with the square of its parts (100,000 parts: 10 s a command here); 5,000
# parts is as refused and deeper than any map
DEEP_KEY = 5_000
MAPS = {
    "deep_array": "[columns]\nx = " + "[" * DEEP + "]" * DEEP + "\n",
    "deep_inline_table": "[columns]\nx = " + "{a = " * DEEP + "1" + "}" * DEEP + "\n",
    "deep_table_key": "[" + ".".join(["a"] * DEEP_KEY) + "]\n",
    "field_is_a_table": '[columns]\nid = { participant_id = "x" }\n',
    "columns_is_a_list": '[[columns]]\nid = "participant_id"\n',
    "columns_is_text": 'columns = "participant_id"\n',
    "not_toml": "participant_id: id\n",
    "utf16": '\ufeff[columns]\nid = "participant_id"\n',
}


def _map_file(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.toml"
    text = MAPS[name]
    path.write_bytes(text.encode("utf-16") if name == "utf16" else text.encode())
    return path


@pytest.mark.parametrize("name", sorted(MAPS))
@pytest.mark.slow
def test_a_malformed_column_map_through_batch_project_and_compare(name, members, out,
                                                                  tmp_path):
    path = _map_file(tmp_path, name)
    runs = {
        "batch": ["batch", members, "-o", out / "det.csv", "--rejects", out / "rej.csv"],
        "project": ["project", members, "-o", out / "flows.xlsx", "--discount", "0.04",
                    "--mortality", "none"],
        "compare": ["compare", members, "--rules", "article19", "--rules", STRICT, "-o",
                    out / "c.parquet"],
    }
    for args in runs.values():
        r = invoke(*args, "--columns", path, "--as-of", V, "--lang", "en")
        refused(r, f"{path}: invalid column map")
        nothing_in(out)


def test_a_deeply_nested_column_map_says_so(members, out, tmp_path):
    path = _map_file(tmp_path, "deep_array")
    with pytest.raises(FileProblem, match="invalid column map: .*nest"):
        evaluate_file(members, out / "det.csv", columns=path, as_of=AS_OF)
    nothing_in(out)


def test_a_column_map_that_is_a_folder_or_too_big_is_refused_from_python(members, out,
                                                                        tmp_path):
    folder = tmp_path / "map.toml"
    folder.mkdir()
    with pytest.raises(FileProblem, match="map.toml: invalid column map: a folder, not a file"):
        evaluate_file(members, out / "det.csv", columns=folder, as_of=AS_OF)
    big = tmp_path / "big.toml"
    big.write_text("[columns]\n" + "".join(f'c{i} = "participant_id"\n'
                                           for i in range(200_000)))
    with pytest.raises(FileProblem, match="big.toml: invalid column map: .*bytes"):
        evaluate_file(members, out / "det.csv", columns=big, as_of=AS_OF)
    nothing_in(out)


# ------------------------------------------------------ a read-only output folder


def _mount_read_only(folder: Path, source: Path | None = None) -> None:
    """`folder` made read-only by a mount (as root, chmod does not stop
    writes): an empty tmpfs, or a read-only bind of `source`."""
    if source is None:
        commands = [["mount", "-t", "tmpfs", "-o", "ro", "tmpfs", str(folder)]]
    else:
        commands = [["mount", "--bind", str(source), str(folder)],
                    ["mount", "-o", "remount,bind,ro", str(folder)]]
    for i, command in enumerate(commands):
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError) as exc:
            done = None
            why = str(exc)
        else:
            why = done.stderr.strip()
        if done is None or done.returncode != 0:
            if i:
                subprocess.run(["umount", str(folder)], capture_output=True)
            pytest.skip(f"a read-only folder needs a mount, which this machine does not "
                        f"allow ({why or 'mount failed'}); the clean-up on a read-only file "
                        f"system is still tested with os.unlink patched")
    try:
        (folder / "probe").write_bytes(b"")
    except OSError as exc:
        assert exc.errno == errno.EROFS
    else:  # pragma: no cover
        subprocess.run(["umount", str(folder)], capture_output=True)
        pytest.fail("the mount is not read-only")


@pytest.fixture
def read_only(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    _mount_read_only(folder)
    yield folder
    subprocess.run(["umount", str(folder)], check=True)


@pytest.fixture
def read_only_with_files(tmp_path):
    """A read-only folder holding the outputs of an earlier run."""
    source, folder = tmp_path / "earlier", tmp_path / "ro_files"
    source.mkdir()
    folder.mkdir()
    for name in ("det.csv", "rej.csv", "flows.csv", "flows.assumptions.json", "c.xlsx"):
        (source / name).write_text(f"earlier {name}\n")
    _mount_read_only(folder, source)
    yield folder
    subprocess.run(["umount", str(folder)], check=True)


def _runs(members: Path, folder: Path, kind: str, *, rejects: Path | None = None):
    rejects = rejects or folder / f"rej.{kind}"
    return {
        "batch": ["batch", members, "-o", folder / f"det.{kind}", "--rejects", rejects],
        "project": ["project", members, "-o", folder / f"flows.{kind}", "--discount", "0.04",
                    "--mortality", "none", "--rejects", rejects],
        "compare": ["compare", members, "--rules", "article19", "--rules", STRICT, "-o",
                    folder / f"c.{kind}", "--rejects", rejects],
        "census": ["census", members, "-o", folder / "census.xlsx", "--rejects", rejects],
    }


@pytest.mark.parametrize("kind", ["csv", "xlsx", "parquet"])
def test_a_read_only_output_folder_is_named_exit_2_nothing_written(kind, members, read_only):
    for command, args in _runs(members, read_only, kind).items():
        r = invoke(*args, "--as-of", V, "--lang", "en")
        message = refused(r, "cannot be written: Read-only file system")
        assert str(read_only) in message, (command, message)
        nothing_in(read_only)


@pytest.mark.parametrize("kind", ["csv", "xlsx", "parquet"])
def test_rejects_in_a_read_only_folder_leave_nothing_in_the_writable_one(kind, members, out,
                                                                         read_only):
    # the first output's temporary file was made: it goes when the second fails
    for args in _runs(members, out, kind, rejects=read_only / f"rej.{kind}").values():
        r = invoke(*args, "--as-of", V, "--lang", "en")
        refused(r, f"{read_only / f'rej.{kind}'}: cannot be written: Read-only file system")
        nothing_in(out)
        nothing_in(read_only)


def test_overwriting_in_a_read_only_folder_leaves_the_files_as_they_were(members,
                                                                         read_only_with_files):
    folder = read_only_with_files
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    for args in _runs(members, folder, "csv").values():
        r = invoke(*(a if a != folder / "c.csv" else folder / "c.xlsx" for a in args),
                   "--overwrite", "--as-of", V, "--lang", "en")
        refused(r, "cannot be written: Read-only file system")
        assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_the_command_itself_on_a_read_only_folder(members, read_only):
    done = subprocess.run([*cli_command(), "project", str(members), "-o",
                           str(read_only / "flows.parquet"), "--discount", "0.04",
                           "--mortality", "none", "--as-of", V, "--lang", "en"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (f"{read_only / 'flows.parquet'}: cannot be written: "
                                   "Read-only file system")
    nothing_in(read_only)


def _erofs(*_args, **_kwargs):
    raise OSError(errno.EROFS, os.strerror(errno.EROFS))


def _denied(*_args, **_kwargs):
    raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))


@pytest.mark.parametrize("unlink", [_erofs, _denied], ids=["erofs", "denied"])
@pytest.mark.parametrize("command", ["batch", "project", "compare", "census"])
def test_a_clean_up_whose_unlink_fails_still_ends_with_the_message(command, unlink, members,
                                                                  out, monkeypatch):
    """The folder turns read-only when the temporary file is made: removing
    it fails too (unlink on a read-only file system raises even for a file
    that is not there)."""
    real_open = Path.open

    def open_read_only(self, mode="r", *args, **kwargs):
        if mode == "xb":
            _erofs()
        return real_open(self, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "open", open_read_only)
    monkeypatch.setattr(Path, "unlink", unlink)
    monkeypatch.setattr(os, "unlink", unlink)
    monkeypatch.setattr(os, "remove", unlink)
    r = invoke(*_runs(members, out, "csv")[command], "--as-of", V, "--lang", "en")
    refused(r, "cannot be written: Read-only file system")
    nothing_in(out)


@pytest.mark.parametrize("unlink", [_erofs, _denied], ids=["erofs", "denied"])
@pytest.mark.parametrize("command", ["batch", "project", "compare", "census"])
@pytest.mark.parametrize("kind", ["csv", "xlsx", "parquet"])
def test_a_failed_rename_whose_clean_up_cannot_unlink_still_ends_with_the_message(
        command, kind, unlink, members, out, monkeypatch):
    """The folder turns read-only between the writing and the renaming: the
    renames fail, and so does every removal of the temporary files."""
    import diferida.batch.outputs as outputs

    monkeypatch.setattr(outputs.os, "link", _erofs)
    monkeypatch.setattr(outputs.os, "replace", _erofs)
    monkeypatch.setattr(Path, "unlink", unlink)
    monkeypatch.setattr(os, "unlink", unlink)
    r = invoke(*_runs(members, out, kind)[command], "--as-of", V, "--lang", "en")
    refused(r, "cannot be written: Read-only file system")
    left = sorted(p.name for p in out.iterdir())
    # nothing under an output's name; only the hidden temporary files that
    # could not be removed (on a real read-only folder they were never made)
    assert all(n.startswith(".") and n.endswith(".part") for n in left), left
    monkeypatch.undo()
    for p in out.iterdir():
        p.unlink()


def test_a_write_that_fails_midway_with_a_failing_unlink_ends_with_the_message(
        members, out, monkeypatch):
    import diferida.batch.outputs as outputs

    def full(self, frame):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(outputs.CsvSink, "_write", full)
    monkeypatch.setattr(Path, "unlink", _erofs)
    for args in _runs(members, out, "csv").values():
        r = invoke(*args, "--as-of", V, "--lang", "en")
        refused(r, "cannot be written: No space left on device")
    monkeypatch.undo()
    for p in out.iterdir():
        assert p.name.startswith(".") and p.name.endswith(".part")
        p.unlink()


def test_discarding_unfinished_outputs_never_raises(tmp_path, monkeypatch):
    from diferida.batch import outputs

    sink = outputs.open_sink(tmp_path / "det.csv", overwrite=False)
    monkeypatch.setattr(Path, "unlink", _erofs)
    outputs.discard_unfinished()
    sink.abort()
    monkeypatch.undo()
    outputs.discard_unfinished()
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------- signals: exit 130


# Runs the command as the installed program does (diferida._entry.main), with
# an interrupt sent to itself at one moment: while loading (before the run's
# own handling is in place), just before that handling is put away, or just
# after (the outputs are then in place).
SIGNAL_SCRIPT = r"""
import os, signal, sys, time
import diferida.batch.cli as batch_cli
from diferida import _entry

moment, signum = sys.argv[1], getattr(signal, sys.argv[2])
sys.argv = ["diferida", *sys.argv[3:]]
real = batch_cli.catch_interrupts


def interrupt():
    os.kill(os.getpid(), signum)
    time.sleep(1.0)


def catch():
    if moment == "loading":
        interrupt()
    restore = real()

    def put_away():
        if moment == "before_restore":
            interrupt()
        restore()
        if moment == "after_restore":
            interrupt()

    return put_away


batch_cli.catch_interrupts = catch
sys.exit(_entry.main())
"""

NOTHING = "Interrupted: no output was written"
COMPLETE = "Interrupted after the outputs were written"


def _signal_runs(members: Path, folder: Path) -> dict[str, tuple[list[str], list[str]]]:
    m = str(members)
    return {
        "batch": (["batch", m, "-o", str(folder / "det.csv"), "--rejects",
                   str(folder / "rej.csv")], ["det.csv", "rej.csv"]),
        "project": (["project", m, "-o", str(folder / "flows.csv"), "--discount", "0.04",
                     "--mortality", "none"], ["flows.assumptions.json", "flows.csv"]),
        "compare": (["compare", m, "--rules", "article19", "--rules", STRICT, "-o",
                     str(folder / "c.xlsx")], ["c.xlsx"]),
        "census": (["census", m, "-o", str(folder / "census.xlsx")], ["census.xlsx"]),
    }


@pytest.mark.parametrize("moment", ["loading", "before_restore", "after_restore"])
@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("command", ["batch", "project", "compare", "census"])
@pytest.mark.slow
def test_an_interrupt_at_any_moment_exits_130_with_no_outputs_or_complete_ones(
        command, signame, moment, members, out):
    args, files = _signal_runs(members, out)[command]
    done = subprocess.run([sys.executable, "-c", SIGNAL_SCRIPT, moment, signame, *args,
                           "--as-of", V, "--lang", "en", "-q"],
                          capture_output=True, text=True, timeout=120)
    err = done.stderr
    assert "Traceback" not in err and "Aborted!" not in err, err
    assert done.returncode == 130, (done.returncode, err)
    written = sorted(p.name for p in out.iterdir())
    if moment == "loading":
        assert written == [] and err.strip() == NOTHING + (
            " (files that already existed are left as they were)"), err
    else:
        assert written == files, written
        assert COMPLETE in err and NOTHING not in err, err


@pytest.mark.parametrize("command", ["batch", "project", "compare", "census"])
def test_an_interrupt_while_a_refusal_is_reported_exits_130_not_aborted(command, members, out,
                                                                       monkeypatch):
    """The interrupt comes while the message of a refusal is being written:
    click would make it "Aborted!" and exit 1."""
    import diferida.batch.cli as batch_cli
    import diferida.batch.runner as batch_runner
    import diferida.census.runner as census_runner
    import diferida.compare.runner as compare_runner
    import diferida.projection.runner as projection_runner

    class Refusal(FileProblem):
        armed = False

        def text(self, lang="en"):
            if self.armed:  # the command writes the message (not the exception made)
                batch_cli._on_signal(signal.SIGTERM, None)
            return super().text(lang)

    def refuse(*_args, **_kwargs):
        refusal = Refusal("no_rows", file="members.csv")
        refusal.armed = True
        raise refusal

    module, name = {"batch": (batch_runner, "evaluate_file"),
                    "project": (projection_runner, "project_file"),
                    "compare": (compare_runner, "compare_file"),
                    "census": (census_runner, "census_file")}[command]
    monkeypatch.setattr(module, name, refuse)
    args, _ = _signal_runs(members, out)[command]
    r = invoke(*args, "--as-of", V, "--lang", "en")
    assert r.exit_code == 130, r.output
    assert "Aborted!" not in r.output and NOTHING in r.stderr, r.output
    nothing_in(out)


@pytest.mark.parametrize("command", ["batch", "project", "compare", "census"])
def test_an_interrupt_at_the_edge_of_the_run_s_own_handling_is_not_aborted(command, members,
                                                                          out, monkeypatch):
    # the interrupt lands as the run's handling is being put in place
    import diferida.batch.cli as batch_cli

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(batch_cli, "catch_interrupts", interrupted)
    args, _ = _signal_runs(members, out)[command]
    r = invoke(*args, "--as-of", V, "--lang", "en")
    assert r.exit_code == 130, r.output
    assert "Aborted!" not in r.output and NOTHING in r.stderr, r.output
    nothing_in(out)


def test_the_exit_status_after_a_signal_is_documented():
    doc = (Path(__file__).resolve().parents[1] / "docs" / "batch.md").read_text()
    assert "SIGINT" in doc and "SIGTERM" in doc and "| 130 |" in doc


# ------------------------------------------------------------------- messages


def test_too_many_rows_states_the_true_count_or_more_than_the_limit():
    # ~19 MB: more than one block of the row count, which stops past the limit
    rows = 1_200_000
    data = (",".join(HEADER.split(",")) + "\n").encode() + b"x,x,x,x,x,x,x,x\n" * rows
    with pytest.raises(FileProblem) as caught:
        load_table(data, "big.csv", limits=Limits(rows=250_000))
    assert caught.value.code == "too_many_rows"
    message = caught.value.text("en")
    assert message in ("big.csv: has 1,200,000 rows; the limit here is 250,000",
                       "big.csv: has more than 250,000 rows; the limit here is 250,000"), \
        message
    spanish = caught.value.text("es")
    assert "1,200,000 filas" in spanish or "más de 250,000 filas" in spanish, spanish
    # a small file is counted to its end: its true count
    with pytest.raises(FileProblem, match="has 3 rows; the limit here is 2"):
        load_table((HEADER + "\n" + "\n".join(ROWS[:3]) + "\n").encode(), "three.csv",
                   limits=Limits(rows=2))


@pytest.mark.parametrize("args, first, second", [
    (["batch", "{m}", "-o", "{o}/same.csv", "--rejects", "{o}/same.csv"],
     "--rejects", "-o/--output"),
    (["project", "{m}", "-o", "{o}/same.csv", "--rejects", "{o}/same.csv", "--discount", "0",
      "--mortality", "none"], "--rejects", "-o/--output"),
    (["project", "{m}", "-o", "{o}/f.csv", "--per-member", "{o}/f.csv", "--discount", "0",
      "--mortality", "none"], "--per-member", "-o/--output"),
    (["project", "{m}", "-o", "{o}/f.csv", "--rejects", "{o}/same.csv", "--per-member",
      "{o}/same.csv", "--discount", "0", "--mortality", "none"], "--per-member", "--rejects"),
    (["compare", "{m}", "--rules", "article19", "--rules", STRICT, "-o", "{o}/c.xlsx",
      "--rejects", "{o}/c.xlsx"], "--rejects", "-o/--output"),
    (["compare", "{m}", "--rules", "article19", "--rules", STRICT, "-o", "{o}/c.csv",
      "--rejects", "{o}/c.summary.csv"], "--rejects", "-o/--output"),
])
def test_two_outputs_given_one_path_are_named_as_the_same_file(args, first, second, members,
                                                                out):
    r = invoke(*(a.format(m=members, o=out) for a in args), "--as-of", V, "--lang", "en")
    message = refused(r, first, second, "the same file")
    assert "input" not in message, message
    nothing_in(out)
