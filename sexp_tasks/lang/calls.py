"""Calling procedures: closures, the trampoline that runs their tail calls in constant stack, and `apply`.

Closures run through `invoke`; a call in tail position returns a TailCall instead, which the
enclosing call runs in its loop. Primitives are called directly, higher-order primitives get
the caller's depth first, and anything else that is a Procedure (a task, say) goes through its
`apply_at`. Call sites themselves are generated in callsite.py.

Depth: every frame records how deeply nested in non-tail calls its code runs (frame[1]), so a
callee runs at its caller's depth + 1 and a tail callee at its caller's own depth.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, final

from ..errors import ArityError, RecursionDepthError, SexpError, Span, TypeError_, ValueError_
from .printer import to_repr
from .values import CALL_SITE, Frame, HigherOrderPrimitive, Primitive, Procedure, Value, type_name

if TYPE_CHECKING:
    from .lambda_list import LambdaList

# A closure's compiled body: like Code, but its calls in tail position give TailCalls.
Body = Callable[[Frame], "Value | TailCall"]


class Closure(Procedure):
    """A lambda with the frame it closed over; its lambda list builds its call frame from arguments."""

    __slots__ = ("name", "env", "lambda_list", "body", "span")

    def __init__(
        self, name: str, env: Frame | None, lambda_list: LambdaList, body: Body, span: Span | None
    ) -> None:
        self.name = name
        self.env = env
        self.lambda_list = lambda_list
        self.body = body
        self.span = span

    def apply(self, args: list[Value], depth: int) -> Value:
        return invoke(self, args, depth + 1)

    def __repr__(self) -> str:
        return f"#<procedure {self.name}>"


@final
class TailCall(tuple[Closure, list[Value], "Span | None"]):
    """What a call in tail position returns, `TailCall((closure, args, span))`; the caller's
    trampoline (run_tail_calls) makes the call. A tuple because one is made per tail call and
    tuple construction runs in C."""

    __slots__ = ()


def invoke(closure: Closure, args: list[Value], depth: int) -> Value:
    """Run a closure at call depth `depth` to completion, following its tail calls."""
    lambda_list = closure.lambda_list
    if depth > lambda_list.limit:
        raise too_deep(closure, None)
    if len(args) == lambda_list.count:  # all parameters required: the frame is the arguments
        frame = [closure.env, depth, *args, *lambda_list.padding]
    else:
        frame = lambda_list.bind(closure, args, depth)
    result = closure.body(frame)
    if type(result) is TailCall:
        return run_tail_calls(result, depth)
    return result


def run_tail_calls(call: TailCall, depth: int) -> Value:
    """The trampoline: make tail calls one after another, all at the depth of the first."""
    while True:
        closure, args, span = call
        lambda_list = closure.lambda_list
        if len(args) == lambda_list.count:
            frame = [closure.env, depth, *args, *lambda_list.padding]
        else:
            try:
                frame = lambda_list.bind(closure, args, depth)
            except SexpError as err:
                raise err.at(span)
        result = closure.body(frame)
        if type(result) is not TailCall:
            return result
        call = result


def too_deep(closure: Closure, span: Span | None) -> RecursionDepthError:
    """The error for non-tail recursion past the configured limit, naming the procedure."""
    limit = closure.lambda_list.limit
    return RecursionDepthError(
        f"recursion too deep in '{closure.name}': more than {limit} nested calls"
        " (only tail calls run in constant space; raise recursion_limit in sexp.toml if needed)",
        span,
    )


def nested_too_deeply(span: Span | None) -> RecursionDepthError:
    """The error for code nested (or recursing) so deeply that Python's stack ran out at span."""
    return RecursionDepthError("nesting too deep to evaluate", span)


def apply_procedure(fn: Value, args: list[Value], depth: int, span: Span | None = None) -> Value:
    """Call any procedure with evaluated arguments from code running at `depth`."""
    if type(fn) is Closure:
        try:
            return invoke(fn, args, depth + 1)
        except SexpError as err:
            raise err.at(span)
    return apply_other(fn, args, span, depth)


def apply_other(fn: Value, args: list[Value], span: Span | None, depth: int) -> Value:
    """Call a primitive or another kind of procedure; anything else is a type error."""
    if isinstance(fn, Primitive):
        try:
            if type(fn) is HigherOrderPrimitive:
                site = CALL_SITE.set(span)
                try:
                    return fn.fn(depth, *args)
                finally:
                    CALL_SITE.reset(site)
            return fn.fn(*args)
        except SexpError as err:
            raise err.at(span)
        except Exception as exc:  # the user's error, when the program caused it (primitive_failure)
            raise primitive_failure(fn, args, exc, span) from exc
    if isinstance(fn, Procedure):
        try:
            return fn.apply_at(args, depth, span)
        except SexpError as err:
            raise err.at(span)
    if fn is None:
        raise TypeError_("nil is not a procedure", span)
    kind = type_name(fn)
    article = "an" if kind[0] in "aeiou" else "a"
    raise TypeError_(f"{to_repr(fn)} is not a procedure (it is {article} {kind})", span)


def primitive_failure(fn: Primitive, args: list[Value], exc: Exception, span: Span | None) -> SexpError:
    """The language error for a Python exception out of a primitive, or the exception itself again.

    A primitive reports the program's mistakes (a wrong type, a value out of range) as
    SexpErrors itself. What reaches here is a wrong argument count (the Python call refused it),
    data nested too deeply, or arithmetic Python cannot carry out (a float overflow, an int too
    large for a float): those are the program's too. Anything else is a bug in the primitive,
    re-raised as it is, so that it shows as an internal error and never as the user's.
    """
    n = len(args)
    if n < fn.min_args or (fn.max_args is not None and n > fn.max_args):
        return ArityError(f"{fn.name}: {expected_count(fn.min_args, fn.max_args)}, got {n}", span)
    if isinstance(exc, RecursionError):
        return RecursionDepthError(f"{fn.name}: data nested too deeply", span)
    if isinstance(exc, ZeroDivisionError):
        return ValueError_(f"{fn.name}: division by zero", span)
    if isinstance(exc, ArithmeticError):
        return ValueError_(f"{fn.name}: {exc}", span)
    if isinstance(exc, MemoryError):
        return ValueError_(f"{fn.name}: not enough memory for the result", span)
    raise exc


def expected_count(low: int, high: int | None) -> str:
    """'expected 2 arguments', 'expected at least 1 argument', 'expected 1 to 2 arguments'."""

    def plural(n: int) -> str:
        return f"{n} argument" + ("" if n == 1 else "s")

    if high is None:
        return f"expected at least {plural(low)}"
    if low == high:
        return f"expected {plural(low)}"
    return f"expected {low} to {plural(high)}"
