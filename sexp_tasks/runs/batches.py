"""Batches in the run store (SPEC §10.5): a batch, and one row per input line, each row naming
its own recorded run.

The tables are migration 2 of the store's schema (runs/schema.py): a store written before
batches existed gains them when it is opened.
A row is recorded `running` with its run's id when it starts, so that a batch killed mid-way
knows which run to resume for it; `ok` or `error` when it ends, with its score when the batch is
scored (migration 4, runs/batch_scores.py). Migration 4 also counts how a batch was run again:
the times it was resumed (`batches.resumes`), and per row the times its run was resumed and run
afresh after an error (`--retry-failed`).
"""

from __future__ import annotations

import json
import time
from typing import Any

from ..errors import BatchError, StoreError
from ..results import round_cost
from .store import Store, kept_json

OUT_KEYS = ("index", "status", "value", "error", "run_id", "tokens", "cost_usd", "seconds")
SCORE_KEYS = ("score", "score_error")  # OUT's keys after OUT_KEYS when the batch is scored


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
        """UPDATE batches SET status = 'running', ended_at = NULL, program_hash = COALESCE(?, program_hash),
                  resumes = COALESCE(resumes, 0) + 1
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


def record_scorer(store: Store, batch_id: str, name: str) -> None:
    """Record the procedure a batch scores its rows with (a resume scores with it again)."""
    found = store.query("SELECT options FROM batches WHERE id = ?", (batch_id,))
    if found:
        options = {**json.loads(found[0]["options"] or "{}"), "score": name}
        store.write("UPDATE batches SET options = ? WHERE id = ?", (json.dumps(options), batch_id))


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


def row_started(
    store: Store,
    batch_id: str,
    index: int,
    run_id: str,
    resumed: bool = False,
    retried: bool = False,
    deferred: bool = False,
) -> None:
    """Record a row as running its run run_id (its last outcome forgotten); resumed: the run is
    the row's recorded one, resumed; retried: a fresh run after an error (--retry-failed).
    deferred (runs/group_commit.py): only for a row recording into this same store, whose first
    step that acts commits this first."""
    store.write(
        """INSERT INTO batch_rows (batch_id, "index", run_id, status, resumed, retried)
           VALUES (?, ?, ?, 'running', ?, ?)
           ON CONFLICT (batch_id, "index") DO UPDATE SET
               run_id = excluded.run_id, status = 'running', value = NULL, error = NULL, tokens = 0,
               cost_usd = 0, seconds = 0, score = NULL, score_name = NULL, score_error = NULL,
               resumed = COALESCE(resumed, 0) + excluded.resumed,
               retried = COALESCE(retried, 0) + excluded.retried""",
        (batch_id, index, run_id, int(resumed), int(retried)),
        deferred=deferred,
    )


def row_ended(store: Store, batch_id: str, row: dict[str, Any], score_name: str | None = None) -> None:
    """Record a finished row: the OUT line's fields (its score and score_error when it has them;
    score_name: the metric a plain number score counts under, the scorer's name)."""
    score = row.get("score")
    store.write(
        """UPDATE batch_rows SET status = ?, value = ?, error = ?, tokens = ?, cost_usd = ?, seconds = ?,
                  score = ?, score_name = ?, score_error = ?
           WHERE batch_id = ? AND "index" = ?""",
        (
            row["status"],
            kept_json(row["value"], ensure_ascii=False),  # exactly: a resumed batch writes it again
            row["error"],
            row["tokens"],
            row["cost_usd"],
            row["seconds"],
            None if score is None else json.dumps(score),
            None if score is None else score_name,
            row.get("score_error"),
            batch_id,
            row["index"],
        ),
    )


def stored_row(store: Store, batch_id: str, index: int, scored: bool = False) -> dict[str, Any] | None:
    """Row index of the batch as its OUT line (status `running` for one that never ended);
    scored: with its score and score_error (a scored batch's lines)."""
    rows = store.query('SELECT * FROM batch_rows WHERE batch_id = ? AND "index" = ?', (batch_id, index))
    if not rows:
        return None
    found = rows[0]
    found["value"] = json.loads(found["value"]) if found["value"] is not None else None
    found["score"] = json.loads(found["score"]) if found.get("score") is not None else None
    return {key: found.get(key) for key in (OUT_KEYS + SCORE_KEYS if scored else OUT_KEYS)}


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


def batch_reused_turns(store: Store, batch_id: str) -> int:
    """How many model turns of the batch's rows took a --reuse run's answer instead of being sent."""
    rows = store.query(
        """SELECT COUNT(*) AS reused FROM batch_rows b JOIN steps s ON s.run_id = b.run_id
           WHERE b.batch_id = ? AND s.kind = 'turn'
             AND json_extract(s.result, '$.notes.reply.source') = 'reused'""",
        (batch_id,),
    )
    return int(rows[0]["reused"])


def batch_summary(store: Store, batch_id: str) -> dict[str, Any] | None:
    """A batch as `sexp runs` shows it: id, program, status, times, rows ok and total, tokens, cost."""
    found = batch(store, batch_id)
    if found is None:
        return None
    counts = store.query(
        """SELECT COUNT(CASE WHEN status = 'ok' THEN 1 END) AS ok,
                  COUNT(CASE WHEN status = 'error' THEN 1 END) AS error,
                  COUNT(CASE WHEN status = 'running' THEN 1 END) AS running,
                  COALESCE(SUM(tokens), 0) AS tokens,
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
        "error": int(counts["error"]),
        "running": int(counts["running"]),
        "total": int(found["options"].get("total", 0)),
        "tokens": int(counts["tokens"]),
        "cost_usd": round_cost(counts["cost_usd"]),
    }


def batch_reruns(store: Store, batch_id: str) -> dict[str, int]:
    """How a batch was run again: resumes (times the batch was resumed), retried_rows (rows run
    afresh after an error, --retry-failed), resumed_rows (rows whose recorded run was resumed)."""
    found = store.query("SELECT COALESCE(resumes, 0) AS resumes FROM batches WHERE id = ?", (batch_id,))
    rows = store.query(
        """SELECT COUNT(CASE WHEN retried > 0 THEN 1 END) AS retried,
                  COUNT(CASE WHEN resumed > 0 THEN 1 END) AS resumed FROM batch_rows WHERE batch_id = ?""",
        (batch_id,),
    )[0]
    return {
        "resumes": int(found[0]["resumes"]) if found else 0,
        "retried_rows": int(rows["retried"]),
        "resumed_rows": int(rows["resumed"]),
    }


def recent_batches(store: Store, limit: int) -> list[dict[str, Any]]:
    """The newest batches first (at most limit), each as batch_summary gives it."""
    found = store.query("SELECT id FROM batches ORDER BY started_at DESC LIMIT ?", (limit,))
    summaries = (batch_summary(store, row["id"]) for row in found)
    return [summary for summary in summaries if summary is not None]


def runs_outside_batches(store: Store, limit: int) -> list[dict[str, Any]]:
    """The newest runs that are no batch's row (at most limit), as Store.recent_runs gives runs."""
    rows = store.query(
        """SELECT r.*, COUNT(s.key) - COUNT(CASE WHEN s.kind = 'turn' THEN 1 END) AS steps,
                  COALESCE(SUM(s.prompt_tokens + s.completion_tokens), 0) AS tokens,
                  COALESCE(SUM(s.cost_usd), 0) AS cost_usd
           FROM runs r LEFT JOIN steps s ON s.run_id = r.id
           WHERE NOT EXISTS (SELECT 1 FROM batch_rows b WHERE b.run_id = r.id)
           GROUP BY r.id ORDER BY r.started_at DESC LIMIT ?""",
        (limit,),
    )
    for row in rows:  # as Store.run shows it: a run whose process died is interrupted
        if row["status"] == "running" and not store.run_is_held(str(row["id"])):
            row["status"] = "interrupted"
    return rows


def batch_rows(store: Store, batch_id: str, status: str | None = None) -> list[dict[str, Any]]:
    """The rows the store holds for a batch, in input order (only those of status, if given):
    index, run_id, status, error, tokens, cost_usd, seconds, score, score_error."""
    only = " AND status = ?" if status is not None else ""
    params: tuple[Any, ...] = (batch_id, status) if status is not None else (batch_id,)
    rows = store.query(
        f"""SELECT "index", run_id, status, error, tokens, cost_usd, seconds, score, score_error
            FROM batch_rows WHERE batch_id = ?{only} ORDER BY "index"
        """,
        params,
    )
    for row in rows:
        row["score"] = json.loads(row["score"]) if row["score"] is not None else None
    return rows


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
