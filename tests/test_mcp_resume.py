"""Resume under pmap with MCP tool calls (SPEC §6, §11.4): a program pmaps a task whose model
calls a tool of tests/mcp_server.py (over stdio), is killed with SIGKILL after every element's
tool call but before the last answers, and is resumed: the journaled listing and tool calls are
answered without the server (never started again), only the unanswered turns are sent, and the
values are those of a run never interrupted. No server outlives the killed run."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli, scaled, spawn_sexp, store_rows, wait_for
from tests.llm_server import LLMServer, Scripted
from tests.test_mcp import SERVER, _alive, calls

pytest.importorskip("mcp")

PROGRAM = """(defatom ask (params (n int)) (instructions "Echo {{n}}") (tools t/echo))
(print (string-join (pmap (lambda (n) (task-content (ask :n n))) (list 1 2 3 4)) ","))
"""
EXPECTED = "got echo: 1,got echo: 2,got echo: 3,got echo: 4\n"


def answering(release: threading.Event, held: set[str]) -> Any:
    """The model: first a call of t__echo with the request's number, then, given the tool's
    answer, `got <answer>` — held back, for the numbers in held, until release is set."""

    def answer(body: dict[str, Any]) -> str | Scripted:
        last = body["messages"][-1]
        if last["role"] != "tool":
            number = last["content"].split()[-1]
            return Scripted(content=None, tool_calls=[{"name": "t__echo", "arguments": {"text": number}}])
        if last["content"].split()[-1] in held:
            release.wait(scaled(120))
        return f"<output>got {last['content']}</output>"

    return answer


@pytest.fixture
def env(workspace: Path, server: LLMServer) -> dict[str, str]:
    (workspace / "sexp.toml").write_text(
        f"[mcp.t]\ncommand = {json.dumps([sys.executable, str(SERVER)])}\n", encoding="utf-8"
    )
    (workspace / "main.sexp").write_text(PROGRAM, encoding="utf-8")
    return {
        "OPENAI_API_KEY": "sk-fake-mcp-resume",
        "SEXP_API_BASE": server.base_url,
        "SEXP_MODEL": "openai/test-model",
        "MCP_SERVER_LOG": str(workspace / "calls.log"),
        "MCP_SERVER_PIDFILE": str(workspace / "server.pid"),
    }


def completed_tasks(workspace: Path) -> int:
    query = "SELECT COUNT(*) FROM steps WHERE status = 'COMPLETE' AND kind = 'task'"
    try:
        return int(store_rows(workspace, query)[0][0])
    except Exception:  # the store is not made yet
        return 0


def test_a_killed_pmap_resumes_its_mcp_calls_from_the_journal(
    workspace: Path, server: LLMServer, env: dict[str, str]
) -> None:
    release = threading.Event()
    server.answer = answering(release, {"3", "4"})
    try:
        process = spawn_sexp("run", "main.sexp", cwd=workspace, env=env, stderr=subprocess.PIPE)
        wait_for(lambda: len(calls(workspace)) == 4, 30, "the four tool calls were never made")
        wait_for(lambda: completed_tasks(workspace) == 2, 30, "elements 1 and 2 never completed")
        server_pid = int((workspace / "server.pid").read_text())
        process.send_signal(signal.SIGKILL)
        _, err = process.communicate(timeout=scaled(30))
        assert process.returncode == -signal.SIGKILL
        wait_for(lambda: not _alive(server_pid), 20, f"the MCP server {server_pid} outlived the killed run")
    finally:
        release.set()
    run_id = re.search(r"^run: ([0-9a-f]{12})$", err, re.M)
    assert run_id, err
    assert sorted(c["arguments"]["text"] for c in calls(workspace)) == ["1", "2", "3", "4"]
    (workspace / "calls.log").unlink()
    (workspace / "server.pid").unlink()
    sent_before = len(server.requests)

    resumed = run_cli("run", "--resume", run_id.group(1), "main.sexp", cwd=workspace, env=env)
    assert resumed[:2] == (0, EXPECTED), resumed[2]
    assert calls(workspace) == [] and not (workspace / "server.pid").exists()  # never started
    again = server.requests[sent_before:]
    assert sorted(r.body["messages"][-1]["content"] for r in again) == ["echo: 3", "echo: 4"]
    assert all(r.body["messages"][-1]["role"] == "tool" for r in again)  # only the unanswered turns
    assert all("t__echo" in json.dumps(r.body["tools"]) for r in again)  # the journal's listing

    fresh = run_cli("run", "main.sexp", cwd=workspace, env=env)
    assert fresh[:2] == (0, EXPECTED), fresh[2]  # the value of a run never interrupted
    assert len(calls(workspace)) == 4
