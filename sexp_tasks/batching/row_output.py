"""What a batch row's program writes (`print`, a warning, any write to sys.stdout or sys.stderr
from the thread running the row) reaches the batch's stderr labelled by row: `row 17: hello`.

Rows run on threads (of the driver, or of a Ray row worker), many at once, and a row's Runtime
writes where sys.stderr pointed when it was made. So, while a batch runs, sys.stdout and
sys.stderr are a `RowStreams` each: a write from a thread running a row (`labelled`) is cut into
lines, each handed whole to the sink with its label; a write from any other thread goes to the
stream it replaced, as before. On threads the sink is the driver's stderr; on a Ray row worker,
the lines the driver collects and writes to its own stderr (ray_executor.py).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

Sink = Callable[[str], None]  # one labelled line, its newline included

_local = threading.local()  # .label: the row this thread runs; .partial: its unfinished line
_lock = threading.Lock()
_routings: list[Sink] = []  # one sink per routing in force; labelled lines go to the last one's
_replaced: list[tuple[TextIO, TextIO]] = []  # sys.stdout and sys.stderr before the first routing


class RowStreams:
    """sys.stdout or sys.stderr while a batch runs: a row thread's writes labelled to the sink,
    every other thread's to `original`."""

    def __init__(self, original: TextIO) -> None:
        self.original = original

    def write(self, text: str) -> int:
        label = getattr(_local, "label", None)
        if label is None:
            return self.original.write(text)
        pending = getattr(_local, "partial", "") + text
        *lines, _local.partial = pending.split("\n")
        for line in lines:
            _emit(f"{label}{line}\n")
        return len(text)

    def flush(self) -> None:
        if getattr(_local, "label", None) is None:
            self.original.flush()

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno...: the stream's own
        return getattr(self.original, name)


@contextmanager
def routed(sink: Sink | None = None) -> Iterator[None]:
    """sys.stdout and sys.stderr as RowStreams while the block runs, rows' lines going to sink
    (default: the stderr in force now, flushed line by line). Nested or concurrent batches share
    the routing; the streams are put back when the last one ends."""
    entry = sink or _writer(sys.stderr)
    with _lock:
        if not _routings:
            _replaced[:] = [(sys.stdout, sys.stderr)]
            sys.stdout = RowStreams(sys.stdout)  # type: ignore[assignment]
            sys.stderr = RowStreams(sys.stderr)  # type: ignore[assignment]
        _routings.append(entry)
    try:
        yield
    finally:
        with _lock:
            _routings.remove(entry)
            if not _routings:  # the last routing: the streams as they were before the first
                sys.stdout, sys.stderr = _replaced.pop()


@contextmanager
def labelled(index: int) -> Iterator[None]:
    """What this thread writes while the block runs is row `index`'s; an unfinished last line is
    ended when it ends."""
    _local.label, _local.partial = f"row {index}: ", ""
    try:
        yield
    finally:
        label, partial = _local.label, _local.partial
        _local.label, _local.partial = None, ""
        if partial:
            _emit(f"{label}{partial}\n")


def _emit(line: str) -> None:
    with _lock:
        sink = _routings[-1] if _routings else None
    if sink is not None:
        sink(line)
    else:  # a row labelled outside any routing: on stderr, as it would have been
        sys.stderr.write(line)


def _writer(stream: TextIO) -> Sink:
    """A sink writing to stream (the stream a RowStreams replaced, when it is one)."""
    stream = stream.original if isinstance(stream, RowStreams) else stream
    guard = threading.Lock()

    def write(line: str) -> None:
        with guard:
            stream.write(line)
            stream.flush()

    return write
