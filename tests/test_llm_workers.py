"""Model calls in worker processes: started only by overlapping calls, in step with the parent's
environment, dying with the parent, and a worker's death a ProviderError, never a hang."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_server import LLMServer, Scripted, context_length_error

from sexp_tasks.handler import llm, llm_workers
from sexp_tasks.handler.llm import ModelReply, ProviderError

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def workers(worker_pool: llm_workers.Pool, monkeypatch: pytest.MonkeyPatch) -> llm_workers.Pool:
    monkeypatch.setattr(llm_workers, "_pools", [worker_pool])
    monkeypatch.setenv("SEXP_LLM_WORKERS", "1")
    return worker_pool


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[LLMServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-workers-test")
    llm_server = LLMServer().start()
    yield llm_server
    llm_server.stop()


def call(server: LLMServer, text: str, model: str = "openai/gpt-4o-mini") -> ModelReply:
    return llm.complete(model, [{"role": "user", "content": text}], api_base=server.base_url, timeout=30.0)


def in_threads(count: int, work: object) -> list[object]:
    results: list[object] = [None] * count

    def body(i: int) -> None:
        try:
            results[i] = work(i)  # type: ignore[operator]
        except Exception as err:
            results[i] = err

    threads = [threading.Thread(target=body, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def test_calls_go_to_the_worker_and_come_back_as_in_process(
    server: LLMServer, workers: llm_workers.Pool
) -> None:
    server.script(Scripted(content="<output>hi</output>", delay=0.05))
    sent = workers.next_id
    replies = in_threads(12, lambda i: call(server, f"question {i}"))
    assert workers.next_id == sent + 12  # every one of them through the worker
    assert all(isinstance(r, ModelReply) and r.content == "<output>hi</output>" for r in replies), replies
    assert all(r.prompt_tokens == 10 and r.completion_tokens == 5 for r in replies)  # type: ignore[union-attr]
    assert all(r.cost_usd > 0 and r.latency_ms > 0 for r in replies)  # type: ignore[union-attr]
    asked = sorted(r.body["messages"][0]["content"] for r in server.requests)
    assert asked == sorted(f"question {i}" for i in range(12))


def test_tool_calls_and_errors_cross_the_pipe(server: LLMServer, workers: llm_workers.Pool) -> None:
    server.script(Scripted(content=None, tool_calls=[{"name": "read_file", "arguments": {"path": "a"}}]))
    reply = call(server, "tools")
    assert [(c["name"], c["arguments"]) for c in reply.tool_calls] == [("read_file", '{"path": "a"}')]
    server.script(context_length_error())
    with pytest.raises(ProviderError) as caught:
        call(server, "too long")
    assert caught.value.kind == "context_window"
    assert "sk-fake" not in caught.value.message


def test_the_worker_follows_the_parents_environment(
    server: LLMServer, workers: llm_workers.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-first-key")
    call(server, "one")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-second-key")
    call(server, "two")
    keys = [r.headers["authorization"] for r in server.requests]
    assert keys == [
        "Bearer sk-fake-first-key",
        "Bearer sk-fake-second-key",
    ]


def test_mock_calls_and_a_registered_callback_stay_in_this_process(
    server: LLMServer, workers: llm_workers.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = workers.next_id
    mocked = llm.complete("mock/m", [{"role": "user", "content": "x"}], mock=llm.MockReply("here"))
    assert mocked.content == "here"
    litellm = llm._litellm()
    monkeypatch.setattr(litellm, "success_callback", [lambda *args, **kwargs: None])
    call(server, "watched")
    monkeypatch.setenv("SEXP_LLM_WORKERS", "0")
    monkeypatch.setattr(litellm, "success_callback", [])
    call(server, "no workers")
    assert workers.next_id == sent


def test_a_single_call_starts_no_worker_and_overlapping_calls_do(
    server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = llm_workers.Pool()
    monkeypatch.setattr(llm_workers, "_pools", [pool])
    monkeypatch.setenv("SEXP_LLM_WORKERS", "1")
    call(server, "alone")
    call(server, "alone again")
    assert pool.workers == []
    server.script(Scripted(content="ok", delay=0.3))
    try:
        replies = in_threads(2, lambda i: call(server, f"together {i}"))
        assert all(isinstance(r, ModelReply) for r in replies)  # answered here while the worker starts
        assert len(pool.workers) == 1
    finally:
        pool.stop()


@pytest.mark.slow
def test_a_worker_killed_mid_call_fails_that_call_and_is_replaced(
    server: LLMServer, workers: llm_workers.Pool
) -> None:
    server.script(Scripted(content="late", delay=5.0))
    (pid,) = workers.pids()
    killed: list[float] = []

    def kill(count: int) -> None:  # the request has reached the server: the worker waits for the answer
        killed.append(time.perf_counter())
        os.kill(pid, signal.SIGKILL)

    server.on_request = kill
    with pytest.raises(ProviderError) as caught:
        call(server, "doomed")
    assert killed and time.perf_counter() - killed[0] < 4.0  # not after the answer's 5 s
    assert caught.value.kind == "provider_error"
    assert f"pid {pid}" in caught.value.message and "killed (signal 9)" in caught.value.message
    assert workers.workers == [] and workers.crashes == 1
    server.on_request = None
    server.script(Scripted(content="again", delay=0.0))
    assert workers.wait_ready(300)
    assert workers.pids() != [pid]
    assert call(server, "after").content == "again"


@pytest.mark.slow
def test_workers_die_with_their_parent(tmp_path: Path) -> None:
    program = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from sexp_tasks.handler import llm_workers
        pool = llm_workers.pool()
        assert pool.wait_ready(300)
        print(*pool.pids(), flush=True)
        time.sleep(600)
        """
    )
    env = {**os.environ, "SEXP_LLM_WORKERS": "2", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    parent = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert parent.stdout is not None
        pids = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(pids) == 2 and all(alive(pid) for pid in pids)
    finally:
        parent.kill()  # SIGKILL: no clean-up of any kind runs in the parent
        parent.wait()
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in pids), "a worker outlived its parent"


def alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie (dead, waiting to be reaped)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    state = next(line for line in status.splitlines() if line.startswith("State:"))
    return "zombie" not in state and "dead" not in state


def test_worker_count_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SEXP_LLM_WORKERS", raising=False)
    assert llm_workers.workers_wanted() == 0  # opt-in
    for text, wanted in [("3", 3), ("0", 0), (" 1 ", 1), ("many", 0), ("-1", 0)]:
        monkeypatch.setenv("SEXP_LLM_WORKERS", text)
        assert llm_workers.workers_wanted() == wanted
