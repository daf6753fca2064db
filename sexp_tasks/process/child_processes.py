"""The one process runner, for scripts (SPEC §2.8) and the model's run_command tool; and the one
module that imports subprocess (an import contract holds it), so sexp's own read-only queries
(git, for the file index) start here too, directly (command_output, output_chunks).

A command runs from an argument list (a shell only when asked), with a scrubbed environment,
under the launcher of process/launcher.py: its own process group and session, a subreaper that
kills every descendant left when the command ends or times out (SIGTERM, then SIGKILL) and
reports when none is left. Output is read with a deadline, so a process that escaped and holds
a pipe open cannot hang the read, and each stream keeps only its first and last halves
(output_capture.py).

A command that kills its launcher leaves its processes to init; so each run's environment
carries a marker (SEXP_SCRIPT_ID), and when the launcher dies without reporting `clean`, every
process in its session or with that marker in its environment is killed (stray_processes.py).
"""

from __future__ import annotations

import errno
import os
import pwd
import selectors
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..redact import hide_credentials_from_other_processes, is_credential_name
from ..resources import package_file
from .launcher import RUN_AS, descendants
from .output_capture import CHUNK, OutputCapture
from .stray_processes import exited, sweep

KEPT_ENVIRONMENT = ("PATH", "HOME", "LANG", "TZ", "TMPDIR", "USER", "VIRTUAL_ENV", "PYTHONPATH")
OUTPUT_LIMIT = 64 * 1024  # bytes per stream handed back to the model
GRACE_SECONDS = 2.0  # between SIGTERM and SIGKILL
MARGIN_SECONDS = 2.0  # beyond the grace, before the launcher itself is killed
DRAIN_SECONDS = 0.5  # how long pipes are still read once the launcher is gone
STARTUP_SECONDS = 10.0  # the most the launcher's own start may add to the timeout
LAUNCHER = package_file("process", "launcher.py")
MARKER = "SEXP_SCRIPT_ID"  # in each run's environment: how what a dead launcher left is found
# The longest single wait: short, so that Ctrl-C (raised in this thread by the REPL, which a
# thread blocked in select never sees) stops the wait within that time and the command is killed.
POLL_LIMIT_SECONDS = 0.1


@dataclass
class CommandOutcome:
    """What a command did: exit code (None when it timed out), output, and how it ended."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    duration_ms: float = 0.0
    stdout_dropped: int = 0  # bytes left out of the middle of stdout
    stderr_dropped: int = 0
    signal: int | None = None  # the signal that ended the command, if one did
    strays: int = 0  # processes still running when the command ended (all killed since)


def scrubbed_environment(extra: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """PATH, HOME, locale and a few more, plus extra (None removes a name); never a credential
    unless extra passes it."""
    kept = {
        k: v
        for k, v in os.environ.items()
        if (k in KEPT_ENVIRONMENT or k.startswith("LC_")) and not is_credential_name(k)
    }
    for key, value in (extra or {}).items():
        if value is None:
            kept.pop(key, None)
        else:
            kept[key] = value
    return kept


def command_argv(command: str | Sequence[str], args: Sequence[str] = (), shell: bool = False) -> list[str]:
    """The argument list: command split like a shell would (or given as a list), then args.

    With shell, a string command runs through /bin/sh -c and args become $1, $2, ...
    """
    if shell:
        text = command if isinstance(command, str) else shlex.join(command)
        return ["/bin/sh", "-c", text, "sh", *args]
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    return [*argv, *args]


def start_failure(err: OSError, name: str) -> str:
    """`cannot start 'name': why` for an error raised by run_command before the command ran."""
    reasons = {errno.ENOENT: "command not found", errno.EACCES: "permission denied"}
    why = reasons.get(err.errno or 0) or (err.strerror or str(err)).lower()
    return f"cannot start {name!r}: {why}"


# Sexp's own short read-only queries (git, for the file index) run directly, not under the
# launcher: nothing of the user's runs in them, and they end on their own or are killed here.


def command_output(argv: Sequence[str], cwd: Path, env: Mapping[str, str], timeout: float) -> bytes | None:
    """The stdout of one of sexp's own read-only commands; None when it cannot start, exits
    non-zero or runs past timeout seconds."""
    try:
        done = subprocess.run(
            list(argv), cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, env=dict(env), timeout=timeout
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def output_chunks(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> Generator[bytes, None, None]:
    """The stdout of one of sexp's own read-only commands, chunk by chunk as it comes; nothing when
    it cannot start, and OSError when the pipe cannot be read. A reader that has what it needs
    closes the iterator: the command is killed, the rest of its output never made."""
    try:
        process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=dict(env),
        )
    except (OSError, subprocess.SubprocessError):
        return
    assert process.stdout is not None
    try:
        while chunk := os.read(process.stdout.fileno(), CHUNK):
            yield chunk
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        process.stdout.close()


def run_command(
    command: str | Sequence[str],
    cwd: Path,
    timeout: float,
    *,
    input: str | None = None,
    env: Mapping[str, str | None] | None = None,
    shell: bool = False,
    args: Sequence[str] = (),
    output_limit: int = OUTPUT_LIMIT,
    user: str | None = None,
) -> CommandOutcome:
    """Run command in cwd (as user, when given: the script_user setting); kill everything it
    started when it ends or after timeout seconds.

    Raises OSError (FileNotFoundError when the command does not exist) when it cannot start,
    ValueError when the command is empty or cannot be split.
    """
    argv = command_argv(command, args, shell)
    if not argv or not argv[0]:
        raise ValueError("empty command")
    hide_credentials_from_other_processes()  # before the first script can look at this process
    if not Path(cwd).is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "no such directory", str(cwd))
    environment = scrubbed_environment(env)
    if user:
        environment.update(_run_as(user))
    run = _Run(argv, Path(cwd), timeout, input, environment, output_limit)
    return run.outcome()


def _run_as(user: str) -> dict[str, str]:
    """What the launcher needs to run the command as user (RUN_AS: `uid:gid`, which it takes out
    of the command's environment), and the user's HOME, USER and LOGNAME; PermissionError when
    this process cannot switch to user."""
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        raise PermissionError(errno.EPERM, f"cannot run scripts as {user!r}: no such user") from None
    if os.geteuid() != 0 and entry.pw_uid != os.geteuid():
        raise PermissionError(errno.EPERM, f"cannot run scripts as {user!r}: sexp is not running as root")
    home = {"HOME": entry.pw_dir, "USER": entry.pw_name, "LOGNAME": entry.pw_name}
    return {RUN_AS: f"{entry.pw_uid}:{entry.pw_gid}", **home}


class _Run:
    """One command under its launcher: the pipes, the deadlines, and what the launcher reported."""

    def __init__(
        self,
        argv: list[str],
        cwd: Path,
        timeout: float,
        input: str | None,
        env: dict[str, str],
        output_limit: int,
    ) -> None:
        self.grace = GRACE_SECONDS
        self.started = time.monotonic()
        self.timeout = timeout
        self.deadline = self.started + timeout + STARTUP_SECONDS  # until the command has started
        self.command_started = False
        self.hard_deadline: float | None = None  # when the launcher itself is killed
        self.stdin_data = memoryview(input.encode("utf-8")) if input is not None else None
        self.captures = {"stdout": OutputCapture(output_limit), "stderr": OutputCapture(output_limit)}
        self.status = b""
        self.timed_out = False
        self.terminated = False  # SIGTERM sent to the launcher
        self.launcher_done = False  # the launcher closed its status pipe: it has cleaned up
        self.argv = argv
        self.marker = os.urandom(8).hex()
        status_read, status_write = os.pipe()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-S", str(LAUNCHER), str(self.grace), str(status_write)]
                + ["=" + env["LC_CTYPE"] if "LC_CTYPE" in env else "-", *argv],
                cwd=cwd,
                env={**env, MARKER: self.marker},
                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                pass_fds=(status_write,),
            )
        except BaseException:
            os.close(status_read)
            raise
        finally:
            os.close(status_write)
        self.status_fd = status_read

    def outcome(self) -> CommandOutcome:
        """Read until the launcher is done (or the deadlines pass); what the command did."""
        try:
            self._read()
        finally:
            self._finish()
        report = dict(line.partition(" ")[::2] for line in self.status.decode().splitlines())
        if "error" in report:
            code = int(report["error"])
            raise OSError(code, os.strerror(code), self.argv[0])
        stdout, stdout_dropped = self.captures["stdout"].text()
        stderr, stderr_dropped = self.captures["stderr"].text()
        killed_by = int(report["signal"]) if "signal" in report else None
        exit_code = -killed_by if killed_by is not None else int(report["exit"]) if "exit" in report else None
        return CommandOutcome(
            None if self.timed_out else exit_code,
            stdout,
            stderr,
            self.timed_out,
            round((time.monotonic() - self.started) * 1000, 1),
            stdout_dropped,
            stderr_dropped,
            killed_by,
            int(report.get("stray", 0)),
        )

    def _read(self) -> None:
        process = self.process
        assert process.stdout is not None and process.stderr is not None
        selector = selectors.DefaultSelector()
        selector.register(process.stdout, selectors.EVENT_READ, "stdout")
        selector.register(process.stderr, selectors.EVENT_READ, "stderr")
        selector.register(self.status_fd, selectors.EVENT_READ, "status")
        if process.stdin is not None:
            os.set_blocking(process.stdin.fileno(), False)
            selector.register(process.stdin, selectors.EVENT_WRITE, "stdin")
        try:
            while selector.get_map():
                now = time.monotonic()
                if self.hard_deadline is None and now >= self.deadline:
                    self.timed_out = True
                    self._terminate()
                    self._close_stdin(selector)
                if self.hard_deadline is not None and now >= self.hard_deadline:
                    self._kill_tree()
                    return
                wake = self.hard_deadline if self.hard_deadline is not None else self.deadline
                for key, _ in selector.select(min(max(wake - now, 0.0), POLL_LIMIT_SECONDS)):
                    self._ready(key, selector)
        finally:
            selector.close()

    def _ready(self, key: selectors.SelectorKey, selector: selectors.BaseSelector) -> None:
        if key.data == "stdin":
            self._write_stdin(selector)
            return
        fd = key.fd
        chunk = os.read(fd, CHUNK)
        if not chunk:
            selector.unregister(key.fileobj)
            if key.data == "status":  # the launcher is gone: read what is left, briefly
                self.launcher_done = True
                self._close_stdin(selector)
                self.hard_deadline = min(self.hard_deadline or 1e300, time.monotonic() + DRAIN_SECONDS)
            return
        if key.data == "status":
            self.status += chunk
            if not self.command_started and b"start " in self.status:
                self.command_started = True  # the timeout counts from here
                self.deadline = min(self.deadline, time.monotonic() + self.timeout)
            if b"exit " in self.status or b"signal " in self.status or b"error " in self.status:
                if self.hard_deadline is None:  # the command ended: the launcher cleans up, within the grace
                    self.hard_deadline = time.monotonic() + self.grace + MARGIN_SECONDS
        else:
            self.captures[key.data].add(chunk)

    def _write_stdin(self, selector: selectors.BaseSelector) -> None:
        data = self.stdin_data
        assert self.process.stdin is not None and data is not None
        try:
            written = os.write(self.process.stdin.fileno(), data[:CHUNK])
        except BlockingIOError:
            return
        except OSError:  # EPIPE: the command does not read its input
            written = len(data)
        self.stdin_data = data[written:]
        if not self.stdin_data:
            self._close_stdin(selector)

    def _close_stdin(self, selector: selectors.BaseSelector) -> None:
        stdin = self.process.stdin
        if stdin is not None and not stdin.closed:
            if stdin in [key.fileobj for key in selector.get_map().values()]:
                selector.unregister(stdin)
            try:
                stdin.close()
            except OSError:
                pass

    def _terminate(self) -> None:
        """Ask the launcher to stop the command: it SIGTERMs the tree, then SIGKILLs after the grace."""
        if not self.terminated:
            self.terminated = True
            try:
                os.kill(self.process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        if self.hard_deadline is None:
            self.hard_deadline = time.monotonic() + self.grace + MARGIN_SECONDS

    def _kill_tree(self) -> None:
        """The launcher did not finish in time: SIGKILL it and every process below it."""
        pid = self.process.pid
        for target in (pid, *descendants(pid)):
            try:
                os.kill(target, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def _finish(self) -> None:
        """Make sure the launcher has exited, kill what is left of its group, reap it, close pipes."""
        process = self.process
        if not self.launcher_done:  # interrupted (Ctrl-C) or out of time: stop the command now
            self._terminate()
        if not exited(process.pid, self.grace + MARGIN_SECONDS):
            self._kill_tree()
        try:
            os.killpg(process.pid, signal.SIGKILL)  # safe: the unreaped launcher still holds the id
        except (ProcessLookupError, PermissionError):
            pass
        if b"clean" not in self.status:  # the launcher died before it could clean up
            sweep(f"{MARKER}={self.marker}".encode(), process.pid)
        process.wait()
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None and not stream.closed:
                try:
                    stream.close()
                except OSError:
                    pass
        os.close(self.status_fd)
