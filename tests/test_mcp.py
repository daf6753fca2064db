"""MCP servers as tool sources (SPEC §11.4): sexp.toml's [mcp.NAME], tools offered as NAME/* or
NAME/tool, calls journaled and in cassettes, `sexp tools`, the failures, and no orphan server.
Each test talks to tests/mcp_server.py, a real server written with the `mcp` package, over stdio."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli, scaled, spawn_sexp_pty, wait_for
from tests.llm_server import LLMServer, Scripted

pytest.importorskip("mcp")

SERVER = Path(__file__).with_name("mcp_server.py")
PROGRAM = """(defatom ask (params (q string)) (instructions "{{q}}") (tools {tools}))
(print (ask :q "go"))
"""


def declare(workspace: Path, extra: str = "", command: list[str] | None = None) -> None:
    argv = command if command is not None else [sys.executable, str(SERVER)]
    (workspace / "sexp.toml").write_text(f"[mcp.t]\ncommand = {json.dumps(argv)}\n{extra}", encoding="utf-8")


@pytest.fixture
def env(workspace: Path, server: LLMServer) -> dict[str, str]:
    return {
        "OPENAI_API_KEY": "sk-fake-mcp",
        "SEXP_API_BASE": server.base_url,
        "SEXP_MODEL": "openai/test-model",
        "MCP_SERVER_LOG": str(workspace / "calls.log"),
        "MCP_SERVER_PIDFILE": str(workspace / "server.pid"),
    }


def program(workspace: Path, tools: str = "t/*", printed: bool = True) -> Path:
    path = workspace / "main.sexp"
    text = PROGRAM.replace("{tools}", tools)
    path.write_text(
        text if printed else text.replace('(print (ask :q "go"))', '(ask :q "go")'), encoding="utf-8"
    )
    return path


def calls(workspace: Path) -> list[dict[str, Any]]:
    log = workspace / "calls.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def tool_call(name: str, arguments: dict[str, Any]) -> Scripted:
    return Scripted(content=None, tool_calls=[{"name": name, "arguments": arguments}])


def test_a_servers_tools_are_offered_called_and_answered(
    workspace: Path, server: LLMServer, env: dict[str, str]
) -> None:
    declare(workspace)
    program(workspace)
    server.script(tool_call("t__add", {"a": 2, "b": 3}), "<output>five</output>")
    result = run_cli("run", "main.sexp", cwd=workspace, env=env)
    assert result[0] == 0, result[2]
    assert "five" in result[1]
    offered = {tool["function"]["name"]: tool["function"] for tool in server.requests[0].body["tools"]}
    assert set(offered) == {"t__add", "t__echo", "t__slow", "t__fail", "t__crash"}
    assert offered["t__add"]["description"] == "Add two integers."
    assert offered["t__add"]["parameters"]["required"] == ["a", "b"]
    sent = server.requests[1].body["messages"][-1]
    assert sent["role"] == "tool" and sent["content"] == "5"
    assert calls(workspace) == [{"tool": "add", "arguments": {"a": 2, "b": 3}}]
    assert "Traceback" not in result[2]


def test_one_named_tool_is_offered_alone(workspace: Path, server: LLMServer, env: dict[str, str]) -> None:
    declare(workspace)
    program(workspace, "t/echo")
    server.script("<output>hi</output>")
    result = run_cli("run", "main.sexp", cwd=workspace, env=env)
    assert result[0] == 0, result[2]
    assert [tool["function"]["name"] for tool in server.requests[0].body["tools"]] == ["t__echo"]


def test_arguments_that_break_the_schema_are_a_tool_error_and_not_sent(
    workspace: Path, server: LLMServer, env: dict[str, str]
) -> None:
    declare(workspace)
    program(workspace)
    server.script(tool_call("t__add", {"a": "two"}), "<output>ok</output>")
    result = run_cli("run", "main.sexp", cwd=workspace, env=env)
    assert result[0] == 0, result[2]
    answer = server.requests[1].body["messages"][-1]["content"]
    assert answer.startswith("error: t/add: invalid arguments:"), answer
    assert calls(workspace) == []


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (tool_call("t__fail", {"reason": "nope"}), "error: t/fail: "),
        (tool_call("t__crash", {}), "error: t/crash: the server failed while calling crash"),
        (tool_call("t__slow", {"seconds": 30}), "error: t/slow: no answer within 1 s"),
    ],
    ids=["tool-error", "crash", "timeout"],
)
def test_a_failing_tool_is_an_error_the_model_reads(
    workspace: Path, server: LLMServer, env: dict[str, str], call: Scripted, said: str
) -> None:
    declare(workspace, "timeout = 1\n")
    program(workspace)
    server.script(call, "<output>coped</output>")
    result = run_cli("run", "main.sexp", cwd=workspace, env=env)
    assert result[0] == 0, result[2]
    assert "coped" in result[1]
    assert server.requests[1].body["messages"][-1]["content"].startswith(said)
    assert "Traceback" not in result[2]


def test_a_server_that_cannot_start_fails_the_task_before_any_request(
    workspace: Path, server: LLMServer, env: dict[str, str]
) -> None:
    declare(workspace, command=["no-such-mcp-server-command"])
    program(workspace, printed=False)
    result = run_cli("run", "main.sexp", cwd=workspace, env=env)
    assert result[0] == 1
    assert (
        "error: TASK_FAILURE tool_unavailable: MCP server 't' (no-such-mcp-server-command) failed:"
        " cannot start 'no-such-mcp-server-command': command not found" in result[1] + result[2]
    )
    assert server.requests == []
    assert "Traceback" not in result[2]


def test_an_unknown_tool_or_server_is_an_error_before_any_request(
    workspace: Path, server: LLMServer, env: dict[str, str]
) -> None:
    declare(workspace)
    program(workspace, "t/nope", printed=False)
    result = run_cli("run", "main.sexp", cwd=workspace, env=env)
    assert result[0] == 1
    assert (
        "MCP server 't' has no tool 'nope' (it offers add, echo, slow, fail, crash)" in result[1] + result[2]
    )
    program(workspace, "u/*")
    result = run_cli("run", "main.sexp", cwd=workspace, env=env)
    assert result[0] == 1
    assert "no MCP server named 'u'" in result[2]
    checked = run_cli("check", "main.sexp", cwd=workspace, env=env)
    assert checked[0] == 1 and "no MCP server named 'u'" in checked[2] + checked[1]
    assert server.requests == []


def test_resume_answers_the_call_from_the_journal_without_the_server(
    workspace: Path, server: LLMServer, env: dict[str, str]
) -> None:
    declare(workspace)
    (workspace / "main.sexp").write_text(
        '(defatom ask (params (q string)) (instructions "{{q}}") (tools t/*))\n'
        '(print (ask :q "go"))\n(print (ask :q "again"))\n',
        encoding="utf-8",
    )
    server.script(tool_call("t__echo", {"text": "x"}), "<output>first</output>", Scripted(status=500))
    first = run_cli("run", "main.sexp", "--max-retries", "0", cwd=workspace, env=env, run_lines=True)
    run_id = first[2].split("run: ")[1].split()[0]
    assert calls(workspace) == [{"tool": "echo", "arguments": {"text": "x"}}]
    (workspace / "calls.log").unlink()
    (workspace / "server.pid").unlink()
    server.script("<output>second</output>")
    resumed = run_cli("run", "--resume", run_id, "main.sexp", cwd=workspace, env=env)
    assert resumed[0] == 0, resumed[2]
    assert resumed[1].split("\n")[:2] == ['#<TaskResult COMPLETE "first">', '#<TaskResult COMPLETE "second">']
    assert not (workspace / "server.pid").exists() and calls(workspace) == []  # never started
    assert "t__echo" in json.dumps(server.requests[-1].body["tools"])  # the journal's listing, offered


def test_a_cassette_replays_listing_and_calls_with_no_server(
    workspace: Path, server: LLMServer, env: dict[str, str]
) -> None:
    declare(workspace)
    program(workspace)
    server.script(tool_call("t__add", {"a": 1, "b": 1}), "<output>two</output>")
    recorded = run_cli("run", "main.sexp", "--record", "tape.jsonl", cwd=workspace, env=env)
    assert recorded[0] == 0, recorded[2]
    (workspace / "calls.log").unlink()
    (workspace / "server.pid").unlink()
    declare(workspace, command=["no-such-mcp-server-command"])
    replayed = run_cli("run", "main.sexp", "--replay", "tape.jsonl", cwd=workspace, env=env)
    assert replayed[0] == 0, replayed[2]
    assert "two" in replayed[1]
    assert len(server.requests) == 2 and not (workspace / "server.pid").exists()


def test_sexp_tools_lists_every_servers_tools(workspace: Path, env: dict[str, str]) -> None:
    (workspace / "sexp.toml").write_text(
        f"[mcp.t]\ncommand = {json.dumps([sys.executable, str(SERVER)])}\n"
        '[mcp.broken]\ncommand = ["no-such-mcp-server-command"]\n',
        encoding="utf-8",
    )
    result = run_cli("tools", cwd=workspace, env=env)
    assert result[0] == 1
    lines = result[1].splitlines()
    assert "t/add  Add two integers." in lines
    assert "t/crash  Exit the server process in the middle of the call." in lines
    assert "broken" in result[2] and "command not found" in result[2]
    assert not (workspace / "server.pid").exists() or not _alive(int((workspace / "server.pid").read_text()))


def test_a_bad_mcp_table_is_a_positioned_usage_error(workspace: Path, env: dict[str, str]) -> None:
    (workspace / "sexp.toml").write_text('[mcp.t]\ncommand = "python server.py"\n', encoding="utf-8")
    result = run_cli("tools", cwd=workspace, env=env)
    assert result[0] == 2, result[2]
    assert "sexp.toml: [mcp.t] command must be a non-empty list of strings" in result[2]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for our purpose
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_no_server_outlives_a_killed_run(
    workspace: Path, server: LLMServer, env: dict[str, str], signum: int
) -> None:
    declare(workspace)
    program(workspace)
    server.script(tool_call("t__slow", {"seconds": 60}), "<output>never</output>")
    child = spawn_sexp_pty("run", "main.sexp", cwd=workspace, env={**os.environ, **env})
    pidfile = workspace / "server.pid"
    wait_for(lambda: calls(workspace), 60, "the slow tool was never called")
    server_pid = int(pidfile.read_text())
    os.kill(child.pid, signum)
    child.expect(__import__("pexpect").EOF, timeout=scaled(30))
    wait_for(lambda: not _alive(server_pid), 20, f"the MCP server {server_pid} outlived the run")


@pytest.fixture
def http_server(workspace: Path) -> Any:
    """tests/mcp_server.py over streamable HTTP on a free port of 127.0.0.1; its url."""
    import socket
    import subprocess

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = workspace / "http-calls.log"
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "MCP_SERVER_LOG": str(log)},
    )

    def listening() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
        except OSError:
            return False
        return True

    try:
        wait_for(listening, 60, "the HTTP MCP server did not listen")
        yield f"http://127.0.0.1:{port}/mcp", log
    finally:
        process.kill()
        process.wait()


def test_a_url_server_is_reached_over_streamable_http(
    workspace: Path, server: LLMServer, env: dict[str, str], http_server: Any
) -> None:
    url, log = http_server
    (workspace / "sexp.toml").write_text(f'[mcp.t]\nurl = "{url}"\nheaders = {{ X-Test = "1" }}\n')
    program(workspace, "t/add")
    server.script(tool_call("t__add", {"a": 20, "b": 22}), "<output>done</output>")
    result = run_cli("run", "main.sexp", cwd=workspace, env=env)
    assert result[0] == 0, result[2]
    assert server.requests[1].body["messages"][-1]["content"] == "42"
    assert json.loads(log.read_text().splitlines()[0]) == {"tool": "add", "arguments": {"a": 20, "b": 22}}
    listed = run_cli("tools", cwd=workspace, env=env)
    assert listed[0] == 0 and "t/add  Add two integers." in listed[1].splitlines()


def test_an_unreachable_url_fails_the_task_before_any_request(
    workspace: Path, server: LLMServer, env: dict[str, str]
) -> None:
    (workspace / "sexp.toml").write_text('[mcp.t]\nurl = "http://127.0.0.1:1/mcp"\n')
    program(workspace, printed=False)
    result = run_cli("run", "main.sexp", cwd=workspace, env=env)
    assert result[0] == 1
    assert "MCP server 't' (http://127.0.0.1:1/mcp) failed: cannot reach http://127.0.0.1:1/mcp:" in result[2]
    assert server.requests == [] and "Traceback" not in result[2]


def test_sexp_tools_without_servers_says_how_to_declare_one(workspace: Path, env: dict[str, str]) -> None:
    result = run_cli("tools", cwd=workspace, env=env)
    assert result[0] == 0 and result[1] == ""
    assert "no MCP servers are declared: add one to sexp.toml as [mcp.NAME]" in result[2]


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ("", "[mcp.t] needs one of command = "),
        ('command = ["a"]\nurl = "http://x"', "[mcp.t] needs one of command = "),
        ('url = "ftp://x"', "[mcp.t] url must be an http:// or https:// URL (got 'ftp://x')"),
        ('command = ["a"]\ntimeout = 0', "[mcp.t] timeout must be a positive number of seconds (got 0)"),
        ('command = ["a"]\ncomand = 1', "[mcp.t]: unknown key 'comand'; known keys: command, url, env"),
        (
            'url = "http://x"\nenv = { A = "1" }',
            "env and cwd are for a command's server",
        ),
        ('command = ["a"]\nenv = { A = 1 }', "[mcp.t] env must be a table of strings"),
        (
            'command = ["a"]\nheaders = { A = "1" }',
            "headers are for a url's server",
        ),
    ],
)
def test_each_mistake_in_an_mcp_table_is_named(workspace: Path, table: str, said: str) -> None:
    from sexp_tasks.config import load_settings
    from sexp_tasks.errors import UsageError

    (workspace / "sexp.toml").write_text(f"[mcp.t]\n{table}\n", encoding="utf-8")
    with pytest.raises(UsageError) as raised:
        load_settings(workspace, {})
    assert str(raised.value).startswith("sexp.toml: ") and said in str(raised.value)


def test_a_declared_server_is_not_started_by_a_program_that_does_not_use_it(
    workspace: Path, env: dict[str, str]
) -> None:
    declare(workspace)
    result = run_cli("eval", "(+ 1 2)", cwd=workspace, env=env)
    assert result[:2] == (0, "3\n")
    assert not (workspace / "server.pid").exists()
