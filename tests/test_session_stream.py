"""Session.stream and Session.astream (SPEC §11.3, issue 21 point 3): a task's answer text in
pieces as the model sends them, then its TaskResult; only that call is streamed, and leaving the
loop early interrupts the call.

In-process sessions against the local server (tests/llm_server.py), which streams its chunks with
a delay between two, and with a mock model.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import scaled, wait_for
from llm_server import LLMServer, Scripted

import sexp_tasks
from sexp_tasks import TaskResult

GREET = '(defatom greet (params (name string)) (instructions "Greet {{name}}"))\n'
PIECES = ["Hello", " there", ",", " world", "!"]


@pytest.fixture
def project(workspace: Path, monkeypatch: pytest.MonkeyPatch, server: LLMServer) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-stream")
    monkeypatch.setenv("SEXP_API_BASE", server.base_url)
    monkeypatch.setenv("SEXP_MODEL", "openai/test-model")
    return workspace


def greeter() -> sexp_tasks.Session:
    session = sexp_tasks.Session(quiet=True)
    session.eval(GREET)
    session.call("greet", name="warm")  # a process's first litellm call may buffer: not timed
    return session


def streamed(server: LLMServer) -> list[bool]:
    """For each request the server got, whether it asked for a stream."""
    return [bool(request.body.get("stream")) for request in server.requests]


def running(before: set[int | None]) -> list[threading.Thread]:
    """The stream threads started since before that still run."""
    return [t for t in threading.enumerate() if t.ident not in before and t.name == "stream-sexp"]


def test_pieces_arrive_before_the_call_ends_then_the_result(project: Path, server: LLMServer) -> None:
    session = greeter()
    delay = scaled(0.3)
    server.script(Scripted(content="".join(PIECES), pieces=PIECES, chunk_delay=delay))
    items: list[Any] = []
    times: list[float] = []
    for item in session.stream("greet", name="you"):
        items.append(item)
        times.append(time.monotonic())
    *pieces, result = items
    assert isinstance(result, TaskResult) and result.status == "COMPLETE"
    assert all(isinstance(piece, str) for piece in pieces)
    assert "".join(pieces) == result.content == "Hello there, world!"
    # the first piece came while the server was still sending the others (4 delays to go)
    assert times[-1] - times[0] >= 3 * delay
    assert streamed(server) == [False, True]


def test_a_call_after_a_stream_is_not_streamed(project: Path, server: LLMServer) -> None:
    session = greeter()
    assert isinstance(list(session.stream("greet", name="you"))[-1], TaskResult)
    session.call("greet", name="again")
    assert session.eval('(greet :name "eval")') is not None
    assert streamed(server) == [False, True, False, False]


def test_a_mock_model_streams_too(workspace: Path) -> None:
    replies = workspace / "replies.json"
    replies.write_text(json.dumps(["<output>Hello there, world</output>"]))
    session = sexp_tasks.Session(model="mock/x", mock_responses=str(replies), quiet=True)
    session.eval(GREET)
    *pieces, result = session.stream("greet", name="you")
    assert isinstance(result, TaskResult) and result.content == "Hello there, world"
    assert len(pieces) > 1 and "".join(pieces) == "<output>Hello there, world</output>"


def test_astream_yields_pieces_then_the_result_on_one_loop(project: Path, server: LLMServer) -> None:
    session = greeter()
    delay = scaled(0.3)
    server.script(Scripted(content="".join(PIECES), pieces=PIECES, chunk_delay=delay))

    async def main() -> tuple[list[Any], list[float], int]:
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        ticker = asyncio.create_task(tick())
        items: list[Any] = []
        times: list[float] = []
        async for item in session.astream("greet", name="you"):
            items.append(item)
            times.append(time.monotonic())
        ticker.cancel()
        return items, times, ticks

    items, times, ticks = asyncio.run(main())
    *pieces, result = items
    assert isinstance(result, TaskResult) and "".join(pieces) == result.content == "Hello there, world!"
    assert times[-1] - times[0] >= 3 * delay
    assert ticks > 10  # the loop went on meanwhile
    assert streamed(server) == [False, True]


def test_leaving_a_stream_early_interrupts_the_call(project: Path, server: LLMServer) -> None:
    session = greeter()
    pieces = [f"w{i} " for i in range(200)]
    server.script(Scripted(content="".join(pieces), pieces=pieces, chunk_delay=scaled(0.05)), "after")
    before = {thread.ident for thread in threading.enumerate()}
    stream = session.stream("greet", name="you")
    assert next(stream) == "w0 "
    stream.close()  # 199 pieces (10 s) to go: the call is interrupted, not waited for
    wait_for(lambda: not running(before), 5.0, "the streamed call still runs after close()")
    assert session.call("greet", name="next").content == "after"  # the session goes on
