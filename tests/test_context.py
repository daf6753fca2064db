"""Context management and reserved parameters (SPEC §2.5, §3.5), seen in the requests a local
OpenAI-compatible server receives through litellm."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli
from llm_server import LLMServer, Scripted

from sexp_tasks.config import Settings
from sexp_tasks.errors import SexpError
from sexp_tasks.results import TaskResult
from sexp_tasks.runtime import Runtime
from sexp_tasks.tasks.context import ContextError, ContextSettings, parse_overrides, resolve

CANARY = "sk-canary-context-0123456789"


@pytest.fixture
def server(server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> LLMServer:
    """conftest's server, with this file's fake key in OPENAI_API_KEY."""
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    return server


def make_runtime(workspace: Path, server: LLMServer) -> Runtime:
    settings = Settings(workspace=str(workspace), model="openai/test-model", api_base=server.base_url)
    return Runtime(settings, out=io.StringIO(), err=io.StringIO())


TASKS = """
(defatom find (params (topic str)) (instructions "Find facts about {{topic}}"))
(defatom write_up (params (topic str)) (instructions "Write about {{topic}}"))
(defatom isolated (params (topic str)) (instructions "Judge {{topic}}")
  (context (inherit_context "none")))
"""


def user_message(server: LLMServer, index: int) -> str:
    messages = server.requests[index].body["messages"]
    return str(messages[-1]["content"])


@pytest.mark.slow
def test_sequential_steps_inherit_earlier_steps_notes(workspace: Path, server: LLMServer) -> None:
    server.script(
        "<output>owls hunt at night</output><notes><fact>owls are nocturnal</fact></notes>",
        "<output>essay</output>",
    )
    rt = make_runtime(workspace, server)
    value = rt.run_source(TASKS + '(task-content (sequential (find "owls") (write_up "owls")))')
    assert value == "essay"
    assert "<context>" not in user_message(server, 0)  # the first step has nothing to inherit
    second = user_message(server, 1)
    assert second.startswith("Write about owls\n\n<context>")
    assert "[find] fact: owls are nocturnal" in second
    assert "owls hunt at night" not in second  # notes_only: the notes, not the output


def test_full_output_accumulation_passes_the_content(workspace: Path, server: LLMServer) -> None:
    server.script("<output>owls hunt at night</output>", "<output>essay</output>")
    rt = make_runtime(workspace, server)
    rt.run_source(
        TASKS + '(sequential (context (accumulation_format "full_output")) (find "owls") (write_up "owls"))'
    )
    assert "owls hunt at night" in user_message(server, 1)


def test_a_template_that_inherits_nothing_sees_no_context(workspace: Path, server: LLMServer) -> None:
    server.script("<output>a</output><notes><fact>x</fact></notes>", "<output>b</output>")
    rt = make_runtime(workspace, server)
    rt.run_source(TASKS + '(sequential (find "owls") (isolated "owls"))')
    assert user_message(server, 1) == "Judge owls"


def test_the_call_site_context_overrides_the_template(workspace: Path, server: LLMServer) -> None:
    server.script("<output>a</output><notes><fact>x</fact></notes>", "<output>b</output>")
    rt = make_runtime(workspace, server)
    rt.run_source(
        TASKS + '(sequential (find "owls") (isolated :topic "owls" :context (dict "inheritContext" "full")))'
    )
    assert "[find] fact: x" in user_message(server, 1)


def test_no_accumulation_means_later_steps_see_nothing(workspace: Path, server: LLMServer) -> None:
    server.script("<output>a</output><notes><fact>x</fact></notes>", "<output>b</output>")
    rt = make_runtime(workspace, server)
    rt.run_source(TASKS + '(sequential (context (accumulate_data false)) (find "owls") (write_up "owls"))')
    assert user_message(server, 1) == "Write about owls"


def test_subset_inherits_only_the_relevant_steps(workspace: Path, server: LLMServer) -> None:
    server.script(
        "<output>a</output><notes><fact>owls are nocturnal</fact></notes>",
        "<output>b</output><notes><fact>bread needs yeast</fact></notes>",
        "<output>c</output>",
    )
    rt = make_runtime(workspace, server)
    rt.run_source(
        TASKS
        + '(sequential (find "owls") (find "bread")'
        + ' (write_up :topic "owls" :context (dict "inherit_context" "subset")))'
    )
    third = user_message(server, 2)
    assert "owls are nocturnal" in third and "bread needs yeast" not in third


def test_nested_sequentials_inherit_the_outer_context(workspace: Path, server: LLMServer) -> None:
    server.script("<output>a</output><notes><fact>outer fact</fact></notes>", "<output>b</output>")
    rt = make_runtime(workspace, server)
    rt.run_source(TASKS + '(sequential (find "owls") (sequential (write_up "owls")))')
    assert "outer fact" in user_message(server, 1)


def test_a_task_outside_sequential_has_no_context_block(workspace: Path, server: LLMServer) -> None:
    server.script("<output>a</output>")
    rt = make_runtime(workspace, server)
    rt.run_source(TASKS + '(find "owls")')
    assert user_message(server, 0) == "Find facts about owls"


def test_files_are_read_into_the_prompt_and_missing_ones_are_warnings(
    workspace: Path, server: LLMServer
) -> None:
    (workspace / "notes.txt").write_text("the secret ingredient is cardamom\n")
    server.script("<output>done</output>")
    rt = make_runtime(workspace, server)
    result = rt.run_source(
        TASKS + '(find :topic "cake" :files (list "notes.txt" "missing.txt" "../outside.txt"))'
    )
    assert isinstance(result, TaskResult) and result.status == "COMPLETE"
    message = user_message(server, 0)
    assert '<file path="notes.txt">\nthe secret ingredient is cardamom\n' in message
    assert "missing.txt" not in message
    warnings = result.notes["warnings"]
    assert any("missing.txt" in w and "no such file" in w for w in warnings)
    assert any("../outside.txt" in w and "outside the workspace" in w for w in warnings)
    assert "warning: find: file 'missing.txt' not included" in rt.err.getvalue()  # type: ignore[attr-defined]


def test_template_file_paths_literal_and_command(workspace: Path, server: LLMServer) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "b.txt").write_text("beta\n")
    tasks = workspace / "tasks"
    tasks.mkdir()
    (tasks / "literal.xml").write_text(
        '<task name="literal" type="atomic"><description>d</description><instructions>Read.</instructions>'
        '<file_paths source="literal"><path>a.txt</path></file_paths></task>'
    )
    (tasks / "listed.xml").write_text(
        '<task name="listed" type="atomic"><description>d</description><instructions>Read.</instructions>'
        '<file_paths source="command"><command>ls b.txt</command></file_paths></task>'
    )
    server.script("<output>one</output>", "<output>two</output>")
    rt = make_runtime(workspace, server)
    rt.run_source("(literal) (listed)")
    assert '<file path="a.txt">\nalpha' in user_message(server, 0)
    assert '<file path="b.txt">\nbeta' in user_message(server, 1)


def test_fresh_context_without_an_index_is_a_warning(workspace: Path, server: LLMServer) -> None:
    server.script("<output>ok</output>")
    rt = make_runtime(workspace, server)
    result = rt.run_source(TASKS + '(find :topic "x" :context (dict "fresh_context" "enabled"))')
    assert result.status == "COMPLETE"
    assert any("fresh context" in w for w in result.notes["warnings"])


def test_fresh_context_asks_the_memory_system(workspace: Path, server: LLMServer) -> None:
    (workspace / "owls.md").write_text("# Owls\nowls are nocturnal\n")
    server.script("<output>ok</output>")
    rt = make_runtime(workspace, server)
    asked: list[tuple[str, int]] = []

    def memory(query: str, limit: int) -> list[str]:
        asked.append((query, limit))
        return ["owls.md"]

    rt.tasks.memory_query = memory
    rt.run_source(TASKS + '(find :topic "owls" :context (dict "fresh_context" true))')
    assert asked and asked[0][0] == "Find facts about owls"
    assert '<file path="owls.md">\n# Owls' in user_message(server, 0)


@pytest.mark.parametrize(
    ("call", "parameter", "text"),
    [
        (':context (dict "inherit" "full")', "context", "unknown context setting 'inherit'"),
        (':context (dict "inherit_context" "most")', "context", "inherit_context must be one of"),
        (':context (dict "accumulate_data" "maybe")', "context", "accumulate_data must be true or false"),
        (
            ':context (dict "inherit_context" "full" "fresh_context" "enabled")',
            "context",
            "cannot be combined",
        ),
        (":context 5", "context", "context must be a dict"),
        (":files 5", "files", "files must be a list of strings"),
        (':subtype "boss"', "subtype", "subtype must be one of standard, subtask, director, evaluator"),
        (":model 3", "model", "model must be a string"),
        (':history_config (dict "turns" 3)', "history_config", "unknown history_config setting 'turns'"),
        (':history_config (dict "max_exchanges" -1)', "history_config", "max_exchanges must be"),
        (':history_config "yes"', "history_config", "history_config must be a dict"),
    ],
)
def test_bad_reserved_parameters_fail_before_any_request(
    workspace: Path, server: LLMServer, call: str, parameter: str, text: str
) -> None:
    rt = make_runtime(workspace, server)
    result = rt.run_source(TASKS + f'(find :topic "x" {call})')
    assert isinstance(result, TaskResult) and result.status == "FAILED"
    assert result.error is not None and result.error.reason == "input_validation_failure"
    assert result.error.details == {"parameter": parameter}
    assert text in result.error.message
    assert server.requests == []


def test_an_evaluator_subtype_puts_its_verdict_in_notes(workspace: Path, server: LLMServer) -> None:
    server.script('<output>{"success": false, "feedback": "too short"}</output>', "<output>fine</output>")
    rt = make_runtime(workspace, server)
    judged = rt.run_source(TASKS + '(find :topic "x" :subtype "evaluator")')
    assert judged.notes["success"] is False and judged.notes["feedback"] == "too short"
    plain = rt.run_source('(find "x")')
    assert "success" not in plain.notes


def test_history_config_replays_earlier_exchanges(workspace: Path, server: LLMServer) -> None:
    server.script("<output>first answer</output>", "<output>second answer</output>", "<output>third</output>")
    rt = make_runtime(workspace, server)
    rt.run_source(TASKS + '(find "a") (find :topic "b" :history_config (dict "record" false))')
    rt.run_source('(find :topic "c" :history_config (dict "use_history" true "max_exchanges" 3))')
    messages = server.requests[2].body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[1]["content"] == "Find facts about a" and messages[2]["content"] == "first answer"
    assert server.requests[1].body["messages"][1]["role"] == "user"  # no history unless asked


def test_resolve_applies_defaults_then_template_then_call() -> None:
    assert resolve("atomic") == resolve("atomic", ContextSettings())
    assert resolve("atomic").inherit == "full" and not resolve("atomic").fresh
    assert resolve("sequential").accumulate
    assert resolve("subtask").inherit == "subset" and resolve("subtask").fresh
    template = ContextSettings(inherit_context="none")
    call = ContextSettings(inherit_context="subset")
    assert resolve("atomic", template, call).inherit == "subset"
    # fresh context asked for without an inherit setting starts afresh rather than clash
    assert resolve("atomic", ContextSettings(fresh_context="enabled")).inherit == "none"
    with pytest.raises(ContextError):
        resolve("atomic", ContextSettings(inherit_context="full", fresh_context="enabled"))


def test_the_run_context_travels_into_pmap_elements_and_is_restored(runtime: Runtime) -> None:
    from sexp_tasks.lang.values import Primitive
    from sexp_tasks.run_context import TOP_LEVEL, RunContext, operator_defaults, run_context, within

    seen: dict[int, RunContext] = {}
    runtime.define("probe", Primitive("probe", lambda x: seen.setdefault(x, run_context()), 1, 1, ""))
    with within(RunContext(step="p.sexp:1:1#1")), operator_defaults("reduce"):
        runtime.run_source("(sequential (pmap probe (list 0 1)) (probe 2))")
        with pytest.raises(SexpError):
            runtime.run_source('(sequential (error "stop"))')
        assert run_context() == RunContext(step="p.sexp:1:1#1", operator="reduce")
    assert run_context() is TOP_LEVEL
    first, second, after = seen[0], seen[1], seen[2]
    assert [first.element and first.element.path, second.element and second.element.path] == ["[0]", "[1]"]
    assert after.element is None and after.frame is not None  # the sequential's own frame
    for here in (first, second, after):  # the step and the frame travel into pmap's workers
        assert (here.step, here.operator, here.frame) == ("p.sexp:1:1#1", "atomic", after.frame)


@pytest.mark.parametrize(
    "value",
    [
        {"inherit_context": "none"},
        {"inheritContext": "none"},
        [["inherit_context", "none"]],
    ],
)
def test_overrides_take_snake_or_camel_case_and_alists(value: Any) -> None:
    assert parse_overrides(value) == ContextSettings(inherit_context="none")


def test_sequential_with_a_bad_context_clause_is_a_positioned_error(
    workspace: Path, server: LLMServer
) -> None:
    rt = make_runtime(workspace, server)
    with pytest.raises(Exception, match="sequential: .*inherit_context must be one of"):
        rt.run_source('(sequential (context (inherit_context "most")) 1)')
    with pytest.raises(Exception, match=r"sequential: \(context \.\.\.\) holds"):
        rt.run_source("(sequential (context 5) 1)")
    assert rt.run_source("(sequential)") is None
    assert rt.run_source("(sequential 1 2 3)") == 3


def test_fresh_context_finds_indexed_files(cli: Cli, workspace: Path, server: LLMServer) -> None:
    (workspace / "owls.md").write_text("# Owls\nOwls are nocturnal birds of prey.\n")
    (workspace / "bread.md").write_text("# Bread\nBread needs yeast and time.\n")
    assert cli("index")[0] == 0
    server.script("<output>ok</output>")
    rt = make_runtime(workspace, server)
    result = rt.run_source(
        '(defatom about (params (topic str)) (instructions "Tell me about nocturnal {{topic}}")'
        ' (context (fresh_context "enabled")))'
        '(about "owls")'
    )
    assert result.status == "COMPLETE" and result.notes["warnings"] == []
    message = user_message(server, 0)
    assert '<file path="owls.md">\n# Owls' in message and "bread.md" not in message


def find_then_loop(director: str) -> str:
    """(find "owls") in a sequential, then a one-iteration loop whose director is `director`."""
    return (
        '(sequential (find "owls")'
        ' (director-evaluator-loop (max-iterations 1) (initial-director-input "owls")'
        f" (director {director}) (evaluator (lambda (out plan i) true))))"
    )


def test_director_evaluator_phases_inherit_no_context(workspace: Path, server: LLMServer) -> None:
    server.script("<output>a</output><notes><fact>x</fact></notes>", "<output>plan</output>")
    rt = make_runtime(workspace, server)
    rt.run_source(TASKS + find_then_loop("write_up"))
    assert user_message(server, 1) == "Write about owls"  # the loop's defaults: inherit none


def test_inherit_full_overrides_a_loops_fresh_default(workspace: Path, server: LLMServer) -> None:
    server.script("<output>a</output><notes><fact>x</fact></notes>", "<output>plan</output>")
    rt = make_runtime(workspace, server)
    result = rt.run_source(
        TASKS
        + '(defatom greedy (params (topic str)) (instructions "Plan {{topic}}")'
        + ' (context (inherit_context "full")))'
        + find_then_loop("greedy")
    )
    assert result.status == "COMPLETE"
    assert "[find] fact: x" in user_message(server, 1)


def test_a_task_reducer_gets_the_reduce_defaults(workspace: Path, server: LLMServer) -> None:
    server.script("<output>a</output><notes><fact>x</fact></notes>", "<output>b</output>")
    rt = make_runtime(workspace, server)
    rt.run_source(
        TASKS
        + '(defatom combine (params (acc str) (item str)) (instructions "Combine {{acc}} {{item}}"))'
        + '(sequential (find "owls") (reduce combine "start" (list "one")))'
    )
    assert user_message(server, 1) == "Combine start one"  # reduce: inherit none


def test_the_cost_budget_stops_a_task_between_its_turns(
    workspace: Path, server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "notes.txt").write_text("milk\n")
    server.script(
        Scripted(
            content=None,
            tool_calls=[{"name": "read_file", "arguments": {"path": "notes.txt"}}],
            usage={"prompt_tokens": 100_000, "completion_tokens": 10},
        ),
        "<output>never sent</output>",
    )
    settings = Settings(
        workspace=str(workspace), model="openai/gpt-4o-mini", api_base=server.base_url, max_cost_usd=0.001
    )
    rt = Runtime(settings, out=io.StringIO(), err=io.StringIO())
    result = rt.run_source('(defatom reader (instructions "Read notes.txt") (tools read_file)) (reader)')
    assert result.status == "FAILED" and result.error is not None
    assert (result.error.type, result.error.resource) == ("RESOURCE_EXHAUSTION", "cost")
    assert len(server.requests) == 1  # the second turn was refused before it was sent
    assert result.notes["cost_usd"] > 0.001
    assert result.error.message.startswith("the run has spent $0.01501 of its $0.001 budget")
