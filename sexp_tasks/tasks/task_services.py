"""What the task system's primitives (pmap, match-tasks, load-templates, get-context) may ask of
the runtime: the core's Services, and the task system, the settings, warnings and stderr."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TextIO

from ..config import Settings
from ..lang.services import Services

if TYPE_CHECKING:  # the runner pulls in the handler and the journal: a primitive only needs its type
    from .runner import TaskSystem


class TaskServices(Services, Protocol):
    """The runtime as the task system's primitives see it (their `ctx`)."""

    settings: Settings  # the run's settings (concurrency, quiet, store, models...)
    tasks: TaskSystem  # templates, matching, the run's journal
    err: TextIO  # where progress bars are drawn (stderr)

    def warn(self, message: str) -> None:
        """A `warning:` line on stderr, unless quiet."""
        ...
