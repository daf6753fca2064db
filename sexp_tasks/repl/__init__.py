"""The REPL (SPEC §8): a Session with no terminal in it, and the shells that read lines for it."""

from __future__ import annotations

import sys

from ..config import Settings
from ..diagnostics import report, warning_line
from .lines import run_lines
from .session import Session


def start(settings: Settings, debug: bool = False) -> int:
    """Run the REPL on the terminal (prompt_toolkit), or a plain line loop when piped; exit status."""
    session = Session(settings)
    session.debug = debug
    for message in [*map(warning_line, settings.warnings), *session.startup_messages]:
        report(message)
    try:
        if sys.stdin is None:  # `sexp <&-`: no input at all
            return 0
        if sys.stdin.isatty() and sys.stdout.isatty():
            from .shell import run_shell  # lazy: prompt_toolkit, for a terminal only (cli/startup.py)

            return run_shell(session)

        if hasattr(sys.stdin, "reconfigure"):  # bytes that are not UTF-8 reach the session, which says so
            sys.stdin.reconfigure(errors="surrogateescape")
        return run_lines(session, sys.stdin, prompt=sys.stdin.isatty())
    finally:
        session.close()
