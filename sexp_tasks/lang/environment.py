"""Environments: the global one (a dict) and the compile-time scopes that address local frames.

A local frame at run time is a Python list: slot 0 holds the enclosing frame, slot 1 how deep
in non-tail calls the code running in it is (so recursion depth travels with the frames and
needs no shared counter), and slots 2.. hold the values of the names its Scope lists. The
compiler resolves every local name to (depth, slot) once, so running code never searches by name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..errors import FormError, NameError_, Span
from ..syntax.nodes import Node
from .operator_calls import OperatorCalls
from .suggest import did_you_mean
from .values import Value

FIRST_SLOT = 2  # frame[0] is the enclosing frame, frame[1] the call depth
TOP_FRAME: list[object] = [None, 0]  # the frame top-level code runs in

# A resolver gives a value for a global name that no definition binds (e.g. a task template).
Resolver = Callable[[str], Value | None]


class GlobalEnvironment:
    """Primitives, the prelude, and every top-level definition, by name."""

    def __init__(self) -> None:
        self.values: dict[str, Value] = {}
        self.resolvers: list[Resolver] = []
        self.name_sources: list[Callable[[], Iterable[str]]] = []  # names resolvers could give
        self.pending: dict[str, Node] = {}  # library definitions not compiled yet (prelude.py)
        self.reserved: Iterable[str] = ()  # special-form names, for suggestions
        self.operator_calls = OperatorCalls()  # what reduce's calls run inside (the task system's hook)

    def define(self, name: str, value: Value) -> None:
        """Bind name globally."""
        self.values[name] = value

    def saved(self) -> tuple[dict[str, Value], dict[str, Node]]:
        """The bindings now (and the library definitions not compiled yet), for `restore`."""
        return dict(self.values), dict(self.pending)

    def restore(self, saved: tuple[dict[str, Value], dict[str, Node]]) -> None:
        """Bind exactly what was bound when saved was taken: what was defined since is forgotten,
        what was redefined is bound again. In place: compiled code holds these very tables."""
        values, pending = saved
        self.values.clear()
        self.values.update(values)
        self.pending.clear()
        self.pending.update(pending)

    def missing(self, name: str, span: Span | None, scope: Scope | None) -> Value:
        """The value of a name no definition binds: a resolver's, else a NameError with suggestions
        (a FormError for a special form's name: it has no value to give)."""
        for resolve in self.resolvers:
            found = resolve(name)
            if found is not None:
                return found
        if name in self.reserved:
            raise FormError(
                f"'{name}' is a special form, not a value; it can only begin a form, as in ({name} ...)", span
            )
        raise NameError_(f"unbound symbol '{name}'{self.suggestion(name, scope)}", span)

    def suggestion(self, name: str, scope: Scope | None) -> str:
        """'; did you mean ...?' naming close names in scope, or ''."""
        candidates = set(self.values) | set(self.reserved)
        for names in self.name_sources:
            candidates.update(names())
        while scope is not None:
            candidates.update(scope.slots)
            scope = scope.parent
        return did_you_mean(name, candidates)


class Scope:
    """The compile-time picture of one local frame: which name lives in which slot."""

    __slots__ = ("parent", "slots", "maybe_unbound")

    def __init__(self, parent: Scope | None, names: Iterable[str] = ()) -> None:
        self.parent = parent
        self.slots: dict[str, int] = {}
        self.maybe_unbound: set[str] = set()
        for name in names:
            self.slots.setdefault(name, len(self.slots) + FIRST_SLOT)

    @property
    def size(self) -> int:
        """How many named slots a frame for this scope needs (after the link and the depth)."""
        return len(self.slots)

    def declare(self, name: str, maybe_unbound: bool = True) -> int:
        """Give name a slot in this frame (if it has none) and return the slot."""
        if name not in self.slots:
            self.slots[name] = len(self.slots) + FIRST_SLOT
            if maybe_unbound:
                self.maybe_unbound.add(name)
        return self.slots[name]

    def resolve(self, name: str) -> tuple[int, int, bool] | None:
        """(depth, slot, may be unbound) for a local name, or None when it is global."""
        scope: Scope | None = self
        depth = 0
        while scope is not None:
            slot = scope.slots.get(name)
            if slot is not None:
                return depth, slot, name in scope.maybe_unbound
            scope = scope.parent
            depth += 1
        return None
