"""`sexp cache clear`: empty the answer cache `--cache` (`cache = true`) keeps in the run store
(SPEC §11.2); cleared by cli/run_reports.py."""

from __future__ import annotations

import argparse
from pathlib import Path

from .command_line import CommandParser, Commands, command_settings, guarded
from .setting_options import given_settings


def register(commands: Commands) -> None:
    """Declare `sexp cache` and its one action, `clear`, among commands."""
    cache = commands.add_parser("cache", help="the model answers --cache keeps in the store")
    actions = cache.add_subparsers(dest="action", metavar="ACTION", parser_class=CommandParser, required=True)
    clear = actions.add_parser("clear", help="remove every cached answer; print how many")
    clear.add_argument("--json", action="store_true", help="print JSON")
    clear.add_argument("--store", metavar="PATH", help="the run store (default .sexp/store.db)")
    clear.set_defaults(run=clear_cache)


def clear_cache(args: argparse.Namespace, cwd: Path) -> int:
    """`sexp cache clear`: remove every cached answer and say how many."""
    from .run_reports import cache_clear_command  # lazy: the run store (cli/startup.py)

    store = command_settings(cwd, given_settings(args))
    return guarded(args, lambda: cache_clear_command(store, args.json))
