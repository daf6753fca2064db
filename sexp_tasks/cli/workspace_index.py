"""What `sexp index [PATH]` does (cli/index_commands.py declares it): build or refresh the file
index in the store (SPEC §5)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..config import load_settings
from ..diagnostics import report, warning_line
from ..errors import UsageError
from ..memory import index_path
from ..runs.store import Store
from ..tasks.progress import progress
from .command_line import EXIT_OK


def index_workspace(
    path: str | None, store: str | None, workspace: str | None, quiet: bool, cwd: Path
) -> int:
    """Index path (default: the workspace) into the store; print one summary line unless quiet."""
    settings = load_settings(cwd, {"store": store, "workspace": workspace, "quiet": quiet or None})

    def warn(message: str) -> None:
        if not settings.quiet:
            report(warning_line(message))

    for warning in settings.warnings:
        warn(warning)
    root = Path(settings.workspace)
    if not root.is_dir():
        raise UsageError(f"index: the workspace '{settings.workspace}' is not a directory")
    target = Path(path) if path is not None else root
    if not target.exists():
        raise UsageError(f"index: no such file or directory '{path}'")
    real_root, real_target = os.path.realpath(root), os.path.realpath(target)
    if os.path.commonpath([real_root, real_target]) != real_root:
        raise UsageError(f"index: '{path}' is outside the workspace ({real_root}); see --workspace")
    opened = Store(settings.store)
    held: list[str] = []  # warnings wait for the bar to be erased, so they do not break it
    try:
        indexed = index_path(
            opened,
            root,
            target,
            warn=held.append,
            progress=lambda total: progress(sys.stderr, settings.quiet, "index", total),
        )
    finally:
        opened.close()
        for message in held:
            warn(message)
    if not settings.quiet:
        print(indexed.line())
    return EXIT_OK
