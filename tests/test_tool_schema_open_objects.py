"""A Python tool with a bare dict parameter is offered with the schema the hand-written code gave
(`{"type": "object"}`, no `additionalProperties: true`), so a cassette or journal recorded before
pydantic made the schemas still matches (review of issue 21)."""

from __future__ import annotations

from typing import Any

from sexp_tasks.handler.python_tools import python_tool


def lookup(filters: dict, rows: list[dict[str, Any]], extra: dict[str, Any] | None = None) -> str:
    """Look rows up."""
    return ""


def test_bare_dicts_are_plain_objects_at_every_depth() -> None:
    schema = python_tool(lookup, None, lambda name: False).schema
    parameters = schema["function"]["parameters"]
    assert parameters["properties"]["filters"] == {"type": "object"}
    assert parameters["properties"]["rows"]["items"] == {"type": "object"}
    assert "true" not in str(parameters).lower()
