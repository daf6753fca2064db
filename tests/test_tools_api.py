"""The Python API's borders (issue 19): the recursion limit stays sexp's own, a tool's nested
Session.call is limited, script results keep their fields, and a user's mistake through the API
is a SexpError (or an answer the model reads), never a raw Python exception.

In-process sessions against the local server (tests/llm_server.py), which records request bodies.
"""

from __future__ import annotations

import enum
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import pytest
from conftest import ROOT, Cli
from llm_server import LLMServer, Scripted

import sexp_tasks
from sexp_tasks.handler.python_tools import python_tool

SUPPORT = """<task name="support" type="atomic">
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
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-toolsapi")
    return tmp_path


def session(
    project: Path, server: LLMServer, tool: str = "lookup_order", **settings: Any
) -> sexp_tasks.Session:
    (project / "tasks").mkdir(exist_ok=True)
    (project / "tasks" / "support.xml").write_text(SUPPORT % tool)
    return sexp_tasks.Session(
        model="openai/test-model", api_base=server.base_url, workspace=str(project), quiet=True, **settings
    )


def tool_call(name: str, arguments: dict[str, Any] | str) -> Scripted:
    return Scripted(content=None, tool_calls=[{"name": name, "arguments": arguments}])


def tool_messages(server: LLMServer, index: int) -> list[str]:
    return [m["content"] for m in server.requests[index].body["messages"] if m["role"] == "tool"]


def run_python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )


# The recursion limit -------------------------------------------------------------------------

HOST = """
import json, sys
import sexp_tasks
before = sys.getrecursionlimit()
session = sexp_tasks.Session()
deep = session.eval("(define (down n) (if (= n 0) 0 (+ 1 (down (- n 1))))) (down 5000)")
after = sys.getrecursionlimit()
nested = []
for _ in range(200_000):
    nested = [nested]
try:
    json.dumps(nested)
    outcome = "dumped"
except RecursionError:
    outcome = "RecursionError"
print(before, after, deep, outcome)
"""


def test_the_recursion_limit_is_raised_only_while_sexp_runs(tmp_path: Path) -> None:
    child = run_python(HOST, tmp_path)
    assert child.returncode == 0, child.stderr  # not 139: the host's deep json.dumps did not crash
    before, after, deep, outcome = child.stdout.split()
    assert (after, deep, outcome) == (before, "5000", "RecursionError")


# Session.call from inside a tool -----------------------------------------------------------


def test_session_call_from_a_tool_nests_at_most_max_depth(project: Path, server: LLMServer) -> None:
    s = session(project, server, max_depth=2)
    depths: list[str] = []

    @s.tool
    def lookup_order(order_id: str) -> str:
        """Asks support again, which calls this tool again."""
        depths.append(order_id)
        return str(s.call("support", question=order_id + "+").content)

    server.script(*[tool_call("lookup_order", {"order_id": str(n)}) for n in range(3)])
    server.script(*["<output>ok</output>"] * 3)
    result = s.call("support", question="?")
    assert (result.status, result.content) == ("COMPLETE", "ok")
    assert depths == ["0", "1", "2"]  # three tasks called the tool; the third's Session.call was refused
    [refused] = tool_messages(server, 3)
    assert refused.startswith("error: RECURSION_ERROR: Session.call('support')")
    assert "nest 3 deep; at most 2 (max_depth)" in refused
    assert len(server.requests) == 6


def test_a_task_input_called_name_is_passed_to_call(project: Path, server: LLMServer) -> None:
    (project / "tasks").mkdir()
    (project / "tasks" / "greet.xml").write_text(
        '<task name="greet" type="atomic"><description>Greet</description>'
        "<instructions>Greet {{name}}</instructions>"
        '<inputs><input name="name" type="string">who</input></inputs></task>'
    )
    s = sexp_tasks.Session(model="openai/test-model", api_base=server.base_url, quiet=True)
    server.script("<output>hi Ada</output>")
    assert s.call("greet", name="Ada").content == "hi Ada"
    assert "Greet Ada" in server.requests[0].body["messages"][-1]["content"]


# Script results keep their fields ------------------------------------------------------------

SCRIPT = '(system:run_script (command "sh -c \\"echo out; echo err >&2; exit 3\\""))'


def test_a_script_result_keeps_stdout_stderr_and_exit_code_in_json(cli: Cli, workspace: Path) -> None:
    status, out, err = cli("eval", "--json", SCRIPT)
    assert status == 0, err
    value = json.loads(out)
    assert (value["stdout"], value["stderr"], value["exitCode"]) == ("out\n", "err\n", 3)
    (workspace / "p.sexp").write_text(SCRIPT + "\n")
    (workspace / "in.jsonl").write_text("{}\n")
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl", "--out", "out.jsonl")
    assert status == 0, err
    row = json.loads((workspace / "out.jsonl").read_text())
    assert (row["value"]["stdout"], row["value"]["stderr"], row["value"]["exitCode"]) == ("out\n", "err\n", 3)


def test_a_script_result_and_criteria_survive_a_round_trip_through_python(project: Path) -> None:
    s = sexp_tasks.Session(workspace=str(project), quiet=True)
    result = s.eval(SCRIPT)
    assert (result.stdout, result.stderr, result.exit_code, result.criteria) == ("out\n", "err\n", 3, None)
    s.define("again", result)
    assert s.eval(
        '(list (get-field again "stdout") (get-field again "stderr") (get-field again "exitCode"))'
    ) == [
        "out\n",
        "err\n",
        3,
    ]
    judged = sexp_tasks.TaskResult("COMPLETE", "yes", None, {}, None, criteria="is it polite?")
    s.define("judged", judged)
    assert s.eval('(get-field judged "criteria")') == "is it polite?"
    assert s.eval("judged") == judged


# SEXP_SCRIPT_ID in a script's environment (SPEC §9) ------------------------------------------


def script_environment(s: sexp_tasks.Session, extra: str = "") -> dict[str, str]:
    output = s.eval(f'(get-field (system:run_script (command "env") {extra}) "stdout")')
    return dict(line.split("=", 1) for line in output.splitlines() if "=" in line)


def test_a_script_sees_its_own_sexp_script_id_and_the_docs_say_so(project: Path) -> None:
    s = sexp_tasks.Session(workspace=str(project), quiet=True)
    first, second = script_environment(s), script_environment(s, '(env (dict "SEXP_SCRIPT_ID" "mine"))')
    for environment in (first, second):
        assert len(environment["SEXP_SCRIPT_ID"]) == 16 and int(environment["SEXP_SCRIPT_ID"], 16) >= 0
    assert first["SEXP_SCRIPT_ID"] != second["SEXP_SCRIPT_ID"]  # one per script, and sexp's own
    for page in ("language.md", "cookbook/scripts-as-evaluators.md"):
        text = " ".join((ROOT / "docs" / page).read_text().split())
        listed = text[text.index("scrubbed environment") :][:400]
        for name in ("PATH", "HOME", "LANG", "LC_*", "TMPDIR", "TZ", "USER", "VIRTUAL_ENV", "SEXP_SCRIPT_ID"):
            assert f"`{name}`" in listed, (page, name)


# The Python API's mistakes are SexpErrors, a tool's bad result an answer ----------------------


@pytest.mark.parametrize(
    ("result", "answer"),
    [
        ("circular", "error: lookup_order: the result has no JSON form (Circular reference detected)"),
        (
            "tuple keys",
            "error: lookup_order: the result has no JSON form (keys must be str, int, float, bool or None",
        ),
    ],
)
def test_a_result_with_no_json_form_is_an_error_the_model_reads(
    project: Path, server: LLMServer, result: str, answer: str
) -> None:
    s = session(project, server)

    @s.tool
    def lookup_order(order_id: str) -> Any:
        """Look an order up."""
        if result == "circular":
            loop: list[Any] = []
            loop.append(loop)
            return loop
        return {(1, 2): "pair"}

    server.script(tool_call("lookup_order", {"order_id": "A"}), "<output>Sorry.</output>")
    outcome = s.call("support", question="?")
    assert (outcome.status, outcome.content) == ("COMPLETE", "Sorry.")
    [message] = tool_messages(server, 1)
    assert message.startswith(answer)


def test_a_huge_result_is_cut_at_one_mebibyte() -> None:
    # the tool as the tool loop runs it (a real request this big would pass no context limit)
    tool = python_tool(lambda order_id: "a" + "é" * (1024 * 1024), "lookup_order", lambda name: False)
    head, _, note = tool.run({"order_id": "A"}).rpartition("\n")
    assert head == "a" + "é" * (512 * 1024 - 1)  # the é cut in two at byte 1,048,576 is left out too
    sent = len(head.encode())
    assert (
        note
        == f"[... {2 * 1024 * 1024 + 1 - sent} more bytes not sent: a tool's answer is at most 1048576 bytes]"
    )
    small = python_tool(lambda order_id: "é" * 10, "lookup_order", lambda name: False)
    assert small.run({"order_id": "A"}) == "é" * 10


class Color(enum.Enum):
    RED = "red"


def by_color(color: Literal[Color.RED]) -> str:
    return str(color)


def unknown_hint(order: "list[") -> str:  # type: ignore[name-defined]  # noqa: F722
    return str(order)


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (by_color, "parameter 'color': the Literal value <Color.RED: 'red'> has no JSON form"),
        (
            unknown_hint,
            "tool unknown_hint: a type hint cannot be read: Forward reference must be an expression",
        ),
    ],
)
def test_a_tool_whose_hints_have_no_schema_is_a_settings_error(fn: Any, message: str) -> None:
    with pytest.raises(sexp_tasks.SexpError, match=re.escape(message)) as raised:
        sexp_tasks.Session(quiet=True).tool(fn)
    assert raised.value.type == "CONFIGURATION_ERROR"


def test_a_value_that_contains_itself_is_a_type_error() -> None:
    s = sexp_tasks.Session(quiet=True)
    loop: list[Any] = [1]
    loop.append(loop)
    within: dict[str, Any] = {}
    within["self"] = within
    shared = [1]
    for value, kind in ((loop, "list"), (within, "dict")):
        with pytest.raises(sexp_tasks.SexpError, match=f"x: a {kind} that contains itself") as raised:
            s.define("x", value)
        assert raised.value.type == "TYPE_ERROR"
    s.define("twice", [shared, shared])  # the same list twice is no cycle
    assert s.eval("twice") == [[1], [1]]
    s.define("give_loop", lambda: loop)
    with pytest.raises(sexp_tasks.SexpError, match="give_loop: a list that contains itself"):
        s.eval("(give_loop)")
