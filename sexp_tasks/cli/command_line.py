"""What every `sexp` command shares: the exit statuses, the parser class, the settings read from a
command's options, and the guard that turns an error into a message and an exit status.

A command is declared by its `cli/*_commands.py` module, listed in cli/main.py's COMMAND_MODULES:
the module's `register(commands)` adds the command's parser to `commands` (argparse's subparsers)
with `set_defaults(run=FUNCTION)`, and `sexp` calls FUNCTION(args, cwd) for the exit status. Every
start imports every command module (`sexp --help` too), so what a command needs beyond argparse and
the package's small modules is imported inside FUNCTION, and listed in cli/startup.py.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeAlias

from ..config import Settings, load_settings
from ..diagnostics import error_line, format_failure, report, warning_line
from ..errors import OutputClosed, ReadError, UsageError
from ..lang.deepstack import run_with_deep_stack

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

# What carries out a command: its parsed arguments and the directory it started in -> exit status.
RunCommand: TypeAlias = Callable[[argparse.Namespace, Path], int]


class CommandParser(argparse.ArgumentParser):
    """argparse, but usage errors say `error:` once and exit 2 without a traceback."""

    def error(self, message: str) -> Any:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, error_line(message) + "\n")


# The subcommands of a parser (what `add_subparsers(parser_class=CommandParser)` returns).
Commands: TypeAlias = "argparse._SubParsersAction[CommandParser]"


def command_settings(cwd: Path, overrides: dict[str, Any]) -> Settings:
    """The settings of a command, its sexp.toml's warnings reported (unless --quiet)."""
    settings = load_settings(cwd, overrides)
    for warning in settings.warnings:
        if not settings.quiet:
            report(warning_line(warning))
    return settings


def guarded(
    args: argparse.Namespace, action: Callable[[], int], on_interrupt: Callable[[], None] | None = None
) -> int:
    """Run action on a deep stack; turn every error into a message and an exit status."""
    try:
        return run_with_deep_stack(action)
    except KeyboardInterrupt:
        if on_interrupt is not None:
            on_interrupt()
        raise
    except UsageError:
        raise
    except BrokenPipeError as err:  # `sexp runs | head -1`: the reader has what it wanted
        raise OutputClosed(err) from None
    except Exception as exc:  # the program's error, too deep a nesting, or a bug in sexp itself
        report(format_failure(exc, getattr(args, "debug", False), debug_hint=True))
        return EXIT_USAGE if isinstance(exc, ReadError) else EXIT_ERROR
