"""Calling procedures: the trampoline that makes tail calls run in constant stack, and the
specialised call sites the compiler emits.

A call site evaluates the operator first, then the operands, then dispatches on the
procedure's type: closures run through `invoke` (or, in tail position, are returned as a
TailCall for the enclosing `invoke` to run), primitives are called directly, and anything
else that is a Procedure (a task, say) through its `apply`.
"""

from __future__ import annotations

import threading

from .errors import RecursionDepthError, SexpError, TypeError_, ValueError_
from .printer import to_repr
from .source import Span
from .values import Closure, Code, Primitive, Procedure, TailCall, Value, type_name


class CallDepth(threading.local):
    """How deep non-tail calls are nested in this thread, and how deep they may go."""

    def __init__(self, limit: int) -> None:
        # threading.local runs __init__ again, with the same limit, in every thread that uses it.
        self.depth = 0
        self.limit = limit


def invoke(closure: Closure, args: list[Value]) -> Value:
    """Run a closure to completion, following tail calls without growing the Python stack."""
    calls: CallDepth = closure.lambda_list.calls
    depth = calls.depth + 1
    if depth > calls.limit:
        raise RecursionDepthError(
            f"recursion too deep in '{closure.name}': more than {calls.limit} nested calls"
            " (only tail calls run in constant space; raise recursion_limit in sexp.toml if needed)"
        )
    calls.depth = depth
    span: Span | None = None
    try:
        while True:
            try:
                frame = closure.lambda_list.bind(closure, args)
            except SexpError as err:
                raise err.at(span)
            result = closure.body(frame)
            if type(result) is not TailCall:
                return result
            closure, args, span = result.closure, result.args, result.span
    finally:
        calls.depth = depth - 1


def apply_procedure(fn: Value, args: list[Value], span: Span | None = None) -> Value:
    """Call any procedure with evaluated arguments (used by map, apply, sort...)."""
    if type(fn) is Closure:
        try:
            return invoke(fn, args)
        except SexpError as err:
            raise err.at(span)
    return apply_other(fn, args, span)


def apply_other(fn: Value, args: list[Value], span: Span | None) -> Value:
    """Call a primitive or another kind of procedure; anything else is a type error."""
    if type(fn) is Primitive:
        try:
            return fn.fn(*args)
        except SexpError as err:
            raise err.at(span)
        except Exception as exc:  # a primitive's Python failure becomes the user's error
            raise primitive_failure(fn, args, exc, span) from exc
    if isinstance(fn, Procedure):
        try:
            return fn.apply(args)
        except SexpError as err:
            raise err.at(span)
    raise TypeError_(f"{to_repr(fn)} is not a procedure (it is a {type_name(fn)})", span)


def primitive_failure(fn: Primitive, args: list[Value], exc: Exception, span: Span | None) -> SexpError:
    """Explain why a primitive failed: wrong argument count, else the Python error in its words."""
    n = len(args)
    if n < fn.min_args or (fn.max_args is not None and n > fn.max_args):
        from .errors import ArityError

        return ArityError(f"{fn.name}: {expected_count(fn.min_args, fn.max_args)}, got {n}", span)
    if isinstance(exc, RecursionError):
        return RecursionDepthError(f"{fn.name}: data nested too deeply", span)
    if isinstance(exc, TypeError):
        kinds = ", ".join(type_name(a) for a in args)
        return TypeError_(f"{fn.name}: cannot be applied to ({kinds})", span)
    if isinstance(exc, ZeroDivisionError):
        return ValueError_(f"{fn.name}: division by zero", span)
    return ValueError_(f"{fn.name}: {exc}", span)


def expected_count(low: int, high: int | None) -> str:
    """'expected 2 arguments', 'expected at least 1 argument', 'expected 1 to 2 arguments'."""

    def plural(n: int) -> str:
        return f"{n} argument" + ("" if n == 1 else "s")

    if high is None:
        return f"expected at least {plural(low)}"
    if low == high:
        return f"expected {plural(low)}"
    return f"expected {low} to {plural(high)}"


def make_call(fcode: Code, argcodes: list[Code], span: Span | None, tail: bool) -> Code:
    """Compile a call site; specialised by argument count because calls are the hot path."""
    n = len(argcodes)
    if n == 0:
        return _call0(fcode, span, tail)
    if n == 1:
        return _call1(fcode, argcodes[0], span, tail)
    if n == 2:
        return _call2(fcode, argcodes[0], argcodes[1], span, tail)
    if n == 3:
        return _call3(fcode, argcodes[0], argcodes[1], argcodes[2], span, tail)
    return _calln(fcode, argcodes, span, tail)


def _call0(f: Code, span: Span | None, tail: bool) -> Code:
    def call(env: list[Value]) -> Value:
        fn = f(env)
        if type(fn) is Closure:
            if tail:
                return TailCall(fn, [], span)
            try:
                return invoke(fn, [])
            except SexpError as err:
                raise err.at(span)
        if type(fn) is Primitive:
            try:
                return fn.fn()
            except SexpError as err:
                raise err.at(span)
            except Exception as exc:
                raise primitive_failure(fn, [], exc, span) from exc
        return apply_other(fn, [], span)

    return call


def _call1(f: Code, a: Code, span: Span | None, tail: bool) -> Code:
    def call(env: list[Value]) -> Value:
        fn = f(env)
        x = a(env)
        if type(fn) is Closure:
            if tail:
                return TailCall(fn, [x], span)
            try:
                return invoke(fn, [x])
            except SexpError as err:
                raise err.at(span)
        if type(fn) is Primitive:
            try:
                return fn.fn(x)
            except SexpError as err:
                raise err.at(span)
            except Exception as exc:
                raise primitive_failure(fn, [x], exc, span) from exc
        return apply_other(fn, [x], span)

    return call


def _call2(f: Code, a: Code, b: Code, span: Span | None, tail: bool) -> Code:
    def call(env: list[Value]) -> Value:
        fn = f(env)
        x = a(env)
        y = b(env)
        if type(fn) is Closure:
            if tail:
                return TailCall(fn, [x, y], span)
            try:
                return invoke(fn, [x, y])
            except SexpError as err:
                raise err.at(span)
        if type(fn) is Primitive:
            try:
                return fn.fn(x, y)
            except SexpError as err:
                raise err.at(span)
            except Exception as exc:
                raise primitive_failure(fn, [x, y], exc, span) from exc
        return apply_other(fn, [x, y], span)

    return call


def _call3(f: Code, a: Code, b: Code, c: Code, span: Span | None, tail: bool) -> Code:
    def call(env: list[Value]) -> Value:
        fn = f(env)
        x = a(env)
        y = b(env)
        z = c(env)
        if type(fn) is Closure:
            if tail:
                return TailCall(fn, [x, y, z], span)
            try:
                return invoke(fn, [x, y, z])
            except SexpError as err:
                raise err.at(span)
        return apply_other(fn, [x, y, z], span)

    return call


def _calln(f: Code, argcodes: list[Code], span: Span | None, tail: bool) -> Code:
    def call(env: list[Value]) -> Value:
        fn = f(env)
        args = [a(env) for a in argcodes]
        if type(fn) is Closure:
            if tail:
                return TailCall(fn, args, span)
            try:
                return invoke(fn, args)
            except SexpError as err:
                raise err.at(span)
        return apply_other(fn, args, span)

    return call
