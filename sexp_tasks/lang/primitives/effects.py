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
    """Write the display forms separated by spaces and a newline; nil.

    Output goes to stdout (to stderr under `--json`).

    (print "total:" 42 (list 1 "a"))
    ;; => nil
    """
    ctx.write_output(" ".join(display(v) for v in values) + "\n")


@CORE_PRIMITIVES.primitive("log-message", signature="(log-message x...)")
def log_message(ctx: Services, *values: Value) -> str:
    """Record a message in the log (stderr) and return it.

    The display forms of the arguments are joined by spaces; the message also goes to the trace.

    (log-message "step" 2 "done")
    ;; => "step 2 done"
    """
    message = " ".join(display(v) for v in values)
    ctx.log(message)
    return message


@CORE_PRIMITIVES.primitive("error", signature="(error message [details])")
def error(message: Value, details: Value = None) -> None:
    """Raise an error the program can catch with try.

    The error's type is USER_ERROR; details, any value, is the caught error's "details".

    (try (error "too big" 99) (catch e (list (get e "message") (get e "details"))))
    ;; => ("too big" 99)
    """
    raise UserError(display(message), details=details)


@CORE_PRIMITIVES.primitive("read-file", signature="(read-file path)")
def read_file(ctx: Services, path: Value) -> str:
    """The text of a file in the workspace.

    A relative path is taken from the workspace (the working directory, or `--workspace`); a path
    outside it is an error.

    (write-file "notes.txt" "remember")
    (read-file "notes.txt")
    ;; => "remember"
    """
    return ctx.read_file(as_string("read-file", path))


@CORE_PRIMITIVES.primitive("write-file", signature="(write-file path text)")
def write_file(ctx: Services, path: Value, text: Value) -> str:
    """Write text to a file in the workspace; the path.

    Directories on the way are made; a path outside the workspace is an error. A value that is
    not a string is written as its display form.

    (write-file "out/answer.txt" 42)
    ;; => "out/answer.txt"
    (read-file "out/answer.txt")
    ;; => "42"
    """
    return ctx.write_file(as_string("write-file", path), display(text))


@CORE_PRIMITIVES.primitive("load", signature="(load path)")
def load(ctx: Services, path: Value) -> Value:
    """Evaluate a .sexp file in the global environment; its last value.

    Its definitions stay. A relative path is taken from the loading file's directory, else from
    the workspace.

    (write-file "lib.sexp" "(define (triple x) (* 3 x))")
    (load "lib.sexp")
    ;; => triple
    (triple 5)
    ;; => 15
    """
    return ctx.load(as_string("load", path))
