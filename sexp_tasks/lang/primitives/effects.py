"""Effects: print, log-message, error, read-file, write-file, load."""

from __future__ import annotations

from typing import Any, Protocol

from ...errors import UserError
from ..printer import display
from . import primitive
from .strings import as_string


class Context(Protocol):
    """The runtime services effectful primitives use."""

    def write_output(self, text: str) -> None: ...
    def log(self, message: str) -> None: ...
    def read_file(self, path: str) -> str: ...
    def write_file(self, path: str, text: str) -> str: ...
    def load(self, path: str) -> Any: ...


@primitive("print", signature="(print x...)")
def print_(ctx: Context, *values: Any) -> None:
    """Write the display forms separated by spaces and a newline; nil."""
    ctx.write_output(" ".join(display(v) for v in values) + "\n")


@primitive("log-message", signature="(log-message x...)")
def log_message(ctx: Context, *values: Any) -> str:
    """Record a message in the log (stderr) and return it."""
    message = " ".join(display(v) for v in values)
    ctx.log(message)
    return message


@primitive("error", signature="(error message [details])")
def error(message: Any, details: Any = None) -> None:
    """Raise an error the program can catch with try."""
    raise UserError(display(message), details=details)


@primitive("read-file", signature="(read-file path)")
def read_file(ctx: Context, path: Any) -> str:
    """The text of a file in the workspace."""
    return ctx.read_file(as_string("read-file", path))


@primitive("write-file", signature="(write-file path text)")
def write_file(ctx: Context, path: Any, text: Any) -> str:
    """Write text to a file in the workspace; the path."""
    return ctx.write_file(as_string("write-file", path), display(text))


@primitive("load", signature="(load path)")
def load(ctx: Context, path: Any) -> Any:
    """Evaluate a .sexp file in the global environment; its last value."""
    return ctx.load(as_string("load", path))
