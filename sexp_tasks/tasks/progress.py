"""Progress of long work: a one-line bar on stderr when it is a terminal, nothing otherwise.

    with progress(sys.stderr, settings.quiet, "pmap", len(items)) as bar:
        ...
        bar.advance()

The bar is redrawn in place at most ten times a second, from any thread, on a line of the
stream's live region (live_region.py: bars of nested work and streamed answers take lines of
their own), and erased when the work ends, so what the program prints is all that stays on the
screen. Piped, redirected or with --quiet, the reporter writes nothing at all.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

from .live_region import is_terminal, live_region

BAR_WIDTH = 30
INTERVAL = 0.1  # seconds between redraws


class Progress:
    """Counts finished units of `total` and shows them as a bar on stream, when enabled: a line of
    stream's live region (live_region.py), which it shares with other bars and streamed answers."""

    def __init__(
        self,
        label: str,
        total: int,
        stream: TextIO,
        enabled: bool,
        interval: float = INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.total = total
        self.done = 0
        self.stream = stream
        self.enabled = enabled
        self._interval = interval
        self._clock = clock
        self._last_draw: float | None = None
        self._lock = threading.Lock()

    def start(self) -> Progress:
        """Draw the empty bar; returns self."""
        with self._lock:
            if self.enabled:
                self._last_draw = self._clock()
                live_region(self.stream).add(self)
        return self

    def advance(self, units: int = 1) -> None:
        """Count units more as done; redraw if the last drawing is old enough."""
        with self._lock:
            self.done += units
            now = self._clock()
            if self.enabled and (self._last_draw is None or now - self._last_draw >= self._interval):
                self._last_draw = now
                live_region(self.stream).draw()

    def finish(self) -> None:
        """Erase the bar (its line leaves the region)."""
        with self._lock:
            if self.enabled:
                live_region(self.stream).remove(self)
            self.enabled = False

    def line(self) -> str:
        """The bar's text: `label [#####-----] done/total`, fitted to the terminal's width."""
        count = f"{self.done}/{self.total}"
        width = min(BAR_WIDTH, _columns(self.stream) - len(self.label) - len(count) - 5)
        if width < 5:
            return f"{self.label} {count}"
        filled = width * min(self.done, self.total) // max(self.total, 1)
        return f"{self.label} [{'#' * filled}{'-' * (width - filled)}] {count}"

    def __enter__(self) -> Progress:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.finish()


def progress(stream: TextIO, quiet: bool, label: str, total: int) -> Progress:
    """A reporter on stream (the runtime's stderr), drawing only on a terminal and when not quiet."""
    return Progress(label, total, stream, not quiet and is_terminal(stream))


def _columns(stream: TextIO) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        return 80
