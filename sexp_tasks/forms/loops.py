"""Loops: (loop count body...) and (while test body...)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import FormError, TypeError_
from ..nodes import FunctionCallNode
from ..printer import to_repr
from ..values import Code, Value
from . import special_form

if TYPE_CHECKING:
    from ..compiler import Compiler
    from ..environment import Scope


@special_form("loop")
def compile_loop(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    args = form.args
    if not args:
        raise FormError("loop: expected (loop count body...)", form.span)
    count_code = c.compile(args[0], scope)
    body = c.compile_body(args[1:], scope, tail=False)
    span = form.span

    def run(env: list[Any]) -> Value:
        count = count_code(env)
        if type(count) is not int or count < 0:
            raise TypeError_(f"loop: count must be a non-negative integer, got {to_repr(count)}", span)
        result = None
        for _ in range(count):
            result = body(env)
        return result

    return run


@special_form("while")
def compile_while(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    args = form.args
    if not args:
        raise FormError("while: expected (while test body...)", form.span)
    test = c.compile(args[0], scope)
    body = c.compile_body(args[1:], scope, tail=False)

    def run(env: list[Any]) -> Value:
        result = None
        while test(env):
            result = body(env)
        return result

    return run
