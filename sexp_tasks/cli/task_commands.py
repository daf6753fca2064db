"""`sexp tasks list|show NAME|validate PATH...|match TEXT|render NAME`: the task templates, printed
by cli/task_reports.py."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from ..config import Settings
from .command_line import CommandParser, Commands, command_settings, guarded
from .setting_options import given_settings

# The operands of each action that takes some, as run_tasks_command takes them.
OPERANDS: dict[str, Callable[[argparse.Namespace], list[str]]] = {
    "show": lambda args: [args.name],
    "validate": lambda args: args.paths,
    "match": lambda args: args.text,
}


def register(commands: Commands) -> None:
    """Declare `sexp tasks` and its actions among commands."""
    tasks = commands.add_parser("tasks", help="list, show, validate and match task templates")
    actions = tasks.add_subparsers(dest="action", metavar="ACTION", parser_class=CommandParser, required=True)
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
        sub.set_defaults(run=run_action)
    render.set_defaults(run=render_call)


def run_action(args: argparse.Namespace, cwd: Path) -> int:
    """`sexp tasks list|show|validate|match`."""
    from .task_reports import run_tasks_command  # lazy: the template loader (cli/startup.py)

    settings = _settings(args, cwd)
    operands = OPERANDS[args.action](args) if args.action in OPERANDS else []
    return guarded(args, lambda: run_tasks_command(args.action, operands, settings))


def render_call(args: argparse.Namespace, cwd: Path) -> int:
    """`sexp tasks render NAME`: print the request a call of the template would send."""
    from .task_reports import render_command  # lazy, as above

    settings = _settings(args, cwd)
    sets = (args.set, args.set_str)
    return guarded(args, lambda: render_command(settings, args.name, *sets, as_json=args.json))


def _settings(args: argparse.Namespace, cwd: Path) -> Settings:
    return command_settings(cwd, given_settings(args))  # render's --model is run's
