"""Answers a model turn can be given without sending its request (SPEC §11.2), keyed by the
request's one fingerprint (handler/model_request.py).

- `ReusedTurns`: the completed model turns of an earlier run (`sexp run FILE --reuse RUN_ID`),
  read from its `turn` steps. A turn is found by its request, not by its place in the program,
  so an edited program (or another program) is answered wherever it asks what that run asked.
- `AnswerCache`: the store's `answers` table (runs/schema.py; `--cache`, `cache = true`): every
  completed answer paid for, kept by fingerprint, for any later run.
- `ReadyAnswers`: one run's (recording.Run.answers): both, as the model call asks them (reuse
  first, then the cache), counting what each answered for the run's summary line.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from ..handler.model_request import ModelAnswer, ModelRequest
from .store import Store, kept_json

ReadyHook = Callable[[ModelRequest], "ModelAnswer | None"]  # HandlerServices.ready_answer
KeepHook = Callable[[ModelRequest, ModelAnswer], None]  # HandlerServices.keep_answer


def completed(answer: ModelAnswer) -> bool:
    """Whether an answer is whole: the model stopped of itself (not cut off at max_tokens:
    finish_reason "length", nor a response with no choice: None) and said something."""
    return answer.finish_reason not in (None, "length") and bool(answer.text.strip() or answer.tool_calls)


class ReusedTurns:
    """The completed model turns of one recorded run, by request fingerprint, each request's
    answers in the order the run got them (a request asked more often than that run asked it
    gets its last answer again)."""

    def __init__(self, run_id: str, turns: list[tuple[list[str], ModelAnswer]]) -> None:
        self.run_id = run_id
        self._answers: dict[str, list[ModelAnswer]] = {}
        for keys, answer in turns:
            for key in dict.fromkeys(keys):  # one key twice (old and new agree) is one entry
                self._answers.setdefault(key, []).append(answer)
        self._taken: dict[str, int] = {}
        self._lock = threading.Lock()

    @classmethod
    def of_run(cls, store: Store, run_id: str) -> ReusedTurns | None:
        """The run's completed turns, each under its step's fingerprint (what the version that
        recorded it keyed turns by) and its recorded request's fingerprint; None for a run the
        store does not hold."""
        if store.run(run_id) is None:
            return None
        turns = []
        steps = store.query(
            "SELECT fingerprint, result FROM steps WHERE run_id = ? AND kind = 'turn' AND status = 'COMPLETE'"
            " ORDER BY seq",
            (run_id,),
        )
        for step in steps:
            notes = _notes(step.get("result"))
            reply, request = notes.get("reply"), notes.get("request")
            if not isinstance(reply, dict):
                continue
            keys = [str(step["fingerprint"])]
            if isinstance(request, dict):
                keys.append(ModelRequest.from_record(request).fingerprint())
            turns.append((keys, ModelAnswer.from_record(reply)))
        return cls(run_id, turns)

    def take(self, request: ModelRequest) -> ModelAnswer | None:
        """The run's answer to this request (the next of them, in recorded order), marked
        reused; None when the run never asked it. The key today's main journaled a turn under
        is tried when the fingerprint is not found (a run recorded before the fingerprint)."""
        for key in (request.fingerprint(), request.legacy_turn_key()):
            answers = self._answers.get(key)
            if answers:
                with self._lock:
                    index = self._taken.get(key, 0)
                    self._taken[key] = index + 1
                return answers[min(index, len(answers) - 1)].answered_from("reused")
        return None


class AnswerCache:
    """The store's `answers` table (runs/schema.py, migration 3): completed answers by the
    fingerprint of their request.

    It uses the recorded run's own store connection when there is one (recording() gives it),
    else one of its own, opened on first use: a run that asks no model opens nothing."""

    def __init__(self, path: str, recording: Callable[[], Store | None] = lambda: None) -> None:
        self.path = path
        self._recording = recording
        self._own: Store | None = None
        self._lock = threading.Lock()

    def _store(self) -> Store:
        store = self._recording()
        if store is not None:
            return store
        with self._lock:
            self._own = self._own or Store(self.path)
            return self._own

    def answer(self, request: ModelRequest) -> ModelAnswer | None:
        """The kept answer to exactly this request, marked cached; None when there is none."""
        rows = self._store().query(
            "SELECT answer FROM answers WHERE fingerprint = ?", (request.fingerprint(),)
        )
        record = _json(rows[0]["answer"]) if rows else None
        return ModelAnswer.from_record(record).answered_from("cached") if isinstance(record, dict) else None

    def keep(self, request: ModelRequest, answer: ModelAnswer) -> None:
        """Keep a paid answer for later runs, if it is complete (the model call hands over every
        paid answer; a failed, empty or cut-off one is never kept: asked again, it is sent again)."""
        if answer.source != "paid" or not completed(answer):
            return
        self._store().write(
            "INSERT OR REPLACE INTO answers (fingerprint, model, answer, created_at) VALUES (?, ?, ?, ?)",
            (request.fingerprint(), request.model, kept_json(answer.as_record()), time.time()),
        )


def clear_cache(store: Store) -> int:
    """Empty the store's answer cache; how many answers it held."""
    count = int(store.query("SELECT COUNT(*) AS n FROM answers")[0]["n"])
    store.write("DELETE FROM answers")
    return count


class ReadyAnswers:
    """Where one run's model turns may be answered from before they are sent: the run it reuses
    (`--reuse RUN_ID`) and then the cache (when on). Counts the turns each answered, for the
    run's summary line."""

    def __init__(self, reuse: ReusedTurns | None = None) -> None:
        self.reuse = reuse
        self.reused = 0
        self.cached = 0
        self._lock = threading.Lock()

    def hooks(self, cache: AnswerCache | None) -> tuple[ReadyHook | None, KeepHook | None]:
        """The run's `ready_answer` and `keep_answer` (HandlerServices), cache the session's answer
        cache (None: off). Each is None when there is nothing to ask or keep, so a run with
        neither reuse nor cache computes no request fingerprint it does not need."""
        if self.reuse is None and cache is None:
            return None, None
        keep = cache.keep if cache is not None else None
        return (lambda request: self._ready(request, cache)), keep

    def _ready(self, request: ModelRequest, cache: AnswerCache | None) -> ModelAnswer | None:
        """The reused or cached answer to request, or None: it must be sent."""
        answer = self.reuse.take(request) if self.reuse is not None else None
        if answer is None and cache is not None:
            answer = cache.answer(request)
        if answer is not None:
            with self._lock:
                if answer.source == "reused":
                    self.reused += 1
                else:
                    self.cached += 1
        return answer


def _notes(text: Any) -> dict[str, Any]:
    record = _json(text)
    notes = record.get("notes") if isinstance(record, dict) else None
    return notes if isinstance(notes, dict) else {}


def _json(text: Any) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return None
