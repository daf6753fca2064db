"""The `sexp` command: parse arguments, build a Runtime, report results and errors.

Exit statuses: 0 success, 1 the program raised (or failed a check), 2 usage or syntax error,
130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from .. import __version__
from ..config import Settings, load_dotenv, load_settings
from ..diagnostics import (
    INTERRUPTED,
    error_line,
    failed_result_line,
    format_error,
    format_failure,
    report,
    traceback_text,
    warning_line,
)
from ..errors import OutputClosed, ReadError, UsageError
from ..lang.deepstack import run_with_deep_stack
from ..lang.printer import to_json, to_repr
from ..lang.values import Value
from ..redact import hide_credentials_from_other_processes
from .batch_commands import add_batch_parser, batch_command
from .bindings import parse_bindings
from .doc_commands import add_doc_parser, doc_command
from .program_file import read_program
from .project_commands import CONFIG_HELP, INIT_HELP, config_command, init_command
from .setting_options import add_setting_options
from .stdout import discard_stdout, guard_stdout

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
RUNS_HELP = (
    "List recent runs, newest first, one a line (a batch's rows under their batch). With --prune,"
    " delete instead the finished runs (completed or failed) with their steps, and the finished"
    " batches with their rows; interrupted runs and unfinished batches are kept (they can be"
    " resumed), and so is anything a live process holds. --older-than DAYS counts from the time a"
    " run ended. The store file is then compacted, unless another process is recording."
)


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors say `error:` once and exit 2 without a traceback."""

    def error(self, message: str) -> Any:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, error_line(message) + "\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand."""
    parser = _Parser(
        prog="sexp",
        usage="sexp [OPTIONS] [COMMAND ...]",
        description="A small Lisp for LLM workflows. With no COMMAND: the REPL (as `sexp repl`), "
        "which takes the options below; a COMMAND takes its own (sexp COMMAND --help).",
    )
    parser.add_argument("--version", action="version", version=f"sexp {__version__}")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks for errors")
    add_setting_options(parser)  # the REPL's
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser, prog="sexp")

    repl = commands.add_parser("repl", help="the REPL: what `sexp` alone starts, with run's setting options")
    add_setting_options(repl)
    repl.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)

    run = commands.add_parser("run", help="run a .sexp program")
    run.add_argument("file", help="the program")
    _program_options(run)
    again = run.add_mutually_exclusive_group()
    again.add_argument("--resume", metavar="RUN_ID", help="re-run, answering completed steps from the store")
    again.add_argument("--reuse", metavar="RUN_ID", help="a new run, answering what RUN_ID also asked")
    run.add_argument("--force", action="store_true", help="with --resume: resume an edited program")

    evaluate = commands.add_parser("eval", help="evaluate an expression and print its value")
    evaluate.add_argument("expression", help="the program text: one or more forms")
    _program_options(evaluate)
    add_batch_parser(commands)

    tasks = commands.add_parser("tasks", help="list, show, validate and match task templates")
    actions = tasks.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser, required=True)
    actions.add_parser("list", help="every template, with its description")
    actions.add_parser("show", help="one template in full").add_argument("name", help="the template's name")
    validate = actions.add_parser("validate", help="check XML template files or directories")
    validate.add_argument("paths", nargs="+", help="XML template files or directories of them")
    match = actions.add_parser("match", help="templates that fit a description")
    match.add_argument("text", nargs="+", help="what the task should do")
    render = actions.add_parser("render", help="print what a call of a template would send (sends nothing)")
    render.add_argument("name", help="the template's name")
    render.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an input or parameter (read as run's --set reads it: JSON {...} and [...] too)",
    )
    render.add_argument(
        "--set-str", action="append", default=[], metavar="NAME=VALUE", help="one, as a string"
    )
    render.add_argument("--model", help="the model, when the call names none (as run's --model)")
    render.add_argument("--json", action="store_true", help="print the request as JSON")
    for sub in actions.choices.values():
        sub.add_argument("--templates", action="append", default=[], metavar="DIR", help="also load DIR")

    index = commands.add_parser("index", help="index the workspace's files for get-context")
    index.add_argument("path", nargs="?", help="a directory or file in the workspace (default: all of it)")
    index.add_argument("--store", metavar="PATH", help="the store (default .sexp/store.db)")
    index.add_argument("--workspace", metavar="DIR", help="the directory paths are relative to")
    index.add_argument("-q", "--quiet", action="store_true", help="print only errors")
    index.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)

    check = commands.add_parser("check", help="check programs without running them")
    check.add_argument("files", nargs="+", metavar="FILE", help="the .sexp programs to check")
    check.add_argument(
        "--templates", action="append", default=[], metavar="DIR", help="load task templates from DIR"
    )
    check.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)

    runs = commands.add_parser(
        "runs", help="list recent runs, newest first (or prune finished ones)", description=RUNS_HELP
    )
    runs.add_argument("--limit", type=int, default=20, metavar="N", help="at most N runs (default 20)")
    runs.add_argument("--prune", action="store_true", help="delete finished runs; print `pruned N runs`")
    older = "with --prune: only those that ended DAYS days ago or more"
    runs.add_argument("--older-than", type=float, metavar="DAYS", help=older)
    trace = commands.add_parser("trace", help="show a run's tree of steps")
    trace.add_argument("run_id", metavar="RUN_ID", help="the run's id, as `sexp runs` lists it")
    trace.add_argument("--full", action="store_true", help="show each model call's request and answer")
    cache = commands.add_parser("cache", help="the model answers --cache keeps in the store")
    actions = cache.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser, required=True)
    clear = actions.add_parser("clear", help="remove every cached answer; print how many")
    for sub in (runs, trace, clear):
        sub.add_argument("--json", action="store_true", help="print JSON")
        sub.add_argument("--store", metavar="PATH", help="the run store (default .sexp/store.db)")

    lines = argparse.RawDescriptionHelpFormatter  # these help texts keep their lines
    config = commands.add_parser(
        "config", help="the settings in force", description=CONFIG_HELP, formatter_class=lines
    )
    add_setting_options(config)
    config.add_argument("--json", action="store_true", help='print {KEY: {"value", "source"}}')
    init = commands.add_parser(
        "init", help="write a starter project", description=INIT_HELP, formatter_class=lines
    )
    init.add_argument("directory", nargs="?", metavar="DIR", help="where (default: here; made if need be)")
    add_doc_parser(commands)
    return parser


def _program_options(parser: argparse.ArgumentParser) -> None:
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
        return _dispatch(args)
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


def _dispatch(args: argparse.Namespace) -> int:
    """Carry out the command; a command's module is imported when it runs, so --help starts without
    them (a start-up saving, listed in cli/startup.py with the Runtime and the reader below)."""
    cwd = Path.cwd()
    for warning in load_dotenv(cwd):
        report(warning_line(warning))
    if args.command == "init":
        return _guarded(args, lambda: init_command(args.directory))
    if args.command in ("check", "doc"):
        checking = _settings(cwd, {"template_flags": tuple(args.templates) or None})
        if args.command == "doc":
            return _guarded(args, lambda: doc_command(args.name, args.long, checking))
        return _guarded(args, lambda: _check(args.files, checking))
    if args.command in (None, "repl"):
        from ..repl import start

        return start(load_settings(cwd, _overrides(args)), debug=args.debug)  # it shows the warnings
    if args.command in ("runs", "trace", "cache"):
        from .run_commands import cache_clear_command, prune_command, runs_command, trace_command

        store = _settings(cwd, {"store": args.store})
        if args.command == "cache":
            return _guarded(args, lambda: cache_clear_command(store, args.json))
        if args.command == "runs" and (args.prune or args.older_than is not None):
            if not args.prune:
                raise UsageError("--older-than needs --prune")
            return _guarded(args, lambda: prune_command(store, args.older_than, args.json))
        if args.command == "runs":
            return _guarded(args, lambda: runs_command(store, args.json, args.limit))
        return _guarded(args, lambda: trace_command(store, args.run_id, args.json, full=args.full))
    if args.command == "index":
        from .index_commands import run_index_command

        index = (args.path, args.store, args.workspace, args.quiet, cwd)
        return _guarded(args, lambda: run_index_command(*index))
    if args.command == "tasks":
        from .task_commands import render_command, run_tasks_command

        flags = {"template_flags": tuple(args.templates) or None}
        settings = _settings(cwd, flags | {"model_override": getattr(args, "model", None)})
        if args.action == "render":
            sets = (args.set, args.set_str)
            return _guarded(args, lambda: render_command(settings, args.name, *sets, as_json=args.json))
        operands = {"show": lambda: [args.name], "validate": lambda: args.paths, "match": lambda: args.text}
        action = args.action
        return _guarded(args, lambda: run_tasks_command(action, operands.get(action, list)(), settings))
    settings = _settings(cwd, _overrides(args))
    if args.command == "config":
        return _guarded(args, lambda: config_command(settings, args.json))
    if args.command == "batch":
        return _guarded(args, lambda: batch_command(args, settings))
    if args.command == "run":
        path = Path(args.file)
        text = read_program(path, args.file)
        started: list[Any] = []  # the runtime, so an interrupt can mark its run even if it is stuck

        def abandon() -> None:
            if started:
                started[0].abandon_run()

        try:
            status = _guarded(args, lambda: _run(args, settings, text, path, False, started), abandon)
        except KeyboardInterrupt:
            report(INTERRUPTED)
            status = EXIT_INTERRUPTED
        if started:  # the run's summary line comes last
            from .run_commands import report_spending

            report_spending(started[0], args.reuse)
        return status
    return _guarded(args, lambda: _run(args, settings, args.expression, None, print_nil=True))


def _settings(cwd: Path, overrides: dict[str, Any]) -> Settings:
    """The settings of a command, its sexp.toml's warnings reported (unless --quiet)."""
    settings = load_settings(cwd, overrides)
    for warning in () if settings.quiet else settings.warnings:
        report(warning_line(warning))
    return settings


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "model_override": args.model,
        "template_flags": tuple(args.templates) or None,
        "mock_responses": args.mock_responses,
        "record": getattr(args, "record", None),
        "replay": getattr(args, "replay", None),
        "store": args.store,
        "workspace": args.workspace,
        "max_cost_usd": args.max_cost,
        "script_user": args.script_user,
        "max_retries": args.max_retries,
        "request_timeout": args.request_timeout,
        "quiet": getattr(args, "quiet", False) or None,
        "cache": args.cache,
    }


def _guarded(
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


def _run(
    args: argparse.Namespace,
    settings: Settings,
    text: str,
    path: Path | None,
    print_nil: bool,
    started: list[Any] | None = None,
) -> int:
    from ..runtime import Runtime  # lazy: --help starts without the language (cli/startup.py)

    # With --json, stdout holds the one JSON document; what the program prints goes to stderr.
    runtime = Runtime(settings, out=sys.stderr if args.json else None, program=path)
    forms = runtime.compiler.forms  # the special forms --set cannot bind
    bindings = parse_bindings(args.set, True, forms) + parse_bindings(args.set_str, False, forms)
    if started is not None:
        started.append(runtime)
    bound = runtime.bind_inputs(bindings)
    if path is None:
        value = runtime.run_source(text, "<eval>")
    else:
        value = runtime.run_recorded(path, text, bound, args.resume, args.force, args.reuse)
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


def _check(files: list[str], settings: Settings) -> int:
    from ..runtime import program_checker  # lazy, as in _run
    from ..syntax.reader import read

    status = EXIT_OK
    for name in files:
        try:
            forms = read(read_program(Path(name), name), name)
        except (UsageError, ReadError) as err:  # no such file, too large; or it does not read
            report(error_line(str(err)) if isinstance(err, UsageError) else format_error(err))
            status = max(status, EXIT_USAGE)
            continue
        problems = program_checker(settings, Path(name))(forms)
        for problem in problems:
            report(format_error(problem))
        if problems:
            status = max(status, EXIT_ERROR)
        else:
            print(f"{name}: ok")
    return status


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
