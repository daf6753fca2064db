"""The registry of primitives: procedures written in Python, registered by decorator.

A primitive whose first parameter is named `ctx` receives the runtime's services (output,
workspace, loading files) when the global environment is built; one whose next parameter is
named `depth` calls procedures and receives the caller's call depth at each call. No
primitive keeps state of its own.
"""

from __future__ import annotations

import functools
import inspect
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
        params = list(inspect.signature(fn).parameters.values())
        needs_context = bool(params) and params[0].name == "ctx"
        if needs_context:
            params = params[1:]
        higher_order = bool(params) and params[0].name == "depth"
        if higher_order:
            params = params[1:]
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        required = sum(1 for p in positional if p.default is p.empty)
        variadic = any(p.kind is p.VAR_POSITIONAL for p in params)
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


from . import arithmetic, dicts, io, lists, predicates, strings, text  # noqa: E402,F401  (they register)
