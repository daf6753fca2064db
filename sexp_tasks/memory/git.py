"""What git knows about a directory: its files (tracked or not ignored) and each file's last commit.

A few `git` calls per index, however many files: `ls-files` twice, then one `log` read as a
stream and stopped as soon as every tracked file has been seen. Without git, outside a
repository, or when git fails for any reason, the answers are None and {}: never an error.
"""

from __future__ import annotations

import os
from contextlib import closing
from pathlib import Path

from ..process.child_processes import command_output, output_chunks

_COMMIT = b"\x01"


def _environment() -> dict[str, str]:
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    for variable in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):  # never someone else's repository
        env.pop(variable, None)
    return env


def _names(output: bytes) -> list[str]:
    return [os.fsdecode(name) for name in output.split(b"\0") if name]


def _ls_files(directory: Path, *options: str) -> list[str] | None:
    output = command_output(["git", "ls-files", "-z", *options], directory, _environment(), timeout=60)
    return None if output is None else _names(output)


def listed_files(directory: Path) -> tuple[list[str], set[str]] | None:
    """(files not ignored, the tracked ones among them), relative to directory; None outside git."""
    tracked = _ls_files(directory, "--cached")
    if tracked is None:
        return None
    others = _ls_files(directory, "--others", "--exclude-standard") or []
    return sorted({*tracked, *others}), set(tracked)


def last_commits(directory: Path, wanted: set[str]) -> dict[str, str]:
    """`<short hash> <date>` of the newest commit touching each wanted path (relative to directory)."""
    if not wanted:
        return {}
    command = [
        "git",
        "log",
        "-z",
        "--name-only",
        "--relative",
        "--no-renames",
        "--date=short",
        "--format=%x01%h %cd",
        "--",
        ".",
    ]
    found: dict[str, str] = {}
    pending = b""
    try:
        with closing(output_chunks(command, directory, _environment())) as chunks:
            for chunk in chunks:
                *complete, pending = (pending + chunk).split(_COMMIT)
                for commit in complete:
                    _take(commit, wanted, found)
                if len(found) >= len(wanted):
                    break  # every file has its commit: the rest of history is not needed
            else:
                _take(pending, wanted, found)
    except OSError:
        pass
    return found


def _take(commit: bytes, wanted: set[str], found: dict[str, str]) -> None:
    """Record one commit (`hash date\\0\\nname\\0name\\0`) for the wanted names not yet seen."""
    header, _, names = commit.partition(b"\0")
    if not header:
        return
    label = header.decode("ascii", "replace").strip()
    for name in _names(names.lstrip(b"\n")):
        if name in wanted and name not in found:
            found[name] = label
