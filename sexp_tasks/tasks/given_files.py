"""Which files a task is given (SPEC §3.5): its template's file_paths, the call's `files`, and —
with fresh context — what the Memory System finds relevant. Only paths are decided here; the
Handler reads the contents.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..process.child_processes import run_command
from .context import ContextPolicy
from .template import FilePaths

# (query, limit) -> relevant paths, best first; None when no memory index is available.
MemoryQuery = Callable[[str, int], list[str] | None]
# command -> the paths it printed, and warnings when it could not run or failed (then no paths).
CommandListing = Callable[[str], tuple[list[str], list[str]]]
FRESH_LIMIT = 5


@dataclass
class _Gathering:
    """What a file source needs, and where it puts paths and warnings."""

    list_command: CommandListing
    memory: MemoryQuery | None
    paths: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def relevant(self, query: str, why: str, quiet: bool = False) -> None:
        """The Memory System's files for query; a warning when there is no index to ask."""
        found = self.memory(query, FRESH_LIMIT) if self.memory is not None else None
        if found is None:
            if not quiet:
                self.warnings.append(f"{why}: no memory index to ask (build one with `sexp index`)")
        else:
            self.paths.extend(found)


def _literal(declared: FilePaths, run: _Gathering) -> None:
    run.paths.extend(declared.paths)


def _command(declared: FilePaths, run: _Gathering) -> None:
    if declared.command:
        paths, warnings = run.list_command(declared.command)
        run.paths.extend(paths)
        run.warnings.extend(warnings)


def _description(declared: FilePaths, run: _Gathering) -> None:
    if declared.description:
        run.relevant(declared.description, "file_paths description")


def _context_description(declared: FilePaths, run: _Gathering) -> None:
    if declared.context_query:
        run.relevant(declared.context_query, "file_paths context_query")


# <file_paths source="..."> -> how its paths are found
SOURCES: dict[str, Callable[[FilePaths, _Gathering], None]] = {
    "literal": _literal,
    "command": _command,
    "description": _description,
    "context_description": _context_description,
}


def gather_files(
    declared: FilePaths | None,
    given: tuple[str, ...],
    policy: ContextPolicy,
    instructions: str,
    list_command: CommandListing,
    memory: MemoryQuery | None,
    quiet_fresh: bool = False,
) -> tuple[tuple[str, ...], list[str]]:
    """The task's file paths in order, each once, and warnings about sources that gave none."""
    run = _Gathering(list_command, memory)
    if declared is not None:
        SOURCES.get(declared.source, _literal)(declared, run)
    run.paths.extend(given)
    if policy.fresh:
        run.relevant(instructions, "fresh context", quiet_fresh)
    return tuple(dict.fromkeys(run.paths)), run.warnings


def command_listing(workspace: Path, timeout: float) -> CommandListing:
    """Runs a file_paths command in the workspace: the paths it prints, one per line."""

    def list_command(command: str) -> tuple[list[str], list[str]]:
        try:
            outcome = run_command(command, workspace, timeout)
        except (OSError, ValueError) as err:
            return [], [f"file_paths command {command!r} could not run: {err}"]
        if outcome.exit_code != 0:
            return [], [f"file_paths command {command!r} failed (exit code {outcome.exit_code})"]
        return [line.strip() for line in outcome.stdout.splitlines() if line.strip()], []

    return list_command


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
