"""What loops over tasks ask of phase values: task?, task-inputs, script-result?, evaluation-success?,
and phase-failure, the FAILED result of a task phase that ends a loop."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, TypeGuard

from ...errors import TypeError_
from ...lang.printer import to_repr
from ...lang.values import type_name
from ...results import ScriptResult, TaskResult
from ..task import Task
from . import TASK_PRIMITIVES


def says_true(value: Any) -> bool:
    """Whether a verdict field says success: true, or the text "true"."""
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def evaluation_succeeded(value: Any) -> bool:
    """The default controller's test (SPEC §9 Loops): a script exited 0, a TaskResult's notes or
    parsed content say `success: true`, any other value is true."""
    if isinstance(value, ScriptResult):
        return value.exit_code == 0
    if isinstance(value, TaskResult):
        parsed = value.parsed_content
        return says_true(value.notes.get("success")) or (
            isinstance(parsed, dict) and says_true(parsed.get("success"))
        )
    return bool(value)


@TASK_PRIMITIVES.primitive("task?", signature="(task? x)")
def is_task(x: Any) -> bool:
    """True for tasks (a template's name, a defatom), false for other procedures.

    (defatom echo (params text) (instructions "Repeat {{text}}"))
    (task? echo)
    ;; => true
    (task? map)
    ;; => false
    """
    return isinstance(x, Task)


@TASK_PRIMITIVES.primitive("task-inputs", signature="(task-inputs task)")
def task_inputs(task: Any) -> list[str]:
    """The names of a task's declared inputs, in order.

    (defatom translate (params text (language string)) (instructions "Translate {{text}} to {{language}}"))
    (task-inputs translate)
    ;; => ("text" "language")
    """
    if not isinstance(task, Task):
        raise TypeError_(f"task-inputs: expected a task, got {to_repr(task)} ({type_name(task)})")
    return [spec.name for spec in task.template.inputs]


@TASK_PRIMITIVES.primitive("script-result?", signature="(script-result? x)")
def is_script_result(x: Any) -> bool:
    """True for the result of system:run_script.

    (script-result? (system:run_script (command "true")))
    ;; => true
    (script-result? "output")
    ;; => false
    """
    return isinstance(x, ScriptResult)


@TASK_PRIMITIVES.primitive("evaluation-success?", signature="(evaluation-success? x)")
def evaluation_success(x: Any) -> bool:
    """Whether an evaluation succeeded, as the loops' default controller decides.

    A TaskResult succeeded when its notes or parsed content say `success: true`, a script result
    when it exited 0; any other value when it is true.

    (evaluation-success? (system:run_script (command "false")))
    ;; => false
    (evaluation-success? "looks good")
    ;; => true
    """
    return evaluation_succeeded(x)


def failed_result(value: Any) -> TypeGuard[TaskResult]:
    """Whether value is a FAILED TaskResult."""
    return isinstance(value, TaskResult) and value.failed


def phase_failure(result: TaskResult, loop: str, phase: str, iteration: int) -> TaskResult:
    """A task phase's FAILED result as the value that ends a loop (SPEC §10.1): a copy whose
    error message starts with the loop, phase and iteration, and whose notes say them as `loop`."""
    where = {"form": loop, "phase": phase, "iteration": iteration}
    error = result.error
    if error is not None:
        error = replace(error, message=f"{loop}: {phase} failed in iteration {iteration}: {error.message}")
    return replace(result, error=error, notes={**result.notes, "loop": where})


@TASK_PRIMITIVES.primitive("phase-failure", signature="(phase-failure result loop phase iteration)")
def phase_failure_(result: Any, loop: Any, phase: Any, iteration: Any) -> TaskResult:
    """(phase-failure r loop phase i): the FAILED result r, saying that it ended `loop` in `phase` of
    iteration i; the value a loop written in the language (refine) stops with.

    The result's error message starts with "<loop>: <phase> failed in iteration <i>: ".

    (defatom count-to (params (n integer)) (instructions "Count to {{n}}") (model "mock/demo"))
    (define failed (count-to :n "ten"))
    (get-in (phase-failure failed "my-loop" "director" 2) (list "error" "message"))
    ;; => "my-loop: director failed in iteration 2: task 'count-to': input 'n' must be integer, got string"
    """
    if not failed_result(result):
        raise TypeError_(f"phase-failure: expected a FAILED task result, got {to_repr(result)}")
    return phase_failure(result, str(loop), str(phase), iteration)
