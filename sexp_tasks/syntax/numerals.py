"""How the language writes numbers: the one definition, used by the reader and string->number.

The grammar (grammar/sexp.lark) has no number terminal: a number is an ATOM, and the reader
asks parse_number whether an atom spells one.
"""

from __future__ import annotations

import re

INT = re.compile(r"[+-]?[0-9]+\Z")
FLOAT = re.compile(r"[+-]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+(?=[eE]))(?:[eE][+-]?[0-9]+)?\Z")
_CHUNK = 4000  # digits converted at once: under Python's default limit of 4300


def parse_number(text: str) -> int | float | None:
    """The number `text` spells in the language's syntax, or None."""
    if INT.match(text):
        return parse_int(text)
    if FLOAT.match(text):
        return float(text)
    return None


def parse_int(text: str) -> int:
    """int(text) for text that INT matches, of any length.

    Integers have any size in the language, and the CLI and every Runtime lift Python's limit on
    digits converted at once (sys.set_int_max_str_digits); this reads a long literal the same
    when a program imports the reader alone and leaves that limit as it is.
    """
    try:
        return int(text)
    except ValueError:  # past the limit
        sign, digits = (-1, text[1:]) if text[0] == "-" else (1, text.lstrip("+"))
        value = 0
        for i in range(0, len(digits), _CHUNK):
            chunk = digits[i : i + _CHUNK]
            value = value * 10 ** len(chunk) + int(chunk)
        return sign * value
