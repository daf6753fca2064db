"""Source texts and the spans that point into them."""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter


class Source:
    """A named text the reader read; spans keep a reference so errors can quote it.

    `library` is set for the library files that ship with sexp (stdlib/*.sexp): an error
    raised in one is shown at the program's call instead (SexpError.at).
    """

    __slots__ = ("name", "text", "_lines", "library")

    def __init__(self, name: str, text: str) -> None:
        self.name = name
        self.text = text
        self._lines: list[str] | None = None
        self.library: LibraryFile | None = None

    def line(self, number: int) -> str:
        """Return line `number` (from 1) without its newline, or '' past the end."""
        if self._lines is None:
            self._lines = self.text.split("\n")
        if 1 <= number <= len(self._lines):
            return self._lines[number - 1]
        return ""

    def __repr__(self) -> str:
        return f"Source({self.name!r})"


@dataclass(frozen=True)
class LibraryFile:
    """A library source as users are told about it: a short name and where each definition starts."""

    label: str  # "stdlib/tasks.sexp"
    definitions: tuple[tuple[int, int, str], ...]  # (line, column, name) of each, in order

    def where(self, line: int, column: int) -> str:
        """'task-json (stdlib/tasks.sexp:12:5)': the definition holding a position, and the position."""
        holder = [
            name for at_line, at_column, name in self.definitions if (at_line, at_column) <= (line, column)
        ]
        place = f"{self.label}:{line}:{column}"
        return f"{holder[-1]} ({place})" if holder else place


class Span(tuple[Source, int, int]):
    """Where a node starts in its source: `Span((source, line, column))`, counting from 1.

    A tuple subclass because the reader makes one per token and tuple construction runs in C.
    """

    __slots__ = ()

    source = property(itemgetter(0))
    line = property(itemgetter(1))
    column = property(itemgetter(2))

    @property
    def origin(self) -> str:
        """The source's name: a file path, '<eval>' or '<repl>'."""
        return self[0].name

    def __str__(self) -> str:
        return f"{self[0].name}:{self[1]}:{self[2]}"

    def __repr__(self) -> str:
        return f"Span({self})"
