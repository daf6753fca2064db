"""lambda and fn: closures with lexical scope."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeGuard

from ...errors import FormError, Span
from ...syntax.nodes import FunctionCallNode, Literal, Node
from ..calls import Closure
from ..environment import Scope
from ..lambda_list import LambdaList, parse_params
from ..values import Code, Frame, Value
from . import CORE_FORMS, local_definitions

if TYPE_CHECKING:
    from ..check import Checker
    from ..compiler import Compiler


def check_lambda(checker: Checker, form: FunctionCallNode, local: frozenset[str]) -> None:
    """Defaults and body with the parameters in scope."""
    args = form.args
    if args:
        checker.function(args[0], args[1:], local, form.name)


# The names of the form that makes a closure (is_lambda reads them too).
LAMBDA = ("lambda", "fn")


@CORE_FORMS.special_form(
    *LAMBDA,
    check=check_lambda,
    scope=True,
    signature="(lambda (params...) body...)",
    doc="""A procedure (closure) of params whose body sees the variables around it.

    params: required names, then `&optional` names or `(name default)`, then `&rest name` (a
    list of the remaining arguments), then `&key` names or `(name default)` (passed as `:name
    value`); a default may use earlier parameters, a missing one is nil. A call with another
    number of arguments is an error. `fn` is the same form. Calls in tail position do not grow
    the stack.

    ((lambda (x &optional (y 10)) (+ x y)) 1)
    ;; => 11
    (define adder (lambda (n) (lambda (x) (+ n x))))
    ((adder 10) 5)
    ;; => 15
    ((lambda (&rest xs &key (sep "-")) sep) :sep "+")
    ;; => "+"
    """,
)
def compile_lambda_form(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    args = form.args
    if not args:
        raise FormError(f"{form.name}: expected ({form.name} (params...) body...)", form.span)
    return compile_closure(c, form.name, "lambda", args[0], args[1:], scope, form.span)


def compile_closure(
    c: Compiler,
    form_name: str,
    name: str,
    params_node: Node,
    body: Sequence[Node],
    scope: Scope | None,
    span: Span | None,
) -> Code:
    """Compile a lambda: its parameters get a new frame, its body runs in tail position."""
    params = parse_params(params_node, form_name, span)
    inner = Scope(scope, params.names)
    lambda_list = LambdaList(name, params, c.recursion_limit)
    if len(body) > 1 and isinstance(body[0], Literal) and isinstance(body[0].value, str):
        lambda_list.doc = body[0].value  # a docstring (still evaluated, harmlessly)
    for param_name, default in [*params.optional, *params.keys]:
        if default is not None:
            lambda_list.defaults[param_name] = c.compile(default, inner)
    for local in local_definitions(body, c.forms):
        inner.declare(local)
    body_code = c.compile_body(body, inner, tail=True)
    lambda_list.finish(inner.size)

    def make_closure(env: Frame) -> Value:
        return Closure(name, env, lambda_list, body_code, span)

    return make_closure


def is_lambda(node: Node) -> TypeGuard[FunctionCallNode]:
    """Whether node is a (lambda ...) or (fn ...) form.

    By name, and honestly so: define and bind use it to name a closure and to learn its arity
    for `sexp check` (SpecialForm.parameters, which sees the node alone, not a compiler's table),
    and these names are the core's own form in every interpreter, since an installed registry
    cannot take a name the core has (Compiler.add_forms)."""
    return isinstance(node, FunctionCallNode) and node.name in LAMBDA
