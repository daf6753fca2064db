"""What the command line reads: `--set` JSON values, program files too large to read, NUL bytes
in messages, and library call sites in traces (issue 19: 8, 12, 24)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Cli

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2

OBJECT_TEMPLATE = """<task name="describe" type="atomic">
  <description>Describe a record</description>
  <instructions>Describe {{record.name}} with tags {{tags}}</instructions>
  <inputs>
    <input name="record" type="object">the record</input>
    <input name="tags" type="array">its tags</input>
  </inputs>
</task>
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# --set reads JSON objects and arrays ---------------------------------------------------------


@pytest.mark.parametrize(
    "assignment, printed",
    [
        ('x={"a": [1, null, true]}', '{"a" (1 nil true)}'),
        ('x=[1, 2.5, "b"]', '(1 2.5 "b")'),
        ("x=[]", "()"),
        ("x={}", "{}"),
        ('x= {"k": {"n": 1}}', '{"k" {"n" 1}}'),
    ],
)
def test_set_reads_a_json_object_or_array_as_a_dict_or_list(cli: Cli, assignment: str, printed: str) -> None:
    assert cli("eval", "--set", assignment, "x") == (EXIT_OK, printed + "\n", "")


@pytest.mark.parametrize(
    "assignment, printed",
    [
        ("x={not json}", '"{not json}"'),
        ("x=[1, 2", '"[1, 2"'),
        ("x=[NaN]", '"[NaN]"'),  # not JSON: a string, as before
    ],
)
def test_set_leaves_what_is_not_json_a_string(cli: Cli, assignment: str, printed: str) -> None:
    assert cli("eval", "--set", assignment, "x") == (EXIT_OK, printed + "\n", "")


def test_set_str_keeps_json_text_a_string(cli: Cli) -> None:
    assert cli("eval", "--set-str", 'x={"a": 1}', "x") == (EXIT_OK, '"{\\"a\\": 1}"\n', "")


def test_tasks_render_takes_an_object_input_from_set(cli: Cli, workspace: Path) -> None:
    write(workspace / "tasks" / "describe.xml", OBJECT_TEMPLATE)
    status, out, err = cli(
        "tasks", "render", "describe", "--model", "mock/m", "--set", 'record={"name": "Ada"}',
        "--set", 'tags=["x", "y"]', "--json",
    )  # fmt: skip
    assert (status, err) == (EXIT_OK, "")
    user = [m["content"] for m in json.loads(out)["messages"] if m["role"] == "user"]
    assert user and user[0].startswith('Describe Ada with tags ["x", "y"]')


def test_run_passes_an_object_input_from_set_to_a_task(cli: Cli, workspace: Path) -> None:
    write(workspace / "tasks" / "describe.xml", OBJECT_TEMPLATE)
    write(workspace / "p.sexp", "(task-content (describe :record record :tags tags))\n")
    write(workspace / "replies.json", json.dumps(["<output>described</output>"]))
    status, out, err = cli(
        "run", "p.sexp", "--model", "mock/m", "--mock-responses", "replies.json",
        "--set", 'record={"name": "Ada"}', "--set", "tags=[]",
    )  # fmt: skip
    assert (status, out) == (EXIT_OK, '"described"\n'), err
