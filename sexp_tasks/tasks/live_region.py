"""The bottom of a terminal's stderr, where work in progress is drawn live: progress bars (pmap's,
the loops', a batch's) and the answers of model calls as they stream (SPEC §11.3).

    region = live_region(sys.stderr)
    answer = region.open("summarize")  # a handler TextStream (HandlerServices.open_stream)
    answer.write("The text so")        # shown as `summarize: The text so`
    answer.close()                     # its line erased: the value is the program's to print

One region per stream, shared by everything drawn on it, so that a batch's bar, its rows' pmap
bars and their calls' answers take lines of their own instead of drawing over each other. The
bars come first, one line each, then one line per call in flight (`label: …tail of its text`,
newlines shown as spaces, fitted to the terminal's width): concurrent answers never mix on a line.
With exactly one call in flight, its text takes as many lines as fit (the last ones). The region
holds at most (terminal height - 2) lines; the calls that do not fit are counted in a
`… N more` line.

Redrawn at most every INTERVAL seconds as text arrives (a timer draws a last change that came
too soon), at once when a bar is drawn or a call ends, from any thread. A single line is redrawn
in place with a carriage return and spaces; several need the ANSI cursor-up and erase-down
escapes, which every terminal this draws on (a tty) understands. Nothing is added to a region
whose stream is not a terminal (progress() and the runtime decide); a terminal that breaks stops
the drawing, never the work.
"""

from __future__ import annotations

import os
import threading
import time
import unicodedata
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol, TextIO

from ..lang.deepstack import start_thread

INTERVAL = 0.05  # seconds between two drawings of arriving text: 20 a second
MORE = "… {} more"


class Line(Protocol):
    """What draws a line of its own in the region: a progress bar."""

    def line(self) -> str:
        """The line's text now."""
        ...


class LiveText:
    """The text of one streamed model request, shown in the region while it arrives (a TextStream)."""

    def __init__(self, region: LiveRegion, label: str) -> None:
        self.region = region
        self.label = label
        self.pieces: list[str] = []

    def write(self, text: str) -> None:
        """Show text after what came before (redrawn within INTERVAL)."""
        self.region._written(self, text)

    def close(self) -> None:
        """The request ended: its lines are erased."""
        self.region._closed(self)

    def one_line(self, width: int) -> str:
        """`label: text`, newlines as spaces, its tail after `…` when it is wider than width."""
        head, body = _printable(f"{self.label}: "), _printable("".join(self.pieces))
        if _cells(head + body) <= width:
            return head + body
        head = _head(head, width - 2)
        return head + "…" + _tail(body, width - _cells(head) - 1)

    def last_lines(self, width: int, room: int) -> list[str]:
        """`label: text` as the terminal would show it at width, newlines kept: its last room lines."""
        lines: list[str] = []
        for line in f"{self.label}: {''.join(self.pieces)}".split("\n"):
            lines += _wrapped(_printable(line), width)
        return lines[-room:]


class LiveRegion:
    """The bottom lines of a terminal stream: its bars and its calls' answers in flight."""

    def __init__(
        self,
        stream: TextIO,
        interval: float = INTERVAL,
        clock: Callable[[], float] = time.monotonic,
        size: Callable[[], tuple[int, int]] | None = None,
    ) -> None:
        """size: the terminal's (columns, lines), asked at each drawing (default: the stream's)."""
        self.stream = stream
        self.enabled = True  # False once the terminal broke
        self._interval = interval
        self._clock = clock
        self._size = size or (lambda: _terminal_size(stream))
        self._bars: list[Line] = []
        self._texts: list[LiveText] = []
        self._shown: list[str] = []  # the lines on the screen now, the cursor at the end of the last
        self._last_draw = -float("inf")
        self._timer: threading.Timer | None = None
        self._lock = threading.RLock()

    # Bars ------------------------------------------------------------------------------------
    def add(self, bar: Line) -> None:
        """Give bar a line of its own, drawn now."""
        with self._lock:
            self._bars.append(bar)
            self.draw()

    def remove(self, bar: Line) -> None:
        """Take bar's line away, now."""
        with self._lock:
            if bar in self._bars:
                self._bars.remove(bar)
            self.draw()

    # Answers ---------------------------------------------------------------------------------
    def open(self, label: str) -> LiveText:
        """A new call's answer, shown as it is written until it is closed (HandlerServices.open_stream)."""
        text = LiveText(self, label)
        with self._lock:
            self._texts.append(text)
        return text

    def drop_answers(self) -> None:
        """Erase every answer in flight now; what their calls write later is not shown (the REPL,
        when Ctrl-C leaves a call that has not unwound yet)."""
        with self._lock:
            self._texts.clear()
            self.draw()

    def _written(self, text: LiveText, piece: str) -> None:
        with self._lock:
            if text not in self._texts:
                return
            text.pieces.append(piece)
            wait = self._last_draw + self._interval - self._clock()
            if wait <= 0:
                self.draw()
            elif self._timer is None and self.enabled:
                self._timer = threading.Timer(wait, self._draw_late)
                self._timer.daemon = True
                start_thread(self._timer)

    def _closed(self, text: LiveText) -> None:
        with self._lock:
            if text in self._texts:
                self._texts.remove(text)
                self.draw()

    def _draw_late(self) -> None:
        with self._lock:
            self._timer = None
            self.draw()

    # Drawing ---------------------------------------------------------------------------------
    @contextmanager
    def cleared(self) -> Iterator[None]:
        """The region erased while the body writes to the terminal (a line the program prints),
        then drawn again below what it wrote."""
        with self._lock:
            self._paint([])
            try:
                yield
            finally:
                self.draw()

    def draw(self) -> None:
        """Draw the region as it is now (nothing when it shows that already)."""
        with self._lock:
            self._last_draw = self._clock()
            lines = self.lines()
            if lines != self._shown:
                self._paint(lines)

    def lines(self) -> list[str]:
        """The region's lines at the terminal's size: bars, then answers (see the module's doc)."""
        columns, rows = self._size()
        width = max(columns - 1, 10)  # a line that fills the last column would wrap on some terminals
        room = max(rows - 2, 1)
        bars = [_head(bar.line(), width) for bar in self._bars][:room]
        room -= len(bars)
        texts = self._texts
        if not texts or room <= 0:
            return bars
        if len(texts) == 1:
            return bars + texts[0].last_lines(width, room)
        if len(texts) > room:
            shown = texts[: room - 1]
            return bars + [text.one_line(width) for text in shown] + [MORE.format(len(texts) - len(shown))]
        return bars + [text.one_line(width) for text in texts]

    def _paint(self, lines: list[str]) -> None:
        """Replace the lines shown by lines: in place on one line (spaces erase, as on any
        terminal), else from the first line shown down, escapes erasing what was below."""
        if not self.enabled or lines == self._shown:
            return
        shown = self._shown
        up = f"\x1b[{len(shown) - 1}A\r" if len(shown) > 1 else "\r"
        if len(shown) <= 1 and len(lines) <= 1:
            width = _cells(shown[0]) if shown else 0  # columns, not characters: a wide one takes two
            padding = " " * max(0, width - _cells(lines[0])) if lines else ""
            text = up + (lines[0] + padding if lines else " " * width + "\r")
        else:
            text = up + "\x1b[J" + "\n".join(lines)
        self._shown = list(lines)
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken terminal: stop drawing, never fail the work
            self.enabled = False


# The region of each stream drawn on: a terminal has one bottom, whoever draws there. Weak keys:
# a stream that goes away (a test's) takes its region with it.
_REGIONS: weakref.WeakKeyDictionary[TextIO, LiveRegion] = weakref.WeakKeyDictionary()
_REGIONS_LOCK = threading.Lock()


def live_region(stream: TextIO) -> LiveRegion:
    """The one LiveRegion of stream (made on first use)."""
    with _REGIONS_LOCK:
        region = _REGIONS.get(stream)
        if region is None:
            region = _REGIONS[stream] = LiveRegion(stream)
        return region


def is_terminal(stream: TextIO) -> bool:
    """Whether stream is an interactive terminal (False for pipes, files and StringIO)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _terminal_size(stream: TextIO) -> tuple[int, int]:
    """The terminal's (columns, lines); 80 by 24 when the stream has no size."""
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, ValueError, OSError):
        return 80, 24
    return size.columns or 80, size.lines or 24


# How many columns a character takes on a terminal: two for wide ones (CJK, most emoji), none for
# combining marks, else one. Lines are fitted by it, so that none wraps (the region counts lines).
def _char_cells(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in "WF" else 1


def _cells(text: str) -> int:
    return sum(map(_char_cells, text))


def _head(text: str, cells: int) -> str:
    """The longest start of text that takes at most cells columns."""
    used = 0
    for end, char in enumerate(text):
        used += _char_cells(char)
        if used > cells:
            return text[:end]
    return text


def _tail(text: str, cells: int) -> str:
    """The longest end of text that takes at most cells columns."""
    return _head(text[::-1], cells)[::-1]


def _wrapped(text: str, width: int) -> list[str]:
    """text in lines of at most width columns, as a terminal wraps it ([""] for no text)."""
    lines = []
    while text:
        line = _head(text, width) or text[0]
        lines.append(line)
        text = text[len(line) :]
    return lines or [""]


def _printable(text: str) -> str:
    """text with newlines, tabs and control characters (an escape would move the cursor) as spaces."""
    return "".join(char if char.isprintable() else " " for char in text)
