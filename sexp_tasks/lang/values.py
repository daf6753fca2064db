"""Runtime values beyond Python's own: procedures, tail calls, and the helpers every stage uses.

Values are plain Python where possible: int, float, str, bool, None (nil), list, dict.
Symbols and keywords are the reader's nodes (code is data).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from ..syntax.nodes import Keyword, Symbol

if TYPE_CHECKING:
    from ..syntax.source import Span

Value = Any
Code = Callable[[list[Any]], Value]  # a compiled expression: frame -> value


class _Unbound:
    """The marker in a frame slot declared by `define` that has not run yet."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<unbound>"


UNBOUND = _Unbound()


# Where the higher-order primitive now running (map, pmap, reduce ...) was called from: the
# position a task it calls is journaled under, since that call has no source position of its own.
CALL_SITE: ContextVar[Span | None] = ContextVar("sexp_call_site", default=None)


class Procedure:
    """Anything a program can call: closures, primitives and (later) tasks."""

    __slots__ = ()
    name: str

    def apply(self, args: list[Value], depth: int) -> Value:
        """Call with already evaluated arguments, from code running at call depth `depth`."""
        raise NotImplementedError

    def apply_at(self, args: list[Value], depth: int, span: Any) -> Value:
        """apply, told where the call is (tasks journal their steps by call site)."""
        return self.apply(args, depth)


class Primitive(Procedure):
    """A procedure written in Python; `fn` takes the arguments positionally.

    `signatures` are its documented forms, `("(reduce f init xs)", "(reduce f xs)")`, which
    its arity (min_args, max_args) comes from.
    """

    __slots__ = ("name", "fn", "min_args", "max_args", "doc", "signatures")

    def __init__(
        self,
        name: str,
        fn: Callable[..., Value],
        min_args: int,
        max_args: int | None,
        doc: str,
        signatures: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self.fn = fn
        self.min_args = min_args
        self.max_args = max_args
        self.doc = doc
        self.signatures = signatures

    def apply(self, args: list[Value], depth: int) -> Value:
        return self.fn(*args)

    def __repr__(self) -> str:
        return f"#<procedure {self.name}>"


class HigherOrderPrimitive(Primitive):
    """A primitive that calls procedures (map, apply...): `fn` takes the caller's depth first."""

    __slots__ = ()

    def apply(self, args: list[Value], depth: int) -> Value:
        return self.fn(depth, *args)


class Closure(Procedure):
    """A lambda with the frame it closed over; `bind` builds its call frame from arguments."""

    __slots__ = ("name", "env", "lambda_list", "body", "span")

    def __init__(
        self, name: str, env: list[Any] | None, lambda_list: Any, body: Code, span: Span | None
    ) -> None:
        self.name = name
        self.env = env
        self.lambda_list = lambda_list
        self.body = body
        self.span = span

    def apply(self, args: list[Value], depth: int) -> Value:
        from .calls import invoke

        return invoke(self, args, depth + 1)

    def __repr__(self) -> str:
        return f"#<procedure {self.name}>"


class NamedProcedure(Procedure):
    """A procedure whose parameters are named inputs (a task). A call may name them with pair
    syntax, `(name (param expr)...)`, and a higher-order primitive passes it only as many
    arguments as it declares (see passed_arguments)."""

    __slots__ = ()

    def accepts_pairs(self, names: list[str]) -> bool:
        """Whether `(name (p expr)...)` with these heads is pair syntax for this procedure."""
        raise NotImplementedError

    def call_named(self, named: dict[str, Value], span: Any = None) -> Value:
        """Call with the arguments given by name, from the call at span."""
        raise NotImplementedError

    def passed(self, args: list[Value]) -> list[Value]:
        """The leading arguments it declares inputs for."""
        raise NotImplementedError


def passed_arguments(fn: Value, args: list[Value]) -> list[Value]:
    """The arguments map, pmap, filter, reduce, for-each and loop phases give fn: a task only as
    many as it declares inputs (none when it declares none; SPEC §10.1), anything else all."""
    if isinstance(fn, NamedProcedure):
        return fn.passed(args)
    return args


class TailCall(tuple[Closure, list[Value], "Span | None"]):
    """What a call in tail position returns, `TailCall((closure, args, span))`; the caller's
    trampoline (calls.run_tail_calls) makes the call. A tuple because one is made per tail call
    and tuple construction runs in C."""

    __slots__ = ()


def type_name(value: Value) -> str:
    """The DSL's name for a value's type, for error messages."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "dict"
    if isinstance(value, Symbol):
        return "symbol"
    if isinstance(value, Keyword):
        return "keyword"
    if isinstance(value, Procedure):
        return "procedure"
    return type(value).__name__


_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"[\ud800-\udfff]|\\u[dD][89a-fA-F]")


def well_formed(value: Any) -> Any:
    """value with every lone surrogate in its strings (keys included) replaced by U+FFFD: JSON text
    (a model's answer, a file) may hold one as an escape, and no UTF-8 output or store can take it
    (SPEC §10.1)."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [well_formed(item) for item in value]
    if isinstance(value, dict):
        return {well_formed(key): well_formed(item) for key, item in value.items()}
    return value


def parse_json_text(text: str, **options: Any) -> Any:
    """json.loads(text, **options), with lone surrogates its escapes make replaced by U+FFFD."""
    value = json.loads(text, **options)
    return well_formed(value) if _SURROGATE_ESCAPE.search(text) else value
