"""Where the running code is in a run, and the program order that follows from it.

One RunContext, in one context variable, travels with every call and into pmap's workers: the
pmap element the code runs in, the journal step it belongs to, the subtasks around it, the
operator whose context defaults a task called now gets and the innermost sequential's context
frame (§3.5). What changes one of them runs its body `within(replace(run_context(), ...))`.

pmap runs each element in its Element: its index in a Batch (one pmap call) and the element the
batch itself runs in. The run's journal keys steps by the element path (`[3]`, nested `[3][0]`,
SPEC §6); ProgramOrder numbers occurrences of a key by it, so that what is handed out in order
(scripted mock replies, SPEC §10.1) reaches the same element on every run, however the threads
are timed.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Protocol


@dataclass(eq=False)
class Batch:
    """One pmap call: how many elements it has, and the element it runs in (None: top level)."""

    size: int
    parent: Element | None

    def element(self, index: int) -> Element:
        """Element `index` of this batch."""
        return Element(self, index)


@dataclass(eq=False)
class Element:
    """One element of a pmap call; compared by identity."""

    batch: Batch
    index: int
    path: str = field(init=False)

    def __post_init__(self) -> None:
        outer = self.batch.parent
        self.path = f"{outer.path if outer is not None else ''}[{self.index}]"


class Frame(Protocol):
    """A sequential's context as the tasks inside it see it (tasks/context.py's ContextFrame)."""

    def text(self) -> str:
        """Everything a step inheriting fully sees."""
        ...

    def pieces(self) -> list[str]:
        """The same, piece by piece: what the sequential inherited, then each step's."""
        ...


@dataclass(frozen=True)
class RunContext:
    """Where the code running now is in the run."""

    element: Element | None = None  # the pmap element it runs in (None: outside pmap)
    step: str | None = None  # the journal key of the step running it: the parent of steps it makes
    subtasks: tuple[str, ...] = ()  # the requests (fingerprints) of the subtasks around it, outermost first
    operator: str = "atomic"  # whose context defaults a task called now gets (§3.5)
    frame: Frame | None = None  # the innermost enclosing sequential's context (§3.5)


TOP_LEVEL = RunContext()  # outside any element, step, subtask or sequential
RUN_CONTEXT: ContextVar[RunContext] = ContextVar("sexp_run_context", default=TOP_LEVEL)


def run_context() -> RunContext:
    """Where the code running now is in the run."""
    return RUN_CONTEXT.get()


@contextmanager
def within(context: RunContext) -> Iterator[RunContext]:
    """Run the block in context (a `replace` of run_context()), then in the one before again."""
    token = RUN_CONTEXT.set(context)
    try:
        yield context
    finally:
        RUN_CONTEXT.reset(token)


def operator_defaults(operator: str) -> AbstractContextManager[RunContext]:
    """Tasks called inside get operator's context defaults (§3.5: reduce, a loop's phases)."""
    return within(replace(RUN_CONTEXT.get(), operator=operator))


def element_path() -> str:
    """The path of the pmap element running now (`[3]`, nested `[3][0]`), or '' outside pmap."""
    element = RUN_CONTEXT.get().element
    return element.path if element is not None else ""


class ProgramOrder:
    """Numbers the occurrences of each key from 0 in program order, whatever the threads' timing.

    At the top level (and in one element) occurrences are numbered as they happen. Inside pmap,
    the k-th occurrence (from 0) in element i of a batch of n takes number b + k*n + i of the
    scope the batch runs in, b being the number that scope had reached when the batch began:
    every element's first occurrence in element order, then every element's second, and so on.
    A scope goes on after a batch past the highest number the batch took."""

    def __init__(self) -> None:
        self._next: dict[tuple[Element | None, Hashable], int] = {}  # a scope's next free number
        self._bases: dict[tuple[Batch, Hashable], int] = {}  # b of a batch, fixed on first use
        self._lock = threading.Lock()

    def take(self, key: Hashable) -> int:
        """The number of this occurrence of key, in the element running now."""
        element = RUN_CONTEXT.get().element
        with self._lock:
            return self._place(element, key, self._next.get((element, key), 0))

    def _place(self, element: Element | None, key: Hashable, number: int) -> int:
        """Mark number taken in element's scope; the number it stands for at the top level."""
        while True:
            scope = (element, key)
            self._next[scope] = max(self._next.get(scope, 0), number + 1)
            if element is None:
                return number
            batch = element.batch
            base = self._bases.get((batch, key))
            if base is None:
                base = self._bases[(batch, key)] = self._next.get((batch.parent, key), 0)
            number = base + number * batch.size + element.index
            element = batch.parent
