"""`sexp runs` (recent runs, newest first), `sexp trace RUN_ID` (a run's tree of steps), `sexp
cache clear` and the line `sexp run` ends with."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..config import Settings
from ..diagnostics import error_line, report
from ..errors import UsageError
from ..handler.cost import format_cost
from ..redact import scrub
from ..runs import batches, pruning
from ..runs.answers import clear_cache
from ..runs.batch_reading import batch_report
from ..runs.store import Store
from ..runs.traces import (
    duration,
    format_duration,
    format_run_line,
    format_time,
    format_trace,
    run_summary,
    trace_json,
)
from .batch_reports import format_batch_report, format_batch_row

if TYPE_CHECKING:
    from ..runtime import Runtime

EXIT_OK, EXIT_ERROR = 0, 1


def open_store(settings: Settings) -> Store | None:
    """The run store, or None when there is none yet (looking must not create one)."""
    if not Path(settings.store).is_file():
        return None
    return Store(settings.store, create=False)


def runs_command(
    settings: Settings, as_json: bool, limit: int, out: TextIO | None = None, rows: bool = False
) -> int:
    """Print the most recent runs and batches, one a line (or a JSON list), at most limit: a batch
    on one line with its counts; rows: the runs instead, a batch's rows under their batch's line
    (limit counts runs). Nothing when there is no store."""
    out = out or sys.stdout
    store = open_store(settings)
    summaries: list[dict[str, Any]] = []
    lines: list[str] = []
    if store is not None:
        try:
            if rows:
                summaries = [run_summary(run) for run in store.recent_runs(limit)]
                lines = _listing(store, summaries)
            else:
                summaries = _runs_and_batches(store, limit)
                lines = [_entry_line(summary) for summary in summaries]
        finally:
            store.close()
    if as_json:
        out.write(json.dumps(summaries, ensure_ascii=False) + "\n")
    for line in [] if as_json else lines:
        out.write(scrub(line) + "\n")  # a batch's program, as shown
    out.flush()
    return EXIT_OK


def batch_rows_command(
    settings: Settings, batch_id: str, status: str | None, as_json: bool, out: TextIO | None = None
) -> int:
    """`sexp runs --batch BATCH_ID [--status ok|error]`: the batch's rows, one a line (or a JSON
    list), in input order. Exit 1 for a batch the store does not hold."""
    out = out or sys.stdout
    store = open_store(settings)
    try:
        found = None if store is None else batches.batch(store, batch_id)
        if found is None or store is None:
            report(error_line(f"unknown batch '{batch_id}'"))
            return EXIT_ERROR
        rows = batches.batch_rows(store, batch_id, status)
    finally:
        if store is not None:
            store.close()
    if as_json:
        out.write(json.dumps(rows, ensure_ascii=False) + "\n")
    for row in [] if as_json else rows:
        out.write(scrub(format_batch_row(row)) + "\n")
    out.flush()
    return EXIT_OK


def prune_command(
    settings: Settings, older_than: float | None, as_json: bool, out: TextIO | None = None
) -> int:
    """Delete the finished runs (older than older_than days, if given) and say how many:
    `pruned N runs[, M batches]`, or `{"runs": N, "batches": M}`. No store: nothing to prune."""
    if older_than is not None and not (math.isfinite(older_than) and older_than >= 0):
        raise UsageError(f"--older-than takes a number of days, 0 or more (not {older_than})")
    out = out or sys.stdout
    store = open_store(settings)
    pruned = pruning.Pruned()
    if store is not None:
        try:
            pruned = pruning.prune(store, older_than)
        finally:
            store.close()
    text = json.dumps({"runs": pruned.runs, "batches": pruned.batches}) if as_json else pruned.line()
    out.write(text + "\n")
    out.flush()
    return EXIT_OK


def cache_clear_command(settings: Settings, as_json: bool, out: TextIO | None = None) -> int:
    """`sexp cache clear`: remove every answer the store's cache holds and say how many,
    `cleared N cached answers` (or `{"answers": N}`). No store: 0, and none is made."""
    out = out or sys.stdout
    store = open_store(settings)
    removed = 0
    if store is not None:
        try:
            removed = clear_cache(store)
        finally:
            store.close()
    text = f"cleared {removed} cached answer{'' if removed == 1 else 's'}"
    out.write((json.dumps({"answers": removed}) if as_json else text) + "\n")
    out.flush()
    return EXIT_OK


def _listing(store: Store, summaries: list[dict[str, Any]]) -> list[str]:
    """The lines of `sexp runs`: a run of its own on a line; the runs of a batch's rows under
    their batch's line (`batch <id> ... <ok>/<total> ok ...`), indented, in row order, where the
    newest of them would be. A batch row's JSON summary gets "batch" and "batch_index"."""
    rows = batches.batches_of_runs(store, [summary["id"] for summary in summaries])
    members: dict[str, list[dict[str, Any]]] = {}
    for summary in summaries:
        if summary["id"] in rows:
            summary["batch"], summary["batch_index"] = rows[summary["id"]]
            members.setdefault(summary["batch"], []).append(summary)
    lines: list[str] = []
    for summary in summaries:
        batch_id = summary.get("batch")
        if batch_id is None:
            lines.append(format_run_line(summary))
        elif batch_id in members:
            lines.append(_batch_line(batches.batch_summary(store, batch_id), batch_id))
            for member in sorted(members.pop(batch_id), key=lambda found: found["batch_index"]):
                lines.append(f"  {format_run_line(member)}  (row {member['batch_index']})")
    return lines


def _entry_line(summary: dict[str, Any]) -> str:
    """A run's line of `sexp runs`, or a batch's."""
    return _batch_line(summary, summary["id"]) if summary.get("kind") == "batch" else format_run_line(summary)


def _runs_and_batches(store: Store, limit: int) -> list[dict[str, Any]]:
    """The newest runs that are no batch's row and the newest batches, newest first, at most
    limit: a run as run_summary gives it, a batch as batches.batch_summary does with "kind":
    "batch" and its "duration_s"."""
    runs = [run_summary(run) for run in batches.runs_outside_batches(store, limit)]
    found = [
        {
            "kind": "batch",
            **batch,
            "program": scrub(batch["program"]),
            "duration_s": duration(batch["started_at"], batch["ended_at"]),
        }
        for batch in batches.recent_batches(store, limit)
    ]
    return sorted(runs + found, key=lambda entry: -(entry["started_at"] or 0.0))[:limit]


def _batch_line(batch: dict[str, Any] | None, batch_id: str) -> str:
    """`batch <id>  <started>  <status>  <ok>/<total> ok  <e> error[  <r> running]  <tokens> tokens
    <cost>  <time>  <program>`."""
    if batch is None:
        return f"batch {batch_id}"
    lasted = format_duration(duration(batch["started_at"], batch["ended_at"]))
    running = [f"{batch['running']} running"] if batch["running"] else []
    return "  ".join(
        [
            f"batch {batch['id']}",
            format_time(batch["started_at"]),
            f"{batch['status']:<11}",
            f"{batch['ok']}/{batch['total']} ok",
            f"{batch['error']} error",
            *running,
            f"{batch['tokens']:>7} tokens",
            f"{format_cost(batch['cost_usd']):>9}",
            f"{lasted:>6}",
            batch["program"],
        ]
    )


def trace_command(
    settings: Settings, run_id: str, as_json: bool, out: TextIO | None = None, full: bool = False
) -> int:
    """Print a run's tree of steps (or it as JSON, each step with its model request and answer);
    full: the requests and answers under each step too. A batch's id: its summary instead
    (SPEC §11.5). Exit 1 for an id the store holds neither as a run nor as a batch."""
    out = out or sys.stdout
    store = open_store(settings)
    try:
        run = None if store is None else store.run(run_id)
        summary = None if store is None or run is not None else batch_report(store, run_id)
        if summary is not None:
            text = json.dumps(summary, ensure_ascii=False) if as_json else scrub(format_batch_report(summary))
            out.write(text + "\n")
            out.flush()
            return EXIT_OK
        if run is None or store is None:
            report(error_line(f"unknown run '{run_id}'"))
            return EXIT_ERROR
        steps = store.steps(run_id, turns=True)  # a turn not paid for is marked (SPEC §11.2)
    finally:
        if store is not None:
            store.close()
    if as_json:
        out.write(json.dumps(trace_json(run, steps), ensure_ascii=False) + "\n")
    else:
        out.write(format_trace(run, steps, unicode=_can_draw(out), full=full) + "\n")
    out.flush()
    return EXIT_OK


def _can_draw(out: TextIO) -> bool:
    """Whether out can take the box-drawing characters of the tree."""
    try:
        "├└│…".encode(getattr(out, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def report_spending(runtime: Runtime) -> None:
    """`run: <id> <n> model calls, <tokens> tokens, $<cost>, <seconds> s` on stderr, when the
    recorded run made model calls (mock, replayed, reused, cached and real ones alike) and is
    not quiet; then `, <k> reused` when the run reused any or was given --reuse, and
    `, <c> cached` when the cache answered any (SPEC §11.2)."""
    run = runtime.run
    if run is None or run.journal is None or runtime.settings.quiet:
        return
    made = run.budget.made
    if not made.calls:
        return
    line = (
        f"run: {run.run_id} {made.calls} model calls, {made.tokens} tokens, "
        f"{format_cost(made.cost_usd)}, {run.seconds:.1f} s"
    )
    answers = run.answers
    if answers.reused or answers.reuse is not None:
        line += f", {answers.reused} reused"
    if answers.cached:
        line += f", {answers.cached} cached"
    runtime.err.write(line + "\n")
    runtime.err.flush()
