"""Reading a finished (or stopped) batch (SPEC §11.5): `sexp trace BATCH_ID`'s summary, its rows
by status, its errors grouped by type and reason, tokens and cost by template, the slowest rows.
The SQL is in runs/batches.py; this module only arranges what it returns."""

from __future__ import annotations

import re
from typing import Any

from .batch_scores import batch_scores, score_errors
from .batches import batch, batch_reruns, batch_rows, template_spending
from .store import Store

SLOWEST = 5  # how many of the slowest rows the summary names
NOT_RUN = "not run"  # rows of the input the store holds nothing for (the batch stopped before them)

# `p.sexp:2:1: error: INVALID_OUTPUT empty: the answer is empty`: the row's position, then either
# a task's `TYPE reason: message` (diagnostics.failed_result_line) or a program's own message.
_POSITION = re.compile(r"\A(?:\S+:\d+:\d+: )?(?:error: )?")
_TYPED = re.compile(r"\A([A-Z][A-Z0-9_]+)(?: ([^\s:]+))?: ")


def error_kind(error: str | None) -> tuple[str, str]:
    """(type, reason) of a row's error: a failed task's type and reason (or resource, or "");
    for any other error, ("error", its message without the position): equal messages group."""
    text = _POSITION.sub("", error or "", count=1)
    typed = _TYPED.match(text)
    if typed:
        return typed.group(1), typed.group(2) or ""
    return "error", text


def batch_report(store: Store, batch_id: str) -> dict[str, Any] | None:
    """The summary of the batch, None when the store has no such batch: id, program, data,
    status, started_at, ended_at, rows (count by status, `not run` included, and total), errors
    (type, reason, rows, example_row, example), templates (name, calls, tokens, cost_usd),
    slowest (index, run_id, status, seconds), scores (name, mean, min, max, n: one per metric, by
    name; empty for a batch not scored), score_errors (rows, example_row, example: the ok rows
    the scorer failed on), resumes, retried_rows, resumed_rows (batches.batch_reruns)."""
    found = batch(store, batch_id)
    if found is None:
        return None
    rows = batch_rows(store, batch_id)
    total = max(int(found["options"].get("total", 0)), len(rows))
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    if total > len(rows):
        counts[NOT_RUN] = total - len(rows)
    errors: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        if row["status"] != "error":
            continue
        kind, reason = error_kind(row["error"])
        group = errors.setdefault(
            (kind, reason),
            {"type": kind, "reason": reason, "rows": 0, "example_row": row["index"], "example": row["error"]},
        )
        group["rows"] += 1
    slowest = sorted(rows, key=lambda row: (-(row["seconds"] or 0.0), row["index"]))[:SLOWEST]
    return {
        "id": found["id"],
        "program": found["program"],
        "data": found["data"],
        "status": found["status"],
        "started_at": found["started_at"],
        "ended_at": found["ended_at"],
        "rows": {**counts, "total": total},
        "errors": sorted(errors.values(), key=lambda group: (-group["rows"], group["example_row"])),
        "templates": template_spending(store, batch_id),
        "slowest": [
            {
                "index": row["index"],
                "run_id": row["run_id"],
                "status": row["status"],
                "seconds": row["seconds"],
            }
            for row in slowest
        ],
        "scores": [metric.as_json() for metric in batch_scores(store, batch_id)],
        "score_errors": score_errors(store, batch_id),
        **batch_reruns(store, batch_id),
    }
