"""Which files a task is given (SPEC §3.5): its template's file_paths, the call's `files`, and —
with fresh context — what the Memory System finds relevant. Only paths are decided here; the
Handler reads the contents.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .context import ContextPolicy
from .template import FilePaths

# (query, limit) -> relevant paths, best first; None when no memory index is available.
MemoryQuery = Callable[[str, int], list[str] | None]
FRESH_LIMIT = 5


def gather_files(
    declared: FilePaths | None,
    given: tuple[str, ...],
    policy: ContextPolicy,
    instructions: str,
    workspace: Path,
    script_timeout: float,
    memory: MemoryQuery | None,
    quiet_fresh: bool = False,
) -> tuple[tuple[str, ...], list[str]]:
    """The task's file paths in order, each once, and warnings about sources that gave none."""
    paths: list[str] = []
    warnings: list[str] = []

    def relevant(query: str, why: str, quiet: bool = False) -> None:
        found = memory(query, FRESH_LIMIT) if memory is not None else None
        if found is None:
            if not quiet:
                warnings.append(f"{why}: no memory index to ask (build one with `sexp index`)")
        else:
            paths.extend(found)

    if declared is not None:
        if declared.source == "literal":
            paths.extend(declared.paths)
        elif declared.source == "command" and declared.command:
            paths.extend(_command_paths(declared.command, workspace, script_timeout, warnings))
        elif declared.source == "description" and declared.description:
            relevant(declared.description, "file_paths description")
        elif declared.source == "context_description" and declared.context_query:
            relevant(declared.context_query, "file_paths context_query")
        else:
            paths.extend(declared.paths)
    paths.extend(given)
    if policy.fresh:
        relevant(instructions, "fresh context", quiet_fresh)
    return tuple(dict.fromkeys(paths)), warnings


def _command_paths(command: str, workspace: Path, timeout: float, warnings: list[str]) -> list[str]:
    """The paths a file_paths command prints, one per line."""
    from ..handler.commands import run_command

    try:
        outcome = run_command(command, workspace, timeout)
    except (OSError, ValueError) as err:
        warnings.append(f"file_paths command {command!r} could not run: {err}")
        return []
    if outcome.exit_code != 0:
        warnings.append(f"file_paths command {command!r} failed (exit code {outcome.exit_code})")
        return []
    return [line.strip() for line in outcome.stdout.splitlines() if line.strip()]


def file_stamps(paths: tuple[str, ...], workspace: Path) -> list[tuple[str, int, int] | str]:
    """Size and modification time of each path: part of a request's fingerprint, so a file that
    changed makes the step run again on resume (the contents are read only by the Handler)."""
    stamps: list[tuple[str, int, int] | str] = []
    for path in paths:
        try:
            status = (workspace / path).stat()
        except OSError:
            stamps.append(path)  # missing: the request says so
            continue
        stamps.append((path, status.st_size, status.st_mtime_ns))
    return stamps
