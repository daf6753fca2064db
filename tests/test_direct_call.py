"""The direct model call (handler/direct_call.py) against litellm.completion: the same bytes reach
the provider either way, the answers read the same, failures are the same ProviderErrors, and the
calls it does not cover still go through litellm.completion (issue 23, point 3).

Three request shapes, each against the recording server (tests/llm_server.py): OpenAI's
(`openai/...`, which litellm sends through the OpenAI SDK), Anthropic's Messages API
(`anthropic/...`, its own body, headers and answer) and Mistral's (`mistral/...`: litellm's
generic BaseLLMHTTPHandler route that most providers take, with Mistral's own parameter mapping,
e.g. seed sent as random_seed)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from llm_server import LLMServer, Scripted, context_length_error

from sexp_tasks.handler import direct_call, direct_request, llm
from sexp_tasks.handler.model_request import ModelAnswer, ModelRequest
from sexp_tasks.handler.provider_errors import ProviderError

KEYS = {
    "OPENAI_API_KEY": "sk-fake-direct-openai",
    "ANTHROPIC_API_KEY": "sk-ant-fake-direct",
    "MISTRAL_API_KEY": "fake-direct-mistral",
}
MODELS = {
    "openai": "openai/test-model",
    "anthropic": "anthropic/claude-3-5-sonnet-20241022",
    "mistral": "mistral/mistral-small-latest",
}
AUTH = {"openai": "authorization", "anthropic": "x-api-key", "mistral": "authorization"}

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]
SCHEMA_FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "answer",
        "schema": {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]},
        "strict": True,
    },
}
MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Zürich? ünïcödé"},
]
CASES: dict[str, dict[str, Any]] = {
    "plain": {},
    "settings + tools": {
        "tools": TOOLS,
        "generation": {"temperature": 0.2, "max_tokens": 40, "seed": 7, "stop": ["END"], "top_p": 0.9},
    },
    "response_format": {"response_format": SCHEMA_FORMAT, "generation": {"temperature": 0.0}},
    "tool call history": {
        "tools": TOOLS,
        "messages": [
            *MESSAGES,
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Zürich"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 21°C"},
        ],
    },
}


@pytest.fixture(autouse=True)
def fake_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("SEXP_LLM_TRANSPORT", raising=False)


@pytest.fixture
def litellm_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The models litellm.completion is called for (it still sends them)."""
    litellm = llm._litellm()
    real = litellm.completion
    called: list[str] = []

    def counted(**options: Any) -> Any:
        called.append(options["model"])
        return real(**options)

    monkeypatch.setattr(litellm, "completion", counted)
    yield called


def base_for(server: LLMServer, provider: str) -> str:
    # litellm appends /v1/messages to an Anthropic api_base; the others are given the /v1 base
    return server.base_url.removesuffix("/v1") if provider == "anthropic" else server.base_url


def request_for(provider: str, case: dict[str, Any], stream: bool = False) -> ModelRequest:
    return ModelRequest.build(
        MODELS[provider],
        case.get("messages", MESSAGES),
        case.get("tools"),
        case.get("generation"),
        case.get("response_format"),
        stream=stream,
    )


def both_ways(
    server: LLMServer,
    monkeypatch: pytest.MonkeyPatch,
    provider: str,
    request: ModelRequest,
    reply: Scripted,
) -> list[tuple[Any, ModelAnswer | ProviderError, list[str]]]:
    """The request sent through litellm.completion (SEXP_LLM_DIRECT=0), then through the direct
    path: (what the server recorded, the answer or error, the streamed text pieces) each."""
    results = []
    for direct in ("0", "1"):
        monkeypatch.setenv("SEXP_LLM_DIRECT", direct)
        server.script(reply)
        pieces: list[str] = []
        try:
            outcome: ModelAnswer | ProviderError = llm.complete(
                request, api_base=base_for(server, provider), timeout=30.0, on_text=pieces.append
            )
        except ProviderError as err:
            outcome = err
        results.append((server.requests[-1], outcome, pieces))
    return results


def same_answers(old: ModelAnswer, new: ModelAnswer) -> None:
    assert new.text == old.text
    assert new.tool_calls == old.tool_calls
    assert new.finish_reason == old.finish_reason
    assert (new.prompt_tokens, new.completion_tokens) == (old.prompt_tokens, old.completion_tokens)
    assert new.model == old.model
    assert new.cost_usd == pytest.approx(old.cost_usd)


def key_only_in_auth(recorded: Any, provider: str) -> None:
    key = KEYS[f"{provider.upper()}_API_KEY"]
    assert key in recorded.headers[AUTH[provider]]
    assert key.encode() not in recorded.raw and key not in recorded.path
    assert not [name for name, value in recorded.headers.items() if key in value and name != AUTH[provider]]


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("provider", list(MODELS))
def test_the_same_bytes_reach_the_provider_either_way(
    server: LLMServer, monkeypatch: pytest.MonkeyPatch, litellm_calls: list[str], provider: str, case: str
) -> None:
    tools = CASES[case].get("tools") and case != "tool call history"
    reply = Scripted(
        content="It is sunny.",
        tool_calls=[{"name": "get_weather", "arguments": {"city": "Zürich"}}] if tools else None,
        usage={"prompt_tokens": 31, "completion_tokens": 9},
    )
    (old, old_answer, _), (new, new_answer, _) = both_ways(
        server, monkeypatch, provider, request_for(provider, CASES[case]), reply
    )
    assert litellm_calls == [MODELS[provider]]  # the second call did not go through litellm.completion
    assert new.path == old.path
    assert new.raw == old.raw, (old.raw, new.raw)
    for name in ("content-type", AUTH[provider], "anthropic-version", "anthropic-beta"):
        assert new.headers.get(name) == old.headers.get(name), name
    key_only_in_auth(new, provider)
    assert isinstance(old_answer, ModelAnswer) and isinstance(new_answer, ModelAnswer)
    same_answers(old_answer, new_answer)
    if tools:
        assert new_answer.tool_calls and json.loads(new_answer.tool_calls[0]["arguments"]) == {
            "city": "Zürich"
        }


@pytest.mark.parametrize("case", ["plain", "settings + tools"])
@pytest.mark.parametrize("provider", list(MODELS))
def test_a_stream_is_the_same_either_way(
    server: LLMServer, monkeypatch: pytest.MonkeyPatch, litellm_calls: list[str], provider: str, case: str
) -> None:
    tools = case == "settings + tools"
    reply = Scripted(
        content="It is sunny in Zürich today.",
        tool_calls=[{"name": "get_weather", "arguments": {"city": "Zürich"}}] if tools else None,
    )
    request = request_for(provider, CASES[case], stream=True)
    (old, old_answer, old_pieces), (new, new_answer, new_pieces) = both_ways(
        server, monkeypatch, provider, request, reply
    )
    assert litellm_calls == [MODELS[provider]]
    assert new.raw == old.raw and b'"stream":' in new.raw
    for name in ("content-type", "accept-encoding", AUTH[provider], "anthropic-version"):
        assert new.headers.get(name) == old.headers.get(name), name
    key_only_in_auth(new, provider)
    assert new_pieces == old_pieces == ["It ", "is ", "sunny ", "in ", "Zürich ", "today."]
    assert isinstance(old_answer, ModelAnswer) and isinstance(new_answer, ModelAnswer)
    same_answers(old_answer, new_answer)
    if tools:
        assert json.loads(new_answer.tool_calls[0]["arguments"]) == {"city": "Zürich"}


@pytest.mark.parametrize("provider", list(MODELS))
def test_a_broken_stream_keeps_its_partial_text_either_way(
    server: LLMServer, monkeypatch: pytest.MonkeyPatch, provider: str
) -> None:
    # OpenAI's and Mistral's first event is the role, Anthropic's two are message_start, content_block_start
    reply = Scripted(content="one two three four", drop_after=3 if provider != "anthropic" else 4)
    results = both_ways(server, monkeypatch, provider, request_for(provider, {}, stream=True), reply)
    (_, old_error, old_pieces), (_, new_error, new_pieces) = results
    assert isinstance(old_error, ProviderError) and isinstance(new_error, ProviderError)
    assert new_pieces == old_pieces == ["one ", "two "]
    assert new_error.partial == old_error.partial == "one two "
    assert (new_error.kind, new_error.status, new_error.retryable) == (
        old_error.kind,
        old_error.status,
        old_error.retryable,
    )


def closed_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return int(port)


FAILURES = {
    "rate limit": Scripted(status=429, error={"message": "slow down", "type": "rate_limit_error"}),
    "server error": Scripted(status=503),
    "bad key": Scripted(status=401, error={"message": "invalid x-api-key", "type": "authentication_error"}),
    "context length": context_length_error(),
    "unknown model": Scripted(status=404),
    "dropped": Scripted(drop=True),
    "timeout": Scripted(delay=3.0),
}


@pytest.mark.parametrize("failure", [*FAILURES, "refused"])
@pytest.mark.parametrize("provider", list(MODELS))
def test_a_failure_is_the_same_provider_error_either_way(
    server: LLMServer, monkeypatch: pytest.MonkeyPatch, provider: str, failure: str
) -> None:
    errors = []
    for direct in ("0", "1"):
        monkeypatch.setenv("SEXP_LLM_DIRECT", direct)
        base = f"http://127.0.0.1:{closed_port()}/v1" if failure == "refused" else base_for(server, provider)
        if failure != "refused":
            server.script(FAILURES[failure])
        timeout = 0.5 if failure == "timeout" else 30.0
        with pytest.raises(ProviderError) as caught:
            llm.complete(request_for(provider, {}), api_base=base, timeout=timeout)
        errors.append(caught.value)
    old, new = errors
    assert (new.kind, new.status, new.retryable) == (old.kind, old.status, old.retryable)
    assert new.message.split(":")[0] == old.message.split(":")[0]
    for key in KEYS.values():
        assert key not in new.message


def test_calls_it_does_not_cover_go_through_litellm(
    server: LLMServer, monkeypatch: pytest.MonkeyPatch, litellm_calls: list[str]
) -> None:
    """A mock, a provider off the list, SEXP_LLM_DIRECT=0 and a registered litellm callback all
    take litellm.completion; the direct path is taken otherwise."""
    from sexp_tasks.handler.replay import MockReply

    server.script("fine")
    ask = ModelRequest.build("openai/test-model", MESSAGES)
    llm.complete(ask, api_base=server.base_url)
    assert litellm_calls == []
    llm.complete(ModelRequest.build("mock/m", MESSAGES), mock=MockReply(content="mocked"))
    assert litellm_calls == ["openai/m"]
    monkeypatch.setenv("SEXP_LLM_DIRECT", "0")
    llm.complete(ask, api_base=server.base_url)
    monkeypatch.delenv("SEXP_LLM_DIRECT")
    llm.complete(ModelRequest.build("hosted_vllm/test-model", MESSAGES), api_base=server.base_url)
    assert litellm_calls[1:] == ["openai/test-model", "hosted_vllm/test-model"]
    litellm = llm._litellm()
    monkeypatch.setattr(litellm, "success_callback", [lambda *args, **kwargs: None])
    llm.complete(ask, api_base=server.base_url)
    assert litellm_calls[-1] == "openai/test-model" and len(litellm_calls) == 4


def test_the_async_transport_keeps_litellm(
    server: LLMServer, monkeypatch: pytest.MonkeyPatch, litellm_calls: list[str]
) -> None:
    monkeypatch.setenv("SEXP_LLM_TRANSPORT", "async")
    litellm = llm._litellm()
    real = litellm.acompletion
    called: list[str] = []

    async def counted(**options: Any) -> Any:
        called.append(options["model"])
        return await real(**options)

    monkeypatch.setattr(litellm, "acompletion", counted)
    server.script("async answer")
    answer = llm.complete(ModelRequest.build("openai/test-model", MESSAGES), api_base=server.base_url)
    assert answer.text == "async answer" and called == ["openai/test-model"] and litellm_calls == []


def test_one_pooled_client_serves_every_thread(server: LLMServer) -> None:
    server.answer = lambda body: "answer to " + body["messages"][-1]["content"]
    results: dict[int, str] = {}

    def ask(i: int) -> None:
        request = ModelRequest.build("openai/test-model", [{"role": "user", "content": f"q{i}"}])
        results[i] = llm.complete(request, api_base=server.base_url).text

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(64)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert results == {i: f"answer to q{i}" for i in range(64)}
    assert direct_call.connection_pool() is direct_call.connection_pool()
    assert direct_call.POOL_SIZE >= 64


def test_extra_headers_reach_the_provider_either_way(
    server: LLMServer, monkeypatch: pytest.MonkeyPatch, litellm_calls: list[str]
) -> None:
    request = request_for("mistral", {"generation": {"extra": {"extra_headers": {"X-Trace": "abc"}}}})
    (old, _, _), (new, _, _) = both_ways(server, monkeypatch, "mistral", request, Scripted(content="ok"))
    assert old.headers.get("x-trace") == new.headers.get("x-trace") == "abc"
    assert new.raw == old.raw


def test_litellm_wide_settings_keep_litellm(
    server: LLMServer, monkeypatch: pytest.MonkeyPatch, litellm_calls: list[str]
) -> None:
    """Headers added to every request, model aliases, fallbacks: litellm.completion applies them."""
    litellm = llm._litellm()
    monkeypatch.setattr(litellm, "headers", {"X-Everywhere": "1"})
    server.script("fine")
    llm.complete(ModelRequest.build("openai/test-model", MESSAGES), api_base=server.base_url)
    assert litellm_calls == ["openai/test-model"]
    assert server.requests[-1].headers.get("x-everywhere") == "1"


def test_a_prepared_request_shows_no_key(server: LLMServer) -> None:
    options = ModelRequest.build("anthropic/claude-3-5-sonnet-20241022", MESSAGES).litellm_arguments()
    options["api_base"] = base_for(server, "anthropic")
    prepared = direct_request.prepare(llm._litellm(), options)
    assert prepared is not None and prepared.headers["x-api-key"] == KEYS["ANTHROPIC_API_KEY"]
    assert KEYS["ANTHROPIC_API_KEY"] not in repr(prepared)


def test_a_forked_child_makes_its_own_pool() -> None:
    import os

    parent = direct_call.connection_pool(), direct_call.http_client()
    pid = os.fork()
    if pid == 0:  # the child: exits 0 when its pools are new ones
        fresh = direct_call._pool is None and direct_call._client is None
        os._exit(0 if fresh and direct_call.connection_pool() is not parent[0] else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert (direct_call.connection_pool(), direct_call.http_client()) == parent


def test_an_openai_organization_keeps_litellm(
    server: LLMServer, monkeypatch: pytest.MonkeyPatch, litellm_calls: list[str]
) -> None:
    """The OpenAI SDK sends OPENAI_ORGANIZATION as a header: such calls keep litellm.completion."""
    monkeypatch.setenv("OPENAI_ORGANIZATION", "org-fake")
    server.script("fine")
    llm.complete(ModelRequest.build("openai/test-model", MESSAGES), api_base=server.base_url)
    assert litellm_calls == ["openai/test-model"]
    assert server.requests[-1].headers.get("openai-organization") == "org-fake"
