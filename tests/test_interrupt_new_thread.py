"""An interrupt raised in a thread while it starts another reaches the starter, never the new one.

CPython 3.11 gives a thread being started its starter's ident until it first runs, and an
interrupt sent by ident picked the new thread: it died before its first line, and its starter
waited for it forever. Seen when a cancelled `acall` killed the litellm import it had just
started, so every later call waited on it (tests/test_cancel_during_import.py, under load).
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from conftest import scaled

from sexp_tasks.lang.deepstack import raise_interrupt_in, start_thread

STARTS = 3000
MOST_INTERRUPTS = 100_000  # a starter that hung gets no more


def test_interrupts_sent_while_a_thread_starts_others_never_reach_the_new_threads() -> None:
    strays: list[str] = []
    made: list[threading.Thread] = []
    done = threading.Event()

    def starter() -> None:
        while not done.is_set():
            try:
                while len(made) < STARTS:
                    made.append(start_thread(threading.Thread(target=lambda: None, daemon=True)))
                done.set()
            except KeyboardInterrupt:  # meant for this thread: start the next one
                pass

    # Reports from the starter itself are the interrupts meant for it, seen where Python cannot
    # raise them (a weakref callback run by the collector): only the other threads' count.
    def unraisable(report: Any) -> None:  # an exception raised before the new thread's first line
        if threading.current_thread().name != "starter":
            strays.append(f"{report.exc_type.__name__} {report.err_msg} {report.object!r}")

    def uncaught(report: Any) -> None:
        if report.thread is None or report.thread.name != "starter":
            strays.append(f"{report.exc_type.__name__} in {report.thread!r}")

    hooks = sys.unraisablehook, threading.excepthook
    sys.unraisablehook, threading.excepthook = unraisable, uncaught
    try:
        thread = threading.Thread(target=starter, name="starter", daemon=True)
        thread.start()
        sent = 0
        while sent < MOST_INTERRUPTS and not done.wait(0.0002) and thread.is_alive():
            raise_interrupt_in(thread)
            sent += 1
        thread.join(scaled(10))
    finally:
        sys.unraisablehook, threading.excepthook = hooks
    assert not strays
    assert done.is_set(), f"the starter stopped after {len(made)} threads ({sent} interrupts)"
    assert sent > 100  # the interrupts did come while it started threads
