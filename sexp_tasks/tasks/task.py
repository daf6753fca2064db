"""Tasks as procedures: binding a call's arguments to a template's inputs and running it.

A Task is what a template's name evaluates to. It can be called with pair syntax
`(name (param expr)...)`, keyword syntax `(name :param expr ...)`, or positionally like any
procedure, so tasks can be passed to map and loops.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..lang.values import CALL_SITE, NamedProcedure, Value
from ..results import FAILED, TaskError, TaskResult
from ..syntax.nodes import Keyword
from .inputs import InputError, mixed_arguments, prepare_inputs, too_many_arguments
from .template import TaskTemplate

RESERVED = ("files", "context", "model", "subtype", "history_config", "tools", "generation")

# Runs a template with checked inputs and reserved parameters, called from a source position
# (None when unknown); supplied by the Task System.
Runner = Callable[[TaskTemplate, dict[str, Value], dict[str, Value], Any], TaskResult]


def input_failure(template: TaskTemplate, err: InputError) -> TaskResult:
    """The FAILED result for bad inputs: no request has left the process."""
    return TaskResult(
        content="",
        status=FAILED,
        notes={"template": template.name},
        error=TaskError(
            "TASK_FAILURE", str(err), reason="input_validation_failure", details={"parameter": err.parameter}
        ),
    )


def bind_named(template: TaskTemplate, named: dict[str, Value]) -> tuple[dict[str, Value], dict[str, Value]]:
    """A call's arguments given by name, as checked inputs (defaults applied) and reserved
    parameters; InputError for an unknown, missing or ill-typed input."""
    inputs = {k: v for k, v in named.items() if k not in RESERVED}
    reserved = {k: v for k, v in named.items() if k in RESERVED}
    return prepare_inputs(template, inputs), reserved


class Task(NamedProcedure):
    """A callable atomic task."""

    __slots__ = ("name", "template", "runner")

    def __init__(self, template: TaskTemplate, runner: Runner) -> None:
        self.name = template.name
        self.template = template
        self.runner = runner

    def passed(self, args: list[Value]) -> list[Value]:
        return args[: len(self.template.inputs)]

    def accepts_pairs(self, names: list[str]) -> bool:
        """Whether `(name (p expr)...)` with these heads is pair syntax for this task."""
        declared = {i.name for i in self.template.inputs}
        return all(n in declared or n in RESERVED for n in names)

    def call_named(self, named: dict[str, Value], span: Any = None) -> TaskResult:
        """Run with inputs and reserved parameters given by name, from the call at span."""
        try:
            prepared, reserved = bind_named(self.template, named)
        except InputError as err:
            return input_failure(self.template, err)
        return self.runner(self.template, prepared, reserved, span)

    def apply(self, args: list[Value], depth: int) -> Value:
        return self.apply_at(args, depth, None)

    def apply_at(self, args: list[Value], depth: int, span: Any) -> Value:
        """A call like a procedure's: `:param value` pairs, else positional in declared order.

        Called by map, pmap and the like, it has no position: the primitive's call site stands in."""
        if span is None:
            span = CALL_SITE.get()
        keys = [a for a in args[::2] if isinstance(a, Keyword)]
        if args and len(args) % 2 == 0 and len(keys) == len(args) // 2:  # every other one a keyword
            return self.call_named({key.name: value for key, value in zip(keys, args[1::2])}, span)
        if any(isinstance(a, Keyword) for a in args):
            return input_failure(self.template, mixed_arguments(self.template))
        too_many = too_many_arguments(self.template, len(args))
        if too_many is not None:
            return input_failure(self.template, too_many)
        inputs = self.template.inputs
        return self.call_named({spec.name: value for spec, value in zip(inputs, args, strict=False)}, span)

    def __repr__(self) -> str:
        return f"#<task {self.name}>"

    def to_json(self) -> Any:
        return f"#<task {self.name}>"
