"""raise_interrupt_in never reaches a thread other than the one it names: an ended thread's OS id
is soon another thread's, and an interrupt sent by that id would land in the stranger (a stray
KeyboardInterrupt seen in pytest workers)."""

from __future__ import annotations

import threading
import time

import pytest
from conftest import scaled, wait_for

from sexp_tasks.lang.deepstack import raise_interrupt_in


def _stranger_with_the_same_ident(ended: threading.Thread) -> tuple[threading.Thread, dict[str, object]]:
    """A running thread whose ident is the ended thread's (glibc reuses a finished thread's id for
    the next one); its outcome dict says whether it was interrupted."""
    for _ in range(50):
        outcome: dict[str, object] = {}
        release = threading.Event()

        def wait(outcome: dict[str, object] = outcome, release: threading.Event = release) -> None:
            try:
                while not release.is_set():
                    time.sleep(0.005)
                outcome["ended"] = "released"
            except KeyboardInterrupt:
                outcome["ended"] = "interrupted"

        stranger = threading.Thread(target=wait)
        stranger.start()
        if stranger.ident == ended.ident:
            stranger.release = release  # type: ignore[attr-defined]
            return stranger, outcome
        release.set()
        stranger.join()
    pytest.skip("this platform did not reuse a thread id")


def test_an_ended_thread_s_interrupt_does_not_reach_the_thread_now_holding_its_id() -> None:
    ended = threading.Thread(target=lambda: None)
    ended.start()
    ended.join()
    stranger, outcome = _stranger_with_the_same_ident(ended)
    raise_interrupt_in(ended)
    time.sleep(0.05)  # the stranger would see an interrupt at its next instruction
    stranger.release.set()  # type: ignore[attr-defined]
    stranger.join()
    assert outcome["ended"] == "released"


def test_a_running_thread_is_interrupted() -> None:
    outcome: dict[str, object] = {}

    def wait() -> None:
        try:
            deadline = time.monotonic() + scaled(10)
            while time.monotonic() < deadline:
                time.sleep(0.005)
            outcome["ended"] = "timed out"
        except KeyboardInterrupt:
            outcome["ended"] = "interrupted"

    worker = threading.Thread(target=wait)
    worker.start()
    raise_interrupt_in(worker)
    wait_for(lambda: "ended" in outcome, scaled(10), "the worker to end")
    worker.join()
    assert outcome["ended"] == "interrupted"
