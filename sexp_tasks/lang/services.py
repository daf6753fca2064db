"""What a primitive may ask of the runtime that installs it (the language core's side).

A primitive whose first parameter is named `ctx` is given the runtime's Services when the global
environment is built; it asks for nothing else, so the core never depends on what the runtime is.
The task system's primitives ask for more (tasks/task_services.py).
"""

from __future__ import annotations

from typing import Protocol

from .values import Value


class Services(Protocol):
    """The effects core primitives (print, log-message, read-file, write-file, load) reach for."""

    def write_output(self, text: str) -> None:
        """Write text where the program's output goes (print)."""
        ...

    def log(self, message: str) -> None:
        """Record a message in the log (stderr), unless quiet."""
        ...

    def read_file(self, path: str) -> str:
        """The text of a file in the workspace."""
        ...

    def write_file(self, path: str, text: str) -> str:
        """Write text to a file in the workspace; the path."""
        ...

    def load(self, path: str) -> Value:
        """Evaluate a .sexp file of the workspace in the global environment; its last value."""
        ...
