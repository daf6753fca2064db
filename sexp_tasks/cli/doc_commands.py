"""`sexp doc [NAME]`: every documented name, one a line, or one name's documentation (SPEC §10.3).

What it prints is what `(help NAME)` and the REPL's `:doc NAME` print: lang/documentation.py's
render_doc of the runtime's docs (special forms, primitives, library procedures, templates).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..config import Settings
from .command_line import EXIT_OK, Commands, command_settings, guarded
from .setting_options import given_settings

DOC_HELP = """\
With no NAME: every documented name, one a line (special forms, primitives, library procedures
and the task templates loaded), sorted; with --long, each name's kind and summary after it.
With NAME: its signatures, what it does and an example (a template: its description, inputs
with their types, model and output format). An unknown NAME is an error naming close ones
(exit 1). `(help NAME)` in a program or the REPL prints the same."""


def register(commands: Commands) -> None:
    """Declare `sexp doc` among commands."""
    lines = argparse.RawDescriptionHelpFormatter
    doc = commands.add_parser(
        "doc", help="documentation of every name", description=DOC_HELP, formatter_class=lines
    )
    doc.add_argument("name", nargs="?", metavar="NAME", help="a special form, primitive, procedure or task")
    doc.add_argument("-l", "--long", action="store_true", help="with no NAME: each one's kind and summary")
    doc.add_argument("--templates", action="append", default=[], metavar="DIR", help="also load DIR")
    doc.set_defaults(run=run_doc)


def run_doc(args: argparse.Namespace, cwd: Path) -> int:
    """`sexp doc [NAME]`, with the templates of the settings and --templates."""
    settings = command_settings(cwd, given_settings(args))
    return guarded(args, lambda: doc_command(args.name, args.long, settings))


def doc_command(name: str | None, long: bool, settings: Settings) -> int:
    """Print every documented name, or NAME's documentation; the exit status (an unknown NAME
    raises the NameError that names close ones)."""
    from ..runtime import Runtime  # lazy: --help starts without the language (cli/startup.py)

    documentation = Runtime(settings).documentation
    if name is not None:
        print(documentation.render(name))
        return EXIT_OK
    docs = documentation.all()
    width = max(map(len, docs), default=0)
    for doc in docs.values():
        print(f"{doc.name:<{width}}  {doc.kind:<12}  {doc.summary}" if long else doc.name)
    return EXIT_OK
