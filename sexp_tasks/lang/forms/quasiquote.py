"""Quasiquote: a template with unquote (,x) and unquote-splicing (,@xs)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeGuard

from ...errors import FormError, TypeError_
from ...syntax.nodes import DictNode, FunctionCallNode, ListNode, Node, Symbol
from ..codegen import constant
from ..printer import to_repr
from ..quoting import datum, dict_key
from ..values import Code, Frame, Value
from . import CORE_FORMS, walk_nothing

if TYPE_CHECKING:
    from ..compiler import Compiler
    from ..environment import Scope


@CORE_FORMS.special_form(
    "quasiquote",
    check=walk_nothing,
    scope=True,
    signature="(quasiquote template)",
    doc="""template as data, except its `unquote`d parts, which are evaluated.

    `` `x `` is read as `(quasiquote x)`, `,e` as `(unquote e)` and `,@e` as `(unquote-splicing
    e)`, whose list's elements are spliced in.

    (define n 3)
    `(n is ,n and ,@(list 1 2))
    ;; => (n is 3 and 1 2)
    """,
)
def compile_quasiquote(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    match form.args:
        case [template]:
            return _template(template, 1, scope, c)
    raise FormError("quasiquote: expected (quasiquote x)", form.span)


@CORE_FORMS.special_form(
    "unquote",
    signature="(unquote expr)",
    doc="""Inside a quasiquote, expr's value in place of the form (written `,expr`).

    Outside a quasiquote it is an error.

    `(1 ,(+ 1 1) 3)
    ;; => (1 2 3)
    """,
)
@CORE_FORMS.special_form(
    "unquote-splicing",
    signature="(unquote-splicing expr)",
    doc="""Inside a quasiquote, the elements of expr's list spliced in place (written `,@expr`).

    Outside a quasiquote it is an error.

    `(0 ,@(range 1 4) 4)
    ;; => (0 1 2 3 4)
    """,
)
def compile_stray_unquote(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    raise FormError(f"{form.name}: only allowed inside a quasiquote (`)", form.span)


def _is(node: Node, name: str) -> TypeGuard[FunctionCallNode]:
    return isinstance(node, FunctionCallNode) and node.name == name and len(node.arguments) == 1


def _template(node: Node, depth: int, scope: Scope | None, c: Compiler) -> Code:
    """Code building the value of a template at quasiquote nesting `depth`."""
    if _is(node, "unquote"):
        inner = node.args[0]
        if depth == 1:
            return c.compile(inner, scope)
        return _wrap("unquote", _template(inner, depth - 1, scope, c))
    if _is(node, "quasiquote"):
        return _wrap("quasiquote", _template(node.args[0], depth + 1, scope, c))
    if isinstance(node, (FunctionCallNode, ListNode)):
        items = (node.head, *node.args) if isinstance(node, FunctionCallNode) else node.items
        return _list_template(list(items), depth, scope, c)
    if isinstance(node, DictNode):
        keys = [datum(node.items[i]) for i in range(0, len(node.items), 2)]
        values = [_template(node.items[i], depth, scope, c) for i in range(1, len(node.items), 2)]
        return lambda env: {dict_key(k): v(env) for k, v in zip(keys, values)}
    return constant(datum(node))


def _wrap(name: str, inner: Code) -> Code:
    head = Symbol(name)
    return lambda env: [head, inner(env)]


def _list_template(items: list[Node], depth: int, scope: Scope | None, c: Compiler) -> Code:
    parts: list[tuple[bool, Code, Node]] = []
    for item in items:
        if depth == 1 and _is(item, "unquote-splicing"):
            parts.append((True, c.compile(item.args[0], scope), item))
        elif _is(item, "unquote-splicing"):
            inner = _template(item.args[0], depth - 1, scope, c)
            parts.append((False, _wrap("unquote-splicing", inner), item))
        else:
            parts.append((False, _template(item, depth, scope, c), item))

    def build(env: Frame) -> Value:
        result: list[Value] = []
        for splice, code, item in parts:
            value = code(env)
            if not splice:
                result.append(value)
            elif isinstance(value, list):
                result.extend(value)
            elif value is not None:
                raise TypeError_(f"unquote-splicing: expected a list, got {to_repr(value)}", item.span)
        return result

    return build
