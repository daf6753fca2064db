"""Running the interpreter where deep recursion is safe.

Closures call closures through ordinary Python calls, so a program nested 10,000 calls deep
needs far more than Python's default recursion limit, and library code that recurses in C
(deep equality, JSON of deep data) needs more than the main thread's 8 MiB of C stack.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

STACK_BYTES = 512 * 1024 * 1024
PYTHON_FRAMES_PER_CALL = 12


def allow_recursion(call_limit: int) -> None:
    """Raise Python's recursion limit so `call_limit` nested DSL calls fit (never lower it)."""
    needed = call_limit * PYTHON_FRAMES_PER_CALL + 20_000
    if sys.getrecursionlimit() < needed:
        sys.setrecursionlimit(needed)


def run_with_deep_stack(fn: Callable[[], T]) -> T:
    """Run fn in a thread with a large C stack; re-raise what it raises, here."""
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["value"] = fn()
        except BaseException as exc:  # handed to the calling thread, which reports it
            outcome["error"] = exc

    previous = threading.stack_size(STACK_BYTES)
    try:
        worker = threading.Thread(target=target, name="sexp-main", daemon=True)
        worker.start()
    finally:
        threading.stack_size(previous)
    while worker.is_alive():
        worker.join(0.05)  # a timed join lets Ctrl-C reach this thread
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]
