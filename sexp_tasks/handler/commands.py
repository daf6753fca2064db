"""run_command: an argument list run without a shell, in its own process group, under a timeout."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

KEPT_ENVIRONMENT = ("PATH", "HOME", "LANG", "TZ", "TMPDIR", "USER", "VIRTUAL_ENV", "PYTHONPATH")
OUTPUT_LIMIT = 64 * 1024  # characters per stream handed back to the model
GRACE_SECONDS = 2.0


@dataclass
class CommandOutcome:
    """What a command did: exit code (None when killed), output, and how it ended."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    duration_ms: float = 0.0


def scrubbed_environment() -> dict[str, str]:
    """The environment a command sees: PATH, HOME, locale and a few more; never a provider key."""
    return {k: v for k, v in os.environ.items() if k in KEPT_ENVIRONMENT or k.startswith("LC_")}


def cap(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """text, or its first and last halves around a note saying how much was dropped."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters dropped ...]\n{text[-half:]}"


def run_command(command: str, cwd: Path, timeout: float) -> CommandOutcome:
    """Run command (split with shlex) in cwd; SIGTERM then SIGKILL its process group on timeout."""
    argv = shlex.split(command)
    if not argv:
        raise ValueError("empty command")
    started = time.perf_counter()
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=scrubbed_environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        text=True,
        errors="replace",
    )
    timed_out = False
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _signal_group(process.pid, signal.SIGTERM)
        try:
            stdout, stderr = process.communicate(timeout=GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            _signal_group(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
    _signal_group(process.pid, signal.SIGKILL)  # children left behind in the group go too
    elapsed = (time.perf_counter() - started) * 1000
    code = None if timed_out else process.returncode
    return CommandOutcome(code, cap(stdout or ""), cap(stderr or ""), timed_out, round(elapsed, 1))


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
