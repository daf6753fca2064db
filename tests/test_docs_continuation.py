"""A docs command continued with a trailing backslash runs as one command, as a shell runs it
(the docs runner used to drop the backslash, so bash ran the continuation as a second command)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from test_docs import Block, console_commands, shell_commands

CONTINUED = "printf '%s|' one \\\n    two three"


def _bash(command: str) -> str:
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, check=False)
    return done.stdout + done.stderr


def test_a_console_command_continued_by_a_backslash_is_one_command() -> None:
    block = Block(Path("page.md"), 1, "console", f"$ {CONTINUED}\none|two|three|\n")
    (command,) = console_commands(block)
    assert _bash(command.command) == "one|two|three|"
    assert command.expected == ["one|two|three|"]


def test_an_sh_command_continued_by_a_backslash_is_one_command() -> None:
    block = Block(Path("page.md"), 1, "sh", f"# a comment\n{CONTINUED}\necho after\n")
    first, second = shell_commands(block)
    assert _bash(first.command) == "one|two|three|"
    assert second.command == "echo after"
