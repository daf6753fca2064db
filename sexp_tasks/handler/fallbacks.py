"""Fallback chains (SPEC §11.4): a task call may name several models. A turn asks the first; when
its request fails with a provider error after its retries (provider_errors.falls_back says which
do: not a rejected request, nor a budget's refusal, a stream stopped at its limits or an answer
that fails its format, which are no provider's failure), the same request is asked of the next
model, and the conversation stays with the model that answered. Each failed model is noted
(`fallbacks` in the notes, one line each in `sexp trace`); a turn every model failed is one
TASK_FAILURE naming each."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..results import TaskError


def fallback_note(turn: int, model: str, error: TaskError) -> dict[str, Any]:
    """The notes' record of a model that failed a turn, the next then asked: turn, model, reason,
    error and the retries it took."""
    note: dict[str, Any] = {"turn": turn, "model": model, "reason": error.reason, "error": error.message}
    retries = (error.details or {}).get("retries")
    if retries:
        note["retries"] = retries
    return note


def chain_failure(failed: list[dict[str, Any]], model: str, last: TaskError, ran_out: bool) -> TaskError:
    """The error of a turn whose chain ran out (every model failed) or stopped (the last one asked
    failed so that no other may be: the budget's refusal...): the last error, its message naming
    each model with its error, the earlier failures under its details' `fallbacks`."""
    earlier = "; ".join(f"{note['model']}: {note['error']}" for note in failed)
    message = f"every model failed: {earlier}; {model}: {last.message}" if ran_out else (
        f"{earlier}; then {model}: {last.message}"
    )
    return replace(last, message=message, details={**(last.details or {}), "fallbacks": list(failed)})


def turn_notes(fallbacks: list[dict[str, Any]], retries: list[dict[str, Any]]) -> dict[str, Any]:
    """A turn's fallbacks and retries, as its journaled step keeps them (the ones it has), so that a
    resumed run's notes and `sexp trace` still say which model failed and which answered."""
    kept = {"fallbacks": fallbacks, "retries": retries}
    return {key: list(value) for key, value in kept.items() if value}
