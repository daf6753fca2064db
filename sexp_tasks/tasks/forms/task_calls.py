"""Task forms: (defatom name clauses...) and (call-atomic-task name-expr args...)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import FormError, NameError_, SexpError, TypeError_
from ...lang.environment import Scope
from ...lang.forms import walk_nothing
from ...lang.forms.binding import store
from ...lang.printer import to_repr
from ...lang.values import Code, Value
from ...syntax.nodes import FunctionCallNode, Keyword, Symbol
from ..runner import TaskSystem
from . import TASK_FORMS
from .checks import check_call_atomic_task
from .defatom import NAME as DEFATOM
from .defatom import USAGE, defatom_template

if TYPE_CHECKING:
    from ...lang.compiler import Compiler


# A defatom's clauses are data (checked when it compiles); what it binds is a task, whose arity
# is unknown before the run.
@TASK_FORMS.special_form(
    DEFATOM,
    check=walk_nothing,
    defines=True,
    signature=(
        '(defatom name (params p (p type)...) (instructions "...") [(description "...")] [(system "...")]'
        ' [(model "...")] [(subtype s)] [(output_format (type "json") (schema "object")'
        ' (json_schema "{...}") (native "auto") (retries 0) (strict "true"))]'
        " [(context (setting value)...)] [(tools name...)] [(generation (key value)...)])"
    ),
    doc="""Define an atomic task inline: a template, checked as an XML one is, bound to name.

    The clauses may come in any order; only `instructions` is required. `params` declares the
    inputs, each a name or `(name type)` (string, integer, number, boolean, array, object or
    any); every `{{name}}` in the instructions must be one. `description` defaults to
    "Dynamically defined task: <name>". The task is called like a procedure, `(name "x")`, or by
    input name, `(name :p "x")`; a call returns a TaskResult. The value of defatom is the name.

    `output_format` takes what a template's `<output_format>` does: `type` ("text" or "json"),
    `schema` (object, array, string[] ...) or `json_schema` (a JSON Schema as a string), `native`
    ("auto", "always" or "never": whether the JSON Schema is sent as the request's
    `response_format`; auto asks litellm whether the model takes it) and `retries` (how many
    times an answer that fails the format is sent back with its violations; default 0) and
    `strict` ("true" or "false": whether `response_format` carries `"strict": true`; by default
    it does when the schema can be strict).
    `generation` takes the settings of `<generation>`: `(generation (temperature 0.2))`.

    (defatom greet (params (who string)) (instructions "Say hello to {{who}}.") (model "mock/demo"))
    ;; => greet
    (task-inputs greet)
    ;; => ("who")
    (task-ok? (greet :who "Ada"))
    ;; => true
    """,
)
def compile_defatom(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    args = form.args
    if not args or not isinstance(args[0], Symbol):
        raise FormError(USAGE, form.span)
    name = args[0].name
    try:
        template = defatom_template(form)
    except SexpError as err:
        failure = err.at(form.span)

        def fail(env: list[Any]) -> Value:
            # a bad template is reported when the defatom runs, so try can catch it; each time with
            # this raise's traceback alone, not those of every run before (the code may be kept)
            raise failure.with_traceback(None)

        return fail
    system = c.extension(TaskSystem)
    if system is None:
        raise FormError("defatom: tasks are not available here", form.span)

    def define_task(env: list[Any]) -> Value:
        return system.define(template)

    return store(name, define_task, scope, c, result=args[0])


@TASK_FORMS.special_form(
    "call-atomic-task",
    check=check_call_atomic_task,
    signature=("(call-atomic-task name (param expr)...)", "(call-atomic-task name :param expr...)"),
    doc="""Call the task named by name's value (a string or symbol) with the inputs given.

    The way to call a task whose name is computed; `(call-atomic-task "t" (x 1))` is `(t (x
    1))`. Besides the declared inputs it takes the reserved parameters `model`, `files`,
    `context`, `tools`, `subtype` and `history_config`. An unknown task name is an error naming
    close ones.

    (defatom shout (params text) (instructions "Repeat {{text}} loudly.") (model "mock/demo"))
    (get-field (call-atomic-task (string-append "sh" "out") :text "hi") "status")
    ;; => "COMPLETE"
    """,
)
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
    system, span = c.extension(TaskSystem), form.span

    def call(env: list[Any]) -> Value:
        name = name_code(env)
        task_name = name.name if isinstance(name, Symbol) else name
        if not isinstance(task_name, str):
            raise TypeError_(f"call-atomic-task: the task name must be a string, got {to_repr(name)}", span)
        if system is None:
            raise FormError("call-atomic-task: tasks are not available here", span)
        task = system.task(task_name)
        if task is None:
            raise NameError_(f"unknown task '{task_name}'{system.library.suggestion(task_name)}", span)
        try:
            return task.call_named({key: code(env) for key, code in named}, span)
        except SexpError as err:
            raise err.at(span)

    return call
