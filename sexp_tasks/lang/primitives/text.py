"""JSON, numbers in text, and regular expressions (Python `re` syntax, pattern first)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, TypeVar

from ...errors import TypeError_, ValueError_
from ...syntax.numerals import parse_number
from ..printer import display, to_json, to_repr
from ..values import Value, parse_json_text, type_name
from . import CORE_PRIMITIVES
from .strings import as_string

if TYPE_CHECKING:
    import regex  # imported when a pattern is first compiled (see _compile)

T = TypeVar("T")
FIRST_SLICE_SECONDS = 0.25  # a regex call runs this long before the thread can be interrupted


@CORE_PRIMITIVES.primitive("json-parse", signature="(json-parse text)")
def json_parse(text: Value) -> Value:
    r"""The value of a JSON text: null is nil, [] the empty list, objects dicts.

    Invalid JSON is an error. With `json-dump`, JSON round-trips exactly.

    (json-parse "{\"a\": [1, null, true]}")
    ;; => {"a" (1 nil true)}
    """
    try:
        value: Value = parse_json_text(as_string("json-parse", text))  # JSON data are values
        return value
    except json.JSONDecodeError as err:
        raise ValueError_(
            f"json-parse: invalid JSON at line {err.lineno} column {err.colno}: {err.msg}"
        ) from None


@CORE_PRIMITIVES.primitive("json-dump", signature="(json-dump x [indent])")
def json_dump(value: Value, indent: Value = None) -> str:
    r"""JSON text for value; (json-dump v 2) indents.

    nil is null, symbols are "name" and keywords ":name".

    (json-dump (dict "a" (list 1 nil)))
    ;; => "{\"a\": [1, null]}"
    """
    if indent is not None and type(indent) is not int:
        raise TypeError_(f"json-dump: indent must be an integer, got {to_repr(indent)}")
    return to_json(value, indent)


@CORE_PRIMITIVES.primitive("string->number", signature="(string->number s)")
def string_to_number(text: Value) -> Value:
    """The number text spells, or nil.

    (string->number " 42 ")
    ;; => 42
    (string->number "4.5e1")
    ;; => 45.0
    (string->number "many")
    ;; => nil
    """
    return parse_number(as_string("string->number", text).strip())


@CORE_PRIMITIVES.primitive("number->string", signature="(number->string n)")
def number_to_string(number: Value) -> str:
    """The number as the printer writes it.

    (number->string 3.0)
    ;; => "3.0"
    """
    if not isinstance(number, (int, float)) or isinstance(number, bool):
        raise TypeError_(f"number->string: expected a number, got {to_repr(number)} ({type_name(number)})")
    return display(number)


def _compile(name: str, pattern: Value) -> regex.Pattern[str]:
    """The pattern for matching: Python `re` syntax (checked by re, whose messages it keeps),
    matched by the regex module, which lets go of the GIL while it runs."""
    text = as_string(name, pattern)
    try:
        re.compile(text)
    except re.error as err:
        raise ValueError_(f"{name}: invalid pattern {to_repr(pattern)}: {err}") from None
    import regex  # lazy: importing it costs ~8.6 ms, paid only by programs that use a pattern

    return regex.compile(text, regex.VERSION0)


def pattern_search(pattern: str, text: str) -> bool:
    """Whether pattern matches somewhere in text, run as the regex primitives run theirs
    (interruptible): what a JSON Schema's `pattern` keywords use (handler/json_schema.py), so a
    pathological pattern in a template cannot hold a run past Ctrl-C. ValueError when the
    pattern cannot be compiled."""
    return _interruptible(_schema_pattern(pattern).search, text) is not None


@lru_cache(maxsize=256)
def _schema_pattern(pattern: str) -> regex.Pattern[str]:
    import regex  # lazy, as in _compile

    try:
        return regex.compile(pattern, regex.VERSION0)
    except regex.error as err:
        raise ValueError(f"invalid pattern {pattern!r}: {err}") from None


def _interruptible(operation: Callable[..., T], *args: str) -> T:
    """operation(*args) in slices of time that double until one is long enough, so that the
    thread can take an interrupt (Ctrl-C) between them whatever the pattern does: a
    pathological match never holds the program past the slice it is in. The retries cost at
    most about twice the time the match needs."""
    timeout = FIRST_SLICE_SECONDS
    while True:
        try:
            return operation(*args, timeout=timeout)
        except TimeoutError:
            timeout *= 2


@CORE_PRIMITIVES.primitive("regex-match", signature="(regex-match pattern s)")
def regex_match(pattern: Value, text: Value) -> Value:
    r"""Search text: the list of the whole match and its groups, or nil.

    Patterns are Python `re` syntax; the pattern comes first.

    (regex-match "(\\w+)@(\\w+)" "mail ada@example now")
    ;; => ("ada@example" "ada" "example")
    (regex-match "[0-9]" "none")
    ;; => nil
    """
    compiled = _compile("regex-match", pattern)
    match = _interruptible(compiled.search, as_string("regex-match", text))
    if match is None:
        return None
    return [match.group(0), *match.groups()]


@CORE_PRIMITIVES.primitive("regex-find-all", signature="(regex-find-all pattern s)")
def regex_find_all(pattern: Value, text: Value) -> list[Value]:
    r"""Every match in text (with groups, each match is the list of its groups).

    (regex-find-all "[0-9]+" "a1 b22 c333")
    ;; => ("1" "22" "333")
    (regex-find-all "(\\w)=(\\d)" "a=1 b=2")
    ;; => (("a" "1") ("b" "2"))
    """
    compiled = _compile("regex-find-all", pattern)
    found = _interruptible(compiled.findall, as_string("regex-find-all", text))
    return [list(m) if isinstance(m, tuple) else m for m in found]


@CORE_PRIMITIVES.primitive("regex-replace", signature="(regex-replace pattern s replacement)")
def regex_replace(pattern: Value, text: Value, replacement: Value) -> str:
    r"""text with every match replaced (\1 refers to a group).

    (regex-replace "(\\w+)@" "ada@example" "<\\1> at ")
    ;; => "<ada> at example"
    """
    compiled = _compile("regex-replace", pattern)
    template = as_string("regex-replace", replacement)
    try:
        re.compile(compiled.pattern).sub(template, "")  # re's own check of the template
    except re.error as err:
        raise ValueError_(f"regex-replace: invalid replacement: {err}") from None
    replaced: str = _interruptible(compiled.sub, template, as_string("regex-replace", text))  # regex: untyped
    return replaced
