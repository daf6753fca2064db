"""Streamed model calls (issue 21): with HandlerServices.open_stream set, a paid call streams through
litellm, each piece of text written to the stream it opens as it arrives, and its answer is the unstreamed
one's: the same usage, cost and tool calls, journaled, kept and replayed under the same
fingerprint; a stream that breaks midway fails with the text it gave."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import scaled
from llm_server import LLMServer, Scripted

from sexp_tasks.handler import Cassette, Handler, HandlerConfig, HandlerServices, TaskPrompt
from sexp_tasks.handler.contract import TextPieces
from sexp_tasks.handler.model_request import ModelAnswer, ModelRequest
from sexp_tasks.handler.replay import MockScript
from sexp_tasks.results import COMPLETE, FAILED

GREET = TaskPrompt("greet", "Say hello.", models=("openai/gpt-4o-mini",))  # priced: the cost is counted
PIECES = ["<output>", "Hello", " there,", " world", "</output>"]


@pytest.fixture
def server(server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> LLMServer:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-streaming")
    return server


class Heard:
    """An open_stream hook: every (label, text) its streams were given, and when."""

    def __init__(self) -> None:
        self.pieces: list[tuple[str, str]] = []
        self.times: list[float] = []

    def __call__(self, label: str) -> TextPieces:
        return TextPieces(lambda text: self.heard(label, text))

    def heard(self, label: str, text: str) -> None:
        self.pieces.append((label, text))
        self.times.append(time.monotonic())


def run(server: LLMServer, services: HandlerServices, prompt: TaskPrompt = GREET, **config: Any) -> Any:
    options = {"api_base": server.base_url, "num_retries": 0, "timeout": scaled(10.0), **config}
    return Handler(HandlerConfig(**options), services).run(prompt)


def kept_answers(server: LLMServer, heard: Heard | None, *replies: Scripted, **config: Any) -> Any:
    """The result of a run answered by replies, and the (request, answer) pairs it paid for."""
    server.script(*replies)
    kept: list[tuple[ModelRequest, ModelAnswer]] = []
    services = HandlerServices(open_stream=heard, keep_answer=lambda *pair: kept.append(pair))
    return run(server, services, **config), kept


def same(answer: ModelAnswer) -> ModelAnswer:
    return replace(answer, latency_ms=0.0)  # the one thing two calls never share


def test_pieces_of_text_arrive_in_order_as_they_are_sent(server: LLMServer) -> None:
    kept_answers(
        server, Heard(), Scripted(content="<output>warm</output>")
    )  # litellm's first call sets up for a second
    heard = Heard()
    reply = Scripted(pieces=PIECES, content="".join(PIECES), chunk_delay=0.05)
    result, _ = kept_answers(server, heard, reply)
    assert (result.status, result.content) == (COMPLETE, "Hello there, world")
    assert heard.pieces == [("greet", piece) for piece in PIECES]
    assert heard.times[-1] - heard.times[0] >= 0.15  # four gaps of 50 ms: each piece heard as it came
    body = server.requests[1].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_a_streamed_answer_is_the_unstreamed_one_usage_and_cost_counted(server: LLMServer) -> None:
    reply = Scripted(
        content="<output>Hello there, world</output>", usage={"prompt_tokens": 12, "completion_tokens": 7}
    )
    plain, [(_, unstreamed)] = kept_answers(server, None, reply)
    streamed_result, [(_, streamed)] = kept_answers(server, Heard(), reply)
    assert "stream" not in server.requests[0].body and server.requests[1].body["stream"] is True
    assert same(streamed) == same(unstreamed)
    assert (streamed.prompt_tokens, streamed.completion_tokens) == (12, 7) and streamed.cost_usd > 0
    assert streamed_result.content == plain.content
    for key in ("usage", "cost_usd"):
        assert streamed_result.notes[key] == plain.notes[key]


def test_tool_calls_are_streamed_and_assembled(server: LLMServer, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("the notes")
    read = Scripted(content=None, tool_calls=[{"name": "read_file", "arguments": {"path": "notes.txt"}}])
    done = Scripted(content="<output>read it</output>")
    config = {"tools": ("read_file",), "workspace": workspace}
    plain, unstreamed = kept_answers(server, None, read, done, **config)
    heard = Heard()
    streamed_result, streamed = kept_answers(server, heard, read, done, **config)
    assert streamed_result.status == COMPLETE and streamed_result.content == plain.content == "read it"
    assert [same(answer) for _, answer in streamed] == [same(answer) for _, answer in unstreamed]
    assert streamed[0][1].tool_calls == (
        {"id": "call_1", "name": "read_file", "arguments": '{"path": "notes.txt"}'},
    )
    assert server.requests[-1].body["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "the notes",
    }
    assert "".join(text for _, text in heard.pieces) == "<output>read it</output>"


def test_the_fingerprint_is_the_same_streamed_or_not(server: LLMServer) -> None:
    request = ModelRequest.build(
        "openai/m", [{"role": "user", "content": "hi"}], generation={"temperature": 0}
    )
    assert request.streamed().fingerprint() == request.fingerprint()
    assert request.streamed().as_record() == request.as_record()
    journaled: list[ModelRequest] = []

    def record_turn(request: ModelRequest, send: Any, kept: Any) -> Any:
        journaled.append(request)
        return send()

    for hook in (None, Heard()):
        server.script("<output>hi</output>")
        run(server, HandlerServices(open_stream=hook, record_turn=record_turn))
    plain, streamed = journaled
    assert plain.fingerprint() == streamed.fingerprint()


def test_a_streamed_turn_recorded_to_a_cassette_replays_with_no_request(
    server: LLMServer, workspace: Path
) -> None:
    path = workspace / "streamed.jsonl"
    server.script(Scripted(content="<output>Hello there, world</output>", chunk_delay=0.01))
    recorded = run(server, HandlerServices(cassette=Cassette(path, "record"), open_stream=Heard()))
    assert recorded.status == COMPLETE and len(server.requests) == 1
    heard = Heard()
    replayed = run(server, HandlerServices(cassette=Cassette(path, "replay"), open_stream=heard))
    assert len(server.requests) == 1 and heard.pieces == []  # nothing sent, so nothing streamed
    assert (replayed.status, replayed.content) == (COMPLETE, recorded.content)
    assert replayed.notes["usage"] == recorded.notes["usage"]
    unstreamed = run(server, HandlerServices(cassette=Cassette(path, "replay")))  # the same key
    assert unstreamed.content == recorded.content and len(server.requests) == 1


def test_a_stream_broken_midway_fails_with_the_text_it_gave(server: LLMServer) -> None:
    heard = Heard()
    reply = Scripted(pieces=PIECES, content="".join(PIECES), drop_after=3)  # role, then two pieces
    result, kept = kept_answers(server, heard, reply)
    assert result.status == FAILED and kept == []
    assert result.error.reason == "connection"
    assert result.content == "<output>Hello"
    assert heard.pieces == [("greet", "<output>"), ("greet", "Hello")]


def test_a_broken_stream_is_sent_again_and_streams_again(server: LLMServer) -> None:
    heard = Heard()
    broken = Scripted(pieces=PIECES, content="".join(PIECES), drop_after=2)
    result, _ = kept_answers(
        server,
        heard,
        broken,
        Scripted(pieces=PIECES, content="".join(PIECES)),
        num_retries=1,
        retry_delay=0.01,
    )
    assert (result.status, result.content) == (COMPLETE, "Hello there, world")
    assert [text for _, text in heard.pieces] == ["<output>", *PIECES]
    assert result.notes["retries"][0]["reason"] == "connection"


def test_a_stream_over_the_output_limit_fails_as_an_unstreamed_one(server: LLMServer) -> None:
    cut = Scripted(content="<output>Hello there, wor", finish_reason="length")
    plain, _ = kept_answers(server, None, cut)
    streamed, _ = kept_answers(server, Heard(), cut)
    assert streamed.status == plain.status == FAILED
    assert streamed.error.resource == plain.error.resource == "output"
    assert streamed.content == plain.content


def test_the_async_transport_streams_too(server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEXP_LLM_TRANSPORT", "async")
    heard = Heard()
    result, [(_, answer)] = kept_answers(server, heard, Scripted(pieces=PIECES, content="".join(PIECES)))
    assert (result.status, result.content) == (COMPLETE, "Hello there, world")
    assert [text for _, text in heard.pieces] == PIECES
    assert (answer.prompt_tokens, answer.completion_tokens) == (10, 5)
    broken = Scripted(pieces=PIECES, content="".join(PIECES), drop_after=3)
    failed, _ = kept_answers(server, Heard(), broken)
    assert failed.status == FAILED and failed.content == "<output>Hello"


def test_a_mock_model_streams_its_text_and_counts_as_unstreamed(server: LLMServer) -> None:
    prompt = TaskPrompt("greet", "Say hello.", models=("mock/m",))
    kept: list[tuple[ModelRequest, ModelAnswer]] = []
    heard = Heard()
    for hook in (None, heard):
        mock = MockScript(["<output>Hello there, world</output>"])
        services = HandlerServices(mock=mock, open_stream=hook, keep_answer=lambda *pair: kept.append(pair))
        assert run(server, services, prompt).content == "Hello there, world"
    unstreamed, streamed = (same(answer) for _, answer in kept)
    assert streamed == unstreamed
    assert (
        len(heard.pieces) > 3
        and "".join(text for _, text in heard.pieces) == "<output>Hello there, world</output>"
    )


def test_a_mock_model_answers_tool_calls_whole(server: LLMServer, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("the notes")
    call = {"content": "", "tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]}
    mock = MockScript([call, "<output>read it</output>"])
    heard = Heard()
    services = HandlerServices(mock=mock, open_stream=heard)
    prompt = TaskPrompt("reader", "Read.", models=("mock/m",))
    result = run(server, services, prompt, tools=("read_file",), workspace=workspace)
    assert (result.status, result.content) == (COMPLETE, "read it")
    assert "".join(text for _, text in heard.pieces) == "<output>read it</output>"
