"""Structured output (SPEC §10.2): the response_format a task's JSON Schema is sent as, how a
provider's refusal of it is recognised, and the message that asks for a repaired answer."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from . import llm
from .contract import OutputSpec
from .model_request import ModelAnswer, ModelRequest
from .provider_errors import ProviderError

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
# What a provider's refusal of response_format says (litellm's UnsupportedParamsError, an
# OpenAI-compatible server's 400): the parameter's name or the feature's.
_REFUSAL_WORDS = ("response_format", "response format", "json_schema", "structured output")


def response_format(spec: OutputSpec, model: str, template: str) -> dict[str, Any] | None:
    """The request's response_format: the JSON Schema of a json output, when `native` is
    `always`, or `auto` and litellm says the model supports response schemas; else None.
    A schema kind alone (schema="object") sends nothing: it is asked for in the prompt. It says
    `"strict": true` when the template's `strict` does, or leaves it unsaid and the schema can be."""
    if spec.type != "json" or spec.json_schema is None or spec.native == "never":
        return None
    if spec.native == "auto" and not llm.supports_response_schema(model):
        return None
    described: dict[str, Any] = {"name": schema_name(template), "schema": spec.json_schema}
    if spec.strict if spec.strict is not None else can_be_strict(spec.json_schema):
        described["strict"] = True  # constrained decoding, where the provider has it (SPEC §11.1)
    return {"type": "json_schema", "json_schema": described}


# The keywords whose value is a subschema, a list of them, or a dict of them by name.
_ONE_SCHEMA = ("items", "not", "if", "then", "else", "contains", "additionalProperties", "propertyNames")
_SCHEMA_LISTS = ("anyOf", "allOf", "oneOf", "prefixItems")
_SCHEMA_DICTS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")


def can_be_strict(schema: Any) -> bool:
    """Whether a JSON Schema can go with `"strict": true` by OpenAI's rules (the strictest of the
    providers'): every object schema in it closes additionalProperties and requires all its
    properties. A walk over the subschemas, not a recursion (the depth was bounded when checked)."""
    pending = [schema]
    while pending:
        node = pending.pop()
        if isinstance(node, list):  # items as a list (drafts before 2020-12)
            pending += node
        if not isinstance(node, dict):
            continue
        kinds = node.get("type")
        if kinds == "object" or (isinstance(kinds, list) and "object" in kinds) or "properties" in node:
            properties = node.get("properties") or {}
            if node.get("additionalProperties") is not False or not isinstance(properties, dict):
                return False
            if set(node.get("required") or ()) != set(properties):
                return False
        pending += [node[key] for key in _ONE_SCHEMA if key in node]
        pending += [item for key in _SCHEMA_LISTS if isinstance(node.get(key), list) for item in node[key]]
        for key in _SCHEMA_DICTS:
            pending += node[key].values() if isinstance(node.get(key), dict) else ()
    return True


def schema_name(template: str) -> str:
    """The template's name as OpenAI takes a schema name (`^[a-zA-Z0-9_-]{1,64}$`)."""
    return _UNSAFE.sub("_", template)[:64] or "output"


def refuses_response_format(error: ProviderError) -> bool:
    """Whether a failed call was the provider refusing response_format (so it is sent again without,
    and later calls of the process go without it): a 400-class error naming it. A 5xx or a
    connection error is transient whatever its message says, and changes nothing."""
    client_error = error.status is not None and 400 <= error.status < 500
    if not (error.kind == "bad_request" or (error.kind == "provider_error" and client_error)):
        return False
    message = error.message.lower()
    return any(word in message for word in _REFUSAL_WORDS)


# (model, api_base) pairs that refused response_format in this process: later calls go without it
# at once, rather than each paying for a refused request first.
_refused: set[tuple[str, str | None]] = set()


def send_with_schema_fallback(
    request: ModelRequest,
    api_base: str | None,
    num_retries: int,
    send: Callable[[ModelRequest, int], ModelAnswer],
) -> tuple[ModelAnswer, ModelRequest]:
    """send(request, num_retries)'s answer, and the request as sent: when the provider refused
    response_format, the same request went again without it (request.without_response_format).
    A request carrying response_format is first sent without retries, which would repeat a
    refusal; a failure that is not one is sent again with them."""
    if request.response_format is None:
        return send(request, num_retries), request
    where = (request.model, api_base)
    if where not in _refused:
        try:
            return send(request, 0), request
        except ProviderError as err:
            if not refuses_response_format(err):
                if num_retries == 0:
                    raise
                return send(request, num_retries - 1), request
        _refused.add(where)
    plain = request.without_response_format()
    return send(plain, num_retries), plain


def refusal_warning(model: str) -> str:
    """The one warning a refused response_format leaves in the notes."""
    return f"{model} does not take response_format; the JSON Schema is asked for in the prompt only"


def repair_request(violations: list[str]) -> str:
    """The user message that sends an answer's format violations back and asks for a corrected one."""
    listed = "\n".join(f"- {violation}" for violation in violations)
    return (
        "Your answer does not have the required format:\n"
        f"{listed}\n"
        "Answer again with the whole corrected answer, in the format asked for."
    )
