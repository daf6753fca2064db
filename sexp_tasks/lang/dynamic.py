"""Dynamically bound variables (SPEC §2.7's `*loop-config*`): a binding made for the extent of a form
and seen by every procedure called within it, wherever that procedure was defined.

A binding lives in a context variable, not in the global table, so it belongs to the thread that
made it and to the pmap elements that thread starts (each runs in a copy of its context): two loops
running at once under pmap each see their own. Outside any binding the name reads the global table
as any other name does.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

from .values import UNBOUND, Unbound, Value  # UNBOUND: what one holds outside every binding

# name -> its binding; the compiler reads these names here rather than in the global table
DYNAMIC_VARIABLES: dict[str, contextvars.ContextVar[Value | Unbound]] = {}


def dynamic_variable(name: str) -> str:
    """Register name as dynamically bound; gives the name back, for the module that binds it."""
    DYNAMIC_VARIABLES.setdefault(name, contextvars.ContextVar(f"sexp_dynamic_{name}", default=UNBOUND))
    return name


@contextmanager
def bound(name: str, value: Value) -> Iterator[None]:
    """name bound to value in this context for the duration; the previous binding (or none) after."""
    variable = DYNAMIC_VARIABLES[name]
    token = variable.set(value)
    try:
        yield
    finally:
        variable.reset(token)


def binding(name: str) -> Value | Unbound:
    """name's value in this context, or UNBOUND outside every binding (or when not dynamic)."""
    variable = DYNAMIC_VARIABLES.get(name)
    return UNBOUND if variable is None else variable.get()


def rebind(name: str, value: Value) -> bool:
    """`set!` of a dynamic variable: change the innermost binding; False when none is in force."""
    variable = DYNAMIC_VARIABLES.get(name)
    if variable is None or variable.get() is UNBOUND:
        return False
    variable.set(value)  # undone with the binding, when the form that made it ends
    return True
