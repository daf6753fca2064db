"""The actors of a batch on Ray (ray_executor.py starts them), which run in Ray's processes.

- `RowWorker`: one worker process, running the rows it is handed on threads of its own and
  handing back, a chunk at a time through its `exchange`, the rows that ended and the lines rows
  printed (row_output.py).
- `StoreKeeper`: the batch's run store opened on the driver's node, answering the calls of
  workers on other machines, which reach it through a `StoreProxy` (its locks: `RemoteHold`).

Kept apart from the driver's side (ray_executor.py: starting Ray and these actors, sending rows
and collecting outcomes): this is what runs in Ray's worker processes. Like ray_executor.py, it
imports ray (pyproject.toml's contract names the two) and is imported only when a batch asks for Ray.
"""

from __future__ import annotations

import dataclasses
import os
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ray

from ..diagnostics import error_line
from ..errors import SexpError, StoreError
from ..lang.deepstack import start_deep_thread
from ..redact import hide_credentials_from_other_processes
from ..runs.store import Store
from . import row_output
from .row_runner import BatchShare
from .row_runtime import RowRuntimes
from .rows import RowJob, RowOutcome
from .shared_budget import RemoteBudget
from .shipping import unpack

RowRunner = Callable[..., RowOutcome]  # (job, store, budget, share, runtime_for): run_row
GATHER_SECONDS = 0.005  # how long a worker lets rows ending together gather before it hands them back


class StoreKeeper:
    """The run store of a batch on Ray: a Store opened on the driver's node, answering rows' calls.

    A run's lock (Store.hold_run) is taken here and kept until the run ends or the batch does, so
    a row run again after its worker died takes it back (the keeper holds it already)."""

    def __init__(self, path: str) -> None:
        self.store = Store(path)
        self.held: dict[str, Any] = {}

    def call(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[bool, Any]:
        """(True, what store.method(*args, **kwargs) returned) or (False, the SexpError it raised)."""
        if method.startswith("_") or method in ("close", "write", "write_many"):
            return False, StoreError(f"a row cannot call the store's {method}")
        try:
            if method == "hold_run":
                run_id = args[0] if args else kwargs["run_id"]
                if run_id not in self.held:
                    self.held[run_id] = self.store.hold_run(run_id)
                return True, None
            result = getattr(self.store, method)(*args, **kwargs)
            if method == "end_run":
                self.release(args[0] if args else kwargs["run_id"])
            return True, result
        except SexpError as err:
            return False, err

    def release(self, run_id: str) -> None:
        handle = self.held.pop(run_id, None)
        if handle is not None:
            handle.close()

    def ping(self) -> str:
        return "ok"


class RemoteHold:
    """What StoreProxy.hold_run returns: the lock lives in the keeper; closing it lets it go."""

    def __init__(self, keeper: Any, run_id: str) -> None:
        self._keeper = keeper
        self.run_id = run_id

    def close(self) -> None:
        ray.get(self._keeper.release.remote(self.run_id))


class StoreProxy:
    """The Store methods a row's run uses (begin_run, step_started, step...), each one a call to
    the batch's StoreKeeper. `path` is the store's path on the driver's machine."""

    def __init__(self, keeper: Any, path: str) -> None:
        self._keeper = keeper
        self.path = Path(path)

    def hold_run(self, run_id: str) -> RemoteHold:
        self._call("hold_run", (run_id,), {})
        return RemoteHold(self._keeper, run_id)

    def _call(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        ok, result = ray.get(self._keeper.call.remote(method, args, kwargs))
        if not ok:
            raise result
        return result

    def __getattr__(self, method: str) -> Callable[..., Any]:
        if method.startswith("_"):
            raise AttributeError(method)
        return lambda *args, **kwargs: self._call(method, args, kwargs)


class RowWorker:
    """One worker process: runs the rows it is handed on `threads` threads of its own, and hands
    back the rows that ended and the lines rows printed (row_output.py), a chunk at a time."""

    def __init__(
        self,
        keeper: Any,
        store_path: str,
        runner: RowRunner,
        driver_node: str | None,
        credentials: dict[str, str] | None = None,
        budget: tuple[Any, float] | None = None,  # the BudgetKeeper and the batch's limit
        threads: int = 1,
    ) -> None:
        if credentials:  # set now: not in the environment /proc shows, and this process closed to others
            os.environ.update(credentials)
            hide_credentials_from_other_processes()
        # On the driver's machine, the store file itself (SQLite, shared as `sexp run`s share it:
        # no round trip per step); elsewhere through the keeper.
        here = ray.get_runtime_context().get_node_id()
        direct = keeper is None or here == driver_node
        self.store: Any = Store(store_path) if direct else StoreProxy(keeper, store_path)
        self.runner = runner
        self.budget = RemoteBudget(*budget, ray.get) if budget is not None else None
        self.programs: dict[str, tuple[Any, dict[str, Any]]] = {}  # unpacked bundles by ref
        self.share: BatchShare | None = None  # the batch's templates and cassette in this process
        self.runtimes: RowRuntimes | None = None  # each of its threads' Runtime, reused row after row
        self.lock = threading.Lock()
        self.todo: queue.Queue[RowJob] = queue.Queue()
        self.changed = threading.Condition()  # a row ended, or printed a line
        self.ended: list[RowOutcome] = []
        self.printed: list[str] = []
        self.routing = row_output.routed(self._printed)  # for the process's life: it serves one batch
        self.routing.__enter__()
        for number in range(threads):
            start_deep_thread(self._work, f"sexp-row-{number}")

    def exchange(self, chunk: list[RowJob], program: list[Any]) -> tuple[list[RowOutcome], list[str]]:
        """Start chunk's rows (all of one program: [the ref of its packed ProgramBundle], in a
        list so that Ray hands the ref over as it is; each bundle is fetched and unpacked once);
        then, once a row of this worker ended or printed, the rows that ended since the last
        exchange and the lines printed meanwhile."""
        if chunk:
            key = program[0].hex()
            if key not in self.programs:
                self.programs[key] = unpack(ray.get(program[0]))
            bundle, changes = self.programs[key]
            for job in chunk:
                self.todo.put(dataclasses.replace(job, program=bundle, settings={**job.settings, **changes}))
        with self.changed:
            self.changed.wait_for(lambda: self.ended or self.printed)
        time.sleep(GATHER_SECONDS)  # rows ending together travel together
        with self.changed:
            ended, self.ended = self.ended, []
            printed, self.printed = self.printed, []
        return ended, printed

    def _work(self) -> None:
        while True:
            job = self.todo.get()
            began = time.monotonic()
            with self.lock:  # made once, by the first row: a worker serves one batch
                if self.share is None:
                    self.share = BatchShare.for_row(job)
                    self.runtimes = RowRuntimes(self.share) if self.share is not None else None
            fresh = self.runtimes.fresh if self.runtimes is not None else None
            try:
                with row_output.labelled(job.index):
                    outcome = self.runner(job, self.store, self.budget, self.share, fresh)
            except BaseException as err:  # a bug (run_row reports a row's own errors): the row's,
                # and this thread goes on (a row that never ended would hold its exchange forever)
                outcome = error_outcome(job, f"the row failed on Ray: {one_line(err)}", began)
            with self.changed:
                self.ended.append(outcome)
                self.changed.notify_all()

    def _printed(self, line: str) -> None:
        with self.changed:
            self.printed.append(line)
            self.changed.notify_all()


def error_outcome(job: RowJob, message: str, started: float) -> RowOutcome:
    """job's row ended as an error, with message, at the program's file."""
    return RowOutcome(
        index=job.index,
        status="error",
        value=None,
        error=error_line(message, job.program.path),
        run_id=job.run_id,
        tokens=0,
        cost_usd=0.0,
        seconds=round(time.monotonic() - started, 3),
    )


def one_line(err: BaseException) -> str:
    """An exception from Ray as one line (its first)."""
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__
