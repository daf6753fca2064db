"""The request of a direct model call (direct_call.py): the one litellm.completion(**options)
would send, built by litellm's provider config (issue 23, point 3).

What decides the bytes sent is kept as litellm.completion does it: its provider resolution
(get_llm_provider), its checks and fixes of the messages, tools and stop, its parameter mapping
(get_optional_params, with unsupported settings dropped), the provider config's
validate_environment / get_complete_url / transform_request, and the key and base URL read from
where it reads them. tests/test_direct_call.py checks the same bytes reach the provider either way.

Only the providers of DIRECT_PROVIDERS take this path; llm.py sends everything else (a mock, an
unknown provider, a registered litellm callback, litellm-wide settings, SEXP_LLM_DIRECT=0) through
litellm.completion. direct_call.py sends the request and reads the answer: building a request
needs no HTTP client. litellm itself is passed in by llm.py, the one module that imports it."""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field
from typing import Any

# The providers whose request litellm.completion builds with the provider config alone (no SDK
# state, no signing, no per-model route): the direct path sends the same bytes for them (tested).
# openai goes through the OpenAI SDK inside litellm: its body is written as the SDK writes it
# (_openai_body).
DIRECT_PROVIDERS = frozenset({"openai", "anthropic", "mistral"})
# Those whose stream the direct path reads (OpenAI's chunks as its config's iterator gives them; the
# others' through litellm's CustomStreamWrapper, as litellm.completion hands them over).
DIRECT_STREAMS = frozenset({"openai", "anthropic", "mistral"})

KNOWN_PARAMS = 256  # the settings whose provider parameters are kept (a batch has a few)
_known_params: dict[str, dict[str, Any]] = {}  # JSON of (model, provider, settings) -> parameters

# The keys of a call's options that are litellm's, not the provider's.
_TRANSPORT = frozenset({"model", "messages", "timeout", "drop_params", "max_retries", "api_base"})


def enabled() -> bool:
    """Whether calls may take the direct path in this process: not when SEXP_LLM_DIRECT is 0
    (or false/no/off), which sends every call through litellm.completion."""
    return os.environ.get("SEXP_LLM_DIRECT", "").strip().lower() not in ("0", "false", "no", "off")


@dataclass
class Prepared:
    """One request built by litellm's provider config: where it goes, its headers and body, and
    what reading its answer needs."""

    provider: str
    model: str  # litellm's name for it, without the provider
    config: Any
    url: str
    headers: dict[str, str] = field(repr=False)  # they carry the API key
    data: dict[str, Any]
    body: bytes
    stream: bool
    messages: list[Any]
    optional_params: dict[str, Any]
    litellm_params: dict[str, Any]
    api_key: str | None = field(repr=False)
    json_mode: bool


def _optional_params(litellm: Any, model: str, provider: str, settings: dict[str, Any]) -> dict[str, Any]:
    """litellm's get_optional_params for these settings, a copy of its first answer: it reads
    neither the messages nor anything that changes between calls (litellm-wide settings send the
    call through litellm.completion), and it cost a fifth of a direct call's CPU (it scans every
    provider's name). Settings that are not JSON (a pydantic response_format) are asked every time."""
    try:
        key: str | None = json.dumps([model, provider, settings], sort_keys=True)
    except (TypeError, ValueError):
        key = None
    known = _known_params.get(key) if key is not None else None
    if known is None:
        known = litellm.utils.get_optional_params(
            model=model, custom_llm_provider=provider, drop_params=True, **settings
        )
        if key is not None:
            if len(_known_params) >= KNOWN_PARAMS:
                _known_params.clear()
            _known_params[key] = copy.deepcopy(known)
            return known
    return copy.deepcopy(known)


def prepare(litellm: Any, options: dict[str, Any]) -> Prepared | None:
    """The request litellm.completion(**options) would send, built by its provider config; None
    when this path does not cover the call (then litellm.completion sends it)."""
    if "mock_response" in options or "mock_tool_calls" in options or _configured(litellm):
        return None
    try:
        model, provider, dynamic_key, api_base = litellm.get_llm_provider(
            options["model"], api_base=options.get("api_base")
        )
    except Exception:  # an unknown provider: litellm.completion says what is wrong
        return None
    if provider not in DIRECT_PROVIDERS or (options.get("stream") and provider not in DIRECT_STREAMS):
        return None
    config = litellm.utils.ProviderConfigManager.get_provider_chat_config(
        model=model, provider=litellm.LlmProviders(provider)
    )
    if config is None or (provider == "openai" and _openai_configured(litellm)):
        return None
    settings = {key: value for key, value in options.items() if key not in _TRANSPORT}
    messages = _messages(litellm, config, model, provider, api_base, options["messages"], settings)
    stream = bool(settings.get("stream"))
    extra_headers = dict(settings.pop("extra_headers", None) or {})
    optional = _optional_params(litellm, model, provider, settings)
    optional.pop("max_retries", None)
    api_key = dynamic_key or _api_key(litellm, provider)
    if not api_key:  # litellm.completion refuses it before sending: an authentication failure, said so
        return None
    api_base = _api_base(litellm, provider, api_base)
    litellm_params = {"api_base": api_base, "drop_params": True, "custom_llm_provider": provider}
    json_mode = bool(optional.pop("json_mode", False))
    headers = config.validate_environment(
        headers=extra_headers,
        model=model,
        messages=messages,
        optional_params=optional,
        litellm_params=litellm_params,
        api_key=api_key,
        api_base=api_base,
    )
    url = config.get_complete_url(
        api_base=api_base,
        api_key=api_key,
        model=model,
        optional_params=optional,
        litellm_params=litellm_params,
        stream=stream,
    )
    if provider == "openai":
        sent = {key: value for key, value in optional.items() if key not in ("stream", "stream_options")}
        data = config.transform_request(
            model=model,
            messages=messages,
            optional_params=sent,
            litellm_params=litellm_params,
            headers=headers,
        )
        if stream:
            data["stream"] = True
            if optional.get("stream_options") is not None:
                data["stream_options"] = optional["stream_options"]
        body = _openai_body(data)
    elif provider == "anthropic":  # as litellm's AnthropicChatCompletion.completion builds it
        data = config.transform_request(
            model=model,
            messages=messages,
            optional_params={**_without(optional, "stream"), "is_vertex_request": False},
            litellm_params=litellm_params,
            headers=headers,
        )
        headers, data = _anthropic_filtered(litellm, headers, data, url, model)
        if stream:
            data["stream"] = True
        body = json.dumps(data).encode()
    else:  # as litellm's BaseLLMHTTPHandler.completion builds it
        extra = optional.pop("extra_body", None)
        data = config.transform_request(
            model=model,
            messages=messages,
            optional_params=optional,
            litellm_params=litellm_params,
            headers=headers,
        )
        if extra is not None:
            data = {
                **data,
                **config.transform_extra_body(
                    extra_body=extra, request=data, model=model, litellm_params=litellm_params
                ),
            }
        if stream and config.supports_stream_param_in_request_body:
            data["stream"] = True
        body = json.dumps(data).encode()
    if provider != "openai":  # litellm's own HTTP client names itself (the OpenAI SDK does too)
        headers = {**litellm.llms.custom_httpx.http_handler.get_default_headers(), **headers}
    return Prepared(
        provider,
        model,
        config,
        url,
        dict(headers),
        data,
        body,
        stream,
        messages,
        optional,
        litellm_params,
        api_key,
        json_mode,
    )


# litellm's module-wide settings that change what litellm.completion sends (aliases, headers and
# auth added to every request, fallbacks, preview features): set, a call keeps litellm.completion.
_GLOBALS = ("model_alias_map", "headers", "proxy_auth", "model_fallbacks", "enable_preview_features")


def _configured(litellm: Any) -> bool:
    return any(getattr(litellm, name, None) for name in _GLOBALS)


def _openai_configured(litellm: Any) -> bool:
    """Whether the OpenAI SDK would add to the request: defaults set on litellm.OpenAIConfig, or an
    organization or project it sends as a header."""
    named = (
        litellm.organization or os.environ.get("OPENAI_ORGANIZATION") or os.environ.get("OPENAI_PROJECT_ID")
    )
    return bool(named or litellm.OpenAIConfig.get_config())


def _messages(
    litellm: Any,
    config: Any,
    model: str,
    provider: str,
    api_base: str | None,
    messages: list[Any],
    settings: dict[str, Any],
) -> list[Any]:
    """The messages (and, in settings, the tools and stop) as litellm.completion checks and fixes
    them before it maps them for the provider (litellm/main.py: its first lines, then the
    developer role for providers without one, and Anthropic-only tool keys off other targets)."""
    main = litellm.main
    messages = main.validate_and_fix_openai_messages(messages=[dict(message) for message in messages])
    if "tools" in settings:
        settings["tools"] = main.validate_and_fix_openai_tools(tools=settings["tools"])
        if not main.is_claude_tool_target(custom_llm_provider=provider, model=model):
            settings["tools"] = main._drop_anthropic_only_tool_keys(tools=settings["tools"])
    if settings.get("tool_choice") is not None:
        settings["tool_choice"] = main.validate_chat_completion_tool_choice(
            tool_choice=settings["tool_choice"], model=model
        )
    if "stop" in settings:
        settings["stop"] = main.validate_openai_optional_params(stop=settings["stop"])
    messages = main.get_completion_messages(
        messages=messages,
        ensure_alternating_roles=False,
        user_continue_message=None,
        assistant_continue_message=None,
    )
    return list(
        config.translate_developer_role_to_system_role(
            messages=messages, model=model, custom_llm_provider=provider, api_base=api_base, model_info={}
        )
    )


def _without(params: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {key: value for key, value in params.items() if key not in keys}


def _anthropic_filtered(
    litellm: Any, headers: dict[str, Any], data: dict[str, Any], url: str, model: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Anthropic's headers and body with the beta features its endpoint does not take filtered
    out, as AnthropicChatCompletion.completion filters them."""
    headers, data = litellm.anthropic_beta_headers_manager.update_request_with_filtered_beta(
        headers=headers, request_data=data, provider="anthropic", api_base=url
    )
    body = litellm.anthropic_beta_gated_fields.strip_beta_gated_request_body(
        data, headers, drop_params=True, model=model, provider="anthropic"
    )
    return headers, dict(body)


def _openai_body(data: dict[str, Any]) -> bytes:
    """The body the OpenAI SDK writes for litellm's data: its parameters in litellm's order, its
    extra_body's merged in after them; compact JSON, UTF-8 as is (openai._utils._json)."""
    extra = data.pop("extra_body", None) or {}
    return json.dumps({**data, **extra}, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def _api_key(litellm: Any, provider: str) -> str | None:
    """The key litellm.completion would send for provider, read from where it reads it."""
    if provider == "openai":
        return litellm.api_key or litellm.openai_key or os.environ.get("OPENAI_API_KEY")
    if provider == "anthropic":
        return litellm.anthropic_key or litellm.api_key or os.environ.get("ANTHROPIC_API_KEY")
    return litellm.api_key or os.environ.get(f"{provider.upper()}_API_KEY")


def _api_base(litellm: Any, provider: str, api_base: str | None) -> str:
    """The base URL litellm.completion would send provider's request to."""
    if provider == "openai":
        return (
            api_base
            or litellm.api_base
            or os.environ.get("OPENAI_BASE_URL")
            or os.environ.get("OPENAI_API_BASE")
            or "https://api.openai.com/v1"
        )
    if provider == "anthropic":
        base = (
            api_base
            or litellm.api_base
            or os.environ.get("ANTHROPIC_API_BASE")
            or os.environ.get("ANTHROPIC_BASE_URL")
            or "https://api.anthropic.com/v1/messages"
        )
        if os.environ.get("LITELLM_ANTHROPIC_DISABLE_URL_SUFFIX", "").lower() in ("1", "true"):
            return base
        return str(litellm.litellm_core_utils.url_utils.ensure_api_route(base, "v1/messages"))
    return api_base or litellm.api_base or os.environ.get("MISTRAL_API_BASE") or "https://api.mistral.ai/v1"
