"""Running the interpreter where deep recursion is safe.

Closures call closures through ordinary Python calls, so a program nested 10,000 calls deep
needs far more than Python's default recursion limit, and library code that recurses in C
(deep equality, JSON of deep data) needs more than the main thread's 8 MiB of C stack.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TypeVar, cast

T = TypeVar("T")

DEFAULT_RECURSION_LIMIT = 10_000  # nested calls a program may make (sexp.toml's recursion_limit)
STACK_BYTES = 512 * 1024 * 1024
PYTHON_FRAMES_PER_CALL = 12


# Python's recursion limit is the whole process's: raised for good, it would let a host program's
# own deep json.dumps or repr (on an 8 MiB main-thread stack) overflow the C stack and crash. So it
# is raised only while one of sexp's deep-stack threads runs, and put back when the last one ends.
_limit_lock = threading.Lock()
_wanted_limit = 0  # the highest limit an interpreter of this process asked for
_deep_threads = 0  # how many deep sections are running now
_host_limit = 0  # the limit before the first of them began, put back after the last


def allow_recursion(call_limit: int) -> None:
    """Let `call_limit` nested DSL calls fit in deep sections (deep_recursion); the limit is raised
    at once only when one runs (never lowered here)."""
    global _wanted_limit
    needed = call_limit * PYTHON_FRAMES_PER_CALL + 20_000
    with _limit_lock:
        _wanted_limit = max(_wanted_limit, needed)
        if _deep_threads and sys.getrecursionlimit() < needed:
            sys.setrecursionlimit(needed)


@contextmanager
def deep_recursion() -> Iterator[None]:
    """Python's recursion limit raised to what the interpreters ask for while the block runs (in
    a thread with a deep C stack); the host's limit back once no such block runs."""
    global _deep_threads, _host_limit
    with _limit_lock:
        if _deep_threads == 0:
            _host_limit = sys.getrecursionlimit()
        _deep_threads += 1
        if sys.getrecursionlimit() < _wanted_limit:
            sys.setrecursionlimit(_wanted_limit)
    try:
        yield
    finally:
        with _limit_lock:
            _deep_threads -= 1
            if _deep_threads == 0:
                sys.setrecursionlimit(_host_limit)


# An interrupt must not be raised in a thread while it starts another. In CPython 3.11 a new thread's
# state carries its starter's ident until the new thread first runs, and PyThreadState_SetAsyncExc
# picks the newest state holding an ident: the KeyboardInterrupt meant for the starter lands in
# the new thread and kills it before its first line (seen as a litellm import that never ended,
# its thread started by a call being cancelled). So threads are started, and interrupts raised,
# under one lock.
_starting = threading.Lock()


def start_thread(thread: threading.Thread) -> threading.Thread:
    """thread started, with no interrupt raised in the process meanwhile (see _starting): any
    thread started from one that may be interrupted is started through here."""
    with _starting:
        thread.start()  # returns once the thread runs, its state carrying its own ident
    return thread


# Marks the threads start_deep_thread starts (on_deep_stack): a thread-local, so that it is read in
# the thread itself, whatever its name.
_marks = threading.local()


def start_deep_thread(target: Callable[[], None], name: str) -> threading.Thread:
    """A daemon thread running target with a large C stack (STACK_BYTES), started; in it,
    on_deep_stack() is True."""

    def marked() -> None:
        _marks.deep = True
        target()

    previous = threading.stack_size(STACK_BYTES)
    try:
        thread = start_thread(threading.Thread(target=marked, name=name, daemon=True))
    finally:
        threading.stack_size(previous)
    return thread


def on_deep_stack() -> bool:
    """Whether this thread was started by start_deep_thread (it has a large C stack)."""
    return bool(getattr(_marks, "deep", False))


def run_with_deep_stack(fn: Callable[[], T], interrupt_grace: float = 2.0) -> T:
    """Run fn in a thread with a large C stack; re-raise what it raises, here.

    On Ctrl-C, fn's thread is interrupted too and waited for at most interrupt_grace seconds.
    """
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            with deep_recursion():
                outcome["value"] = fn()
        except BaseException as exc:  # handed to the calling thread, which reports it
            outcome["error"] = exc

    worker = start_deep_thread(target, "sexp-main")
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


# What wakes a thread blocked in C (a socket's read, a wait for a model's answer) when an interrupt
# is raised in it: by thread ident, set while the thread waits (wakeable). Read and changed under
# _starting, so that a waker is never called once its wait has ended.
_wakers: dict[int, Callable[[], None]] = {}


class _Wakeable:
    """wakeable's context manager (a class: entered for every model answer awaited)."""

    __slots__ = ("_wake", "_ident", "_before")

    def __init__(self, wake: Callable[[], None]) -> None:
        self._wake = wake

    def __enter__(self) -> None:
        self._ident = threading.get_ident()
        with _starting:
            self._before = _wakers.get(self._ident)
            _wakers[self._ident] = self._wake

    def __exit__(self, *exc: object) -> None:
        with _starting:
            if self._before is None:
                _wakers.pop(self._ident, None)
            else:
                _wakers[self._ident] = self._before


def wakeable(wake: Callable[[], None]) -> AbstractContextManager[None]:
    """While the block runs, an interrupt raised in this thread (raise_interrupt_in) also calls
    wake: a thread blocked in C sees the interrupt only when the call returns, and wake makes it
    return at once (http_pool shuts down the socket it reads). Once the block has ended, wake is
    never called; it must not raise."""
    return _Wakeable(wake)


def raise_interrupt_in(thread: threading.Thread) -> None:
    """Raise KeyboardInterrupt in thread, as Ctrl-C does in the main thread: it sees it at its
    next Python instruction, and a wait it registered as wakeable is woken (a wait on a script
    wakes every 0.1 s to let it, SPEC §10.1). Not
    guarded by is_alive(): that can be False for a thread still running (see _interrupt); but a
    thread that has ended is skipped, as its ident may already be another thread's (an OS thread
    id is reused at once), which would get the interrupt instead: threading.enumerate() lists a
    thread until its very end, and the thread object, not the ident, is compared. Nor is it
    raised while a thread is being started (start_thread)."""
    import ctypes  # lazy: ~1.5 ms of start-up, and only an interrupted run needs it

    with _starting:
        if thread.ident is not None and any(running is thread for running in threading.enumerate()):
            ident, interrupt = ctypes.c_ulong(thread.ident), ctypes.py_object(KeyboardInterrupt)
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ident, interrupt)
            wake = _wakers.get(thread.ident)
            if wake is not None:
                wake()
