"""An interrupted `diferida batch` leaves the complete pair of outputs
(determinations + rejects) or the pair that was there before, never one new
file beside an old one, and says truly which; Ctrl-C at any moment, even
while the program is still loading, gives one line and exit 130, never a
traceback."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from bench.generate import write
from click.testing import CliRunner

import diferida.batch.outputs as batch_io
from diferida.batch import evaluate_file
from diferida.cli import main

from .conftest import AS_OF, cli_command

ROWS = 20_000
# the program's own files, as a traceback names them
PROGRAM = {str(Path(batch_io.__file__).parents[1]),
           str(Path(batch_io.__file__).resolve().parents[1])}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("inputs")
    return (write(300, folder / "old.csv", invalid=0.05),
            write(ROWS, folder / "new.csv", invalid=0.05))


def _args(src: Path, folder: Path, *extra: str) -> list[str]:
    return ["batch", str(src), "-o", str(folder / "det.csv"), "--rejects",
            str(folder / "rej.csv"), "--overwrite", "-q", "--as-of", AS_OF.isoformat(), *extra]


def _old_pair(old: Path, folder: Path) -> dict[str, bytes]:
    r = CliRunner().invoke(main, _args(old, folder))
    assert r.exit_code == 0, r.output
    return _pair(folder)


def _pair(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


# the line of `_entry.py` where it holds a SIGINT: no frame of the program may
# be named at or after it (an interrupt inside that `try` is answered)
_ENTRY = Path(batch_io.__file__).parents[1] / "_entry.py"
HOLD_LINE = 1 + _ENTRY.read_text().splitlines().index("try:")
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<where>\S+)')


# What Python itself writes when a SIGINT lands in a callback of its own while
# it starts (a lock of the import system let go, a check of argv[0]): it reports
# the KeyboardInterrupt as ignored, and carries on as if no signal had come.
_IGNORED = re.compile(r"^(?:Exception ignored in: [^\n]*|Failed checking if argv\[0\] is an "
                      r"import path entry)\n(?:.*\n)*?KeyboardInterrupt[^\n]*\n", re.MULTILINE)


def _without_what_python_ignored(message: str) -> str:
    """The message without the interrupts the interpreter ignored at its start
    (each only in its own frames): the program never saw them."""
    for ignored in _IGNORED.finditer(message):
        files = re.findall(r'File "([^"]+)"', ignored[0])
        assert files and all(f.startswith("<frozen ") for f in files), message
    return _IGNORED.sub("", message)


def _before_the_program(message: str, returncode: int) -> bool:
    """Whether Python itself answered a SIGINT that came before the program's
    handling of it: while the interpreter imports `site` or sets up its standard
    streams (it then reports "Fatal Python error" and exits with 1), while the
    launcher pip writes runs its own `import re`, or in the first instructions
    of `diferida/__init__.py` and of `_entry.py`, before `_entry.py` holds the
    signal (a KeyboardInterrupt; the process is ended by the signal). The
    program can do nothing there, and has written nothing. A traceback with any
    other frame of the program fails the test."""
    if "Traceback" not in message:
        return False
    assert message.rstrip().endswith("KeyboardInterrupt"), message
    for frame in _FRAME.finditer(message):
        file, line, where = frame["file"], int(frame["line"]), frame["where"]
        if not any(file.startswith(f"{folder}{os.sep}") for folder in PROGRAM):
            continue
        name = Path(file).name
        assert where == "<module>" and (
            name == "__init__.py" and Path(file).parent.name == "diferida"
            or name == "_entry.py" and line < HOLD_LINE), message
    site = message.startswith("Fatal Python error: init_")  # import_site, sys_streams...
    assert returncode == (1 if site else -signal.SIGINT), (returncode, message)
    return True


# what Python printed when a SIGINT came 15 ms and 30 ms after the start
SITE = """Fatal Python error: init_import_site: Failed to import the site module
Python runtime state: initialized
Traceback (most recent call last):
  File "<frozen importlib._bootstrap>", line 1176, in _find_and_load
  File "<frozen site>", line 616, in <module>
KeyboardInterrupt
"""
LAUNCHER = """Traceback (most recent call last):
  File "/srv/app/.venv/bin/diferida", line 3, in <module>
    import re
  File "/usr/lib/python3.11/re/__init__.py", line 141, in <module>
KeyboardInterrupt
"""


STREAMS = """Fatal Python error: init_sys_streams: can't initialize sys standard streams
Python runtime state: core initialized
Traceback (most recent call last):
  File "<frozen importlib._bootstrap>", line 1176, in _find_and_load
  File "<frozen io>", line 97, in <module>
  File "<frozen abc>", line 106, in __new__
KeyboardInterrupt
"""
# what Python printed when a SIGINT came 10 ms to 30 ms after the start, and the
# run then went on to its end (here: its input did not exist)
IGNORED = ["""Exception ignored in: <function _get_module_lock.<locals>.cb at 0x7f398f125f80>
Traceback (most recent call last):
  File "<frozen importlib._bootstrap>", line 207, in cb
KeyboardInterrupt: \n""", """Failed checking if argv[0] is an import path entry
Traceback (most recent call last):
  File "<frozen zipimport>", line 92, in __init__
KeyError: '/srv/app/.venv/bin/diferida'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "<frozen zipimport>", line 94, in __init__
  File "<frozen zipimport>", line 416, in _read_directory
KeyboardInterrupt
"""]
RUN = "/nonexistent.csv: no existe el archivo\n"


def test_an_interrupt_python_ignored_at_its_start_is_left_out_of_the_message():
    for ignored in IGNORED:
        assert _without_what_python_ignored(ignored + RUN) == RUN
        assert not _before_the_program(_without_what_python_ignored(ignored + RUN), 2)
        ours = ignored.replace('"<frozen zipimport>"', f'"{min(PROGRAM)}{os.sep}cli.py"')
        ours = ours.replace('"<frozen importlib._bootstrap>"', f'"{min(PROGRAM)}{os.sep}cli.py"')
        with pytest.raises(AssertionError):
            _without_what_python_ignored(ours + RUN)
    assert _without_what_python_ignored(LAUNCHER) == LAUNCHER


# The program as the launcher starts it, with a SIGINT sent while `_entry.py`
# loads the module it imports last before its handler is in place.
WHILE_ENTRY_LOADS = r"""
import os, signal, sys, time


class InterruptOnImport:
    def find_spec(self, name, path=None, target=None):
        if name == "diferida.interrupts":
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.5)  # Python's handler of the moment runs here
        return None


sys.meta_path.insert(0, InterruptOnImport())
sys.argv = ["diferida", "batch", "members.csv", "--lang", "en"]
from diferida._entry import main
main()
"""


def test_ctrl_c_while_the_entry_point_loads_is_held_then_answered():
    done = subprocess.run([sys.executable, "-c", WHILE_ENTRY_LOADS], capture_output=True,
                          text=True, timeout=60)
    assert (done.returncode, done.stderr) == (
        130, "Interrupted: no output was written (files that already existed are left as "
             "they were)\n")


def _launcher_then(*frames: tuple[str, int, str]) -> str:
    named = "".join(f'  File "{min(PROGRAM)}{os.sep}{file}", line {line}, in {where}\n'
                    for file, line, where in frames)
    return LAUNCHER.replace("KeyboardInterrupt", f"{named}KeyboardInterrupt")


def test_only_python_own_start_may_answer_an_interrupt_with_a_traceback():
    assert _before_the_program(SITE, 1) and _before_the_program(LAUNCHER, -signal.SIGINT)
    assert _before_the_program(STREAMS, 1)
    assert not _before_the_program("", -signal.SIGINT)
    for first in ((("__init__.py", 1, "<module>"),),
                  (("_entry.py", HOLD_LINE - 1, "<module>"),)):
        assert _before_the_program(_launcher_then(*first), -signal.SIGINT)
    ours = [_launcher_then(*frames) for frames in (
        (("_entry.py", HOLD_LINE, "<module>"),),
        (("_entry.py", HOLD_LINE + 30, "main"),),
        (("_entry.py", HOLD_LINE - 1, "<module>"), ("interrupts.py", 1, "<module>")),
        (("__init__.py", 55, "__getattr__"),),
        (("batch/__init__.py", 1, "<module>"),),
    )]
    for message, code in [*((m, -signal.SIGINT) for m in ours), (LAUNCHER, 130),
                          (SITE, -signal.SIGINT),
                          (LAUNCHER.replace("KeyboardInterrupt", "ValueError"), 1)]:
        with pytest.raises(AssertionError):
            _before_the_program(message, code)


def _complete(folder: Path, rows: int) -> bool:
    det = pl.read_csv(folder / "det.csv", infer_schema=False)
    rej = pl.read_csv(folder / "rej.csv", infer_schema=False)
    return det.height + rej["row"].n_unique() == rows


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("delay", [0.4, 0.55, 0.7, 1.5])
@pytest.mark.slow
def test_an_interrupted_run_writing_parquet_leaves_no_file_and_no_thread_behind(
        inputs, tmp_path, delay, signum):
    # the Parquet output is written by a sink on a thread of its own: a stop
    # ends it, and its temporary file goes with it
    _, new = inputs
    args = ["batch", str(new), "-o", str(tmp_path / "det.parquet"), "--rejects",
            str(tmp_path / "rej.parquet"), "-q", "--as-of", AS_OF.isoformat(),
            "--chunk-rows", "1000"]
    proc = subprocess.Popen([*cli_command(), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    time.sleep(delay)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    message = _without_what_python_ignored(err.decode())
    after = sorted(p.name for p in tmp_path.iterdir())
    if _before_the_program(message, proc.returncode):
        assert after == []
        return
    assert "Traceback" not in message, message
    if after:  # finished before the signal: both outputs, whole
        assert after == ["det.parquet", "rej.parquet"] and proc.returncode == 0
        det = pl.read_parquet(tmp_path / "det.parquet")
        rej = pl.read_parquet(tmp_path / "rej.parquet")
        assert det.height + rej["row"].n_unique() == ROWS
    else:
        assert proc.returncode != 0


@pytest.mark.parametrize("delay", [0.05, 0.15, 0.3, 0.8, 1.5, 3.0])
@pytest.mark.slow
def test_ctrl_c_at_any_moment_leaves_the_old_pair_or_the_complete_new_one(inputs, tmp_path,
                                                                           delay):
    old, new = inputs
    before = _old_pair(old, tmp_path)
    proc = subprocess.Popen([*cli_command(), *_args(new, tmp_path, "--chunk-rows", "1000")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    message = _without_what_python_ignored(err.decode())
    after = _pair(tmp_path)
    assert sorted(after) == ["det.csv", "rej.csv"]  # no temporary file left either
    if _before_the_program(message, proc.returncode):
        assert after == before
        return
    assert "KeyboardInterrupt" not in message, message
    if proc.returncode == -signal.SIGINT:
        # the interpreter's own first or last milliseconds, before or after any of
        # the program's code: ended by the signal itself, silently
        assert message == "", message
    if after == before:
        assert proc.returncode in (130, -signal.SIGINT)
        assert proc.returncode != 130 or message.strip() == (
            "Interrumpido: no se escribió ningún resultado (los archivos que ya existían "
            "quedan como estaban)")
    else:  # the run had finished, or was putting its outputs in place
        assert _complete(tmp_path, ROWS)
        assert proc.returncode in (0, 130, -signal.SIGINT)
        assert proc.returncode != 130 or "están completos" in message, message


def test_an_interrupt_while_the_outputs_are_renamed_is_held_until_both_are_in_place(
        inputs, tmp_path, monkeypatch):
    old, new = inputs
    before = _old_pair(old, tmp_path)
    real = os.replace
    calls = []

    def replace_then_interrupt(a, b):
        calls.append(b)
        real(a, b)
        if len(calls) == 1:  # between the first output and the second
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # the handler runs here

    monkeypatch.setattr(batch_io.os, "replace", replace_then_interrupt)
    r = CliRunner().invoke(main, [*_args(new, tmp_path), "--lang", "en"])
    assert r.exit_code == 130, r.output
    assert len(calls) == 2
    assert "Interrupted after the outputs were written" in r.stderr
    assert "complete" in r.stderr
    after = _pair(tmp_path)
    assert sorted(after) == ["det.csv", "rej.csv"] and after != before
    assert _complete(tmp_path, ROWS)


def test_a_failure_on_the_second_rename_puts_the_first_output_back(inputs, tmp_path,
                                                                    monkeypatch):
    old, new = inputs
    before = _old_pair(old, tmp_path)
    real = os.replace
    calls = []

    def fail_second(a, b):
        calls.append(b)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(a, b)

    monkeypatch.setattr(batch_io.os, "replace", fail_second)
    r = CliRunner().invoke(main, [*_args(new, tmp_path), "--lang", "en"])
    assert r.exit_code == 2, r.output
    assert "cannot be written: No space left on device" in r.stderr
    assert _pair(tmp_path) == before  # the old pair, as it was, and nothing else


def test_from_python_an_interrupt_between_the_renames_leaves_the_old_pair(inputs, tmp_path,
                                                                          monkeypatch):
    old, new = inputs
    before = _old_pair(old, tmp_path)
    real = os.replace
    calls = []

    def interrupted_second(a, b):
        calls.append(b)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(a, b)

    monkeypatch.setattr(batch_io.os, "replace", interrupted_second)
    with pytest.raises(KeyboardInterrupt):
        evaluate_file(new, tmp_path / "det.csv", tmp_path / "rej.csv", as_of=AS_OF,
                      overwrite=True)
    assert _pair(tmp_path) == before


def test_without_overwrite_a_file_that_appears_meanwhile_is_kept_and_nothing_is_added(
        inputs, tmp_path, monkeypatch):
    _, new = inputs
    real = os.link

    def someone_else_writes_rejects(a, b, **kw):
        if str(b).endswith("rej.csv"):
            Path(b).write_text("theirs")
        return real(a, b, **kw)

    monkeypatch.setattr(batch_io.os, "link", someone_else_writes_rejects)
    r = CliRunner().invoke(main, ["batch", str(new), "-o", str(tmp_path / "det.csv"),
                                  "--rejects", str(tmp_path / "rej.csv"), "-q", "--lang", "en"])
    assert r.exit_code == 2 and "already exists" in r.stderr
    assert _pair(tmp_path) == {"rej.csv": b"theirs"}


@pytest.mark.parametrize("kind", ["csv", "parquet", "xlsx"])
def test_an_interrupt_while_an_output_is_being_opened_leaves_no_temporary_file(tmp_path, kind,
                                                                              monkeypatch):
    # The interrupt comes just after the hidden temporary file was created and
    # before its sink is known to the run (the moment a CI run once caught).
    real_open = Path.open

    def interrupted_open(self, mode="r", *args, **kwargs):
        handle = real_open(self, mode, *args, **kwargs)
        if mode == "xb":
            handle.close()
            raise KeyboardInterrupt
        return handle

    monkeypatch.setattr(Path, "open", interrupted_open)
    with pytest.raises(KeyboardInterrupt):
        batch_io.open_sink(tmp_path / f"det.{kind}", overwrite=False)
    monkeypatch.setattr(Path, "open", real_open)
    assert [p.name for p in tmp_path.iterdir()] == []


def test_an_interrupted_command_removes_the_temporary_file_of_an_output_half_opened(tmp_path):
    # The file exists, its sink was never handed to the run: only the
    # command's last clean-up can find it.
    sink = batch_io.open_sink(tmp_path / "rej.csv", overwrite=False)
    assert len(list(tmp_path.iterdir())) == 1
    batch_io.discard_unfinished()
    assert list(tmp_path.iterdir()) == []
    sink.abort()  # and aborting it afterwards is harmless
    assert list(tmp_path.iterdir()) == []


def test_an_interrupt_that_python_could_not_raise_stops_the_run_at_the_next_chunk_quietly(
        inputs, tmp_path, monkeypatch):
    """An interrupt that comes while Python code runs on a library's behalf
    (an object being freed, a callback from Polars) cannot come out there:
    Python would print "Exception ignored" with a traceback and go on. The
    run stops at its next chunk instead, with its one line."""
    import diferida.batch.cli as batch_cli
    import diferida.batch.runner as runner

    old, new = inputs
    before = _old_pair(old, tmp_path)
    real = runner.evaluate_frame
    calls = []

    class Freed:
        def __del__(self):  # the signal arrives while this is freed
            batch_cli._on_signal(signal.SIGTERM, None)

    def evaluate(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            Freed()  # made and freed at once
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "evaluate_frame", evaluate)
    hook = sys.unraisablehook
    r = CliRunner().invoke(main, [*_args(new, tmp_path, "--chunk-rows", "1000"), "--lang", "en"])
    assert r.exit_code == 130, r.output
    assert "Interrupted: no output was written" in r.stderr
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr
    assert len(calls) == 2  # not one chunk more
    assert _pair(tmp_path) == before
    assert sys.unraisablehook is hook  # put back


def test_other_unraisable_exceptions_are_still_reported_during_a_run():
    import diferida.batch.cli as batch_cli

    seen = []
    previous = sys.unraisablehook
    sys.unraisablehook = seen.append
    try:
        restore = batch_cli.catch_interrupts()

        class Broken:
            def __del__(self):
                raise ValueError("not an interrupt")

        Broken()
        restore()
    finally:
        sys.unraisablehook = previous
    assert [type(u.exc_value) for u in seen] == [ValueError]
