"""What loops over tasks ask of phase values: task?, task-inputs, script-result?, evaluation-success?."""

from __future__ import annotations

from typing import Any

from ..errors import TypeError_
from ..printer import to_repr
from ..tasks.results import ScriptResult
from ..tasks.task import Task
from ..values import type_name
from . import primitive


def says_true(value: Any) -> bool:
    """Whether a verdict field says success: true, or the text "true"."""
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def evaluation_succeeded(value: Any) -> bool:
    """The default controller's test (SPEC §9 Loops): a script exited 0, a TaskResult's notes or
    parsed content say `success: true`, any other value is true."""
    if isinstance(value, ScriptResult):
        return value.exit_code == 0
    if getattr(value, "is_task_result", False) is True:
        parsed = value.parsed_content
        return says_true(value.notes.get("success")) or (
            isinstance(parsed, dict) and says_true(parsed.get("success"))
        )
    return bool(value)


@primitive("task?", signature="(task? x)")
def is_task(x: Any) -> bool:
    """True for tasks (a template's name, a defatom), false for other procedures."""
    return isinstance(x, Task)


@primitive("task-inputs", signature="(task-inputs task)")
def task_inputs(task: Any) -> list[str]:
    """The names of a task's declared inputs, in order."""
    if not isinstance(task, Task):
        raise TypeError_(f"task-inputs: expected a task, got {to_repr(task)} ({type_name(task)})")
    return [spec.name for spec in task.template.inputs]


@primitive("script-result?", signature="(script-result? x)")
def is_script_result(x: Any) -> bool:
    """True for the result of system:run_script."""
    return isinstance(x, ScriptResult)


@primitive("evaluation-success?", signature="(evaluation-success? x)")
def evaluation_success(x: Any) -> bool:
    """Whether an evaluation succeeded, as the loops' default controller decides."""
    return evaluation_succeeded(x)
