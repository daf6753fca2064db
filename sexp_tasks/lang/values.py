"""Runtime values: what programs compute with, the procedures they call, and helpers every stage uses.

Values are plain Python where possible: int, float, str, bool, None (nil), list, dict (string
keys). Symbols and keywords are the reader's nodes (code is data). Procedures are Procedure
objects: primitives here, closures beside the trampoline that runs them (calls.py), tasks in the
task system. A part of the system installed in the language (the task system) adds values of its
own, such as a task's result: they are ExtensionValues.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from contextvars import ContextVar
from enum import Enum
from typing import Any, Protocol, TypeAlias

from ..errors import Span
from ..syntax.nodes import Keyword, Symbol


class Unbound(Enum):
    """The marker in a frame slot declared by `define` that has not run yet, and the value of a
    dynamic variable outside every binding. An enum so that `x is UNBOUND` narrows types."""

    UNBOUND = "unbound"

    def __repr__(self) -> str:
        return "<unbound>"


UNBOUND = Unbound.UNBOUND


# Where the higher-order primitive now running (map, pmap, reduce ...) was called from: the
# position a task it calls is journaled under, since that call has no source position of its own.
CALL_SITE: ContextVar[Span | None] = ContextVar("sexp_call_site", default=None)


class ExtensionValue(Protocol):
    """A value another part of the system adds to the language (the task system's TaskResult):
    what the core asks of it, for printing, JSON and get-field."""

    def to_sexp(self) -> str:
        """The printer's form."""
        ...

    def to_json(self) -> object:
        """Its JSON data."""
        ...

    def get_field(self, name: str) -> Value:
        """The field `(get-field x name)` reads; nil when it has none."""
        ...


class Procedure:
    """Anything a program can call: closures, primitives and tasks.

    Programs call procedures through calls.apply_procedure, which runs closures and primitives
    itself and any other kind of procedure (a task) through its `apply_at`.
    """

    __slots__ = ()
    name: str

    def apply(self, args: list[Value], depth: int) -> Value:
        """Call with already evaluated arguments, from code running at call depth `depth`."""
        raise NotImplementedError

    def apply_at(self, args: list[Value], depth: int, span: Span | None) -> Value:
        """apply, told where the call is (tasks journal their steps by call site)."""
        return self.apply(args, depth)


# Everything a program can compute with. Dict keys are always strings (quoting.dict_key).
Value: TypeAlias = (
    None
    | bool
    | int
    | float
    | str
    | Symbol
    | Keyword
    | list["Value"]
    | dict[str, "Value"]
    | Procedure
    | ExtensionValue
)
# A local frame at run time (environment.py): the enclosing frame (None at the top), the call
# depth, then the values of the frame's names, UNBOUND until `define` has run.
Frame = list[Any]
# A compiled expression: frame -> value. Code compiled in tail position may give a
# calls.TailCall instead, seen only by the trampoline of the closure it is the body of (calls.Body).
Code = Callable[[Frame], Value]


class Primitive(Procedure):
    """A procedure written in Python; `fn` takes the arguments positionally.

    `signatures` are its documented forms, `("(reduce f init xs)", "(reduce f xs)")`, which
    its arity (min_args, max_args) comes from; `doc` is its summary line, `docstring` the whole
    of its documentation (lang/documentation.py reads it).
    """

    __slots__ = ("name", "fn", "min_args", "max_args", "doc", "signatures", "docstring")

    def __init__(
        self,
        name: str,
        fn: Callable[..., Value],
        min_args: int,
        max_args: int | None,
        doc: str,
        signatures: tuple[str, ...] = (),
        docstring: str = "",
    ) -> None:
        self.name = name
        self.fn = fn
        self.min_args = min_args
        self.max_args = max_args
        self.doc = doc
        self.signatures = signatures
        self.docstring = docstring or doc

    def apply(self, args: list[Value], depth: int) -> Value:
        return self.fn(*args)

    def __repr__(self) -> str:
        return f"#<procedure {self.name}>"


class HigherOrderPrimitive(Primitive):
    """A primitive that calls procedures (map, apply...): `fn` takes the caller's depth first."""

    __slots__ = ()

    def apply(self, args: list[Value], depth: int) -> Value:
        return self.fn(depth, *args)


class NamedProcedure(Procedure):
    """A procedure whose parameters are named inputs (a task). A call may name them with pair
    syntax, `(name (param expr)...)`, and a higher-order primitive passes it only as many
    arguments as it declares (see passed_arguments)."""

    __slots__ = ()

    def accepts_pairs(self, names: list[str]) -> bool:
        """Whether `(name (p expr)...)` with these heads is pair syntax for this procedure."""
        raise NotImplementedError

    def call_named(self, named: dict[str, Value], span: Span | None = None) -> Value:
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
