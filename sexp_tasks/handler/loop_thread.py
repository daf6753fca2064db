"""The event loop litellm's async transport runs on (llm.py, SEXP_LLM_TRANSPORT=async): one per
process, in a daemon thread, which callers in any thread wait on."""

from __future__ import annotations

import os
import threading
from collections.abc import Coroutine
from typing import Any

from ..lang.deepstack import start_thread


class LoopThread:
    """An event loop in a daemon thread, on which callers in any thread await litellm's async path."""

    def __init__(self) -> None:
        import asyncio  # only the async transport needs it; replayed runs start without it

        self.pid = os.getpid()
        self.loop = asyncio.new_event_loop()
        start_thread(threading.Thread(target=self.loop.run_forever, name="sexp-llm-loop", daemon=True))

    def run(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        """The coroutine's result, awaited on the loop while the calling thread waits."""
        import asyncio

        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            while True:  # a timed wait: an interrupt raised in this thread (the REPL's Ctrl-C) is seen
                try:
                    return future.result(timeout=_INTERRUPT_POLL)
                except TimeoutError:
                    continue
        except BaseException:
            future.cancel()  # an interrupted caller leaves no request running behind it
            raise


_INTERRUPT_POLL = 0.05  # seconds: how soon a caller waiting on the loop sees an interrupt

# The one loop of this process (an HTTP session pool belongs to one loop); a forked child makes its own.
_loops: list[LoopThread] = []
_loops_guard = threading.Lock()


def background_loop() -> LoopThread:
    """The process's one loop thread, started on first use (again in a forked child)."""
    with _loops_guard:
        if not _loops or _loops[0].pid != os.getpid():
            _loops[:] = [LoopThread()]
        return _loops[0]
