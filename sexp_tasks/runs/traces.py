"""Rendering recorded runs (SPEC §6): `sexp runs` lines and `sexp trace` trees, as text or JSON.

Pure functions over the rows the store returns; nothing here opens the store. A step's result
may be long, so only a short one-line preview of it is ever shown. The store keeps what steps
returned exactly; what is shown here is scrubbed of keys (anything shaped like `sk-...`, and the
environment's credentials), as every output of sexp is. A field that holds garbage
(a store written by hand, or damaged) is shown as `?` and listed under `invalid` in JSON; it
never stops the rest from being shown.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import preview
from ..handler.cost import format_cost
from ..handler.request import format_answer, format_request
from ..redact import scrub
from ..results import round_cost
from .step_notes import fallback_lines, retry_lines, step_notes_list, step_retries
from .turn_sources import answer_mark, some_not_paid, sources_mark, turn_source

PREVIEW_CHARS = 60
UNREADABLE = "(unreadable result)"
BAD = "?"  # what a field holding garbage shows


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


def _number(row: dict[str, Any], key: str, invalid: list[str], count: bool = False) -> float | None:
    """row[key] as a finite number (a count: a whole number, not negative); None when it is
    missing, and also when it is garbage, which then goes on the invalid list."""
    value = row.get(key)
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        if not count or (value >= 0 and float(value).is_integer()):
            return float(value)
    invalid.append(key)
    return None


def _text(value: Any) -> str:
    """A text field as text, whatever the store holds in it."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


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
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(timestamp)))
    except (OverflowError, ValueError, OSError):  # a number, but no time a clock can show
        return BAD


def result_preview(result_json: Any) -> str:
    """A short line about a step's stored result: its error, else the start of its content."""
    if not result_json:
        return ""
    try:
        record = json.loads(result_json)
    except (ValueError, TypeError):
        return UNREADABLE
    if not isinstance(record, dict):
        return ""
    error = record.get("error")
    if isinstance(error, dict):
        kind = error.get("reason") or error.get("resource")
        head = f"{error.get('type', 'ERROR')} {kind}" if kind else str(error.get("type", "ERROR"))
        return preview(f"{head}: {error.get('message', '')}", PREVIEW_CHARS)
    content = record.get("content")
    return json.dumps(preview(content, PREVIEW_CHARS), ensure_ascii=False) if isinstance(content, str) else ""


# Runs -----------------------------------------------------------------------------------------
def run_summary(run: dict[str, Any], steps: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The run as JSON data: id, program, status, times, duration, step count, tokens and cost.

    The counts come from the row (as `recent_runs` gives them) or are summed from steps.
    """
    invalid: list[str] = []
    started = _number(run, "started_at", invalid)
    ended = _number(run, "ended_at", invalid)
    if steps is not None:
        data = [_step_data(step) for step in steps]
        totals = {
            "steps": len(steps),
            "tokens": sum(d["tokens"] or 0 for d in data),
            "cost_usd": round_cost(sum(d["cost_usd"] or 0.0 for d in data)),
        }
    else:  # sums made by SQL, which reads garbage as 0
        totals = {key: _number(run, key, []) or 0 for key in ("steps", "tokens", "cost_usd")}
    summary: dict[str, Any] = {
        "id": _text(run.get("id")),
        "program": scrub(_text(run.get("program"))),
        "status": _text(run.get("status")),
        "started_at": started,
        "ended_at": ended,
        "duration_s": duration(started, ended),
        "steps": int(totals["steps"]),
        "tokens": int(totals["tokens"]),
        "cost_usd": round_cost(totals["cost_usd"]),
    }
    if invalid:
        summary["invalid"] = invalid
    return summary


def format_run_line(summary: dict[str, Any]) -> str:
    """One line for `sexp runs`: id, start, status, steps, tokens, cost, duration, program."""
    steps = summary["steps"]
    invalid = summary.get("invalid", ())
    started = BAD if "started_at" in invalid else format_time(summary["started_at"])
    lasted = BAD if invalid else format_duration(summary["duration_s"])
    return "  ".join(
        [
            summary["id"],
            started,
            f"{summary['status']:<11}",
            f"{steps:>3} step{'' if steps == 1 else 's'}",
            f"{summary['tokens']:>7} tokens",
            f"{format_cost(summary['cost_usd']):>9}",
            f"{lasted:>6}",
            summary["program"],
        ]
    )


# Traces ---------------------------------------------------------------------------------------
def step_tree(steps: list[dict[str, Any]]) -> list[StepNode]:
    """The steps as a forest by parent key, in the order they started.

    A step whose parent is not among the steps is a root, and so is any step a broken parent
    chain (a cycle) would otherwise hide, so every step appears exactly once.
    """
    ordered = sorted(steps, key=_order)
    nodes = {row["key"]: StepNode(row) for row in ordered}
    roots: list[StepNode] = []
    for row in ordered:
        parent = row.get("parent")
        if isinstance(parent, str) and parent in nodes and not _descends(nodes, parent, row["key"]):
            nodes[parent].children.append(nodes[row["key"]])
        else:
            roots.append(nodes[row["key"]])
    return roots


def _order(row: dict[str, Any]) -> tuple[int, float]:
    """Steps in the order they started; any whose sequence number is garbage, last."""
    seq = _number(row, "seq", [])
    return (0, seq) if seq is not None else (1, 0.0)


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


_TOKENS = ("tokens", "prompt_tokens", "completion_tokens")


def format_step(row: dict[str, Any]) -> str:
    """kind name  status  tokens  cost  time  call site  preview."""
    data = _step_data(row)
    bad_times = {"started_at", "ended_at"} & set(data.get("invalid", ()))
    tokens = (BAD if data[key] is None else str(data[key]) for key in _TOKENS)
    parts = [
        f"{data['kind']} {data['name']}",
        data["status"],
        "{} tokens ({} in, {} out)".format(*tokens),
        "$" + BAD if data["cost_usd"] is None else format_cost(data["cost_usd"]),
        BAD if bad_times else format_duration(data["duration_s"]),
        data["key"],
    ]
    if data["preview"]:
        parts.append(data["preview"])
    return "  ".join(parts)


def format_trace(
    run: dict[str, Any], steps: list[dict[str, Any]], unicode: bool = True, full: bool = False
) -> str:
    """The run's header line and its tree of steps, one step a line; full: under each task step,
    the request each of its model turns sent and the raw answer (SPEC §10.3)."""
    steps, turns = split_turns(steps)
    lines, every = [f"run {format_run_line(run_summary(run, steps))}"], some_not_paid(turns)
    branch, last, pipe, space = ("├─ ", "└─ ", "│  ", "   ") if unicode else ("|- ", "`- ", "|  ", "   ")
    stack: list[tuple[StepNode, str, bool]] = [
        (node, "", i == 0) for i, node in enumerate(reversed(step_tree(steps)))
    ]
    while stack:  # iterative, so a deep chain of subtasks cannot exhaust the stack
        node, indent, is_last = stack.pop()
        mark = sources_mark(turns.get(node.row["key"], []), every)  # paid, reused... (SPEC §11.2)
        lines.append(indent + (last if is_last else branch) + format_step(node.row) + mark)
        below = indent + (space if is_last else pipe)
        children = node.children
        detail = below + (pipe if children else space)
        lines += [detail + line for line in retry_lines(step_retries(node.row))]
        lines += [detail + line for line in fallback_lines(step_notes_list(node.row, "fallbacks"))]
        if full:
            lines += [
                (detail + line).rstrip() for line in _turn_lines(node.row, turns.get(node.row["key"], []))
            ]
        stack.extend((child, below, i == 0) for i, child in enumerate(reversed(children)))
    if not steps:
        lines.append("(no steps: the run called no task)")
    return scrub("\n".join(lines))


def trace_json(run: dict[str, Any], steps: list[dict[str, Any]]) -> dict[str, Any]:
    """`{"run": {...}, "steps": [{..., "children": [...]}]}` with previews, not whole results;
    each step's `request` and `answer` are its last model turn's (None for no model call), the
    whole conversation before the answer; `turns`, each turn's `source` (paid, reused ...)."""
    steps, turns = split_turns(steps)
    roots = step_tree(steps)
    out: list[dict[str, Any]] = []
    stack: list[tuple[StepNode, list[dict[str, Any]]]] = [(node, out) for node in reversed(roots)]
    while stack:
        node, siblings = stack.pop()
        data = _step_data(node.row)
        exchanges = [_exchange(turn) for turn in turns.get(node.row["key"], [])]
        data["request"], data["answer"] = exchanges[-1][:2] if exchanges else (None, None)
        data["turns"] = [{"source": turn_source(turn)} for turn in turns.get(node.row["key"], [])]
        data["retries"] = step_retries(node.row)
        data["fallbacks"] = step_notes_list(node.row, "fallbacks")
        data["children"] = data.pop("children")  # last, after the request and answer
        siblings.append(data)
        stack.extend((child, data["children"]) for child in reversed(node.children))
    return {"run": run_summary(run, steps), "steps": _scrubbed(out)}


def _scrubbed(value: Any) -> Any:
    """value (JSON data) with every string scrubbed of keys: what is shown of a run."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {key: _scrubbed(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_scrubbed(inner) for inner in value]
    return value


def _step_data(row: dict[str, Any]) -> dict[str, Any]:
    """A step as JSON data; a field holding garbage is None and named under `invalid`."""
    invalid: list[str] = []
    seq = _number(row, "seq", invalid, count=True)
    tokens_in = _number(row, "prompt_tokens", invalid, count=True)
    tokens_out = _number(row, "completion_tokens", invalid, count=True)
    cost = _number(row, "cost_usd", invalid)
    started = _number(row, "started_at", invalid)
    ended = _number(row, "ended_at", invalid)
    shown = result_preview(row.get("result"))
    if shown == UNREADABLE:
        invalid.append("result")
    bad_tokens = "prompt_tokens" in invalid or "completion_tokens" in invalid
    data: dict[str, Any] = {
        "key": _text(row.get("key")),
        "seq": None if seq is None else int(seq),
        "kind": _text(row.get("kind")),
        "name": _text(row.get("name")),
        "status": _text(row.get("status")),
        "prompt_tokens": None if "prompt_tokens" in invalid else int(tokens_in or 0),
        "completion_tokens": None if "completion_tokens" in invalid else int(tokens_out or 0),
        "tokens": None if bad_tokens else int((tokens_in or 0) + (tokens_out or 0)),
        "cost_usd": None if "cost_usd" in invalid else round_cost(cost or 0.0),
        "started_at": started,
        "ended_at": ended,
        "duration_s": duration(started, ended),
        "preview": shown,
        "children": [],
    }
    if invalid:
        data["invalid"] = invalid
    return data


# Model turns ----------------------------------------------------------------------------------
def split_turns(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """The steps without their model turns, and the turns by the key of their task's step, in order."""
    steps = [row for row in rows if row.get("kind") != "turn"]
    turns: dict[str, list[dict[str, Any]]] = {}
    for row in sorted((row for row in rows if row.get("kind") == "turn"), key=_order):
        turns.setdefault(_text(row.get("parent")), []).append(row)
    return steps, turns


def _exchange(turn: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None, list[Any], str]:
    """A turn's request and raw answer as recorded (None when not: a store of an older sexp
    kept no request, a failed call has no answer), the tool calls asked for, and why it failed."""
    try:
        record = json.loads(turn.get("result") or "")
    except (ValueError, TypeError):
        record = None
    notes = record.get("notes") if isinstance(record, dict) else None
    notes = notes if isinstance(notes, dict) else {}
    request = notes.get("request")
    reply = notes.get("reply")
    reply = reply if isinstance(reply, dict) else {}
    answer = reply.get("content")
    calls = reply.get("tool_calls")
    error = record.get("error") if isinstance(record, dict) else None
    why = str(error.get("message", "")) if isinstance(error, dict) else ""
    return (
        request if isinstance(request, dict) else None,
        answer if isinstance(answer, str) else None,
        calls if isinstance(calls, list) else [],
        why,
    )


def _turn_lines(step: dict[str, Any], turns: list[dict[str, Any]]) -> list[str]:
    """What --full shows under a step: each turn's request (a later turn only the messages the
    earlier ones did not show) and its raw answer; a task that made no model call says so."""
    if not turns:
        return ["(no model call)"] if step.get("kind") in ("task", "subtask") else []
    lines: list[str] = []
    shown = 0  # messages shown with earlier turns
    for number, turn in enumerate(turns, 1):
        request, answer, calls, why = _exchange(turn)
        label = f" (turn {number} of {len(turns)})" if len(turns) > 1 else ""
        if request is None:
            lines.append(f"request{label}: (not recorded)")
        else:
            messages = request.get("messages")
            lines += [f"request{label}:"] + ["  " + line for line in format_request(request, skip=shown)]
            shown = len(messages) if isinstance(messages, list) else 0
        if answer is None and not calls:
            lines.append(f"answer{label}: (none{': ' + why if why else ''})")
        else:
            lines += [f"answer{label}:{answer_mark(turn)}"] + [
                "  " + line for line in format_answer(answer, calls)
            ]
    return lines
