"""Dynamically bound variables (SPEC §2.7's `*loop-config*`): a binding made for the extent of a form
and seen by every procedure called within it, wherever that procedure was defined.

A binding lives in a context variable, not in the global table, so it belongs to the thread that
made it and to the pmap elements that thread starts (each runs in a copy of its context): two loops
running at once under pmap each see their own. Outside any binding the name reads the global table
as any other name does.

A variable is dynamic only in the compilers it is installed in (Compiler.add_dynamic_variable), as
a special form is: the task system installs `*loop-config*` in the runtime's, so a plain
Interpreter reads that name as any other, whatever else the process has imported.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

from .values import UNBOUND, Unbound, Value  # UNBOUND: what one holds outside every binding


class DynamicVariable:
    """One dynamically bound name, and the context variable holding its binding."""

    __slots__ = ("name", "_binding")

    def __init__(self, name: str) -> None:
        self.name = name
        self._binding: contextvars.ContextVar[Value | Unbound] = contextvars.ContextVar(
            f"sexp_dynamic_{name}", default=UNBOUND
        )

    @contextmanager
    def bound(self, value: Value) -> Iterator[None]:
        """Bound to value in this context for the duration; the previous binding (or none) after."""
        token = self._binding.set(value)
        try:
            yield
        finally:
            self._binding.reset(token)

    def binding(self) -> Value | Unbound:
        """The value in this context, or UNBOUND outside every binding."""
        return self._binding.get()

    def rebind(self, value: Value) -> bool:
        """`set!` of the variable: change the innermost binding; False when none is in force."""
        if self._binding.get() is UNBOUND:
            return False
        self._binding.set(value)  # undone with the binding, when the form that made it ends
        return True

    def __repr__(self) -> str:
        return f"DynamicVariable({self.name!r})"
