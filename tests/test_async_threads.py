"""The async twins' threads (api/async_api.py): each call evaluates in the one thread it starts,
which has a deep stack, instead of starting a second thread for the evaluation (bench/stream.py
measured the second thread at about 0.3 ms of CPU per call with 32 calls in flight)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest

import sexp_tasks
from sexp_tasks.api import embed
from sexp_tasks.lang import deepstack

DOWN = "(define (down n) (if (= n 0) 0 (+ 1 (down (- n 1)))))"


@pytest.fixture
def second_threads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads that ran a session's evaluation on a deep stack of its own."""
    started: list[str] = []
    original = embed.run_with_deep_stack

    def recorded(action: Callable[[], Any], *args: Any, **kwargs: Any) -> Any:
        started.append(threading.current_thread().name)
        return original(action, *args, **kwargs)

    monkeypatch.setattr(embed, "run_with_deep_stack", recorded)
    return started


def test_acall_and_aeval_evaluate_in_the_thread_they_start(second_threads: list[str]) -> None:
    session = sexp_tasks.Session(quiet=True)
    session.eval("(define (square x) (* x x))")
    assert second_threads == ["MainThread"]  # the synchronous twin starts its deep-stack thread

    async def main() -> list[Any]:
        return await asyncio.gather(session.acall("square", 7), session.aeval("(square 8)"))

    assert asyncio.run(main()) == [49, 64]
    assert second_threads == ["MainThread"]


def test_an_async_twin_recurses_as_deep_as_the_command_line(second_threads: list[str]) -> None:
    session = sexp_tasks.Session(quiet=True)

    async def main() -> Any:
        await session.aeval(DOWN)
        return await session.acall("down", 4000)

    assert asyncio.run(main()) == 4000
    assert second_threads == []


def test_only_threads_started_deep_say_so() -> None:
    seen: list[bool] = []
    deepstack.start_deep_thread(lambda: seen.append(deepstack.on_deep_stack()), "sexp-test").join()
    plain = threading.Thread(target=lambda: seen.append(deepstack.on_deep_stack()))
    plain.start()
    plain.join()
    assert seen == [True, False]
    assert not deepstack.on_deep_stack()
