"""Finding and killing what a command left behind when its launcher could not clean up.

Every run's environment carries a marker (SEXP_SCRIPT_ID=<random>), and the launcher starts the
command in a session of its own: a process with either is the run's, wherever it went.
"""

from __future__ import annotations

import os
import signal
import time

SWEEP_SECONDS = 5.0  # the longest the search for what a dead launcher left goes on


def sweep(marker: bytes, session: int) -> None:
    """SIGKILL every process in session or with marker in its environment until none is left
    (a process that both left the session and cleared its environment is out of reach)."""
    deadline = time.monotonic() + SWEEP_SECONDS
    while left := _left_behind(marker, session):
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if time.monotonic() >= deadline:
            return
        time.sleep(0.01)


def _left_behind(marker: bytes, session: int) -> list[int]:
    """Live processes (not this one) in session or whose environment holds the marker entry."""
    found = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            if fields[0] == b"Z":
                continue
            if int(fields[3]) != session:
                with open(f"/proc/{entry}/environ", "rb") as environ:
                    if marker not in environ.read().split(b"\0"):
                        continue
        except (OSError, IndexError, ValueError):
            continue
        found.append(int(entry))
    return found


def exited(pid: int, within: float) -> bool:
    """Whether pid has exited within that many seconds; it is left unreaped."""
    deadline = time.monotonic() + within
    while True:
        try:
            info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        if info is not None:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.005)
