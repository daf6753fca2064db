"""The flags that set settings, declared from the settings table (config/setting_table.py), and
the settings a parsed command line gives, by name, for load_settings."""

from __future__ import annotations

import argparse
from typing import Any

from ..config import SETTING_ROWS, SETTINGS

# Each setting flag's help text, by its argparse destination (`max_cost`).
SETTING_HELP = {row.dest: row.help for row in SETTINGS if row.flag and row.common}
# The flags of which a command line takes one at most: where the mock model's replies come from.
_ONE_OF = ("mock_responses", "record", "replay")
# The order --help lists the flags in (the order they were added); a flag not named here follows,
# in the table's order.
_HELP_ORDER = ("model", "templates", *_ONE_OF, "store", "workspace", "max_cost_usd", "script_user")


def add_setting_options(parser: argparse.ArgumentParser, **help: str) -> None:
    """The options that set settings: run's, eval's and batch's, the REPL's, and config's (which
    shows their effect). help: another help text for an option, by its dest (`max_cost="..."`)."""
    text = SETTING_HELP | help
    rows = [row for row in SETTINGS if row.flag and row.common]
    rows.sort(key=lambda row: _HELP_ORDER.index(row.name) if row.name in _HELP_ORDER else len(_HELP_ORDER))
    replies = parser.add_mutually_exclusive_group()
    for row in rows:
        add_setting_option(replies if row.name in _ONE_OF else parser, row.name, text[row.dest])


def add_setting_option(parser: argparse._ActionsContainer, name: str, help: str | None = None) -> None:
    """The flag of setting name, with its table's help text unless help gives another."""
    row = SETTING_ROWS[name]
    assert row.flag is not None, f"setting {name} has no flag"
    text = row.help if help is None else help
    if list in row.types and row.convert is None:  # directories: the flag may be repeated
        parser.add_argument(row.flag, action="append", default=[], metavar=row.metavar, help=text)
    elif bool in row.types:  # None when not given; given, the value its flag sets (--no-stream: False)
        parser.add_argument(row.flag, action="store_const", const=row.flag_value, default=None, help=text)
    elif row.types[0] in (int, float):  # argparse reads the operand as the number
        parser.add_argument(row.flag, type=row.types[0], metavar=row.metavar, help=text)
    else:
        parser.add_argument(row.flag, metavar=row.metavar, help=text)


def given_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings the parsed command line's flags give, by setting name, for load_settings: a
    flag the command has not, or was not given (None, no directory, a bool that is not what its
    flag sets: a command's own `-q` holds False when not given), is left out."""
    given: dict[str, Any] = {}
    for row in SETTINGS:
        value = getattr(args, row.dest, None) if row.flag else None
        if value is None or value == [] or (isinstance(value, bool) and value is not row.flag_value):
            continue
        given[row.name] = value
    return given
