"""Strings: building, searching, splitting and formatting."""

from __future__ import annotations

import re

from ...errors import TypeError_, ValueError_
from ...syntax.nodes import Symbol
from ..printer import display, to_repr
from ..values import Value, type_name
from . import CORE_PRIMITIVES
from .lists import as_list

_FORMAT_FIELD = re.compile(r"\{\{|\}\}|\{([0-9]*)\}|[{}]")


def as_string(name: str, value: Value) -> str:
    """value when it is a string; a TypeError naming the primitive otherwise."""
    if isinstance(value, str):
        return value
    raise TypeError_(f"{name}: expected a string, got {to_repr(value)} ({type_name(value)})")


@CORE_PRIMITIVES.primitive("str", signature="(str x...)")
def str_(*values: Value) -> str:
    r"""The display forms of the arguments, concatenated.

    Strings show raw, everything else as the printer writes it (nil as `nil`).

    (str "n=" 3 " " (list 1 "a"))
    ;; => "n=3 (1 \"a\")"
    """
    return "".join(display(v) for v in values)


@CORE_PRIMITIVES.primitive("string-append", signature="(string-append x...)")
def string_append(*values: Value) -> str:
    """Concatenate strings, symbols and numbers; nil counts as "".

    (string-append "Value: " 123 " units" 4.5)
    ;; => "Value: 123 units4.5"
    """
    return "".join("" if v is None else (v.name if isinstance(v, Symbol) else display(v)) for v in values)


@CORE_PRIMITIVES.primitive("string=?", signature="(string=? s t...)")
def string_equal(first: Value, *rest: Value) -> bool:
    """Whether all arguments are the same string.

    (string=? "a" "a" "a")
    ;; => true
    """
    text = as_string("string=?", first)
    return all(as_string("string=?", other) == text for other in rest)


@CORE_PRIMITIVES.primitive("string-contains?", signature="(string-contains? s part)")
def string_contains(text: Value, part: Value) -> bool:
    """Whether part occurs in text.

    (string-contains? "hello world" "o w")
    ;; => true
    """
    return as_string("string-contains?", part) in as_string("string-contains?", text)


@CORE_PRIMITIVES.primitive("string-starts-with?", signature="(string-starts-with? s prefix)")
def string_starts_with(text: Value, prefix: Value) -> bool:
    """Whether text begins with prefix.

    (string-starts-with? "README.md" "READ")
    ;; => true
    """
    return as_string("string-starts-with?", text).startswith(as_string("string-starts-with?", prefix))


@CORE_PRIMITIVES.primitive("string-ends-with?", signature="(string-ends-with? s suffix)")
def string_ends_with(text: Value, suffix: Value) -> bool:
    """Whether text ends with suffix.

    (string-ends-with? "main.py" ".py")
    ;; => true
    """
    return as_string("string-ends-with?", text).endswith(as_string("string-ends-with?", suffix))


@CORE_PRIMITIVES.primitive("string-split", signature="(string-split s [sep])")
def string_split(text: Value, separator: Value = None) -> list[str]:
    """Split on separator; without one, on runs of whitespace.

    (string-split "a,b,,c" ",")
    ;; => ("a" "b" "" "c")
    (string-split "  two   words ")
    ;; => ("two" "words")
    """
    text = as_string("string-split", text)
    if separator is None:
        return text.split()
    separator = as_string("string-split", separator)
    if not separator:
        raise ValueError_("string-split: separator must not be empty")
    return text.split(separator)


@CORE_PRIMITIVES.primitive("string-join", signature="(string-join xs [sep])")
def string_join(items: Value, separator: Value = "") -> str:
    """Join the display forms of a list's elements with separator (default "").

    (string-join (list "a" "b" 3) ", ")
    ;; => "a, b, 3"
    """
    return as_string("string-join", separator).join(display(x) for x in as_list("string-join", items))


@CORE_PRIMITIVES.primitive("string-trim", signature="(string-trim s)")
def string_trim(text: Value) -> str:
    r"""text without leading and trailing whitespace.

    (string-trim "  hi \n")
    ;; => "hi"
    """
    return as_string("string-trim", text).strip()


@CORE_PRIMITIVES.primitive("string-upcase", signature="(string-upcase s)")
def string_upcase(text: Value) -> str:
    """text in upper case.

    (string-upcase "Shout")
    ;; => "SHOUT"
    """
    return as_string("string-upcase", text).upper()


@CORE_PRIMITIVES.primitive("string-downcase", signature="(string-downcase s)")
def string_downcase(text: Value) -> str:
    """text in lower case.

    (string-downcase "QUIET")
    ;; => "quiet"
    """
    return as_string("string-downcase", text).lower()


@CORE_PRIMITIVES.primitive("string-replace", signature="(string-replace s old new)")
def string_replace(text: Value, old: Value, new: Value) -> str:
    """text with every occurrence of old replaced by new.

    (string-replace "a-b-c" "-" "+")
    ;; => "a+b+c"
    """
    return as_string("string-replace", text).replace(
        as_string("string-replace", old), as_string("string-replace", new)
    )


@CORE_PRIMITIVES.primitive("substring", signature="(substring s start [end])")
def substring(text: Value, start: Value, end: Value = None) -> str:
    """Characters start..end-1 of text (Python slicing).

    Without end, to the end; negative bounds count from the end.

    (substring "hello" 1 3)
    ;; => "el"
    (substring "hello" -3)
    ;; => "llo"
    """
    text = as_string("substring", text)
    return text[_bound(start) : _bound(end)]


def _bound(value: Value) -> int | None:
    if value is not None and type(value) is not int:
        raise TypeError_(f"substring: expected integer bounds, got {to_repr(value)}")
    return value


@CORE_PRIMITIVES.primitive("format", signature="(format template arg...)")
def format_(template: Value, *args: Value) -> str:
    """Fill `{}` (next argument) and `{N}` fields with display forms; `{{` and `}}` are braces.

    There are no format specs: use `round` or `number->string` first.

    (format "{} of {}" 3 "five")
    ;; => "3 of five"
    (format "{1}{0} {{x}}" "a" "b")
    ;; => "ba {x}"
    """
    template = as_string("format", template)
    position = 0

    def field(match: re.Match[str]) -> str:
        nonlocal position
        token = match.group()
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        if match.group(1) is None:
            raise ValueError_(
                f"format: unmatched '{token}' at offset {match.start()} (write '{token}{token}' for a brace)"
            )
        if match.group(1):
            index = int(match.group(1))
        else:
            index, position = position, position + 1
        if index >= len(args):
            raise ValueError_(
                f"format: field {{{match.group(1)}}} needs argument {index + 1}, but {len(args)} given"
            )
        return display(args[index])

    return _FORMAT_FIELD.sub(field, template)
