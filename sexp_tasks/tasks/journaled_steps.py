"""The steps inside a recorded task call (SPEC §6): its file_paths listing, its model turns and
its tool calls, each journaled under the task's step, so that a resumed run takes what it had
already done instead of doing it again."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from ..handler.llm import ModelReply
from ..results import FAILED, TaskError, TaskResult
from ..run_context import run_context
from ..runs.journal import Journal, fingerprint, site_of
from .given_files import CommandListing, file_stamps


def journaled_listing(journal: Journal, list_command: CommandListing, task_site: Any) -> CommandListing:
    """A file_paths command as a step of its own, keyed under the task's call site, so that a
    resumed run takes the listing it made before instead of running the command again. A
    listing that failed is recorded FAILED, and runs again on resume."""

    def journaled(command: str) -> tuple[list[str], list[str]]:
        # keyed only when a command is listed: most tasks have none, and this is every call's path
        base = task_site if isinstance(task_site, str) else site_of(task_site, journal.root)

        def perform() -> TaskResult:
            paths, warnings = list_command(command)
            if not warnings:
                return TaskResult("\n".join(paths))
            error = TaskError("TASK_FAILURE", warnings[0], reason="execution_halted")
            return TaskResult("", status=FAILED, notes={"warnings": warnings}, error=error)

        request = fingerprint("file_paths", command)
        result = journal.record("script", command, f"{base}/file_paths", request, perform)
        return result.content.splitlines(), list(result.notes.get("warnings", ()))

    return journaled


def journaled_turn(journal: Journal, request: dict[str, Any], schemas: Any, send: Callable[[], Any]) -> Any:
    """A model call of a recorded task, journaled as a turn under the task's step, keeping the
    request as sent and the reply (SPEC §10.3; the store masks keys), a failed call's request too.
    Resumed, a task killed mid-conversation re-sends none of its completed turns. A reused turn
    cost nothing this time; its tokens stay on the task, not the turn, so nothing is counted twice."""
    parent = run_context().step
    if parent is None:
        return send()
    model = request["model"]
    extra = (request["generation"], request["response_format"])
    # the key a turn had before generation settings were recorded, when it has none
    request_key = fingerprint(model, request["messages"], schemas, *(extra if any(extra) else ()))
    sent: list[Any] = []
    raised: list[Exception] = []

    def perform() -> TaskResult:
        try:
            sent.append(send())
        except Exception as err:  # recorded FAILED with the request, then raised again below
            raised.append(err)
            error = getattr(err, "error", None)
            if not isinstance(error, TaskError):
                error = TaskError("TASK_FAILURE", str(err))
            return TaskResult("", status=FAILED, notes={"request": request}, error=error)
        answer = sent[0]  # where it came from (paid, reused, cached, replayed): `sexp trace` marks it
        return TaskResult(
            answer.content, notes={"reply": asdict(answer), "request": request, "source": answer.source}
        )

    step = journal.record("turn", model, f"{parent}/turn", request_key, perform)
    if raised:
        raise raised[0]
    if sent:
        return sent[0]
    recorded = step.notes.get("request") or {}
    if "response_format" in recorded:  # one the provider refused was not sent: nor is it later (§10.2)
        request["response_format"] = recorded["response_format"]
    return replace(ModelReply(**step.notes["reply"]), cost_usd=0.0, latency_ms=0.0)


def journaled_tool(
    journal: Journal, workspace: Path, name: str, arguments: dict[str, Any], run: Callable[[], str]
) -> str:
    """A model's tool call, journaled as a step under its task's step; a file it reads is
    stamped, so that a changed file runs the call again on resume."""
    site = f"{run_context().step or '?'}/tool:{name}"
    path = arguments.get("path")
    stamps = file_stamps((path,), workspace) if isinstance(path, str) else []
    request = fingerprint(name, arguments, stamps)
    step = journal.record("tool", name, site, request, lambda: TaskResult(run()))
    return step.content
