"""The registry of primitives: procedures written in Python, registered by decorator.

A primitive whose first parameter is named `ctx` receives the runtime's services (output,
workspace, loading files) when the global environment is built; one whose next parameter is
named `depth` calls procedures and receives the caller's call depth at each call. No
primitive keeps state of its own.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..environment import GlobalEnvironment
from ..values import HigherOrderPrimitive, Primitive


@dataclass(frozen=True)
class PrimitiveSpec:
    """A registered primitive before it is bound to a runtime."""

    name: str
    fn: Callable[..., Any]
    min_args: int
    max_args: int | None
    needs_context: bool
    higher_order: bool
    doc: str


PRIMITIVES: dict[str, PrimitiveSpec] = {}


def primitive(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register fn under each name; its arity is read from its Python signature."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        # Read from the code object rather than inspect.signature: importing inspect costs
        # more start-up time than everything else the registry does.
        code = fn.__code__
        params = list(code.co_varnames[: code.co_argcount])
        defaults = len(fn.__defaults__ or ())
        needs_context = bool(params) and params[0] == "ctx"
        higher_order = len(params) > needs_context and params[int(needs_context)] == "depth"
        positional = params[int(needs_context) + int(higher_order) :]
        required = len(positional) - defaults
        variadic = bool(code.co_flags & 0x04)  # CO_VARARGS
        doc = (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else ""
        for name in names:
            PRIMITIVES[name] = PrimitiveSpec(
                name, fn, required, None if variadic else len(positional), needs_context, higher_order, doc
            )
        return fn

    return register


def install_primitives(globals_: GlobalEnvironment, ctx: Any) -> None:
    """Bind every registered primitive in globals_, giving context-needing ones ctx."""
    for spec in PRIMITIVES.values():
        fn = functools.partial(spec.fn, ctx) if spec.needs_context else spec.fn
        kind = HigherOrderPrimitive if spec.higher_order else Primitive
        globals_.define(spec.name, kind(spec.name, fn, spec.min_args, spec.max_args, spec.doc))


from . import (  # noqa: E402,F401  (they register)
    arithmetic,
    concurrency,
    dicts,
    io,
    lists,
    loop_support,
    memory,
    predicates,
    strings,
    tasks,
    text,
)
