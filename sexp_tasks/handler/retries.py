"""Sending a model request again (SPEC §11.1): a rate limit or a transient provider error (a 5xx,
a timeout, a lost connection) is retried after an exponentially growing wait, at most
`max_retries` times; each retry is noted (the task's notes and `sexp trace` show them). A task
call's time limit (`<limits timeout="S">`) bounds every request and every wait of the call.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..results import TaskError
from .contract import HandlerConfig
from .model_request import ModelAnswer
from .provider_errors import ProviderError

DEFAULT_BASE_DELAY = 0.5  # seconds before the first retry; each later one waits twice as long
MAX_DELAY = 30.0
# The first wait, in seconds, when set (tests make it tiny); not a setting of its own.
BASE_DELAY_VARIABLE = "SEXP_RETRY_BASE_DELAY"


def base_delay() -> float:
    """The first retry's wait: SEXP_RETRY_BASE_DELAY when it is a number ≥ 0, else 0.5 s."""
    try:
        seconds = float(os.environ.get(BASE_DELAY_VARIABLE, ""))
    except ValueError:
        return DEFAULT_BASE_DELAY
    return seconds if 0 <= seconds <= MAX_DELAY else DEFAULT_BASE_DELAY


def failure(err: ProviderError, model: str, retries: int = 0) -> TaskError:
    """TASK_FAILURE with the reason of a request's error, and the retries it took, if any."""
    details: dict[str, Any] = {"model": model}
    message = err.message
    if retries:
        details["retries"] = retries
        message += f" (after {retries} retries)"
    return TaskError("TASK_FAILURE", message, reason=err.kind, details=details)


def request_limits(settings: Any, time_limit: float | None) -> dict[str, Any]:
    """The HandlerConfig fields of retries and timeouts, from the settings (max_retries,
    request_timeout) and a template's time limit (<limits timeout>)."""
    return {
        "num_retries": int(settings.max_retries),
        "timeout": float(settings.request_timeout),
        "time_limit": time_limit,
        "retry_delay": base_delay(),
    }


def backoff(retry: int, base: float) -> float:
    """The wait before retry number `retry` (from 1): base, 2·base, 4·base ..., at most 30 s."""
    return min(MAX_DELAY, base * 2 ** (retry - 1))


@dataclass(frozen=True)
class Deadline:
    """When a task call must be done by (time.monotonic()), from its time limit in seconds."""

    limit_s: float
    ends_at: float

    @classmethod
    def after(cls, limit_s: float) -> Deadline:
        return cls(limit_s, time.monotonic() + limit_s)

    def left(self) -> float:
        return self.ends_at - time.monotonic()

    def passed(self) -> ProviderError:
        """The error of a call that reached its time limit."""
        return ProviderError(
            "timeout",
            f'the task call did not finish within its time limit (<limits timeout="{self.limit_s:g}">)',
        )


class Attempts:
    """The requests of one model turn: sends, and sends again what may be retried.

    A turn may be sent in several goes (structured.send_with_schema_fallback first sends a request carrying
    response_format without retries): a go that follows a failed one is itself a retry, unless
    it is the same turn without the response_format the provider refused."""

    def __init__(
        self,
        config: HandlerConfig,
        deadline: Deadline | None = None,
        sleep: Callable[[float], Any] = time.sleep,
    ) -> None:
        self.max_retries = config.num_retries
        self.timeout = config.timeout
        self.base = config.retry_delay
        self.deadline = deadline
        self.sleep = sleep
        self.retries: list[dict[str, Any]] = []  # {"retry", "reason", "error", "delay_s"}
        self._failed: tuple[ProviderError, bool] | None = None  # the last go's error, and its response_format

    def send(self, attempt: Callable[[float], ModelAnswer], retries: int, with_format: bool) -> ModelAnswer:
        """attempt(timeout)'s answer, retrying it up to `retries` times; the last ProviderError."""
        if self._failed is not None:
            failed, had_format = self._failed
            self._failed = None
            if not (had_format and not with_format):  # else: sent without what was refused
                self._before_retry(failed, with_format)
        left = retries
        while True:
            try:
                return attempt(self._request_timeout())
            except ProviderError as err:
                if self.deadline is not None and err.kind == "timeout" and self.deadline.left() <= 0:
                    err = self.deadline.passed()
                if left <= 0 or not err.retryable:
                    self._failed = (err, with_format)
                    raise err from None
                left -= 1
                self._before_retry(err, with_format)

    def _before_retry(self, failed: ProviderError, with_format: bool) -> None:
        """Note the retry and wait for it; failed again when it may not be made (not retryable,
        no retries left, or the wait would pass the time limit)."""
        delay = backoff(len(self.retries) + 1, self.base)
        too_late = self.deadline is not None and self.deadline.left() <= delay
        if not failed.retryable or len(self.retries) >= self.max_retries or too_late:
            self._failed = (failed, with_format)
            raise failed
        self.retries.append(
            {"retry": len(self.retries) + 1, "reason": failed.kind, "error": failed.message, "delay_s": delay}
        )
        self.sleep(delay)

    def _request_timeout(self) -> float:
        """The request's timeout: request_timeout, or less when the time limit is nearer."""
        if self.deadline is None:
            return self.timeout
        left = self.deadline.left()
        if left <= 0:
            raise self.deadline.passed()
        return min(self.timeout, left)
