"""Error handling: (try body... (catch err handler...))."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import FormError, SexpError
from ...syntax.nodes import FunctionCallNode, Symbol
from ..environment import Scope
from ..values import UNBOUND, Code, Frame, Value
from . import CORE_FORMS, local_definitions

if TYPE_CHECKING:
    from ..check import Checker
    from ..compiler import Compiler

_USAGE = "try: expected (try body... (catch err handler...))"


def check_try(checker: Checker, form: FunctionCallNode, local: frozenset[str]) -> None:
    """The body, then the handler with the error's name in scope."""
    args = form.args
    if not args:
        return
    checker.walk(args[:-1], local)
    clause = args[-1]
    if isinstance(clause, FunctionCallNode) and clause.args and isinstance(clause.args[0], Symbol):
        checker.walk(clause.args[1:], local | {clause.args[0].name})


@CORE_FORMS.special_form(
    "try",
    check=check_try,
    signature="(try body... (catch err handler...))",
    doc="""body's value; when body raises an error, handler's value with err bound to the error.

    err is a dict with "type", "message", "line" and "column" (and "details" from `error`, and
    a task error's fields). A FAILED task result is a value, not an error: test it with
    `task-ok?` instead.

    (try (/ 1 0) (catch e (get e "message")))
    ;; => "/: division by zero"
    (try (error "bad input" (dict "field" "age")) (catch e (get-in e (list "details" "field"))))
    ;; => "age"
    """,
)
def compile_try(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    args = form.args
    if not args or not (isinstance(args[-1], FunctionCallNode) and args[-1].name == "catch"):
        raise FormError(_USAGE, form.span)
    clause = args[-1]
    match clause.args:
        case [Symbol() as err_name, *handler_nodes]:
            pass
        case _:
            raise FormError(_USAGE, clause.span)
    # The body is not in tail position: a tail call would leave the try before it ran.
    body = c.compile_body(args[:-1], scope, tail=False)
    inner = Scope(scope, [err_name.name])
    for local in local_definitions(handler_nodes, c.forms):
        inner.declare(local)
    handler = c.compile_body(handler_nodes, inner, tail)
    padding = [UNBOUND] * (inner.size - 1)

    def run(env: Frame) -> Value:
        try:
            return body(env)
        except SexpError as err:
            return handler([env, env[1], err.to_value(), *padding])

    return run


@CORE_FORMS.special_form(
    "catch",
    scope=True,
    signature="(catch err handler...)",
    doc="""The last clause of `try`: binds the error to err and evaluates handler.

    It has no meaning on its own: anywhere else it is an error.

    (try (error "oops") (catch err (get err "type")))
    ;; => "USER_ERROR"
    """,
)
def compile_catch(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    raise FormError(
        "catch: only allowed as the last clause of (try body... (catch err handler...))", form.span
    )
