"""The batch's OUT file: one JSON line per input line, in input order, written as rows finish.

Rows finish out of order; one that finishes before the rows ahead of it waits in a reorder
buffer of at most `HELD` rows in memory, and beyond that only as its index (its outcome is in
the store's batch_rows, read back when its turn comes), so memory stays flat however many rows
a batch has and however slow one row is. Each line goes out in one write(2) of its own, so a
batch killed at any moment leaves whole lines: a readable prefix of OUT; a line a write fails on
(a full disk) is taken back, so a failed write leaves whole lines too.

OUT is never one of the batch's own files (the input, the program: opening them for writing
would empty them), and never written by two batches at once: the batch holds an exclusive lock
on it (flock) from before it empties it until it ends.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import BatchError

HELD = 256  # finished rows kept in memory while they wait for the rows ahead of them


class OutFile:
    """Writes rows to path in index order (from start()); stored(index) reads back a row not kept
    in memory."""

    def __init__(
        self,
        path: Path,
        stored: Callable[[int], dict[str, Any] | None],
        own_files: dict[str, Path] | None = None,
    ) -> None:
        """own_files: what OUT must not be, by what it is ("input": IN.jsonl, "program": FILE)."""
        self.path = path
        self._stored = stored
        self._next = 0  # the index of the next line to write
        self._held: dict[int, dict[str, Any]] = {}
        self._in_store: set[int] = set()
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            _refuse_own_files(path, own_files or {})
            self._fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)  # emptied by start()
        except OSError as err:
            raise BatchError(f"cannot write '{path}': {err.strerror or err}") from None
        try:
            opened = os.fstat(self._fd)
            _refuse_own_files(path, own_files or {}, opened)  # what was opened, raced or not
        except BaseException:
            os.close(self._fd)
            raise
        self._regular = stat.S_ISREG(opened.st_mode)  # a pipe or a device is neither emptied nor cut

    def lock(self) -> None:
        """Hold OUT for this batch (until close); a BatchError when another batch holds it."""
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BatchError(f"the results file '{self.path}' is being written by another batch") from None
        except OSError:  # a file that takes no lock (some devices, file systems): nothing to share
            pass

    def start(self) -> None:
        """Empty the file: the batch is about to write it whole (a resumed one too). Opening does
        not, so that a batch refused after opening (one in use by another process) leaves it.
        Only a regular file is emptied (`--out /dev/stdout` is a pipe, /dev/null a device)."""
        if self._regular:
            os.ftruncate(self._fd, 0)

    @property
    def written(self) -> int:
        """How many lines are out."""
        return self._next

    def add(self, row: dict[str, Any]) -> None:
        """A finished row (an OUT line's object); written now if every row ahead of it is."""
        with self._lock:
            index = row["index"]
            if index == self._next or len(self._held) < HELD:
                self._held[index] = row
            else:
                self._in_store.add(index)
            self._flush()

    def add_stored(self, index: int) -> None:
        """A row whose outcome is already in the store (a resumed batch's ok row)."""
        with self._lock:
            self._in_store.add(index)
            self._flush()

    def _flush(self) -> None:
        while True:
            row = self._held.pop(self._next, None)
            if row is None and self._next in self._in_store:
                self._in_store.discard(self._next)
                row = self._stored(self._next)
            if row is None:
                return
            self._write(json.dumps(row, ensure_ascii=False) + "\n")
            self._next += 1

    def _write(self, text: str) -> None:
        """One line, whole or not at all: a line a write fails on is cut off again."""
        data = text.encode("utf-8", "surrogatepass")
        start = os.lseek(self._fd, 0, os.SEEK_CUR) if self._regular else None
        while data:
            try:
                written = os.write(self._fd, data)
            except OSError as err:
                if start is not None:
                    _cut(self._fd, start)
                raise BatchError(f"cannot write '{self.path}': {err.strerror or err}") from None
            data = data[written:]

    def close(self) -> None:
        with self._lock:
            os.close(self._fd)


def _refuse_own_files(path: Path, own_files: dict[str, Path], found: os.stat_result | None = None) -> None:
    """A BatchError when path is (by device and inode: a symlink, another spelling) one of
    own_files; found: path's stat, when it is open."""
    if found is None:
        try:
            found = os.stat(path)
        except OSError:  # not there yet (or unreadable: opening it says why)
            return
    for what, own in own_files.items():
        try:
            theirs = os.stat(own)
        except OSError:
            continue
        if (theirs.st_dev, theirs.st_ino) == (found.st_dev, found.st_ino):
            raise BatchError(f"the results file '{path}' is the {what}: give another --out")


def _cut(fd: int, offset: int) -> None:
    """Take back a part-written line: truncating frees room, so it works on a full disk."""
    try:
        os.ftruncate(fd, offset)
        os.lseek(fd, offset, os.SEEK_SET)
    except OSError:
        pass
