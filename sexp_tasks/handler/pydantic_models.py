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


def validated(model: type, data: Any) -> tuple[Any, list[str]]:
    """data as a model instance (`model_validate`) and no problems; or None and the violations,
    each `where: message`."""
    import pydantic  # lazy: only a call that names a model class gets here

    try:
        return model.model_validate(data), []  # type: ignore[attr-defined]
    except pydantic.ValidationError as err:
        problems = []
        for error in err.errors():
            where = ".".join(str(part) for part in error.get("loc", ())) or "(root)"
            problems.append(f"{where}: {error.get('msg', 'invalid')}")
        return None, problems
