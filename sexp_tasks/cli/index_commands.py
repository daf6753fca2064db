"""`sexp index [PATH]`: build or refresh the file index in the store (SPEC §5), with
cli/workspace_index.py."""

from __future__ import annotations

import argparse
from pathlib import Path

from .command_line import Commands, guarded


def register(commands: Commands) -> None:
    """Declare `sexp index` among commands."""
    index = commands.add_parser("index", help="index the workspace's files for get-context")
    index.add_argument("path", nargs="?", help="a directory or file in the workspace (default: all of it)")
    index.add_argument("--store", metavar="PATH", help="the store (default .sexp/store.db)")
    index.add_argument("--workspace", metavar="DIR", help="the directory paths are relative to")
    index.add_argument("-q", "--quiet", action="store_true", help="print only errors")
    index.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    index.set_defaults(run=run_index)


def run_index(args: argparse.Namespace, cwd: Path) -> int:
    """Index PATH (default: the workspace); the exit status."""
    from .workspace_index import index_workspace  # lazy: the memory system and the run store (cli/startup.py)

    index = (args.path, args.store, args.workspace, args.quiet, cwd)
    return guarded(args, lambda: index_workspace(*index))
