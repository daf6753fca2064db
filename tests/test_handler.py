"""The Handler end to end through litellm's real HTTP path against a local OpenAI-compatible server."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import run_python, scaled
from hypothesis import given, settings
from hypothesis import strategies as st
from llm_server import LLMServer, Scripted, context_length_error

from sexp_tasks.diagnostics import failed_result_line
from sexp_tasks.errors import ServiceError, UsageError
from sexp_tasks.handler import (
    Cassette,
    Handler,
    HandlerConfig,
    HandlerServices,
    MockScript,
    OutputSpec,
    TaskPrompt,
)
from sexp_tasks.handler.cost import CostBudget
from sexp_tasks.handler.output import strip_fence
from sexp_tasks.results import COMPLETE, FAILED, TaskResult

CANARY = "sk-canary-7f3a9c2e41b8d605"
GOOD = "<output>The answer</output>\n<notes><data_usage>used the question</data_usage></notes>"


@pytest.fixture
def server(server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> LLMServer:
    """conftest's server, with this file's fake key in OPENAI_API_KEY."""
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    return server


def run(
    server: LLMServer | None,
    prompt: TaskPrompt | None = None,
    services: HandlerServices | None = None,
    **config: Any,
) -> TaskResult:
    options: dict[str, Any] = {"model": "openai/test-model", "num_retries": 0, "timeout": scaled(10.0)}
    if server is not None:
        options["api_base"] = server.base_url
    options.update(config)
    prompt = prompt or TaskPrompt(template="greet", instructions="Say hello.")
    prompt = replace(prompt, models=(options.pop("model"),))  # the model is the prompt's
    return Handler(HandlerConfig(**options), services or HandlerServices()).run(prompt)


def assert_no_canary(*texts: Any) -> None:
    for text in texts:
        assert CANARY not in (text if isinstance(text, str) else json.dumps(text, default=str))


def test_plain_answer_with_output_and_notes(server: LLMServer) -> None:
    server.script(
        "<output>5 < 6 & 7 > 3</output><notes><data_usage>none</data_usage><success>true</success></notes>"
    )
    prompt = TaskPrompt(template="greet", instructions="Compare.", system="Be brief.", context="Context: x")
    result = run(server, prompt)
    assert result.status == COMPLETE
    assert result.content == "5 < 6 & 7 > 3"  # raw text, never re-serialised
    assert result.notes["dataUsage"] == "none" and result.notes["success"] is True
    assert result.notes["template"] == "greet" and result.notes["model"] == "openai/test-model"
    assert result.notes["usage"] == {"prompt_tokens": 10, "completion_tokens": 5}
    assert result.notes["resources"]["turns"] == 1 and result.notes["resources"]["context_limit"] == 80_000
    assert result.notes["warnings"] == [] and result.notes["cost_usd"] == 0.0
    messages = server.requests[0].body["messages"]
    assert messages[0]["role"] == "system" and "Be brief." in messages[0]["content"]
    assert "<output>" in messages[0]["content"] and "<data_usage>" in messages[0]["content"]
    assert messages[1] == {"role": "user", "content": "Compare.\n\n<context>\nContext: x\n</context>"}
    assert "tools" not in server.requests[0].body


def test_malformed_answer_falls_back_with_warning(server: LLMServer) -> None:
    server.script("Just some text <notes><data_usage>a")
    result = run(server)
    assert result.status == COMPLETE
    assert result.content == "Just some text <notes><data_usage>a"
    assert any("no <output>" in w for w in result.notes["warnings"])


def test_manual_xml_and_disable_reparsing(server: LLMServer) -> None:
    server.script("<output>x</output>", "<output>x</output>")
    manual = run(server, TaskPrompt(template="t", instructions="go", output=OutputSpec(manual_xml=True)))
    raw = run(server, TaskPrompt(template="t", instructions="go", output=OutputSpec(disable_reparsing=True)))
    assert manual.content == "x" and raw.content == "<output>x</output>"
    for request in server.requests:
        assert "<output>" not in request.body["messages"][0]["content"]


def test_json_output_valid(server: LLMServer) -> None:
    server.script('<output>```json\n{"score": 3, "tags": ["a"]}\n```</output>')
    spec = OutputSpec(type="json", schema="object")
    result = run(server, TaskPrompt(template="t", instructions="go", output=spec))
    assert result.status == COMPLETE and result.parsed_content == {"score": 3, "tags": ["a"]}
    assert "a JSON object" in server.requests[0].body["messages"][0]["content"]


@pytest.mark.parametrize(
    ("answer", "spec"),
    [
        ("<output>not json</output>", OutputSpec(type="json", schema="object")),
        ('<output>{"x": NaN}</output>', OutputSpec(type="json")),
        ("<output>[1, Infinity]</output>", OutputSpec(type="json", schema="array")),
        ("<output>-Infinity</output>", OutputSpec(type="json", schema="number")),
        ("<output>1e999</output>", OutputSpec(type="json", schema="number")),
        ("<output>" + "[" * 100_000 + "</output>", OutputSpec(type="json")),
        ('<output>["a", 1]</output>', OutputSpec(type="json", schema="string[]")),
        (
            '<output>{"n": "x"}</output>',
            OutputSpec(
                type="json",
                json_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
            ),
        ),
    ],
)
def test_json_output_invalid_keeps_content(server: LLMServer, answer: str, spec: OutputSpec) -> None:
    server.script(answer)
    result = run(server, TaskPrompt(template="t", instructions="go", output=spec))
    assert result.status == FAILED and result.error is not None
    assert result.error.type == "TASK_FAILURE" and result.error.reason == "output_format_failure"
    assert result.error.violations and result.content == answer.removeprefix("<output>").removesuffix(
        "</output>"
    )


def test_json_output_nested_past_the_c_stack_fails_instead_of_crashing() -> None:
    """Well-formed JSON 200,000 deep, read where the recursion limit is high (as the evaluator sets
    it): json's C reader would overflow the C stack and kill the process; it is refused first."""
    code = (
        "import sys; sys.setrecursionlimit(2_000_000)\n"
        "from sexp_tasks.handler.output import check_json\n"
        "from sexp_tasks.handler.contract import OutputSpec\n"
        "value, violations = check_json('[' * 200_000 + ']' * 200_000, OutputSpec(type='json'))\n"
        "print(value, violations)\n"
    )
    refused = "None ['the output is not JSON that can be read: it nests more than 500 deep']\n"
    assert run_python(code) == refused
    shallow = code.replace("200_000", "500")
    assert run_python(shallow).endswith(" None\n")


# Answers are read in time linear in their length (SPEC §10.1) ------------------------------------

OLD_FENCE = re.compile(r"^\s*```[\w-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)  # the reference: cubic


@pytest.mark.parametrize(
    "answer",
    [
        '"```" + " " * 100_000',
        '"```json" + "\\n" * 100_000 + "x"',
        '" " * 50_000 + "```" + " \\n" * 25_000 + "```x"',
        '"<output " * 25_000',
        '"<notes " * 30_000',
        '"<output>" + "<notes " * 30_000',
    ],
)
def test_pathological_answers_are_read_at_once(answer: str) -> None:
    code = (
        "from sexp_tasks.handler.output import read_answer\n"
        "from sexp_tasks.handler.contract import OutputSpec\n"
        f"text = {answer}\n"
        "for spec in (OutputSpec(type='json'), OutputSpec(type='json', disable_reparsing=True)):\n"
        "    read_answer(text, spec)\n"
    )
    run_python(code, timeout=10)  # each took from 40 s to hours


@given(
    st.lists(
        st.sampled_from(
            ["```", "`", " ", "\n", "\t", "json", "a-b_1", "{", "}", "[1]", "\u0663", "é", "\u00a0"]
        ),
        max_size=12,
    )
)
@settings(max_examples=300, deadline=None)
def test_the_fence_stripper_agrees_with_the_fence_pattern(parts: list[str]) -> None:
    text = "".join(parts)
    fenced = OLD_FENCE.match(text)
    assert strip_fence(text) == (fenced.group(1) if fenced else text)


def test_lone_surrogates_in_a_prompt_and_an_answer_are_replaced(server: LLMServer) -> None:
    # a raw one in the answer's text (JSON-escaped on the wire) and escaped ones inside its JSON
    server.script('<output>{"a\\ud83d": ["\\udc00"]}</output><notes><seen>\ud83d</seen></notes>')
    prompt = TaskPrompt(template="t", instructions="go \ud83d", output=OutputSpec(type="json"))
    result = run(server, prompt)
    assert server.requests[0].body["messages"][-1]["content"] == "go \ufffd"
    assert result.status == COMPLETE and result.parsed_content == {"a\ufffd": ["\ufffd"]}
    assert result.notes["seen"] == "\ufffd"
    json.dumps(result.to_json(), ensure_ascii=False).encode("utf-8")  # --json can write it


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Scripted(status=429), "rate_limit"),
        (Scripted(status=500), "provider_error"),
        (Scripted(status=503), "provider_error"),
        (Scripted(status=401, error={"message": "Incorrect API key provided: " + CANARY}), "authentication"),
        (Scripted(status=400), "bad_request"),
        (context_length_error(), "context_window"),
        (Scripted(delay=3.0), "timeout"),
    ],
)
def test_provider_failures_are_mapped(server: LLMServer, reply: Scripted, reason: str) -> None:
    server.script(reply)
    result = run(server, timeout=1.0)
    assert result.status == FAILED and result.error is not None
    assert result.error.type == "TASK_FAILURE" and result.error.reason == reason
    assert result.error.message
    assert_no_canary(result.to_json(), result.error.message)


def test_retries_are_passed_per_call(server: LLMServer) -> None:
    server.script(Scripted(status=500), GOOD)
    result = run(server, num_retries=1)
    assert result.status == COMPLETE and len(server.requests) == 2


def test_tool_loop_reads_files_and_refuses_escapes(
    server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "notes.txt").write_text("inside text")
    (tmp_path / "secret.txt").write_text("outside text")
    (workspace / "link.txt").symlink_to(tmp_path / "secret.txt")
    server.script(
        Scripted(
            content=None,
            tool_calls=[
                {"name": "read_file", "arguments": {"path": "notes.txt"}},
                {"name": "read_file", "arguments": {"path": "../secret.txt"}},
                {"name": "read_file", "arguments": {"path": "link.txt"}},
                {"name": "list_files", "arguments": {}},
            ],
        ),
        GOOD,
    )
    result = run(server, tools=("read_file", "list_files"), workspace=workspace)
    assert result.status == COMPLETE and result.content == "The answer"
    assert result.notes["resources"]["turns"] == 2
    offered = [t["function"]["name"] for t in server.requests[0].body["tools"]]
    assert offered == ["read_file", "list_files"]
    tool_messages = [m for m in server.requests[1].body["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_1", "call_2", "call_3", "call_4"]
    assert tool_messages[0]["content"] == "inside text"
    assert "outside the workspace" in tool_messages[1]["content"]
    assert "outside the workspace" in tool_messages[2]["content"]
    assert "notes.txt" in tool_messages[3]["content"]
    assert "outside text" not in json.dumps(server.requests[1].body)


def test_run_command_and_write_file(server: LLMServer, workspace: Path) -> None:
    server.script(
        Scripted(
            content=None,
            tool_calls=[
                {"name": "write_file", "arguments": {"path": "sub/a.txt", "content": "hi"}},
                {"name": "run_command", "arguments": {"command": "cat sub/a.txt"}},
                {"name": "run_command", "arguments": {"command": "sleep 5"}},
                {"name": "run_command", "arguments": {"command": "no-such-command-xyz"}},
            ],
        ),
        GOOD,
    )
    result = run(server, tools=("write_file", "run_command"), workspace=workspace, script_timeout=0.5)
    assert result.status == COMPLETE and (workspace / "sub/a.txt").read_text() == "hi"
    answers = [m["content"] for m in server.requests[1].body["messages"] if m["role"] == "tool"]
    assert json.loads(answers[1])["stdout"] == "hi"
    assert json.loads(answers[2])["status"] == "timed out"
    assert "cannot start" in answers[3]


def test_tool_not_offered_is_refused_to_the_model(server: LLMServer) -> None:
    server.script(
        Scripted(content=None, tool_calls=[{"name": "run_command", "arguments": {"command": "ls"}}]), GOOD
    )
    result = run(server, tools=("read_file",))
    assert result.status == COMPLETE
    assert "no tool named" in server.requests[1].body["messages"][-1]["content"]


def test_turn_limit_ends_a_runaway_loop(server: LLMServer) -> None:
    server.script(Scripted(content="thinking", tool_calls=[{"name": "list_files", "arguments": {}}]))
    result = run(server, tools=("list_files",), max_turns=3)
    assert result.status == FAILED and result.error is not None
    assert result.error.type == "RESOURCE_EXHAUSTION" and result.error.resource == "turns"
    assert result.error.metrics == result.notes["resources"] and result.error.metrics["turns"] == 3
    assert len(server.requests) == 3 and result.content == "thinking"
    assert any(w.startswith("turn") for w in result.notes["warnings"])


def test_a_turn_may_ask_for_at_most_max_tool_calls_per_turn(server: LLMServer, workspace: Path) -> None:
    def writes(count: int) -> Scripted:
        calls = [{"name": "write_file", "arguments": {"path": f"f{i}", "content": "x"}} for i in range(count)]
        return Scripted(content="working", tool_calls=calls)

    server.script(writes(16), GOOD, writes(17))
    assert run(server, tools=("write_file",), workspace=workspace).status == COMPLETE  # 16: the default
    assert len(list(workspace.iterdir())) == 16
    for file in workspace.iterdir():
        file.unlink()
    result = run(server, tools=("write_file",), workspace=workspace)
    assert result.status == FAILED and result.error is not None
    assert (result.error.type, result.error.resource) == ("RESOURCE_EXHAUSTION", "tool_calls")
    assert "17 tool calls" in result.error.message and "max_tool_calls_per_turn (16)" in result.error.message
    assert result.error.metrics is not None and result.error.metrics["tool_calls"] == 17
    assert list(workspace.iterdir()) == [] and result.content == "working"  # none of them ran
    server.script(writes(3))
    assert run(server, tools=("write_file",), workspace=workspace, max_tool_calls_per_turn=2).failed


def test_a_call_reserves_its_cost_with_max_tokens_of_output(server: LLMServer) -> None:
    budget = CostBudget(0.0001)  # on gpt-4o-mini the prompt costs $0.00001, 100 output tokens $0.00006
    services = HandlerServices(budget=budget)
    refused = run(server, services=services, model="openai/gpt-4o-mini", generation={"max_tokens": 1000})
    assert refused.error is not None and refused.error.resource == "cost" and server.requests == []
    assert refused.error.message.startswith("the run has spent $0.00 of its $0.0001 budget; this call")
    server.script(Scripted(status=400), GOOD)
    for status in (FAILED, COMPLETE):  # the failed call's reservation was released, not kept
        limit = {"max_tokens": 100}
        assert run(server, services=services, model="openai/gpt-4o-mini", generation=limit).status == status
    assert server.requests[-1].body["max_tokens"] == 100
    assert 0 < budget.spent < 0.0001 and budget.largest_output == 5


def test_context_limit_refused_before_sending(server: LLMServer) -> None:
    prompt = TaskPrompt(template="big", instructions="word " * 5000)
    result = run(server, prompt, max_context_window_fraction=0.01)  # 1,000 of the 100,000 default
    assert result.status == FAILED and result.error is not None
    assert result.error.resource == "context" and result.error.metrics["context_limit"] == 1000
    assert result.error.metrics["context_tokens"] > 1000
    assert server.requests == []


def test_context_warning_past_threshold(server: LLMServer) -> None:
    server.script(GOOD)
    result = run(
        server, TaskPrompt(template="t", instructions="word " * 900), max_context_window_fraction=0.01
    )
    assert result.status == COMPLETE
    assert any(w.startswith("context") for w in result.notes["warnings"])


def test_length_finish_is_output_exhaustion(server: LLMServer) -> None:
    server.script(Scripted(content="<output>partial answ", finish_reason="length"))
    result = run(server)
    assert result.status == FAILED and result.error is not None
    assert result.error.type == "RESOURCE_EXHAUSTION" and result.error.resource == "output"
    assert result.content == "<output>partial answ"


@pytest.mark.parametrize("content", ["", "   \n "])
def test_empty_answer_is_invalid_output(server: LLMServer, content: str) -> None:
    server.script(Scripted(content=content))
    result = run(server)
    assert result.status == FAILED and result.error is not None and result.error.type == "INVALID_OUTPUT"
    assert failed_result_line(result) == "error: INVALID_OUTPUT: the model gave an empty answer"


def test_empty_output_section_is_valid(server: LLMServer) -> None:
    server.script("<output></output>")
    result = run(server)
    assert result.status == COMPLETE and result.content == ""


def test_tool_arguments_not_json_are_invalid_output(server: LLMServer) -> None:
    server.script(Scripted(content=None, tool_calls=[{"name": "read_file", "arguments": "{path: oops"}]))
    result = run(server, tools=("read_file",))
    assert result.status == FAILED and result.error is not None and result.error.type == "INVALID_OUTPUT"
    assert len(server.requests) == 1


def test_canary_never_leaks(
    server: LLMServer, workspace: Path, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    cassette = workspace / "calls.jsonl"
    services = HandlerServices(cassette=Cassette(cassette, "record"))
    server.script(GOOD, Scripted(status=401, error={"message": f"bad key {CANARY}"}), Scripted(status=500))
    results = [run(server, services=services) for _ in range(3)]
    assert [r.status for r in results] == [COMPLETE, FAILED, FAILED]
    assert server.requests[0].headers["authorization"] == f"Bearer {CANARY}"  # it was really sent
    out, err = capfd.readouterr()
    assert_no_canary(out, err, caplog.text, cassette.read_text(), *[r.to_json() for r in results])


def test_mock_models_scripted_without_http(server: LLMServer) -> None:
    script = MockScript(
        [
            {"content": "", "tool_calls": [{"name": "list_files", "arguments": {}}]},
            "<output>first</output>",
            "<output>last</output>",
        ]
    )
    services = HandlerServices(mock=script)
    first = run(None, services=services, model="mock/any", tools=("list_files",))
    assert first.status == COMPLETE and first.content == "first" and first.notes["resources"]["turns"] == 2
    assert [run(None, services=services, model="mock/any").content for _ in range(2)] == ["last", "last"]
    assert first.notes["cost_usd"] == 0.0
    assert server.requests == []


def test_mock_default_reply_counts_calls() -> None:
    services = HandlerServices()
    contents = [
        run(None, TaskPrompt(template=name, instructions="x"), services, model="mock/m").content
        for name in ("alpha", "beta")
    ]
    assert contents == ["mock response 1 for alpha", "mock response 2 for beta"]


def test_mock_script_from_file(workspace: Path) -> None:
    (workspace / "replies.json").write_text(json.dumps(["<output>a</output>"]))
    assert MockScript.from_file(workspace / "replies.json").entries == ["<output>a</output>"]
    (workspace / "bad.json").write_text("{not json")
    with pytest.raises(ServiceError, match="not JSON"):
        MockScript.from_file(workspace / "bad.json")
    with pytest.raises(ServiceError, match="no such file"):
        MockScript.from_file(workspace / "missing.json")
    (workspace / "text.json").write_text('"a reply"')
    with pytest.raises(ServiceError, match="JSON list"):
        MockScript.from_file(workspace / "text.json")
    (workspace / "by_template.json").write_text('{"t": ["<output>b</output>"]}')
    assert MockScript.from_file(workspace / "by_template.json").replies == {"t": ["<output>b</output>"]}
    for empty in ("[]", "{}", '{"t": []}'):
        (workspace / "empty.json").write_text(empty)
        with pytest.raises(UsageError, match="--mock-responses: .* holds no replies"):
            MockScript.from_file(workspace / "empty.json")


def test_record_then_replay(server: LLMServer, workspace: Path) -> None:
    path = workspace / "cassette.jsonl"
    server.script(Scripted(content=None, tool_calls=[{"name": "list_files", "arguments": {}}]), GOOD)
    recorded = run(server, services=HandlerServices(cassette=Cassette(path, "record")), tools=("list_files",))
    assert recorded.status == COMPLETE and len(server.requests) == 2
    assert len(path.read_text().splitlines()) == 2
    replay = HandlerServices(cassette=Cassette(path, "replay"))
    replayed = run(server, services=replay, tools=("list_files",))
    assert replayed.content == recorded.content and len(server.requests) == 2
    with pytest.raises(ServiceError, match="cassette.jsonl"):
        run(server, TaskPrompt(template="t", instructions="something new"), replay)
    assert len(server.requests) == 2


def test_replay_missing_cassette(workspace: Path) -> None:
    with pytest.raises(ServiceError, match="cannot read cassette"):
        Cassette(workspace / "nope.jsonl", "replay")


def test_no_model_call_no_litellm() -> None:
    code = (
        "import sys; from sexp_tasks.handler import Handler, HandlerConfig, HandlerServices; "
        "from sexp_tasks.handler.output import read_answer; "
        "print('litellm' in sys.modules, 'tiktoken' in sys.modules)"
    )
    assert run_python(code).split() == ["False", "False"]


def test_ask_user_counts_as_a_turn() -> None:
    script = MockScript(
        [
            {"content": "", "tool_calls": [{"name": "ask_user", "arguments": {"question": "Colour?"}}]},
            "<output>you said blue</output>",
        ]
    )
    asked: list[str] = []
    services = HandlerServices(mock=script, ask_user=lambda q: asked.append(q) or "blue")
    result = run(None, services=services, model="mock/m", tools=("ask_user",))
    assert result.content == "you said blue" and asked == ["Colour?"]
    assert result.notes["resources"]["turns"] == 3
