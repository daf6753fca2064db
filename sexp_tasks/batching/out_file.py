"""The batch's OUT file: one JSON line per input line, in input order, written as rows finish.

Rows finish out of order; one that finishes before the rows ahead of it waits in a reorder
buffer of at most `HELD` rows in memory, and beyond that only as its index (its outcome is in
the store's batch_rows, read back when its turn comes), so memory stays flat however many rows
a batch has and however slow one row is. Each line goes out in one write(2) of its own, so a
batch killed at any moment leaves whole lines: a readable prefix of OUT.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import BatchError

HELD = 256  # finished rows kept in memory while they wait for the rows ahead of them


class OutFile:
    """Writes rows to path in index order (from start()); stored(index) reads back a row not kept
    in memory."""

    def __init__(self, path: Path, stored: Callable[[int], dict[str, Any] | None]) -> None:
        self.path = path
        self._stored = stored
        self._next = 0  # the index of the next line to write
        self._held: dict[int, dict[str, Any]] = {}
        self._in_store: set[int] = set()
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)  # emptied by start()
        except OSError as err:
            raise BatchError(f"cannot write '{path}': {err.strerror or err}") from None

    def start(self) -> None:
        """Empty the file: the batch is about to write it whole (a resumed one too). Opening does
        not, so that a batch refused after opening (one in use by another process) leaves it."""
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
        data = text.encode("utf-8", "surrogatepass")
        while data:
            try:
                written = os.write(self._fd, data)
            except OSError as err:
                raise BatchError(f"cannot write '{self.path}': {err.strerror or err}") from None
            data = data[written:]

    def close(self) -> None:
        with self._lock:
            os.close(self._fd)
