"""`sexp trace BATCH_ID` (a batch's summary) and `sexp runs --batch BATCH_ID` (its rows), as
text for people; the data comes from runs/batch_reading.py and runs/batches.py."""

from __future__ import annotations

from typing import Any

from ..handler.cost import format_cost
from ..runs.traces import duration, format_duration, format_time

STATUS_ORDER = ("ok", "error", "running", "not run")


def format_batch_report(report: dict[str, Any]) -> str:
    """The summary's lines: the batch, its rows by status, its errors by type and reason (each
    with how many rows and the first row's index), each template's calls, tokens and cost, and
    the slowest rows."""
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
    if report["errors"]:
        lines.append("errors:")
        for group in report["errors"]:
            kind = " ".join(part for part in (group["type"], group["reason"]) if part)
            lines.append(f"  {group['rows']:>4}  {kind}  (e.g. row {group['example_row']})")
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
