"""Rows on worker threads of this process: the default executor of `sexp batch`.

`concurrency` threads (each with a large C stack, as pmap's) share one cursor over the jobs,
taking the next only when they are free, so at most `concurrency` rows are in flight and the
jobs are read no faster than rows finish. Each row records into the driver's one store (its
connection is shared, its writes committed in groups: runs/store.py) and reserves from the
batch's one budget; each thread runs its rows in one Runtime, reused (row_runtime.py).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator

from ..handler.cost import CostBudget
from ..lang.deepstack import STACK_BYTES, raise_interrupt_in, start_thread
from ..runs.store import Store
from . import row_output
from .row_runner import BatchShare, run_row
from .row_runtime import RowRuntimes
from .rows import RowJob, RowOutcome

WAIT_STEP = 0.1  # seconds between checks while waiting, so that Ctrl-C reaches the driver
INTERRUPT_GRACE = 1.0  # seconds interrupted rows get to mark their runs interrupted


class _Finished:
    """What a worker puts on the queue when it stops: the error that stopped it, if any."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


class ThreadExecutor:
    """Runs rows on threads of this process (Executor of batching/executors.py)."""

    def __init__(
        self, store: Store, budget: CostBudget | None = None, share: BatchShare | None = None
    ) -> None:
        """budget: the batch's, every row's; share: the templates and cassette of the batch's rows."""
        self.store = store
        self.budget = budget
        self.share = share
        # each worker thread's Runtime, reused for its next rows (row_runtime.py)
        self.runtimes = RowRuntimes(share) if share is not None else None
        self._lock = threading.Lock()
        self._stopped = False
        self._working: set[threading.Thread] = set()

    def run(self, jobs: Iterator[RowJob], concurrency: int) -> Iterator[RowOutcome]:
        """Each job's outcome, in the order rows finish; what rows print reaches stderr, each line
        labelled with its row (row_output.py)."""
        with row_output.routed():
            yield from self._run(jobs, concurrency)

    def _run(self, jobs: Iterator[RowJob], concurrency: int) -> Iterator[RowOutcome]:
        done: queue.Queue[RowOutcome | _Finished] = queue.Queue()
        workers = self._start(jobs, concurrency, done)
        running = len(workers)
        while running:
            try:
                item = done.get(timeout=WAIT_STEP)
            except queue.Empty:
                continue
            if isinstance(item, _Finished):
                running -= 1
                if item.error is not None:
                    self.close()
                    raise item.error
                continue
            yield item

    def _start(
        self, jobs: Iterator[RowJob], concurrency: int, done: queue.Queue[RowOutcome | _Finished]
    ) -> list[threading.Thread]:
        def work() -> None:
            me = threading.current_thread()
            error: BaseException | None = None
            try:
                while (job := self._take(jobs)) is not None:
                    with self._lock:
                        self._working.add(me)
                    try:
                        fresh = self.runtimes.fresh if self.runtimes is not None else None
                        with row_output.labelled(job.index):
                            outcome = run_row(job, self.store, self.budget, self.share, fresh)
                    finally:
                        with self._lock:
                            self._working.discard(me)
                    done.put(outcome)
            except KeyboardInterrupt:  # interrupt(): the batch was interrupted
                pass
            except BaseException as exc:  # reading the jobs failed, or a bug: stop the batch
                error = exc
            done.put(_Finished(error))

        previous = threading.stack_size(STACK_BYTES)
        try:
            workers = [
                threading.Thread(target=work, name=f"sexp-batch-{i}", daemon=True) for i in range(concurrency)
            ]
            for worker in workers:
                start_thread(worker)
        finally:
            threading.stack_size(previous)
        return workers

    def _take(self, jobs: Iterator[RowJob]) -> RowJob | None:
        with self._lock:
            if self._stopped:
                return None
            return next(jobs, None)

    def close(self) -> None:
        """Start no more rows (those in flight finish)."""
        with self._lock:
            self._stopped = True

    def interrupt(self) -> None:
        """Start no more rows, and raise KeyboardInterrupt in those in flight (Ctrl-C): their runs
        are marked interrupted, and the batch resumes them later."""
        with self._lock:
            self._stopped = True
            working = list(self._working)
        for worker in working:
            raise_interrupt_in(worker)
        deadline = time.monotonic() + INTERRUPT_GRACE
        while any(worker.is_alive() for worker in working) and time.monotonic() < deadline:
            time.sleep(0.01)
