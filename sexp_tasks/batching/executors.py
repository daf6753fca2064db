"""What runs a batch's rows: the `Executor` protocol the driver (driver.py) hands its rows to, and
`executor_factory`, which makes the one `--executor` names (ThreadExecutor, or RayExecutor on Ray).

Apart from the driver, which checks, records and writes a batch, because this is the one place
that knows the executors: Ray is imported here, and only when asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol

from ..errors import BatchError
from ..handler.cost import CostBudget
from ..runs.store import Store
from .row_runner import BatchShare
from .rows import RowJob, RowOutcome
from .thread_executor import ThreadExecutor

RAY_MISSING = "the Ray executor needs Ray, which is not installed: pip install 'sexp-tasks[ray]'"


class Executor(Protocol):
    """What runs rows: ThreadExecutor here, RayExecutor (batch/ray_executor.py) on Ray."""

    def run(self, jobs: Iterator[RowJob], concurrency: int) -> Iterator[RowOutcome]:
        """Each job's outcome in the order rows finish, taking jobs only as rows can start."""
        ...

    def close(self) -> None:
        """Start no more rows and let go of what the executor holds."""
        ...


ExecutorFactory = Callable[[Store, "CostBudget | None", "str | None", BatchShare], Executor]


def executor_factory(name: str) -> ExecutorFactory:
    """What makes the executor called name: (store, the batch's budget, Ray's address, what its
    rows share in this process) -> it. Ray is imported here, and only when asked for; its absence
    is a BatchError. Rows on Ray run in other processes: each row worker makes its own share."""
    if name == "threads":
        return lambda store, budget, address, share: ThreadExecutor(store, budget, share)
    if name == "ray":
        try:
            from .ray_executor import RayExecutor  # lazy: Ray is an optional extra (cli/startup.py)
        except ImportError:
            raise BatchError(RAY_MISSING) from None
        return lambda store, budget, address, share: RayExecutor(address, store.path, budget=budget)
    raise BatchError(f"unknown executor '{name}' (choose threads or ray)")


def interrupt(executor: Executor) -> None:
    """Stop the rows in flight: their runs are marked interrupted, and resume later."""
    stop = getattr(executor, "interrupt", None)
    if stop is not None:
        stop()
