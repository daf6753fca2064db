"""Subtasks (SPEC §3.7): a model's spawn_subtask request, the template chosen for it, and the
limits on how deep and how circular a chain of subtasks may get."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..lang.values import Value
from ..results import FAILED, TaskError, TaskResult
from ..run_context import run_context, within
from ..runs.journal import fingerprint
from .inputs import InputError, prepare_inputs
from .template import SUBTYPES, TaskTemplate

if TYPE_CHECKING:
    from .runner import TaskSystem

DEFAULT_MAX_DEPTH = 5


class BadRequest(ValueError):
    """A spawn_subtask call whose arguments are not a SubtaskRequest."""


@dataclass(frozen=True)
class SubtaskRequest:
    """What the model asked for: a description, and optionally templates, a subtype, inputs, files."""

    description: str
    template_hints: tuple[str, ...] = ()
    subtype: str | None = None
    inputs: dict[str, Any] | None = None
    file_paths: tuple[str, ...] = ()

    @classmethod
    def from_arguments(cls, arguments: dict[str, Any]) -> SubtaskRequest:
        description = arguments.get("description")
        if not isinstance(description, str) or not description.strip():
            raise BadRequest("a subtask request needs a description")
        hints = _strings(arguments.get("template_hints"), "template_hints")
        subtype = arguments.get("subtype") or None
        if subtype is not None and subtype not in SUBTYPES:
            raise BadRequest(f"subtype must be one of {', '.join(SUBTYPES)}")
        inputs = arguments.get("inputs")
        if inputs is not None and not isinstance(inputs, dict):
            raise BadRequest("inputs must be an object")
        return cls(
            description.strip(), hints, subtype, inputs, _strings(arguments.get("file_paths"), "file_paths")
        )

    def to_dict(self) -> dict[str, Any]:
        value: dict[str, Any] = {"description": self.description}
        if self.template_hints:
            value["template_hints"] = list(self.template_hints)
        if self.subtype:
            value["subtype"] = self.subtype
        if self.inputs:
            value["inputs"] = self.inputs
        if self.file_paths:
            value["file_paths"] = list(self.file_paths)
        return value


def _strings(value: Any, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadRequest(f"{name} must be a list of strings")
    return tuple(value)


def choose_template(
    request: SubtaskRequest,
    get: Callable[[str], TaskTemplate | None],
    templates: Iterable[TaskTemplate],
    match: Callable[[str], list[tuple[float, TaskTemplate]]],
) -> TaskTemplate | None:
    """Hints first (the first that names a template), then the subtype, then matching."""
    for hint in request.template_hints:
        template = get(hint)
        if template is not None:
            return template
    ranked = [t for _, t in match(request.description)]
    if request.subtype:
        of_subtype = [t for t in templates if t.subtype == request.subtype]
        if len(of_subtype) == 1:
            return of_subtype[0]
        best = [t for t in ranked if t.subtype == request.subtype]
        if best:
            return best[0]
        return None
    return ranked[0] if ranked else None


def subtask_inputs(template: TaskTemplate, request: SubtaskRequest) -> dict[str, Any]:
    """The request's inputs; a template with one input and none given gets the description."""
    if request.inputs:
        return dict(request.inputs)
    if len(template.inputs) == 1:
        return {template.inputs[0].name: request.description}
    return {}


def spawn_subtask(system: TaskSystem, arguments: dict[str, Any]) -> TaskResult:
    """Run a model's spawn_subtask request (§3.7) under the depth and cycle limits."""
    here = run_context()
    chain = here.subtasks
    depth = len(chain) + 1
    try:
        request = SubtaskRequest.from_arguments(arguments)
    except BadRequest as err:
        return _subtask_failure(f"the subtask request is malformed: {err}", arguments, depth)
    key = fingerprint(request.to_dict())
    if depth > system.settings.max_depth:
        return _subtask_failure(
            f"subtasks may nest at most {system.settings.max_depth} deep (max_depth)",
            request.to_dict(),
            depth,
        )
    if key in chain:
        return _subtask_failure(
            "the same request is already running further up the chain (a cycle)", request.to_dict(), depth
        )
    template = choose_template(request, system.library.get, system.library.templates.values(), system.match)
    if template is None:
        return _subtask_failure(
            f"no template fits the request {request.description!r}", request.to_dict(), depth
        )
    try:
        inputs = prepare_inputs(template, subtask_inputs(template, request))
    except InputError as err:
        return _subtask_failure(str(err), request.to_dict(), depth)
    with within(replace(here, subtasks=(*chain, key))):
        reserved: dict[str, Value] = {"files": list(request.file_paths)} if request.file_paths else {}
        site = f"{here.step or '?'}/subtask"
        result = system.run(template, inputs, reserved, operator="subtask", site=site)
    if result.failed and not (result.error and result.error.reason == "subtask_failure"):
        message = result.error.summary() if result.error else "failed"
        return _subtask_failure(f"subtask '{template.name}' failed: {message}", request.to_dict(), depth)
    return result


def _subtask_failure(message: str, request: dict[str, Any], depth: int) -> TaskResult:
    """FAILED TASK_FAILURE subtask_failure with the request, the error and the depth."""
    return TaskResult(
        content="",
        status=FAILED,
        notes={"template": "spawn_subtask"},
        error=TaskError(
            "TASK_FAILURE",
            message,
            reason="subtask_failure",
            details={"request": request, "error": message, "depth": depth},
        ),
    )
