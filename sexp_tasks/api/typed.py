"""`Session.call(name, ..., output_type=Model)`: a task call whose answer is a pydantic model
(SPEC §10.4, issue 21).

The model's JSON Schema stands for the template's output format for this one call: a copy of
the template (output type json with that schema; its native, strict and retries kept) runs
through the Task System as the template would, so the schema goes as response_format where the
model takes it, the answer is checked against it and by the model class's own validators, and
repaired as the template's `retries` allow (a validator's complaint is sent back as a schema
violation is). A complete answer is then the model class's instance in `parsed`, or the result
is FAILED naming the violations. The language side does not change.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

from ..errors import SettingsError
from ..handler.pydantic_models import is_model_class, model_schema, validated, violations_of
from ..lang.values import Procedure, Value
from ..results import COMPLETE, FAILED, TaskError, TaskResult
from ..tasks.task import Task
from .convert import call_procedure


def typed_task(fn: Procedure, output_type: Any, name: str) -> Task:
    """The task fn with output_type's JSON Schema as its output format; a SettingsError when fn
    is no task or output_type no pydantic model class."""
    if not isinstance(fn, Task):
        raise SettingsError(f"output_type: {name} is not a task; only a task call has an output type")
    if not is_model_class(output_type):
        raise SettingsError(
            f"output_type: expected a pydantic model class (a BaseModel subclass), got {output_type!r}"
        )
    template = fn.template
    out = replace(
        template.output_format,
        type="json",
        schema=None,
        json_schema=model_schema(output_type),
        validate=partial(violations_of, output_type),
    )
    return Task(replace(template, output_format=out), fn.runner)


def call_typed(fn: Procedure, output_type: Any, args: list[Any], kwargs: dict[str, Any], name: str) -> Value:
    """The task fn called with output_type's schema; its result, parsed content validated by the
    model class: (the language's TaskResult whose parsed content is the instance, or FAILED)."""
    result = call_procedure(typed_task(fn, output_type, name), args, kwargs, name)
    if not isinstance(result, TaskResult) or result.status != COMPLETE:
        return result
    instance, problems = validated(output_type, result.parsed_content)
    if problems:
        message = f"the output does not match {output_type.__name__}: " + "; ".join(problems)
        error = TaskError("TASK_FAILURE", message, reason="output_format_failure", violations=problems)
        return replace(result, status=FAILED, error=error)
    return replace(result, parsed_content=instance)
