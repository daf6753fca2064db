"""Keys never reach the store, a trace, the index or a model (SPEC §4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Cli

KEY = "sk-secret-canary-0123456789"


def store_bytes(workspace: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (workspace / ".sexp").rglob("*") if p.is_file())


def write_reader(workspace: Path, path: str, instructions: str) -> None:
    """p.sexp, a task whose model (scripted in replies.json) reads `path` with a tool, then answers."""
    replies = [
        {"content": "", "tool_calls": [{"name": "read_file", "arguments": {"path": path}}]},
        "<output>done</output>",
    ]
    (workspace / "replies.json").write_text(json.dumps(replies))
    (workspace / "p.sexp").write_text(
        f'(defatom reader (instructions "{instructions}") (tools read_file))\n(reader)\n'
    )


@pytest.mark.slow
def test_dot_env_is_closed_to_programs_tools_and_the_index(cli: Cli, workspace: Path) -> None:
    (workspace / ".env").write_text(f"OPENAI_API_KEY={KEY}\n")
    (workspace / ".env.local").write_text(f"OTHER_TOKEN={KEY}\n")
    status, _, err = cli("eval", '(read-file ".env")')
    assert status == 1 and "holds secrets" in err and KEY not in err
    status, _, err = cli("eval", '(write-file ".env.local" "x")')
    assert status == 1 and "holds secrets" in err
    assert cli("eval", '(try (read-file ".sexp/store.db") (catch e (get e "type")))')[1] == '"FILE_ERROR"\n'
    write_reader(workspace, ".env", "Read .env")
    status, out, err = cli("run", "--model", "mock/m", "--mock-responses", "replies.json", "p.sexp")
    assert status == 0 and KEY not in out + err
    assert cli("index")[0] == 0
    status, out, _ = cli("eval", '(map (lambda (f) (get f "path")) (get-context "OPENAI_API_KEY"))')
    assert ".env" not in out
    assert KEY.encode() not in store_bytes(workspace)


@pytest.mark.slow
def test_keys_in_tool_results_and_inputs_are_scrubbed(cli: Cli, workspace: Path) -> None:
    (workspace / "config.txt").write_text(f"key = {KEY}\n")
    write_reader(workspace, "config.txt", "Read config")
    args = ("--model", "mock/m", "--mock-responses", "replies.json", "--set", f"token={KEY}", "p.sexp")
    status, _, _ = cli("run", *args)
    assert status == 0
    data = store_bytes(workspace)
    assert KEY.encode() not in data and b"sk-***" in data
    status, out, _ = cli("runs")
    assert status == 0 and KEY not in out
    run_id = out.split()[0]
    status, out, _ = cli("trace", run_id, "--json")
    assert status == 0 and KEY not in out
