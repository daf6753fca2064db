"""Binding forms: let, let*, define, bind, set!."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import FormError, NameError_
from ...syntax.nodes import FunctionCallNode, ListNode, Node, Symbol, elements, make_list
from ..codegen import frame_at
from ..environment import Scope
from ..lambda_list import ParsedParams, parse_params
from ..values import UNBOUND, Code, Frame, Value
from . import CORE_FORMS, local_definitions, walk_after_name
from .functions import compile_closure, is_lambda

if TYPE_CHECKING:
    from ..check import Checker
    from ..compiler import Compiler


def _bindings(form: FunctionCallNode) -> tuple[list[tuple[str, Node]], tuple[Node, ...]]:
    """Split (let ((name expr)...) body...) into its bindings and body."""
    usage = f"{form.name}: expected ({form.name} ((name expr)...) body...)"
    args = form.args
    if not args:
        raise FormError(usage, form.span)
    items = elements(args[0])
    if items is None:
        raise FormError(usage, form.span)
    pairs: list[tuple[str, Node]] = []
    for item in items:
        if not (isinstance(item, FunctionCallNode) and len(item.arguments) == 1):
            raise FormError(
                f"{form.name}: each binding must be (name expr)", getattr(item, "span", None) or form.span
            )
        pairs.append((item.head.name, item.arguments[0].value))
    return pairs, args[1:]


def check_let(checker: Checker, form: FunctionCallNode, local: frozenset[str]) -> None:
    """The bindings' expressions in the outer scope, the body with the bound names."""
    args = form.args
    if not args:
        return
    bindings = elements(args[0]) or ()
    names = [b.head.name for b in bindings if isinstance(b, FunctionCallNode)]
    for binding in bindings:
        if isinstance(binding, FunctionCallNode):
            checker.walk(binding.args, local)
    body = args[1:]
    checker.walk(body, local | set(names) | set(local_definitions(body, checker.forms)))


@CORE_FORMS.special_form(
    "let",
    check=check_let,
    scope=True,
    signature="(let ((name expr)...) body...)",
    doc="""Bind each name to its expr, then evaluate body with them; the last body value.

    The exprs are all evaluated in the outer scope, before any name is bound (use `let*` for
    bindings that see the earlier ones). The names are local to body.

    (let ((x 2) (y 3)) (* x y))
    ;; => 6
    (define x 1)
    (let ((x 10) (y x)) y)
    ;; => 1
    """,
)
def compile_let(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    pairs, body = _bindings(form)
    names = [name for name, _ in pairs]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate:
        raise FormError(f"let: '{duplicate}' is bound twice", form.span)
    inits = [c.compile(expr, scope) for _, expr in pairs]
    inner = Scope(scope, names)
    for local in local_definitions(body, c.forms):
        inner.declare(local)
    body_code = c.compile_body(body, inner, tail)
    padding = [UNBOUND] * (inner.size - len(names))

    def run(env: Frame) -> Value:
        frame = [env, env[1]]
        for init in inits:
            frame.append(init(env))
        if padding:
            frame.extend(padding)
        return body_code(frame)

    return run


@CORE_FORMS.special_form(
    "let*",
    check=check_let,
    scope=True,
    signature="(let* ((name expr)...) body...)",
    doc="""Bind the names one after the other, each expr seeing the names before it; then body.

    (let* ((x 2) (y (* x 10))) (+ x y))
    ;; => 22
    """,
)
def compile_let_star(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    pairs, body = _bindings(form)
    inner = Scope(scope)
    steps: list[tuple[int, Code]] = []
    for name, expr in pairs:
        code = c.compile(expr, inner)  # sees the names bound so far, and the outer scope
        steps.append((inner.declare(name, maybe_unbound=False), code))
    for local in local_definitions(body, c.forms):
        inner.declare(local)
    body_code = c.compile_body(body, inner, tail)

    def run(env: Frame) -> Value:
        frame: Frame = [env, env[1]] + [UNBOUND] * inner.size
        for slot, code in steps:
            frame[slot] = code(frame)
        return body_code(frame)

    return run


def check_define(checker: Checker, form: FunctionCallNode, local: frozenset[str]) -> None:
    """(define (name params...) body...) as a lambda; else the expression after the name."""
    args = form.args
    if args and isinstance(args[0], FunctionCallNode):
        checker.function(ListNode(args[0].args, args[0].span), args[1:], local, "define")
    else:
        checker.walk(args[1:], local)


def defined_parameters(form: FunctionCallNode) -> ParsedParams | None:
    """The parameters of the procedure (define (name params...) ...) or (define name (lambda ...))
    binds; None when it binds another value."""
    target, rest = form.args[0], form.args[1:]
    if isinstance(target, FunctionCallNode):
        return parse_params(ListNode(target.args, target.span), "define", form.span)
    value = rest[0] if rest else None
    if isinstance(target, Symbol) and isinstance(value, FunctionCallNode) and is_lambda(value) and value.args:
        return parse_params(value.args[0], value.name, value.span)
    return None


@CORE_FORMS.special_form(
    "define",
    check=check_define,
    defines=True,
    parameters=defined_parameters,
    signature=("(define name expr)", "(define (name params...) body...)"),
    doc="""Bind name in the current frame: to expr's value, or to a procedure.

    At top level the binding is global; inside a body it is local to that body. `(define name
    expr)` gives the value; `(define (name params...) body...)` defines a procedure (params as
    in `lambda`: `&optional`, `&rest`, `&key`) and gives its name as a symbol. A string the body
    starts with, before other forms, is the procedure's docstring (a task offering the procedure
    as a tool describes it with that, or else with the `;;` lines right after the define line).

    (define (square x) (* x x))
    ;; => square
    (square 7)
    ;; => 49
    (define limit 10)
    ;; => 10
    """,
)
@CORE_FORMS.special_form(
    "bind",
    check=walk_after_name,
    defines=True,
    parameters=defined_parameters,
    signature="(bind name expr)",
    doc="""Bind name to expr's value in the current frame, as `(define name expr)`; the value.

    The original dialect's way of binding: `(bind x (+ x 1))` inside a loop rebinds x.

    (let ((x 0)) (loop 3 (bind x (+ x 1))) x)
    ;; => 3
    """,
)
def compile_define(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    args = form.args
    match args:
        case [Symbol() as target, expr]:
            value_code = (
                compile_closure(c, expr.name, target.name, expr.args[0], expr.args[1:], scope, expr.span)
                if is_lambda(expr) and len(expr.args) >= 1
                else c.compile(expr, scope)
            )
            return store(target.name, value_code, scope, c, result=None)
        case [FunctionCallNode() as signature, *body] if form.name == "define":
            name = signature.head.name
            params_node = make_list(tuple(signature.args), signature.span)
            closure_code = compile_closure(c, "define", name, params_node, body, scope, form.span)
            return store(name, closure_code, scope, c, result=signature.head)
    if form.name == "define":
        raise FormError("define: expected (define name expr) or (define (name params...) body...)", form.span)
    raise FormError("bind: expected (bind name expr)", form.span)


def store(name: str, value_code: Code, scope: Scope | None, c: Compiler, result: Symbol | None) -> Code:
    """Bind name in the current frame (global at top level); give the value, or `result` if set."""
    if scope is None:
        table = c.globals.values

        def store_global(env: Frame) -> Value:
            value = value_code(env)
            table[name] = value
            return value if result is None else result

        return store_global
    slot = scope.declare(name)

    def store_local(env: Frame) -> Value:
        value = value_code(env)
        env[slot] = value
        return value if result is None else result

    return store_local


@CORE_FORMS.special_form(
    "set!",
    check=walk_after_name,
    signature="(set! name expr)",
    doc="""Assign expr's value to the nearest existing binding of name; the value.

    Unlike `define`, it never makes a new binding: a name bound nowhere is an error. A closure
    that sets a variable it closed over changes it for everyone who shares it.

    (define count 0)
    (define (tick) (set! count (+ count 1)))
    (tick)
    (tick)
    ;; => 2
    """,
)
def compile_set(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    match form.args:
        case [Symbol() as target, expr]:
            pass
        case _:
            raise FormError("set!: expected (set! name expr)", form.span)
    name, span = target.name, form.span
    value_code = c.compile(expr, scope)
    found = scope.resolve(name) if scope is not None else None
    if found is not None:
        depth, slot, _ = found

        def set_local(env: Frame) -> Value:
            value = value_code(env)
            frame_at(env, depth)[slot] = value
            return value

        return set_local
    table = c.globals.values
    globals_ = c.globals
    dynamic = c.dynamic_variables.get(name)

    def set_global(env: Frame) -> Value:
        value = value_code(env)
        if dynamic is not None and dynamic.rebind(value):  # its binding in force, not the global table
            return value
        if name not in table:
            raise NameError_(f"set!: '{name}' is not bound{globals_.suggestion(name, scope)}", span)
        table[name] = value
        return value

    return set_global
