"""The litellm exception a failed direct call raises (direct_call.py): the one litellm.completion
raises for the same failure — an HTTP error status read by the provider config's error class, or
a connection refused or broken — mapped by litellm's own exception_type, so that
provider_errors.py reads both paths' failures alike. Apart from the sending, which alone touches
httpx: what is read here of a response is its status, text and headers."""

from __future__ import annotations

import json
from typing import Any

from .direct_request import Prepared


def status_error(litellm: Any, prepared: Prepared, response: Any) -> Exception:
    """The litellm exception for an HTTP error status. The OpenAI SDK reports the error body's
    `message`; litellm's own HTTP client the body as it came."""
    text = response.text
    if prepared.provider == "openai":
        try:
            error = json.loads(text).get("error")
        except (ValueError, AttributeError):
            error = None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            text = error["message"]
    return _mapped(
        litellm,
        prepared,
        prepared.config.get_error_class(
            error_message=text, status_code=response.status_code, headers=response.headers
        ),
    )


def lost_connection(litellm: Any, prepared: Prepared, exc: Exception) -> Exception:
    """The litellm exception for a connection refused or broken, as litellm.completion raises it:
    through the OpenAI SDK an InternalServerError caused by its APIConnectionError (a lost
    connection: provider_errors._lost_connection); through litellm's own HTTP client the provider's
    HTTP 500."""
    detail = f"{type(exc).__name__}: {exc}"
    if prepared.provider == "openai":
        cause = litellm.APIConnectionError(message=detail, llm_provider="openai", model=prepared.model)
        error = litellm.InternalServerError(
            message=f"OpenAIException - Connection error. {detail}",
            llm_provider="openai",
            model=prepared.model,
        )
        error.__cause__ = cause
        return error
    return _mapped(
        litellm,
        prepared,
        prepared.config.get_error_class(error_message=str(exc), status_code=500, headers=None),
    )


def _mapped(litellm: Any, prepared: Prepared, error: Exception) -> Exception:
    """error as litellm.completion raises it: mapped to its exception classes (RateLimitError,
    ContextWindowExceededError...) by its own exception_type."""
    try:
        return litellm.litellm_core_utils.exception_mapping_utils.exception_type(
            model=prepared.model, original_exception=error, custom_llm_provider=prepared.provider
        )
    except Exception as mapped:  # exception_type raises what it maps to
        return mapped
