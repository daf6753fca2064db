"""The call being typed: which operator the innermost open list at the cursor calls, and the
keyword arguments it takes (the REPL completes them and shows the operator's signature)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..lang.calls import Closure
from ..lang.documentation import Documentation
from ..lang.values import Value

# A keyword in a signature: `:director` in "(refine :director d ...)".
_KEYWORD = re.compile(r"(?<![\w:])(:[^\s()\[\]\"';]+)")
_DELIMITERS = frozenset("()[]{}\"'`,; \t\r\n")


@dataclass(frozen=True)
class OpenCall:
    """The innermost list still open at the end of a text: its operator, and the keywords the
    call already gives."""

    operator: str
    given: frozenset[str]


def open_call(text: str) -> OpenCall | None:
    """The call the end of text is inside (its head a symbol typed in full), None when the end
    is at top level, in a string or comment, or the list's head is not a symbol yet."""
    opened: list[int] = []  # where each list still open begins
    index, length = 0, len(text)
    while index < length:
        char = text[index]
        if char == '"':
            end = _string_end(text, index + 1)
            if end is None:
                return None  # inside a string
            index = end
        elif char == ";":
            newline = text.find("\n", index)
            if newline < 0:
                return None  # inside a comment
            index = newline
        elif char in "([":
            opened.append(index)
        elif char in ")]" and opened:
            opened.pop()
        index += 1
    if not opened:
        return None
    start = opened[-1] + 1
    head_end = start
    while head_end < length and text[head_end] not in _DELIMITERS:
        head_end += 1
    if head_end == start or head_end == length:  # no head yet, or it is still being typed
        return None
    given = frozenset(match.group(1) for match in _KEYWORD.finditer(text, head_end))
    return OpenCall(text[start:head_end], given)


def keywords(documentation: Documentation, name: str, value: Value) -> list[str]:
    """The keyword arguments `name` takes, in the order it declares them: a procedure's `&key`
    parameters (its lambda list), else the `:keys` its documented signatures name (a task's
    inputs, refine's keys, pmap's :concurrency)."""
    found: list[str] = []
    if isinstance(value, Closure):
        found += [f":{key}" for key, _ in value.lambda_list.params.keys]
    doc = documentation.get(name)
    for signature in doc.signatures if doc is not None else ():
        found += _KEYWORD.findall(signature)
    return list(dict.fromkeys(found))


def signature_line(documentation: Documentation, name: str) -> str:
    """name's signatures on one line (what the REPL shows under the input), '' when undocumented."""
    doc = documentation.get(name)
    return "   ".join(doc.signatures) if doc is not None else ""


def _string_end(text: str, index: int) -> int | None:
    """Where the string whose contents start at index closes, None when it does not."""
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == '"':
            return index
        index += 1
    return None
