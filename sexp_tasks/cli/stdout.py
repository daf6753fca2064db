"""The command's standard output, where a failed write ends the command (SPEC §10.1).

`sexp eval 42 >&-`, `> /dev/full` or `| head -0` make writing to stdout fail; every write then
raises OutputClosed, which no program can catch, and the command ends quietly.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Any, TextIO, cast

from ..errors import OutputClosed


class GuardedStdout:
    """A text stream around stdout (None when file descriptor 1 was closed) whose write and
    flush raise OutputClosed instead of OSError; everything else is the stream's own."""

    def __init__(self, stream: TextIO | None) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        if self._stream is None:
            raise OutputClosed(OSError(errno.EBADF, "standard output is closed"))
        try:
            return self._stream.write(text)
        except OSError as err:
            raise OutputClosed(err) from None

    def flush(self) -> None:
        if self._stream is None:
            return
        try:
            self._stream.flush()
        except OSError as err:
            raise OutputClosed(err) from None

    def isatty(self) -> bool:
        return self._stream is not None and self._stream.isatty()

    def fileno(self) -> int:
        if self._stream is None:
            raise OSError(errno.EBADF, "standard output is closed")
        return self._stream.fileno()

    @property
    def encoding(self) -> str:
        return "utf-8" if self._stream is None else self._stream.encoding

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_stdout() -> None:
    """Put sys.stdout behind GuardedStdout, unless it is a terminal (the REPL's shell draws there)."""
    if sys.stdout is None:
        discard_stdout()  # hold descriptor 1, so that no file the command opens lands on it
    if sys.stdout is None or not sys.stdout.isatty():
        sys.stdout = cast(TextIO, GuardedStdout(sys.stdout))


def discard_stdout() -> None:
    """Point file descriptor 1 at /dev/null, so output still buffered cannot fail again at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    if devnull != 1:
        os.dup2(devnull, 1)
        os.close(devnull)
