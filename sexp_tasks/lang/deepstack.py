"""Running the interpreter where deep recursion is safe.

Closures call closures through ordinary Python calls, so a program nested 10,000 calls deep
needs far more than Python's default recursion limit, and library code that recurses in C
(deep equality, JSON of deep data) needs more than the main thread's 8 MiB of C stack.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TypeVar, cast

T = TypeVar("T")

STACK_BYTES = 512 * 1024 * 1024
PYTHON_FRAMES_PER_CALL = 12


def allow_recursion(call_limit: int) -> None:
    """Raise Python's recursion limit so `call_limit` nested DSL calls fit (never lower it)."""
    needed = call_limit * PYTHON_FRAMES_PER_CALL + 20_000
    if sys.getrecursionlimit() < needed:
        sys.setrecursionlimit(needed)


def run_with_deep_stack(fn: Callable[[], T], interrupt_grace: float = 2.0) -> T:
    """Run fn in a thread with a large C stack; re-raise what it raises, here.

    On Ctrl-C, fn's thread is interrupted too and waited for at most interrupt_grace seconds.
    """
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
    try:
        while worker.is_alive():
            worker.join(0.05)  # a timed join lets Ctrl-C reach this thread
    except KeyboardInterrupt:
        _interrupt(worker, outcome, interrupt_grace)
        raise
    error = outcome.get("error")
    if isinstance(error, BaseException):
        raise error
    return cast(T, outcome["value"])  # what fn returned


def _interrupt(worker: threading.Thread, outcome: dict[str, object], grace: float = 2.0) -> None:
    """Raise KeyboardInterrupt inside worker too, so its cleanup (a run marked interrupted, a
    journal closed) happens; wait a little for it. A thread blocked in C sees it on return.

    The worker's end is read from `outcome`, not is_alive(): a join interrupted by Ctrl-C can
    leave the thread marked stopped while it still runs (CPython 3.11).
    """
    if worker.ident is None:
        return
    raise_interrupt_in(worker)
    deadline = time.monotonic() + grace
    while not outcome and time.monotonic() < deadline:
        time.sleep(0.01)


def raise_interrupt_in(thread: threading.Thread) -> None:
    """Raise KeyboardInterrupt in thread, as Ctrl-C does in the main thread: it sees it at its
    next Python instruction (a wait on a script wakes every 0.1 s to let it, SPEC §10.1). Not
    guarded by is_alive(): that can be False for a thread still running (see _interrupt)."""
    import ctypes  # lazy: ~1.5 ms of start-up, and only an interrupted run needs it

    if thread.ident is not None:
        ident, interrupt = ctypes.c_ulong(thread.ident), ctypes.py_object(KeyboardInterrupt)
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ident, interrupt)
