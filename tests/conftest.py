"""Shared fixtures: every test runs in a temporary directory with every user path pointed at it.

Also what tests share to start `sexp` processes and to wait on them: `run_cli` (and the `cli`
fixture) and `spawn_sexp` / `spawn_sexp_pty` for the real command, `wait_for` to poll, `scaled`
for every other timeout, and the `server` fixture (the local OpenAI-compatible server).

Timeouts are given as what a test needs on an idle machine; `scaled` (which run_cli, spawn_sexp,
spawn_sexp_pty, run_python and wait_for apply themselves) stretches them by the machine's
slowness, so the suite passes on a busy CI box without giving a hung test longer at rest.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run from a checkout without installing: `pytest` alone works
    sys.path.insert(0, str(ROOT))

from llm_server import LLMServer  # noqa: E402

from sexp_tasks.config import Settings  # noqa: E402
from sexp_tasks.runtime import Runtime  # noqa: E402

if TYPE_CHECKING:
    import pexpect

T = TypeVar("T")
CliResult = tuple[int, str, str]
RUN_LINE = re.compile(r"\Arun: [0-9a-f]{12}\n")
SUMMARY_LINE = re.compile(r"^run: [0-9a-f]{12} \d+ model calls, \d+ tokens, \$[0-9.]+, [0-9.]+ s\n\Z", re.M)
Cli = Callable[..., CliResult]

# How slow the machine is ---------------------------------------------------------------------
# WORKLOAD_STEPS turns of a pure-Python loop took REFERENCE_SECONDS on the 2-core CI machine at
# rest (its CPU time, which is its wall time on an idle core); a machine that takes longer now is
# slower by that much (the median of 3 tries: long enough that the scheduler's sharing of the
# cores shows). The load average per core counts too, as it rises during a long session.
WORKLOAD_STEPS = 1_000_000
REFERENCE_SECONDS = 0.029
MAX_SLOWNESS = 8.0  # beyond this, a test that has not answered is hung, not slow
SLOWNESS_VARIABLE = "SEXP_TESTS_SLOWNESS"  # a factor to use instead of measuring (e.g. "1" or "4")


def _workload_seconds() -> float:
    started = time.perf_counter()
    total = 0
    for step in range(WORKLOAD_STEPS):
        total += step * step
    return time.perf_counter() - started


@functools.cache
def forced_slowness() -> float | None:
    """SEXP_TESTS_SLOWNESS, read once per test process (before any test unsets it)."""
    forced = os.environ.get(SLOWNESS_VARIABLE)
    return float(forced) if forced else None


@functools.cache
def measured_slowness() -> float:
    """How many times slower than the reference machine at rest this one ran the workload,
    measured once per test process."""
    samples = sorted(_workload_seconds() for _ in range(3))
    return samples[len(samples) // 2] / REFERENCE_SECONDS


def slowness() -> float:
    """The factor timeouts are stretched by: SEXP_TESTS_SLOWNESS when it is set; else the measured
    slowness, or the load average per core if that is higher now, kept within [1, MAX_SLOWNESS]."""
    forced = forced_slowness()
    if forced is not None:
        return forced
    load = os.getloadavg()[0] / (os.cpu_count() or 1) if hasattr(os, "getloadavg") else 0.0
    return min(MAX_SLOWNESS, max(1.0, measured_slowness(), load))


def scaled(seconds: float) -> float:
    """A timeout of `seconds` at rest, stretched by the machine's slowness now."""
    return seconds * slowness()


def pytest_report_header() -> str:
    return f"slowness factor: {slowness():.2f} (timeouts are stretched by it; {SLOWNESS_VARIABLE} sets it)"


def wait_for(predicate: Callable[[], T], timeout: float, message: str) -> T:
    """Poll predicate every 20 ms until it returns a true value, and return that value;
    fail the test with message once timeout seconds (at rest: scaled here) have passed. Use it
    instead of a fixed sleep before a signal: wait for what the signal must find (a marker
    printed, a request received, a row in the store)."""
    timeout = scaled(timeout)
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            pytest.fail(f"{message} (waited {timeout:g} s)")
        time.sleep(0.02)


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Run in a fresh directory; HOME, XDG dirs and SEXP_* settings point at it or are unset."""
    work = tmp_path / "work"
    home = tmp_path / "home"
    work.mkdir()
    home.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    for variable, sub in [
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_STATE_HOME", ".local/state"),
    ]:
        monkeypatch.setenv(variable, str(home / sub))
    for variable in list(os.environ):
        if variable.startswith("SEXP_") or variable.endswith("_API_KEY"):
            monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    yield work


@pytest.fixture(scope="session", autouse=True)
def _measure_slowness() -> None:
    """Read SEXP_TESTS_SLOWNESS, or measure the slowness, once per test process and before any
    test (a test unsets SEXP_* variables; the workload is best timed before tests load the CPU)."""
    if forced_slowness() is None:
        measured_slowness()


@pytest.fixture
def workspace(isolated: Path) -> Path:
    """The directory the test runs in, which is also the runtime's workspace."""
    return isolated


@pytest.fixture
def runtime(workspace: Path) -> Runtime:
    """A fresh Runtime confined to the test's directory, with stdout and stderr captured.

    Read the output with `runtime.out.getvalue()` and `runtime.err.getvalue()`.
    """
    return Runtime(Settings(workspace=str(workspace)), out=io.StringIO(), err=io.StringIO())


def sexp_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a `sexp` process a test starts: the test's own (HOME and the rest
    pointed at its directory), this checkout importable, UTF-8 streams, no PYTHONSTARTUP; env
    on top."""
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [environment.get("PYTHONPATH")])])
    environment.pop("PYTHONSTARTUP", None)
    environment["PYTHONIOENCODING"] = "utf-8"
    if env:
        environment.update(env)
    return environment


def sexp_command(*args: str, python_flags: tuple[str, ...] = ()) -> list[str]:
    """The argument list that runs `sexp ARGS...` with this Python."""
    return [sys.executable, *python_flags, "-m", "sexp_tasks", *args]


def spawn_sexp(
    *args: str,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    python_flags: tuple[str, ...] = (),
    **popen: Any,
) -> subprocess.Popen[str]:
    """Start `sexp ARGS...` as a real process in cwd (text streams in UTF-8; popen's keywords,
    e.g. stderr=subprocess.PIPE, go to Popen). Wait for it with a scaled timeout:
    `process.communicate(timeout=scaled(60))`."""
    popen.setdefault("text", True)
    if popen["text"]:
        popen.setdefault("encoding", "utf-8")
    command = sexp_command(*args, python_flags=python_flags)
    return subprocess.Popen(command, cwd=cwd, env=sexp_env(env), **popen)


def killed_at_request(server: LLMServer, count: int, *args: str, cwd: Path, env: Mapping[str, str]) -> str:
    """`sexp ARGS...` run and SIGKILLed when the server gets its count-th request (a step in
    flight, the earlier ones journaled); the killed run's id, for a `--resume`."""
    import signal

    process = spawn_sexp(*args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def kill(arrived: int) -> None:
        if arrived == count:
            process.send_signal(signal.SIGKILL)

    server.on_request = kill
    try:
        _, err = process.communicate(timeout=scaled(120))
    finally:
        server.on_request = None
    assert process.returncode == -signal.SIGKILL, err
    found = re.search(r"run: ([0-9a-f]{12})", err)
    assert found, err
    return found.group(1)


def spawn_sexp_pty(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None, timeout: float = 30, **options: Any
) -> pexpect.spawn:
    """Start `sexp ARGS...` in a pseudo-terminal (pexpect), with `timeout` (at rest, scaled here)
    as the default of its expect calls; pass a scaled timeout to any other."""
    import pexpect  # lazy: only the terminal tests need it

    command = sexp_command(*args)
    environment = sexp_env(env)
    return pexpect.spawn(
        command[0],
        command[1:],
        cwd=str(cwd),
        env=environment,
        encoding="utf-8",
        timeout=scaled(timeout),
        **options,
    )


def run_cli(
    *args: str,
    cwd: Path,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
    python_flags: tuple[str, ...] = (),
    timeout: float = 60,
    run_lines: bool = False,
) -> CliResult:
    """Run `python -m sexp_tasks ARGS...` as a real process in cwd; return (status, stdout, stderr).
    timeout is what it may take at rest (scaled here).

    The `run: <id>` line every recorded `sexp run` starts with, and the `run: <id> <n> model
    calls, ...` line it ends with when it called models, are taken out of stderr here unless
    run_lines (tests/test_runs.py and tests/test_seeing.py check them), so other tests see only
    what the program itself wrote.
    """
    completed = subprocess.run(
        sexp_command(*args, python_flags=python_flags),
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=sexp_env(env),
        timeout=scaled(timeout),
    )
    err = completed.stderr
    if not run_lines:
        err = SUMMARY_LINE.sub("", RUN_LINE.sub("", err, count=1), count=1)
    return completed.returncode, completed.stdout, err


@pytest.fixture
def cli(workspace: Path) -> Cli:
    """Run the `sexp` command line as a subprocess in the test's directory."""

    def run(*args: str, **options: object) -> CliResult:
        return run_cli(*args, cwd=workspace, **options)  # type: ignore[arg-type]

    return run


@pytest.fixture
def sexp_in_process(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Cli:
    """The `sexp` command line run in this process (its main(), stdout and stderr captured) in the
    test's directory; (status, stdout, stderr) as `cli` gives them, without starting a process
    (and importing litellm) for each call. For what a command prints and records; tests about
    the real process (signals, its exit, its environment, what it imports) use `cli`."""
    from sexp_tasks.cli import main as command

    # it would make this test process undumpable; what it hides is the real command's business
    monkeypatch.setattr(command, "hide_credentials_from_other_processes", lambda: None)

    def run(*args: str, env: Mapping[str, str] | None = None, run_lines: bool = False) -> CliResult:
        out, err = io.StringIO(), io.StringIO()
        saved = dict(os.environ)  # a .env file the command loads stays the command's
        os.environ.update(env or {})
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    status = command.main(list(args))
                except SystemExit as exit:  # argparse: --help, usage errors
                    status = exit.code if isinstance(exit.code, int) else 1
        finally:
            os.environ.clear()
            os.environ.update(saved)
        text = err.getvalue()
        if not run_lines:
            text = SUMMARY_LINE.sub("", RUN_LINE.sub("", text, count=1), count=1)
        return status, out.getvalue(), text

    return run


def run_python(code: str, timeout: float = 60) -> str:
    """Run `python -c code` with this checkout importable; its stdout (it must exit 0 within
    timeout seconds at rest, scaled here)."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=environment,
        check=True,
        timeout=scaled(timeout),
    ).stdout


@pytest.fixture
def server() -> Iterator[LLMServer]:
    """The local OpenAI-compatible server (tests/llm_server.py), started for the test and stopped
    after it. A file that needs more (a key in OPENAI_API_KEY, an `answer` function) overrides
    it with a fixture of the same name that takes this one."""
    llm = LLMServer().start()
    try:
        yield llm
    finally:
        llm.stop()


def store_rows(workspace: Path, query: str, *parameters: object) -> list[Any]:
    """The rows a query gives on the workspace's run store, read the way any SQLite client would."""
    db = sqlite3.connect(workspace / ".sexp" / "store.db")
    try:
        return db.execute(query, parameters).fetchall()
    finally:
        db.close()


def write(path: Path, text: str) -> Path:
    """path with text written to it (its directories made), in UTF-8."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def jsonl(path: Path, rows: list[Any]) -> Path:
    """path written as JSON Lines, one row a line."""
    return write(path, "".join(json.dumps(row) + "\n" for row in rows))


def results(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSON Lines file (a batch's OUT)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
