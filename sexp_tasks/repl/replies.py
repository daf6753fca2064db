"""What the REPL session answers to one submitted input."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Incomplete:
    """The input stops inside a list or string: read another line and submit them together."""


@dataclass(frozen=True)
class Printed:
    """Text to show on standard output ('' when there is nothing to show, as for nil)."""

    text: str = ""


@dataclass(frozen=True)
class Failed:
    """An error, rendered for standard error; the session goes on."""

    text: str


@dataclass(frozen=True)
class Quit:
    """The user asked to leave."""


Reply = Incomplete | Printed | Failed | Quit
