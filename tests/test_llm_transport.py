"""Model calls from many threads: every transport, the shared mock script and cassette, the fast paths."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import scaled
from hypothesis import given
from hypothesis import strategies as st
from llm_server import LLMServer, Scripted, context_length_error

from sexp_tasks.handler import llm
from sexp_tasks.handler.model_request import ModelAnswer, ModelRequest
from sexp_tasks.handler.output import _plain_answer
from sexp_tasks.handler.provider_errors import ProviderError
from sexp_tasks.handler.replay import Cassette, MockScript
from sexp_tasks.xmltools import split_answer

THREADS = 8


@pytest.fixture
def server(server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> LLMServer:
    """conftest's server, with this file's fake key in OPENAI_API_KEY."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-transport-test")
    return server


@pytest.fixture(params=["sync", "async"])
def transport(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """`litellm.completion` in the calling thread, or `litellm.acompletion` on the shared loop."""
    monkeypatch.setenv("SEXP_LLM_TRANSPORT", request.param)
    assert llm.transport() == request.param
    return str(request.param)


def in_threads(count: int, work: Callable[[int], Any]) -> list[Any]:
    """work(i) for i in range(count), each on its own thread, all released at once; results in order."""
    results: list[Any] = [None] * count
    start = threading.Barrier(count)

    def body(i: int) -> None:
        start.wait()
        try:
            results[i] = work(i)
        except Exception as err:  # reported by the assertions of the test
            results[i] = err

    threads = [threading.Thread(target=body, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=scaled(60))
    return results


def test_many_threads_draw_each_scripted_reply_exactly_once() -> None:
    entries = [f"reply {i}" for i in range(THREADS * 25)]
    script = MockScript(entries)
    drawn = in_threads(THREADS, lambda _: [script.next("t").content for _ in range(25)])
    flat = [content for batch in drawn for content in batch]
    assert sorted(flat) == sorted(entries)
    assert script.calls == len(entries)
    assert script.next("t").content == entries[-1]  # then the last one repeats


def test_unscripted_mock_replies_are_numbered_once_each_across_threads() -> None:
    script = MockScript()
    drawn = in_threads(THREADS, lambda _: [script.next("t").content for _ in range(10)])
    flat = [content for batch in drawn for content in batch]
    assert sorted(flat) == sorted(f"mock response {n} for t" for n in range(1, THREADS * 10 + 1))


def test_cassette_records_and_replays_from_many_threads(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    recorder = Cassette(path, "record")

    def request(i: int, j: int) -> ModelRequest:
        return ModelRequest.build("m", [{"role": "user", "content": f"{i}-{j}"}])

    in_threads(
        THREADS, lambda i: [recorder.record(request(i, j), ModelAnswer(f"{i}/{j}")) for j in range(20)]
    )
    assert len(path.read_text(encoding="utf-8").splitlines()) == THREADS * 20
    player = Cassette(path, "replay")
    replies = in_threads(THREADS, lambda i: [player.replay(request(i, j))[0].text for j in range(20)])
    assert replies == [[f"{i}/{j}" for j in range(20)] for i in range(THREADS)]


def call(server: LLMServer, text: str) -> ModelAnswer:
    request = ModelRequest.build("openai/test-model", [{"role": "user", "content": text}])
    return llm.complete(request, api_base=server.base_url, timeout=30.0)


def test_concurrent_calls_each_get_an_answer(server: LLMServer, transport: str) -> None:
    server.script(Scripted(content="<output>hi</output>", delay=0.05))
    replies = in_threads(THREADS * 2, lambda i: call(server, f"question {i}"))
    assert all(isinstance(r, ModelAnswer) and r.text == "<output>hi</output>" for r in replies), replies
    assert all(r.prompt_tokens == 10 and r.completion_tokens == 5 for r in replies)
    asked = sorted(r.body["messages"][0]["content"] for r in server.requests)
    assert asked == sorted(f"question {i}" for i in range(THREADS * 2))


def test_provider_errors_are_translated_on_every_transport(server: LLMServer, transport: str) -> None:
    server.script(context_length_error())
    with pytest.raises(ProviderError) as caught:
        call(server, "too long")
    assert caught.value.kind == "context_window"
    assert "sk-fake" not in caught.value.message


def test_tool_calls_cost_and_latency_come_back_on_every_transport(server: LLMServer, transport: str) -> None:
    server.script(Scripted(content=None, tool_calls=[{"name": "read_file", "arguments": {"path": "a"}}]))
    request = ModelRequest.build("openai/gpt-4o-mini", [{"role": "user", "content": "tools"}])
    reply = llm.complete(request, api_base=server.base_url, timeout=30.0)
    assert [(c["name"], c["arguments"]) for c in reply.tool_calls] == [("read_file", '{"path": "a"}')]
    assert reply.cost_usd > 0 and reply.latency_ms > 0  # a priced model: litellm's price is kept


def test_each_call_takes_the_key_the_environment_holds_then(
    server: LLMServer, transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-first-key")
    call(server, "one")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-second-key")
    call(server, "two")
    keys = [r.headers["authorization"] for r in server.requests]
    assert keys == ["Bearer sk-fake-first-key", "Bearer sk-fake-second-key"]


def test_mock_replies_need_no_server_on_any_transport(transport: str) -> None:
    request = ModelRequest.build("mock/m", [{"role": "user", "content": "x"}])
    reply = llm.complete(request, mock=llm.MockReply("scripted"))
    assert reply.text == "scripted" and reply.model == "mock/m"
    assert reply.cost_usd == 0.0


def test_litellm_logging_still_runs_for_a_registered_callback(
    server: LLMServer, transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    litellm = llm._litellm()
    from litellm.integrations.custom_logger import CustomLogger

    logged = threading.Event()

    class Listener(CustomLogger):  # type: ignore[misc]
        def log_success_event(self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any) -> None:
            logged.set()

        async def async_log_success_event(
            self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
        ) -> None:
            logged.set()

    for name in llm._CALLBACK_LISTS:  # litellm spreads a callback over its lists: restore them all
        monkeypatch.setattr(litellm, name, list(getattr(litellm, name)))
    litellm.callbacks.append(Listener())
    call(server, "logged")
    assert logged.wait(scaled(10)), "a user's litellm callback must still see every call"


def test_litellm_logging_is_skipped_when_nobody_listens(server: LLMServer) -> None:
    litellm = llm._litellm()
    assert llm._nobody_listens(litellm)
    assert llm._unlogged_flag() is not None  # the per-call switch this litellm offers
    call(server, "quiet")
    assert llm._nobody_listens(litellm)  # a call registers no callback of its own
    assert not llm._unlogged_flag().get()  # and the switch stays inside the call's own context


PLAIN = st.text(st.characters(blacklist_characters="<&\r", blacklist_categories=("Cs",)), max_size=30)
TAG = st.from_regex(r"[A-Za-z_][a-z_]{0,8}", fullmatch=True)


@given(
    PLAIN,
    st.lists(st.tuples(TAG, PLAIN), max_size=3),
    st.sampled_from(["", " ", "\n", "\n\n"]),
    st.booleans(),
)
def test_plain_answers_are_read_as_the_lenient_reader_reads_them(
    output: str, notes: list[tuple[str, str]], gap: str, with_notes: bool
) -> None:
    body = "".join(f"<{tag}>{text}</{tag}>{gap}" for tag, text in notes)
    text = f"{gap}<output>{output}</output>{gap}" + (f"<notes>{gap}{body}</notes>" if with_notes else "")
    fast = _plain_answer(text)
    slow = split_answer(text)
    if fast is not None:
        assert (fast.output, fast.notes, fast.problems) == (slow.output, slow.notes, slow.problems)


def test_answers_with_markup_or_entities_take_the_lenient_reader() -> None:
    assert _plain_answer("<output>a &amp; b</output>") is None
    assert _plain_answer("<output>x</output><notes><a>1 &lt; 2</a></notes>") is None
    assert _plain_answer("Sure: <output>x</output>") is None
    plain = _plain_answer("<output>\nx\n</output>\n<notes><data_usage> none </data_usage></notes>")
    assert plain is not None and (plain.output, plain.notes) == ("x", {"data_usage": "none"})
