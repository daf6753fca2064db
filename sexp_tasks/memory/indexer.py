"""Building the file index (SPEC §5): walk a directory, describe each text file, store the metadata.

Incremental: a file whose size and mtime are those recorded is not read again (unless it was
modified so close to its reading that a later change could keep the same mtime — git's "racy"
files); a changed file is read again; a file gone (deleted, now ignored, binary or too big) is
removed from the index. Paths are stored relative to the workspace, with `/` separators.
In a git repository the files are git's (tracked, or untracked and not ignored) and each gets
its last commit; elsewhere every file under the directory is walked, skipping tool and
dependency directories.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..redact import is_secret_file
from . import git
from .extract import describe

MAX_FILE_BYTES = 1_000_000
SNIFF_BYTES = 8192
BATCH = 200  # rows written per transaction: an interrupted index keeps what it has done
RACY_NS = 2_000_000_000  # a file modified this close before it was read is read again next time
# Prefixes every stored digest: when what is extracted from a file changes, files are read again.
DESCRIBER_VERSION = "d1"

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".sexp",
        ".venv",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".tox",
        ".nox",
    }
)
BINARY_SUFFIXES = frozenset(
    """
    png jpg jpeg gif bmp ico webp tiff psd pdf zip gz tgz bz2 xz zst 7z rar tar jar war whl egg
    so dylib dll exe o a lib obj pyc pyo pyd class db sqlite sqlite3 woff woff2 ttf otf eot
    mp3 mp4 m4a wav flac ogg mov avi mkv webm bin dat npy npz pkl pickle parquet feather h5 onnx pt
    """.split()
)


class Store(Protocol):
    """The part of sexp_tasks.runs.store.Store the indexer uses."""

    def indexed_files(self) -> list[dict[str, Any]]: ...
    def index_files(self, rows: list[tuple[Any, ...]]) -> None: ...
    def set_last_commits(self, commits: list[tuple[str | None, str]]) -> None: ...
    def unindex_files(self, paths: list[str]) -> None: ...


class Bar(Protocol):
    def advance(self, units: int = 1) -> None: ...


@dataclass(frozen=True)
class IndexReport:
    """What one `sexp index` did: files now indexed under the path, and how each was handled."""

    files: int
    read: int
    unchanged: int
    removed: int
    skipped: int

    def line(self) -> str:
        counts = f"{self.read} read, {self.unchanged} unchanged, {self.removed} removed"
        return f"indexed {self.files} files ({counts})"


def read_file(path: Path) -> bytes:
    """A file's bytes (the one place the indexer reads contents; tests count its calls)."""
    with open(path, "rb") as handle:
        return handle.read(MAX_FILE_BYTES + 1)


def index_path(
    store: Store,
    workspace: Path,
    target: Path,
    warn: Callable[[str], None] = lambda message: None,
    progress: Callable[[int], AbstractContextManager[Bar]] | None = None,
) -> IndexReport:
    """Bring the index entries of every file under target (a directory or file in workspace) up to date."""
    root = Path(os.path.realpath(workspace))
    target = Path(os.path.realpath(target))
    scope = "" if target == root else target.relative_to(root).as_posix()
    files, tracked = _candidates(target)
    base = target if target.is_dir() else target.parent
    commits = git.last_commits(base, tracked)
    known = {row["path"]: row for row in store.indexed_files() if _within(row["path"], scope)}
    kept: set[str] = set()
    rows: list[tuple[Any, ...]] = []
    recommits: list[tuple[str | None, str]] = []
    counts = {"read": 0, "unchanged": 0, "skipped": 0}
    reporter = progress(len(files)) if progress else nullcontext(_NoBar())
    with reporter as bar:
        for name in files:
            rel = (base / name).relative_to(root).as_posix()
            outcome = _index_one(base / name, rel, known.get(rel), commits.get(name), rows, recommits, warn)
            counts[outcome] += 1
            if outcome != "skipped":
                kept.add(rel)
            if len(rows) >= BATCH:
                store.index_files(rows)
                rows = []
            bar.advance()
    store.index_files(rows)
    store.set_last_commits(recommits)
    gone = sorted(set(known) - kept)
    store.unindex_files(gone)
    return IndexReport(len(kept), counts["read"], counts["unchanged"], len(gone), counts["skipped"])


class _NoBar:
    def advance(self, units: int = 1) -> None:
        pass


def _within(path: str, scope: str) -> bool:
    return not scope or path == scope or path.startswith(scope + "/")


def _index_one(
    path: Path,
    rel: str,
    known: dict[str, Any] | None,
    commit: str | None,
    rows: list[tuple[Any, ...]],
    recommits: list[tuple[str | None, str]],
    warn: Callable[[str], None],
) -> str:
    """Add the file's row to rows, or its new last commit to recommits; 'read', 'unchanged' or 'skipped'."""
    try:
        info = os.lstat(path)
    except OSError:
        return "skipped"  # listed by git but deleted, or gone since the walk
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES or _suffix(rel) in BINARY_SUFFIXES:
        return "skipped"
    if known is not None and _unchanged(known, info):
        if known["last_commit"] != commit:  # a commit changes no mtime: refresh without reading
            recommits.append((commit, rel))
        return "unchanged"
    started = time.time()
    try:
        data = read_file(path)
    except OSError as err:
        warn(f"index: cannot read '{rel}': {err.strerror or err}")
        return "skipped"
    if b"\0" in data[:SNIFF_BYTES] or len(data) > MAX_FILE_BYTES:
        return "skipped"
    meta = describe(rel, data.decode("utf-8", errors="replace"))
    rows.append(
        (
            rel,
            info.st_size,
            info.st_mtime_ns,
            f"{DESCRIBER_VERSION}:{hashlib.blake2b(data, digest_size=16).hexdigest()}",
            meta.summary,
            json.dumps(list(meta.headings), ensure_ascii=False),
            json.dumps(list(meta.identifiers), ensure_ascii=False),
            commit,
            started,
        )
    )
    return "read"


def _unchanged(known: dict[str, Any], info: os.stat_result) -> bool:
    """Same size and mtime (not so close to the reading that it could hide a change), same describer."""
    same = known["size"] == info.st_size and known["mtime_ns"] == info.st_mtime_ns
    current = str(known["digest"]).startswith(f"{DESCRIBER_VERSION}:")
    return same and current and info.st_mtime_ns < int(known["indexed_at"] * 1e9) - RACY_NS


def _suffix(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


def _candidates(target: Path) -> tuple[list[str], set[str]]:
    """(files to index, relative to target's directory; the ones git tracks). Files that hold keys
    are never among them: nothing about them is described to a model."""
    found, tracked = _listed(target)
    kept = [name for name in found if not is_secret_file(name)]
    return kept, tracked & set(kept)


def _listed(target: Path) -> tuple[list[str], set[str]]:
    if target.is_file():
        listed = git.listed_files(target.parent)
        tracked = listed[1] & {target.name} if listed else set()
        return [target.name], tracked
    listed = git.listed_files(target)
    if not listed or not listed[0]:  # not in git, or a directory git ignores: walk it
        return sorted(_walk(target)), set()
    names, tracked = listed
    return [n for n in names if not _skipped_dir(n)], tracked


def _skipped_dir(name: str) -> bool:
    return any(part in SKIP_DIRS for part in name.split("/")[:-1])


def _walk(top: Path) -> Iterator[str]:
    """Every file under top, relative to it, not descending into skipped or virtualenv directories."""
    for directory, dirs, names in os.walk(top):
        here = Path(directory)
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not (here / d / "pyvenv.cfg").exists())
        for name in names:
            yield (here / name).relative_to(top).as_posix()
