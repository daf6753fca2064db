"""The `sexp` command line (SPEC §7, §9), run as a real process: output, exit statuses, errors, check."""

from __future__ import annotations

import ast
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_python, scaled, spawn_sexp, wait_for

from sexp_tasks import __version__
from sexp_tasks.cli.startup import LAZY_IMPORTS
from sexp_tasks.config import load_dotenv

ROOT = Path(__file__).resolve().parent.parent
Cli = Callable[..., tuple[int, str, str]]  # the `cli` fixture of conftest.py
EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# eval and run print values ------------------------------------------------------------------


@pytest.mark.parametrize(
    "expression, printed",
    [
        ("(+ 1 2)", "3"),
        ("nil", "nil"),
        ("'()", "()"),
        ('"text"', '"text"'),
        ('"a\\nb"', '"a\\nb"'),
        ("'sym", "sym"),
        (":kw", ":kw"),
        ("1.5", "1.5"),
        ("(= 1 1)", "true"),
        ('(list 1 "a" \'b nil)', '(1 "a" b nil)'),
        ('(dict "a" (list 1 2))', '{"a" (1 2)}'),
        ("car", "#<procedure car>"),
        ("(define (f) 1)", "f"),
    ],
)
def test_eval_prints_the_value_with_the_printer(cli: Cli, expression: str, printed: str) -> None:
    assert cli("eval", expression) == (EXIT_OK, printed + "\n", "")


def test_eval_prints_output_then_the_value_even_nil(cli: Cli) -> None:
    assert cli("eval", '(print "hi" 1)') == (EXIT_OK, "hi 1\nnil\n", "")


def test_run_prints_the_final_value(cli: Cli, workspace: Path) -> None:
    write(workspace / "prog.sexp", "(define (square x) (* x x))\n(square 7)\n")
    assert cli("run", "prog.sexp") == (EXIT_OK, "49\n", "")


def test_run_prints_nothing_for_a_final_nil(cli: Cli, workspace: Path) -> None:
    write(workspace / "prog.sexp", '(print "only this")\n')
    assert cli("run", "prog.sexp") == (EXIT_OK, "only this\n", "")
    write(workspace / "nil.sexp", "(define x 1)\nnil\n")
    assert cli("run", "nil.sexp") == (EXIT_OK, "", "")


def test_run_accepts_a_path_in_another_directory(cli: Cli, workspace: Path) -> None:
    write(workspace / "deep" / "dir" / "prog.sexp", "(+ 40 2)")
    assert cli("run", str(workspace / "deep" / "dir" / "prog.sexp")) == (EXIT_OK, "42\n", "")


def test_an_empty_program_is_nil(cli: Cli, workspace: Path) -> None:
    write(workspace / "empty.sexp", "; nothing here\n")
    assert cli("run", "empty.sexp") == (EXIT_OK, "", "")
    assert cli("eval", "") == (EXIT_OK, "nil\n", "")


# --json and -q ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expression, data",
    [
        ("nil", None),
        ("'()", []),
        ("(list)", []),
        ("'name", "name"),
        (":name", ":name"),
        ('(list 1 2.5 "s" true false nil)', [1, 2.5, "s", True, False, None]),
        ('(dict "a" (list \'x :y) :b (dict))', {"a": ["x", ":y"], "b": {}}),
        ('"unicode ☃"', "unicode ☃"),
    ],
)
def test_json_renders_values_as_json(cli: Cli, expression: str, data: object) -> None:
    code, out, err = cli("eval", "--json", expression)
    assert (code, err) == (EXIT_OK, "")
    assert out.endswith("\n") and out.count("\n") == 1
    assert json.loads(out) == data


def test_json_prints_null_for_nil_on_run(cli: Cli, workspace: Path) -> None:
    write(workspace / "prog.sexp", '(print "side")\n')
    assert cli("run", "prog.sexp", "--json") == (EXIT_OK, "null\n", "side\n")


def test_json_is_one_document_on_stdout_and_print_goes_to_stderr(cli: Cli, workspace: Path) -> None:
    write(workspace / "prog.sexp", '(print "one" 1)\n(pmap (lambda (x) (print "two") x) (list 1 2))\n')
    code, out, err = cli("run", "prog.sexp", "--json")
    assert (code, json.loads(out), err) == (EXIT_OK, [1, 2], "one 1\ntwo\ntwo\n")
    assert cli("eval", "--json", '(progn (print "x") 5)') == (EXIT_OK, "5\n", "x\n")
    assert cli("run", "prog.sexp")[1] == "one 1\ntwo\ntwo\n(1 2)\n"  # without --json: stdout


def test_quiet_suppresses_the_final_value_but_not_the_json_value(cli: Cli, workspace: Path) -> None:
    write(workspace / "prog.sexp", '(print "printed")\n(+ 1 2)\n')
    assert cli("run", "prog.sexp", "-q") == (EXIT_OK, "printed\n", "")
    assert cli("run", "prog.sexp", "--quiet", "--json") == (EXIT_OK, "3\n", "printed\n")
    assert cli("eval", "-q", "(+ 1 2)") == (EXIT_OK, "", "")
    assert cli("eval", "-q", "--json", "nil") == (EXIT_OK, "null\n", "")


def test_quiet_never_hides_errors(cli: Cli) -> None:
    code, out, err = cli("eval", "-q", "(car 5)")
    assert (code, out) == (EXIT_ERROR, "")
    assert "<eval>:1:1: error:" in err


def test_quiet_hides_warnings(cli: Cli, workspace: Path) -> None:
    write(workspace / "sexp.toml", "no_such_setting = 1\n")
    code, out, err = cli("eval", "1")
    assert (code, out) == (EXIT_OK, "1\n")
    assert err.startswith("warning: ") and "no_such_setting" in err
    assert cli("eval", "-q", "--json", "1") == (EXIT_OK, "1\n", "")


# --set and --set-str ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "assignment, printed",
    [
        ("x=42", "42"),
        ("x=-1.5", "-1.5"),
        ('x="hi there"', '"hi there"'),
        ("x=world", '"world"'),
        ('x=\'(1 "a" b)', '(1 "a" b)'),
        ("x=true", "true"),
        ("x=nil", "nil"),
        ("x=3.10", "3.1"),
        ("x=(+ 1 2)", '"(+ 1 2)"'),
        ("x=a b", '"a b"'),
        ("x=", '""'),
        ("x=a=b", '"a=b"'),
    ],
)
def test_set_reads_a_literal_when_it_is_one_else_a_string(cli: Cli, assignment: str, printed: str) -> None:
    assert cli("eval", "--set", assignment, "x") == (EXIT_OK, printed + "\n", "")


def test_set_str_always_binds_a_string(cli: Cli) -> None:
    assert cli("eval", "--set-str", "ver=3.10", "ver") == (EXIT_OK, '"3.10"\n', "")
    assert cli("eval", "--set-str", "ver=nil", "ver") == (EXIT_OK, '"nil"\n', "")


def test_set_binds_globals_before_the_program_runs(cli: Cli, workspace: Path) -> None:
    write(workspace / "greet.sexp", '(format "{} has {} items" who (+ n 1))\n')
    code, out, err = cli("run", "greet.sexp", "--set", "who=world", "--set", "n=2")
    assert (code, out, err) == (EXIT_OK, '"world has 3 items"\n', "")


@pytest.mark.parametrize("flag, value", [("--set", "novalue"), ("--set", "=1"), ("--set-str", "x")])
def test_set_without_name_and_value_is_a_usage_error(cli: Cli, flag: str, value: str) -> None:
    code, out, err = cli("eval", flag, value, "1")
    assert (code, out) == (EXIT_USAGE, "")
    assert f"error: {flag} expects NAME=VALUE" in err


# Exit statuses and error output ----------------------------------------------------------------

RUNTIME_ERROR_PROGRAM = "(define x 1)\n(define (f y)\n  (car y))\n(f x)\n"


def test_a_runtime_error_exits_1_with_position_source_line_and_caret(cli: Cli, workspace: Path) -> None:
    write(workspace / "bad.sexp", RUNTIME_ERROR_PROGRAM)
    code, out, err = cli("run", "bad.sexp")
    assert (code, out) == (EXIT_ERROR, "")
    lines = err.splitlines()
    assert re.fullmatch(r"bad\.sexp:3:3: error: \w+: expected a list, got 1 \(integer\)", lines[0])
    assert lines[1] == "    (car y))"
    assert lines[2] == "    ^"
    assert "Traceback" not in err


def test_a_syntax_error_exits_2_with_position(cli: Cli, workspace: Path) -> None:
    write(workspace / "syntax.sexp", "(define x 1)\n(print (+ x\n")
    code, out, err = cli("run", "syntax.sexp")
    assert (code, out) == (EXIT_USAGE, "")
    lines = err.splitlines()
    assert lines[0] == "syntax.sexp:2:8: error: unclosed '(' opened at 2:8; expected ')' before end of input"
    assert lines[1:3] == ["  (print (+ x", "         ^"]
    assert "Traceback" not in err


def test_a_syntax_error_runs_nothing(cli: Cli, workspace: Path) -> None:
    write(workspace / "syntax.sexp", '(print "must not run")\n(+ 1\n')
    code, out, _ = cli("run", "syntax.sexp")
    assert (code, out) == (EXIT_USAGE, "")


def test_a_malformed_special_form_exits_1_before_anything_runs(cli: Cli, workspace: Path) -> None:
    write(workspace / "form.sexp", '(print "must not run")\n(if)\n')
    code, out, err = cli("run", "form.sexp")
    assert (code, out) == (EXIT_ERROR, "")
    assert err.startswith("form.sexp:2:1: error: if: expected (if test then [else])")


def test_error_raised_by_the_program_exits_1(cli: Cli) -> None:
    code, out, err = cli("eval", '(progn (print "before") (error "custom failure"))')
    assert (code, out) == (EXIT_ERROR, "before\n")
    assert err.splitlines()[0] == "<eval>:1:25: error: custom failure"


def test_an_uncaught_error_shows_its_data_after_the_message(cli: Cli) -> None:
    code, _, err = cli("eval", '(error "writer failed" (dict "path" "x.txt" "code" 3))')
    assert code == EXIT_ERROR
    assert err.splitlines()[0] == '<eval>:1:1: error: writer failed {"path" "x.txt" "code" 3}'
    code, _, err = cli("eval", '(error "no data")')
    assert err.splitlines()[0] == "<eval>:1:1: error: no data"


def test_an_uncaught_errors_data_is_clipped_to_one_line(cli: Cli) -> None:
    code, _, err = cli("eval", '(error "big" (list "line\\none" (range 500)))')
    assert code == EXIT_ERROR
    first = err.splitlines()[0]
    assert first.startswith('<eval>:1:1: error: big ("line\\none" (0 1 2 3 ')
    assert first.endswith("…") and len(first) < 300
    assert err.splitlines()[1] == '  (error "big" (list "line\\none" (range 500)))'


def test_the_renderer_clips_an_errors_data_without_the_runs_stage() -> None:
    """diagnostics, which every command and the REPL use, depends on no stage above the core."""
    out = run_python(
        "import sys\n"
        "from sexp_tasks.diagnostics import format_error\n"
        "from sexp_tasks.errors import UserError\n"
        "print(format_error(UserError('big', details=list(range(500)))))\n"
        "print(sorted(m for m in sys.modules if m.startswith(('sexp_tasks.runs', 'sexp_tasks.handler'))))\n"
    )
    first, loaded = out.splitlines()
    assert first.startswith("error: big (0 1 2 3 ") and first.endswith("…") and len(first) < 300
    assert loaded == "[]"


def test_an_error_inside_a_library_procedure_points_at_the_call_and_notes_the_library(
    cli: Cli, workspace: Path
) -> None:
    write(workspace / "prog.sexp", '(define answer "not json")\n(print (task-json answer))\n')
    code, _, err = cli("run", "prog.sexp")
    assert code == EXIT_ERROR
    lines = err.splitlines()
    assert lines[0].startswith("prog.sexp:2:8: error: json-parse: invalid JSON")
    assert lines[1:3] == ["  (print (task-json answer))", "         ^"]
    assert re.fullmatch(r"note: raised in task-json \(stdlib/tasks\.sexp:\d+:\d+\)", lines[3])


def test_an_error_in_a_loaded_file_names_that_file(cli: Cli, workspace: Path) -> None:
    write(workspace / "lib" / "helper.sexp", "\n(nth '(1) 5)\n")
    write(workspace / "main.sexp", '(load "lib/helper.sexp")\n')
    code, _, err = cli("run", "main.sexp")
    assert code == EXIT_ERROR
    assert re.match(r".*helper\.sexp:2:1: error: nth: index 5 out of range", err.splitlines()[0])


def test_a_byte_order_mark_before_a_program_or_a_loaded_file_is_ignored(cli: Cli, workspace: Path) -> None:
    write(workspace / "lib.sexp", "\ufeff(define (helper) 'from-lib)\n")
    write(workspace / "main.sexp", '\ufeff(load "lib.sexp")\n(helper)\n')
    assert cli("run", "main.sexp") == (EXIT_OK, "from-lib\n", "")
    assert cli("eval", "\ufeff(+ 1 2)") == (EXIT_OK, "3\n", "")
    assert cli("check", "main.sexp")[0] == EXIT_OK


def test_a_lone_surrogate_escape_is_a_syntax_error(cli: Cli) -> None:
    code, out, err = cli("eval", '(length "ab\\ud83d")')
    assert (code, out) == (EXIT_USAGE, "")
    assert err.splitlines()[0].startswith("<eval>:1:12: error: lone surrogate '\\ud83d'")
    assert cli("eval", '(length "\\ud83d\\ude00")') == (EXIT_OK, "1\n", "")


def test_log_message_goes_to_stderr(cli: Cli) -> None:
    assert cli("eval", '(log-message "step" 1)') == (EXIT_OK, '"step 1"\n', "log: step 1\n")


def test_load_in_a_program_in_the_working_directory(cli: Cli, workspace: Path) -> None:
    write(workspace / "lib.sexp", "(define (helper) 'from-lib)\n")
    write(workspace / "main.sexp", '(load "lib.sexp")\n(helper)\n')
    assert cli("run", "main.sexp") == (EXIT_OK, "from-lib\n", "")


def test_load_in_a_program_is_relative_to_the_program_file(cli: Cli, workspace: Path) -> None:
    write(workspace / "proj" / "main.sexp", '(load "lib.sexp")\n')
    write(workspace / "proj" / "lib.sexp", "'from-proj\n")
    write(workspace / "lib.sexp", "'from-cwd\n")
    assert cli("run", "proj/main.sexp") == (EXIT_OK, "from-proj\n", "")


def test_read_file_refuses_text_that_is_not_utf8(cli: Cli, workspace: Path) -> None:
    (workspace / "latin1.txt").write_bytes(b"caf\xe9")
    code, out, err = cli("eval", '(read-file "latin1.txt")')
    assert (code, out) == (EXIT_ERROR, "")
    assert "read-file: 'latin1.txt' is not UTF-8 text" in err


def test_debug_shows_a_traceback(cli: Cli, workspace: Path) -> None:
    write(workspace / "bad.sexp", RUNTIME_ERROR_PROGRAM)
    for args in (["run", "bad.sexp", "--debug"], ["--debug", "run", "bad.sexp"]):
        code, _, err = cli(*args)
        assert code == EXIT_ERROR
        assert "Traceback" in err
        assert "bad.sexp:3:3: error:" in err


# A bug in sexp itself: `_run` replaced by one that raises, in a real `sexp` process.
def test_an_internal_error_says_so_and_points_at_debug(
    sexp_in_process: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sexp_tasks.cli import program_commands

    def boom(*args: object, **kwargs: object) -> int:
        raise RuntimeError("boom")

    monkeypatch.setattr(program_commands, "_run", boom)  # a bug in sexp itself
    assert sexp_in_process("eval", "1") == (
        EXIT_ERROR,
        "",
        "internal error: RuntimeError: boom (run with --debug for details)\n",
    )
    status, _, err = sexp_in_process("--debug", "eval", "1")
    assert status == EXIT_ERROR
    assert err.startswith("Traceback (most recent call last):\n")
    assert err.endswith("RuntimeError: boom\ninternal error: RuntimeError: boom\n")


def test_every_sexp_error_is_defined_in_the_errors_module() -> None:
    """One module holds the hierarchy: no SexpError subclass is defined anywhere else."""
    hierarchy = {"SexpError"}
    for node in ast.walk(ast.parse((ROOT / "sexp_tasks" / "errors.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef) and {_base_name(b) for b in node.bases} & hierarchy:
            hierarchy.add(node.name)
    elsewhere = [
        f"{path.relative_to(ROOT)}: {node.name}"
        for path in sorted((ROOT / "sexp_tasks").rglob("*.py"))
        if path != ROOT / "sexp_tasks" / "errors.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef) and {_base_name(b) for b in node.bases} & hierarchy
    ]
    assert elsewhere == []


def _base_name(base: ast.expr) -> str:
    return base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")


# Strings that are a tool's answer to a model, not a line for people: (module, function).
TOOL_ANSWERS = {
    ("sexp_tasks/handler/tools.py", "run"),
    ("sexp_tasks/handler/tools.py", "_list_files"),
    ("sexp_tasks/handler/tools.py", "_run_command"),
    ("sexp_tasks/handler/tools.py", "_ask_user"),
    ("sexp_tasks/handler/handler.py", "_spawn_subtask"),
    ("sexp_tasks/handler/python_tools.py", "run"),  # a Python tool's answer to the model
    ("sexp_tasks/handler/mcp_tools.py", "run"),  # an MCP tool's answer (SPEC §11.4)
    ("sexp_tasks/tasks/mcp_services.py", "call_tool"),
}


def test_no_module_writes_an_error_line_by_hand() -> None:
    """Every `error:`, `warning:`, `log:` and `internal error` line comes from sexp_tasks.diagnostics."""
    by_hand = []
    for path in sorted((ROOT / "sexp_tasks").rglob("*.py")):
        module = str(path.relative_to(ROOT))
        if module == "sexp_tasks/diagnostics.py" or module.startswith("sexp_tasks/starter/"):
            continue  # the renderer itself; the starter project `sexp init` writes (a user's test)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        answers = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef) and (module, node.name) in TOOL_ANSWERS
        ]
        exempt = {id(inner) for answer in answers for inner in ast.walk(answer)}
        exempt |= {id(doc) for doc in _docstrings(tree)}
        by_hand += [
            f"{module}:{node.lineno}: {node.value!r}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in exempt
            and re.search(r"(^|: )(error|warning|log): |internal error", node.value)
        ]
    assert by_hand == []
    assert len({module for module, _ in TOOL_ANSWERS}) == 5  # the exemptions name real modules
    for module, function in TOOL_ANSWERS:
        assert f"def {function}(" in (ROOT / module).read_text(encoding="utf-8"), (module, function)


def _docstrings(tree: ast.Module) -> list[ast.expr]:
    """The docstrings of a module, its classes and its functions (prose, not output)."""
    kinds = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    scopes = [tree, *(node for node in ast.walk(tree) if isinstance(node, kinds))]
    firsts = [scope.body[0] for scope in scopes if scope.body]
    expressions = [first.value for first in firsts if isinstance(first, ast.Expr)]
    return [value for value in expressions if isinstance(value, ast.Constant)]


def test_results_are_recognised_by_their_type_not_by_their_attributes() -> None:
    """A FAILED TaskResult's error line comes from diagnostics, for the CLI and the REPL alike; a
    value that only looks like one is no result."""
    from sexp_tasks.diagnostics import failed_result_line
    from sexp_tasks.results import FAILED, TaskError, TaskResult

    failed = TaskResult("", FAILED, error=TaskError("TASK_FAILURE", "too slow", reason="timeout"))
    assert failed_result_line(failed) == "error: TASK_FAILURE timeout: too slow"
    assert failed_result_line(TaskResult("fine")) is None
    lookalike = type("Lookalike", (), {"failed": True, "failure_line": lambda self: "error: x"})()
    assert failed_result_line(lookalike) is None
    duck_typed = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in sorted((ROOT / "sexp_tasks").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", None) in ("getattr", "hasattr")
        and len(node.args) > 1
        and isinstance(node.args[1], ast.Constant)
        and node.args[1].value in ("failed", "failure_line")
    ]
    assert duck_typed == []


@pytest.mark.parametrize(
    "args",
    [
        ["run", "prog.sexp", "--no-such-flag"],
        ["eval", "--frobnicate", "1"],
        ["no-such-command"],
        ["run"],
        ["eval"],
        ["check"],
    ],
)
def test_usage_errors_exit_2_without_traceback(cli: Cli, workspace: Path, args: list[str]) -> None:
    write(workspace / "prog.sexp", "1")
    code, out, err = cli(*args)
    assert code == EXIT_USAGE
    assert out == ""
    assert "usage:" in err
    assert "Traceback" not in err


def test_no_arguments_start_the_repl(cli: Cli) -> None:
    assert cli(stdin="(+ 1 2)\n") == (0, "3\n", "")


def test_a_missing_file_exits_2(cli: Cli) -> None:
    code, out, err = cli("run", "missing.sexp")
    assert (code, out) == (EXIT_USAGE, "")
    assert "error: cannot read 'missing.sexp'" in err
    assert "Traceback" not in err


def test_a_directory_is_not_a_program(cli: Cli, workspace: Path) -> None:
    (workspace / "adir").mkdir()
    code, _, err = cli("run", "adir")
    assert code == EXIT_USAGE
    assert "error: cannot read 'adir'" in err


def test_a_file_that_is_not_utf8_exits_2(cli: Cli, workspace: Path) -> None:
    (workspace / "latin1.sexp").write_bytes(b'"caf\xe9"')
    code, _, err = cli("run", "latin1.sexp")
    assert code == EXIT_USAGE
    assert "error: cannot read 'latin1.sexp'" in err


def test_version_and_help(cli: Cli) -> None:
    code, out, err = cli("--version")
    assert (code, out.strip(), err) == (EXIT_OK, f"sexp {__version__}", "")
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", __version__)
    code, out, _ = cli("--help")
    assert code == EXIT_OK
    for command in ("run", "eval", "check"):
        assert command in out
    code, out, _ = cli("run", "--help")
    assert code == EXIT_OK
    for option in ("--set", "--set-str", "--json", "--quiet", "--debug"):
        assert option in out


def test_interrupt_exits_130(workspace: Path) -> None:
    if sys.platform == "win32":
        pytest.skip("SIGINT")
    printed = workspace / "stdout.txt"
    with printed.open("w") as stdout:
        process = spawn_sexp(
            "eval",
            '(progn (print "looping") (while true 1))',
            cwd=workspace,
            env={"PYTHONUNBUFFERED": "1"},
            stdout=stdout,
            stderr=subprocess.PIPE,
        )
    try:
        wait_for(lambda: "looping" in printed.read_text() or process.poll() is not None, 60, "no loop")
        assert process.poll() is None  # still looping
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=scaled(20))
    finally:
        process.kill()
    assert process.returncode == 130
    assert "Traceback" not in err


# Deep nesting ----------------------------------------------------------------------------------


def test_ten_thousand_nested_lists_evaluate_and_print(cli: Cli, workspace: Path) -> None:
    nested = "(" * 10_000 + ")" * 10_000
    assert cli("eval", "'" + nested) == (EXIT_OK, nested + "\n", "")
    write(workspace / "nested.sexp", "(length '" + nested + ")")
    assert cli("run", "nested.sexp") == (EXIT_OK, "1\n", "")


def test_ten_thousand_nested_calls_evaluate(cli: Cli, workspace: Path) -> None:
    write(workspace / "calls.sexp", "(length (list " * 10_000 + "1" + "))" * 10_000)
    assert cli("run", "calls.sexp") == (EXIT_OK, "1\n", "")


def nest(depth: int, opening: str, innermost: str, closing: str = ")") -> str:
    """`opening` depth times around innermost, each closed by `closing`."""
    return opening * depth + innermost + closing * depth


# (op 1 (op 1 ... 0)) at depths 25 and 30: how each value prints. Compiling these took time
# doubling with every level (depth 25 never finished); the subprocess's timeout fails them then.
NESTED_ARITHMETIC = [("+", "25 30"), ("-", "1 0"), ("*", "0 0"), ("<", "false false"), ("=", "false false")]


@pytest.mark.parametrize("op, printed", NESTED_ARITHMETIC)
def test_nested_arithmetic_compiles_in_linear_time(cli: Cli, op: str, printed: str) -> None:
    program = "(list " + nest(25, f"({op} 1 ", "0") + " " + nest(30, f"({op} 1 ", "0") + ")"
    assert cli("eval", program) == (EXIT_OK, f"({printed})\n", "")


def test_arithmetic_in_nested_if_branches_compiles_in_linear_time(cli: Cli) -> None:
    body = nest(30, "(if (< x 100) (+ 1 ", "x", ") 0)")
    assert cli("eval", f"(define (f x) {body}) (f 5)") == (EXIT_OK, "35\n", "")


def test_nested_ifs_in_tail_position_compile_in_linear_time(cli: Cli) -> None:
    # Each tail-position branch was compiled twice, once not in tail position: quadratic time,
    # 14 s at depth 1,000.
    body = nest(3_000, "(if x ", "1", " 2)")
    assert cli("eval", f"(define (f x) {body}) (f true)") == (EXIT_OK, "1\n", "")


def test_nested_pair_looking_calls_compile_in_linear_time(cli: Cli) -> None:
    # (f (x (g (y ...)))) may be the pair syntax of a task call, known only when it runs: both
    # readings are compiled, and each inner expression was compiled once for each (depth 15
    # never finished).
    names = "fxgy"
    program = "".join(f"({names[i % 4]} " for i in range(30)) + "0" + ")" * 30
    code, out, err = cli("eval", program)
    assert (code, out) == (EXIT_ERROR, "")
    assert re.match(r"<eval>:1:\d+: error: unbound symbol '[fxgy]'", err)


def test_pair_looking_calls_headed_by_special_forms_compile_in_linear_time(cli: Cli) -> None:
    program = nest(30, "(f (and ", "0", "))")
    code, out, err = cli("eval", f"(define (f x) (+ x 1)) {program}")
    assert (code, out, err) == (EXIT_OK, "30\n", "")


def test_ten_thousand_nested_additions_compile_and_evaluate(cli: Cli) -> None:
    code, out, err = cli("eval", nest(10_000, "(+ 1 ", "0"))
    if code == EXIT_OK:
        assert (out, err) == ("10000\n", "")
    else:  # SPEC §10.1 allows a positioned recursion error instead
        assert code == EXIT_ERROR and re.match(r"<eval>:1:\d+: error: nesting too deep", err), err


def test_nesting_too_deep_to_compile_is_a_positioned_error(cli: Cli, workspace: Path) -> None:
    write(workspace / "deep.sexp", nest(100_000, "(abs ", "0"))
    code, out, err = cli("run", "deep.sexp")
    assert (code, out) == (EXIT_ERROR, "")
    assert re.match(r"deep\.sexp:1:\d+: error: nesting too deep to evaluate", err), err
    assert "Traceback" not in err


def test_nesting_too_deep_to_run_is_a_positioned_error(cli: Cli) -> None:
    # Recursion within recursion_limit whose every level nests its expression 30 deep: Python's
    # stack runs out while running, not while compiling.
    body = nest(30, "(abs ", "(f (- n 1))")
    code, out, err = cli("eval", f"(define (f n) (if (= n 0) 0 {body}))\n(f 9000)")
    assert (code, out) == (EXIT_ERROR, "")
    assert re.match(r"<eval>:1:\d+: error: nesting too deep to evaluate", err), err


@pytest.mark.skipif(sys.platform == "win32", reason="resource")
def test_a_call_with_a_hundred_thousand_arguments_runs_in_little_memory(workspace: Path) -> None:
    # Its call site was generated as Python source with a line and a parameter per argument:
    # 785 MB at 100,000 arguments, 14.9 GB at 2,000,000.
    write(workspace / "wide.sexp", "(length (list " + " ".join(map(str, range(100_000))) + "))")
    measure = (
        "import resource, subprocess, sys\n"
        "command = [sys.executable, '-m', 'sexp_tasks', 'run', 'wide.sexp']\n"
        "done = subprocess.run(command, capture_output=True)\n"
        "peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "print(done.returncode, done.stdout.decode().strip(), peak_kb // 1024)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", measure],
        cwd=workspace,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )
    status, value, peak_mb = done.stdout.split()
    assert (status, value) == ("0", "100000")
    assert int(peak_mb) < 400, f"peak RSS {peak_mb} MB"


def test_too_deep_nesting_is_a_clear_syntax_error(cli: Cli, workspace: Path) -> None:
    write(workspace / "deep.sexp", "'" + "(" * 200_000 + ")" * 200_000)
    code, out, err = cli("run", "deep.sexp")
    assert (code, out) == (EXIT_USAGE, "")
    assert re.match(r"deep\.sexp:1:\d+: error: .*nested", err)
    assert "Traceback" not in err
    assert "RecursionError" not in err


# Settings ------------------------------------------------------------------------------------------


def test_recursion_limit_comes_from_sexp_toml(cli: Cli, workspace: Path) -> None:
    write(workspace / "sexp.toml", "recursion_limit = 50\n")
    program = "(define (depth n) (if (= n 0) 0 (+ 1 (depth (- n 1)))))\n"
    assert cli("eval", program + "(depth 40)") == (EXIT_OK, "40\n", "")
    code, _, err = cli("eval", program + "(depth 60)")
    assert code == EXIT_ERROR
    assert "recursion too deep in 'depth': more than 50 nested calls" in err


@pytest.mark.parametrize(
    "text", ['recursion_limit = "many"\n', "recursion_limit = [\n", "recursion_limit = 0\n"]
)
def test_a_bad_sexp_toml_is_a_usage_error(cli: Cli, workspace: Path, text: str) -> None:
    write(workspace / "sexp.toml", text)
    code, out, err = cli("eval", "1")
    assert (code, out) == (EXIT_USAGE, "")
    assert err.startswith("error: ")
    assert "Traceback" not in err


def test_workspace_flag_confines_files(cli: Cli, workspace: Path) -> None:
    (workspace / "ws").mkdir()
    assert cli("eval", "--workspace", "ws", '(write-file "out.txt" "data")') == (EXIT_OK, '"out.txt"\n', "")
    assert (workspace / "ws" / "out.txt").read_text(encoding="utf-8") == "data"
    assert not (workspace / "out.txt").exists()
    write(workspace / "secret.txt", "secret")
    code, out, err = cli("eval", "--workspace", "ws", '(read-file "../secret.txt")')
    assert (code, out) == (EXIT_ERROR, "")
    assert "outside the workspace" in err


def test_a_symlink_cannot_escape_the_workspace(cli: Cli, workspace: Path) -> None:
    write(workspace / "outside" / "secret.txt", "secret")
    (workspace / "ws").mkdir()
    (workspace / "ws" / "link").symlink_to(workspace / "outside", target_is_directory=True)
    code, out, err = cli("eval", "--workspace", "ws", '(read-file "link/secret.txt")')
    assert (code, out) == (EXIT_ERROR, "")
    assert "outside the workspace" in err
    code, _, err = cli("eval", "--workspace", "ws", '(write-file "link/new.txt" "x")')
    assert code == EXIT_ERROR
    assert not (workspace / "outside" / "new.txt").exists()


def test_dotenv_sets_variables_without_overriding(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    names = ["SEXP_TEST_NEW", "SEXP_TEST_QUOTED", "SEXP_TEST_EXPORTED", "SEXP_TEST_KEPT", "SEXP_TEST_SPACED"]
    for name in names:  # set then delete, so monkeypatch removes whatever load_dotenv adds
        monkeypatch.setenv(name, "placeholder")
        monkeypatch.delenv(name)
    monkeypatch.setenv("SEXP_TEST_KEPT", "from the environment")
    write(
        workspace / ".env",
        '# a comment\n\nSEXP_TEST_NEW=new value\nSEXP_TEST_QUOTED="quoted value"\n'
        "export SEXP_TEST_EXPORTED=exported\nSEXP_TEST_KEPT=from the file\n"
        "  SEXP_TEST_SPACED = spaced  \nnot a setting\n",
    )
    load_dotenv(workspace)
    assert os.environ["SEXP_TEST_NEW"] == "new value"
    assert os.environ["SEXP_TEST_QUOTED"] == "quoted value"
    assert os.environ["SEXP_TEST_EXPORTED"] == "exported"
    assert os.environ["SEXP_TEST_KEPT"] == "from the environment"
    assert os.environ["SEXP_TEST_SPACED"] == "spaced"


def test_dotenv_missing_is_fine(workspace: Path) -> None:
    before = dict(os.environ)
    load_dotenv(workspace)
    assert dict(os.environ) == before


def test_a_dotenv_file_in_the_working_directory_does_not_disturb_a_run(cli: Cli, workspace: Path) -> None:
    write(workspace / ".env", "SEXP_SOMETHING=1\ngarbage line\n# comment\n")
    assert cli("eval", "(+ 1 1)") == (EXIT_OK, "2\n", "")


@pytest.mark.parametrize("line", ["=value", "SEXP_NUL=a\0b"])
def test_a_malformed_dotenv_line_does_not_crash(cli: Cli, workspace: Path, line: str) -> None:
    write(workspace / ".env", line + "\n")
    code, out, err = cli("eval", "(+ 1 1)")
    assert "Traceback" not in err
    assert (code, out) == (EXIT_OK, "2\n")


# Start-up: what a start leaves for later (sexp_tasks/cli/startup.py lists it) ----------------------

PROGRAM_LAZY = {name for name, lazy in LAZY_IMPORTS.items() if lazy.program}
PROGRAM_LAZY |= {library for name in PROGRAM_LAZY for library in LAZY_IMPORTS[name].brings}
EVERY_LAZY = set(LAZY_IMPORTS) | {library for lazy in LAZY_IMPORTS.values() for library in lazy.brings}


def imported_modules(importtime_log: str) -> set[str]:
    """The modules a `python -X importtime` run imported, from its log on stderr."""
    lines = importtime_log.splitlines()
    found = {line.rsplit("|", 1)[-1].strip() for line in lines if line.startswith("import time:")}
    assert "sexp_tasks" in found  # the import log is really there
    return found


def loaded(names: set[str], modules: set[str]) -> set[str]:
    """Which of names (a package stands for its submodules) are among modules."""
    return {name for name in names if any(m == name or m.startswith(name + ".") for m in modules)}


def imports_inside_functions(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """The import statements inside a function of tree (TYPE_CHECKING blocks aside)."""
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[tuple[ast.AST, bool]] = [(tree, False)]
    while pending:
        node, in_function = pending.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and ast.unparse(child.test) == "TYPE_CHECKING":
                continue
            if in_function and isinstance(child, ast.Import | ast.ImportFrom):
                found.append(child)
            pending.append((child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)))
    return found


def function_local_imports() -> set[tuple[str, str]]:
    """(importer, imported) for every import inside a function of the package: the package's own
    modules by their full name, libraries by their top-level name."""
    found = set()
    for path in (ROOT / "sexp_tasks").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        importer = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        package = ".".join(parts[:-1])
        for statement in imports_inside_functions(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(statement, ast.Import):
                found.update((importer, alias.name.split(".")[0]) for alias in statement.names)
                continue
            base = package.rsplit(".", statement.level - 1)[0] if statement.level else ""
            module = ".".join(filter(None, [base, statement.module or ""]))
            if not module.startswith("sexp_tasks"):
                found.add((importer, module.split(".")[0]))
            elif statement.module is None:  # from . import submodule
                found.update((importer, f"{module}.{alias.name}") for alias in statement.names)
            else:
                found.add((importer, module))
    return found


def test_the_list_of_lazy_imports_is_the_code_s_own() -> None:
    """Every import inside a function is listed, with its importer, and nothing else is."""
    listed = {(importer, name) for name, lazy in LAZY_IMPORTS.items() for importer in lazy.importers}
    assert function_local_imports() == listed


def test_help_imports_nothing_a_start_leaves_for_later(cli: Cli) -> None:
    code, out, err = cli("--help", python_flags=("-X", "importtime"))
    assert code == EXIT_OK and "usage: sexp" in out
    assert loaded(EVERY_LAZY, imported_modules(err)) == set()


def test_a_program_without_model_calls_imports_no_heavy_library(workspace: Path) -> None:
    """Through the Python API: a program that reads and writes files, and records no run."""
    script = (
        "import sys\n"
        "from sexp_tasks.runtime import Runtime\n"
        "from sexp_tasks.config import Settings\n"
        "runtime = Runtime(Settings(workspace='.'))\n"
        'value = runtime.run_source(\'(write-file "f.txt" (json-dump (map inc (range 3)))) \'\n'
        "                           '(json-parse (read-file \"f.txt\"))')\n"
        "assert value == [1, 2, 3], value\n"
        "print(sorted(sys.modules))\n"
    )
    for _ in range(2):  # the first run caches the reader's tables
        completed = subprocess.run(
            [sys.executable, "-c", script],
            cwd=workspace,
            capture_output=True,
            text=True,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
            timeout=scaled(60),
        )
        assert completed.returncode == 0, completed.stderr
    modules = set(ast.literal_eval(completed.stdout))
    assert "sexp_tasks.runtime" in modules and loaded(PROGRAM_LAZY, modules) == set()


def test_the_cli_imports_no_heavy_library_for_a_plain_program(cli: Cli) -> None:
    assert cli("eval", "1")[0] == EXIT_OK  # the reader's tables are cached from now on
    code, out, err = cli("eval", "(sum (range 10))", python_flags=("-X", "importtime"))
    assert (code, out) == (EXIT_OK, "45\n")
    assert loaded(PROGRAM_LAZY, imported_modules(err)) == set()


def test_a_recorded_run_imports_sqlite3_and_nothing_else_it_does_not_use(cli: Cli, workspace: Path) -> None:
    write(workspace / "prog.sexp", "(print (sum (range 10)))\n")
    assert cli("eval", "1")[0] == EXIT_OK  # the reader's tables are cached from now on
    code, out, err = cli("run", "prog.sexp", python_flags=("-X", "importtime"))
    assert (code, out) == (EXIT_OK, "45\n")
    assert (workspace / ".sexp" / "store.db").is_file()  # the run was recorded
    assert loaded(PROGRAM_LAZY, imported_modules(err)) == {"sqlite3"}


# sexp check -------------------------------------------------------------------------------------


def test_check_accepts_a_good_file_without_running_it(cli: Cli, workspace: Path) -> None:
    write(
        workspace / "good.sexp",
        '(define (f a &optional b &key c) (list a b c))\n(f 1 2 :c 3)\n(write-file "touched.txt" "x")\n'
        "(print (map (lambda (x) (inc x)) (list 1 2)))\n(let ((g (lambda (y) y))) (g 1))\n",
    )
    assert cli("check", "good.sexp") == (EXIT_OK, "good.sexp: ok\n", "")
    assert not (workspace / "touched.txt").exists()


@pytest.mark.parametrize(
    "source, message",
    [
        ("(let ((x)) x)\n", "good.sexp:1:7: error: let: each binding must be (name expr)"),
        ("(print 1)\n(if)\n", "good.sexp:2:1: error: if: expected (if test then [else])"),
        ("(car 1 2)\n", "good.sexp:1:1: error: car: expected 1 argument, got 2"),
        ("(rest (list 1 2 3) 99)\n", "good.sexp:1:1: error: rest: expected 1 argument, got 2"),
        ('(first 5 "boom")\n', "good.sexp:1:1: error: first: expected 1 argument, got 2"),
        ('(string-join (list "a") "," 3)\n', "good.sexp:1:1: error: string-join: expected 1 to 2 arguments"),
        ("(pmap inc (list 1) :concurrency 2 3 4)\n", "good.sexp:1:1: error: pmap: expected 2 to 4 arguments"),
        ("(define (f a b) (+ a b))\n(print (f 1))\n", "good.sexp:2:8: error: f: expected 2 arguments, got 1"),
        ("(define g (lambda (a) a))\n(g)\n", "good.sexp:2:1: error: g: expected 1 argument, got 0"),
        ("(define (h) (f 1 2))\n(define (f a) a)\n", "good.sexp:1:13: error: f: expected 1 argument, got 2"),
        ("(lenght (list 1))\n", "good.sexp:1:1: error: unknown procedure 'lenght'; did you mean 'length'"),
        ("(lambda (x) (frobnicate x))\n", "good.sexp:1:13: error: unknown procedure 'frobnicate'"),
    ],
)
def test_check_reports_problems_and_exits_1(cli: Cli, workspace: Path, source: str, message: str) -> None:
    write(workspace / "good.sexp", source)
    code, out, err = cli("check", "good.sexp")
    assert (code, out) == (EXIT_ERROR, "")
    assert err.startswith(message)
    assert "^" in err


def test_check_reports_every_problem_in_order(cli: Cli, workspace: Path) -> None:
    write(workspace / "two.sexp", "(inc 1 2)\n(define (f x) x)\n(f)\n")
    code, _, err = cli("check", "two.sexp")
    assert code == EXIT_ERROR
    headers = [line for line in err.splitlines() if ": error: " in line]
    assert headers == [
        "two.sexp:1:1: error: inc: expected 1 argument, got 2",
        "two.sexp:3:1: error: f: expected 1 argument, got 0",
    ]


def test_check_syntax_error_exits_2(cli: Cli, workspace: Path) -> None:
    write(workspace / "syntax.sexp", "(+ 1\n")
    code, out, err = cli("check", "syntax.sexp")
    assert (code, out) == (EXIT_USAGE, "")
    assert err.startswith("syntax.sexp:1:1: error: unclosed '('")


def test_check_several_files(cli: Cli, workspace: Path) -> None:
    write(workspace / "a.sexp", "(+ 1 2)\n")
    write(workspace / "b.sexp", "(car)\n")
    code, out, err = cli("check", "a.sexp", "b.sexp")
    assert (code, out) == (EXIT_ERROR, "a.sexp: ok\n")
    assert err.startswith("b.sexp:1:1: error: car: expected 1 argument, got 0")
    code, out, err = cli("check", "a.sexp", "missing.sexp")
    assert (code, out) == (EXIT_USAGE, "a.sexp: ok\n")
    assert "error: cannot read 'missing.sexp'" in err


def test_check_trusts_names_a_loaded_file_may_define(cli: Cli, workspace: Path) -> None:
    write(workspace / "uses.sexp", '(load "lib.sexp")\n(from-lib 1)\n')
    assert cli("check", "uses.sexp") == (EXIT_OK, "uses.sexp: ok\n", "")


def test_check_accepts_procedures_defined_inside_top_level_progn(cli: Cli, workspace: Path) -> None:
    write(workspace / "nested.sexp", "(begin (define (helper) 1))\n(helper)\n")
    assert cli("run", "nested.sexp") == (EXIT_OK, "1\n", "")
    assert cli("check", "nested.sexp") == (EXIT_OK, "nested.sexp: ok\n", "")


def test_check_accepts_a_redefinition_with_another_arity(cli: Cli, workspace: Path) -> None:
    write(workspace / "redef.sexp", "(define (f a) a)\n(print (f 1))\n(define (f a b) b)\n(f 1 2)\n")
    assert cli("run", "redef.sexp") == (EXIT_OK, "1\n2\n", "")
    assert cli("check", "redef.sexp") == (EXIT_OK, "redef.sexp: ok\n", "")


def test_check_builds_no_runtime(workspace: Path) -> None:
    """`sexp check` builds only what checking reads (the language core with the task forms, the
    templates the program sees: its own tasks/ directory too), never a whole Runtime or its Workspace."""
    write(
        workspace / "tasks" / "greet.xml",
        '<task name="greet" type="atomic"><description>d</description><instructions>Hi {{who}}</instructions>'
        '<inputs><input name="who" type="string">who</input></inputs></task>',
    )
    program = write(workspace / "prog.sexp", '(greet (who "x"))\n(greet (whom "x"))\n')
    out = run_python(
        "import sys\n"
        "from sexp_tasks import runtime\n"
        "from sexp_tasks.process import workspace\n"
        "def refuse(*args, **kwargs):\n"
        "    raise AssertionError('built to check a file')\n"
        "runtime.Runtime.__init__ = refuse\n"
        "workspace.Workspace.__init__ = refuse\n"
        "from sexp_tasks.cli.main import main\n"
        "sys.stderr = sys.stdout\n"
        f"print('exit', main(['check', {str(program)!r}]))\n"
    )
    headers = [line for line in out.splitlines() if ": error: " in line or line.startswith("exit")]
    assert headers == [
        f"{program}:2:1: error: task 'greet': missing required input 'who'",
        f"{program}:2:8: error: task 'greet' has no input 'whom' (declared: who); did you mean 'who'?",
        "exit 1",
    ], out



def test_check_knows_every_name_a_run_binds(cli: Cli, workspace: Path) -> None:
    """The language `sexp check` builds is the one a run gets: the task system's and the memory
    system's primitives are known names, not unknown procedures."""
    write(workspace / "prog.sexp", '(get-context "parsing")\n(pmap inc (list 1 2))\n(match-tasks "x")\n')
    code, out, err = cli("check", "prog.sexp")
    assert (code, err) == (EXIT_OK, ""), err


# Printing big integers ----------------------------------------------------------------------------


def test_integers_print_in_full_however_long(cli: Cli) -> None:
    code, out, err = cli("eval", "(reduce * 1 (map (lambda (i) 10) (range 5000)))")
    assert (code, out, err) == (EXIT_OK, "1" + "0" * 5000 + "\n", "")


def test_integers_read_in_full_however_long(cli: Cli) -> None:
    digits = "9" * 5000  # past the 4300 digits Python converts by default
    assert cli("eval", f"(+ {digits} 1)") == (EXIT_OK, "1" + "0" * 5000 + "\n", "")


def test_importing_the_package_leaves_the_integer_digit_limit_alone() -> None:
    out = run_python(
        "import sys\n"
        "before = sys.get_int_max_str_digits()\n"
        "import sexp_tasks, sexp_tasks.syntax.reader, sexp_tasks.runtime\n"
        "print(before, sys.get_int_max_str_digits())\n"
    )
    assert out.split() == [str(sys.int_info.default_max_str_digits)] * 2


def test_a_runtime_reads_and_prints_integers_of_any_length() -> None:
    out = run_python(
        "from sexp_tasks.runtime import Runtime\n"
        "runtime = Runtime(load_templates=False)\n"
        f"print(runtime.run_source('(str (* {'9' * 5000} 1))') == '9' * 5000)\n"
    )
    assert out == "True\n"


def test_check_takes_templates_like_run(cli: Cli, workspace: Path) -> None:
    (workspace / "t").mkdir()
    write(
        workspace / "t" / "greet.xml",
        '<task name="greet" type="atomic"><description>d</description><instructions>Hi {{who}}</instructions>'
        '<inputs><input name="who" type="string">who</input></inputs></task>',
    )
    write(workspace / "prog.sexp", '(greet (who "x"))\n')
    code, out, err = cli("check", "prog.sexp")
    assert code == 1 and "greet" in err
    assert cli("check", "prog.sexp", "--templates", "t") == (0, "prog.sexp: ok\n", "")


def test_a_replayed_run_never_imports_litellm(workspace: Path) -> None:
    """Replaying answers from the cassette; the model's input window comes from litellm's model
    map on disk, so the seconds litellm takes to import are not spent."""
    import subprocess
    import sys

    examples = Path(__file__).resolve().parent.parent / "examples"
    code = (
        "import sys; from sexp_tasks.cli.main import main; "
        f"status = main(['run', '-q', '{examples}/release_review.sexp', '--templates', '{examples}/tasks',"
        f" '--replay', '{examples}/release_review.cassette.jsonl', '--store', '{workspace}/store.db']); "
        "print(status, 'litellm' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=examples.parent, capture_output=True, text=True, timeout=scaled(120)
    )
    assert done.stdout.splitlines()[-1] == "0 False", done.stdout + done.stderr


def test_a_closed_pipe_ends_quietly(workspace: Path) -> None:
    """`sexp eval ... | head -c 10`: the reader stops early; no traceback, no internal error."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    command = f"{sys.executable} -m sexp_tasks eval '(range 200000)' | head -c 10"
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command],
        cwd=workspace,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "PYTHONPATH": str(root)},
        timeout=scaled(60),
    )
    assert done.stdout == "(0 1 2 3 4"
    assert done.stderr == "" and done.returncode == 0


def test_help_says_that_model_overrides_a_templates_model(cli: Cli) -> None:
    code, out, _ = cli("run", "--help")
    text = " ".join(out.split())
    assert code == EXIT_OK
    assert "--model MODEL the model of every task call that names none itself" in text
    assert "(it overrides a template's <model>)" in text and "tasks that name none" not in text


# Closed and full output, bad bytes: never a traceback ------------------------------------------


def shell(command: str, workspace: Path, stdin: bytes = b"") -> tuple[int, bytes, str]:
    """command run by bash -o pipefail, `sexp` standing for this checkout's command."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8")
    sexp = f"{sys.executable} -m sexp_tasks"
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", re.sub(r"\Asexp\b", sexp, command)],
        cwd=workspace,
        input=stdin,
        capture_output=True,
        env=env,
        timeout=scaled(60),
    )
    return done.returncode, done.stdout, done.stderr.decode("utf-8", "replace")


@pytest.mark.parametrize("redirect", [">&-", "> /dev/full"])
def test_a_closed_or_full_stdout_ends_quietly_with_exit_1(workspace: Path, redirect: str) -> None:
    assert shell(f"sexp eval 42 {redirect}", workspace) == (EXIT_ERROR, b"", "")
    write(workspace / "p.sexp", '(print "line")\n(+ 1 2)\n')
    assert shell(f"sexp run -q p.sexp {redirect}", workspace) == (EXIT_ERROR, b"", "")
    assert shell(f"sexp runs {redirect}", workspace) == (EXIT_ERROR, b"", "")
    assert shell(f"sexp tasks list {redirect}", workspace) == (EXIT_ERROR, b"", "")


def test_print_into_a_closed_pipe_ends_quietly_with_exit_0(workspace: Path) -> None:
    write(workspace / "p.sexp", '(loop 100000 (print "a line of output"))\n')
    assert shell("sexp run -q p.sexp | head -0", workspace) == (EXIT_OK, b"", "")
    assert shell("sexp run -q p.sexp | head -1", workspace) == (EXIT_OK, b"a line of output\n", "")
    status, out, err = shell("sexp run -q --json p.sexp 2>&1 | head -1", workspace)
    assert (status, out, err) == (EXIT_OK, b"a line of output\n", "")


def test_a_sexp_toml_that_is_not_utf8_is_a_usage_error(cli: Cli, workspace: Path) -> None:
    (workspace / "sexp.toml").write_bytes(b'model = "caf\xe9"\n')
    code, out, err = cli("eval", "1")
    assert (code, out) == (EXIT_USAGE, "")
    assert err.startswith("error: sexp.toml: not UTF-8 text") and "Traceback" not in err


def test_piped_repl_input_that_is_not_utf8_is_an_error_and_the_session_goes_on(workspace: Path) -> None:
    status, out, err = shell("sexp", workspace, stdin=b'(print "caf\xe9")\n(+ 1 2)\n')
    assert (status, out) == (EXIT_OK, b"3\n")
    assert err == "<repl>:1: error: the input is not UTF-8 text\n"


# Settings out of range are usage errors naming the setting ----------------------------------------


@pytest.mark.parametrize(
    "flags, named",
    [
        (["--max-cost", "-1"], "--max-cost"),
        (["--max-cost", "0"], "--max-cost"),
        (["--max-cost", "nan"], "--max-cost"),
        (["--max-cost", "inf"], "--max-cost"),
        (["--max-cost", "abc"], "--max-cost"),
        (["--templates", "/nonexistent"], "--templates"),
        (["--templates", "p.sexp"], "--templates"),
        (["--workspace", "nowhere"], "--workspace"),
        (["--mock-responses", "missing.json"], "--mock-responses"),
        (["--replay", "missing.jsonl"], "--replay"),
        (["--record", "adir"], "--record"),
        (["--record", "p.sexp/cassette.jsonl"], "--record"),
        (["--set", "if=1"], "--set"),
        (["--set-str", "lambda=x"], "--set-str"),
        (["--set", "defatom=1"], "--set"),  # the task system's form, in the runtime's table
        (["--set", "two words=1"], "--set"),
    ],
)
def test_nonsense_flags_are_usage_errors_naming_the_flag(
    cli: Cli, workspace: Path, flags: list[str], named: str
) -> None:
    (workspace / "adir").mkdir()
    write(workspace / "p.sexp", '(print "ran")\n')
    for command in (["run", "p.sexp"], ["eval", '(print "ran")']):
        code, out, err = cli(*command, *flags)
        assert (code, out) == (EXIT_USAGE, ""), err
        assert err.startswith("error: ") or err.startswith("usage: "), err
        assert named in err and "Traceback" not in err and "internal error" not in err


@pytest.mark.parametrize(
    "setting",
    [
        "script_timeout = -5",
        "script_timeout = 0",
        "script_timeout = nan",
        "script_output_limit = -1",
        "concurrency = 0",
        "max_turns = 0",
        "recursion_limit = -3",
        "max_depth = -1",
        "max_context_window_fraction = 0",
        "max_context_window_fraction = 1.5",
        "max_context_window_fraction = nan",
        "max_cost_usd = 0",
        "max_cost_usd = -0.5",
        "max_cost_usd = inf",
    ],
)
def test_nonsense_sexp_toml_settings_are_usage_errors_naming_the_key(
    cli: Cli, workspace: Path, setting: str
) -> None:
    write(workspace / "sexp.toml", setting + "\n")
    code, out, err = cli("eval", '(print "ran")')
    assert (code, out) == (EXIT_USAGE, "")
    key = setting.split()[0]
    assert err.startswith(f"error: sexp.toml: '{key}' must be "), err
    assert "Traceback" not in err


def test_settings_at_the_edge_of_their_range_are_accepted(cli: Cli, workspace: Path) -> None:
    edges = "max_context_window_fraction = 1\nscript_output_limit = 0\nmax_depth = 0\n"
    write(workspace / "sexp.toml", edges)
    assert cli("eval", "--max-cost", "0.0001", "1") == (EXIT_OK, "1\n", "")


def test_a_lone_surrogate_from_json_parse_is_replaced_and_prints(cli, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    """json-parse reads a lone \\ud83d escape as U+FFFD, as model answers are read (SPEC §10.1):
    print, the printer and --json all write it, where they once crashed with UnicodeEncodeError."""
    program = '(print (json-parse "\\"\\\\ud83d\\"")) (json-parse "[\\"a\\\\ud83d\\"]")\n'
    (workspace / "s.sexp").write_text(program)
    code, out, err = cli("run", "s.sexp")
    assert (code, out, err) == (0, '\ufffd\n("a\ufffd")\n', "")
    code, out, err = cli("run", "s.sexp", "--json")
    assert code == 0 and json.loads(out) == ["a\ufffd"] and err == "\ufffd\n"
