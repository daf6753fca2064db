"""Rendering recorded runs (SPEC §6): `sexp runs` lines and `sexp trace` trees, as text or JSON.

Pure functions over the rows the store returns; nothing here opens the store. A step's result
may be long, so only a short one-line preview of it is ever shown.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from .cost import format_cost

PREVIEW_CHARS = 60


@dataclass
class StepNode:
    """One step of a run and the steps made inside it (tool calls, subtasks)."""

    row: dict[str, Any]
    children: list[StepNode] = field(default_factory=list)


# Numbers ----------------------------------------------------------------------------------
def duration(started: float | None, ended: float | None) -> float | None:
    """Seconds between the two times, or None while unfinished."""
    if started is None or ended is None:
        return None
    return max(0.0, float(ended) - float(started))


def format_duration(seconds: float | None) -> str:
    """`0.41s`, `12.3s`, `3m04s`, `1h02m`; `-` for a step or run that never ended."""
    if seconds is None:
        return "-"
    if seconds < 10:
        return f"{seconds:.2f}s"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    return f"{minutes // 60}h{minutes % 60:02d}m"


def format_time(timestamp: float | None) -> str:
    """A local date and time to the second."""
    if timestamp is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(timestamp)))


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """text on one line, cut to limit characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def result_preview(result_json: str | None) -> str:
    """A short line about a step's stored result: its error, else the start of its content."""
    if not result_json:
        return ""
    try:
        record = json.loads(result_json)
    except ValueError:
        return ""
    if not isinstance(record, dict):
        return ""
    error = record.get("error")
    if isinstance(error, dict):
        kind = error.get("reason") or error.get("resource")
        head = f"{error.get('type', 'ERROR')} {kind}" if kind else str(error.get("type", "ERROR"))
        return preview(f"{head}: {error.get('message', '')}")
    content = record.get("content")
    return json.dumps(preview(content), ensure_ascii=False) if isinstance(content, str) else ""


# Runs -----------------------------------------------------------------------------------------
def run_summary(run: dict[str, Any], steps: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The run as JSON data: id, program, status, times, duration, step count, tokens and cost.

    The counts come from the row (as `recent_runs` gives them) or are summed from steps.
    """
    if steps is not None:
        totals = {
            "steps": len(steps),
            "tokens": sum(_tokens(s) for s in steps),
            "cost_usd": sum(float(s.get("cost_usd") or 0.0) for s in steps),
        }
    else:
        totals = {key: run.get(key) or 0 for key in ("steps", "tokens", "cost_usd")}
    return {
        "id": run["id"],
        "program": run["program"],
        "status": run["status"],
        "started_at": run["started_at"],
        "ended_at": run.get("ended_at"),
        "duration_s": duration(run["started_at"], run.get("ended_at")),
        "steps": int(totals["steps"]),
        "tokens": int(totals["tokens"]),
        "cost_usd": float(totals["cost_usd"]),
    }


def format_run_line(summary: dict[str, Any]) -> str:
    """One line for `sexp runs`: id, start, status, steps, tokens, cost, duration, program."""
    steps = summary["steps"]
    return "  ".join(
        [
            summary["id"],
            format_time(summary["started_at"]),
            f"{summary['status']:<11}",
            f"{steps:>3} step{'' if steps == 1 else 's'}",
            f"{summary['tokens']:>7} tokens",
            f"{format_cost(summary['cost_usd']):>9}",
            f"{format_duration(summary['duration_s']):>6}",
            summary["program"],
        ]
    )


# Traces ---------------------------------------------------------------------------------------
def step_tree(steps: list[dict[str, Any]]) -> list[StepNode]:
    """The steps as a forest by parent key, in the order they started.

    A step whose parent is not among the steps is a root, and so is any step a broken parent
    chain (a cycle) would otherwise hide, so every step appears exactly once.
    """
    ordered = sorted(steps, key=lambda s: s.get("seq") or 0)
    nodes = {row["key"]: StepNode(row) for row in ordered}
    roots: list[StepNode] = []
    for row in ordered:
        parent = row.get("parent")
        if isinstance(parent, str) and parent in nodes and not _descends(nodes, parent, row["key"]):
            nodes[parent].children.append(nodes[row["key"]])
        else:
            roots.append(nodes[row["key"]])
    return roots


def _descends(nodes: dict[str, StepNode], key: str, ancestor: str) -> bool:
    """Whether following parents up from key reaches ancestor (a cycle if linked)."""
    seen: set[str] = set()
    current: str | None = key
    while current is not None and current in nodes and current not in seen:
        if current == ancestor:
            return True
        seen.add(current)
        current = nodes[current].row.get("parent")
    return False


def format_step(row: dict[str, Any]) -> str:
    """kind name  status  tokens  cost  time  call site  preview."""
    parts = [
        f"{row['kind']} {row['name']}",
        row["status"],
        f"{_tokens(row)} tokens ({row.get('prompt_tokens') or 0} in,"
        f" {row.get('completion_tokens') or 0} out)",
        format_cost(row.get("cost_usd")),
        format_duration(duration(row.get("started_at"), row.get("ended_at"))),
        row["key"],
    ]
    shown = result_preview(row.get("result"))
    if shown:
        parts.append(shown)
    return "  ".join(parts)


def format_trace(run: dict[str, Any], steps: list[dict[str, Any]], unicode: bool = True) -> str:
    """The run's header line and its tree of steps, one step a line."""
    summary = run_summary(run, steps)
    lines = [f"run {format_run_line(summary)}"]
    branch, last, pipe, space = ("├─ ", "└─ ", "│  ", "   ") if unicode else ("|- ", "`- ", "|  ", "   ")
    stack: list[tuple[StepNode, str, bool]] = [
        (node, "", i == 0) for i, node in enumerate(reversed(step_tree(steps)))
    ]
    while stack:  # iterative, so a deep chain of subtasks cannot exhaust the stack
        node, indent, is_last = stack.pop()
        lines.append(indent + (last if is_last else branch) + format_step(node.row))
        below = indent + (space if is_last else pipe)
        children = node.children
        stack.extend((child, below, i == 0) for i, child in enumerate(reversed(children)))
    if not steps:
        lines.append("(no steps: the run called no task)")
    return "\n".join(lines)


def trace_json(run: dict[str, Any], steps: list[dict[str, Any]]) -> dict[str, Any]:
    """`{"run": {...}, "steps": [{..., "children": [...]}]}` with previews, not whole results."""
    roots = step_tree(steps)
    out: list[dict[str, Any]] = []
    stack: list[tuple[StepNode, list[dict[str, Any]]]] = [(node, out) for node in reversed(roots)]
    while stack:
        node, siblings = stack.pop()
        data = _step_data(node.row)
        siblings.append(data)
        stack.extend((child, data["children"]) for child in reversed(node.children))
    return {"run": run_summary(run, steps), "steps": out}


def _step_data(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "key": row["key"],
        "seq": row.get("seq"),
        "kind": row["kind"],
        "name": row["name"],
        "status": row["status"],
        "prompt_tokens": int(row.get("prompt_tokens") or 0),
        "completion_tokens": int(row.get("completion_tokens") or 0),
        "tokens": _tokens(row),
        "cost_usd": float(row.get("cost_usd") or 0.0),
        "started_at": row.get("started_at"),
        "ended_at": row.get("ended_at"),
        "duration_s": duration(row.get("started_at"), row.get("ended_at")),
        "preview": result_preview(row.get("result")),
        "children": [],
    }


def _tokens(row: dict[str, Any]) -> int:
    return int(row.get("prompt_tokens") or 0) + int(row.get("completion_tokens") or 0)
