"""A provider's response (litellm's ModelResponse, or the one a stream's chunks build), read
duck-typed into a ModelAnswer: llm.py's answers, without litellm imported here."""

from __future__ import annotations

from typing import Any

from ..lang.values import well_formed
from ..results import round_cost
from .model_request import ModelAnswer


def response_answer(response: Any, latency_ms: float, model: str, is_mock: bool) -> ModelAnswer:
    """A ModelAnswer from a litellm ModelResponse; lone surrogates in its text replaced (U+FFFD).
    A response without choices (some filtering proxies send `"choices": []`) is an answer with no
    text and no finish reason: the Handler fails it as no answer, its usage still counted. Its
    model is the one the response names (a mock's: the mock model asked)."""
    choices = getattr(response, "choices", None)
    choice = choices[0] if choices else None
    message = choice.message if choice is not None else None
    calls = tuple(
        {
            "id": call.id or f"call_{i}",
            "name": well_formed(call.function.name or ""),
            "arguments": well_formed(call.function.arguments or ""),
        }
        for i, call in enumerate(getattr(message, "tool_calls", None) or [], 1)
    )
    usage = getattr(response, "usage", None)
    cost = 0.0
    answered = None if is_mock else getattr(response, "model", None)
    if not is_mock:
        # litellm prices every response as it builds it; asking again with completion_cost costs
        # milliseconds per call for models it has no price for (it formats a traceback each time).
        hidden = getattr(response, "_hidden_params", None) or {}
        cost = float(hidden.get("response_cost") or 0.0)
    return ModelAnswer(
        text=well_formed(getattr(message, "content", None) or ""),
        tool_calls=calls,
        finish_reason=getattr(choice, "finish_reason", None),
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        cost_usd=round_cost(cost),
        latency_ms=round(latency_ms, 1),
        model=answered if isinstance(answered, str) and answered else model,
    )
