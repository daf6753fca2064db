"""A run's journal: every task call, script and tool step recorded as it happens (SPEC §6).

A step's key is the source position of the call, plus how many times the run has reached that
position, plus — inside pmap — the element's index path. The same program re-run therefore
reaches the same keys in the same places, which is what lets `--resume` answer completed steps
from the store instead of paying for them again.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import uuid
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from typing import Any

from ..errors import Span
from ..resources import data_dir
from ..results import COMPLETE, FAILED, TaskResult, from_record, to_record
from ..run_context import element_path, run_context, within
from .store import Store

# Steps whose work is other steps' (a task's is its model turns): their start and end are written
# deferred (runs/group_commit.py). Their start: the steps that act under them commit it before
# they act. Their end: what they did is in their steps' records already (resuming replays them).
HOLDING_KINDS = frozenset({"task", "subtask"})


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


def program_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def fingerprint(*parts: Any) -> str:
    """A stable digest of a request's parts (anything JSON can write, lone surrogates included)."""
    text = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def site_of(span: Span | None, root: str | None = None) -> str:
    """A call's position as `file:line:col` — the file relative to root (the program's directory),
    so the key does not depend on how the program's path was typed; a file of the library as
    `stdlib/loops.sexp`, wherever sexp is installed — or `?` when unknown."""
    if span is None:
        return "?"
    name = span.origin
    if root is not None and not name.startswith("<"):
        name = _relative(name, root)
    return f"{name}:{span.line}:{span.column}"


@cache
def _relative(path: str, root: str) -> str:
    """path relative to root, or to the library's directory (as `stdlib/...`) for a file of it;
    resolved once per file (realpath asks the file system)."""
    real = os.path.realpath(path)
    library = os.path.realpath(data_dir("stdlib"))
    if real.startswith(library + os.sep):
        return "stdlib/" + os.path.relpath(real, library).replace(os.sep, "/")
    return os.path.relpath(real, root)


class Journal:
    """Records a run's steps in the store; when resuming, answers completed ones from it."""

    def __init__(
        self,
        store: Store | None,
        run_id: str,
        resuming: bool = False,
        root: str | None = None,
        begin: Callable[[], Store] | None = None,
    ) -> None:
        """store: the run's, open; or None, and begin() records the run and gives its store when
        the first step is recorded (runs/recording.py: a run that begins at its first step)."""
        self.store = store
        self.run_id = run_id
        self.resuming = resuming
        self.root = root  # the program's directory: sites are relative to it
        self.reused = 0  # steps answered from the store
        self._occurrences: dict[str, int] = {}
        # Sequence numbers say in what order steps ran: a resumed run's steps come after every
        # step already recorded (a step run again takes a new number), so none is used twice.
        self._seq = store.last_seq(run_id) if resuming and store is not None else 0
        self._lock = threading.Lock()
        self._begin = begin
        self._beginning = threading.Lock()

    def _store(self) -> Store:
        """The run's store, the run begun now if it is not yet (pmap's workers may come at once)."""
        store = self.store
        if store is None:
            with self._beginning:
                if self.store is None:
                    assert self._begin is not None, "a journal with no store is given a begin"
                    self.store = self._begin()
                store = self.store
        return store

    def _next_key(self, site: str) -> tuple[str, int]:
        base = site + element_path()  # the pmap element's path, e.g. "[3]", nested "[3][0]"
        with self._lock:
            count = self._occurrences.get(base, 0) + 1
            self._occurrences[base] = count
            self._seq += 1
            return f"{base}#{count}", self._seq

    def record(
        self,
        kind: str,
        name: str,
        span: Span | str | None,
        request: str | tuple[str, ...],
        perform: Callable[[], TaskResult],
        reused: Callable[[str], None] | None = None,
    ) -> TaskResult:
        """perform()'s result, journaled; from the store instead when resuming a completed step
        (then reused, if given, is told the step's key).

        `request` is the step's fingerprint: a step whose request changed is run again. Several
        are the fingerprints a resumed step is accepted under (an earlier version's key too); the
        first is written. A FAILED step is never reused.
        """
        accepted = (request,) if isinstance(request, str) else request
        request = accepted[0]
        store = self._store()
        key, seq = self._next_key(span if isinstance(span, str) else site_of(span, self.root))
        if self.resuming:
            done = store.step(self.run_id, key)
            if done is not None and done["status"] == COMPLETE and done["fingerprint"] in accepted:
                stored = _stored_result(done["result"])
                if stored is not None:  # else the store's copy is unreadable: run the step again
                    with self._lock:
                        self.reused += 1
                    if reused is not None:
                        reused(key)
                    return stored
        here = run_context()
        store.step_started(self.run_id, key, seq, here.step, kind, name, request, kind in HOLDING_KINDS)
        try:
            with within(replace(here, step=key)):  # the parent of the steps its work makes
                result = perform()
        except KeyboardInterrupt:
            interrupted = {"type": "INTERRUPTED", "message": "the run was interrupted during this step"}
            store.step_completed(self.run_id, key, "interrupted", {"error": interrupted})
            raise
        except Exception as err:  # the step raised instead of answering: recorded, never reused
            raised = {"type": getattr(err, "error_type", type(err).__name__), "message": str(err)}
            store.step_completed(self.run_id, key, FAILED, {"error": raised})
            raise
        usage = result.notes.get("usage") or {}
        score = result.notes.get("successScore")
        store.step_completed(
            self.run_id,
            key,
            result.status,
            to_record(result),
            int(usage.get("prompt_tokens") or 0),
            int(usage.get("completion_tokens") or 0),
            float(result.notes.get("cost_usd") or 0.0),
            _score(score),
            deferred=kind in HOLDING_KINDS,  # its turns' answers are in already: resuming replays it
        )
        return result


def _stored_result(text: Any) -> TaskResult | None:
    """The result a step recorded, or None when what the store holds cannot be read as one."""
    try:
        record = json.loads(text)
        return from_record(record) if isinstance(record, dict) else None
    except (ValueError, TypeError, KeyError):
        return None


def _score(value: Any) -> float | None:
    """A successScore as a number in [0, 1], when the notes hold one."""
    try:
        score = float(value)
    except (TypeError, ValueError):
        return None
    return min(1.0, max(0.0, score))
