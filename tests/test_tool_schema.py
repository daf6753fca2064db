"""The tool schema of a Python function (sexp_tasks/handler/tool_schema.py): types beyond the
common ones, and the NumPy and Sphinx docstring styles (tests/test_python_tools.py has the rest)."""

from __future__ import annotations

import inspect
from typing import Annotated, Any, Literal

from sexp_tasks.handler.tool_schema import function_schema, read_docstring


def test_docstring_styles() -> None:
    numpy = """Find orders.

    Parameters
    ----------
    query : str
        Words to look for.
    limit : int, optional
        At most this many.
    """
    sphinx = """Find orders.

    :param query: Words to look for.
    :param int limit: At most this
        many.
    :returns: ids
    """
    expected = ("Find orders.", {"query": "Words to look for.", "limit": "At most this many."})
    assert read_docstring(inspect.cleandoc(numpy)) == expected
    assert read_docstring(inspect.cleandoc(sphinx)) == expected


def test_more_types() -> None:
    def fn(
        scores: dict[str, float],
        pair: tuple[int, str],
        ids: tuple[int, ...],
        anything: Any,
        either: int | str,
        noted: Annotated[str, "A note."],
        mixed: Literal[1, "a"] = 1,
        raw: dict | None = None,
        **more: Any,
    ) -> None:
        pass

    properties = function_schema(fn, "fn")["function"]["parameters"]["properties"]
    assert properties == {
        "scores": {"type": "object", "additionalProperties": {"type": "number"}},
        "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
        "ids": {"type": "array", "items": {"type": "integer"}},
        "anything": {},
        "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "noted": {"type": "string", "description": "A note."},
        "mixed": {"enum": [1, "a"]},
        "raw": {"type": "object"},
    }


def test_optional_without_a_none_default_lets_the_model_send_null() -> None:
    def fn(
        note: str | None,
        tags: list[str | None],
        mode: Literal["a", "b"] | None,
        either: int | str | None,
        region: str | None = None,
        limit: int | None = 5,
    ) -> None:
        pass

    parameters = function_schema(fn, "fn")["function"]["parameters"]
    assert parameters["properties"] == {
        "note": {"type": ["string", "null"]},
        "tags": {"type": "array", "items": {"type": ["string", "null"]}},
        "mode": {"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}]},
        "either": {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]},
        "region": {"type": "string"},  # a null is its default: left out before the call
        "limit": {"type": ["integer", "null"]},  # a null is not its default: sent as None
    }
    assert parameters["required"] == ["note", "tags", "mode", "either"]


def test_an_array_always_says_what_its_items_are() -> None:
    """OpenAI refuses a function whose array parameter has no `items` (as a hand-written schema
    would have them, any JSON value when the hint does not say)."""

    def fn(rows: list, ids: set, flags: frozenset[bool], anything: tuple) -> None:
        pass

    properties = function_schema(fn, "fn")["function"]["parameters"]["properties"]
    assert properties == {
        "rows": {"type": "array", "items": {}},
        "ids": {"type": "array", "items": {}},
        "flags": {"type": "array", "items": {"type": "boolean"}},
        "anything": {"type": "array", "items": {}},
    }
