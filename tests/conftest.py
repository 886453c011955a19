"""Shared fixtures: the determination date used across tests, the rules §8
participants, and the real parts some tests drive (a browser, the web
application under uvicorn).

Markers (registered in pyproject.toml, `--strict-markers`):
- `browser`: drives Debian's chromium (every test that uses the `browser`
  fixture is marked here);
- `postgres`: runs against a PostgreSQL server (every test parametrized with
  "postgresql" is marked here);
- `slow`: takes more than a few seconds.
Without chromium or a PostgreSQL server those tests are skipped, saying why,
except under `make test` or in CI, where they fail
(`diferida.service.testing.services_required`)."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path

import pytest
from hypothesis import settings

AS_OF = date(2026, 11, 29)

# No per-example deadline in any property: the suite runs on two workers that
# keep both cores busy, and an example that meets a cold start (Polars' first
# expression in a worker took 0.5 s) would fail as "unreliable timings", not
# for what it asserts. Speed is measured in bench/, never by a test.
settings.register_profile("diferida", deadline=None)
# `make test-full` (DIFERIDA_TEST_TIER=full): every property at ten times its
# examples — the default of a test without its own (100) through the
# profile, a test's own count through `examples(n)`
TIER = os.environ.get("DIFERIDA_TEST_TIER", "").strip().lower() or "test"
if TIER not in ("test", "full"):
    raise ValueError(f"DIFERIDA_TEST_TIER must be 'full' or unset, got {TIER!r}")
settings.register_profile("diferida-full", deadline=None, max_examples=1000)
settings.load_profile("diferida-full" if TIER == "full" else "diferida")


def examples(n: int) -> int:
    """A property test's number of examples in this tier: `n` in `make test`
    and `make check`, ten times `n` in `make test-full`."""
    return n * 10 if TIER == "full" else n

# passwords hashed at argon2-cffi's test cost (see diferida.service.workflow.
# password_hasher); servers the tests start inherit it. A test of the default
# cost sets its own.
os.environ.setdefault("DIFERIDA_PASSWORD_PROFILE", "CHEAPEST")

# the administrator's letter texts (the office's address, telephone and
# hours, the time limit to ask for reconsideration): no letter is issued
# without them (tests/admin_texts.py); servers the tests start inherit them.
# A test of their absence points DIFERIDA_WEB_TEXTS_DIR elsewhere.
if not os.environ.get("DIFERIDA_WEB_TEXTS_DIR"):
    import atexit
    import shutil
    import tempfile
    from pathlib import Path as _Path

    from .admin_texts import write_admin_texts

    _ADMIN_DIR = tempfile.mkdtemp(prefix="diferida-admin-texts-")
    atexit.register(shutil.rmtree, _ADMIN_DIR, True)
    os.environ["DIFERIDA_WEB_TEXTS_DIR"] = str(write_admin_texts(_Path(_ADMIN_DIR)))


# ---- CPU-seconds per test (bench/suite_time.py --cpu) ----------------------

def tree_cpu_seconds(root: int | None = None) -> float:
    """User and system CPU seconds of a process and of every living process
    below it, with what each has reaped of its own children (/proc: utime,
    stime, cutime, cstime): a test's own work, its servers' threads, the
    chromium it drives and the subprocesses it runs."""
    root = os.getpid() if root is None else root
    tick = os.sysconf("SC_CLK_TCK")
    parent: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        parent[int(entry)] = int(fields[1])
        ticks[int(entry)] = sum(int(v) for v in fields[11:15])
    total, todo = 0, [root]
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    while todo:
        pid = todo.pop()
        total += ticks.get(pid, 0)
        todo += children.get(pid, [])
    return total / tick


# DIFERIDA_SUITE_CPU=FOLDER: each test process writes, per test, the CPU
# seconds its tree spent on it to FOLDER/cpu-<worker>.tsv
SUITE_CPU = os.environ.get("DIFERIDA_SUITE_CPU")
if SUITE_CPU:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        before = tree_cpu_seconds()
        yield
        spent = tree_cpu_seconds() - before
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        Path(SUITE_CPU).mkdir(parents=True, exist_ok=True)
        with open(Path(SUITE_CPU) / f"cpu-{worker}.tsv", "a", encoding="utf-8") as f:
            f.write(f"{item.nodeid}\t{spent:.3f}\n")


# ---- the letter's PDF: WeasyPrint only where the PDF is what is tested ------

def stand_in_letter_pdf(facts) -> bytes:
    """What a test not about the PDF gets from `diferida.letter.letter_pdf`:
    the letter written as HTML (so a letter that cannot be written is still
    refused), its digest in a few bytes shaped as a PDF. The same facts give
    the same bytes, as WeasyPrint's do."""
    import hashlib

    from diferida.letter import letter_html

    digest = hashlib.sha256(letter_html(facts).encode("utf-8")).hexdigest()
    return b"%PDF-1.7\n% stand-in for the letter " + digest.encode() + b"\n%%EOF\n"


@pytest.fixture(autouse=True)
def _letter_pdf_stand_in(request, monkeypatch):
    """WeasyPrint costs about 0.8 CPU-seconds a letter: tests that approve a
    case for its workflow, its chain or its bytes served get the stand-in;
    those marked `pdf` (tests/test_letter_pdf.py) and every server started
    in its own process (`diferida serve`) render the real PDF."""
    if request.node.get_closest_marker("pdf") is None:
        import diferida.letter

        monkeypatch.setattr(diferida.letter, "letter_pdf", stand_in_letter_pdf)
    yield


@pytest.fixture
def as_of() -> date:
    return AS_OF


# rules §8 example 1, as text in the file formats: the participant most tests
# start from, changing only the fields the test is about.
EXAMPLE_1 = {
    "birth_date": "1970-05-10",
    "entry_date": "1988-07-01",
    "separation_date": "2010-06-30",
    "creditable_service_years": "22",
    "average_compensation": "30000.00",
    "group": "general",
    "refund_requested": "false",
}


def participant(**changes: object) -> dict[str, object]:
    """Example 1 with some fields changed; a value of None removes the field."""
    p: dict[str, object] = {**EXAMPLE_1, **changes}
    return {k: v for k, v in p.items() if v is not None}


def run_async(coro):
    """`asyncio.run(coro)` in a thread of its own. In a test process where
    the browser fixture is open, Playwright's sync API keeps an event loop
    running in the main thread, and `asyncio.run` there refuses to start."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def cli_command() -> list[str]:
    """The installed `diferida` command, or the module when not installed."""
    import shutil
    import sys
    from pathlib import Path

    exe = Path(sys.executable).parent / "diferida"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("diferida")
    return [found] if found else [sys.executable, "-m", "diferida.cli"]



def run_in_process(*args: str) -> subprocess.CompletedProcess:
    """The `diferida` command with these arguments, run in this process
    (click's runner: no Python process to start for each); an exception the
    command let out is in stderr as a traceback, as the command would print
    it. tests/test_cli.py and the worked examples run the installed command."""
    from click.testing import CliRunner

    from diferida.cli import main

    r = CliRunner().invoke(main, list(args))
    err = r.stderr
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        err += "".join(traceback.format_exception(r.exception))
    return subprocess.CompletedProcess(list(args), r.exit_code, r.stdout, err)

# ---- the real parts: markers, the web application, the browser ----------

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
# screenshots of the browser tests
SHOTS = Path(__file__).resolve().parents[1] / "test-output" / "web"


def screenshot(target, path, **options) -> None:
    """A screenshot of a page or an element, saved for a person to look at,
    when DIFERIDA_TEST_SCREENSHOTS=1 (it asserts nothing, and a full page
    costs chromium about half a second of CPU, so the suite does not take
    them otherwise)."""
    if os.environ.get("DIFERIDA_TEST_SCREENSHOTS", "") in ("", "0"):
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    target.screenshot(path=str(path), **options)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)
        callspec = getattr(item, "callspec", None)
        if callspec is not None and any(isinstance(v, str) and v == "postgresql"
                                        for v in callspec.params.values()):
            item.add_marker(pytest.mark.postgres)


def need_part(present: bool, what: str, install: str) -> None:
    """Skip (saying why) or, under `make test` and in CI, fail when a real
    part a test drives is missing."""
    from diferida.service.testing import services_required

    if present:
        return
    message = f"{what} is missing: {install}"
    if services_required():
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@contextmanager
def serving(app) -> Iterator[str]:
    """`app` under uvicorn, in a thread, on a free loopback port: its address
    while the block runs, then the server stopped."""
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the web server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def base_url(tmp_path_factory):
    """The real application (`create_app`) under uvicorn on a free loopback
    port, with a throw-away SQLite database."""
    from diferida.server import create_app
    from diferida.service.settings import Settings

    db = tmp_path_factory.mktemp("web-browser") / "web.db"
    with serving(create_app(Settings(database_url=f"sqlite:///{db}"))) as url:
        yield url


class ReducedMotionBrowser:
    """The browser, whose new contexts and pages prefer reduced motion unless
    a test asks otherwise (`reduced_motion="no-preference"`).

    The page scrolls smoothly only for a person who has not asked for reduced
    motion (web.css); while it scrolls, the element Playwright is about to
    click or check moves, and Playwright waits for it to stand still (about a
    second per click). The page is the same either way but for that style."""

    def __init__(self, browser) -> None:
        self._browser = browser

    def new_context(self, **options):
        options.setdefault("reduced_motion", "reduce")
        return self._browser.new_context(**options)

    def new_page(self, **options):
        options.setdefault("reduced_motion", "reduce")
        return self._browser.new_page(**options)

    def __getattr__(self, name: str):
        return getattr(self._browser, name)


@pytest.fixture(scope="session")
def browser():
    """Debian's chromium, headless, driven by Playwright (see ReducedMotionBrowser):
    one per test process (each xdist worker), shared by every browser test;
    each test makes its own contexts and pages and closes them."""
    need_part(os.path.exists(CHROMIUM), f"chromium ({CHROMIUM})",
              "install Debian's package: apt-get install chromium")
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield ReducedMotionBrowser(b)
        b.close()



# ---- the end of a worker ---------------------------------------------------

@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    """A worker collects its garbage before it says it has finished, and
    freezes what is left.

    Once every worker has said so, xdist ends each one, and execnet gives a
    worker 5 seconds to return before it sends that worker a SIGINT
    (`execnet.gateway_base.WorkerGateway._terminate_execution`). What a
    worker still does then is pytest's last `gc.collect()` (its unraisable-
    exception check, at unconfigure), over the ~900,000 objects a worker
    holds after `make check` (0.8 s on a quiet machine; a loaded machine and
    the larger heap of `make test` took it past 5 s). The SIGINT then landed
    in Hypothesis's GC callback, which printed a swallowed KeyboardInterrupt.
    Collected here, before the worker reports, and frozen (moved out of the
    collector's reach), that last collection has nothing left to walk."""
    import gc

    gc.collect()
    gc.freeze()
