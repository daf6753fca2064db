"""How the language writes numbers: shared by the reader and string->number."""

from __future__ import annotations

import re

INT = re.compile(r"[+-]?[0-9]+\Z")
FLOAT = re.compile(r"[+-]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+(?=[eE]))(?:[eE][+-]?[0-9]+)?\Z")


def parse_number(text: str) -> int | float | None:
    """The number `text` spells in the language's syntax, or None."""
    if INT.match(text):
        return int(text)
    if FLOAT.match(text):
        return float(text)
    return None
