"""Subtasks (SPEC §3.7): spawn_subtask, CONTINUATION and resumption, template choice, the depth
and cycle limits — through litellm against a local server, and on mock models."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli
from llm_server import LLMServer, Scripted

from sexp_tasks.config import Settings
from sexp_tasks.results import TaskResult
from sexp_tasks.runtime import Runtime
from sexp_tasks.tasks.subtasks import BadRequest, SubtaskRequest, choose_template
from sexp_tasks.tasks.template import InputSpec, TaskTemplate

TASKS = """
(defatom planner (params (goal str)) (instructions "Plan {{goal}}") (tools spawn_subtask))
(defatom research (params (topic str)) (instructions "Research {{topic}}")
  (description "research a topic and report facts"))
(defatom critic (params (text str)) (instructions "Criticise {{text}}") (subtype "evaluator")
  (description "judge a text"))
"""


@pytest.fixture
def server(server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> LLMServer:
    """conftest's server, with this file's fake key in OPENAI_API_KEY."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-subtasks-0123456789")
    return server


def make_runtime(workspace: Path, server: LLMServer, **settings: Any) -> Runtime:
    options = Settings(
        workspace=str(workspace), model="openai/test-model", api_base=server.base_url, **settings
    )
    return Runtime(options, out=io.StringIO(), err=io.StringIO())


def spawn(**arguments: Any) -> Scripted:
    return Scripted(content=None, tool_calls=[{"name": "spawn_subtask", "arguments": arguments}])


def test_a_subtask_runs_and_its_result_resumes_the_parent(workspace: Path, server: LLMServer) -> None:
    server.script(
        spawn(description="find facts about owls", template_hints=["research"], inputs={"topic": "owls"}),
        "<output>owls are nocturnal</output>",
        "<output>plan: watch at night</output>",
    )
    rt = make_runtime(workspace, server)
    result = rt.run_source(TASKS + '(planner "owl watching")')
    assert isinstance(result, TaskResult) and result.status == "COMPLETE"
    assert result.content == "plan: watch at night"
    assert result.notes["subtasks"] == [{"template": "research", "status": "COMPLETE"}]
    assert result.notes["resources"]["turns"] == 2
    assert server.requests[1].body["messages"][-1]["content"] == "Research owls"
    tool_answer = server.requests[2].body["messages"][-1]
    assert tool_answer["role"] == "tool" and tool_answer["content"] == "owls are nocturnal"
    assert "tools" not in server.requests[1].body  # the subtask was offered no tools


def test_the_template_is_matched_from_the_description(workspace: Path, server: LLMServer) -> None:
    server.script(spawn(description="research owls"), "<output>facts</output>", "<output>done</output>")
    rt = make_runtime(workspace, server)
    result = rt.run_source(TASKS + '(planner "x")')
    assert result.notes["subtasks"][0]["template"] == "research"
    # the one declared input gets the description when no inputs are given
    assert server.requests[1].body["messages"][-1]["content"] == "Research research owls"


def test_the_subtype_picks_the_template(workspace: Path, server: LLMServer) -> None:
    server.script(
        spawn(description="is this good", subtype="evaluator"), "<output>fine</output>", "<output>ok</output>"
    )
    rt = make_runtime(workspace, server)
    assert rt.run_source(TASKS + '(planner "x")').notes["subtasks"][0]["template"] == "critic"


def test_depth_is_limited(workspace: Path, server: LLMServer) -> None:
    server.script(*[spawn(description=f"level {i}", template_hints=["planner"]) for i in range(1, 10)])
    rt = make_runtime(workspace, server, max_depth=2)
    result = rt.run_source(TASKS + '(planner "x")')
    assert result.status == "FAILED" and result.error is not None
    assert (result.error.type, result.error.reason) == ("TASK_FAILURE", "subtask_failure")
    assert result.error.details is not None and result.error.details["depth"] == 3
    assert result.error.details["request"]["description"] == "level 3"
    assert "at most 2 deep" in result.error.message
    assert len(server.requests) == 3  # the refused request is never sent


def test_an_identical_request_on_the_chain_is_a_cycle(workspace: Path, server: LLMServer) -> None:
    server.script(spawn(description="same again", template_hints=["planner"], inputs={"goal": "g"}))
    rt = make_runtime(workspace, server)
    result = rt.run_source(TASKS + '(planner "x")')
    assert result.error is not None and result.error.reason == "subtask_failure"
    assert "cycle" in result.error.message and result.error.details["depth"] == 2  # type: ignore[index]


def test_a_failed_subtask_fails_the_parent_with_the_request(workspace: Path, server: LLMServer) -> None:
    server.script(spawn(description="research", template_hints=["research"], inputs={"topic": 5}))
    rt = make_runtime(workspace, server)
    result = rt.run_source(TASKS + '(planner "x")')
    assert result.error is not None and result.error.reason == "subtask_failure"
    assert "task 'research': input 'topic' must be string" in result.error.message
    assert result.error.details["request"]["inputs"] == {"topic": 5}  # type: ignore[index]


def test_no_fitting_template_and_a_malformed_request_are_failures(workspace: Path, server: LLMServer) -> None:
    server.script(spawn(description="zzzz qqqq"))
    rt = make_runtime(workspace, server)
    assert "no template fits" in rt.run_source(TASKS + '(planner "x")').error.message  # type: ignore[union-attr]
    server.script(spawn(template_hints=["research"]))
    assert "needs a description" in rt.run_source('(planner "y")').error.message  # type: ignore[union-attr]


def test_spawn_subtask_is_offered_only_when_listed(workspace: Path, server: LLMServer) -> None:
    server.script(spawn(description="research owls"), "<output>gave up</output>")
    rt = make_runtime(workspace, server)
    result = rt.run_source(TASKS + '(research "owls")')
    assert "tools" not in server.requests[0].body
    assert result.status == "COMPLETE"
    assert server.requests[1].body["messages"][-1]["content"].startswith("error: no tool named")
    planner_tools = None
    server.script("<output>ok</output>")
    rt.run_source('(planner "x")')
    planner_tools = server.requests[-1].body["tools"]
    assert [t["function"]["name"] for t in planner_tools] == ["spawn_subtask"]


@pytest.mark.slow
def test_subtasks_on_mock_models_are_journaled_under_their_parent(cli: Cli, workspace: Path) -> None:
    replies = [
        {
            "content": "",
            "tool_calls": [{"name": "spawn_subtask", "arguments": {"description": "research owls"}}],
        },
        "<output>facts</output>",
        "<output>the plan</output>",
    ]
    (workspace / "replies.json").write_text(json.dumps(replies))
    (workspace / "p.sexp").write_text(TASKS + '(task-content (planner "owls"))\n')
    assert cli("run", "--model", "mock/m", "--mock-responses", "replies.json", "p.sexp") == (
        0,
        '"the plan"\n',
        "",
    )
    db = sqlite3.connect(workspace / ".sexp" / "store.db")
    steps = db.execute(
        "SELECT key, parent, kind, name, status FROM steps WHERE kind != 'turn' ORDER BY seq"
    ).fetchall()
    assert [(s[2], s[3], s[4]) for s in steps] == [
        ("task", "planner", "COMPLETE"),
        ("subtask", "research", "COMPLETE"),
    ]
    assert steps[1][1] == steps[0][0]  # the subtask's parent is the planner's step


def test_request_parsing() -> None:
    request = SubtaskRequest.from_arguments(
        {"description": " d ", "template_hints": "a", "file_paths": ["x"]}
    )
    assert request == SubtaskRequest("d", ("a",), None, None, ("x",))
    for bad in (
        {},
        {"description": ""},
        {"description": "d", "subtype": "boss"},
        {"description": "d", "inputs": 3},
    ):
        with pytest.raises(BadRequest):
            SubtaskRequest.from_arguments(bad)


def test_template_choice_order() -> None:
    a = TaskTemplate("a", "alpha things", "do a", inputs=(InputSpec("x"),))
    b = TaskTemplate("b", "beta things", "do b", subtype="evaluator")
    templates = {"a": a, "b": b}

    def match(text: str) -> list[tuple[float, TaskTemplate]]:
        return [(1.0, a)] if "alpha" in text else []

    def choose(**request: Any) -> TaskTemplate | None:
        return choose_template(SubtaskRequest(**request), templates.get, templates.values(), match)

    assert choose(description="alpha", template_hints=("missing", "b")) is b
    assert choose(description="alpha", subtype="evaluator") is b
    assert choose(description="alpha") is a
    assert choose(description="gamma") is None
    assert choose(description="alpha", subtype="director") is None
