"""Python functions as model tools (SPEC §10.4, `Session.tool`): the schema derived from type
hints and the docstring reaches the provider, the tool loop calls the function with checked
arguments, its result or exception goes back to the model, and a recorded run journals each call
so that a resumed run does not call it again.

In-process sessions against the local server (tests/llm_server.py), which records request bodies.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal, Optional

import pytest
from conftest import ROOT, scaled
from llm_server import LLMServer, Scripted

import sexp_tasks

LOOKUP = """<task name="support" type="atomic">
  <description>Answer a support question</description>
  <instructions>Answer: {{question}}</instructions>
  <inputs><input name="question" type="string">the question</input></inputs>
  <tools><tool>%s</tool></tools>
</task>
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for variable in ("SEXP_MODEL", "SEXP_API_BASE", "SEXP_TEMPLATES", "SEXP_MOCK_RESPONSES"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-pytool")
    return tmp_path


def session(
    project: Path, server: LLMServer, tool: str = "lookup_order", **settings: Any
) -> sexp_tasks.Session:
    (project / "tasks").mkdir(exist_ok=True)
    (project / "tasks" / "support.xml").write_text(LOOKUP % tool)
    return sexp_tasks.Session(
        model="openai/test-model", api_base=server.base_url, workspace=str(project), quiet=True, **settings
    )


def search(
    query: str,
    limit: int,
    threshold: float,
    exact: bool,
    tags: list[str],
    region: Optional[str] = None,  # noqa: UP045 (the Optional spelling is one of the forms tested)
    owner: str | None = None,
    sort: Literal["new", "old"] = "new",
) -> list[str]:
    """Search the orders.

    Only the orders the user may see.

    Args:
        query: Words to look for.
        limit (int): At most this many
            orders.
        threshold: The lowest score kept.
        exact: Whether every word must match.
        tags: Tags the orders must carry.
        region: The region, when one.
        sort: Newest or oldest first.

    Returns:
        The order ids.
    """
    return []


SEARCH_SCHEMA = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the orders.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words to look for."},
                "limit": {"type": "integer", "description": "At most this many orders."},
                "threshold": {"type": "number", "description": "The lowest score kept."},
                "exact": {"type": "boolean", "description": "Whether every word must match."},
                "tags": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Tags the orders must carry.",
                },
                # pydantic's schema: a null is allowed (it is the default) and a default is shown
                "region": {
                    "anyOf": [{"type": "string"}, {"type": "null"}],
                    "default": None,
                    "description": "The region, when one.",
                },
                "owner": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
                "sort": {
                    "type": "string",
                    "enum": ["new", "old"],
                    "default": "new",
                    "description": "Newest or oldest first.",
                },
            },
            "required": ["query", "limit", "threshold", "exact", "tags"],
        },
    },
}


def tool_call(name: str, arguments: dict[str, Any] | str) -> Scripted:
    return Scripted(content=None, tool_calls=[{"name": name, "arguments": arguments}])


def tool_messages(server: LLMServer, index: int) -> list[str]:
    return [m["content"] for m in server.requests[index].body["messages"] if m["role"] == "tool"]


def test_the_derived_schema_is_in_the_request(project: Path, server: LLMServer) -> None:
    s = session(project, server, "search")
    assert s.tool(search) is search
    server.script("<output>none</output>")
    result = s.call("support", question="any orders?")
    assert result.status == "COMPLETE"
    assert server.requests[0].body["tools"] == [SEARCH_SCHEMA]


def test_the_function_gets_the_arguments_and_the_model_its_result(project: Path, server: LLMServer) -> None:
    s = session(project, server)
    calls: list[dict[str, Any]] = []

    @s.tool
    def lookup_order(order_id: str, verbose: bool = False) -> dict[str, Any]:
        """Look an order up."""
        calls.append({"order_id": order_id, "verbose": verbose})
        return {"id": order_id, "status": "shipped", "items": 2}

    server.script(tool_call("lookup_order", {"order_id": "A-17"}), "<output>It shipped.</output>")
    result = s.call("support", question="where is A-17?")
    assert (result.status, result.content) == ("COMPLETE", "It shipped.")
    assert calls == [{"order_id": "A-17", "verbose": False}]
    assert tool_messages(server, 1) == [json.dumps({"id": "A-17", "status": "shipped", "items": 2})]


def test_a_string_result_is_sent_as_it_is_and_defatom_lists_it(project: Path, server: LLMServer) -> None:
    s = session(project, server)
    s.tool(lambda order_id: f"order {order_id}: shipped", name="lookup_order")
    server.script(tool_call("lookup_order", {"order_id": "B"}), "<output>ok</output>")
    value = s.eval('(defatom ask (instructions "Ask") (tools lookup_order)) (task-content (ask))')
    assert value == "ok"
    assert server.requests[0].body["tools"][0]["function"]["name"] == "lookup_order"
    assert tool_messages(server, 1) == ["order B: shipped"]


def test_an_async_function_is_awaited(project: Path, server: LLMServer) -> None:
    s = session(project, server)

    @s.tool
    async def lookup_order(order_id: str) -> dict[str, Any]:
        """Look an order up."""
        await asyncio.sleep(0)
        if order_id == "Z":
            raise LookupError("no order Z")
        return {"id": order_id}

    server.script(
        Scripted(
            content=None,
            tool_calls=[
                {"name": "lookup_order", "arguments": {"order_id": "A"}},
                {"name": "lookup_order", "arguments": {"order_id": "Z"}},
            ],
        ),
        "<output>ok</output>",
    )
    assert s.call("support", question="where is A?").status == "COMPLETE"
    assert tool_messages(server, 1) == ['{"id": "A"}', "error: LookupError: no order Z"]


def test_an_exception_reaches_the_model_and_the_task_goes_on(project: Path, server: LLMServer) -> None:
    s = session(project, server)

    @s.tool
    def lookup_order(order_id: str) -> str:
        raise KeyError(f"no order {order_id}")

    server.script(tool_call("lookup_order", {"order_id": "Z"}), "<output>Sorry.</output>")
    result = s.call("support", question="where is Z?")
    assert (result.status, result.content) == ("COMPLETE", "Sorry.")
    assert tool_messages(server, 1) == ["error: KeyError: 'no order Z'"]


@pytest.mark.parametrize(
    ("arguments", "violation"),
    [
        # pydantic's messages (it checks the arguments against the schema it gave)
        ({"order_id": 17}, "order_id: Input should be a valid string, got 17"),
        ({}, "order_id: Field required"),
        ({"order_id": "A", "extra": 1}, "extra: Extra inputs are not permitted"),
    ],
)
def test_invalid_arguments_name_the_violation_and_do_not_call_the_function(
    project: Path, server: LLMServer, arguments: dict[str, Any], violation: str
) -> None:
    s = session(project, server)
    calls: list[str] = []

    @s.tool
    def lookup_order(order_id: str) -> str:
        calls.append(order_id)
        return "found"

    server.script(tool_call("lookup_order", arguments), "<output>ok</output>")
    assert s.call("support", question="?").status == "COMPLETE"
    assert calls == []
    [message] = tool_messages(server, 1)
    assert message.startswith("error: lookup_order: invalid arguments: ")
    assert violation in message


def test_a_null_for_a_parameter_defaulting_to_none_is_its_default(project: Path, server: LLMServer) -> None:
    s = session(project, server)
    s.tool(lambda order_id, region=None: f"{order_id} in {region}", name="lookup_order")
    server.script(tool_call("lookup_order", {"order_id": "A", "region": None}), "<output>ok</output>")
    s.call("support", question="?")
    assert tool_messages(server, 1) == ["A in None"]


PROGRAM = '(task-content (support :question "where is A-17?"))\n'


CRASHING = """
import sys
import sexp_tasks

def lookup_order(order_id: str) -> str:
    \"\"\"Look an order up.\"\"\"
    with open("calls.txt", "a") as calls:
        calls.write(order_id + "\\n")
    return "shipped"

session = sexp_tasks.Session(
    model="openai/test-model", api_base=sys.argv[1], store=".sexp/runs.db", quiet=True
)
session.tool(lookup_order)
session.run_file("p.sexp", recorded=True)
print(session.run_id)
"""


def test_a_call_is_journaled_and_not_repeated_on_resume(project: Path, server: LLMServer) -> None:
    (project / "p.sexp").write_text(PROGRAM)
    session(project, server)  # writes the template
    # a first process calls the tool, then its next turn fails: the run ends failed, the call recorded
    server.script(tool_call("lookup_order", {"order_id": "A-17"}), Scripted(status=400))
    child = subprocess.run(
        [sys.executable, "-c", CRASHING, server.base_url],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )
    assert child.returncode == 0, child.stderr
    run_id = child.stdout.split()[-1]
    calls = project / "calls.txt"
    assert calls.read_text() == "A-17\n"
    sent = len(server.requests)

    def lookup_order(order_id: str) -> str:
        """Look an order up."""
        with calls.open("a") as out:
            out.write(order_id + "\n")
        return "shipped"

    resumed = session(project, server, store=".sexp/runs.db")
    resumed.tool(lookup_order)
    server.script("<output>It shipped.</output>")
    assert resumed.run_file("p.sexp", resume=run_id) == "It shipped."
    assert calls.read_text() == "A-17\n"  # answered from the journal: not called again
    assert len(server.requests) == sent + 1  # only the failed turn is sent again
    assert tool_messages(server, -1) == ["shipped"]


def test_a_session_resumes_a_run_another_session_of_the_process_recorded(
    project: Path, server: LLMServer
) -> None:
    (project / "p.sexp").write_text(PROGRAM)
    calls: list[str] = []

    def lookup_order(order_id: str) -> str:
        calls.append(order_id)
        return "shipped"

    first = session(project, server, store=".sexp/runs.db")
    first.tool(lookup_order)
    server.script(tool_call("lookup_order", {"order_id": "A-17"}), Scripted(status=400))
    first.run_file("p.sexp", recorded=True)
    assert first.run_id is not None and calls == ["A-17"]
    server.script(tool_call("lookup_order", {"order_id": "A-17"}), Scripted(status=400))
    first.eval(PROGRAM)  # not part of the recorded run: the tool is called again
    second = session(project, server, store=".sexp/runs.db")
    second.tool(lookup_order)
    server.script("<output>It shipped.</output>")
    assert second.run_file("p.sexp", resume=first.run_id) == "It shipped."
    assert calls == ["A-17", "A-17"]  # once in the recorded run, once by the eval outside it
    assert second.run_id == first.run_id


def test_bad_registrations_are_settings_errors(project: Path, server: LLMServer) -> None:
    s = sexp_tasks.Session()

    def read_file(path: str) -> str:
        return path

    cases: list[tuple[Any, str | None, str]] = [
        (read_file, None, "'read_file' is the name of a built-in tool"),
        ("not a function", None, "expected a callable, got a str"),
        (lambda x: x, None, "'<lambda>' is not a tool name"),
        (read_file, "has space", "'has space' is not a tool name"),
        (read_file, "x" * 65, "is not a tool name"),
        (lambda x, /: x, "positional", "parameter 'x' is positional-only"),
    ]
    for fn, name, message in cases:
        with pytest.raises(sexp_tasks.SexpError, match=re.escape(message)) as raised:
            s.tool(fn, name=name)
        assert raised.value.type == "CONFIGURATION_ERROR"


def test_an_unregistered_name_is_an_error_before_any_request(project: Path, server: LLMServer) -> None:
    s = session(project, server)
    with pytest.raises(sexp_tasks.SexpError, match="task 'support': no tool named 'lookup_order'") as raised:
        s.call("support", question="?")
    assert raised.value.type == "NAME_ERROR"
    assert server.requests == []


def test_the_decorator_takes_a_name_and_a_callable_object_needs_one(project: Path, server: LLMServer) -> None:
    s = session(project, server)

    @s.tool(name="lookup_order")
    def find(order_id: str) -> str:
        """Find an order."""
        return f"found {order_id}"

    class Finder:
        def __call__(self, order_id: str) -> str:
            return order_id

    with pytest.raises(sexp_tasks.SexpError, match="has no __name__; give the tool a name"):
        s.tool(Finder())
    server.script(tool_call("lookup_order", {"order_id": "C"}), "<output>ok</output>")
    s.call("support", question="?")
    assert server.requests[0].body["tools"][0]["function"]["description"] == "Find an order."
    assert tool_messages(server, 1) == ["found C"]


def test_resuming_an_unknown_run_is_an_error(project: Path, server: LLMServer) -> None:
    (project / "p.sexp").write_text(PROGRAM)
    s = session(project, server, store=".sexp/runs.db")
    s.tool(lambda order_id: "shipped", name="lookup_order")  # the tool the template names
    with pytest.raises(sexp_tasks.SexpError, match="no run store at '.sexp/runs.db'"):
        s.run_file("p.sexp", resume="000000000000")
    assert s.run_id is None
    server.script("<output>ok</output>")
    s.run_file("p.sexp", recorded=True)
    assert s.run_id is not None
    with pytest.raises(sexp_tasks.SexpError, match="unknown run '000000000000'") as raised:
        s.run_file("p.sexp", resume="000000000000")
    assert raised.value.type == "RUN_ERROR"


def test_tuple_and_set_parameters_get_a_tuple_and_a_set(project: Path, server: LLMServer) -> None:
    s = session(project, server)
    got: list[Any] = []

    @s.tool
    def lookup_order(order_id: str, tags: set[str], pair: tuple[int, int] | None = None) -> str:
        """Look an order up."""
        got.append((tags, pair))
        return "ok"

    arguments = {"order_id": "A", "tags": ["x", "y", "x"], "pair": [1, 2]}
    server.script(tool_call("lookup_order", arguments), "<output>ok</output>")
    assert s.call("support", question="where is A?").status == "COMPLETE"
    assert got == [({"x", "y"}, (1, 2))]
