"""`sexp check FILE...`: check programs without running them; `FILE: ok`, or each problem found
(exit 1; 2 for a file that cannot be read or has a syntax error)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..config import Settings
from ..diagnostics import error_line, format_error, report
from ..errors import ReadError, UsageError
from .command_line import EXIT_ERROR, EXIT_OK, EXIT_USAGE, Commands, command_settings, guarded
from .program_file import read_program
from .setting_options import given_settings


def register(commands: Commands) -> None:
    """Declare `sexp check` among commands."""
    check = commands.add_parser("check", help="check programs without running them")
    check.add_argument("files", nargs="+", metavar="FILE", help="the .sexp programs to check")
    check.add_argument(
        "--templates", action="append", default=[], metavar="DIR", help="load task templates from DIR"
    )
    check.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    check.set_defaults(run=run_check)


def run_check(args: argparse.Namespace, cwd: Path) -> int:
    """Check each file of the command line; the worst exit status of them."""
    checking = command_settings(cwd, given_settings(args))
    return guarded(args, lambda: _check(args.files, checking))


def _check(files: list[str], settings: Settings) -> int:
    # lazy: --help starts without the language (cli/startup.py)
    from ..runtime import program_checker, server_tool_lister
    from ..syntax.reader import read

    status = EXIT_OK
    server_tools = server_tool_lister(settings)  # each MCP server listed once for every file
    for name in files:
        try:
            text = read_program(Path(name), name)
        except UsageError as err:
            report(error_line(str(err)))
            status = max(status, EXIT_USAGE)
            continue
        try:
            forms = read(text, name)
        except ReadError as err:
            report(format_error(err))
            status = max(status, EXIT_USAGE)
            continue
        problems = program_checker(settings, Path(name), server_tools=server_tools)(forms)
        for problem in problems:
            report(format_error(problem))
        if problems:
            status = max(status, EXIT_ERROR)
        else:
            print(f"{name}: ok")
    return status
