"""Control forms: quote, if, cond, when, unless, and, or, progn/begin."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import FormError
from ...syntax.nodes import FunctionCallNode, ListNode, Symbol, elements
from ..codegen import constant
from ..quoting import datum
from ..values import Code, Frame, Value
from . import CORE_FORMS, walk_nothing

if TYPE_CHECKING:
    from ..check import Checker
    from ..compiler import Compiler
    from ..environment import Scope


@CORE_FORMS.special_form("quote", check=walk_nothing, scope=True)
def compile_quote(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    match form.args:
        case [expr]:
            return constant(datum(expr))
    raise FormError("quote: expected (quote x)", form.span)


@CORE_FORMS.special_form("if")
def compile_if(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    match form.args:
        case [test, then]:
            return c.compile_if(test, then, None, scope, tail, form.span)
        case [test, then, otherwise]:
            return c.compile_if(test, then, otherwise, scope, tail, form.span)
    raise FormError("if: expected (if test then [else])", form.span)


@CORE_FORMS.special_form("when", "unless")
def compile_when(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    args = form.args
    if not args:
        raise FormError(f"{form.name}: expected ({form.name} test body...)", form.span)
    test = c.compile(args[0], scope)
    body = c.compile_body(args[1:], scope, tail)
    if form.name == "when":
        return lambda env: body(env) if test(env) else None
    return lambda env: None if test(env) else body(env)


def check_cond(checker: Checker, form: FunctionCallNode, local: frozenset[str]) -> None:
    """Each clause's test and body (an else clause's body)."""
    for clause in form.args:
        parts = elements(clause) or ()
        keep = parts[1:] if parts and isinstance(parts[0], Symbol) and parts[0].name == "else" else parts
        checker.walk(keep, local)


@CORE_FORMS.special_form("cond", check=check_cond)
def compile_cond(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    clauses: list[tuple[Code, Code | None]] = []
    arguments = form.args
    for index, clause in enumerate(arguments):
        parts = elements(clause)
        if not parts or (isinstance(clause, ListNode) and not clause.items):
            raise FormError(
                "cond: each clause must be (test expr...) or (else expr...)", clause.span or form.span
            )
        head, body = parts[0], parts[1:]
        if isinstance(head, Symbol) and head.name == "else":
            if index != len(arguments) - 1:
                raise FormError("cond: else must be the last clause", clause.span or form.span)
            clauses.append((constant(True), c.compile_body(body, scope, tail)))
        else:
            test = c.compile(head, scope)
            clauses.append((test, c.compile_body(body, scope, tail) if body else None))

    def run(env: Frame) -> Value:
        for test, body in clauses:
            value = test(env)
            if value:
                return value if body is None else body(env)
        return None

    return run


@CORE_FORMS.special_form("and", "or")
def compile_and_or(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    """Short-circuit: `and` stops at the first false value, `or` at the first true one."""
    args = form.args
    stops_when = form.name == "or"  # the truthiness that decides the answer
    if not args:
        return constant(not stops_when)  # (and) is true, (or) is false
    codes = [c.compile(a, scope, tail and i == len(args) - 1) for i, a in enumerate(args)]
    first, last = codes[:-1], codes[-1]

    def run(env: Frame) -> Value:
        for code in first:
            value = code(env)
            if bool(value) is stops_when:
                return value
        return last(env)

    return run


@CORE_FORMS.special_form("progn", "begin")
def compile_progn(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    return c.compile_body(form.args, scope, tail)
