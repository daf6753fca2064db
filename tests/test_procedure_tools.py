"""Procedures of the program as model tools (issue 19, point 9): the schema from the lambda list
and the doc comment or docstring reaches the provider, the tool loop applies the procedure to the
model's arguments, an error inside it is an answer, each call is journaled; a tool name that names
nothing is an error before any request, which `sexp check` reports too.

In-process sessions and `sexp` processes against the local server (tests/llm_server.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli
from llm_server import LLMServer, Scripted

import sexp_tasks

SUPPORT = """<task name="support" type="atomic">
  <description>Answer a support question</description>
  <instructions>Answer: {{question}}</instructions>
  <inputs><input name="question" type="string">the question</input></inputs>
  <tools><tool>%s</tool></tools>
</task>
"""

LOOKUP = """(define (lookup_order order_id &optional region &key verbose (limit 3))
  ;; Look an order up by its id.
  ;;
  ;; Args:
  ;;   order_id: The order's id, like "A-17".
  ;;   verbose: Whether to say more.
  (if (= order_id "Z")
      (error "no order Z")
      (dict "id" order_id "region" region "verbose" verbose "limit" limit)))
"""

LOOKUP_SCHEMA = {
    "type": "function",
    "function": {
        "name": "lookup_order",
        "description": "Look an order up by its id.",
        "parameters": {
            "type": "object",
            "properties": {
                "order_id": {"description": 'The order\'s id, like "A-17".'},
                "region": {},
                "verbose": {"description": "Whether to say more."},
                "limit": {},
            },
            "required": ["order_id"],
        },
    },
}


@pytest.fixture
def project(workspace: Path) -> Path:
    (workspace / "tasks").mkdir()
    (workspace / "tasks" / "support.xml").write_text(SUPPORT % "lookup_order")
    return workspace


def session(server: LLMServer, **settings: Any) -> sexp_tasks.Session:
    return sexp_tasks.Session(model="openai/test-model", api_base=server.base_url, quiet=True, **settings)


def tool_call(name: str, arguments: dict[str, Any]) -> Scripted:
    return Scripted(content=None, tool_calls=[{"name": name, "arguments": arguments}])


def tool_messages(server: LLMServer, index: int) -> list[str]:
    return [m["content"] for m in server.requests[index].body["messages"] if m["role"] == "tool"]


@pytest.fixture(autouse=True)
def fake_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-proctools")


def test_a_procedure_is_a_tool_with_its_schema_and_its_answers(project: Path, server: LLMServer) -> None:
    s = session(server)
    s.eval(LOOKUP)
    server.script(
        Scripted(
            content=None,
            tool_calls=[
                {"name": "lookup_order", "arguments": {"order_id": "A-17", "verbose": True}},
                {"name": "lookup_order", "arguments": {"order_id": "Z"}},
                {"name": "lookup_order", "arguments": {"order_id": 5, "extra": 1}},
            ],
        ),
        "<output>It shipped.</output>",
    )
    result = s.call("support", question="where is A-17?")
    assert (result.status, result.content) == ("COMPLETE", "It shipped.")
    assert server.requests[0].body["tools"] == [LOOKUP_SCHEMA]
    found, failed, invalid = tool_messages(server, 1)
    assert json.loads(found) == {"id": "A-17", "region": None, "verbose": True, "limit": 3}
    assert failed == "error: USER_ERROR: no order Z"
    assert invalid.startswith("error: lookup_order: invalid arguments: ")
    assert "('extra' was unexpected)" in invalid


def test_defatom_lists_a_procedure_with_a_docstring(workspace: Path, server: LLMServer) -> None:
    s = session(server)
    server.script(tool_call("shout", {"text": "hi"}), "<output>done</output>")
    value = s.eval(
        '(define (shout text) "Say text louder." (string-upcase text))\n'
        '(defatom ask (instructions "Ask") (tools shout))\n'
        "(task-content (ask))"
    )
    assert value == "done"
    function = server.requests[0].body["tools"][0]["function"]
    assert (function["description"], function["parameters"]["required"]) == ("Say text louder.", ["text"])
    assert tool_messages(server, 1) == ["HI"]


def test_an_unknown_tool_is_an_error_before_any_request(workspace: Path, server: LLMServer) -> None:
    s = session(server)
    s.eval("(define (lookup_order order_id) order_id)")
    with pytest.raises(sexp_tasks.SexpError) as raised:
        s.eval('(defatom ask (instructions "Ask") (tools lookup_ordr)) (ask)')
    assert raised.value.type == "NAME_ERROR"
    assert raised.value.message == (
        "task 'ask': no tool named 'lookup_ordr' (a built-in tool, a Session.tool function or a"
        " procedure of the program); did you mean 'lookup_order'?"
    )
    assert (raised.value.line, raised.value.column) == (1, 56)  # the call
    assert server.requests == []


def test_a_template_naming_an_unknown_tool_fails_the_run_and_check_reports_it(
    project: Path, server: LLMServer, cli: Cli
) -> None:
    (project / "p.sexp").write_text(
        "(define (lookup_order order_id) order_id)\n"
        '(defatom ask (instructions "Ask")\n  (tools read_file lookup_ordr))\n'
        '(support :question "?")\n'
    )
    (project / "tasks" / "support.xml").write_text(SUPPORT % "find_order")
    status, _, err = cli("check", "p.sexp")
    assert status == 1
    assert "p.sexp:3:3: error: task 'ask': no tool named 'lookup_ordr'" in err
    assert "did you mean 'lookup_order'?" in err
    assert "p.sexp:4:1: error: task 'support': no tool named 'find_order'" in err
    env = {"SEXP_API_BASE": server.base_url, "OPENAI_API_KEY": "sk-test-proctools"}
    status, _, err = cli("run", "p.sexp", "--model", "openai/test-model", env=env)
    assert status == 1
    assert "p.sexp:4:1: error: task 'support': no tool named 'find_order'" in err
    assert server.requests == []
    (project / "tasks" / "support.xml").write_text(SUPPORT % "lookup_order")
    (project / "p.sexp").write_text(
        "(define (lookup_order order_id) order_id)\n" + '(support :question "?")\n'
    )
    assert cli("check", "p.sexp")[0] == 0


def test_a_tool_entry_that_can_name_no_tool_is_a_template_error(project: Path, cli: Cli) -> None:
    (project / "tasks" / "support.xml").write_text(SUPPORT % "lookup.order")
    status, _, err = cli("tasks", "validate", "tasks")
    assert status == 1
    assert "task 'support': <tool>lookup.order</tool> can name no tool" in err


CALLS = """
(define (lookup_order order_id)
  ;; Look an order up.
  (note order_id)
  "shipped")
(task-content (support :question "where is A-17?"))
"""


def test_a_procedure_tool_call_is_journaled_and_not_repeated_on_resume(
    project: Path, server: LLMServer
) -> None:
    (project / "p.sexp").write_text(CALLS)
    calls: list[str] = []
    first = session(server, store=".sexp/runs.db")
    first.define("note", calls.append)
    server.script(tool_call("lookup_order", {"order_id": "A-17"}), Scripted(status=400))
    first.run_file("p.sexp", recorded=True)
    assert calls == ["A-17"]
    resumed = session(server, store=".sexp/runs.db")
    resumed.define("note", calls.append)
    server.script("<output>It shipped.</output>")
    assert resumed.run_file("p.sexp", resume=first.run_id) == "It shipped."
    assert calls == ["A-17"]  # answered from the journal: not called again
    assert tool_messages(server, -1) == ["shipped"]
