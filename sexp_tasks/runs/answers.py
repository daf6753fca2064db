"""Answers a model turn can be given without sending its request (SPEC §11.2), keyed by the
request's one fingerprint (handler/model_request.py).

- `ReusedTurns`: the completed model turns of an earlier run (`sexp run FILE --reuse RUN_ID`),
  read from its `turn` steps. A turn is found by its request, not by its place in the program,
  so an edited program (or another program) is answered wherever it asks what that run asked.
- `AnswerCache`: the `answers` table of the store (`--cache`, `cache = true`): every completed
  answer paid for, kept by fingerprint, for any later run.
- `ReadyAnswers`: both, as the model call asks them (reuse first, then the cache), counting
  what each answered for the run's summary line.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from ..handler.model_request import ModelAnswer, ModelRequest
from .store import Store, kept_json

# The cache's table, made when the cache is first used (a store that never used it has none).
ANSWERS_TABLE = """
CREATE TABLE IF NOT EXISTS answers (
    fingerprint TEXT PRIMARY KEY,   -- ModelRequest.fingerprint() of the request answered
    model TEXT NOT NULL,            -- the model asked
    answer TEXT NOT NULL,           -- JSON of ModelAnswer.as_record()
    created_at REAL NOT NULL
)
"""


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
    """The store's `answers` table: completed answers by the fingerprint of their request.

    It uses the recorded run's own store connection when there is one (recording() gives it),
    else one of its own, opened on first use: a run that asks no model opens nothing. The table
    is made when the cache is first used."""

    def __init__(self, path: str, recording: Callable[[], Store | None] = lambda: None) -> None:
        self.path = path
        self._recording = recording
        self._own: Store | None = None
        self._ready: set[int] = set()  # the connections the table is known to exist on
        self._lock = threading.Lock()

    def _table(self) -> Store:
        store = self._recording()
        with self._lock:
            if store is None:
                store = self._own = self._own or Store(self.path)
            if id(store) not in self._ready:
                store.write(ANSWERS_TABLE)
                self._ready.add(id(store))
        return store

    def answer(self, request: ModelRequest) -> ModelAnswer | None:
        """The kept answer to exactly this request, marked cached; None when there is none."""
        rows = self._table().query(
            "SELECT answer FROM answers WHERE fingerprint = ?", (request.fingerprint(),)
        )
        record = _json(rows[0]["answer"]) if rows else None
        return ModelAnswer.from_record(record).answered_from("cached") if record else None

    def keep(self, request: ModelRequest, answer: ModelAnswer) -> None:
        """Keep a paid answer for later runs, if it is complete (a failed, empty or cut-off
        answer is never kept: asked again, the request is sent again)."""
        if answer.source != "paid" or not completed(answer):
            return
        self._table().write(
            "INSERT OR REPLACE INTO answers (fingerprint, model, answer, created_at) VALUES (?, ?, ?, ?)",
            (request.fingerprint(), request.model, kept_json(answer.as_record()), time.time()),
        )


def clear_cache(store: Store) -> int:
    """Empty the store's answer cache; how many answers it held (0 when it never had one)."""
    if not store.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'answers'"):
        return 0
    count = int(store.query("SELECT COUNT(*) AS n FROM answers")[0]["n"])
    store.write("DELETE FROM answers")
    return count


class ReadyAnswers:
    """Where a model turn's answer may come from before it is sent: the run reused (`reuse`,
    set per run) and then the cache (when on). Counts the turns each answered."""

    def __init__(self, cache: AnswerCache | None = None) -> None:
        self.reuse: ReusedTurns | None = None
        self.cache = cache
        self.reused = 0
        self.cached = 0
        self._lock = threading.Lock()

    def ready(self, request: ModelRequest) -> ModelAnswer | None:
        """The reused or cached answer to request, or None: it must be sent."""
        answer = self.reuse.take(request) if self.reuse is not None else None
        if answer is None and self.cache is not None:
            answer = self.cache.answer(request)
        if answer is not None:
            with self._lock:
                if answer.source == "reused":
                    self.reused += 1
                else:
                    self.cached += 1
        return answer

    def keep(self, request: ModelRequest, answer: ModelAnswer) -> None:
        """A paid answer, kept in the cache when it is on."""
        if self.cache is not None:
            self.cache.keep(request, answer)


def _notes(text: Any) -> dict[str, Any]:
    record = _json(text)
    notes = record.get("notes") if isinstance(record, dict) else None
    return notes if isinstance(notes, dict) else {}


def _json(text: Any) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return None
