"""What a traced task step's notes say about its requests: each one sent again (`retries`) and
each model of a chain that failed a turn (`fallbacks`), read from the step's stored result and
shown as `sexp trace` lines."""

from __future__ import annotations

import json
from typing import Any

from ..diagnostics import preview


def step_retries(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The model requests a task step sent again (its result's notes `retries`: turn, retry,
    reason, error, delay_s); [] for none, or when the result cannot be read."""
    return step_notes_list(row, "retries")


def step_notes_list(row: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """The records a step's result's notes list under key (`retries`, `fallbacks`); [] for none,
    or when the result cannot be read."""
    try:
        record = json.loads(row.get("result") or "")
    except (ValueError, TypeError):
        return []
    notes = record.get("notes") if isinstance(record, dict) else None
    items = notes.get(key) if isinstance(notes, dict) else None
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def fallback_lines(fallbacks: list[dict[str, Any]]) -> list[str]:
    """`fallback (turn 1): openai/a failed: provider_error: ...; the next model asked`, one a
    model of a chain that failed a turn (SPEC §11.4)."""
    lines = []
    for note in fallbacks:
        head = f"fallback (turn {note.get('turn', '?')}): {note.get('model', '?')} failed"
        error = preview(str(note.get("error", "")), 100)
        lines.append(f"{head}: {note.get('reason', '?')}: {error}; the next model asked")
    return lines


def retry_lines(retries: list[dict[str, Any]]) -> list[str]:
    """`retry 1 (turn 1) after 0.5s: rate_limit: the provider's rate limit ...`, one a retry."""
    lines = []
    for retry in retries:
        delay = retry.get("delay_s")
        waited = f" after {delay:g}s" if isinstance(delay, (int, float)) else ""
        head = f"retry {retry.get('retry', '?')} (turn {retry.get('turn', '?')}){waited}"
        lines.append(f"{head}: {retry.get('reason', '?')}: {preview(str(retry.get('error', '')), 100)}")
    return lines
