"""One model turn: the request it sends and the answer it gets (SPEC §11.2).

A `ModelRequest` is built once per model turn and never changed: a request that must go without
its response_format (the provider refused it) is a new request. Its `fingerprint()` is the one
key of a request — the journal, cassettes, the response cache and `--reuse` all key on it —
computed once a request: `for_model` of its own model is the request itself, and `streamed` hands
it on. The stream flag is how the request travels, not what it asks, so it is not part of the key.

A `ModelAnswer` is what came back and what it cost; `source` says whether it was paid for now,
reused from an earlier run, answered from the cache or replayed from a cassette.

`as_record()` of each is the JSON the store and cassettes keep; `from_record()` also reads what
earlier versions wrote (the reply's text under `content`, no model or source), and the
`legacy_*_key()`s are the keys they wrote, so old stores and cassettes still answer.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Literal

from ..lang.values import well_formed
from .data_urls import elide_messages

AnswerSource = Literal["paid", "reused", "cached", "replayed"]
ANSWER_SOURCES: tuple[AnswerSource, ...] = ("paid", "reused", "cached", "replayed")


@dataclass(frozen=True)
class ModelRequest:
    """What one model turn sends: the model, the conversation so far, the tools offered, the
    generation settings (OpenAI names: `temperature`, `max_tokens`, `extra`...), the
    response_format (None when not sent) and whether the answer is streamed. Transport settings
    (api_base, timeout, retries) are not part of it. Build it with `ModelRequest.build`."""

    model: str
    messages: tuple[dict[str, Any], ...]
    tools: tuple[dict[str, Any], ...] = ()
    generation: Mapping[str, Any] = field(default_factory=dict)
    response_format: Mapping[str, Any] | None = None
    stream: bool = False

    @classmethod
    def build(
        cls,
        model: str,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        generation: Mapping[str, Any] | None = None,
        response_format: Mapping[str, Any] | None = None,
        stream: bool = False,
    ) -> ModelRequest:
        """The request, holding JSON-ready copies of its parts (a later turn cannot change it);
        a lone surrogate in a message (from a JSON escape in an input) becomes U+FFFD, as it is
        sent; a generation setting set to None is not sent."""
        return cls(
            model=model,
            messages=tuple(well_formed([dict(message) for message in messages])),
            tools=tuple(dict(tool) for tool in tools or ()),
            generation={key: value for key, value in (generation or {}).items() if value is not None},
            response_format=None if response_format is None else dict(response_format),
            stream=stream,
        )

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> ModelRequest:
        """The request a store or cassette kept (as_record's shape, today's and earlier ones')."""
        return cls.build(
            str(record.get("model") or ""),
            list(record.get("messages") or []),
            list(record.get("tools") or []),
            dict(record.get("generation") or {}),
            record.get("response_format"),
        )

    def as_record(self) -> dict[str, Any]:
        """The request as JSON-ready data: what a recorded turn keeps, `sexp trace` shows and the
        fingerprint digests; an image's or PDF's data URL elided to its type, size and SHA-256
        (attachments.elided_url: a record read back has the same fingerprint)."""
        return {
            "model": self.model,
            "messages": elide_messages(self.messages),
            "generation": dict(self.generation),
            "response_format": None if self.response_format is None else dict(self.response_format),
            "tools": [dict(tool) for tool in self.tools],
        }

    def fingerprint(self) -> str:
        """The request's one key: a digest of everything it asks (not how it travels)."""
        return self._fingerprint

    @cached_property
    def _fingerprint(self) -> str:  # computed once a request, and handed on by streamed()
        return digest(self.as_record())

    def without_response_format(self) -> ModelRequest:
        """The same request sent without response_format (the schema is in the prompt only)."""
        return replace(self, response_format=None)

    def for_model(self, model: str) -> ModelRequest:
        """The same request asked of another model (a chain's next: SPEC §11.4), with its own
        fingerprint; this very request when model is its own."""
        return self if model == self.model else replace(self, model=model)

    def streamed(self, stream: bool = True) -> ModelRequest:
        """The same request, streamed or not: its fingerprint is the same, and handed on when it
        was computed (a turn computes one)."""
        if stream == self.stream:
            return self
        changed = replace(self, stream=stream)
        if "_fingerprint" in self.__dict__:
            changed.__dict__["_fingerprint"] = self.__dict__["_fingerprint"]
        return changed

    def litellm_arguments(self) -> dict[str, Any]:
        """The request as litellm.completion's keyword arguments: each generation setting under
        its own name, and each of `extra`'s; tools and response_format only when there are any."""
        arguments: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in self.messages]}
        settings = dict(self.generation)
        extra = settings.pop("extra", None) or {}
        arguments.update(settings)
        if extra:  # sent as given, even a setting litellm would drop for this provider (SPEC §11.1)
            arguments.update(extra)
            arguments["allowed_openai_params"] = list(extra)
        if self.tools:
            arguments["tools"] = [dict(tool) for tool in self.tools]
        if self.response_format is not None:
            arguments["response_format"] = dict(self.response_format)
        if self.stream:
            arguments["stream"] = True
            arguments["stream_options"] = {"include_usage": True}
        return arguments

    # The keys earlier versions wrote ----------------------------------------------------------
    def legacy_cassette_key(self) -> str:
        """The key a cassette recorded before this module existed holds for this request: a
        digest of its model, messages and tools only."""
        parts = {"model": self.model, "messages": list(self.messages), "tools": list(self.tools)}
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode("utf-8")).hexdigest()

    def legacy_turn_key(self) -> str:
        """The fingerprint a model turn's step was journaled under before this module existed:
        model, messages and tools (None for none), then the generation settings and the
        response_format when either is set."""
        extra = (dict(self.generation), self.response_format)
        parts = (self.model, list(self.messages), list(self.tools) or None, *(extra if any(extra) else ()))
        text = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def digest(record: Mapping[str, Any]) -> str:
    """A request record's fingerprint: its JSON's SHA-256 (32 hex digits)."""
    text = json.dumps(record, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass(frozen=True)
class ModelAnswer:
    """One assistant message, what it cost, which model gave it, and where it came from."""

    text: str
    tool_calls: tuple[dict[str, Any], ...] = ()  # each {"id", "name", "arguments": JSON text}
    finish_reason: str | None = "stop"  # None: the response held no choice at all
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_ms: float = 0.0
    model: str | None = None  # the model that answered, when known
    source: AnswerSource = "paid"

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_record(self) -> dict[str, Any]:
        """The answer as JSON-ready data (the text under `content`, as earlier versions kept it)."""
        return {
            "content": self.text,
            "tool_calls": [dict(call) for call in self.tool_calls],
            "finish_reason": self.finish_reason,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": self.cost_usd,
            "latency_ms": self.latency_ms,
            "model": self.model,
            "source": self.source,
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> ModelAnswer:
        """The answer a store or cassette kept, today's shape or an earlier one's."""
        source = record.get("source")
        return cls(
            text=str(record.get("content", record.get("text")) or ""),
            tool_calls=tuple(dict(call) for call in record.get("tool_calls") or ()),
            finish_reason=record.get("finish_reason", "stop"),
            prompt_tokens=int(record.get("prompt_tokens") or 0),
            completion_tokens=int(record.get("completion_tokens") or 0),
            cost_usd=float(record.get("cost_usd") or 0.0),
            latency_ms=float(record.get("latency_ms") or 0.0),
            model=record.get("model"),
            source=source if source in ANSWER_SOURCES else "paid",
        )

    def answered_from(self, source: AnswerSource) -> ModelAnswer:
        """This answer given again without a request: it cost nothing and took no time now."""
        return replace(self, source=source, cost_usd=0.0, latency_ms=0.0)
