"""The tool schema of a Python function (sexp_tasks/handler/tool_schema.py, pydantic's): types
beyond the common ones, and the NumPy and Sphinx docstring styles (tests/test_python_tools.py has
the rest; tests/test_tool_schema_adapter.py what pydantic's schemas changed)."""

from __future__ import annotations

import inspect
from typing import Annotated, Any, Literal

from sexp_tasks.handler.docstrings import read_docstring
from sexp_tasks.handler.tool_schema import FunctionArguments


def function_schema(fn: object, name: str) -> dict[str, Any]:
    return FunctionArguments(fn, name).schema  # type: ignore[arg-type]


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


ANY_OBJECT = {"type": "object"}


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
        # pydantic's: a tuple of two says it has two items
        "pair": {
            "type": "array",
            "prefixItems": [{"type": "integer"}, {"type": "string"}],
            "minItems": 2,
            "maxItems": 2,
        },
        "ids": {"type": "array", "items": {"type": "integer"}},
        "anything": {},
        "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "noted": {"type": "string", "description": "A note."},
        "mixed": {"enum": [1, "a"], "default": 1},  # pydantic's: a default is shown
        # pydantic's: a null is accepted where the hint allows one (and means the default here)
        "raw": {
            "anyOf": [{"type": "object"}, {"type": "null"}],
            "default": None,
        },
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
    nullable = [{"type": "string"}, {"type": "null"}]
    assert parameters["properties"] == {  # pydantic's: X or null as anyOf (the same schema)
        "note": {"anyOf": nullable},
        "tags": {"type": "array", "items": {"anyOf": nullable}},
        "mode": {"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}]},
        "either": {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]},
        "region": {"anyOf": nullable, "default": None},  # a null is its default: left out before the call
        "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": 5},  # a null is sent as None
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
        "ids": {"type": "array", "items": {}, "uniqueItems": True},  # pydantic's: a set's items differ
        "flags": {"type": "array", "items": {"type": "boolean"}, "uniqueItems": True},
        "anything": {"type": "array", "items": {}},
    }
