"""Every file the command line reads, and the hostile inputs of issue 42.

The walk: every parameter of every `diferida` command, found through click's
own introspection of the command group, that takes a path (a click.Path, or
a text option or argument documented as a file) is in one of three tables:
INPUTS (a file the command reads, with how to run the command on it and the
limit of its reader), OUTPUTS (a file the command writes) or NOT_FILES (a
text that is not a file to read). A file option added later and missing from
them fails `test_every_file_parameter_is_in_a_table` with its name.

Each input is then given `/dev/zero` (a device that never ends), a FIFO no
one writes to (named as its kind of file is: x.csv, x.toml) and a regular
file one byte over its limit — for a census, whose limits are of its table
(rows, columns, cells) rather than of its bytes, a folder named x.csv. The
command must refuse each (exit 2, no traceback) with a message of at most
300 characters that names the option and says what the file is, within 60 s
and 200 MB, writing nothing. A real process each time (not click's runner):
its peak memory is its own (see LAUNCHER), and a FIFO opened without care
would hang it, not the test.

The hostile corpus: option values of 100,000 digits (the kernel takes one
argument of at most 128 KiB, so a million digits cannot be given on a
command line), rates that overflow a float or a Decimal, a prior-assumptions
file nested 5,000 arrays deep or with a number of 10,000 digits, a rules file
with such an integer, a relief COLA of 100 % a year and a relief of fifty
doublings: each refused (exit 2, no traceback) in at most 300 characters that
name the option, the field or the line.

Every test here that starts a process is marked `slow` (see SLOW)."""

from __future__ import annotations

import functools
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from diferida.batch.columns import MAX_MAP_BYTES
from diferida.cli import main
from diferida.i18n import LANGS, catalog
from diferida.liability.curve import MAX_CURVE_BYTES
from diferida.liability.employer import MAX_NAMES_BYTES
from diferida.liability.history import MAX_BYTES as MAX_HISTORY_BYTES
from diferida.liability.runner import MAX_PRIOR_BYTES
from diferida.projection.claims import MAX_CLAIM_BYTES
from diferida.projection.mortality import MAX_CSV_BYTES
from diferida.rules import MAX_FILE_BYTES, SERIES_MAX_BYTES
from diferida.service.cli import MAX_PASSWORD_LINE

from .conftest import cli_command
from .test_liability_errors import HEADER, ROWS
from .test_relief_files import HEAD as RELIEF_HEAD

AS_OF = "2026-06-30"
PRIOR_DATE = "2025-06-30"
TIMEOUT = 60  # seconds a refusal may take (a few seconds at most; a hang is a failure)
MAX_RSS_KIB = 200 * 1024  # ru_maxrss is in KiB on Linux
MAX_MESSAGE = 300
# about 130 processes of about a CPU-second each (the package's imports): more
# than a minute on two workers, so `make test` runs them and `make check` does
# not; the check that every file parameter is in a table starts no process and
# stays in both
SLOW = pytest.mark.slow


# ---- running the command ---------------------------------------------------

@dataclass(frozen=True)
class Ran:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    maxrss_kib: int
    seconds: float

    def __str__(self) -> str:
        shown = [a if len(a) <= 80 else f"{a[:60]}…({len(a):,} characters)" for a in self.args]
        return (f"diferida {' '.join(shown)}\nexit {self.returncode}, "
                f"{self.maxrss_kib / 1024:.0f} MB, {self.seconds:.1f} s\n"
                f"stdout: {self.stdout[:2000]}\nstderr: {self.stderr[:3000]}")


# The command is started by a small launcher that forks it and waits for it:
# the peak memory `wait4` reports for a process started from the test's own
# (by fork or vfork, then exec) is at least the test process's own at that
# moment, kept across exec (getrusage(2)); the launcher's fork gives the
# command a count of its own, as /usr/bin/time's does.
LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    try:
        os.execv(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(f"{status} {usage.ru_maxrss}")
"""


def run(args: list[str], cwd: Path, stdin: str | Path | None = None,
        command: list[str] | None = None) -> Ran:
    """`diferida ARGS` in its own process, its output in files (a pipe
    filled by a long message would stop it), its exit status and peak
    memory as its launcher saw them; killed, and the test failed, past
    TIMEOUT."""
    logs = cwd / "logs"
    logs.mkdir(exist_ok=True)
    n = len(list(logs.glob("*.stderr")))
    out_path, err_path, usage_path = (logs / f"{n}.{e}" for e in ("stdout", "stderr", "usage"))
    command = command or cli_command()
    started = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err, \
            (open(stdin, "rb") if stdin is not None else open(os.devnull, "rb")) as inp:
        proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", LAUNCHER, str(usage_path),
                                 *command, *args], cwd=cwd, stdin=inp, stdout=out, stderr=err,
                                start_new_session=True)
    try:
        proc.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the launcher and the command
        proc.wait()
        pytest.fail(f"diferida {' '.join(a[:80] for a in args)} did not end within "
                    f"{TIMEOUT} s\nstderr: {err_path.read_text('utf-8', 'replace')[:2000]}")
    seconds = time.monotonic() - started
    assert proc.returncode == 0 and usage_path.exists(), (proc.returncode, args[:3])
    status, maxrss = (int(v) for v in usage_path.read_text().split())
    return Ran(args, os.waitstatus_to_exitcode(status), out_path.read_text("utf-8", "replace"),
               err_path.read_text("utf-8", "replace"), maxrss, seconds)


def message(stderr: str) -> str:
    """What the command said: stderr without click's usage lines."""
    return "\n".join(line for line in stderr.splitlines()
                     if line.strip() and not line.startswith(("Usage:", "Try '")))


def assert_refused(r: Ran, names: tuple[str, ...], says: tuple[str, ...] = ()) -> str:
    """Exit 2, no traceback, within the memory bound, nothing on stdout; a
    message of at most MAX_MESSAGE characters holding one of `names` (the
    option, field or line) and, when given, one of `says` (what is wrong)."""
    assert r.returncode == 2, str(r)
    assert "Traceback" not in r.stderr, str(r)
    assert r.maxrss_kib < MAX_RSS_KIB, str(r)
    said = message(r.stderr)
    assert said, str(r)
    assert len(said) <= MAX_MESSAGE, f"{len(said)} characters\n{r}"
    assert any(n in said for n in names), (names, str(r))
    if says:
        assert any(s.lower() in said.lower() for s in says), (says, str(r))
    assert r.stdout.strip() == "", str(r)
    return said


def words(key: str) -> tuple[str, ...]:
    """The bounded reader's words for `key`, in every language."""
    return tuple(catalog(lang)["bounded"][key] for lang in LANGS)


# ---- the folder a command runs in ------------------------------------------

class Folder:
    """A valid census and a valid prior census, an empty folder for the
    outputs (`out`), and a folder for the hostile file (`bad`). Paths are
    given relative to the folder the command runs in, so that a message's
    length is the command's own, not that of pytest's temporary folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.census = self._census("census.csv")
        self.prior = self._census("prior.csv")
        (root / "out").mkdir()
        (root / "bad").mkdir()

    def _census(self, name: str) -> str:
        (self.root / name).write_text("\n".join([HEADER, *ROWS]) + "\n", encoding="utf-8")
        return name

    def out(self, name: str) -> str:
        return f"out/{name}"

    def written(self) -> list[str]:
        return sorted(p.name for p in (self.root / "out").iterdir())

    def write(self, name: str, text: str) -> str:
        (self.root / name).write_text(text, encoding="utf-8")
        return name


COMMON = ["--as-of", AS_OF, "--lang", "en", "-q"]


def batch(f: Folder, *extra: str, census: str | None = None) -> list[str]:
    return ["batch", census or f.census, "-o", f.out("det.csv"), "--rejects", f.out("rej.csv"),
            *COMMON, *extra]


def census_review(f: Folder, *extra: str, census: str | None = None) -> list[str]:
    return ["census", census or f.census, "-o", f.out("review.xlsx"), "--html",
            f.out("review.html"), "--rejects", f.out("rej.csv"), *COMMON, *extra]


def compare(f: Folder, *extra: str, census: str | None = None,
            rules_b: str = "article19-strict-19_4", mortality: str = "none") -> list[str]:
    return ["compare", census or f.census, "--rules", "article19", "--rules", rules_b,
            "-o", f.out("cmp.xlsx"), "--html", f.out("cmp.html"), "--rejects", f.out("rej.csv"),
            "--discount", "0.04", "--mortality", mortality, *COMMON, *extra]


def project(f: Folder, *extra: str, census: str | None = None, mortality: str = "none"
            ) -> list[str]:
    return ["project", census or f.census, "-o", f.out("proj.csv"), "--per-member",
            f.out("members.csv"), "--chart", f.out("chart.png"), "--rejects", f.out("rej.csv"),
            "--discount", "0.04", "--mortality", mortality, *COMMON, *extra]


def valuation(f: Folder, *extra: str, census: str | None = None, mortality: str = "none",
              discount: tuple[str, ...] = ("--discount", "0.0381"), prior: bool = False,
              prior_census: str | None = None) -> list[str]:
    with_prior = ["--prior", prior_census or f.prior, "--prior-date", PRIOR_DATE,
                  "--prior-rejects", f.out("prior-rej.csv")] if prior else []
    return ["valuation", census or f.census, "-o", f.out("val.xlsx"), "--rejects",
            f.out("rej.csv"), *discount, "--mortality", mortality, *with_prior, *COMMON, *extra]


def evaluate(f: Folder, *extra: str) -> list[str]:
    return ["evaluate", "--birth-date", "1970-05-10", "--entry-date", "1988-07-01",
            "--separation-date", "2010-06-30", "--service", "22", "--compensation", "30000",
            "--no-refund", "--as-of", AS_OF, "--lang", "en", *extra]


def users(f: Folder, *args: str) -> list[str]:
    return ["users", *args, "--password-stdin", "--database-url",
            "sqlite:///out/users.db"]


# ---- the tables --------------------------------------------------------------

@dataclass(frozen=True)
class Input:
    """A file a command reads: the command run on `path` (args), the limit
    of its reader in bytes (None: a census, bounded by its table's limits),
    the suffix its kind of file is named with, and what the message must
    name (the option, by default)."""

    args: Callable[[Folder, str], list[str]]
    limit: int | None
    suffix: str
    names: tuple[str, ...] = ()
    stdin: bool = False  # read from standard input, not from a path
    # a path only when its name ends in `suffix` (else a table's name): also
    # given a link to /dev/zero named so
    by_suffix: bool = False
    device_says: tuple[str, ...] = ()  # other words that may refuse /dev/zero itself


def mortality(command: Callable[..., list[str]]) -> Input:
    """--mortality none|pub2010|TABLE.csv: a path when it ends in .csv, so
    that /dev/zero itself is refused as the name of no table."""
    return Input(lambda f, p: command(f, mortality=p), MAX_CSV_BYTES, ".csv", by_suffix=True,
                 device_says=("unknown table",))


INPUTS: dict[tuple[str, str], Input] = {
    ("batch", "INPUT"): Input(lambda f, p: batch(f, census=p), None, ".csv"),
    ("batch", "--rules"): Input(lambda f, p: batch(f, "--rules", p), MAX_FILE_BYTES, ".toml"),
    ("batch", "--columns"): Input(lambda f, p: batch(f, "--columns", p), MAX_MAP_BYTES,
                                  ".toml"),
    ("census", "INPUT"): Input(lambda f, p: census_review(f, census=p), None, ".csv"),
    ("census", "--prior"): Input(lambda f, p: census_review(f, "--prior", p), None, ".csv"),
    ("census", "--rules"): Input(lambda f, p: census_review(f, "--rules", p), MAX_FILE_BYTES,
                                 ".toml"),
    ("census", "--columns"): Input(lambda f, p: census_review(f, "--columns", p),
                                   MAX_MAP_BYTES, ".toml"),
    ("compare", "INPUT"): Input(lambda f, p: compare(f, census=p), None, ".csv"),
    ("compare", "--rules"): Input(lambda f, p: compare(f, rules_b=p), MAX_FILE_BYTES, ".toml"),
    ("compare", "--mortality"): mortality(compare),
    ("compare", "--claim-rates"): Input(lambda f, p: compare(f, "--claim-rates", p),
                                        MAX_CLAIM_BYTES, ".csv"),
    ("compare", "--columns"): Input(lambda f, p: compare(f, "--columns", p), MAX_MAP_BYTES,
                                    ".toml"),
    ("evaluate", "--rules"): Input(lambda f, p: evaluate(f, "--rules", p), MAX_FILE_BYTES,
                                   ".toml"),
    ("examples", "--rules"): Input(lambda f, p: ["examples", "--as-of", AS_OF, "--lang", "en",
                                                 "--rules", p], MAX_FILE_BYTES, ".toml"),
    ("project", "INPUT"): Input(lambda f, p: project(f, census=p), None, ".csv"),
    ("project", "--mortality"): mortality(project),
    ("project", "--claim-rates"): Input(lambda f, p: project(f, "--claim-rates", p),
                                        MAX_CLAIM_BYTES, ".csv"),
    ("project", "--rules"): Input(lambda f, p: project(f, "--rules", p), MAX_FILE_BYTES,
                                  ".toml"),
    ("project", "--columns"): Input(lambda f, p: project(f, "--columns", p), MAX_MAP_BYTES,
                                    ".toml"),
    ("rules diff", "A"): Input(lambda f, p: ["rules", "diff", p, "article19", "--lang", "en"],
                               MAX_FILE_BYTES, ".toml", names=("'A'",)),
    ("rules diff", "B"): Input(lambda f, p: ["rules", "diff", "article19", p, "--lang", "en"],
                               MAX_FILE_BYTES, ".toml", names=("'B'",)),
    ("rules show", "NAME"): Input(lambda f, p: ["rules", "show", p], MAX_FILE_BYTES, ".toml",
                                  names=("'NAME'",)),
    ("valuation", "INPUT"): Input(lambda f, p: valuation(f, census=p), None, ".csv"),
    ("valuation", "--yield-curve"): Input(
        lambda f, p: valuation(f, discount=("--yield-curve", p)), MAX_CURVE_BYTES, ".csv"),
    ("valuation", "--mortality"): mortality(valuation),
    ("valuation", "--claim-rates"): Input(lambda f, p: valuation(f, "--claim-rates", p),
                                          MAX_CLAIM_BYTES, ".csv"),
    ("valuation", "--prior"): Input(lambda f, p: valuation(f, prior=True, prior_census=p),
                                    None, ".csv"),
    ("valuation", "--prior-assumptions"): Input(
        lambda f, p: valuation(f, "--prior-assumptions", p, prior=True), MAX_PRIOR_BYTES,
        ".toml"),
    ("valuation", "--prior-rules"): Input(
        lambda f, p: valuation(f, "--prior-rules", p, prior=True), MAX_FILE_BYTES, ".toml"),
    ("valuation", "--employer-names"): Input(
        lambda f, p: valuation(f, "--employer-names", p), MAX_NAMES_BYTES, ".csv"),
    ("valuation", "--rules"): Input(lambda f, p: valuation(f, "--rules", p), MAX_FILE_BYTES,
                                    ".toml"),
    ("valuation", "--history"): Input(lambda f, p: valuation(f, "--history", p),
                                      MAX_HISTORY_BYTES, ".jsonl"),
    ("valuation", "--reconcile-census"): Input(
        lambda f, p: valuation(f, "--roll-forward-from", PRIOR_DATE, "--reconcile-census", p),
        None, ".csv"),
    ("valuation", "--columns"): Input(lambda f, p: valuation(f, "--columns", p), MAX_MAP_BYTES,
                                      ".toml"),
    # standard input: one line, at most MAX_PASSWORD_LINE characters
    ("users add", "--password-stdin"): Input(
        lambda f, p: users(f, "add", "maria", "--role", "analyst"), MAX_PASSWORD_LINE, "",
        names=("password",), stdin=True),
    ("users passwd", "--password-stdin"): Input(
        lambda f, p: users(f, "passwd", "maria"), MAX_PASSWORD_LINE, "",
        names=("password",), stdin=True),
}

OUTPUTS = {
    ("batch", "--output"), ("batch", "--rejects"),
    ("census", "--output"), ("census", "--html"), ("census", "--rejects"),
    ("compare", "--output"), ("compare", "--html"), ("compare", "--rejects"),
    ("project", "--output"), ("project", "--per-member"), ("project", "--chart"),
    ("project", "--rejects"),
    ("valuation", "--output"), ("valuation", "--rejects"), ("valuation", "--prior-rejects"),
}

DATABASE_URL = "a database URL: SQLAlchemy opens the database, not a file the command reads"
NOT_FILES = {
    **{(c, "--database-url"): DATABASE_URL
       for c in ("audit verify", "db current", "db upgrade", "serve", "users add",
                 "users disable", "users list", "users passwd", "users profile")},
    **{(c, "NAME"): "a user's name"
       for c in ("users add", "users disable", "users passwd", "users profile")},
    **{(c, "--separator"): "the CSV separator (its help says 'CSV')"
       for c in ("batch", "census", "compare", "project", "valuation")},
    ("project", "--by"): "dimensions of the table (its help names the .by file written)",
    ("compare", "--bands"): "monthly amounts (its help names the relief's rules file the "
                            "bands come from by default)",
}

# a text parameter documented as a file: its metavar or help names one (the
# help is in English, HELP_LANG; Spanish words too, should that change)
FILE_WORDS = re.compile(r"\b(file|path|csv|toml|archivo|ruta)\b|\.(csv|toml|xlsx|parquet|json)\b",
                        re.IGNORECASE)


def walk(group: click.Group = main, path: tuple[str, ...] = (),
         parent: click.Context | None = None) -> Iterator[tuple[str, click.Parameter]]:
    """(command, parameter) for every parameter of every command."""
    ctx = click.Context(group, info_name=" ".join(path) or "diferida", parent=parent)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        if isinstance(command, click.Group):
            yield from walk(command, (*path, name), ctx)
        else:
            for param in command.params:
                yield " ".join((*path, name)), param


def param_name(param: click.Parameter) -> str:
    """--long-option, or an argument's name as --help shows it (INPUT)."""
    if isinstance(param, click.Argument):
        return param.human_readable_name
    longs = [o for o in param.opts if o.startswith("--")]
    return max(longs, key=len) if longs else param.opts[0]


def takes_a_path(param: click.Parameter) -> bool:
    if isinstance(param.type, click.Path | click.File):
        return True
    if not isinstance(param.type, click.types.StringParamType):
        return False  # flags, choices, numbers
    if isinstance(param, click.Argument):
        return True  # a text argument may be a name or a path: the tables say which
    return bool(FILE_WORDS.search(f"{param.metavar or ''} {getattr(param, 'help', '') or ''}"))


@functools.cache
def params() -> dict[tuple[str, str], click.Parameter]:
    """Every parameter by (command, name): walked when a test asks, not when
    the module is collected (the walk imports every command's module)."""
    return {(c, param_name(p)): p for c, p in walk()}


def test_every_file_parameter_is_in_a_table():
    """A parameter that takes a path is an input (INPUTS, tested below with
    every hostile file), an output, or not a file (NOT_FILES, with why): a
    file option added later and listed nowhere fails here, by its name."""
    listed = set(INPUTS) | OUTPUTS | set(NOT_FILES)
    every = params()
    missing = sorted(f"{c} {n}" for (c, n), p in every.items()
                     if takes_a_path(p) and (c, n) not in listed)
    assert not missing, f"file parameters in no table (INPUTS, OUTPUTS, NOT_FILES): {missing}"
    unknown = sorted(f"{c} {n}" for c, n in listed if (c, n) not in every)
    assert not unknown, f"table entries naming no parameter: {unknown}"
    # an output is a path; an input given as a path refuses a FIFO or a device at the option
    from diferida.batch.options import InputFile

    assert all(isinstance(every[k].type, click.Path) for k in OUTPUTS)
    for key, spec in INPUTS.items():
        t = every[key].type
        if spec.stdin:
            assert isinstance(t, click.types.BoolParamType), key
        elif isinstance(t, click.Path):
            assert isinstance(t, InputFile), f"{key}: a click.Path read without InputFile"


def test_a_new_file_parameter_would_be_found():
    @click.command()
    @click.argument("source")
    @click.option("--table", type=click.Path())
    @click.option("--weights", metavar="WEIGHTS.csv")
    @click.option("--count", type=int)
    @click.option("--verbose", is_flag=True)
    def command(**_: object) -> None:
        pass

    assert {param_name(p) for p in command.params if takes_a_path(p)} == {
        "SOURCE", "--table", "--weights"}


def test_the_memory_measured_is_the_commands_own(tmp_path):
    """A command's peak memory, not the test process's: started straight
    from this process, a small one would report at least this one's."""
    small = run([], tmp_path, command=[sys.executable, "-I", "-S", "-c", "pass"])
    large = run([], tmp_path, command=[sys.executable, "-I", "-S", "-c",
                                       "b = b'1' * (250 << 20)"])
    assert (small.returncode, large.returncode) == (0, 0), (small, large)
    assert small.maxrss_kib < 50 * 1024 <= 250 * 1024 <= large.maxrss_kib, (small, large)


def test_the_walk_finds_the_commands_and_their_inputs():
    """The walk itself: it reaches every command, nested ones too."""
    every = params()
    commands = {c for c, _ in every}
    assert {"batch", "census", "compare", "project", "valuation", "rules show", "rules diff",
            "users add", "users passwd", "evaluate", "examples"} <= commands
    assert {k for k, p in every.items() if takes_a_path(p)} >= {
        ("valuation", "--employer-names"), ("valuation", "--prior-rules"),
        ("compare", "--mortality"), ("rules show", "NAME"), ("batch", "INPUT")}


# ---- each input, given each hostile file -----------------------------------

def cases() -> Iterator[object]:
    for (command, name), spec in INPUTS.items():
        if spec.stdin:
            kinds = ["dev-zero", "over-limit"]
        else:
            kinds = ["dev-zero", *(["dev-zero-named" + spec.suffix] if spec.by_suffix else []),
                     "fifo", "directory" if spec.limit is None else "one-over"]
        for kind in kinds:
            yield pytest.param(command, name, kind, id=f"{command} {name} {kind}")


def over(limit: int, suffix: str) -> bytes:
    """limit + 1 bytes of what a file of its kind holds."""
    first = b"year,rate\n" if suffix == ".csv" else b'base = "article19"\n'
    return first + b"#" * (limit + 1 - len(first))


def too_big(limit: int) -> tuple[str, ...]:
    """Words that say a file is refused for its size."""
    return (f"{limit:,}", f"{limit // 1024} KiB", "larger than", "too large", "more than",
            "más de", "demasiado grande")


def hostile(folder: Path, kind: str, name: str, limit: int | None
            ) -> tuple[str, tuple[str, ...]]:
    """The path a command is given for `kind` (made in `folder`, relative to
    its parent), and the words of which one must say what is wrong."""
    bad = folder / name
    rel = f"{folder.name}/{name}"
    if kind == "dev-zero":
        return "/dev/zero", words("kind_device")
    if kind.startswith("dev-zero-named"):  # where a path is told from a name by its suffix
        bad.symlink_to("/dev/zero")
        return rel, words("kind_device")
    if kind == "fifo":
        os.mkfifo(bad)  # no one writes to it: an open that waits would hang the command
        return rel, words("kind_fifo") + ("FIFO",)
    if kind == "directory":
        bad.mkdir()
        return rel, words("directory") + ("is a directory",)
    assert kind == "one-over" and limit is not None, kind
    bad.write_bytes(over(limit, bad.suffix))
    assert bad.stat().st_size == limit + 1
    return rel, too_big(limit)


@SLOW
@pytest.mark.parametrize(("command", "name", "kind"), list(cases()))
def test_each_input_refuses_a_device_a_fifo_and_one_byte_over(tmp_path, command, name, kind):
    spec = INPUTS[(command, name)]
    f = Folder(tmp_path)
    if spec.stdin:  # standard input: /dev/zero, or one line one character too long
        assert spec.limit is not None
        stdin = tmp_path / "bad" / "line.txt"
        stdin.write_text("x" * (spec.limit + 1) + "\n", encoding="utf-8")
        r = run(spec.args(f, ""), tmp_path, stdin="/dev/zero" if kind == "dev-zero" else stdin)
        names, says = spec.names, (f"{spec.limit}", f"{spec.limit:,}")
    else:
        path, says = hostile(tmp_path / "bad", kind, f"x{spec.suffix}", spec.limit)
        if kind == "dev-zero":
            says += spec.device_says
        r = run(spec.args(f, path), tmp_path)
        names = spec.names or (name,)
        if name.isupper():  # an argument: named by its name, or by the file it was given
            names += (path,)
    assert_refused(r, names, says)
    assert f.written() == [], (f.written(), str(r))


# ---- files that rules and prior assumptions name -----------------------------

SERIES = ('\n[[post_start.adjustments]]\nkind = "cola"\ndate = "2027-07-01"\n'
          'series_file = "{path}"\nafter_series = "0.02"\ncitation = "art. 3"\n')


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text("utf-8").splitlines(), 1)
                if text in line)


@SLOW
@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "one-over"])
def test_a_relief_series_file_is_read_bounded(tmp_path, kind):
    """`series_file` in a relief given to `compare --rules article19 --rules
    relief.toml` (read from the rules file's folder): refused at the rules
    file's line that names it."""
    f = Folder(tmp_path)
    target, says = hostile(tmp_path / "bad", kind, "rates.csv", SERIES_MAX_BYTES)
    relief = f.write("relief.toml", RELIEF_HEAD + SERIES.format(path=target))
    r = run(compare(f, rules_b=relief), tmp_path)
    said = assert_refused(r, (f"line {line_of(tmp_path / relief, 'series_file')}",), says)
    assert "relief.toml" in said and "--rules" in said, said
    assert f.written() == [], (f.written(), str(r))


@SLOW
@pytest.mark.parametrize(("key", "kind"), [
    ("yield_curve", "dev-zero"), ("yield_curve", "fifo"),
    ("claim_rates", "dev-zero"), ("claim_rates", "fifo"),
    ("mortality", "dev-zero-named.csv"), ("mortality", "fifo"),  # a path when it ends in .csv
])
def test_the_files_a_prior_assumptions_file_names_are_read_bounded(tmp_path, key, kind):
    """`yield_curve`, `claim_rates` and `mortality` of a --prior-assumptions
    file (read from its folder)."""
    f = Folder(tmp_path)
    target, says = hostile(tmp_path / "bad", kind, "x.csv", None)
    prior = f.write("prior.toml", f'{key} = "{target}"\n')
    r = run(valuation(f, "--prior-assumptions", prior, prior=True), tmp_path)
    said = assert_refused(r, (key, "--" + key.replace("_", "-")), says)
    assert "--prior-assumptions" in said and "prior.toml" in said, said
    assert f.written() == [], (f.written(), str(r))


# ---- the hostile corpus ------------------------------------------------------

DIGITS = "9" * 100_000  # a million would be over the kernel's 128 KiB for one argument

OPTION_VALUES = {
    "--discount": {"100,000 digits": DIGITS, "1e308": "1e308", "9e999999999": "9e999999999",
                   "5%": "5%"},
    "--cola": {"100,000 digits": DIGITS},
    "--mortality-scale": {"100,000 digits": DIGITS},
    "--sex-blend": {"100,000 digits": DIGITS},
}
# compare reads these options with project's parsers (projection/options.py)
RUNS: dict[str, Callable[..., list[str]]] = {"project": project, "valuation": valuation}


def option_cases() -> Iterator[object]:
    for option, values in OPTION_VALUES.items():
        for what, value in values.items():
            for command in RUNS:
                yield pytest.param(command, option, value, id=f"{command} {option} {what}")


@SLOW
@pytest.mark.parametrize(("command", "option", "value"), list(option_cases()))
def test_a_hostile_number_on_the_command_line_is_refused_short(tmp_path, command, option,
                                                               value):
    f = Folder(tmp_path)
    r = run([*RUNS[command](f), option, value], tmp_path)  # the last --discount given wins
    assert_refused(r, (option,))
    assert f.written() == [], (f.written(), str(r))


# each file: what its refusal must name besides the file (its field or line, or
# for a file refused by its size before it is read, that size)
PRIOR_FILES = {
    "nested 5,000 arrays deep": ("discount = " + "[" * 5000 + "]" * 5000 + "\n",
                                 ("discount", "line 1")),
    "a discount of 1,000,000 digits": (f'discount = "0.{"1" * 999_998}"\n',
                                       too_big(MAX_PRIOR_BYTES)),
    "a discount of a 10,000-digit integer": (f"discount = {'9' * 10_000}\n",
                                             ("discount", "line 1")),
}


@SLOW
@pytest.mark.parametrize("case", list(PRIOR_FILES))
def test_a_hostile_prior_assumptions_file_is_refused_short(tmp_path, case):
    text, names = PRIOR_FILES[case]
    f = Folder(tmp_path)
    prior = f.write("prior.toml", text)
    r = run(valuation(f, "--prior-assumptions", prior, prior=True), tmp_path)
    said = assert_refused(r, names)
    assert "--prior-assumptions" in said and "prior.toml" in said, said
    assert f.written() == [], (f.written(), str(r))


BIG_INTEGER_RULES = 'base = "article19"\nanswer = ' + "1" * 10_000 + "\n"


@SLOW
@pytest.mark.parametrize("command", ["rules show", "compare", "valuation"])
def test_a_rules_file_with_an_integer_of_10000_digits_is_refused_at_its_line(tmp_path,
                                                                            command):
    f = Folder(tmp_path)
    rules = f.write("big.toml", BIG_INTEGER_RULES)
    args = {"rules show": ["rules", "show", rules], "compare": compare(f, rules_b=rules),
            "valuation": valuation(f, "--rules", rules)}[command]
    said = assert_refused(run(args, tmp_path), ("line 2", "answer"))
    assert "big.toml" in said, said
    assert f.written() == []


COLA_OF_ONE = ('\n[[post_start.adjustments]]\nkind = "cola"\ndate = "2026-07-01"\n'
               'rate = "1"\ncitation = "art. 1"\n')
FIFTY_DOUBLINGS = "".join(f'\n[[post_start.adjustments]]\nkind = "raise"\ndate = "{y}-07-01"\n'
                          f'rate = "1"\ncitation = "art. {y}"\n' for y in range(2026, 2076))


@SLOW
@pytest.mark.parametrize("command", ["compare", "valuation"])
def test_a_relief_cola_of_one_is_refused_at_load_naming_its_line(tmp_path, command):
    f = Folder(tmp_path)
    relief = f.write("relief.toml", RELIEF_HEAD + COLA_OF_ONE)
    args = (compare(f, rules_b=relief) if command == "compare"
            else valuation(f, "--rules", relief))
    said = assert_refused(run(args, tmp_path),
                          (f"line {line_of(tmp_path / relief, 'rate = ')}",))
    assert "relief.toml" in said and "0.20" in said, said
    assert f.written() == []


@SLOW
@pytest.mark.parametrize("command", ["compare", "valuation"])
def test_fifty_doublings_of_a_pension_in_pay_are_refused_when_projected(tmp_path, command):
    """Each raise is inside the bounds (a rate of at most 1, at most 50
    adjustments): the file loads; the member in pay (P1, $722.02 a month)
    would be paid 2**50 times as much, more than the engine holds to the
    cent: refused with the relief's adjustments named, never wrapped."""
    f = Folder(tmp_path)
    relief = f.write("relief.toml", RELIEF_HEAD + FIFTY_DOUBLINGS)
    args = (compare(f, rules_b=relief) if command == "compare"
            else valuation(f, "--rules", relief))
    said = assert_refused(run(args, tmp_path), ("relief's adjustments",),
                          ("more than the projection holds",))
    assert "raise of 2026-07-01" in said, said
    assert f.written() == []
