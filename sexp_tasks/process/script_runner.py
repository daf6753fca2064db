"""Running a script (SPEC §2.8): an evaluated request in, a ScriptResult out.

`run_script` is the one function behind `system:run_script`, so the run store can wrap it:
its input is a ScriptRequest (plain values), its output a ScriptResult. A non-zero exit is a
COMPLETE result with that exit code; a timeout is FAILED `execution_timeout` with the partial
output; a command that cannot be started is FAILED `execution_halted` naming it.
"""

from __future__ import annotations

import hashlib
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import Settings
from ..results import COMPLETE, FAILED, ScriptResult, TaskError
from .child_processes import CommandOutcome, command_argv, run_command, start_failure


@dataclass(frozen=True)
class ScriptRequest:
    """What to run: a command (split like a shell would, or a list) and how to run it."""

    command: str | tuple[str, ...]
    args: tuple[str, ...] = ()
    timeout: float | None = None  # seconds; None: settings.script_timeout
    cwd: str | None = None  # relative to the workspace
    input: str | None = None
    env: dict[str, str | None] = field(default_factory=dict)  # added to the scrubbed environment
    shell: bool = False

    def argv(self) -> list[str]:
        """The argument list the command runs as (ValueError when a string cannot be split)."""
        return command_argv(self.command, self.args, self.shell)

    def shown(self) -> str:
        """The command as messages name it."""
        return self.command if isinstance(self.command, str) else " ".join(self.command)

    def to_record(self) -> dict[str, Any]:
        """The request as JSON-able data for fingerprints; env values only as digests."""
        return {
            "command": self.command if isinstance(self.command, str) else list(self.command),
            "args": list(self.args),
            "timeout": self.timeout,
            "cwd": self.cwd,
            "input": self.input,
            "env": {k: _digest(v) for k, v in sorted(self.env.items())},
            "shell": self.shell,
        }


def _digest(value: str | None) -> str | None:
    return None if value is None else hashlib.sha256(value.encode("utf-8")).hexdigest()[:16]


def run_script(request: ScriptRequest, workspace: Path, settings: Settings) -> ScriptResult:
    """Run the request in workspace (or its cwd, taken from there); the ScriptResult."""
    timeout = settings.script_timeout if request.timeout is None else request.timeout
    cwd = workspace / request.cwd if request.cwd else workspace
    try:
        argv = request.argv()
    except ValueError as err:
        return _halted(request, f"cannot start {request.shown()!r}: {err}")
    if not argv or not argv[0]:
        return _halted(request, "cannot start an empty command")
    if not cwd.is_dir():
        return _halted(request, f"cannot start {argv[0]!r}: no such directory {request.cwd!r}")
    try:
        outcome = run_command(
            argv,
            cwd,
            timeout,
            input=request.input,
            env=request.env,
            output_limit=settings.script_output_limit,
            user=settings.script_user,
        )
    except (OSError, ValueError) as err:
        message = start_failure(err, argv[0]) if isinstance(err, OSError) else str(err)
        return _halted(request, message)
    return _result(request, outcome, timeout)


def _result(request: ScriptRequest, outcome: CommandOutcome, timeout: float) -> ScriptResult:
    """COMPLETE with the exit code, or FAILED when it timed out or was stopped from outside."""
    notes: dict[str, Any] = {
        "duration_ms": outcome.duration_ms,
        "stdout_truncated_bytes": outcome.stdout_dropped,
        "stderr_truncated_bytes": outcome.stderr_dropped,
    }
    if outcome.signal is not None:
        notes["signal"] = _signal_name(outcome.signal)
    result = ScriptResult(outcome.stdout, COMPLETE, notes, stdout=outcome.stdout, stderr=outcome.stderr)
    if outcome.timed_out:
        message = f"{request.shown()!r} timed out after {timeout:g} s"
        return _failed(result, request, "execution_timeout", message, timeout=timeout)
    if outcome.exit_code is None:  # the launcher was killed from outside before it could tell
        message = f"{request.shown()!r} was stopped before it reported how it ended"
        return _failed(result, request, "execution_halted", message)
    result.exit_code = outcome.exit_code
    return result


def _halted(request: ScriptRequest, message: str) -> ScriptResult:
    return _failed(ScriptResult("", notes={"duration_ms": 0.0}), request, "execution_halted", message)


def _failed(
    result: ScriptResult, request: ScriptRequest, reason: str, message: str, **details: Any
) -> ScriptResult:
    """result made FAILED with a TASK_FAILURE error of that reason."""
    result.status = FAILED
    result.error = TaskError(
        "TASK_FAILURE", message, reason=reason, details={"command": request.shown(), **details}
    )
    return result


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
