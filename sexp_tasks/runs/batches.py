"""Batches in the run store (SPEC §10.5): a batch, and one row per input line, each row naming
its own recorded run.

The tables are migration 2 of the store's schema (runs/schema.py): a store written before
batches existed gains them when it is opened.
A row is recorded `running` with its run's id when it starts, so that a batch killed mid-way
knows which run to resume for it; `ok` or `error` when it ends.
"""

from __future__ import annotations

import json
import time
from typing import Any

from ..errors import BatchError, StoreError
from ..results import round_cost
from .store import Store, kept_json

OUT_KEYS = ("index", "status", "value", "error", "run_id", "tokens", "cost_usd", "seconds")


def lock_name(batch_id: str) -> str:
    return f"batch-{batch_id}"


def begin_batch(
    store: Store, batch_id: str, program: str, digest: str, data: str, options: dict[str, Any]
) -> Any:
    """Record a new batch; the lock held while it runs."""
    held = store.hold_run(lock_name(batch_id))
    store.write(
        """INSERT INTO batches (id, program, program_hash, data, options, status, started_at)
           VALUES (?, ?, ?, ?, ?, 'running', ?)""",
        (batch_id, program, digest, data, json.dumps(options), time.time()),
    )
    return held


def reopen_batch(store: Store, batch_id: str, digest: str | None) -> Any:
    """Mark a batch running again (a forced resume records the program's new hash); its lock."""
    try:
        held = store.hold_run(lock_name(batch_id))
    except StoreError:
        raise BatchError(f"batch {batch_id} is in use by another sexp process") from None
    if not store.query("SELECT 1 FROM batches WHERE id = ?", (batch_id,)):  # pruned meanwhile
        held.close()
        raise BatchError(f"unknown batch '{batch_id}' in {store.path}")
    store.write(
        """UPDATE batches SET status = 'running', ended_at = NULL, program_hash = COALESCE(?, program_hash)
           WHERE id = ?""",
        (digest, batch_id),
    )
    return held


def update_input(store: Store, batch_id: str, total: int, digest: str) -> None:
    """Record a batch's edited input (a forced resume): its rows and digest; rows past its end go."""
    found = store.query("SELECT options FROM batches WHERE id = ?", (batch_id,))
    options = (
        {**json.loads(found[0]["options"] or "{}"), "total": total, "data_digest": digest} if found else {}
    )
    store.write("UPDATE batches SET options = ? WHERE id = ?", (json.dumps(options), batch_id))
    store.write('DELETE FROM batch_rows WHERE batch_id = ? AND "index" >= ?', (batch_id, total))


def end_batch(store: Store, batch_id: str, status: str) -> None:
    store.write("UPDATE batches SET status = ?, ended_at = ? WHERE id = ?", (status, time.time(), batch_id))


def batch(store: Store, batch_id: str) -> dict[str, Any] | None:
    """The batch's row with its options decoded, None when the store has no such batch; one whose
    process died is `interrupted`."""
    rows = store.query("SELECT * FROM batches WHERE id = ?", (batch_id,))
    if not rows:
        return None
    found = rows[0]
    found["options"] = json.loads(found["options"] or "{}")
    if found["status"] == "running" and not store.run_is_held(lock_name(batch_id)):
        found["status"] = "interrupted"
    return found


def row_started(store: Store, batch_id: str, index: int, run_id: str) -> None:
    store.write(
        """INSERT OR REPLACE INTO batch_rows (batch_id, "index", run_id, status)
           VALUES (?, ?, ?, 'running')""",
        (batch_id, index, run_id),
    )


def row_ended(store: Store, batch_id: str, row: dict[str, Any]) -> None:
    """Record a finished row: the OUT line's fields."""
    store.write(
        """UPDATE batch_rows SET status = ?, value = ?, error = ?, tokens = ?, cost_usd = ?, seconds = ?
           WHERE batch_id = ? AND "index" = ?""",
        (
            row["status"],
            kept_json(row["value"], ensure_ascii=False),  # exactly: a resumed batch writes it again
            row["error"],
            row["tokens"],
            row["cost_usd"],
            row["seconds"],
            batch_id,
            row["index"],
        ),
    )


def stored_row(store: Store, batch_id: str, index: int) -> dict[str, Any] | None:
    """Row index of the batch as its OUT line (status `running` for one that never ended)."""
    rows = store.query('SELECT * FROM batch_rows WHERE batch_id = ? AND "index" = ?', (batch_id, index))
    if not rows:
        return None
    found = rows[0]
    found["value"] = json.loads(found["value"]) if found["value"] is not None else None
    return {key: found[key] for key in OUT_KEYS}


def batch_spent(store: Store, batch_id: str) -> float:
    """What the runs of a batch's rows have cost so far, finished or not."""
    rows = store.query(
        """SELECT COALESCE(SUM(s.cost_usd), 0) AS cost FROM batch_rows b JOIN steps s ON s.run_id = b.run_id
           WHERE b.batch_id = ?""",
        (batch_id,),
    )
    return float(rows[0]["cost"])


def batch_refused_calls(store: Store, batch_id: str) -> int:
    """How many task calls of the batch's rows the cost budget refused (each is a FAILED step)."""
    rows = store.query(
        """SELECT COUNT(*) AS refused FROM batch_rows b JOIN steps s ON s.run_id = b.run_id
           WHERE b.batch_id = ? AND s.kind = 'task' AND s.status = 'FAILED'
             AND json_extract(s.result, '$.error.type') = 'RESOURCE_EXHAUSTION'
             AND json_extract(s.result, '$.error.resource') = 'cost'""",
        (batch_id,),
    )
    return int(rows[0]["refused"])


def batches_of_runs(store: Store, run_ids: list[str]) -> dict[str, tuple[str, int]]:
    """For each of run_ids that is a batch's row: (the batch's id, the row's index)."""
    if not run_ids:
        return {}
    marks = ", ".join("?" for _ in run_ids)
    rows = store.query(f'SELECT batch_id, "index", run_id FROM batch_rows WHERE run_id IN ({marks})', run_ids)
    return {row["run_id"]: (row["batch_id"], row["index"]) for row in rows}


def batch_summary(store: Store, batch_id: str) -> dict[str, Any] | None:
    """A batch as `sexp runs` shows it: id, program, status, times, rows ok and total, tokens, cost."""
    found = batch(store, batch_id)
    if found is None:
        return None
    counts = store.query(
        """SELECT COUNT(CASE WHEN status = 'ok' THEN 1 END) AS ok, COALESCE(SUM(tokens), 0) AS tokens,
                  COALESCE(SUM(cost_usd), 0) AS cost_usd FROM batch_rows WHERE batch_id = ?""",
        (batch_id,),
    )[0]
    return {
        "id": found["id"],
        "program": found["program"],
        "status": found["status"],
        "started_at": found["started_at"],
        "ended_at": found["ended_at"],
        "ok": int(counts["ok"]),
        "total": int(found["options"].get("total", 0)),
        "tokens": int(counts["tokens"]),
        "cost_usd": round_cost(counts["cost_usd"]),
    }


def batch_rows(store: Store, batch_id: str, status: str | None = None) -> list[dict[str, Any]]:
    """The rows the store holds for a batch, in input order (only those of status, if given):
    index, run_id, status, error, tokens, cost_usd, seconds."""
    only = " AND status = ?" if status is not None else ""
    params: tuple[Any, ...] = (batch_id, status) if status is not None else (batch_id,)
    return store.query(
        f"""SELECT "index", run_id, status, error, tokens, cost_usd, seconds FROM batch_rows
            WHERE batch_id = ?{only} ORDER BY "index"
        """,
        params,
    )


def template_spending(store: Store, batch_id: str) -> list[dict[str, Any]]:
    """Per template its rows' task calls made, tokens and cost (most costly first): name, calls,
    tokens, cost_usd."""
    rows = store.query(
        """SELECT s.name AS name, COUNT(*) AS calls,
                  COALESCE(SUM(s.prompt_tokens + s.completion_tokens), 0) AS tokens,
                  COALESCE(SUM(s.cost_usd), 0) AS cost_usd
           FROM batch_rows b JOIN steps s ON s.run_id = b.run_id
           WHERE b.batch_id = ? AND s.kind = 'task' GROUP BY s.name ORDER BY cost_usd DESC, s.name""",
        (batch_id,),
    )
    return [{**row, "tokens": int(row["tokens"]), "cost_usd": round_cost(row["cost_usd"])} for row in rows]
