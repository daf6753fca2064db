"""What the command line reads: `--set` JSON values, program files too large to read, NUL bytes
in messages, and library call sites in traces (issue 19: 8, 12, 24)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Cli, write

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


# Control characters in messages ----------------------------------------------------------------


def test_a_nul_byte_in_an_error_message_is_shown_escaped(cli: Cli) -> None:
    status, _, err = cli("eval", '(error "a\\u0000b\\u001b[31mc")')
    assert status == EXIT_ERROR
    assert "\0" not in err and "\x1b" not in err
    assert err.startswith("<eval>:1:1: error: a\\x00b\\x1b[31mc\n")


def test_a_nul_byte_in_a_source_line_is_escaped_and_the_caret_still_points(cli: Cli, workspace: Path) -> None:
    write(workspace / "p.sexp", '(list "\0\0" (car 1 2))\n')
    status, _, err = cli("run", "p.sexp")
    assert status == EXIT_ERROR and "\0" not in err
    lines = err.splitlines()
    assert lines[1] == '  (list "\\x00\\x00" (car 1 2))'
    assert lines[2].index("^") == lines[1].index("(car")


def test_a_nul_byte_in_a_file_name_warning_or_usage_error_is_escaped(cli: Cli) -> None:
    status, _, err = cli("run", "no\x01such.sexp")
    assert status == EXIT_USAGE and "\x01" not in err and "no\\x01such.sexp" in err


# Program files too large to read ------------------------------------------------------------

PROGRAM_LIMIT = 8 * 1024 * 1024


@pytest.mark.parametrize("size", [PROGRAM_LIMIT + 1, 2 * 1024**3])
def test_run_refuses_a_program_larger_than_the_limit_before_reading_it(
    cli: Cli, workspace: Path, size: int
) -> None:
    program = write(workspace / "big.sexp", "(+ 1 2)\n")
    with open(program, "r+b") as file:
        file.truncate(size)  # sparse: no disk is used, but reading it all would take gigabytes
    status, out, err = cli("run", "big.sexp", timeout=60)
    assert (status, out) == (EXIT_USAGE, "")
    assert err == (
        f"error: cannot read 'big.sexp': it is {size} bytes, more than a program file may be "
        f"({PROGRAM_LIMIT} bytes)\n"
    )


def test_check_refuses_a_program_larger_than_the_limit(cli: Cli, workspace: Path) -> None:
    program = write(workspace / "big.sexp", "(+ 1 2)\n")
    with open(program, "r+b") as file:
        file.truncate(PROGRAM_LIMIT + 1)
    status, _, err = cli("check", "big.sexp")
    assert status == EXIT_USAGE
    assert f"error: cannot read 'big.sexp': it is {PROGRAM_LIMIT + 1} bytes" in err


def test_run_takes_a_program_at_the_limit(cli: Cli, workspace: Path) -> None:
    text = "(+ 1 2)\n"
    write(workspace / "p.sexp", text + " " * (PROGRAM_LIMIT - len(text)))
    assert cli("run", "p.sexp") == (EXIT_OK, "3\n", "")


def test_load_refuses_a_file_larger_than_the_limit(cli: Cli, workspace: Path) -> None:
    program = write(workspace / "big.sexp", "(+ 1 2)\n")
    with open(program, "r+b") as file:
        file.truncate(PROGRAM_LIMIT + 1)
    status, _, err = cli("eval", '(load "big.sexp")')
    assert status == EXIT_ERROR
    assert f"error: load: 'big.sexp' is larger than {PROGRAM_LIMIT} bytes" in err


# Library call sites in traces ------------------------------------------------------------------


def test_a_trace_names_a_library_call_site_stdlib_relative(cli: Cli, workspace: Path) -> None:
    program = workspace / "deep" / "in" / "here" / "p.sexp"
    write(
        program,
        '(defatom draft (params (input str) (feedback any)) (instructions "Write {{input}}"))\n'
        '(get (refine :director draft :evaluator (lambda (a) 1) :input "x") "score")\n',
    )
    status, out, err = cli("run", str(program), "--model", "mock/m")
    assert (status, out) == (EXIT_OK, "1\n"), err
    run_id = json.loads(cli("runs", "--json")[1])[0]["id"]
    status, trace, _ = cli("trace", run_id)
    step = next(line for line in trace.splitlines() if "task draft" in line)
    assert " stdlib/loops.sexp:" in step and "../" not in step
