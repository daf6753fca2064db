"""Each `sexp` command is declared by its own `cli/*_commands.py` module: its `register(commands)`
adds the command's parser with `set_defaults(run=...)`, and main carries out `args.run`."""

from __future__ import annotations

import argparse
import types
from pathlib import Path

import pytest
from conftest import ROOT, Cli

from sexp_tasks.cli import main as cli_main
from sexp_tasks.cli.command_line import CommandParser, Commands

EXIT_OK, EXIT_USAGE = 0, 2
COMMAND_MODULES = cli_main.COMMAND_MODULES
COMMANDS = (
    "repl",
    "run",
    "eval",
    "batch",
    "tasks",
    "index",
    "check",
    "runs",
    "trace",
    "cache",
    "tools",
    "config",
    "init",
    "doc",
)


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """parser's subcommands by name (none when it has none)."""
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found.update(action.choices)
    return found


def registered_by(module: types.ModuleType) -> dict[str, argparse.ArgumentParser]:
    """The commands module's register declares, each on a parser of its own."""
    parser = CommandParser(prog="sexp")
    module.register(parser.add_subparsers(dest="command", parser_class=CommandParser))
    return subcommands(parser)


def leaves(
    parser: argparse.ArgumentParser, path: tuple[str, ...]
) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """The parsers that carry something out: parser's subcommands' without subcommands of their own."""
    subs = subcommands(parser)
    if not subs:
        return [(path, parser)]
    return [leaf for name, sub in subs.items() for leaf in leaves(sub, (*path, name))]


def test_every_command_module_is_listed_and_registers_a_command() -> None:
    on_disk = {path.stem for path in (ROOT / "sexp_tasks" / "cli").glob("*_commands.py")}
    assert {module.__name__.rsplit(".", 1)[-1] for module in COMMAND_MODULES} == on_disk
    for module in COMMAND_MODULES:
        assert registered_by(module), module.__name__


@pytest.mark.parametrize("module", COMMAND_MODULES, ids=lambda module: module.__name__.rsplit(".", 1)[-1])
def test_every_command_names_the_function_that_carries_it_out(module: types.ModuleType) -> None:
    for name, parser in registered_by(module).items():
        for path, leaf in leaves(parser, (name,)):
            assert callable(leaf.get_default("run")), path


def test_the_commands_are_those_of_today_in_their_order() -> None:
    assert tuple(subcommands(cli_main.build_parser())) == COMMANDS


def test_help_lists_every_command_with_its_summary(cli: Cli, sexp_in_process: Cli) -> None:
    (commands,) = [a for a in cli_main.build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    summaries = [f"{choice.dest} {choice.help}" for choice in commands._choices_actions]
    code, out, err = cli("--help")
    assert (code, err) == (EXIT_OK, "")
    listing = " ".join(out.partition("COMMAND\n")[2].partition("\n\n")[0].split())  # its lines unwrapped
    assert listing == " ".join(" ".join(summary.split()) for summary in summaries)
    assert [summary.split()[0] for summary in summaries] == list(COMMANDS)
    for name in COMMANDS:
        code, out, _ = sexp_in_process(name, "--help")
        assert code == EXIT_OK and out.startswith(f"usage: sexp {name} ")


def test_an_unknown_command_is_a_usage_error(cli: Cli) -> None:
    choices = ", ".join(f"'{name}'" for name in COMMANDS)
    assert cli("frobnicate") == (
        EXIT_USAGE,
        "",
        "usage: sexp [OPTIONS] [COMMAND ...]\n"
        f"error: argument COMMAND: invalid choice: 'frobnicate' (choose from {choices})\n",
    )


def test_a_command_module_added_to_the_list_is_a_command(
    sexp_in_process: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What adding a command takes (`sexp scratch clear`, say): a module whose register declares
    it, in COMMAND_MODULES; `sexp --help` lists it, and its run function carries it out."""

    def clear(args: argparse.Namespace, cwd: Path) -> int:
        print(f"cleared {args.store} in {cwd.name}")
        return EXIT_OK

    def register(commands: Commands) -> None:
        scratch = commands.add_parser("scratch", help="the scratch files")
        actions = scratch.add_subparsers(
            dest="action", metavar="ACTION", parser_class=CommandParser, required=True
        )
        cleared = actions.add_parser("clear", help="remove every scratch file")
        cleared.add_argument("--store", metavar="PATH", default="s.db")
        cleared.set_defaults(run=clear)

    scratch_commands = types.ModuleType("scratch_commands")
    scratch_commands.register = register  # type: ignore[attr-defined]
    monkeypatch.setattr(cli_main, "COMMAND_MODULES", (*COMMAND_MODULES, scratch_commands))
    code, out, _ = sexp_in_process("--help")
    assert code == EXIT_OK and "    scratch             the scratch files\n" in out
    status, out, err = sexp_in_process("scratch", "clear")
    assert (status, out, err) == (EXIT_OK, f"cleared s.db in {Path.cwd().name}\n", "")
    status, out, err = sexp_in_process("scratch")
    assert (status, out) == (EXIT_USAGE, "") and "error: the following arguments are required: ACTION" in err
