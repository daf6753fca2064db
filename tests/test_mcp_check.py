"""`sexp check` and MCP tools (SPEC §11.4, §7): a template naming `NAME/tool` is checked against
sexp.toml's servers — an undeclared NAME always, the tool's name against the server's own listing
when the server can be asked (started, listed and stopped, as `sexp tools` does; one that cannot
start is a warning, not a failed check). A program naming no `NAME/tool` starts no server and
imports no `mcp`. Each test runs the real CLI against tests/mcp_server.py over stdio."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli, wait_for
from tests.test_mcp import SERVER, _alive

pytest.importorskip("mcp")


@pytest.fixture
def env(workspace: Path) -> dict[str, str]:
    return {
        "MCP_SERVER_LOG": str(workspace / "calls.log"),
        "MCP_SERVER_PIDFILE": str(workspace / "server.pid"),
    }


def declare(workspace: Path, name: str = "t", command: list[str] | None = None) -> None:
    argv = command if command is not None else [sys.executable, str(SERVER)]
    (workspace / "sexp.toml").write_text(f"[mcp.{name}]\ncommand = {json.dumps(argv)}\n", encoding="utf-8")


def program(workspace: Path, tools: str) -> None:
    (workspace / "main.sexp").write_text(
        f'(defatom ask (params (q string)) (instructions "{{{{q}}}}")\n  (tools {tools}))\n(ask :q "go")\n',
        encoding="utf-8",
    )


def no_server_left(workspace: Path) -> None:
    pidfile = workspace / "server.pid"
    if pidfile.exists():
        pid = int(pidfile.read_text())
        wait_for(lambda: not _alive(pid), 20, f"the MCP server {pid} outlived `sexp check`")


def test_a_misspelt_tool_of_a_declared_server_is_a_positioned_error_naming_the_close_one(
    workspace: Path, env: dict[str, str]
) -> None:
    declare(workspace)
    program(workspace, "t/ad t/echo")
    status, out, err = run_cli("check", "main.sexp", cwd=workspace, env=env)
    assert status == 1, err
    assert out == ""
    assert err.splitlines()[0] == (
        "main.sexp:2:3: error: task 'ask': MCP server 't' has no tool 'ad'"
        " (it offers add, echo, slow, fail, crash); did you mean 'add'?"
    )
    assert err.splitlines()[1:] == ["    (tools t/ad t/echo))", "    ^"]
    assert "Traceback" not in err
    assert (workspace / "server.pid").exists()  # it was asked ...
    assert not (workspace / "calls.log").exists()  # ... for its listing only: no tool was called
    no_server_left(workspace)


def test_tools_the_server_offers_pass(workspace: Path, env: dict[str, str]) -> None:
    declare(workspace)
    program(workspace, "t/add t/echo read_file")
    assert run_cli("check", "main.sexp", cwd=workspace, env=env) == (0, "main.sexp: ok\n", "")
    no_server_left(workspace)


def test_an_undeclared_server_is_a_positioned_error_and_starts_nothing(
    workspace: Path, env: dict[str, str]
) -> None:
    declare(workspace, name="tools")
    program(workspace, "tool/add nosuch/echo")
    status, out, err = run_cli("check", "main.sexp", cwd=workspace, env=env)
    assert status == 1 and out == ""
    assert (
        "main.sexp:2:3: error: task 'ask': no MCP server named 'tool' (declare it in sexp.toml as"
        " [mcp.tool]); did you mean 'tools'?" in err.splitlines()
    )
    assert (
        "main.sexp:2:3: error: task 'ask': no MCP server named 'nosuch' (declare it in sexp.toml as"
        " [mcp.nosuch])" in err.splitlines()
    )
    assert not (workspace / "server.pid").exists()


def test_a_server_that_cannot_start_is_a_warning_and_its_tools_go_unchecked(
    workspace: Path, env: dict[str, str]
) -> None:
    declare(workspace, command=["no-such-mcp-server-command"])
    program(workspace, "t/anything")
    status, out, err = run_cli("check", "main.sexp", cwd=workspace, env=env)
    assert (status, out) == (0, "main.sexp: ok\n"), err
    assert err == (
        "warning: MCP server 't' (no-such-mcp-server-command) failed: cannot start"
        " 'no-such-mcp-server-command': command not found; the names of its tools are not checked\n"
    )


def test_a_crashing_server_is_a_warning_too(workspace: Path, env: dict[str, str]) -> None:
    declare(
        workspace, command=[sys.executable, "-c", "import sys; print('broken on purpose', file=sys.stderr)"]
    )
    program(workspace, "t/add")
    status, out, err = run_cli("check", "main.sexp", cwd=workspace, env=env)
    assert (status, out) == (0, "main.sexp: ok\n"), err
    assert err.startswith("warning: MCP server 't' (") and "broken on purpose" in err
    assert "the names of its tools are not checked" in err and "Traceback" not in err


def test_a_misspelt_tool_of_a_registered_template_is_reported_at_its_first_call(
    workspace: Path, env: dict[str, str]
) -> None:
    declare(workspace)
    (workspace / "tasks").mkdir()
    (workspace / "tasks" / "lookup.xml").write_text(
        '<task name="lookup" type="atomic"><description>Look up.</description>'
        "<instructions>Look up.</instructions>"
        "<tools><tool>t/eco</tool></tools></task>\n",
        encoding="utf-8",
    )
    (workspace / "main.sexp").write_text("(print 1)\n(lookup)\n", encoding="utf-8")
    status, _, err = run_cli("check", "main.sexp", cwd=workspace, env=env)
    assert status == 1, err
    assert err.splitlines()[0] == (
        "main.sexp:2:1: error: task 'lookup': MCP server 't' has no tool 'eco'"
        " (it offers add, echo, slow, fail, crash); did you mean 'echo'?"
    )
    no_server_left(workspace)


def imported(stderr: str) -> set[str]:
    """The modules `python -X importtime` says it imported."""
    found = (re.match(r"import time:\s+\d+ \|\s+\d+ \| (\s*)(\S+)", line) for line in stderr.splitlines())
    return {match.group(2) for match in found if match}


@pytest.mark.parametrize("tools", ["read_file", "t/*"])
def test_a_program_naming_no_server_tool_starts_no_server_and_imports_no_mcp(
    workspace: Path, env: dict[str, str], tools: str
) -> None:
    declare(workspace)
    program(workspace, tools)
    status, out, err = run_cli(
        "check", "main.sexp", cwd=workspace, env=env, python_flags=("-X", "importtime")
    )
    assert (status, out) == (0, "main.sexp: ok\n"), err
    modules = imported(err)
    assert "sexp_tasks.cli.check_commands" in modules  # the import times were read
    assert not {m for m in modules if m == "mcp" or m.startswith("mcp.")}
    assert "sexp_tasks.handler.mcp_client" not in modules
    assert not (workspace / "server.pid").exists()


def test_a_registered_template_may_name_a_servers_tools(workspace: Path, env: dict[str, str]) -> None:
    """The template schema once refused `<tool>t/echo</tool>` (only `NAME/...` in a defatom passed)."""
    declare(workspace)
    (workspace / "tasks").mkdir()
    for name, tool in (("one", "t/echo"), ("every", "t/*")):
        (workspace / "tasks" / f"{name}.xml").write_text(
            f'<task name="{name}" type="atomic"><description>Use it.</description>'
            f"<instructions>Use it.</instructions><tools><tool>{tool}</tool></tools></task>\n",
            encoding="utf-8",
        )
    status, _, err = run_cli("tasks", "validate", "tasks", cwd=workspace, env=env)
    assert status == 0, err
    (workspace / "main.sexp").write_text("(one)\n(every)\n", encoding="utf-8")
    assert run_cli("check", "main.sexp", cwd=workspace, env=env) == (0, "main.sexp: ok\n", "")
    no_server_left(workspace)


@pytest.mark.parametrize("given", [":tools '(t/ad)", ':tools (list "t/ad")', ':tools "t/ad"'])
def test_a_calls_own_tools_are_checked_too(workspace: Path, env: dict[str, str], given: str) -> None:
    declare(workspace)
    (workspace / "main.sexp").write_text(
        f'(defatom ask (params (q string)) (instructions "{{{{q}}}}"))\n(ask :q "go" {given})\n'
        f'(ask :q "go" :tools (list "nosuch/x"))\n',
        encoding="utf-8",
    )
    status, _, err = run_cli("check", "main.sexp", cwd=workspace, env=env)
    assert status == 1, err
    column = len('(ask :q "go" :tools ') + 1
    assert (
        f"main.sexp:2:{column}: error: task 'ask': MCP server 't' has no tool 'ad'"
        " (it offers add, echo, slow, fail, crash); did you mean 'add'?" in err.splitlines()
    )
    assert (
        f"main.sexp:3:{column}: error: task 'ask': no MCP server named 'nosuch'"
        " (declare it in sexp.toml as [mcp.nosuch])" in err.splitlines()
    )
    no_server_left(workspace)


def test_a_calls_tools_known_only_when_it_runs_are_not_checked(workspace: Path, env: dict[str, str]) -> None:
    declare(workspace)
    (workspace / "main.sexp").write_text(
        '(defatom ask (params (q string)) (instructions "{{q}}"))\n'
        '(ask :q "go" :tools \'(t/add read_file))\n'
        '(let ((x "t/zz")) (ask :q "go" :tools (list x)))\n',
        encoding="utf-8",
    )
    assert run_cli("check", "main.sexp", cwd=workspace, env=env) == (0, "main.sexp: ok\n", "")
    no_server_left(workspace)
