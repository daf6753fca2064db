"""(system:run_script (command "...") [(args ...)] [(timeout n)] [(cwd "dir")] [(input "...")]
[(env (dict ...))] [(shell true)]), also written with :keywords (SPEC §2.8).

A special form because `(command "x")` names a parameter, not a call: only the expression in
each pair is evaluated. Shapes are checked when the form compiles; value types when it runs,
as positioned errors a program can catch with try. Running is process.script_runner.run_script's.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from ...config import Settings
from ...errors import FormError, Span, TypeError_, ValueError_
from ...handler.tracing import NO_TRACER
from ...lang.forms import walk_all_clauses
from ...lang.printer import to_repr
from ...lang.suggest import did_you_mean
from ...lang.values import Code, Value
from ...process.script_runner import ScriptRequest, run_script
from ...results import ScriptResult, TaskResult
from ...runs.journal import fingerprint
from ...syntax.nodes import FunctionCallNode, Keyword, Node
from ..runner import TaskSystem
from . import TASK_FORMS

if TYPE_CHECKING:
    from ...lang.compiler import Compiler
    from ...lang.environment import Scope

NAME = "system:run_script"
PARAMETERS = ("command", "args", "timeout", "cwd", "input", "env", "shell")
USAGE = f'({NAME} (command "...") [(args (list ...))] [(timeout s)] [(cwd "dir")] [(input "...")] ...)'


@TASK_FORMS.special_form(
    NAME,
    check=walk_all_clauses,
    signature=(
        '(system:run_script (command "cmd") [(args (list ...))] [(timeout s)] [(cwd "dir")]'
        ' [(input "text")] [(env (dict ...))] [(shell true)])'
    ),
    doc="""Run a command and give its result: content and `stdout`, `stderr` and `exitCode` fields.

    A string command is split as a shell would split it but not run through a shell, unless
    `(shell true)`; `args` adds arguments, `input` is its standard input, `cwd` a directory in
    the workspace, `env` variables added to a scrubbed environment (no API keys). A non-zero
    exit is still COMPLETE: the program decides. A timeout (default 60 s, `script_timeout`)
    kills its process group and gives a FAILED result with the partial output. Parameters may
    also be written `:command "cmd"`.

    (get-field (system:run_script (command "echo hello")) "stdout")
    ;; => "hello\\n"
    (get-field (system:run_script (command "false")) "exitCode")
    ;; => 1
    """,
)
def compile_run_script(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    codes = {name: c.compile(node, scope) for name, node in _parameters(form).items()}
    system = c.extension(TaskSystem)
    settings = system.settings if system is not None else Settings()
    span = form.span

    def run(env: list[Any]) -> Value:
        request = _request({name: code(env) for name, code in codes.items()}, span)

        def perform() -> ScriptResult:
            return run_script(request, Path(os.path.realpath(settings.workspace)), settings)

        journal = system.journal if system is not None else None
        tracer = system.tracer if system is not None else NO_TRACER
        result: TaskResult
        with tracer.script(request.shown()) as traced:
            if journal is None:
                result = perform()
            else:
                result = journal.record(
                    "script", request.shown(), span, fingerprint(request.to_record()), perform
                )
            traced.finished(result)
        return result

    return run


def _parameters(form: FunctionCallNode) -> dict[str, Node]:
    """Parameter name -> expression, from (name expr) pairs and :name expr keywords."""
    found: dict[str, Node] = {}
    rest = list(form.args)
    while rest:
        item = rest.pop(0)
        if isinstance(item, Keyword) and rest:
            name, node, at = item.name, rest.pop(0), item.span
        elif isinstance(item, FunctionCallNode) and item.name in PARAMETERS:
            if len(item.args) != 1:
                raise FormError(f"{NAME}: ({item.name} ...) takes one expression", item.span)
            name, node, at = item.name, item.args[0], item.span
        elif isinstance(item, FunctionCallNode) and len(item.args) == 1:
            name, node, at = item.name, item.args[0], item.span
        elif isinstance(item, Keyword):
            raise FormError(f"{NAME}: :{item.name} needs a value after it", item.span or form.span)
        else:
            raise FormError(f"{NAME}: expected (parameter expr) or :parameter expr; {USAGE}", _at(item, form))
        if name not in PARAMETERS:
            raise FormError(
                f"{NAME}: unknown parameter '{name}'{did_you_mean(name, PARAMETERS)}"
                f" (parameters: {', '.join(PARAMETERS)})",
                at or form.span,
            )
        if name in found:
            raise FormError(f"{NAME}: parameter '{name}' given twice", at or form.span)
        found[name] = node
    if "command" not in found:
        raise FormError(f"{NAME}: missing (command ...); {USAGE}", form.span)
    return found


def _at(node: Node, form: FunctionCallNode) -> Span | None:
    return getattr(node, "span", None) or form.span


def _request(values: dict[str, Value], span: Span | None) -> ScriptRequest:
    """The evaluated parameters as a ScriptRequest; TypeError_/ValueError_ for wrong values."""
    given = values["command"]
    command: str | tuple[str, ...]
    if isinstance(given, list) and given and all(isinstance(part, str) for part in given):
        command = tuple(part for part in given if isinstance(part, str))  # every part is
    elif isinstance(given, str):
        command = given
    else:
        raise TypeError_(f"{NAME}: command must be a string or a list of strings, got {to_repr(given)}", span)
    request = ScriptRequest(
        command,
        args=_args(values.get("args"), span),
        timeout=_timeout(values.get("timeout"), span),
        cwd=_optional_string("cwd", values.get("cwd"), span),
        input=_optional_string("input", values.get("input"), span),
        env=_env(values.get("env"), span),
        shell=_shell(values.get("shell"), span),
    )
    try:
        argv = request.argv()
    except ValueError as err:  # shlex: "No closing quotation"
        raise ValueError_(f"{NAME}: cannot split the command {command!r}: {err}", span) from None
    if not argv or not argv[0]:
        raise ValueError_(f"{NAME}: the command is empty", span)
    return request


def _args(value: Value, span: Span | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, list) and all(_is_number(v) or isinstance(v, str) for v in value):
        return tuple(v if isinstance(v, str) else to_repr(v) for v in value)
    raise TypeError_(f"{NAME}: args must be a list of strings, got {to_repr(value)}", span)


def _timeout(value: Value, span: Span | None) -> float | None:
    if value is None:
        return None
    if not _is_number(value):
        raise TypeError_(f"{NAME}: timeout must be a number of seconds, got {to_repr(value)}", span)
    if not value > 0:
        raise ValueError_(f"{NAME}: timeout must be positive, got {to_repr(value)}", span)
    return float(value)


def _optional_string(name: str, value: Value, span: Span | None) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise TypeError_(f"{NAME}: {name} must be a string, got {to_repr(value)}", span)


def _env(value: Value, span: Span | None) -> dict[str, str | None]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise TypeError_(f"{NAME}: env must be a dict of names to strings, got {to_repr(value)}", span)
    env: dict[str, str | None] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not key or "=" in key or "\0" in key:
            raise ValueError_(f"{NAME}: env: {to_repr(key)} is not an environment variable name", span)
        if item is not None and not isinstance(item, str) and not _is_number(item):
            raise TypeError_(f"{NAME}: env: the value of {key} must be a string, got {to_repr(item)}", span)
        if isinstance(item, str) and "\0" in item:
            raise ValueError_(f"{NAME}: env: the value of {key} contains a NUL character", span)
        env[key] = item if item is None or isinstance(item, str) else to_repr(item)
    return env


def _shell(value: Value, span: Span | None) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    raise TypeError_(f"{NAME}: shell must be true or false, got {to_repr(value)}", span)


def _is_number(value: Value) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
