"""Where a call runs among pmap's elements, and the program order that follows from it.

pmap runs each element with CURRENT_ELEMENT set to its Element: its index in a Batch (one pmap
call) and the element the batch itself runs in. The run's journal keys steps by the element
path (`[3]`, nested `[3][0]`, SPEC §6); ProgramOrder numbers occurrences of a key by it, so that
what is handed out in order (scripted mock replies, SPEC §10.1) reaches the same element on
every run, however the threads are timed.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from contextvars import ContextVar
from dataclasses import dataclass, field


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


CURRENT_ELEMENT: ContextVar[Element | None] = ContextVar("sexp_element", default=None)


def element_path() -> str:
    """The path of the pmap element running now (`[3]`, nested `[3][0]`), or '' outside pmap."""
    element = CURRENT_ELEMENT.get()
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
        element = CURRENT_ELEMENT.get()
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
