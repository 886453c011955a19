"""The run around the population pass (batch/run.py, `PopulationRun`): one
owner of the source, the outputs, the renaming and the clean-up for every
command that reads a member file. An interrupt that comes while a run cleans
up after a first one waits until the clean-up is done: no temporary file is
left, the files that were there stay as they were, and the interrupt is then
answered (a KeyboardInterrupt; under the commands, exit 130 and the message
that no output was written)."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest
from bench.generate import write
from click.testing import CliRunner

import diferida.batch.cli as batch_cli
from diferida.batch import outputs
from diferida.batch.run import PopulationRun, RunOptions
from diferida.batch.runner import evaluate_file
from diferida.census.runner import census_file
from diferida.cli import main
from diferida.compare.runner import compare_file
from diferida.interrupts import held
from diferida.projection.runner import project_file

from .conftest import AS_OF

COMMANDS = ["batch", "project", "compare", "census"]
NOTHING = "Interrupted: no output was written"
STRICT = "article19-strict-19_4"


@pytest.fixture(scope="module")
def members(tmp_path_factory) -> Path:
    # three chunks of 200 rows, bad values among them: the rejects are written as it goes
    return write(600, tmp_path_factory.mktemp("members") / "members.csv", invalid=0.05)


def _outputs(command: str, folder: Path) -> tuple[Path, Path]:
    """The command's main output and its rejects, in `folder`."""
    main_name = {"batch": "det.csv", "project": "flows.csv", "compare": "c.xlsx",
                 "census": "census.xlsx"}[command]
    return folder / main_name, folder / "rej.csv"


def _python(command: str, members: Path, folder: Path, **kw):
    out, rej = _outputs(command, folder)
    common = {"as_of": AS_OF, "overwrite": True, "chunk_rows": 200, "lang": "en", **kw}
    if command == "batch":
        return evaluate_file(members, out, rej, **common)
    if command == "project":
        return project_file(members, out, rej, discount="0.04", mortality="none", **common)
    if command == "compare":
        return compare_file(members, out, ["article19", STRICT], rejects=rej,
                            html=folder / "c.html", **common)
    return census_file(members, out, folder / "census.html", rej, **common)


def _cli(command: str, members: Path, folder: Path) -> list[str]:
    out, rej = _outputs(command, folder)
    extra = {"batch": [], "project": ["--discount", "0.04", "--mortality", "none"],
             "compare": ["--rules", "article19", "--rules", STRICT, "--html",
                         str(folder / "c.html")],
             "census": ["--html", str(folder / "census.html")]}[command]
    return [command, str(members), "-o", str(out), "--rejects", str(rej), *extra,
            "--as-of", AS_OF.isoformat(), "--chunk-rows", "200", "--overwrite", "-q",
            "--lang", "en"]


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.fixture
def second_ctrl_c(monkeypatch):
    """A real SIGINT sent to the process as the clean-up starts removing the
    first output it had begun (the moment a second Ctrl-C can come). Python's
    own handler answers it, unless the run holds it; the list counts them."""
    real = outputs.Sink.abort
    sent: list[bool] = []

    def abort(self):
        if not sent:
            sent.append(True)
            os.kill(os.getpid(), signal.SIGINT)
        real(self)

    monkeypatch.setattr(outputs.Sink, "abort", abort)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield sent
    signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("moment", ["reading", "renaming", "command"])
@pytest.mark.parametrize("command", COMMANDS)
def test_a_second_interrupt_during_the_clean_up_leaves_no_file_and_is_answered(
        command, moment, members, tmp_path, second_ctrl_c, monkeypatch):
    """The first interrupt comes while the file is read (at the second
    chunk: the rejects are being written), or just before the completed
    outputs are renamed into place; the second while the run removes what it
    had written. `command`: the same through the command line, which says
    that nothing was written and exits 130."""
    out, rej = _outputs(command, tmp_path)
    before = {out.name: b"old output", rej.name: b"old rejects"}
    for name, data in before.items():
        (tmp_path / name).write_bytes(data)
    if moment == "command":
        def ctrl_c_before_renaming() -> None:
            batch_cli._on_signal(signal.SIGINT, None)  # as the command's handler would

        monkeypatch.setattr(batch_cli, "start_placing", ctrl_c_before_renaming)
        r = CliRunner().invoke(main, _cli(command, members, tmp_path))
        assert r.exit_code == 130, r.output
        assert r.stderr.strip().startswith(NOTHING), r.stderr
        assert "Traceback" not in r.output and "Aborted!" not in r.output, r.output
    else:
        chunks: list[bool] = []

        def progress(*_args) -> None:  # after each chunk (batch: done, total; others: phase too)
            chunks.append(True)
            if len(chunks) == 2:
                raise KeyboardInterrupt

        def ctrl_c_before_renaming() -> None:
            raise KeyboardInterrupt

        kw = {"progress": progress} if moment == "reading" else {
            "on_rename": ctrl_c_before_renaming}
        with pytest.raises(KeyboardInterrupt) as stopped:
            _python(command, members, tmp_path, **kw)
        # the second interrupt, answered once the clean-up was done, after the first
        assert isinstance(stopped.value.__context__, KeyboardInterrupt)
    assert second_ctrl_c == [True]  # it came during the clean-up
    assert _files(tmp_path) == before  # no temporary file, the old files as they were


@pytest.mark.parametrize("command", COMMANDS)
def test_a_ctrl_c_while_the_outputs_are_renamed_waits_until_all_are_in_place(
        command, members, tmp_path, monkeypatch):
    """Called from Python (no command's handler): the SIGINT that comes
    between the first rename and the next is answered once every output is
    in place, so the files are the new set, whole, never one new beside an
    old one."""
    out, rej = _outputs(command, tmp_path)
    for path in (out, rej):
        path.write_bytes(b"old")
    real = os.replace
    renamed: list[str] = []

    def replace_then_ctrl_c(a, b):
        real(a, b)
        renamed.append(Path(b).name)
        if len(renamed) == 1:
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(outputs.os, "replace", replace_then_ctrl_c)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            _python(command, members, tmp_path)
    finally:
        signal.signal(signal.SIGINT, previous)
    after = _files(tmp_path)
    assert len(renamed) > 1 and sorted(renamed) == sorted(after)  # every output, renamed
    assert after[out.name] != b"old" and after[rej.name] != b"old"


def test_an_interrupt_held_during_a_block_is_answered_at_its_end(monkeypatch):
    came: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: came.append(signum))
    try:
        with held():
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)
            assert came == []  # held
        assert came == [signal.SIGINT, signal.SIGINT]  # each answered, in turn
        signal.signal(signal.SIGINT, signal.default_int_handler)
        with pytest.raises(KeyboardInterrupt), held():
            os.kill(os.getpid(), signal.SIGINT)
            came.append(0)  # the block runs to its end first
        assert came[-1] == 0
    finally:
        signal.signal(signal.SIGINT, previous)


def test_held_outside_the_main_thread_changes_nothing():
    handlers: list[object] = []

    def other() -> None:
        with held():
            handlers.append(signal.getsignal(signal.SIGINT))

    before = signal.getsignal(signal.SIGINT)
    worker = threading.Thread(target=other)
    worker.start()
    worker.join()
    assert handlers == [before]


def test_a_run_left_without_committing_removes_its_outputs_and_says_so(members, tmp_path):
    with pytest.raises(RuntimeError, match="without committing"), \
            PopulationRun(members, options=RunOptions(chunk_rows=200, lang="en")) as run:
        run.output(tmp_path / "det.csv")
        run.data(tmp_path / "page.html", b"<p>")
    assert list(tmp_path.iterdir()) == []


def test_a_run_refused_before_anything_is_written_opens_no_output(tmp_path):
    from diferida.batch.errors import FileProblem

    with pytest.raises(FileProblem), \
            PopulationRun(tmp_path / "missing.csv",
                          options=RunOptions(chunk_rows=200, lang="en"),
                          rejects=tmp_path / "rej.csv"):
        pass  # pragma: no cover (the source is refused first)
    assert list(tmp_path.iterdir()) == []
