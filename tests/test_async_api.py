"""The async twins (SPEC §11.3): `arun`, `Session.aeval`, `Session.acall` and `abatch` run off
the event loop (calls gathered on one loop run at once, the loop keeps turning), and cancelling
the awaiting task interrupts the call and leaves the session usable.

In-process sessions against the local server (tests/llm_server.py), which can hold an answer back.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import jsonl, scaled, store_rows, wait_for, write
from llm_server import LLMServer, Scripted

import sexp_tasks

GREET = '(defatom greet (params (name string)) (instructions "Greet {{name}}"))\n'


@pytest.fixture
def project(workspace: Path, monkeypatch: pytest.MonkeyPatch, server: LLMServer) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-async")
    monkeypatch.setenv("SEXP_API_BASE", server.base_url)
    monkeypatch.setenv("SEXP_MODEL", "openai/test-model")
    return workspace


def greeted(body: dict[str, Any]) -> str:
    """The name a request's instructions greet."""
    return str(body["messages"][-1]["content"]).split()[-1]


def session() -> sexp_tasks.Session:
    made = sexp_tasks.Session(quiet=True)
    made.eval(GREET)
    return made


def text(result: Any) -> str:
    """A task call's answer text, whatever form acall returns it in."""
    return str(getattr(result, "content", result))


def test_calls_gathered_on_one_loop_run_at_once_and_the_loop_keeps_turning(
    project: Path, server: LLMServer
) -> None:
    delay = 1.0
    server.script(Scripted(delay=delay))
    server.answer = lambda body: f"hello {greeted(body)}"
    greeter = session()

    async def main() -> tuple[float, float, list[Any], int]:
        began = time.monotonic()
        await greeter.acall("greet", name="warm")  # litellm's import is not part of the timing
        one = time.monotonic() - began
        ticks = [0]

        async def ticker() -> None:
            while True:
                await asyncio.sleep(0.05)
                ticks[0] += 1

        ticking = asyncio.create_task(ticker())
        began = time.monotonic()
        results = await asyncio.gather(*(greeter.acall("greet", name=f"n{i}") for i in range(20)))
        elapsed = time.monotonic() - began
        ticking.cancel()
        return one, elapsed, results, ticks[0]

    one, elapsed, results, ticks = asyncio.run(main())
    assert [text(result) for result in results] == [f"hello n{i}" for i in range(20)]
    assert one >= delay
    assert elapsed < min(delay + scaled(3), 10 * one)  # in series: 20 times one call
    assert ticks >= int(delay / 0.05) // 4  # the loop kept turning while the calls ran


def test_aeval_runs_a_program_and_keeps_its_definitions(project: Path) -> None:
    evaluator = sexp_tasks.Session(quiet=True)

    async def main() -> Any:
        await evaluator.aeval("(define (square x) (* x x))")
        return await evaluator.aeval('(list (square 4) {"a" nil})')

    assert asyncio.run(main()) == [16, {"a": None}]
    assert evaluator.eval("(square 5)") == 25


def test_arun_runs_a_program_in_a_new_session_and_raises_its_error(project: Path) -> None:
    assert asyncio.run(sexp_tasks.arun("(+ 1 2)")) == 3
    with pytest.raises(sexp_tasks.SexpError) as raised:
        asyncio.run(sexp_tasks.arun("(car 5)"))
    assert raised.value.type == "TYPE_ERROR"


def test_abatch_yields_every_row_with_its_index_as_rows_finish(project: Path, server: LLMServer) -> None:
    release = threading.Event()

    def answer(body: dict[str, Any]) -> str:
        name = greeted(body)
        if name == "slow":  # held back until the test has every other row
            release.wait(scaled(30))
        return f"hello {name}"

    server.answer = answer
    write(project / "p.sexp", GREET + "(task-content (greet name))\n")
    names = ["slow", "a", "b", "c"]

    async def main() -> list[dict[str, Any]]:
        seen = []
        given = [{"name": name} for name in names]
        async for row in sexp_tasks.abatch("p.sexp", given, concurrency=4, quiet=True):
            seen.append(row)
            if len(seen) == len(names) - 1:
                release.set()
        return seen

    rows = asyncio.run(main())
    assert rows[-1]["index"] == 0 and rows[-1]["value"] == "hello slow"
    assert sorted(row["index"] for row in rows) == [0, 1, 2, 3]
    assert all(row["status"] == "ok" and row["value"] == f"hello {names[row['index']]}" for row in rows)
    assert (project / "p.results.jsonl").is_file()  # OUT is written as batch writes it


def test_leaving_an_abatch_early_interrupts_the_batch(project: Path, server: LLMServer) -> None:
    release = threading.Event()

    def answer(body: dict[str, Any]) -> str:
        name = greeted(body)
        if name != "a":  # every row but the first is held until the test has left
            release.wait(scaled(30))
        return f"hello {name}"

    server.answer = answer
    write(project / "p.sexp", GREET + "(task-content (greet name))\n")

    async def main() -> dict[str, Any]:
        rows = sexp_tasks.abatch("p.sexp", [{"name": n} for n in "abc"], concurrency=3, quiet=True)
        async with contextlib.aclosing(rows):
            async for row in rows:
                return row
        raise AssertionError("no row")

    try:
        assert asyncio.run(main())["value"] == "hello a"
        statuses = lambda: store_rows(project, "SELECT status FROM batches")  # noqa: E731
        wait_for(lambda: statuses() == [("interrupted",)], 10, "the batch was not interrupted")
    finally:
        release.set()


def test_abatch_raises_the_error_of_a_batch_that_cannot_start(project: Path) -> None:
    jsonl(project / "in.jsonl", [{"name": "a"}])

    async def main() -> None:
        async for _ in sexp_tasks.abatch("missing.sexp", "in.jsonl", quiet=True):
            pass

    with pytest.raises(sexp_tasks.SexpError, match="missing.sexp"):
        asyncio.run(main())


def test_cancelling_an_acall_interrupts_it_promptly_and_the_session_goes_on(
    project: Path, server: LLMServer
) -> None:
    release = threading.Event()

    def answer(body: dict[str, Any]) -> str:
        name = greeted(body)
        if name == "held":
            release.wait(scaled(30))
        return f"hello {name}"

    server.answer = answer
    greeter = session()

    async def main() -> tuple[float, Any]:
        await greeter.acall("greet", name="warm")
        call = asyncio.create_task(greeter.acall("greet", name="held"))
        deadline = time.monotonic() + scaled(10)
        while not any(greeted(request.body) == "held" for request in server.requests):
            assert time.monotonic() < deadline, "the held request never reached the server"
            await asyncio.sleep(0.02)
        began = time.monotonic()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(call, scaled(2))
        took = time.monotonic() - began
        release.set()  # the abandoned call's thread unwinds when its answer comes
        return took, await greeter.acall("greet", name="next")

    took, after = asyncio.run(main())
    assert took < scaled(1)
    assert text(after) == "hello next"


def test_an_async_tool_awaiting_acall_nests_inside_the_running_program(
    project: Path, server: LLMServer
) -> None:
    nested = sexp_tasks.Session(quiet=True)
    nested.eval("(define (square x) (* x x))")
    nested.eval('(defatom ask (params (q string)) (instructions "Ask {{q}}") (tools helper))')
    depths: list[bool] = []

    @nested.tool
    async def helper(x: int) -> int:
        """Square x."""
        depths.append(threading.current_thread().name.startswith("sexp"))
        return int(await nested.acall("square", x))

    server.script(
        Scripted(content=None, tool_calls=[{"name": "helper", "arguments": {"x": 7}}]),
        "<output>done</output>",
    )
    assert text(nested.call("ask", q="seven")) == "done"
    tool_answers = [m["content"] for m in server.requests[1].body["messages"] if m["role"] == "tool"]
    assert (depths, tool_answers) == ([True], ["49"])
