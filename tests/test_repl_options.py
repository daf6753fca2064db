"""The REPL's options, as `sexp [OPTIONS]` and `sexp repl [OPTIONS]`, and its continuation lines,
typed into a real pseudo-terminal (issue 19: 12)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from conftest import Cli, spawn_sexp_pty
from test_repl_pty import PROMPT, answer, enter

GREET = '(defatom greet (params (who str)) (instructions "Say hi to {{who}}"))'


def spawn(workspace: Path, *args: str) -> pexpect.spawn:
    """`sexp ARGS...` in a pty, as a user starts the REPL."""
    env = {"TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
    child = spawn_sexp_pty(*args, cwd=workspace, env=env, timeout=30, dimensions=(40, 120))
    child.expect(PROMPT)
    return child


@pytest.fixture
def started() -> Iterator[list[pexpect.spawn]]:
    """The REPLs a test starts, ended with it."""
    children: list[pexpect.spawn] = []
    yield children
    for child in children:
        if child.isalive():
            child.terminate(force=True)


def quit_(child: pexpect.spawn) -> int:
    enter(child, ":quit")
    child.expect(pexpect.EOF)
    child.close()
    return int(child.exitstatus)


@pytest.mark.parametrize("command", [[], ["repl"]], ids=["sexp", "sexp repl"])
def test_the_repl_takes_the_model_and_mock_responses(
    workspace: Path, started: list[pexpect.spawn], command: list[str]
) -> None:
    (workspace / "r.json").write_text(json.dumps(["<output>hi, Ada</output>"]))
    repl = spawn(workspace, *command, "--model", "mock/x", "--mock-responses", "r.json")
    started.append(repl)
    enter(repl, ":model")
    answer(repl, "model: mock/x")
    enter(repl, GREET)
    answer(repl, "greet")
    enter(repl, '(task-content (greet "Ada"))')
    answer(repl, '"hi, Ada"')
    assert quit_(repl) == 0


def test_the_repl_takes_the_store_templates_and_workspace(
    workspace: Path, started: list[pexpect.spawn]
) -> None:
    (workspace / "lib" / "tasks").mkdir(parents=True)
    (workspace / "lib" / "tasks" / "hello.xml").write_text(
        '<task name="hello" type="atomic"><description>Say hello</description>'
        "<instructions>Hello</instructions></task>\n"
    )
    (workspace / "inner").mkdir()
    (workspace / "inner" / "note.txt").write_text("inside")
    (workspace / "secret.txt").write_text("outside")
    repl = spawn(
        workspace, "repl", "--model", "mock/x", "--templates", "lib/tasks",
        "--store", "elsewhere.db", "--workspace", "inner",
    )  # fmt: skip
    started.append(repl)
    enter(repl, ":tasks")
    repl.expect(r"hello\s+Say hello")
    repl.expect(PROMPT)
    enter(repl, '(read-file "note.txt")')
    answer(repl, '"inside"')
    enter(repl, "(task-content (hello))")
    answer(repl, '"mock response 1 for hello"')
    assert quit_(repl) == 0
    assert (workspace / "elsewhere.db").is_file() and not (workspace / ".sexp").exists()


def test_a_repl_option_that_is_wrong_is_a_usage_error(cli: Cli) -> None:
    status, _, err = cli("repl", "--max-cost", "-1")
    assert status == 2 and "--max-cost must be a positive number of dollars" in err


def test_help_documents_the_repl_and_its_options(cli: Cli) -> None:
    status, out, _ = cli("--help")
    assert status == 0
    assert "usage: sexp [OPTIONS] [COMMAND ...]" in out
    for option in (
        "--model",
        "--mock-responses",
        "--replay",
        "--templates",
        "--store",
        "--workspace",
        "--max-cost",
    ):
        assert option in out
    assert re.search(r"repl\s+the REPL", out)


def test_a_new_line_inside_a_string_is_not_indented(workspace: Path, started: list[pexpect.spawn]) -> None:
    repl = spawn(workspace)
    started.append(repl)
    enter(repl, '(str "line1')
    repl.expect(r"\.\.\.")
    enter(repl, 'line2")')
    answer(repl, '"line1\\nline2"')
    enter(repl, "(list 1")  # outside a string, the continuation line is still indented
    repl.expect(r"\.\.\.")
    enter(repl, '"a')
    repl.expect(r"\.\.\.")
    enter(repl, 'b")')
    answer(repl, '(1 "a\\nb")')
    assert quit_(repl) == 0


def test_a_repl_option_before_another_command_is_a_usage_error(cli: Cli, workspace: Path) -> None:
    (workspace / "p.sexp").write_text("(+ 1 2)\n")
    status, out, err = cli("--model", "mock/x", "run", "p.sexp")
    assert (status, out) == (2, "")
    assert err.endswith("error: --model before run is the REPL's option; give it after run\n")
    assert cli("--debug", "run", "p.sexp")[:2] == (0, "3\n")  # --debug is every command's
