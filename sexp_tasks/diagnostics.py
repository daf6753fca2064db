"""Rendering errors for people: the one place an error becomes text."""

from __future__ import annotations

from .errors import SexpError, UserError
from .redact import scrub

_MAX_SHOWN = 160
_MAX_DATA = 200  # characters of an (error msg data)'s data shown after its message


def format_error(err: SexpError) -> str:
    """Return `file:line:col: error: message`, then the source line and a caret when known, then
    the note on where a library procedure raised it, if any; keys in any of them (a loaded file's
    line, a value in a message or its data) are masked."""
    return scrub(_format(err))


def _format(err: SexpError) -> str:
    message = err.message + _data(err)
    note = [f"note: {err.note}"] if err.note else []
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
        # Keep tabs in the caret line so the caret sits under the right character.
        pad = "".join(c if c == "\t" else " " for c in text[: span_column - 1])
        lines.append(f"  {text}")
        lines.append(f"  {pad}^")
    return "\n".join([*lines, *note])


def _data(err: SexpError) -> str:
    """' <printed data>' of an `(error msg data)`, on one line and clipped; '' for other errors."""
    if not isinstance(err, UserError) or err.details is None:
        return ""
    from .lang.printer import to_repr
    from .runs.traces import preview

    try:
        printed = to_repr(err.details)
    except RecursionError:  # data nested deeper than the stack the error is shown on
        printed = "…"
    return " " + preview(printed, _MAX_DATA)
