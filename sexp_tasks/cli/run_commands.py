"""`sexp runs` (recent runs, newest first), `sexp trace RUN_ID` (a run's tree of steps) and the
line `sexp run` ends with."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ..config import Settings
from ..diagnostics import error_line, report
from ..handler.cost import format_cost
from ..runs.store import Store
from ..runs.traces import format_run_line, format_trace, run_summary, trace_json

if TYPE_CHECKING:
    from ..runtime import Runtime

EXIT_OK, EXIT_ERROR = 0, 1


def open_store(settings: Settings) -> Store | None:
    """The run store, or None when there is none yet (looking must not create one)."""
    if not Path(settings.store).is_file():
        return None
    return Store(settings.store, create=False)


def runs_command(settings: Settings, as_json: bool, limit: int, out: TextIO | None = None) -> int:
    """Print the most recent runs, one a line (or a JSON list); nothing when there is no store."""
    out = out or sys.stdout
    store = open_store(settings)
    summaries = [] if store is None else [run_summary(run) for run in store.recent_runs(limit)]
    if store is not None:
        store.close()
    if as_json:
        out.write(json.dumps(summaries, ensure_ascii=False) + "\n")
    for summary in [] if as_json else summaries:
        out.write(format_run_line(summary) + "\n")
    out.flush()
    return EXIT_OK


def trace_command(
    settings: Settings, run_id: str, as_json: bool, out: TextIO | None = None, full: bool = False
) -> int:
    """Print a run's tree of steps (or it as JSON, each step with its model request and answer);
    full: the requests and answers under each step too. Exit 1 for a run the store does not hold."""
    out = out or sys.stdout
    store = open_store(settings)
    try:
        run = None if store is None else store.run(run_id)
        if run is None or store is None:
            report(error_line(f"unknown run '{run_id}'"))
            return EXIT_ERROR
        steps = store.steps(run_id, turns=as_json or full)
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
    recorded run made model calls (mock, replayed and real ones alike) and is not quiet."""
    journal = runtime.tasks.journal
    made = runtime.tasks.budget.made
    if journal is None or not made.calls or runtime.settings.quiet:
        return
    line = (
        f"run: {journal.run_id} {made.calls} model calls, {made.tokens} tokens, "
        f"{format_cost(made.cost_usd)}, {runtime.run_seconds:.1f} s"
    )
    runtime.err.write(line + "\n")
    runtime.err.flush()
