"""Loops: (loop count body...) and (while test body...)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import FormError, TypeError_
from ...syntax.nodes import FunctionCallNode, ListNode, Node
from ..printer import to_repr
from ..values import Code, Frame, Value
from . import CORE_FORMS

if TYPE_CHECKING:
    from ..compiler import Compiler
    from ..environment import Scope


@CORE_FORMS.special_form(
    "loop",
    signature="(loop count body...)",
    doc="""Evaluate body count times in the current scope; the last value, nil for 0 times.

    count must be a non-negative integer. To loop over a list use `map` or `for-each`; to loop
    while a condition holds, `while`.

    (define total 0)
    (loop 4 (set! total (+ total 5)))
    ;; => 20
    """,
)
def compile_loop(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    args = form.args
    if not args:
        raise FormError("loop: expected (loop count body...)", form.span)
    if _bindings(args[0], scope, c):
        raise FormError(
            "loop: expected (loop count body...): a count, not bindings"
            " (to loop over a variable, use while inside let)",
            args[0].span,
        )
    count_code = c.compile(args[0], scope)
    body = c.compile_body(args[1:], scope, tail=False)
    span = form.span

    def run(env: Frame) -> Value:
        count = count_code(env)
        if type(count) is not int or count < 0:
            raise TypeError_(f"loop: count must be a non-negative integer, got {to_repr(count)}", span)
        result = None
        for _ in range(count):
            result = body(env)
        return result

    return run


def _bindings(count: Node, scope: Scope | None, c: Compiler) -> bool:
    """Whether a count is written as bindings, `((i 0))`, as other Lisps' loops take: a list of
    one-argument calls of names bound nowhere."""
    if not isinstance(count, ListNode) or not count.items:
        return False
    known = c.globals.values.keys() | c.globals.pending.keys() | c.forms.keys()
    return all(
        isinstance(item, FunctionCallNode)
        and len(item.arguments) == 1
        and item.name not in known
        and (scope is None or scope.resolve(item.name) is None)
        for item in count.items
    )


@CORE_FORMS.special_form(
    "while",
    signature="(while test body...)",
    doc="""Evaluate body again and again while test is true; the last body value (nil if none ran).

    (define n 1)
    (while (< n 100) (set! n (* n 2)))
    ;; => 128
    """,
)
def compile_while(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    args = form.args
    if not args:
        raise FormError("while: expected (while test body...)", form.span)
    test = c.compile(args[0], scope)
    body = c.compile_body(args[1:], scope, tail=False)

    def run(env: Frame) -> Value:
        result = None
        while test(env):
            result = body(env)
        return result

    return run
