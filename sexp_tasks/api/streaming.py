"""Session.stream and Session.astream (SPEC §11.3): a task's answer text in pieces as it arrives,
then its TaskResult as the last item.

The call runs on a thread of its own (as the async twins' do, api/async_api.py) with a text
receiver set in its context (handler/contract.py TEXT_RECEIVER): only that call's model requests,
and those of the pmap branches it starts, are streamed, each piece put on a queue the iterator
reads. Other calls of the session, before, after or at the same time, are not streamed. Leaving
the iteration early (closing the generator, breaking out of the loop, cancelling the awaiting
task) interrupts the call as Ctrl-C does, so it does not run on unseen.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..handler.contract import TEXT_RECEIVER, TextPieces
from ..lang.deepstack import raise_interrupt_in, start_thread
from .async_api import items_off_loop

if TYPE_CHECKING:
    from .convert import TaskResult
    from .embed import Session

__all__ = ["astream", "stream"]

_END = object()  # the queue's last item: the call has ended (its outcome follows it)


def _receiving(receive: Callable[[str], None], action: Callable[[], Any]) -> Any:
    """action() with receive taking the text of the model calls it makes."""
    token = TEXT_RECEIVER.set(lambda _label: TextPieces(receive))
    try:
        return action()
    finally:
        TEXT_RECEIVER.reset(token)


def stream(session: Session, name: str, inputs: dict[str, Any]) -> Iterator[str | TaskResult]:
    """The task name's answer text in pieces as they arrive, then its TaskResult (see
    Session.stream)."""
    items: queue.Queue[Any] = queue.Queue()
    lock = threading.Lock()
    finished = False

    def work() -> None:
        nonlocal finished
        try:
            try:
                value, error = _receiving(items.put, call), None
            except BaseException as exc:  # raised by the iterating thread
                value, error = None, exc
            with lock:
                finished = True  # no interrupt comes after this
        except KeyboardInterrupt:  # interrupted just as the call ended: nobody reads the queue
            return
        items.put(_END)
        items.put((value, error))

    def call() -> Any:
        return session.call(name, **inputs)

    worker = start_thread(threading.Thread(target=work, name="stream-sexp", daemon=True))
    ended = False
    try:
        while (item := items.get()) is not _END:
            yield item
        ended = True
        value, error = items.get()
        if error is not None:
            raise error
        yield value
    finally:
        if not ended:
            with lock:
                if not finished:
                    raise_interrupt_in(worker)


async def astream(session: Session, name: str, inputs: dict[str, Any]) -> AsyncIterator[str | TaskResult]:
    """stream's async twin: the pieces awaited off the event loop (see Session.astream)."""
    pieces = items_off_loop(
        lambda put: _receiving(put, lambda: session.call(name, **inputs)),
        then_result=True,  # the TaskResult, or what the call raised
    )
    try:
        async for item in pieces:
            yield item
    finally:
        await pieces.aclose()  # left early: the call is interrupted now, not when collected
