"""Shared fixtures: every test runs in a temporary directory with every user path pointed at it."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run from a checkout without installing: `pytest` alone works
    sys.path.insert(0, str(ROOT))

from sexp_tasks.config import Settings  # noqa: E402
from sexp_tasks.runtime import Runtime  # noqa: E402

T = TypeVar("T")
CliResult = tuple[int, str, str]
RUN_LINE = re.compile(r"\Arun: [0-9a-f]{12}\n")
SUMMARY_LINE = re.compile(r"^run: [0-9a-f]{12} \d+ model calls, \d+ tokens, \$[0-9.]+, [0-9.]+ s\n\Z", re.M)
Cli = Callable[..., CliResult]


def wait_for(predicate: Callable[[], T], timeout: float, message: str) -> T:
    """Poll predicate every 20 ms until it returns a true value, and return that value;
    fail the test with message once timeout seconds have passed. Use it instead of a fixed
    sleep before a signal: wait for what the signal must find (a marker printed, a request
    received, a row in the store)."""
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


def run_cli(
    *args: str,
    cwd: Path,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    python_flags: tuple[str, ...] = (),
    timeout: float = 60,
    run_lines: bool = False,
) -> CliResult:
    """Run `python -m sexp_tasks ARGS...` as a real process in cwd; return (status, stdout, stderr).

    The `run: <id>` line every recorded `sexp run` starts with, and the `run: <id> <n> model
    calls, ...` line it ends with when it called models, are taken out of stderr here unless
    run_lines (tests/test_runs.py and tests/test_seeing.py check them), so other tests see only
    what the program itself wrote.
    """
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [environment.get("PYTHONPATH")])])
    environment.pop("PYTHONSTARTUP", None)
    environment["PYTHONIOENCODING"] = "utf-8"
    if env:
        environment.update(env)
    completed = subprocess.run(
        [sys.executable, *python_flags, "-m", "sexp_tasks", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=environment,
        timeout=timeout,
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


def run_python(code: str, timeout: float = 60) -> str:
    """Run `python -c code` with this checkout importable; its stdout (it must exit 0 within timeout)."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=environment,
        check=True,
        timeout=timeout,
    ).stdout
