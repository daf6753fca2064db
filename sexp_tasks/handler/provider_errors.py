"""What a failed model request was: one ProviderError, with a reason and a key-free message, for
any failure litellm reports (llm.py translates them here; retries.py reads `retryable`)."""

from __future__ import annotations

from typing import Any

from ..redact import mask_urls_in, scrub


class ProviderError(Exception):
    """A model request that failed; kind is the TASK_FAILURE reason, status the provider's HTTP
    status when it gave one, retryable whether sending it again may succeed (a rate limit, a
    timeout, a lost connection, a 5xx: handler/retries.py); partial the text a streamed answer
    gave before it broke ("" when none)."""

    def __init__(self, kind: str, message: str, status: int | None = None, retryable: bool = False) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.retryable = retryable
        self.partial = ""


def translate_error(litellm: Any, exc: Exception) -> ProviderError:
    """One ProviderError, with a reason and a key-free message, for any litellm failure."""
    table: list[tuple[Any, str, str]] = [
        (
            litellm.ContextWindowExceededError,
            "context_window",
            "the prompt is longer than the model's context window",
        ),
        (litellm.RateLimitError, "rate_limit", "the provider's rate limit was hit"),
        (litellm.Timeout, "timeout", "the model did not answer in time"),
        (litellm.AuthenticationError, "authentication", "the provider refused the API key (check it is set)"),
        (litellm.PermissionDeniedError, "authentication", "the provider denied access to this model"),
        (litellm.NotFoundError, "bad_request", "the provider does not know this model or endpoint"),
        (litellm.BadRequestError, "bad_request", "the provider rejected the request"),
        (litellm.APIConnectionError, "connection", "cannot reach the provider"),
    ]
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    for kind_class, kind, text in table:
        if isinstance(exc, kind_class):
            return ProviderError(kind, f"{text}: {_detail(exc)}", status, kind in _RETRYABLE)
    if _lost_connection(exc):  # litellm reports it as an HTTP 500 it never received
        message = f"connection error: the provider closed the connection: {_detail(exc)}"
        return ProviderError("connection", message, status, True)
    if "missing credentials" in str(exc).lower() or "api_key client option must be set" in str(exc):
        # litellm reports a missing key as an internal error (HTTP 500); say what it is.
        return ProviderError(
            "authentication",
            f"no API key for this provider (set its key, e.g. OPENAI_API_KEY): {_detail(exc)}",
        )
    label = f"provider error (HTTP {status})" if status else "provider error"
    transient = not isinstance(status, int) or status >= 500 or status in (408, 409)
    return ProviderError("provider_error", f"{label}: {_detail(exc)}", status, transient)


_RETRYABLE = frozenset(("rate_limit", "timeout", "connection"))


# The reasons a ProviderError gives (a TASK_FAILURE's `reason`), as a mock reply may script them.
REASONS = (
    "rate_limit",
    "timeout",
    "connection",
    "authentication",
    "bad_request",
    "context_window",
    "provider_error",
)


def scripted_error(kind: str, status: int | None = None, message: str | None = None) -> ProviderError:
    """The ProviderError a scripted reply stands for (a mock reply's `error`, a cassette's recorded
    failure): retryable as the provider's own error of that reason and status would be."""
    transient = kind in _RETRYABLE or (
        kind == "provider_error" and (status is None or status >= 500 or status in (408, 409))
    )
    return ProviderError(kind, message or f"{kind.replace('_', ' ')} (scripted)", status, transient)


def falls_back(err: ProviderError) -> bool:
    """Whether a model chain moves to its next model after err (SPEC §11.4): after any provider
    error but a rejected request (HTTP 400: what was asked is wrong, whoever is asked); a model
    the provider does not know (404) is its own failure, and falls back."""
    return err.kind != "bad_request" or err.status == 404


def _lost_connection(exc: BaseException) -> bool:
    """Whether exc comes from a connection that broke (openai's APIConnectionError, below the
    InternalServerError litellm makes of it), not from an answer the provider sent."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if any(kind.__name__ == "APIConnectionError" for kind in type(cause).__mro__):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def _detail(exc: Exception) -> str:
    """The exception's own message, shortened and scrubbed of keys."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return scrub(mask_urls_in(text)[:300])  # masked whole: a URL cut short could keep its password
