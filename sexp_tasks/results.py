"""TaskResult and TaskError (SPEC §3.3): what every task and script call returns.

A FAILED result is a value, not an exception: the program decides what to do with it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .lang.printer import quote_string, to_json_value

COMPLETE, CONTINUATION, FAILED = "COMPLETE", "CONTINUATION", "FAILED"


@dataclass
class TaskError:
    """Why a task failed: type RESOURCE_EXHAUSTION, TASK_FAILURE or INVALID_OUTPUT."""

    type: str
    message: str
    reason: str | None = None
    resource: str | None = None
    metrics: dict[str, Any] | None = None
    violations: list[Any] | None = None
    details: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The error as the program and --json see it; absent fields are left out."""
        value: dict[str, Any] = {"type": self.type}
        for key in ("reason", "message", "resource", "metrics", "violations", "details"):
            if getattr(self, key) is not None:
                value[key] = getattr(self, key)
        return value

    def summary(self) -> str:
        """`TYPE reason: message` (the reason or resource when there is one)."""
        kind = self.reason or self.resource
        return f"{self.type} {kind}: {self.message}" if kind else f"{self.type}: {self.message}"


@dataclass
class TaskResult:
    """The outcome of a task call: content, status, notes, parsed content, and any error."""

    content: str
    status: str = COMPLETE
    notes: dict[str, Any] = field(default_factory=dict)
    parsed_content: Any = None
    criteria: str | None = None
    error: TaskError | None = None

    @property
    def failed(self) -> bool:
        return self.status == FAILED

    def fields(self) -> dict[str, Any]:
        """The fields get-field reads before it looks inside parsedContent."""
        return {
            "status": self.status,
            "content": self.content,
            "notes": self.notes,
            "parsedContent": self.parsed_content,
            "criteria": self.criteria,
            "error": self.error.to_dict() if self.error else None,
        }

    def get_field(self, name: str) -> Any:
        """A result field by name, then a key of the parsed content; nil when missing."""
        fields = self.fields()
        if name in fields:
            return fields[name]
        if isinstance(self.parsed_content, dict):
            return self.parsed_content.get(name)
        return None

    def to_sexp(self) -> str:
        preview = self.content if len(self.content) <= 60 else self.content[:60] + "…"
        return f"#<TaskResult {self.status} {quote_string(preview)}>"

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {
            "status": self.status,
            "content": self.content,
            "parsedContent": to_json_value(self.parsed_content),
            "notes": to_json_value(self.notes),
        }
        if self.criteria is not None:
            value["criteria"] = self.criteria
        if self.error is not None:
            value["error"] = to_json_value(self.error.to_dict())
        return value


@dataclass
class ScriptResult(TaskResult):
    """A TaskResult for a script: content is stdout; stdout, stderr and exitCode are fields too."""

    stdout: str = ""
    stderr: str = ""
    exit_code: int | None = None

    def fields(self) -> dict[str, Any]:
        return {**super().fields(), "stdout": self.stdout, "stderr": self.stderr, "exitCode": self.exit_code}

    def to_json(self) -> dict[str, Any]:
        """A task result's JSON with the script's stdout, stderr and exitCode."""
        return {**super().to_json(), "stdout": self.stdout, "stderr": self.stderr, "exitCode": self.exit_code}


def to_record(result: TaskResult) -> dict[str, Any]:
    """Everything needed to rebuild the result exactly (what the run store keeps)."""
    record: dict[str, Any] = {
        "status": result.status,
        "content": result.content,
        "notes": result.notes,
        "parsed": result.parsed_content,
        "criteria": result.criteria,
        "error": result.error.to_dict() if result.error else None,
    }
    if isinstance(result, ScriptResult):
        record["script"] = {"stdout": result.stdout, "stderr": result.stderr, "exit_code": result.exit_code}
    return record


def from_record(record: dict[str, Any]) -> TaskResult:
    """The result a to_record dict describes."""
    error = record.get("error")
    fields: dict[str, Any] = {
        "content": record["content"],
        "status": record["status"],
        "notes": record.get("notes") or {},
        "parsed_content": record.get("parsed"),
        "criteria": record.get("criteria"),
        "error": TaskError(**error) if error else None,
    }
    script = record.get("script")
    if script is not None:
        return ScriptResult(**fields, **script)
    return TaskResult(**fields)


def record_verdict(result: TaskResult) -> None:
    """An evaluator's verdict in its notes (SPEC §3.3): success, feedback and details, read from
    its parsed JSON content or, failing that, from the notes it wrote itself."""
    if result.failed:
        return
    parsed = result.parsed_content
    if not isinstance(parsed, dict):
        try:
            parsed = json.loads(result.content)
        except (ValueError, TypeError):
            parsed = None
    source = parsed if isinstance(parsed, dict) and "success" in parsed else result.notes
    if "success" not in source:
        return
    success = source["success"]
    if isinstance(success, str):
        success = success.strip().lower() in ("true", "yes", "1", "pass", "passed")
    result.notes["success"] = bool(success)
    for key in ("feedback", "details"):
        if key in source:
            result.notes[key] = source[key]


def round_cost(usd: float) -> float:
    """A cost in dollars to 6 significant digits (SPEC §11.1), as results, traces, summaries and
    batch files hold it: `0.0001782`, never `0.00017820000000000002`."""
    return float(f"{float(usd):.6g}") if usd else 0.0
