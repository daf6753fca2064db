"""`sexp trace BATCH_ID` (a batch's summary) and `sexp runs --batch BATCH_ID` (its rows), as
text for people; the data comes from runs/batch_reading.py and runs/batches.py."""

from __future__ import annotations

from typing import Any

from ..handler.cost import format_cost
from ..runs.batch_scores import ScoreAggregate, score_errors_line
from ..runs.traces import duration, format_duration, format_time

STATUS_ORDER = ("ok", "error", "running", "not run")


def format_batch_report(report: dict[str, Any]) -> str:
    """The summary's lines: the batch, its rows by status, how it was run again (when it was
    resumed), its errors by type and reason (each with how many rows and the first row's index),
    its scores (the lines `sexp batch --score` ends with, and the rows the scorer failed on), each
    template's calls, tokens and cost, and the slowest rows."""
    lasted = format_duration(duration(report["started_at"], report["ended_at"]))
    lines = [
        f"batch {report['id']}  {format_time(report['started_at'])}  {report['status']}  {lasted}"
        f"  {report['program']} < {report['data']}"
    ]
    counts = report["rows"]
    named = [status for status in STATUS_ORDER if counts.get(status)]
    named += sorted(status for status in counts if status not in STATUS_ORDER and status != "total")
    by_status = ", ".join(f"{counts[status]} {status}" for status in named) or "none"
    lines.append(f"rows: {by_status} (of {counts['total']})")
    if report["resumes"]:
        lines.append(
            f"resumed {_count(report['resumes'], 'time')}: {_count(report['resumed_rows'], 'row')} resumed,"
            f" {_count(report['retried_rows'], 'row')} retried after an error"
        )
    if report["errors"]:
        lines.append("errors:")
        for group in report["errors"]:
            kind = " ".join(part for part in (group["type"], group["reason"]) if part)
            lines.append(f"  {group['rows']:>4}  {kind}  (e.g. row {group['example_row']})")
    lines += [ScoreAggregate(**metric).line() for metric in report["scores"]]
    failed = report["score_errors"]
    if failed["rows"]:
        lines.append(score_errors_line(failed))
    if report["templates"]:
        lines.append("templates:")
        for spent in report["templates"]:
            cost = format_cost(spent["cost_usd"])
            lines.append(f"  {spent['name']}  {spent['calls']} calls  {spent['tokens']} tokens  {cost}")
    if report["slowest"]:
        lines.append("slowest rows:")
        for row in report["slowest"]:
            lines.append(
                f"  row {row['index']}  {row['seconds'] or 0.0:.3f} s  {row['status']}  {row['run_id']}"
            )
    return "\n".join(lines)


def format_batch_row(row: dict[str, Any]) -> str:
    """`<run id>  row <index>  <status>  <cost>  <error>` (the error only when it failed)."""
    parts = [
        row["run_id"],
        f"row {row['index']}",
        f"{row['status']:<7}",
        f"{format_cost(row['cost_usd'] or 0.0):>9}",
    ]
    if row["error"]:
        parts.append(row["error"])
    return "  ".join(parts)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"
