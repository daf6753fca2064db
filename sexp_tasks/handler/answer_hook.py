"""The reuse and cache hook of a model call (SPEC §11.2), where today's Handler meets it: the
request dict and ModelReply the Handler passes around become the ModelRequest and ModelAnswer
that HandlerServices' `ready_answer` and `keep_answer` take (the one model call module will
build those itself)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from .contract import HandlerServices
from .llm import ModelReply
from .model_request import ModelAnswer, ModelRequest


def ready_reply(
    services: HandlerServices, request: dict[str, Any], cassette_key: str = ""
) -> tuple[ModelRequest | None, ModelReply | None]:
    """The request as asked (None when no hook wants it) and the reply it already has (reused
    or cached: counted as a model call, reserving and costing nothing; written to a recording
    cassette under cassette_key as a paid one is, so the cassette holds every turn), or None:
    send it."""
    if services.ready_answer is None and services.keep_answer is None:
        return None, None
    asked = ModelRequest.from_record(request)
    answer = services.ready_answer(asked) if services.ready_answer is not None else None
    if answer is None:
        return asked, None
    reply = ModelReply(
        answer.text,
        [dict(call) for call in answer.tool_calls],
        answer.finish_reason,
        answer.prompt_tokens,
        answer.completion_tokens,
        answer.cost_usd,
        answer.latency_ms,
        answer.source,
    )
    services.budget.spend(reply)
    if services.cassette is not None and not services.cassette.replaying:
        services.cassette.record(cassette_key, asked.model, reply)
    return asked, reply


def keep_reply(services: HandlerServices, asked: ModelRequest | None, reply: ModelReply) -> None:
    """Hand a paid reply to keep_answer (the cache), keyed by the request as it was asked."""
    if asked is not None and services.keep_answer is not None:
        services.keep_answer(asked, ModelAnswer.from_record(asdict(reply)))
