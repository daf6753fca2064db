"""Effects: print, log-message, error, read-file, write-file, load."""

from __future__ import annotations

from ...errors import UserError
from ..printer import display
from ..services import Services
from ..values import Value
from . import CORE_PRIMITIVES
from .strings import as_string


@CORE_PRIMITIVES.primitive("print", signature="(print x...)")
def print_(ctx: Services, *values: Value) -> None:
    """Write the display forms separated by spaces and a newline; nil."""
    ctx.write_output(" ".join(display(v) for v in values) + "\n")


@CORE_PRIMITIVES.primitive("log-message", signature="(log-message x...)")
def log_message(ctx: Services, *values: Value) -> str:
    """Record a message in the log (stderr) and return it."""
    message = " ".join(display(v) for v in values)
    ctx.log(message)
    return message


@CORE_PRIMITIVES.primitive("error", signature="(error message [details])")
def error(message: Value, details: Value = None) -> None:
    """Raise an error the program can catch with try."""
    raise UserError(display(message), details=details)


@CORE_PRIMITIVES.primitive("read-file", signature="(read-file path)")
def read_file(ctx: Services, path: Value) -> str:
    """The text of a file in the workspace."""
    return ctx.read_file(as_string("read-file", path))


@CORE_PRIMITIVES.primitive("write-file", signature="(write-file path text)")
def write_file(ctx: Services, path: Value, text: Value) -> str:
    """Write text to a file in the workspace; the path."""
    return ctx.write_file(as_string("write-file", path), display(text))


@CORE_PRIMITIVES.primitive("load", signature="(load path)")
def load(ctx: Services, path: Value) -> Value:
    """Evaluate a .sexp file in the global environment; its last value."""
    return ctx.load(as_string("load", path))
