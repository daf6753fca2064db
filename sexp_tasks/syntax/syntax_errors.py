"""What the reader says when the grammar allows no token where one stands: the message and the
position, naming the bracket left open where that is the cause."""

from __future__ import annotations

from typing import Any

from ..errors import ReadError, Source, Span

_CLOSERS = {"(": ")", "{": "}"}


def unexpected_token(kind: str, value: Any, source: Source) -> ReadError:
    """The error for a token the grammar does not allow where it stands (a token's value as
    the lexer made it: see lalr_driver.Tokens)."""
    if kind == "_ERROR":
        error: ReadError = value  # the lexer's error token carries its ReadError
        return error
    if kind == "$END":
        return _unclosed(source)
    if kind in ("RPAR", "RBRACE"):
        char = ")" if kind == "RPAR" else "}"
        span = _span_at(source, value)
        before = source.text[:value]
        if before.rstrip()[-1:] in ("'", "`", ",", "@"):
            return ReadError(f"unexpected '{char}'; expected an expression after the quote", span)
        opener = _innermost_unclosed(before)
        if opener is None:
            return ReadError(f"unexpected '{char}' with no matching opening bracket", span)
        open_char, line, column = opener
        expected = _CLOSERS[open_char]
        return ReadError(
            f"unexpected '{char}'; expected '{expected}' to close '{open_char}' opened at {line}:{column}",
            span,
        )
    span = value if isinstance(value, Span) else value.span
    return ReadError("unexpected token; expected an expression", span)


def _span_at(source: Source, offset: int) -> Span:
    """The span of the character at offset in source's text."""
    line_start = source.text.rfind("\n", 0, offset) + 1
    return Span((source, source.text.count("\n", 0, offset) + 1, offset - line_start + 1))


def _unclosed(source: Source) -> ReadError:
    """The error for text that ends inside a list, naming where the list was opened."""
    opener = _innermost_unclosed(source.text)
    end_line = source.text.count("\n") + 1
    end_span = Span((source, end_line, len(source.line(end_line)) + 1))
    if opener is None:
        return ReadError(
            "unexpected end of input; expected an expression after the quote", end_span
        ).unfinished()
    char, line, column = opener
    return ReadError(
        f"unclosed '{char}' opened at {line}:{column}; expected '{_CLOSERS[char]}' before end of input",
        Span((source, line, column)),
    ).unfinished()


def _innermost_unclosed(text: str) -> tuple[str, int, int] | None:
    """Scan brackets outside strings and comments; return the last one left open."""
    stack: list[tuple[str, int, int]] = []
    line, line_start, i, n = 1, 0, 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                if text[i] == "\\":
                    i += 1
                elif text[i] == "\n":
                    line, line_start = line + 1, i + 1
                i += 1
        elif c == ";":
            while i + 1 < n and text[i + 1] != "\n":
                i += 1
        elif c in "({":
            stack.append((c, line, i - line_start + 1))
        elif c in ")}" and stack:
            stack.pop()
        elif c == "\n":
            line, line_start = line + 1, i + 1
        i += 1
    return stack[-1] if stack else None
