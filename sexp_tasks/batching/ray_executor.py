"""Placeholder for `sexp batch --executor ray`: the Ray executor is written on its own branch
(fix-ray), which replaces this file. It imports ray at the top, as that one does, so the
executor factory (driver.make_executor) can tell a missing Ray by the ImportError."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import ray  # noqa: F401  (an ImportError here is `pip install 'sexp-tasks[ray]'`)

from ..errors import BatchError
from .rows import RowJob, RowOutcome


class RayExecutor:
    """Not in this build yet."""

    def __init__(self, address: str | None, store_path: str | Path) -> None:
        raise BatchError("the Ray executor is not part of this build")

    def run(self, jobs: Iterator[RowJob], concurrency: int) -> Iterator[RowOutcome]:
        raise NotImplementedError

    def close(self) -> None:
        """Nothing to let go of."""
