"""The printer: values -> text the reader reads back, display text, and JSON."""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import ValueError_
from ..syntax.nodes import Keyword, Symbol
from .values import Procedure, Value

_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f\x7f\ud800-\udfff]')
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _ESCAPES.get(char) or f"\\u{ord(char):04x}"


def quote_string(text: str) -> str:
    """A string literal the reader reads back to `text`."""
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def to_repr(value: Value) -> str:
    """The printer's form: what the REPL echoes and `sexp run` prints."""
    if value is None:
        return "nil"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return quote_string(value)
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "(" + " ".join([to_repr(item) for item in value]) + ")"
    if isinstance(value, Symbol):
        return value.name
    if isinstance(value, Keyword):
        return ":" + value.name
    if isinstance(value, dict):
        return "{" + " ".join([f"{to_repr(k)} {to_repr(v)}" for k, v in value.items()]) + "}"
    to_sexp = getattr(value, "to_sexp", None)
    if to_sexp is not None:
        return str(to_sexp())
    return repr(value)


def display(value: Value) -> str:
    """The display form (print, str, format): strings raw, nil as `nil`, the rest as printed."""
    if isinstance(value, str):
        return value
    return to_repr(value)


def to_json_value(value: Value) -> Any:
    """The JSON data for a value: symbols as "name", keywords as ":name", nil as null."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [to_json_value(item) for item in value]
    if isinstance(value, dict):
        return {str(k): to_json_value(v) for k, v in value.items()}
    if isinstance(value, Symbol):
        return value.name
    if isinstance(value, Keyword):
        return ":" + value.name
    to_json = getattr(value, "to_json", None)
    if to_json is not None:
        return to_json()
    if isinstance(value, Procedure):
        return repr(value)
    return repr(value)


def to_json(value: Value, indent: int | None = None) -> str:
    """JSON text for a value."""
    try:
        return json.dumps(to_json_value(value), ensure_ascii=False, indent=indent, allow_nan=False)
    except ValueError:  # inf or nan: JSON has no way to write them
        raise ValueError_("json: infinity and NaN have no JSON form") from None
