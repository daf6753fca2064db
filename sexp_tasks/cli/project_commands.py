"""`sexp config` (the settings in force, and where each came from) and `sexp init [DIR]` (a
starter project that runs offline at once), SPEC §10.3."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any, TextIO

from ..config import Settings, provider_keys, settings_in_force
from ..diagnostics import error_line, report
from ..redact import mask_url, scrub
from ..resources import package_file
from .command_line import EXIT_ERROR, EXIT_OK, Commands, command_settings, guarded
from .setting_options import add_setting_options, given_settings

MASK = "********"  # what `sexp config` shows of a key that is set: never any part of it

CONFIG_HELP = """\
Print each setting in force and where it came from, one a line:

  KEY = VALUE  (SOURCE)

VALUE is written as in sexp.toml ("text", 8, 0.8, ["dir"]), or `unset`. SOURCE is one of
  flag         a command-line option (config takes run's: --model, --templates, ...)
  environment  an environment variable (SEXP_MODEL, SEXP_API_BASE, SEXP_TEMPLATES,
               SEXP_MOCK_RESPONSES)
  .env         such a variable, read from ./.env
  sexp.toml    ./sexp.toml
  default      nothing set it
Later sources win: sexp.toml, then the environment, then flags. `templates` adds up: it lists
every directory added to the template library, and SOURCE each place that added some (e.g.
`(sexp.toml, flag)`). `model` is --model's when given (it also overrides a template's <model>).
Provider keys in the environment (*_API_KEY) follow, shown as "********" with their SOURCE:
that they are set and where, never their value.

With --json: one object, {KEY: {"value": VALUE, "source": SOURCE}}, null for unset."""

INIT_HELP = """\
Write a starter project into DIR (default: the current directory), and print how to run it:
  sexp.toml            the settings, commented (`sexp config` shows them in force)
  tasks/summarize.xml  a task template: inputs, instructions, a JSON output format
  main.sexp            a program that calls it and prints the result
  mock_responses.json  the mock model's reply, so it runs offline at once
  test_main.py         a test that runs main.sexp offline (run `pytest` in DIR)
Existing files are never overwritten: if any of these is there already, nothing is written
(exit 1)."""

# The starter project (shipped in sexp_tasks/starter/), in the order it is written and shown.
STARTER_FILES = ("sexp.toml", "tasks/summarize.xml", "main.sexp", "mock_responses.json", "test_main.py")
OFFLINE_RUN = "sexp run main.sexp --model mock/starter --mock-responses mock_responses.json"


def register(commands: Commands) -> None:
    """Declare `sexp config` and `sexp init` among commands."""
    lines = argparse.RawDescriptionHelpFormatter  # these help texts keep their lines
    config = commands.add_parser(
        "config", help="the settings in force", description=CONFIG_HELP, formatter_class=lines
    )
    add_setting_options(config)
    config.add_argument("--json", action="store_true", help='print {KEY: {"value", "source"}}')
    config.set_defaults(run=run_config)
    init = commands.add_parser(
        "init", help="write a starter project", description=INIT_HELP, formatter_class=lines
    )
    init.add_argument("directory", nargs="?", metavar="DIR", help="where (default: here; made if need be)")
    init.set_defaults(run=run_init)


def run_config(args: argparse.Namespace, cwd: Path) -> int:
    """`sexp config`, with the settings its options give."""
    settings = command_settings(cwd, given_settings(args))
    return guarded(args, lambda: config_command(settings, args.json))


def run_init(args: argparse.Namespace, cwd: Path) -> int:
    """`sexp init [DIR]`."""
    return guarded(args, lambda: init_command(args.directory))


def config_command(settings: Settings, as_json: bool, out: TextIO | None = None) -> int:
    """Print every setting in force with its source (CONFIG_HELP), then the provider keys, masked."""
    out = out or sys.stdout
    shown: list[tuple[str, Any, str]] = [
        (key, mask_url(value) if key == "api_base" and value else value, source)  # no password in it
        for key, value, source in settings_in_force(settings)
    ]
    shown += [(name, MASK if value else "", source) for name, value, source in provider_keys()]
    if as_json:
        document = {key: {"value": _plain(value), "source": source} for key, value, source in shown}
        out.write(scrub(json.dumps(document, ensure_ascii=False, default=str)) + "\n")
    else:
        for key, value, source in shown:
            out.write(scrub(f"{key} = {_toml(value)}  ({source})") + "\n")
    out.flush()
    return EXIT_OK


def _plain(value: Any) -> Any:
    """value as JSON holds it: a tuple of directories is a list."""
    return list(value) if isinstance(value, tuple) else value


def _toml(value: Any) -> str:
    """value written as sexp.toml would hold it; `unset` for None."""
    return "unset" if value is None else json.dumps(_plain(value), ensure_ascii=False, default=str)


def init_command(directory: str | None, out: TextIO | None = None) -> int:
    """Write the starter project into directory (default: here), refusing to overwrite any file."""
    out = out or sys.stdout
    target = Path(directory or ".")
    here = target == Path(".")

    def shown(name: str) -> str:
        return name if here else os.path.join(str(directory), name)

    if os.path.lexists(target) and not target.is_dir():
        report(error_line(f"init: cannot write a project in '{directory}': it is not a directory"))
        return EXIT_ERROR
    in_the_way = [name for name in STARTER_FILES if os.path.lexists(target / name)]
    if os.path.lexists(target / "tasks") and not (target / "tasks").is_dir():
        in_the_way = ["tasks", *in_the_way]
    if in_the_way:
        names = ", ".join(map(shown, in_the_way))
        report(error_line(f"init: these files exist already: {names}; nothing was written"))
        return EXIT_ERROR
    written: list[Path] = []
    try:
        (target / "tasks").mkdir(parents=True, exist_ok=True)
        for name in STARTER_FILES:
            with open(target / name, "xb") as file:  # x: never overwrite, even a file made meanwhile
                written.append(target / name)
                file.write(package_file("starter", name).read_bytes())
    except OSError as err:
        for path in written:  # a disk that filled up halfway: take back what was written
            path.unlink(missing_ok=True)
        where = directory if directory is not None else "."
        report(error_line(f"init: cannot write a project in '{where}': {err.strerror or err}"))
        return EXIT_ERROR
    out.write("".join(f"wrote {shown(name)}\n" for name in STARTER_FILES))
    cd = "" if here else f"cd {shlex.quote(str(directory))} && "
    out.write(
        "\nRun it offline (a mock model answers from mock_responses.json):\n"
        f"  {cd}{OFFLINE_RUN}\n"
        f"Test it:\n  {cd}pytest\n"
        f"For a real model, set `model` in {shown('sexp.toml')} and the provider's key (OPENAI_API_KEY,"
        " ...), then leave out --model and --mock-responses.\n"
    )
    out.flush()
    return EXIT_OK
