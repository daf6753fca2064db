"""Pydantic model classes standing for JSON Schemas (SPEC §10.4, issue 21): a task call's
`output_type=Model` and a Python tool's parameter annotated with a Model.

pydantic's one importer (an import-linter contract). It is never imported to ask whether a
value is a model class: a program that made one has imported pydantic already, so a value is
one only when pydantic is in sys.modules — `import sexp_tasks` and a program that calls no
model stay without it.
"""

from __future__ import annotations

import sys
from typing import Any

# The JSON Schema of each model class asked for, kept: one dict per class, so a task call's
# schema is checked once (the Task System remembers the schemas it found valid by id).
_SCHEMAS: dict[type, dict[str, Any]] = {}


def is_model_class(value: Any) -> bool:
    """Whether value is a pydantic BaseModel subclass (pydantic is not imported to tell)."""
    pydantic = sys.modules.get("pydantic")
    base = getattr(pydantic, "BaseModel", None)
    return isinstance(value, type) and base is not None and issubclass(value, base)


def model_schema(model: type) -> dict[str, Any]:
    """The model's JSON Schema (`model_json_schema()`), the same dict for every call."""
    schema = _SCHEMAS.get(model)
    if schema is None:
        schema = _SCHEMAS[model] = model.model_json_schema()  # type: ignore[attr-defined]
    return schema


def hint_schema(hint: Any) -> dict[str, Any] | None:
    """The JSON Schema pydantic gives a type hint (`TypeAdapter(hint).json_schema()`: a dataclass,
    a TypedDict, an Enum, a datetime...); None for a type it has no schema for either. Asked only
    for what handler/tool_schema.py does not know itself, so that a tool of plain types imports
    no pydantic."""
    import pydantic  # lazy: only a hint tool_schema.py has no schema for gets here

    try:
        return pydantic.TypeAdapter(hint).json_schema()
    except (pydantic.PydanticSchemaGenerationError, pydantic.PydanticUserError, TypeError, ValueError):
        return None


def validated(kind: Any, data: Any, name: str = "") -> tuple[Any, list[str]]:
    """data as kind's value (a model class's instance by `model_validate`; for another type hint
    `TypeAdapter(kind).validate_python`) and no problems; or None and the violations, each
    `where: message` (where starts with name, when given)."""
    import pydantic  # lazy: only a call that names a model class or such a hint gets here

    try:
        if is_model_class(kind):
            return kind.model_validate(data), []
        return pydantic.TypeAdapter(kind).validate_python(data), []
    except pydantic.ValidationError as err:
        problems = []
        for error in err.errors():
            where = ".".join(str(part) for part in (name, *error.get("loc", ())) if part != "") or "(root)"
            problems.append(f"{where}: {error.get('msg', 'invalid')}")
        return None, problems
