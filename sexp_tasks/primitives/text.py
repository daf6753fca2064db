"""JSON, numbers in text, and regular expressions (Python `re` syntax, pattern first)."""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import TypeError_, ValueError_
from ..numbers import parse_number
from ..printer import display, to_json, to_repr
from ..values import type_name
from . import primitive
from .strings import as_string


@primitive("json-parse", signature="(json-parse text)")
def json_parse(text: Any) -> Any:
    """The value of a JSON text: null is nil, [] the empty list, objects dicts."""
    try:
        return json.loads(as_string("json-parse", text))
    except json.JSONDecodeError as err:
        raise ValueError_(
            f"json-parse: invalid JSON at line {err.lineno} column {err.colno}: {err.msg}"
        ) from None


@primitive("json-dump", signature="(json-dump x [indent])")
def json_dump(value: Any, indent: Any = None) -> str:
    """JSON text for value; (json-dump v 2) indents."""
    if indent is not None and type(indent) is not int:
        raise TypeError_(f"json-dump: indent must be an integer, got {to_repr(indent)}")
    return to_json(value, indent)


@primitive("string->number", signature="(string->number s)")
def string_to_number(text: Any) -> Any:
    """The number text spells, or nil."""
    return parse_number(as_string("string->number", text).strip())


@primitive("number->string", signature="(number->string n)")
def number_to_string(number: Any) -> str:
    """The number as the printer writes it."""
    if not isinstance(number, (int, float)) or isinstance(number, bool):
        raise TypeError_(f"number->string: expected a number, got {to_repr(number)} ({type_name(number)})")
    return display(number)


def _compile(name: str, pattern: Any) -> re.Pattern[str]:
    try:
        return re.compile(as_string(name, pattern))
    except re.error as err:
        raise ValueError_(f"{name}: invalid pattern {to_repr(pattern)}: {err}") from None


@primitive("regex-match", signature="(regex-match pattern s)")
def regex_match(pattern: Any, text: Any) -> Any:
    """Search text: the list of the whole match and its groups, or nil."""
    match = _compile("regex-match", pattern).search(as_string("regex-match", text))
    if match is None:
        return None
    return [match.group(0), *match.groups()]


@primitive("regex-find-all", signature="(regex-find-all pattern s)")
def regex_find_all(pattern: Any, text: Any) -> list[Any]:
    """Every match in text (with groups, each match is the list of its groups)."""
    found = _compile("regex-find-all", pattern).findall(as_string("regex-find-all", text))
    return [list(m) if isinstance(m, tuple) else m for m in found]


@primitive("regex-replace", signature="(regex-replace pattern s replacement)")
def regex_replace(pattern: Any, text: Any, replacement: Any) -> str:
    """text with every match replaced (\\1 refers to a group)."""
    compiled = _compile("regex-replace", pattern)
    try:
        return compiled.sub(as_string("regex-replace", replacement), as_string("regex-replace", text))
    except re.error as err:
        raise ValueError_(f"regex-replace: invalid replacement: {err}") from None
