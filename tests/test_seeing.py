"""Seeing what is sent (SPEC §10.3): each recorded model turn keeps its request and raw answer
(`sexp trace --full`, `--json`), `sexp tasks render` prints what a call would send and sends
nothing, and `sexp run` ends with a summary of its model calls.

Real `sexp` processes against the local OpenAI-compatible server (tests/llm_server.py), which
records every request body, and against mock/ models.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, Cli, scaled, spawn_sexp, wait_for
from llm_server import LLMServer, Scripted

from sexp_tasks.handler.cost import format_cost
from sexp_tasks.runs.store import Store
from sexp_tasks.runs.traces import format_trace, trace_json

KEY = "sk-canary-seeing-0123456789abcdef"
SUMMARIZE = """<task name="summarize" type="atomic">
  <description>Summarise a text</description>
  <system>Be brief.</system>
  <instructions>Summarise this text: {{text}} in style {{style}}</instructions>
  <inputs>
    <input name="text" type="string">the text</input>
    <input name="style" type="string" default="plain">how</input>
  </inputs>
  <tools><tool>read_file</tool></tools>
</task>
"""
READS_THEN_ANSWERS = (
    Scripted(content=None, tool_calls=[{"name": "read_file", "arguments": {"path": "notes.txt"}}]),
    Scripted(content="<output>owls are birds</output>"),
)
SUMMARY = re.compile(r"^run: ([0-9a-f]{12}) (\d+) model calls, (\d+) tokens, (\$[0-9.]+), (\d+\.\d) s$")


@pytest.fixture
def cli(sexp_in_process: Cli) -> Cli:
    """The commands of this file run in the test process: they are about what a run records and
    prints (one real process stops on Ctrl-C below), and most call a model (litellm imported
    once, not per command)."""
    return sexp_in_process


@pytest.fixture
def project(workspace: Path) -> Path:
    """A workspace with the summarize template in tasks/ and a file for its read_file tool."""
    (workspace / "tasks").mkdir()
    (workspace / "tasks" / "summarize.xml").write_text(SUMMARIZE)
    (workspace / "notes.txt").write_text("Owls hunt at night.\n")
    return workspace


def against(server: LLMServer, model: str = "openai/test-model") -> dict[str, str]:
    """The environment of a process whose model calls go to the local server."""
    return {"SEXP_API_BASE": server.base_url, "SEXP_MODEL": model, "OPENAI_API_KEY": KEY}


def run_id(err: str) -> str:
    match = re.match(r"run: ([0-9a-f]{12})\n", err)
    assert match, err
    return match.group(1)


def summary(err: str) -> re.Match[str]:
    match = SUMMARY.match(err.splitlines()[-1])
    assert match, err
    return match


def traced(cli: Cli, run: str) -> tuple[dict[str, Any], str]:
    """The run's trace as JSON and as `--full` text."""
    code, out, err = cli("trace", run, "--json")
    assert (code, err) == (0, "")
    code, text, err = cli("trace", run, "--full")
    assert (code, err) == (0, "")
    return json.loads(out), text


def wire(request: dict[str, Any]) -> dict[str, Any]:
    """What the server receives for a request as given to litellm: the model without its
    provider, the generation settings beside the messages, tools when there are any; litellm
    leaves out a message's null content (an assistant message that only calls tools)."""
    messages = [{k: v for k, v in m.items() if v is not None} for m in request["messages"]]
    body: dict[str, Any] = {"model": request["model"].split("/", 1)[1], "messages": messages}
    body.update(request["generation"])
    if request["tools"]:
        body["tools"] = request["tools"]
    if request["response_format"] is not None:
        body["response_format"] = request["response_format"]
    return body


def received(server: LLMServer, index: int) -> dict[str, Any]:
    """The parts of a received body that a request holds."""
    body = server.requests[index].body
    return {
        k: v for k, v in body.items() if k in ("model", "messages", "tools", "response_format", "max_tokens")
    }


# The exact request, kept and shown ------------------------------------------------------------


def test_trace_keeps_the_request_the_server_received_and_the_raw_answer(
    cli: Cli, project: Path, server: LLMServer
) -> None:
    server.script(*READS_THEN_ANSWERS)
    (project / "p.sexp").write_text('(task-content (summarize :text "owls"))\n')
    code, out, err = cli("run", "p.sexp", env=against(server), run_lines=True)
    assert (code, out) == (0, '"owls are birds"\n'), err
    assert len(server.requests) == 2
    data, text = traced(cli, run_id(err))
    [step] = data["steps"]
    assert set(step) >= {"key", "kind", "status", "tokens", "preview", "children", "request", "answer"}
    # the last request holds the whole conversation; it is what the server received last
    assert step["request"]["model"] == "openai/test-model"
    assert wire(step["request"]) == received(server, 1)
    assert [m["role"] for m in step["request"]["messages"]] == ["system", "user", "assistant", "tool"]
    assert step["request"]["tools"][0]["function"]["name"] == "read_file"
    assert step["answer"] == "<output>owls are birds</output>"  # raw, before <output> is read
    assert [c["kind"] for c in step["children"]] == ["tool"]
    assert step["children"][0]["request"] is None and step["children"][0]["answer"] is None
    # --full: both turns, each message under its role, the settings, then the raw answer
    first = server.requests[0].body["messages"]
    for line in ("request (turn 1 of 2):", "answer (turn 2 of 2):", "[system]", "[user]", "[tool call_1]"):
        assert line in text
    assert first[0]["content"].splitlines()[0] in text and first[1]["content"] in text
    assert "model: openai/test-model" in text and "tools: read_file" in text
    assert '-> read_file({"path": "notes.txt"})' in text and "Owls hunt at night." in text
    assert "<output>owls are birds</output>" in text
    assert text.index("[user]") < text.index("answer (turn 1 of 2):") < text.index("[tool call_1]")
    code, plain, _ = cli("trace", run_id(err))
    assert plain.splitlines() == text.splitlines()[:2] + text.splitlines()[-1:]  # the run, task, tool


def test_a_failed_call_keeps_its_request_and_has_no_answer(
    cli: Cli, project: Path, server: LLMServer
) -> None:
    server.script(Scripted(status=400, error={"message": "no such thing", "type": "invalid_request_error"}))
    (project / "p.sexp").write_text('(summarize :text "owls")\n')
    code, _, err = cli("run", "p.sexp", env=against(server), run_lines=True)
    assert code == 1 and "bad_request" in err
    data, text = traced(cli, run_id(err))
    [step] = data["steps"]
    assert wire(step["request"]) == received(server, 0)
    assert step["answer"] is None
    assert "answer: (none: the provider rejected the request" in text


def test_mock_models_keep_their_requests_too(cli: Cli, project: Path) -> None:
    (project / "p.sexp").write_text('(summarize :text "owls")\n(summarize :text "bats" :style "long")\n')
    code, _, err = cli("run", "p.sexp", "--model", "mock/x", run_lines=True)
    assert code == 0
    data, text = traced(cli, run_id(err))
    requests = [step["request"] for step in data["steps"]]
    assert [r["model"] for r in requests] == ["mock/x", "mock/x"]
    assert [r["messages"][-1]["content"] for r in requests] == [
        "Summarise this text: owls in style plain",
        "Summarise this text: bats in style long",
    ]
    assert [r["generation"] for r in requests] == [{}, {}]
    assert [s["answer"] for s in data["steps"]] == [
        "<output>mock response 1 for summarize</output>",  # raw: as the mock model answered
        "<output>mock response 2 for summarize</output>",
    ]
    assert "Summarise this text: bats in style long" in text and "generation: (none)" in text


def test_no_key_reaches_the_store_or_the_trace(cli: Cli, project: Path, server: LLMServer) -> None:
    server.script(*READS_THEN_ANSWERS)
    (project / "p.sexp").write_text("(summarize :text secret)\n")
    code, _, err = cli(
        "run", "p.sexp", "--set-str", f"secret=key {KEY} here", env=against(server), run_lines=True
    )
    assert code == 0, err
    assert KEY in json.dumps(server.requests[0].body)  # the program did send it to its model
    stored = b"".join(p.read_bytes() for p in (project / ".sexp").rglob("*") if p.is_file())
    assert b"Summarise this text: key" in stored and KEY.encode() not in stored
    env = {"OPENAI_API_KEY": KEY}
    for flags in (["--json"], ["--full"]):
        code, out, _ = cli("trace", run_id(err), *flags, env=env)
        assert code == 0 and "Summarise this text: key" in out and KEY not in out
    code, out, _ = cli(
        "tasks", "render", "summarize", "--set-str", f"text={KEY}", "--model", "mock/x", env=env
    )
    assert code == 0 and KEY not in out and "Summarise this text: ***" in out


def test_a_store_of_the_previous_version_still_traces(cli: Cli, workspace: Path) -> None:
    """Its turns kept the reply but not the request."""
    store = Store(workspace / ".sexp" / "store.db")
    store.begin_run("0123456789ab", "p.sexp", "hash", {})
    store.step_started("0123456789ab", "p.sexp:1:1#1", 1, None, "task", "t", "fp")
    store.step_started("0123456789ab", "p.sexp:1:1#1/turn#1", 2, "p.sexp:1:1#1", "turn", "mock/x", "fp2")
    reply = {"content": "<output>old</output>", "tool_calls": [], "finish_reason": "stop"}
    store.step_completed(
        "0123456789ab", "p.sexp:1:1#1/turn#1", "COMPLETE", {"content": "", "notes": {"reply": reply}}
    )
    store.step_completed("0123456789ab", "p.sexp:1:1#1", "COMPLETE", {"content": "old", "notes": {}})
    store.step_started("0123456789ab", "p.sexp:2:1#1", 3, None, "task", "u", "fp3")
    store.end_run("0123456789ab", "completed")
    store.close()
    data, text = traced(cli, "0123456789ab")
    assert [(s["request"], s["answer"]) for s in data["steps"]] == [
        (None, "<output>old</output>"),
        (None, None),
    ]
    assert "request: (not recorded)" in text and "<output>old</output>" in text
    assert "(no model call)" in text


def test_trace_rows_without_turns_render_as_before() -> None:
    run = {
        "id": "0123456789ab",
        "program": "p.sexp",
        "status": "completed",
        "started_at": 1.0,
        "ended_at": 2.0,
    }
    rows = [{"key": "a#1", "seq": 1, "kind": "task", "name": "t", "status": "COMPLETE", "parent": None}]
    assert format_trace(run, rows, full=False) == format_trace(run, rows)
    assert format_trace(run, rows, full=True).endswith("\n      (no model call)")
    assert trace_json(run, rows)["steps"][0]["request"] is None


# sexp tasks render ----------------------------------------------------------------------------


def test_render_json_is_what_a_real_call_sends(cli: Cli, project: Path, server: LLMServer) -> None:
    server.script("<output>fine</output>")
    args = ("--set", 'text="owls"', "--set", "style=long")
    code, out, err = cli("tasks", "render", "summarize", *args, "--json", env=against(server))
    assert (code, err) == (0, "")
    assert server.requests == []  # sent nothing
    rendered = json.loads(out)
    assert list(rendered) == ["model", "messages", "generation", "response_format", "tools"]
    (project / "p.sexp").write_text('(summarize :text "owls" :style "long")\n')
    code, _, err = cli("run", "p.sexp", env=against(server), run_lines=True)
    assert code == 0 and len(server.requests) == 1
    assert wire(rendered) == received(server, 0)
    data, _ = traced(cli, run_id(err))
    assert data["steps"][0]["request"] == rendered


def test_render_prints_roles_and_settings_and_takes_reserved_parameters(cli: Cli, project: Path) -> None:
    code, out, err = cli("tasks", "render", "summarize", "--set", "text=owls", "--set", 'model="mock/y"')
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[:4] == ["model: mock/y", "generation: (none)", "response_format: (none)", "tools: read_file"]
    assert lines[lines.index("[user]") + 1] == "Summarise this text: owls in style plain"
    assert lines[lines.index("[system]") + 1].startswith("You are a careful assistant")
    assert "Be brief." in lines
    code, out, _ = cli(
        "tasks",
        "render",
        "summarize",
        "--set",
        "text=owls",
        "--set",
        "tools='(list_files)",
        "--json",
        "--model",
        "m",
    )
    assert code == 0 and [t["function"]["name"] for t in json.loads(out)["tools"]] == ["list_files"]
    code, _, err = cli(
        "tasks", "render", "summarize", "--set", "text=owls", "--set", "files=3", "--model", "m"
    )
    assert code == 1 and err.startswith("error: TASK_FAILURE input_validation_failure: files")


def test_render_imports_no_litellm(project: Path) -> None:
    code = (
        "import sys\nfrom sexp_tasks.cli.main import main\n"
        "status = main(['tasks', 'render', 'summarize', '--set', 'text=x', '--model', 'openai/gpt-4o'])\n"
        "print(status, 'litellm' in sys.modules)\n"
    )
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=project, capture_output=True, text=True, env=environment,
        timeout=scaled(60),
    )
    assert done.stdout.splitlines()[-1] == "0 False", done.stderr


@pytest.mark.parametrize(
    ("arguments", "call"),
    [
        (["--set", "txt=1"], "(summarize :txt 1)"),  # unknown
        (["--set", "style=1"], "(summarize :style 1)"),  # missing
        (["--set", "text=1"], "(summarize :text 1)"),  # of the wrong type
    ],
)
def test_render_refuses_bad_inputs_as_the_call_does(
    cli: Cli, project: Path, arguments: list[str], call: str
) -> None:
    code, out, err = cli("tasks", "render", "summarize", *arguments, "--model", "mock/x")
    assert (code, out) == (1, "")
    _, _, called = cli("eval", call, "--model", "mock/x")
    assert err == called and err.startswith("error: TASK_FAILURE input_validation_failure: ")


def test_render_missing_input_unknown_task_and_bad_set(cli: Cli, project: Path) -> None:
    code, out, err = cli("tasks", "render", "summarize", "--model", "mock/x")
    assert (code, out) == (1, "")
    assert (
        err
        == "error: TASK_FAILURE input_validation_failure: task 'summarize': missing required input 'text'\n"
    )
    code, _, err = cli("tasks", "render", "sumarize", "--model", "mock/x")
    assert code == 1 and err.startswith("error: unknown task 'sumarize'") and "summarize" in err
    code, _, err = cli("tasks", "render", "summarize", "--set", "text")
    assert code == 2 and "--set expects NAME=VALUE" in err
    code, _, err = cli("tasks", "render", "summarize", "--set", "text=x")
    assert code == 1 and "has no model" in err


# The run's summary ----------------------------------------------------------------------------


def test_a_run_ends_with_its_model_calls_tokens_cost_and_time(
    cli: Cli, project: Path, server: LLMServer
) -> None:
    server.script(*READS_THEN_ANSWERS)
    (project / "p.sexp").write_text('(task-content (summarize :text "owls"))\n')
    code, _, err = cli("run", "p.sexp", env=against(server, "openai/gpt-4o-mini"), run_lines=True)
    assert code == 0
    line = summary(err)
    data, _ = traced(cli, line.group(1))
    assert line.group(1) == run_id(err) and line.group(2) == "2"
    assert int(line.group(3)) == data["run"]["tokens"] == 30  # 10 in and 5 out, twice
    assert data["run"]["cost_usd"] > 0 and line.group(4) == format_cost(data["run"]["cost_usd"])
    assert 0 <= float(line.group(5)) < 60  # in-process, with litellm loaded, 0.0 s is possible


def test_mock_calls_are_model_calls_and_the_line_comes_last(cli: Cli, project: Path) -> None:
    (project / "p.sexp").write_text('(summarize :text "a")\n(summarize :text "b")\n(error "boom")\n')
    code, _, err = cli("run", "p.sexp", "--model", "mock/x", run_lines=True)
    assert code == 1
    lines = err.splitlines()
    assert any("error: boom" in line for line in lines[1:-1]) and "error" not in lines[-1]
    line = summary(err)
    assert line.group(2) == "2" and line.group(4) == "$0.00"


def test_no_summary_when_quiet_or_when_no_model_was_called(cli: Cli, project: Path) -> None:
    (project / "p.sexp").write_text('(summarize :text "a")\n')
    code, _, err = cli("run", "p.sexp", "--model", "mock/x", "-q", run_lines=True)
    assert (code, err) == (0, "")
    (project / "none.sexp").write_text("(+ 1 2)\n")
    code, out, err = cli("run", "none.sexp", run_lines=True)
    assert (code, out) == (0, "3\n") and re.fullmatch(r"run: [0-9a-f]{12}\n", err)
    code, _, err = cli("run", "p.sexp", "--model", "mock/x", run_lines=True)
    code, _, again = cli("run", "p.sexp", "--model", "mock/x", "--resume", run_id(err), run_lines=True)
    assert (code, again) == (0, f"run: {run_id(err)}\n")  # every call answered from the store


def test_the_store_has_one_turn_row_per_call(workspace: Path, project: Path, cli: Cli) -> None:
    (project / "p.sexp").write_text('(summarize :text "a")\n')
    cli("run", "p.sexp", "--model", "mock/x")
    db = sqlite3.connect(workspace / ".sexp" / "store.db")
    [(result,)] = db.execute("SELECT result FROM steps WHERE kind = 'turn'").fetchall()
    db.close()
    notes = json.loads(result)["notes"]
    assert notes["request"]["messages"][-1]["content"] == "Summarise this text: a in style plain"
    assert notes["reply"]["content"] == "<output>mock response 1 for summarize</output>"


def test_replayed_calls_count_as_model_calls(cli: Cli, project: Path) -> None:
    (project / "p.sexp").write_text('(summarize :text "a")\n')
    code, _, err = cli("run", "p.sexp", "--model", "mock/x", "--record", "c.jsonl", run_lines=True)
    recorded = summary(err)
    code, _, err = cli("run", "p.sexp", "--model", "mock/x", "--replay", "c.jsonl", run_lines=True)
    replayed = summary(err)
    assert code == 0 and replayed.group(2, 3, 4) == recorded.group(2, 3, 4)
    assert recorded.group(2) == "1" and int(recorded.group(3)) > 0


def test_an_interrupted_run_ends_with_its_summary_too(project: Path, server: LLMServer) -> None:
    server.script("<output>one</output>", Scripted(content="<output>two</output>", delay=scaled(30)))
    (project / "p.sexp").write_text('(summarize :text "a")\n(summarize :text "b")\n')
    process = spawn_sexp("run", "p.sexp", cwd=project, env=against(server), stderr=subprocess.PIPE)
    wait_for(lambda: len(server.requests) == 2, 60, "the second call was never sent")
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=scaled(60))
    assert process.returncode == 130
    lines = err.splitlines()
    assert lines[-2] == "interrupted"
    assert summary(err).group(1, 2, 3) == (run_id(err), "1", "15")  # the answered call
