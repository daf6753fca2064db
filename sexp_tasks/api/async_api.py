"""The async twins of the Python API (SPEC §11.3): `arun`, `Session.aeval`, `Session.acall` and
`abatch`.

Each runs its synchronous twin on a thread of its own, with a deep stack (the evaluation runs in
it: one thread per call), and awaits the outcome, so the event loop goes on meanwhile: calls
gathered on one loop run at once, as pmap's do. Cancelling the awaiting task interrupts that thread
as Ctrl-C interrupts the REPL's evaluation (repl/session.py run_interruptibly): KeyboardInterrupt
is raised in it. Python code stops at once; a model call blocked on the network is
abandoned, its thread unwinding when the answer comes, with nothing left to do. The await raises
CancelledError at once, and the session takes the next call meanwhile.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Any, Generic, TypeVar, Unpack

from ..lang.deepstack import deep_recursion, raise_interrupt_in, start_deep_thread
from .batch_runs import BatchKeywords, run_rows
from .embed import run
from .settings_type import PythonValue, Settings

__all__ = ["abatch", "arun", "off_loop"]

T = TypeVar("T")

_DONE = object()  # items_off_loop's queue: action has ended (its outcome is the worker's)


class _Worker(Generic[T]):
    """One synchronous action on a thread of its own; its outcome set on a future of a loop."""

    def __init__(self, action: Callable[[], T], loop: asyncio.AbstractEventLoop) -> None:
        self.future: asyncio.Future[T] = loop.create_future()
        self._action = action
        self._loop = loop
        self._lock = threading.Lock()
        self._finished = False
        # The thread has a deep stack, so the session runs the action in it (api/embed.py `_deep`)
        # rather than start a second thread for the evaluation: one thread per call, not two.
        # Called from inside a running program (an async tool awaiting acall), the call nests: the
        # thread carries the program's name prefix and its context (the nesting depth), as
        # Session.call's nested branch expects.
        nested = threading.current_thread().name.startswith("sexp")
        self._context = contextvars.copy_context()
        self._thread = start_deep_thread(self._run, "sexp-async" if nested else "async-sexp")

    def _run(self) -> None:
        try:
            try:
                value, error = self._context.run(self._call), None
            except BaseException as exc:  # handed to the awaiting task, which raises it
                value, error = None, exc
            with self._lock:
                self._finished = True  # no interrupt comes after this
        except KeyboardInterrupt:  # a cancel that came just as the action ended: nobody awaits it
            return
        try:
            self._loop.call_soon_threadsafe(self._settle, value, error)
        except RuntimeError:  # the loop is closed: nobody awaits it either
            pass

    def _call(self) -> T:
        with deep_recursion():
            return self._action()

    def _settle(self, value: Any, error: BaseException | None) -> None:
        if self.future.done():  # cancelled meanwhile
            return
        if error is not None:
            self.future.set_exception(error)
        else:
            self.future.set_result(value)

    def interrupt(self) -> None:
        """Raise KeyboardInterrupt in the thread unless its action has ended (then: nothing)."""
        with self._lock:
            if not self._finished:
                raise_interrupt_in(self._thread)


async def off_loop(action: Callable[[], T]) -> T:
    """action() run on a thread of its own while the loop goes on; its value (or what it raises).
    Cancelling the awaiting task interrupts action as Ctrl-C does, and raises CancelledError."""
    worker = _Worker(action, asyncio.get_running_loop())
    try:
        return await worker.future
    except asyncio.CancelledError:
        worker.interrupt()
        raise


async def arun(text: str, **settings: Unpack[Settings]) -> PythonValue:
    """`run`'s async twin: the program's text run in a new session, off the event loop; its last
    value, converted to Python. Cancelling the awaiting task interrupts the run."""
    return await off_loop(lambda: run(text, **settings))


async def abatch(
    path: str | Path, data: str | Path | Iterable[dict[str, Any]] | None, **keywords: Unpack[BatchKeywords]
) -> AsyncIterator[dict[str, Any]]:
    """`batch`'s async twin: the batch runs off the event loop, and its rows (OUT's objects, each
    with its `index`) are yielded as they finish, in completion order (a resumed batch's ok rows
    as they are skipped). keywords: batch's (out, concurrency, executor, resume, ...) and the
    settings. A batch that cannot start raises its SexpError; leaving the loop early (or
    cancelling it) interrupts the batch as Ctrl-C does: its rows in flight resume later."""
    rows = items_off_loop(lambda put: run_rows(path, data, put, **keywords))
    try:
        async for row in rows:
            yield row
    finally:
        await rows.aclose()  # left early: the batch is interrupted now, not when collected


async def items_off_loop(
    action: Callable[[Callable[[Any], None]], T], then_result: bool = False
) -> AsyncGenerator[Any, None]:
    """action(put) run off the event loop, each item it puts (from its thread) yielded as it comes,
    then — when then_result — what action returned; what it raised is raised. Leaving the loop
    early (or cancelling it) interrupts action as Ctrl-C does (abatch's rows, astream's pieces)."""
    loop = asyncio.get_running_loop()
    items: asyncio.Queue[Any] = asyncio.Queue()

    def put(item: Any) -> None:  # in action's thread
        try:
            loop.call_soon_threadsafe(items.put_nowait, item)
        except RuntimeError:  # the loop is closed: nobody reads the items
            pass

    worker = _Worker(lambda: action(put), loop)
    worker.future.add_done_callback(lambda _: items.put_nowait(_DONE))
    finished = False
    try:
        while (item := await items.get()) is not _DONE:
            yield item
        finished = True
        result = await worker.future  # action's error, if it raised one
        if then_result:
            yield result
    finally:
        if not finished:
            worker.interrupt()
