"""The Evaluator's side of a task call (SPEC §3.2): check inputs, apply defaults, substitute.

Placeholders are filled from the call's inputs only, never from the environment.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..lang.printer import display, to_json_value
from ..lang.suggest import did_you_mean
from ..lang.values import type_name
from ..results import TaskResult
from .template import PLACEHOLDER, InputSpec, TaskTemplate


class InputError(Exception):
    """An input that is missing, unknown or of the wrong type; names the parameter."""

    def __init__(self, parameter: str, message: str) -> None:
        super().__init__(message)
        self.parameter = parameter


def prepare_inputs(template: TaskTemplate, given: dict[str, Any]) -> dict[str, Any]:
    """Inputs type-checked against the declared ones, with defaults applied."""
    for problem in unknown_inputs(template, given):
        raise problem
    prepared: dict[str, Any] = {}
    for spec in template.inputs:
        if spec.name in given:
            prepared[spec.name] = _checked(template.name, spec, given[spec.name])
        elif spec.default is not None:
            prepared[spec.name] = _default(template.name, spec)
        elif spec.required:
            raise _missing(template, spec)
    return prepared


# What a call's shape alone gets wrong: the Task System's checks, and `sexp check`'s before any run.


def unknown_inputs(template: TaskTemplate, names: Iterable[str]) -> list[InputError]:
    """An error for each name the template does not declare, offering the close declared names."""
    declared = [spec.name for spec in template.inputs]
    known = ", ".join(declared) or "none"
    return [
        InputError(
            name,
            f"task '{template.name}' has no input '{name}' (declared: {known}){did_you_mean(name, declared)}",
        )
        for name in names
        if name not in declared
    ]


def missing_inputs(template: TaskTemplate, names: Iterable[str]) -> list[InputError]:
    """An error for each required input without a default that names leave out."""
    given = set(names)
    return [
        _missing(template, spec)
        for spec in template.inputs
        if spec.name not in given and spec.default is None and spec.required
    ]


def _missing(template: TaskTemplate, spec: InputSpec) -> InputError:
    return InputError(spec.name, f"task '{template.name}': missing required input '{spec.name}'")


def too_many_arguments(template: TaskTemplate, count: int) -> InputError | None:
    """The error for a positional call with more arguments than the template declares inputs."""
    declared = len(template.inputs)
    if count <= declared:
        return None
    inputs = "input" if declared == 1 else "inputs"
    return InputError("?", f"task '{template.name}' takes {declared} {inputs}, got {count} arguments")


def mixed_arguments(template: TaskTemplate) -> InputError:
    """The error for a call mixing `:name value` arguments with positional ones."""
    return InputError("?", f"task '{template.name}': keyword and positional arguments cannot be mixed")


def _checked(task: str, spec: InputSpec, value: Any) -> Any:
    if isinstance(value, TaskResult):  # a TaskResult stands for its content or parsed content
        value = value.parsed_content if spec.type in ("array", "object") else value.content
    ok = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "array": lambda v: isinstance(v, list),
        "object": lambda v: isinstance(v, dict),
        "image": lambda v: isinstance(v, str),
        "file": lambda v: isinstance(v, str),
    }.get(spec.type, lambda v: True)
    if not ok(value):
        kind = spec.type + (
            " (a path in the workspace or an http(s) URL)" if spec.type in ("image", "file") else ""
        )
        raise InputError(
            spec.name, f"task '{task}': input '{spec.name}' must be {kind}, got {type_name(value)}"
        )
    return value


def _default(task: str, spec: InputSpec) -> Any:
    raw = spec.default or ""
    try:
        if spec.type == "integer":
            return int(raw)
        if spec.type == "number":
            return float(raw)
        if spec.type == "boolean":
            return raw.strip().lower() in ("true", "1", "yes")
        if spec.type in ("array", "object"):
            return json.loads(raw)
    except ValueError:
        raise InputError(
            spec.name, f"task '{task}': default of '{spec.name}' is not {spec.type}: {raw!r}"
        ) from None
    return raw


def render_value(value: Any) -> str:
    """How an input appears in the prompt: strings raw, lists and dicts as JSON."""
    if isinstance(value, (list, dict)):
        return json.dumps(to_json_value(value), ensure_ascii=False)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    return display(value)


def substitute(text: str, inputs: dict[str, Any], task: str) -> str:
    """Fill {{name}} and {{name.field}} from inputs."""

    def fill(match: Any) -> str:
        name, path = match.group(1), match.group(2)
        if name not in inputs:
            raise InputError(name, f"task '{task}': no value for {{{{{name}}}}}")
        value = inputs[name]
        for part in filter(None, path.split(".")):
            if isinstance(value, dict) and part in value:
                value = value[part]
            elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
                value = value[int(part)]
            else:
                raise InputError(name, f"task '{task}': {{{{{name}{path}}}}}: no field '{part}'")
        return render_value(value)

    return PLACEHOLDER.sub(fill, text)
