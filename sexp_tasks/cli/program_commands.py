"""`sexp run FILE` (a recorded run of a program) and `sexp eval EXPRESSION`: run a program and
print its value; exit 1 when it raised or its value is a failed task result."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ..config import Settings
from ..diagnostics import INTERRUPTED, failed_result_line, report
from ..lang.printer import to_json, to_repr
from ..lang.values import Value
from .bindings import parse_bindings
from .command_line import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    CommandParser,
    Commands,
    command_settings,
    guarded,
)
from .program_file import read_program
from .setting_options import add_setting_options, given_settings

if TYPE_CHECKING:
    from ..runtime import Runtime


def register(commands: Commands) -> None:
    """Declare `sexp run` and `sexp eval` among commands."""
    run_parser = commands.add_parser("run", help="run a .sexp program")
    run_parser.add_argument("file", help="the program")
    _program_options(run_parser)
    _run_options(run_parser)
    run_parser.set_defaults(run=run_file)

    eval_parser = commands.add_parser("eval", help="evaluate an expression and print its value")
    eval_parser.add_argument("expression", help="the program text: one or more forms")
    _program_options(eval_parser)
    eval_parser.set_defaults(run=evaluate_expression)


def _program_options(parser: CommandParser) -> None:
    """The options run and eval share: the globals bound, what is printed, the settings."""
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="bind a global (a literal, or JSON {...} or [...] as a dict or list; else a string)",
    )
    parser.add_argument(
        "--set-str", action="append", default=[], metavar="NAME=VALUE", help="bind a global to a string"
    )
    parser.add_argument(
        "--json", action="store_true", help="print the value as JSON (what the program prints goes to stderr)"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the JSON value and errors")
    add_setting_options(parser)
    parser.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show Python tracebacks for errors"
    )


def _run_options(parser: CommandParser) -> None:
    """run's own options, after the ones it shares with eval: how the recorded run starts."""
    again = parser.add_mutually_exclusive_group()
    again.add_argument("--resume", metavar="RUN_ID", help="re-run, answering completed steps from the store")
    again.add_argument("--reuse", metavar="RUN_ID", help="a new run, answering what RUN_ID also asked")
    parser.add_argument("--force", action="store_true", help="with --resume: resume an edited program")


def run_file(args: argparse.Namespace, cwd: Path) -> int:
    """`sexp run FILE`: run the program as a recorded run, then say what its model calls spent."""
    settings = command_settings(cwd, given_settings(args))
    path = Path(args.file)
    text = read_program(path, args.file)
    started: list[Runtime] = []  # the runtime, so an interrupt can mark its run even if it is stuck

    def abandon() -> None:
        if started:
            started[0].abandon_run()

    try:
        status = guarded(args, lambda: _run(args, settings, text, path, False, started), abandon)
    except KeyboardInterrupt:
        report(INTERRUPTED)
        status = EXIT_INTERRUPTED
    finally:
        if started:  # its spans are sent (or given up on) before the summary
            started[0].close_telemetry()
    if started:  # the run's summary line comes last
        from .run_reports import report_spending  # lazy: the run store and traces (cli/startup.py)

        report_spending(started[0])
    return status


def evaluate_expression(args: argparse.Namespace, cwd: Path) -> int:
    """`sexp eval EXPRESSION`: evaluate it (no run is recorded) and print its value, nil too."""
    settings = command_settings(cwd, given_settings(args))
    started: list[Runtime] = []  # the runtime, so an interrupt can erase the answers it shows

    def abandon() -> None:
        if started:
            started[0].abandon_run()

    try:
        return guarded(args, lambda: _run(args, settings, args.expression, None, True, started), abandon)
    finally:
        if started:
            started[0].close_telemetry()


def _run(
    args: argparse.Namespace,
    settings: Settings,
    text: str,
    path: Path | None,
    print_nil: bool,
    started: list[Runtime] | None = None,
) -> int:
    from ..runtime import Runtime  # lazy: --help starts without the language (cli/startup.py)

    # With --json, stdout holds the one JSON document; what the program prints goes to stderr.
    runtime = Runtime(settings, out=sys.stderr if args.json else None, program=path, show_answers=True)
    forms = runtime.compiler.forms  # the special forms --set cannot bind
    bindings = parse_bindings(args.set, True, forms) + parse_bindings(args.set_str, False, forms)
    if started is not None:
        started.append(runtime)
    bound = runtime.bind_inputs(bindings)
    if path is None:
        value = runtime.run_source(text, "<eval>")
    else:
        value = runtime.run_recorded(path, text, bound, args.resume, args.force, reuse=args.reuse)
    _report(value, args.json, settings.quiet, print_nil, sys.stdout)
    failure = failed_result_line(value)
    if failure is not None:
        report(failure)
        return EXIT_ERROR
    return EXIT_OK


def _report(value: Value, as_json: bool, quiet: bool, print_nil: bool, out: TextIO) -> None:
    if as_json:
        out.write(to_json(value) + "\n")
    elif not quiet and (value is not None or print_nil):
        out.write(to_repr(value) + "\n")
    out.flush()
