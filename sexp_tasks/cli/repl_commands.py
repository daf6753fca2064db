"""`sexp repl`, which `sexp` with no COMMAND starts too: the REPL, with run's setting options."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..config import load_settings
from .command_line import Commands
from .setting_options import add_setting_options, given_settings


def register(commands: Commands) -> None:
    """Declare `sexp repl` among commands."""
    repl = commands.add_parser("repl", help="the REPL: what `sexp` alone starts, with run's setting options")
    add_setting_options(repl)
    repl.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    repl.set_defaults(run=start_repl)


def start_repl(args: argparse.Namespace, cwd: Path) -> int:
    """Run the REPL until it ends; its exit status."""
    from ..repl import start  # lazy: --help starts without the REPL (cli/startup.py)

    return start(load_settings(cwd, given_settings(args)), debug=args.debug)  # it shows the warnings
