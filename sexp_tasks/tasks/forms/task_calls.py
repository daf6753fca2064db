"""Task forms: (defatom name clauses...) and (call-atomic-task name-expr args...)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import FormError, SexpError, TypeError_
from ...lang.environment import Scope
from ...lang.forms import special_form
from ...lang.forms.binding import store
from ...lang.printer import to_repr
from ...lang.values import Code, Value
from ...syntax.nodes import FunctionCallNode, Keyword, ListNode, Literal, Node, Symbol, elements

if TYPE_CHECKING:
    from ...lang.compiler import Compiler
    from ..template import TaskTemplate

_TEXT_CLAUSES = ("instructions", "description", "system", "model", "subtype", "provider", "criteria")


@special_form("defatom")
def compile_defatom(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    args = form.args
    if not args or not isinstance(args[0], Symbol):
        raise FormError('defatom: expected (defatom name (params ...) (instructions "...") ...)', form.span)
    name = args[0].name
    try:
        template = defatom_template(form)
    except SexpError as err:
        failure = err.at(form.span)

        def fail(env: list[Any]) -> Value:
            raise failure  # a bad template is reported when the defatom runs, so try can catch it

        return fail
    system = c.tasks
    if system is None:
        raise FormError("defatom: tasks are not available here", form.span)

    def define_task(env: list[Any]) -> Value:
        return system.define(template)

    return store(name, define_task, scope, c, result=args[0])


def defatom_template(form: FunctionCallNode) -> TaskTemplate:
    """The template `(defatom name clauses...)` defines, checked as an XML template is (what
    defatom registers when it runs, and what `sexp check` checks calls against)."""
    from ..template import check_rules

    name = form.args[0]
    if not isinstance(name, Symbol):
        raise FormError('defatom: expected (defatom name (params ...) (instructions "...") ...)', form.span)
    template = _template(name.name, form.args[1:], form)
    check_rules(template)
    return template


def _template(name: str, clauses: tuple[Node, ...], form: FunctionCallNode) -> TaskTemplate:
    from ..template import TYPE_ALIASES, InputSpec, OutputFormat, TaskTemplate

    values: dict[str, Any] = {"description": f"Dynamically defined task: {name}"}
    inputs: list[InputSpec] = []
    for clause in clauses:
        if not isinstance(clause, FunctionCallNode):
            raise FormError(
                f'defatom {name}: expected a clause such as (instructions "..."), got {_show(clause)}',
                clause.span or form.span,
            )
        key, parts = clause.name, clause.args
        if key in _TEXT_CLAUSES:
            values[key] = _text(name, key, parts, clause)
        elif key == "params":
            for param in parts:
                if isinstance(param, Symbol):
                    inputs.append(InputSpec(param.name))
                elif isinstance(param, FunctionCallNode) and len(param.args) == 1:
                    kind = _word(param.args[0])
                    kind = TYPE_ALIASES.get(kind, kind)
                    inputs.append(InputSpec(param.name, kind))
                else:
                    raise FormError(
                        f"defatom {name}: a parameter is name or (name type), got {_show(param)}", clause.span
                    )
        elif key == "output_format":
            settings = _settings(parts if not _is_nested(parts) else elements(parts[0]) or (), name, clause)
            values["output_format"] = OutputFormat(settings.get("type", "text"), settings.get("schema"))
        elif key == "context":
            from ..template import ContextSettings

            settings = _settings(parts, name, clause)
            accumulate = settings.get("accumulate_data")
            values["context"] = ContextSettings(
                settings.get("inherit_context"),
                None if accumulate is None else str(accumulate).lower() == "true",
                settings.get("accumulation_format"),
                settings.get("fresh_context"),
            )
        elif key == "tools":
            values["tools"] = tuple(_word(p) for p in parts)
        else:
            raise FormError(f"defatom {name}: unknown clause ({key} ...)", clause.span)
    if "instructions" not in values:
        raise FormError(f'defatom {name}: missing (instructions "...")', form.span)
    return TaskTemplate(
        name=name,
        inputs=tuple(inputs),
        origin=form.span.origin if form.span else "<defatom>",
        span=form.span,
        **values,
    )


def _is_nested(parts: tuple[Node, ...]) -> bool:
    return len(parts) == 1 and isinstance(parts[0], ListNode)


def _settings(parts: tuple[Node, ...] | list[Node], name: str, clause: FunctionCallNode) -> dict[str, str]:
    settings: dict[str, str] = {}
    for part in parts:
        if not (isinstance(part, FunctionCallNode) and len(part.args) == 1):
            raise FormError(f'defatom {name}: expected (key "value") in ({clause.name} ...)', clause.span)
        settings[part.name] = _word(part.args[0])
    return settings


def _text(name: str, key: str, parts: tuple[Node, ...], clause: FunctionCallNode) -> str:
    if len(parts) == 1 and isinstance(parts[0], Literal) and isinstance(parts[0].value, str):
        return parts[0].value
    raise FormError(f"defatom {name}: ({key} ...) takes one string", clause.span)


def _word(node: Node) -> str:
    if isinstance(node, (Symbol, Keyword)):
        return node.name
    if isinstance(node, Literal):
        return str(node.value).lower() if isinstance(node.value, bool) else str(node.value)
    raise FormError(f"expected a name or a string, got {_show(node)}", getattr(node, "span", None))


def _show(node: Node) -> str:
    from ...lang.quoting import datum

    return to_repr(datum(node))


@special_form("call-atomic-task")
def compile_call_atomic_task(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    args = form.args
    if not args:
        raise FormError("call-atomic-task: expected (call-atomic-task name (param expr)...)", form.span)
    name_code = c.compile(args[0], scope)
    named: list[tuple[str, Code]] = []
    rest = list(args[1:])
    while rest:
        item = rest.pop(0)
        if isinstance(item, FunctionCallNode) and len(item.args) == 1:
            named.append((item.name, c.compile(item.args[0], scope)))
        elif isinstance(item, Keyword) and rest:
            named.append((item.name, c.compile(rest.pop(0), scope)))
        else:
            raise FormError("call-atomic-task: arguments are (param expr) or :param expr", form.span)
    system, span = c.tasks, form.span

    def call(env: list[Any]) -> Value:
        name = name_code(env)
        task_name = name.name if isinstance(name, Symbol) else name
        if not isinstance(task_name, str):
            raise TypeError_(f"call-atomic-task: the task name must be a string, got {to_repr(name)}", span)
        if system is None:
            raise FormError("call-atomic-task: tasks are not available here", span)
        task = system.task(task_name)
        if task is None:
            from ...errors import NameError_

            raise NameError_(f"unknown task '{task_name}'{system.library.suggestion(task_name)}", span)
        try:
            return task.call_named({key: code(env) for key, code in named}, span)
        except SexpError as err:
            raise err.at(span)

    return call
