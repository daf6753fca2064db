"""The `sexp` command: parse arguments, carry out the command they name, report errors.

Exit statuses: 0 success, 1 the program raised (or failed a check), 2 usage or syntax error,
130 interrupted.

Each command is declared by its `cli/*_commands.py` module (COMMAND_MODULES below): its
`register(commands)` adds the command's parser and `set_defaults(run=FUNCTION)`, and main calls
`args.run(args, cwd)`. A command's module imports what only the command needs inside FUNCTION,
so --help starts without it (a start-up saving, listed in cli/startup.py).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from .. import __version__
from ..config import load_dotenv
from ..diagnostics import INTERRUPTED, error_line, report, traceback_text, warning_line
from ..errors import OutputClosed, UsageError
from ..redact import hide_credentials_from_other_processes
from . import (
    batch_commands,
    cache_commands,
    check_commands,
    doc_commands,
    index_commands,
    program_commands,
    project_commands,
    repl_commands,
    runs_commands,
    task_commands,
    tools_commands,
)
from .command_line import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, CommandParser, RunCommand
from .setting_options import add_setting_options
from .stdout import discard_stdout, guard_stdout

# The modules that declare the commands, in the order `sexp --help` lists them.
COMMAND_MODULES = (
    repl_commands,
    program_commands,
    batch_commands,
    task_commands,
    index_commands,
    check_commands,
    runs_commands,
    cache_commands,
    tools_commands,
    project_commands,
    doc_commands,
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand."""
    parser = CommandParser(
        prog="sexp",
        usage="sexp [OPTIONS] [COMMAND ...]",
        description="A small Lisp for LLM workflows. With no COMMAND: the REPL (as `sexp repl`), "
        "which takes the options below; a COMMAND takes its own (sexp COMMAND --help).",
    )
    parser.add_argument("--version", action="version", version=f"sexp {__version__}")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks for errors")
    add_setting_options(parser)  # the REPL's
    parser.set_defaults(run=repl_commands.start_repl)  # no COMMAND; a command's own run replaces it
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=CommandParser, prog="sexp"
    )
    for module in COMMAND_MODULES:
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    misplaced = _repl_option_before(args.command, sys.argv[1:] if argv is None else list(argv))
    if misplaced is not None:
        parser.error(f"{misplaced} before {args.command} is the REPL's option; give it after {args.command}")
    sys.set_int_max_str_digits(0)  # integers have any size: --set values too (the language core sets it too)
    hide_credentials_from_other_processes()  # before any script could look at this process
    try:
        cwd = Path.cwd()
        for warning in load_dotenv(cwd):
            report(warning_line(warning))
        run: RunCommand = args.run
        return run(args, cwd)
    except UsageError as err:
        report(error_line(str(err)))
        return EXIT_USAGE
    except KeyboardInterrupt:
        report(INTERRUPTED)
        return EXIT_INTERRUPTED
    except OutputClosed as closed:  # stdout closed or full: end quietly (SPEC §10.1)
        if getattr(args, "debug", False):
            sys.stderr.write(traceback_text(closed.cause))
        discard_stdout()
        return EXIT_OK if closed.closed_pipe else EXIT_ERROR


def _repl_option_before(command: str | None, argv: list[str]) -> str | None:
    """The first setting option given before a COMMAND other than repl (`sexp --model M run F`):
    there it would set nothing, as the command's own options are the ones read."""
    if command in (None, "repl") or command not in argv:
        return None
    before = argv[: argv.index(command)]
    return next((arg.partition("=")[0] for arg in before if arg.startswith("--") and arg != "--debug"), None)


def entry_point() -> None:
    """The console script: exit with main's status."""
    guard_stdout()
    status = main()
    try:
        sys.stdout.flush()
    except OutputClosed as closed:
        discard_stdout()
        status = status or (EXIT_OK if closed.closed_pipe else EXIT_ERROR)
    os._exit(status) if status == EXIT_INTERRUPTED else sys.exit(status)
