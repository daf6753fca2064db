"""Rendering errors for people: the one place an error becomes text."""

from __future__ import annotations

from .errors import SexpError
from .secrets import scrub

_MAX_SHOWN = 160


def format_error(err: SexpError) -> str:
    """Return `file:line:col: error: message`, then the source line and a caret when known; keys
    in either (a loaded file's line, a value in a message) are masked."""
    return scrub(_format(err))


def _format(err: SexpError) -> str:
    if err.span is None:
        return f"error: {err.message}"
    span = err.span
    lines = [f"{span}: error: {err.message}"]
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
    return "\n".join(lines)
