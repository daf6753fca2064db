"""The launcher every script runs under: it starts the command and makes sure nothing outlives it.

Run as `python -I -S launcher.py GRACE STATUS_FD LC_CTYPE COMMAND ARGS...` with
STATUS_FD open for status lines (process/child_processes.py does this); LC_CTYPE is `-` or `=value`,
what the command's LC_CTYPE must be (Python's locale coercion may have changed it).
The launcher is a child subreaper (Linux prctl), so every descendant of the command that is
orphaned (a grandchild that called setsid or was double-forked included) becomes the
launcher's child, not init's. When the command ends, or when the launcher gets SIGTERM (a
timeout, or its parent dying), it sends SIGTERM to the whole tree, waits GRACE seconds, then
SIGKILLs whatever is left until it has no child at all: for a subreaper, no child means no
descendant.

Status lines on STATUS_FD: `ready` (the launcher runs, and its parent still reads: were it
gone, the write would fail), `error ERRNO` (the command could not be started), `start PID` (it
did, as process PID), `exit CODE` or
`signal NUMBER` (how the command ended), `stray COUNT` (processes still running after it
ended), `clean` (every descendant is gone). This file imports only the standard library:
it is run by path (the package imports only `descendants` from it).
"""

from __future__ import annotations

import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
STATUS_FD = -1  # set from the command line
POLL_SECONDS = 0.01
RUN_AS = "SEXP_RUN_AS"  # in the launcher's environment only: `uid:gid` to run the command as (script_user)


class Terminate(Exception):
    """SIGTERM arrived: stop the command."""


_terminating = False


def _on_sigterm(signum: int, frame: object) -> None:
    global _terminating
    if not _terminating:  # once: a second signal must not interrupt the clean-up
        _terminating = True
        raise Terminate


def _prctl(option: int, value: int) -> bool:
    """Call prctl(2); False where there is none (not Linux) or it fails."""
    try:
        import ctypes  # lazy: the package imports this file for `descendants` alone (cli/startup.py)

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(option, value, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _status(line: str) -> bool:
    """Write a status line; False when nobody reads them any more."""
    try:
        os.write(STATUS_FD, (line + "\n").encode())
    except OSError:
        return False
    return True


def _start(argv: list[str], lc_ctype: str) -> int:
    """Fork and exec argv; the child's pid, or raise OSError when exec fails."""
    environment = dict(os.environ)
    environment.pop("LC_CTYPE", None)
    run_as = environment.pop(RUN_AS, None)
    if lc_ctype.startswith("="):
        environment["LC_CTYPE"] = lc_ctype[1:]
    read_end, write_end = os.pipe()  # close-on-exec: EOF without data means exec succeeded
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            os.close(STATUS_FD)
            for name in ("SIGPIPE", "SIGXFSZ", "SIGTERM", "SIGHUP"):
                if hasattr(signal, name):
                    signal.signal(getattr(signal, name), signal.SIG_DFL)
            if run_as:  # the script_user setting: drop root for good before the command starts
                uid, gid = (int(part) for part in run_as.split(":"))
                os.get_exec_path(environment)  # imports what execvpe needs while Python's files are readable
                os.setgroups([gid])
                os.setgid(gid)
                os.setuid(uid)
            os.execvpe(argv[0], argv, environment)
        except OSError as err:
            os.write(write_end, str(err.errno or 0).encode())
        finally:
            os._exit(127)
    os.close(write_end)
    data = b""
    while chunk := os.read(read_end, 64):
        data += chunk
    os.close(read_end)
    if data:
        os.waitpid(pid, 0)
        raise OSError(int(data), os.strerror(int(data)))
    return pid


def descendants(root: int) -> set[int]:
    """Every live process below root, from the parent links in /proc/*/stat (zombies left out)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return set()
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def _reap() -> bool:
    """Reap every exited child; False once there is no child left at all."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def _signal_all(sig: int) -> None:
    try:
        os.killpg(os.getpgrp(), sig)  # the launcher itself ignores SIGTERM by now
    except OSError:
        pass
    for pid in descendants(os.getpid()):
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def clean_up(grace: float) -> None:
    """SIGTERM every descendant, wait up to grace seconds, then SIGKILL until none is left."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if not _reap() and not descendants(os.getpid()):
        return
    _signal_all(signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not _reap() and not descendants(os.getpid()):
            return
        time.sleep(POLL_SECONDS)
    while _reap() or descendants(os.getpid()):
        for pid in descendants(os.getpid()):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(POLL_SECONDS)


def _wait_for(child: int) -> int:
    """Wait for child, reaping orphans handed to this subreaper meanwhile; its wait status."""
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == child:
            return status


def main(argv: list[str]) -> int:
    global STATUS_FD
    grace, STATUS_FD, lc_ctype, command = float(argv[0]), int(argv[1]), argv[2], argv[3:]
    signal.signal(signal.SIGTERM, _on_sigterm)
    signal.signal(signal.SIGHUP, _on_sigterm)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    try:
        if not _status("ready"):  # the parent died before PDEATHSIG was set: its pipe end is closed
            raise Terminate
        try:
            child = _start(command, lc_ctype)
        except OSError as err:
            _status(f"error {err.errno}")
            return 0
        _status(f"start {child}")
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # the pipes stay open only as long as the command's processes hold them
            os.dup2(devnull, fd)
        os.close(devnull)
        status = _wait_for(child)
        if os.WIFSIGNALED(status):
            _status(f"signal {os.WTERMSIG(status)}")
        else:
            _status(f"exit {os.waitstatus_to_exitcode(status)}")
        strays = descendants(os.getpid())
        if strays:
            _status(f"stray {len(strays)}")
    except Terminate:
        pass
    clean_up(grace)
    _status("clean")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
