"""`sexp runs` (recent runs, newest first, or --prune the finished ones) and `sexp trace RUN_ID`
(a run's tree of steps): what the run store holds, printed by cli/run_reports.py."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import UsageError
from .command_line import Commands, command_settings, guarded
from .setting_options import given_settings

RUNS_HELP = (
    "List recent runs and batches, newest first, one a line: a batch on one line with its rows ok,"
    " in error and running of all its rows, tokens, cost and status; with --rows, the runs instead,"
    " a batch's rows under their batch's line. With --prune,"
    " delete instead the finished runs (completed or failed) with their steps, and the finished"
    " batches with their rows; interrupted runs and unfinished batches are kept (they can be"
    " resumed), and so is anything a live process holds. --older-than DAYS counts from the time a"
    " run ended. The store file is then compacted, unless another process is recording. With"
    " --batch BATCH_ID, list instead that batch's rows in input order (`<run id>  row <index>"
    "  <status>  <cost>  <error>`), only those of --status ok|error if given."
)
TRACE_HELP = (
    "Show a run's tree of steps. Given a batch's id (as `sexp batch` and `sexp runs` print it),"
    " show instead the batch's summary: its rows by status (ok, error, running, not run), its"
    " errors grouped by type and reason with the first row of each, each template's calls, tokens"
    " and cost, and the five slowest rows; --json prints the same as one JSON object."
)
ROW_STATUSES = ("ok", "error")


def register(commands: Commands) -> None:
    """Declare `sexp runs` and `sexp trace` among commands."""
    runs = commands.add_parser(
        "runs", help="list recent runs, newest first (or prune finished ones)", description=RUNS_HELP
    )
    runs.add_argument("--limit", type=int, default=20, metavar="N", help="at most N runs (default 20)")
    runs.add_argument("--prune", action="store_true", help="delete finished runs; print `pruned N runs`")
    older = "with --prune: only those that ended DAYS days ago or more"
    runs.add_argument("--older-than", type=float, metavar="DAYS", help=older)
    runs.add_argument("--batch", metavar="BATCH_ID", help="list the rows of this batch instead")
    runs.add_argument("--rows", action="store_true", help="list a batch's rows' runs under its line")
    only = "with --batch: only the rows of STATUS (ok or error)"
    runs.add_argument("--status", metavar="STATUS", help=only)
    runs.set_defaults(run=list_runs)
    trace = commands.add_parser(
        "trace", help="show a run's tree of steps (or a batch's summary)", description=TRACE_HELP
    )
    trace.add_argument("run_id", metavar="RUN_ID", help="the run's (or batch's) id, as `sexp runs` lists it")
    trace.add_argument("--full", action="store_true", help="show each model call's request and answer")
    trace.set_defaults(run=show_trace)
    for sub in (runs, trace):
        sub.add_argument("--json", action="store_true", help="print JSON")
        sub.add_argument("--store", metavar="PATH", help="the run store (default .sexp/store.db)")


def list_runs(args: argparse.Namespace, cwd: Path) -> int:
    """`sexp runs`: list the recent runs, or with --prune delete the finished ones."""
    from .run_reports import (  # lazy: the run store and traces (cli/startup.py)
        batch_rows_command,
        prune_command,
        runs_command,
    )

    if args.status is not None and args.status not in ROW_STATUSES:
        raise UsageError(f"--status takes ok or error, not '{args.status}'")
    if args.status is not None and args.batch is None:
        raise UsageError("--status needs --batch")
    if args.batch is not None and (args.prune or args.older_than is not None):
        raise UsageError("--batch lists rows: it does not go with --prune")
    if args.rows and (args.batch is not None or args.prune):
        raise UsageError("--rows lists runs: it does not go with --batch or --prune")
    store = command_settings(cwd, given_settings(args))
    if args.batch is not None:
        return guarded(args, lambda: batch_rows_command(store, args.batch, args.status, args.json))
    if args.prune or args.older_than is not None:
        if not args.prune:
            raise UsageError("--older-than needs --prune")
        return guarded(args, lambda: prune_command(store, args.older_than, args.json))
    return guarded(args, lambda: runs_command(store, args.json, args.limit, rows=args.rows))


def show_trace(args: argparse.Namespace, cwd: Path) -> int:
    """`sexp trace RUN_ID`: print the run's tree of steps."""
    from .run_reports import trace_command  # lazy, as above

    store = command_settings(cwd, given_settings(args))
    return guarded(args, lambda: trace_command(store, args.run_id, args.json, full=args.full))
