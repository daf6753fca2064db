"""One run of a program (SPEC §6): the budget its model calls spend from, the cassette they are
recorded to or replayed from, and — when it is recorded — its row in the store, its lock and its
journal, from its beginning to its end, in one place.

Every front door opens its runs here, each with one policy:
- begin now (`sexp run`, `Session.run_file(recorded=True)`): `begin` or `resume`, announced;
- begin at the first step (the REPL, each input its own run): `begin_at_first_step`, so an input
  that calls no task records nothing and makes no store;
- a batch row: a run id and an open store given, and the batch's budget shared (not seeded on
  resume: the batch seeded it with what all its rows had spent).

A run is handed to the task system per execution: `with run.active():` makes it the run of the
code inside (a context variable, which pmap's workers inherit); `current_run()` reads it. This
module knows no Runtime, Session or TaskSystem: what a front door says about a run (`run: <id>`,
the resume hint) comes in as callbacks.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any, Protocol

from ..errors import RunError, SexpError
from ..handler.cost import CostBudget
from ..handler.replay import Cassette
from .answers import ReadyAnswers, ReusedTurns
from .journal import Journal, new_run_id, program_hash
from .store import Store, kept_json

StoreOpener = Callable[[bool], Store]  # (create) -> the store: a new one, or one already open
Announce = Callable[[str], None]  # (run id): `run: <id>` on stderr
Interrupted = Callable[[str, "str | None"], None]  # (run id, program): the resume hint

_CURRENT: ContextVar[Run | None] = ContextVar("sexp_run", default=None)


class Lock(Protocol):
    """A run's lock (runs/locks.py's, or a Ray row's held in the batch's store keeper)."""

    def close(self) -> None:
        """Let go of it."""
        ...


def current_run() -> Run | None:
    """The run of the code running now (None outside any `run.active()`)."""
    return _CURRENT.get()


class CassetteSlot:
    """The --record or --replay cassette of one or more runs (a session's inputs, a batch's rows),
    opened when the first model call asks for it (recording empties the file) and then kept."""

    def __init__(self, opener: Callable[[], Cassette | None]) -> None:
        self._opener = opener
        self._opened = False
        self._cassette: Cassette | None = None
        self._lock = threading.Lock()

    @classmethod
    def of(cls, record: str | None, replay: str | None) -> CassetteSlot:
        """The cassette --record (written) or --replay (read) names; none without either."""
        if record:
            return cls(lambda: Cassette(record, "record"))
        return cls(lambda: Cassette(replay, "replay") if replay else None)

    def get(self) -> Cassette | None:
        """The cassette, opened now if it is not yet (a ServiceError when it cannot be)."""
        with self._lock:
            if not self._opened:
                self._cassette = self._opener()
                self._opened = True
            return self._cassette


class Run:
    """One run: its budget and cassette, and when recorded its store, run id, lock and journal."""

    def __init__(
        self,
        budget: CostBudget,
        cassette: CassetteSlot,
        open_store: StoreOpener | None = None,
        where: str = "",
        *,
        run_id: str | None = None,
        shares_budget: bool = False,
        announce: Announce | None = None,
        interrupted: Interrupted | None = None,
    ) -> None:
        """open_store: the store a recorded run writes to (None: the run is never recorded), named
        `where` in errors; run_id: the id to record under (a new one by default: a batch chooses
        its rows'); shares_budget: budget is others' too, so a resume does not seed it; announce
        and interrupted: what the front door says when the run begins, and ends interrupted."""
        self.budget = budget
        self.cassette = cassette
        self.run_id = run_id
        self.store: Store | None = None  # the store written to, once the run has begun
        self.journal: Journal | None = None  # set when the run is recorded
        self.answers = ReadyAnswers()  # its turns answered without a request: reused, cached (SPEC §11.2)
        self._open_store = open_store
        self._where = where
        self._shares_budget = shares_budget
        self._announce = announce or (lambda run_id: None)
        self._interrupted = interrupted or (lambda run_id, program: None)
        self._lock: Lock | None = None  # held while this process records the run
        self._times: tuple[float, float | None] = (time.monotonic(), None)

    @property
    def begun(self) -> bool:
        """Whether the run is in the store (a run beginning at its first step may not be yet)."""
        return self.store is not None

    @property
    def seconds(self) -> float:
        """Its wall time so far, or until it ended (`sexp run`'s summary line)."""
        began, ended = self._times
        return (time.monotonic() if ended is None else ended) - began

    @contextmanager
    def active(self) -> Iterator[Run]:
        """The block runs as this run: the task system's calls in it record and spend here."""
        token = _CURRENT.set(self)
        try:
            yield self
        finally:
            _CURRENT.reset(token)

    # Beginning ----------------------------------------------------------------------------
    def begin(self, program: str, text: str, inputs: Mapping[str, object], reuse: str | None = None) -> str:
        """Record the run in the store from now on; its id (announced). reuse: a run of the store
        whose recorded answers this one's model turns take when they ask what it asked (`--reuse`;
        a RunError, before anything is recorded, when the store holds no such run)."""
        self._times = (time.monotonic(), None)
        store = self._opener()(reuse is None)  # a run to reuse needs a store that holds it
        if reuse is not None:
            turns = ReusedTurns.of_run(store, reuse)
            if turns is None:
                raise RunError(f"unknown run '{reuse}' in {self._where}")
            self.answers = ReadyAnswers(turns)
        run_id = self.run_id = self.run_id or new_run_id()
        self._lock = store.hold_run(run_id)
        with self._letting_go_on_error():
            store.begin_run(run_id, program, program_hash(text), dict(inputs))
            self._recording(store, Journal(store, run_id, root=_program_root(program)))
        self._announce(run_id)
        return run_id

    def begin_at_first_step(self, program: str, text: str) -> None:
        """Record the run from its first step on (the store is opened, the run's row and lock
        taken, only then): until a step is recorded, the run leaves nothing behind."""
        self._times = (time.monotonic(), None)
        run_id = self.run_id = self.run_id or new_run_id()
        opener = self._opener()

        def begin() -> Store:
            store = opener(True)
            self._lock = store.hold_run(run_id)  # so `sexp runs` sees it live
            store.begin_run(run_id, program, program_hash(text), {})
            self.store = store
            return store

        self.journal = Journal(None, run_id, root=_program_root(program), begin=begin)

    def resume(
        self, run_id: str, program: str, text: str, inputs: Mapping[str, object], force: bool
    ) -> dict[str, Any]:
        """Record into run_id again, its completed steps answered from the store; the inputs it
        was recorded with, for the caller to bind when none are given.

        A changed program or changed inputs are refused unless forced (and then recorded as the
        run's); the budget starts from what the run had spent (unless shared)."""
        self._times = (time.monotonic(), None)
        store = self._opener()(False)
        run = store.run(run_id)
        if run is None:
            raise RunError(f"unknown run '{run_id}' in {self._where}")
        digest = program_hash(text)
        if run["program_hash"] != digest and not force:
            raise RunError(
                f"the program has changed since run {run_id} was recorded; resume anyway with --force"
                " (steps whose requests changed will run again)"
            )
        recorded: dict[str, Any] = json.loads(run["inputs"] or "{}")
        given = dict(inputs)
        if given and json.loads(kept_json(given)) != recorded and not force:  # as the store keeps them
            raise RunError(
                f"run {run_id} was recorded with other --set inputs ({run['inputs']}); give the same ones,"
                " none (to reuse them), or --force"
            )
        self.run_id = run_id
        self._lock = store.hold_run(run_id)
        with self._letting_go_on_error():
            if store.run(run_id) is None:  # pruned while this process looked at it
                raise RunError(f"unknown run '{run_id}' in {self._where}")
            store.reopen_run(run_id, digest if force else None, given if force and given else None)
            self._recording(store, Journal(store, run_id, resuming=True, root=_program_root(program)))
            if not self._shares_budget:
                self.budget.seed(float(store.run_cost(run_id)))
        self._announce(run_id)
        return {} if given else recorded

    def _recording(self, store: Store, journal: Journal) -> None:
        self.store, self.journal = store, journal

    def _opener(self) -> StoreOpener:
        if self._open_store is None:
            raise RunError("this run has no store to be recorded in")
        return self._open_store

    @contextmanager
    def _letting_go_on_error(self) -> Iterator[None]:
        """The run's lock is let go of when recording it cannot begin (the store refused a write)."""
        try:
            yield
        except BaseException:
            self.release()
            raise

    # Ending -------------------------------------------------------------------------------
    def end(self, status: str) -> None:
        """Mark the recorded run completed, failed or interrupted and let go of its lock (nothing
        for a run never begun); an interrupted one says how to resume it."""
        store, run_id = self.store, self.run_id
        if store is None or run_id is None:
            self._times = (self._times[0], time.monotonic())
            return
        try:
            store.end_run(run_id, status)
        finally:
            self.release()  # the run is over: another session may resume it
            self._times = (self._times[0], time.monotonic())
        if status == "interrupted":
            self._interrupted(run_id, (store.run(run_id) or {}).get("program"))

    def abandon(self) -> None:
        """From another thread, when the evaluating one cannot stop in time (blocked in C): mark
        the run interrupted, on a connection of its own, if nothing else has, and let go of its
        lock (the process exits now, without waiting for that thread)."""
        if self.store is None or self.run_id is None:
            return
        try:
            self.store.flush()  # the run's start, if still deferred: the connection below reads it
            store = Store(self.store.path, create=False)
            run = store.run(self.run_id)
            if run is not None and run["status"] == "running":
                store.end_run(self.run_id, "interrupted")
                self._interrupted(self.run_id, run["program"])
            store.close()
        except SexpError:
            pass  # the store is unusable now; the run stays resumable all the same
        finally:
            self.release()

    def release(self) -> None:
        """Let go of the run's lock, if held; its file goes with it."""
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.close()


@lru_cache(maxsize=64)
def _program_root(program: str) -> str | None:
    """The directory step keys are relative to: the program file's, None for <eval> and <repl>.
    Kept per program path: realpath asks the file system, and a batch asks once per row."""
    return None if program.startswith("<") else os.path.dirname(os.path.realpath(program))
