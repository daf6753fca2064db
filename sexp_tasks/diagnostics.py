"""Rendering errors for people: the one place an error becomes text.

The CLI and the REPL show every error through these: a program's error (format_error), whatever
ended an evaluation, internal errors included (format_failure), and an error or warning that
belongs to no program (error_line, warning_line). They return text: the REPL's session hands it
back as its reply, the CLI writes it with report.
"""

from __future__ import annotations

import re
import sys
import traceback

from .errors import SexpError, UserError
from .lang.printer import to_repr
from .redact import scrub
from .results import TaskResult

_MAX_SHOWN = 160
_MAX_DATA = 200  # characters of an (error msg data)'s data shown after its message
DEBUG_HINT = " (run with --debug for details)"
INTERRUPTED = "interrupted"  # what Ctrl-C leaves on the screen, in the CLI and the REPL alike
# Control characters other than tab and newline: shown as \xNN, so that a NUL or an escape
# sequence in a message or a line can neither cut the line short nor drive the terminal.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def report(text: str) -> None:
    """Write text, a rendered error or warning, on a line of its own on standard error (stderr
    is line-buffered, so the line is out at once)."""
    print(text, file=sys.stderr)


def error_line(message: str, where: str | None = None) -> str:
    """`error: message` (`where: error: message` when where is given), for an error that is no
    SexpError: a command line that cannot be carried out, a file that cannot be read, an unknown
    task, run or command, input that is not text."""
    line = f"error: {message}" if where is None else f"{where}: error: {message}"
    return escape_controls(line)


def warning_line(message: str) -> str:
    """`warning: message`: something worth knowing that stops nothing."""
    return escape_controls(f"warning: {message}")


def escape_controls(text: str) -> str:
    """text with its control characters (a NUL, an escape...) but tab and newline shown as `\\xNN`."""
    return _CONTROL.sub(lambda found: f"\\x{ord(found.group()):02x}", text)


def failed_result_line(value: object) -> str | None:
    """`error: TYPE reason: message` when value is a FAILED TaskResult (the line the CLI writes
    on stderr and the REPL shows under the value), else None."""
    if isinstance(value, TaskResult) and value.failed and value.error is not None:
        return error_line(value.error.summary())
    return None


def log_line(message: str) -> str:
    """`log: message`: what a program's `log` writes."""
    return f"log: {message}"


def format_failure(exc: BaseException, debug: bool = False, debug_hint: bool = False) -> str:
    """What ended an evaluation, for people: a SexpError as format_error renders it, Python's
    RecursionError as nesting too deep, anything else as an internal error (a bug in sexp, not
    the user's mistake), followed by DEBUG_HINT when debug_hint is set and debug is not. With debug,
    the Python traceback comes first."""
    if isinstance(exc, SexpError):
        text = format_error(exc)
    elif isinstance(exc, RecursionError):
        text = error_line("nesting too deep to evaluate")
    else:
        hint = DEBUG_HINT if debug_hint and not debug else ""
        text = escape_controls(f"internal error: {type(exc).__name__}: {exc}{hint}")
    return traceback_text(exc) + text if debug else text


def traceback_text(exc: BaseException) -> str:
    """Python's traceback of exc, as --debug shows it."""
    return "".join(traceback.format_exception(exc))


def format_error(err: SexpError) -> str:
    """Return `file:line:col: error: message`, then the source line and a caret when known, then
    the note on where a library procedure raised it, if any; keys in any of them (a loaded file's
    line, a value in a message or its data) are masked."""
    return scrub(_format(err))


def _format(err: SexpError) -> str:
    message = escape_controls(err.message + _data(err))
    note = [escape_controls(f"note: {err.note}")] if err.note else []
    if err.span is None:
        return "\n".join([f"error: {message}", *note])
    span = err.span
    lines = [f"{span}: error: {message}"]
    text = span.source.line(span.line)
    if len(text) > _MAX_SHOWN:  # show a window around the column, not a megabyte of line
        start = max(0, span.column - 1 - _MAX_SHOWN // 2)
        text = text[start : start + _MAX_SHOWN]
        span_column = span.column - start
    else:
        span_column = span.column
    if text.strip():
        # Keep tabs in the caret line so the caret sits under the right character (and pad an
        # escaped control character by its escape's width).
        pad = "".join(c if c == "\t" else " " for c in escape_controls(text[: span_column - 1]))
        lines.append(f"  {escape_controls(text)}")
        lines.append(f"  {pad}^")
    return "\n".join([*lines, *note])


def _data(err: SexpError) -> str:
    """' <printed data>' of an `(error msg data)`, on one line and clipped; '' for other errors."""
    if not isinstance(err, UserError) or err.details is None:
        return ""
    try:
        printed = to_repr(err.details)
    except RecursionError:  # data nested deeper than the stack the error is shown on
        printed = "…"
    return " " + preview(printed, _MAX_DATA)


def preview(text: str, limit: int) -> str:
    """text on one line, cut to limit characters with an ellipsis (an error's data, a trace's
    results, the REPL's values)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
