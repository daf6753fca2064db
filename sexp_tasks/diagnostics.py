"""Rendering errors for people: the one place an error becomes text."""

from __future__ import annotations

from .errors import SexpError


def format_error(err: SexpError) -> str:
    """Return `file:line:col: error: message`, then the source line and a caret when known."""
    if err.span is None:
        return f"error: {err.message}"
    span = err.span
    lines = [f"{span}: error: {err.message}"]
    text = span.source.line(span.line)
    if text.strip():
        # Keep tabs in the caret line so the caret sits under the right character.
        pad = "".join(c if c == "\t" else " " for c in text[: span.column - 1])
        lines.append(f"  {text}")
        lines.append(f"  {pad}^")
    return "\n".join(lines)
