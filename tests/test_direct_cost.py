"""A call on the direct path (handler/direct_call.py) is priced as litellm.completion prices it:
from the answer's whole usage, so cached prompt tokens are charged at their cached price."""

from __future__ import annotations

import pytest
from llm_server import LLMServer, Scripted

from sexp_tasks.handler import llm
from sexp_tasks.handler.model_request import ModelRequest
from sexp_tasks.handler.provider_errors import ProviderError

MODEL = "openai/gpt-4o-mini"  # priced by litellm, with a cheaper price for cached prompt tokens
CACHED = {
    "prompt_tokens": 10_000,
    "completion_tokens": 100,
    "prompt_tokens_details": {"cached_tokens": 8_000},
}


@pytest.mark.parametrize("usage", [CACHED, {"prompt_tokens": 10_000, "completion_tokens": 100}])
def test_the_direct_path_charges_what_litellm_completion_charges(
    server: LLMServer, monkeypatch: pytest.MonkeyPatch, usage: dict[str, object]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-direct-cost")
    monkeypatch.delenv("SEXP_LLM_TRANSPORT", raising=False)
    request = ModelRequest.build(MODEL, [{"role": "user", "content": "hi"}])
    costs = []
    for direct in ("0", "1"):
        monkeypatch.setenv("SEXP_LLM_DIRECT", direct)
        server.script(Scripted("hello", usage=usage))
        costs.append(llm.complete(request, api_base=server.base_url, timeout=30.0).cost_usd)
    litellm_cost, direct_cost = costs
    assert litellm_cost > 0
    assert direct_cost == pytest.approx(litellm_cost)
    if usage is CACHED:  # the cached tokens' discount is applied: less than all at the full price
        assert direct_cost < llm.estimate_cost(MODEL, 10_000, 100)


def test_a_call_without_a_key_is_an_authentication_failure_on_either_path(
    server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a key nothing is sent: the call fails as litellm.completion fails it, an
    authentication failure that is not retried (the direct path once sent it keyless)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("SEXP_LLM_TRANSPORT", raising=False)
    request = ModelRequest.build(MODEL, [{"role": "user", "content": "hi"}])
    for direct in ("0", "1"):
        monkeypatch.setenv("SEXP_LLM_DIRECT", direct)
        with pytest.raises(ProviderError) as failed:
            llm.complete(request, api_base=server.base_url, timeout=30.0)
        assert (failed.value.kind, failed.value.retryable) == ("authentication", False)
    assert server.requests == []
