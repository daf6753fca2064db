"""The steps inside a recorded task call (SPEC §6): its file_paths listing, its model turns and
its tool calls, each journaled under the task's step, so that a resumed run takes what it had
already done instead of doing it again."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..handler.model_request import ModelAnswer, ModelRequest
from ..results import FAILED, TaskError, TaskResult
from ..run_context import run_context
from ..runs.journal import Journal, fingerprint, site_of
from .given_files import CommandListing, file_stamps

TURN_NOTES = ("fallbacks", "retries")  # what a journaled turn keeps beyond its answer (SPEC §11.4)


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


def journaled_turn(
    journal: Journal,
    request: ModelRequest,
    send: Callable[[], tuple[ModelAnswer, ModelRequest]],
    kept: dict[str, Any] | None = None,
) -> tuple[ModelAnswer, ModelRequest]:
    """A model turn of a recorded task, journaled under the task's step and keyed by the request's
    fingerprint, keeping the request as sent and the answer with its source (SPEC §10.3; the
    store masks keys), a failed call's request too. Resumed, a task killed mid-conversation
    re-sends none of its completed turns (one an earlier version journaled, under its
    legacy_turn_key, neither): such a turn is answered from the store, with the request it sent
    then, its answer's tokens and cost (paid then, not now: the task's notes keep them; the turn's
    step counts none, so nothing is counted twice), and `kept`: what send put in it (the turn's
    fallbacks and retries, fallbacks.turn_notes) is kept with the turn, and given back so."""
    parent = run_context().step
    if parent is None:
        return send()
    keys = (request.fingerprint(), *((request.legacy_turn_key(),) if journal.resuming else ()))
    sent: list[tuple[ModelAnswer, ModelRequest]] = []
    raised: list[Exception] = []

    def perform() -> TaskResult:
        try:
            sent.append(send())
        except Exception as err:  # recorded FAILED with the request, then raised again below
            raised.append(err)
            error = getattr(err, "error", None)
            if not isinstance(error, TaskError):
                error = TaskError("TASK_FAILURE", str(err))
            return TaskResult("", status=FAILED, notes={"request": request.as_record()}, error=error)
        answer, as_sent = sent[0]
        notes = {"reply": answer.as_record(), "request": as_sent.as_record(), **(kept or {})}
        return TaskResult(answer.text, notes=notes)

    step = journal.record("turn", request.model, f"{parent}/turn", keys, perform)
    if raised:
        raise raised[0]
    if sent:
        return sent[0]
    recorded = step.notes.get("request") or {}
    if "response_format" in recorded and recorded["response_format"] is None:  # a refused one (§10.2)
        request = request.without_response_format()
    model = recorded.get("model")
    if isinstance(model, str) and model and model != request.model:  # a chain's next answered (§11.4)
        request = request.for_model(model)
    if kept is not None:
        kept.update({key: step.notes[key] for key in TURN_NOTES if step.notes.get(key)})
    return replace(ModelAnswer.from_record(step.notes["reply"]), source="reused"), request


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
