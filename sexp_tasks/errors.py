"""The one error hierarchy: every error a user can cause, raised with its span; and the source
texts and spans errors point into (every stage makes them: the reader, the core, templates).

Spans live here, below every stage, because an error carries one: the module that defines the
errors must not import a stage.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter
from typing import Any


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


class SexpError(Exception):
    """Every error a user can cause; span says where, when known."""

    error_type = "RUNTIME_ERROR"
    note: str | None = None  # shown on a line of its own after the error (where a library raised it)

    def __init__(self, message: str, span: Span | None = None, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.span = span
        self.details = details

    @property
    def type(self) -> str:
        """The error's type: SYNTAX_ERROR, NAME_ERROR, USER_ERROR... (the Python API's name)."""
        return self.error_type

    @property
    def file(self) -> str | None:
        """The name of the file (or `<input>`-like origin) the error is in, when known."""
        return self.span.source.name if self.span else None

    @property
    def line(self) -> int | None:
        """The line the error is at, counting from 1, when known."""
        return self.span.line if self.span else None

    @property
    def column(self) -> int | None:
        """The column the error is at, counting from 1, when known."""
        return self.span.column if self.span else None

    def to_value(self) -> dict[str, Any]:
        """The dict `(catch err ...)` binds: type, message, line, column and any details."""
        value: dict[str, Any] = {
            "type": self.error_type,
            "message": self.message,
            "line": self.span.line if self.span else None,
            "column": self.span.column if self.span else None,
        }
        if self.details is not None:
            value["details"] = self.details
        return value

    def at(self, span: Span | None) -> SexpError:
        """Attach span if this error has none yet; return self for `raise err.at(node.span)`.

        An error positioned inside a library file moves to the first span outside one that it
        passes on its way out, the program's call of the library procedure, and keeps where the
        library raised it as its note.
        """
        if self.span is None:
            self.span = span
        elif span is not None and span[0].library is None:
            library = self.span[0].library
            if library is not None:
                self.note = self.note or f"raised in {library.where(self.span[1], self.span[2])}"
                self.span = span
        return self


class ReadError(SexpError):
    """Text that is not a well-formed program (exit status 2)."""

    error_type = "SYNTAX_ERROR"
    incomplete = False  # True when more text could complete it (the REPL then reads another line)
    in_string = False  # True when the text ended inside a string (the REPL's new line is not indented)

    def unfinished(self, in_string: bool = False) -> ReadError:
        """This error, marked as one that more input could resolve (in_string: the text ended
        inside a string literal)."""
        self.incomplete = True
        self.in_string = in_string
        return self


class FormError(SexpError):
    """A special form used with the wrong shape."""

    error_type = "FORM_ERROR"


class NameError_(SexpError):
    """A symbol with no binding anywhere."""

    error_type = "NAME_ERROR"


class ArityError(SexpError):
    """A procedure called with the wrong number or kind of arguments."""

    error_type = "ARITY_ERROR"


class TypeError_(SexpError):
    """A value of the wrong type given to a primitive or called as a procedure."""

    error_type = "TYPE_ERROR"


class ValueError_(SexpError):
    """A value of the right type but out of range (division by zero, bad index...)."""

    error_type = "VALUE_ERROR"


class RecursionDepthError(SexpError):
    """Non-tail recursion deeper than the configured limit."""

    error_type = "RECURSION_ERROR"


class FileError(SexpError):
    """A file that cannot be read or written, or lies outside the workspace."""

    error_type = "FILE_ERROR"


class AttachmentError(FileError):
    """An image or PDF a task cannot send: missing, outside the workspace, too large, of another
    type (handler/attachments.py)."""


class UserError(SexpError):
    """Raised by the program itself with `(error "message" [details])`."""

    error_type = "USER_ERROR"


class UsageError(Exception):
    """A command line that cannot be carried out (exit status 2); not a program error."""


class RunError(SexpError):
    """A recorded run that cannot be resumed: unknown, edited since, or in use."""

    error_type = "RUN_ERROR"


class BatchError(SexpError):
    """A batch that cannot start (SPEC §10.5): a malformed input line, an unknown or edited
    batch, bad options, an executor that is not installed. where: `IN.jsonl:7` for a line."""

    error_type = "BATCH_ERROR"

    def __init__(self, message: str, where: str | None = None) -> None:
        super().__init__(message)
        self.where = where

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


class OutWriteError(BatchError):
    """A batch whose OUT could not be written once rows ran (a full disk): the batch stopped, its
    rows' outcomes are in the store, and `--resume` writes OUT again (`sexp batch` exits 1)."""


class StoreError(SexpError):
    """The run store cannot be opened or written: corrupt, locked, or not a store at all."""

    error_type = "STORE_ERROR"


class TemplateError(SexpError):
    """A task template that is not well-formed XML, or breaks the schema or a rule."""

    def __init__(self, error_type: str, message: str, span: Span | None = None) -> None:
        super().__init__(message, span)
        self.error_type = error_type


class ServiceError(SexpError):
    """A mock script or cassette that cannot be used (stops the program, exit 1)."""

    error_type = "HANDLER_ERROR"


class NoModelError(SexpError):
    """A task call with no model configured anywhere."""

    error_type = "CONFIGURATION_ERROR"


class SettingsError(SexpError):
    """A setting the Python API does not know, or a value it cannot take."""

    error_type = "CONFIGURATION_ERROR"


class PythonError(SexpError):
    """A Python function bound with Session.define raised an exception."""

    error_type = "PYTHON_ERROR"


class OutputClosed(BaseException):
    """Standard output is closed or full: the command ends quietly (SPEC §10.1).

    Not an Exception, so neither a program's `try` nor a primitive's error translation stops it.
    """

    def __init__(self, cause: OSError) -> None:
        super().__init__(str(cause))
        self.cause = cause

    @property
    def closed_pipe(self) -> bool:
        """Whether the reader went away (`| head`): the command then ends with status 0."""
        return isinstance(self.cause, BrokenPipeError)
