"""Structured output (SPEC §10.2): the response_format a task's JSON Schema is sent as, how a
provider's refusal of it is recognised, and the message that asks for a repaired answer."""

from __future__ import annotations

import re
from typing import Any

from . import llm
from .contract import OutputSpec
from .llm import ProviderError

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
# What a provider's refusal of response_format says (litellm's UnsupportedParamsError, an
# OpenAI-compatible server's 400): the parameter's name or the feature's.
_REFUSAL_WORDS = ("response_format", "response format", "json_schema", "structured output")


def response_format(spec: OutputSpec, model: str, template: str) -> dict[str, Any] | None:
    """The request's response_format: the JSON Schema of a json output, when `native` is
    `always`, or `auto` and litellm says the model supports response schemas; else None.
    A schema kind alone (schema="object") sends nothing: it is asked for in the prompt."""
    if spec.type != "json" or spec.json_schema is None or spec.native == "never":
        return None
    if spec.native == "auto" and not llm.supports_response_schema(model):
        return None
    return {"type": "json_schema", "json_schema": {"name": schema_name(template), "schema": spec.json_schema}}


def schema_name(template: str) -> str:
    """The template's name as OpenAI takes a schema name (`^[a-zA-Z0-9_-]{1,64}$`)."""
    return _UNSAFE.sub("_", template)[:64] or "output"


def refuses_response_format(error: ProviderError) -> bool:
    """Whether a failed call was the provider refusing response_format (so it is sent again without)."""
    if error.kind not in ("bad_request", "provider_error"):
        return False
    message = error.message.lower()
    return any(word in message for word in _REFUSAL_WORDS)


def refusal_warning(model: str) -> str:
    return f"{model} does not take response_format; the JSON Schema is asked for in the prompt only"


def repair_request(violations: list[str]) -> str:
    """The user message that sends an answer's format violations back and asks for a corrected one."""
    listed = "\n".join(f"- {violation}" for violation in violations)
    return (
        "Your answer does not have the required format:\n"
        f"{listed}\n"
        "Answer again with the whole corrected answer, in the format asked for."
    )
