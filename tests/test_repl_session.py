"""The REPL's session core (SPEC §8), with no terminal: input balance, evaluation, commands, completion."""

from __future__ import annotations

import io
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import ROOT, run_cli, scaled, wait_for

from sexp_tasks.config import Settings
from sexp_tasks.lang.documentation import render_doc
from sexp_tasks.repl.replies import Failed, Incomplete, Printed, Quit
from sexp_tasks.repl.session import Session

GREET = '(defatom greet (params (who str)) (instructions "Say hi to {{who}}") (model "mock/x"))'


@pytest.fixture
def session(workspace: Path) -> Session:
    """A session in the test's directory, its program output captured in session.out."""
    made = Session(Settings(workspace=str(workspace)), out=io.StringIO(), err=io.StringIO())
    yield made
    made.close()


def shown(session: Session, text: str) -> str:
    """The text of a Printed reply (fails on anything else)."""
    reply = session.submit(text)
    assert isinstance(reply, Printed), reply
    return reply.text


def failed(session: Session, text: str) -> str:
    reply = session.submit(text)
    assert isinstance(reply, Failed), reply
    return reply.text


def runs(workspace: Path) -> list[sqlite3.Row]:
    db = sqlite3.connect(workspace / ".sexp" / "store.db")
    db.row_factory = sqlite3.Row
    try:
        return db.execute("SELECT * FROM runs ORDER BY started_at").fetchall()
    finally:
        db.close()


# Balance -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "(+ 1",
        "(define (f x)\n  (* x",
        '(print "(")  (list',
        '(a ")"',  # the string's ')' does not close the list
        "(a ; ) in a comment\n",
        '"a string\nover lines',
        "'",
        "{1 2",
        '(a "escaped \\" quote"',
    ],
)
def test_open_lists_strings_and_quotes_ask_for_more(session: Session, text: str) -> None:
    assert not session.is_complete(text)
    assert session.submit(text) == Incomplete()


@pytest.mark.parametrize(
    "text",
    [
        "(+ 1 2)",
        '(print "(")',
        '(list ")" "(")',
        "(a) ; (unclosed in a comment",
        "",
        "   \n",
        "; only a comment",
        ")",  # an error, not a reason to wait for more
        "(a))",
        ":help",
        ":show (",
    ],
)
def test_balanced_input_and_errors_are_complete(session: Session, text: str) -> None:
    assert session.is_complete(text)


def test_lines_joined_until_balanced_evaluate_as_one_input(session: Session) -> None:
    assert session.submit("(+ 1") == Incomplete()
    assert session.submit("(+ 1\n   2)") == Printed("3")


def test_final_input_that_is_still_open_shows_where(session: Session) -> None:
    text = failed_final(session, "(+ 1\n  (* 2 3)")
    assert text.startswith("<repl>:1:1: error: unclosed '(' opened at 1:1")


def failed_final(session: Session, text: str) -> str:
    reply = session.submit(text, final=True)
    assert isinstance(reply, Failed), reply
    return reply.text


# Evaluation ----------------------------------------------------------------------------------
def test_definitions_persist_across_inputs(session: Session) -> None:
    shown(session, "(define (square x) (* x x))")
    shown(session, "(define n 7)")
    assert shown(session, "(square n)") == "49"


def test_values_are_echoed_with_the_printer_and_nil_is_not(session: Session) -> None:
    assert shown(session, '"a\\"b"') == '"a\\"b"'
    assert shown(session, "'()") == "()"
    assert shown(session, '(list 1 "a" \'b :k)') == '(1 "a" b :k)'
    assert shown(session, "nil") == ""
    assert shown(session, '(print "hello" 1)') == ""
    assert session.out.getvalue() == "hello 1\n"  # type: ignore[union-attr]
    assert shown(session, "") == ""


def test_a_failed_task_result_is_echoed_with_its_error_line(session: Session) -> None:
    shown(session, GREET)
    text = shown(session, "(greet :who 5)")
    assert text.startswith("#<TaskResult FAILED")
    assert text.splitlines()[1].startswith("error: TASK_FAILURE input_validation_failure:")


def test_errors_have_a_caret_under_the_input_and_the_session_goes_on(session: Session) -> None:
    text = failed(session, "(+ 1 (car 1 2))")
    assert text == "<repl>:1:6: error: car: expected 1 argument, got 2\n  (+ 1 (car 1 2))\n       ^"
    text = failed(session, "(list 1))")
    assert text.splitlines() == [
        "<repl>:1:9: error: unexpected ')' with no matching opening bracket",
        "  (list 1))",
        "          ^",
    ]
    assert "unbound symbol 'undefined-thing'" in failed(session, "undefined-thing")
    assert shown(session, "(+ 1 2)") == "3"


def test_an_error_in_a_later_line_points_at_that_line(session: Session) -> None:
    text = failed(session, "(define a 1)\n(define b\n   (car 1 2))")
    assert text.splitlines()[0] == "<repl>:3:4: error: car: expected 1 argument, got 2"
    assert text.splitlines()[2] == "     ^"


def test_an_input_that_fails_to_compile_defines_nothing(session: Session) -> None:
    failed(session, "(define early 1) (if)")
    assert "unbound symbol 'early'" in failed(session, "early")


def test_deep_recursion_runs_on_a_deep_stack(session: Session) -> None:
    shown(session, "(define (depth n) (if (= n 0) 0 (+ 1 (depth (- n 1)))))")
    assert shown(session, "(depth 5000)") == "5000"


def test_ctrl_c_stops_a_running_evaluation_and_the_session_goes_on(session: Session) -> None:
    shown(session, "(define (spin n) (spin (+ n 1)))")

    running: list[bool] = []

    def interrupt_once_running() -> None:
        try:  # the evaluation printed its marker: it is under way
            running.append(wait_for(lambda: "7777" in session.out.getvalue(), 30, "no evaluation"))
        finally:
            os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt_once_running, daemon=True).start()
    assert session.submit("(progn (print (* 1111 7)) (spin 0))") == Failed("interrupted")
    assert running == [True]
    assert shown(session, "(+ 2 2)") == "4"
    assert [t.name for t in threading.enumerate() if t.name == "sexp-main"] == []


def test_debug_adds_the_traceback(session: Session) -> None:
    session.debug = True
    text = failed(session, "(car 1 2)")
    assert "Traceback" in text and text.endswith("^")


def test_an_internal_error_says_so_and_the_session_goes_on(session: Session) -> None:
    def bug() -> None:
        raise RuntimeError("boom")

    assert session.evaluate(bug, "<repl>", "") == Failed("internal error: RuntimeError: boom")
    session.debug = True
    text = session.evaluate(bug, "<repl>", "").text  # type: ignore[union-attr]
    assert text.startswith("Traceback (most recent call last):\n")
    assert text.endswith("RuntimeError: boom\ninternal error: RuntimeError: boom")
    assert shown(session, "(+ 2 2)") == "4"


# Recording -----------------------------------------------------------------------------------
def test_inputs_that_call_no_task_record_nothing(session: Session, workspace: Path) -> None:
    shown(session, "(+ 1 2)")
    shown(session, '(map (lambda (m) (get m "name")) (match-tasks "greet someone"))')
    assert not (workspace / ".sexp").exists()
    assert shown(session, ":trace").startswith("(no runs recorded yet")


def test_each_input_that_calls_a_task_is_a_run_and_trace_shows_it(session: Session, workspace: Path) -> None:
    shown(session, GREET)
    assert shown(session, '(greet "bob")') == '#<TaskResult COMPLETE "mock response 1 for greet">'
    shown(session, '(define (twice) (greet "a") (greet "b"))')
    shown(session, "(twice)")
    failed(session, '(progn (greet "c") (error "boom"))')
    recorded = runs(workspace)
    assert [(r["program"], r["status"]) for r in recorded] == [
        ("<repl>", "completed"),
        ("<repl>", "completed"),
        ("<repl>", "failed"),
    ]
    assert session.last_run == recorded[-1]["id"]
    lines = shown(session, ":trace").splitlines()
    assert lines[0].startswith(f"run {recorded[-1]['id']}") and "failed" in lines[0]
    assert len(lines) == 2 and "task greet  COMPLETE" in lines[1] and "mock response 4" in lines[1]
    lines = shown(session, f":trace {recorded[1]['id']}").splitlines()
    assert len(lines) == 3 and "2 steps" in lines[0]
    assert [line[:2] for line in lines[1:]] == ["├─", "└─"]
    assert failed(session, ":trace nosuchrun") == "error: unknown run 'nosuchrun'"


@pytest.mark.slow
def test_trace_falls_back_to_the_newest_run_in_the_store(session: Session, workspace: Path) -> None:
    (workspace / "p.sexp").write_text(GREET + '\n(greet "x")\n', encoding="utf-8")
    assert run_cli("run", "-q", "p.sexp", cwd=workspace)[0] == 0
    assert "p.sexp" in shown(session, ":trace").splitlines()[0]


# Commands ------------------------------------------------------------------------------------
def test_help_lists_every_command(session: Session) -> None:
    text = shown(session, ":help")
    for name in ("help", "tasks", "show", "doc", "env", "load", "trace", "model", "reset", "quit"):
        assert f":{name}" in text


def test_unknown_commands_say_so_and_suggest(session: Session) -> None:
    assert failed(session, ":bogus") == "error: unknown command ':bogus' (:help lists the commands)"
    assert "did you mean ':trace'?" in failed(session, ":trac")
    assert shown(session, "(+ 1 1)") == "2"


def test_tasks_lists_templates_including_defined_ones(session: Session) -> None:
    shown(session, GREET)
    lines = shown(session, ":tasks").splitlines()
    assert any(line.startswith("greet ") and "greet" in line for line in lines)
    assert any(line.startswith("associative_matching ") for line in lines)


def test_show_a_task_a_value_a_primitive_a_form_and_a_prelude_name(session: Session) -> None:
    shown(session, GREET)
    text = shown(session, ":show greet")
    assert text.startswith("task greet (standard)") and "input who: string" in text
    assert "Say hi to {{who}}" in text
    shown(session, "(define x (list 1 2))")
    assert shown(session, ":show x") == "x = (1 2)"
    assert shown(session, ":show car").startswith("car = #<procedure car>\n  ")
    assert shown(session, ":show lambda") == "lambda: special form"
    pending = sorted(session.runtime.globals.pending)[0]
    assert shown(session, f":show {pending}").startswith(f"{pending} = #<procedure")


def test_show_errors(session: Session) -> None:
    assert failed(session, ":show") == "error: :show expects a name (:show NAME)"
    text = failed(session, ":show lenght")
    assert text.startswith("error: 'lenght' is neither a task nor a bound name") and "length" in text


def test_env_lists_what_the_session_defined_in_order(session: Session) -> None:
    assert shown(session, ":env") == "(nothing defined yet)"
    shown(session, "(define b 2)")
    shown(session, "(define (a) 1)")
    shown(session, "(inc 1)")  # a prelude name looked up is not the session's definition
    shown(session, "(define b 3)")
    names = [line.split()[0] for line in shown(session, ":env").splitlines()]
    assert names == ["a", "b"]
    assert shown(session, ":env").splitlines()[1].split() == ["b", "3"]


def test_env_shows_a_redefined_primitive(session: Session) -> None:
    shown(session, "(define (car x) 42)")
    assert shown(session, ":env").split()[0] == "car"


def test_load_runs_a_file_whose_definitions_stay(session: Session, workspace: Path) -> None:
    (workspace / "lib").mkdir()
    (workspace / "lib" / "helper.sexp").write_text("(define helper-value 40)\n", encoding="utf-8")
    (workspace / "lib" / "main.sexp").write_text(
        '(load "helper.sexp")\n(define (answer) (+ helper-value 2))\n(answer)\n', encoding="utf-8"
    )
    assert shown(session, ":load lib/main.sexp") == "42"
    assert shown(session, "(answer)") == "42"


def test_load_errors(session: Session, workspace: Path) -> None:
    assert failed(session, ":load") == "error: :load expects a file (:load FILE)"
    missing = f"error: load: no such file 'missing.sexp' (looked in {workspace})"
    assert failed(session, ":load missing.sexp") == missing
    (workspace / "bad.sexp").write_text("(define ok 1)\n(car 1 2)\n", encoding="utf-8")
    text = failed(session, ":load bad.sexp")
    assert text.startswith("bad.sexp:2:1: error: car: expected 1 argument") and "^" in text
    assert shown(session, "ok") == "1"


def test_model_sets_the_model_for_later_calls(session: Session) -> None:
    shown(session, '(defatom hello (params (who str)) (instructions "Hi {{who}}"))')
    assert "has no model" in failed(session, '(hello "x")')
    assert shown(session, ":model") == "model: none set (give one with :model M)"
    assert shown(session, ":model mock/y") == "model: mock/y"
    assert shown(session, '(task-content (hello "x"))').startswith('"mock response')
    assert shown(session, ":model") == "model: mock/y"


def test_reset_forgets_definitions_but_keeps_the_model(session: Session) -> None:
    shown(session, "(define kept 1)")
    shown(session, ":model mock/z")
    assert shown(session, ":reset") == "(definitions cleared)"
    assert "unbound symbol 'kept'" in failed(session, "kept")
    assert shown(session, ":env") == "(nothing defined yet)"
    assert shown(session, ":model") == "model: mock/z"


def test_quit(session: Session) -> None:
    assert session.submit(":quit") == Quit()
    assert session.submit("  :quit  ") == Quit()


def test_templates_that_fail_to_load_are_reported_and_left_out(workspace: Path) -> None:
    (workspace / "tasks").mkdir()
    (workspace / "tasks" / "broken.xml").write_text("<task name='x'", encoding="utf-8")
    (workspace / "tasks" / "fine.xml").write_text(
        '<task name="fine" type="atomic"><description>d</description><instructions>i</instructions></task>',
        encoding="utf-8",
    )
    made = Session(Settings(workspace=str(workspace)), out=io.StringIO(), err=io.StringIO())
    try:
        assert len(made.startup_messages) == 1 and "broken.xml" in made.startup_messages[0]
        assert "fine" in shown(made, ":tasks")
    finally:
        made.close()


# Completion ----------------------------------------------------------------------------------
def test_completion_of_forms_primitives_prelude_globals_and_tasks(session: Session) -> None:
    shown(session, GREET)
    shown(session, "(define my-value 1)")
    assert session.completions("(lamb") == ("lamb", ["lambda"])
    word, names = session.completions("(string-")
    assert word == "string-" and "string-join" in names and "string-split" in names
    pending = sorted(session.runtime.globals.pending)[0]  # defined only when first used
    assert pending in session.completions("(" + pending[:3])[1]
    assert session.completions("(list my-v") == ("my-v", ["my-value"])
    assert "greet" in session.completions("(gre")[1]
    assert "associative_matching" in session.completions("(associative")[1]
    assert session.completions("(defat") == ("defat", ["defatom"])


def test_completion_of_commands_names_after_show_and_files_after_load(
    session: Session, workspace: Path
) -> None:
    assert session.completions(":t") == (":t", [":tasks", ":trace"])
    assert session.completions(":")[1][:2] == [":doc", ":env"]
    assert session.completions(":show str")[1][:1] == ["str"]
    (workspace / "prog.sexp").write_text("1", encoding="utf-8")
    (workspace / "progs").mkdir()
    assert session.completions(":load pro") == ("pro", ["prog.sexp", "progs/"])
    assert session.completions(":reset x") == ("", [])


def test_no_completion_for_nothing_typed_or_inside_a_string(session: Session) -> None:
    assert session.completions("(") == ("", [])
    assert session.completions('(print "car') == ("car", [])
    assert session.completions("(list :ca")[1] == []  # keywords are not names


def test_completion_of_keyword_arguments_a_task_or_procedure_takes(session: Session, workspace: Path) -> None:
    """`(task :<Tab>` offers the task's inputs, `(refine :<Tab>` its keys, a closure's &key
    parameters, in the order declared; keys the call gives already are not offered again."""
    (workspace / "tasks").mkdir()
    (workspace / "tasks" / "describe.xml").write_text(
        '<task name="write-description" type="atomic"><description>Describe</description>'
        "<instructions>Describe {{product}} in {{words}} words.</instructions><inputs>"
        '<input name="product" type="string"/><input name="words" type="integer"/></inputs></task>',
        encoding="utf-8",
    )
    session.reset()  # loads ./tasks
    assert session.completions("(write-description :") == (":", [":product", ":words"])
    assert session.completions('(write-description :product "pen" :') == (":", [":words"])
    keys = [":director", ":evaluator", ":input", ":max-iterations", ":threshold"]
    assert session.completions("(refine :") == (":", keys)
    assert session.completions("(refine :director d :m") == (":m", [":max-iterations"])
    assert session.completions("(refine :director") == (":director", [":director"])
    assert session.completions("(pmap f xs :") == (":", [":concurrency"])
    shown(session, GREET)
    assert session.completions("(greet :wh") == (":wh", [":who"])
    shown(session, "(define (fetch url &key (retries 3) timeout) url)")
    assert session.completions('(fetch "u" :') == (":", [":retries", ":timeout"])
    assert session.completions("(let ((x (fetch :") == (":", [":retries", ":timeout"])
    assert session.completions("(fetch (list 1 2) :r") == (":r", [":retries"])
    for outside in ("(list (fetch 1) :", "(fetch :retries 1 :timeout 2 :", '(fetch ":', "(car :", "(nope :"):
        assert session.completions(outside)[1] == [], outside


def test_the_signature_of_the_call_being_typed(session: Session) -> None:
    assert session.signature("(map ") == "(map f xs ys...)"
    assert session.signature("(reduce + (map inc ") == "(map f xs ys...)"
    assert session.signature("(reduce + (map inc xs) ") == "(reduce f init xs)   (reduce f xs)"
    assert session.signature("(refine :dir").startswith("(refine :director d :evaluator e")
    shown(session, "(define (twice f &optional (n 2)) f)")
    assert session.signature("(twice ") == "(twice f &optional (n 2))"
    for outside in ("", "(map", "(+ 1 2)", '(print "(map ', "(nothing-bound ", "; (map "):
        assert session.signature(outside) == "", outside


def test_doc_prints_what_help_prints(session: Session) -> None:
    docs = session.runtime.docs()
    assert shown(session, ":doc refine") == render_doc(docs["refine"])
    assert shown(session, ":doc if") == render_doc(docs["if"])
    shown(session, GREET)
    assert shown(session, ":doc greet").startswith("greet (template)\n  (greet :who string)")
    word, names = session.completions(":doc refi")
    assert word == "refi" and names[0] == "refine" and all(name.startswith("refi") for name in names)


def test_doc_errors(session: Session) -> None:
    assert failed(session, ":doc") == "error: :doc expects a name (:doc NAME)"
    assert failed(session, ":doc mapp").startswith("error: no documentation for 'mapp'; did you mean 'map'")


def test_completion_reads_a_long_line_at_once(session: Session) -> None:
    """The word before the cursor is found by a scan back, not a pattern that retries from every
    start: a 200,000-character word then one parenthesis took minutes (SPEC §10.1)."""
    line = "a" * 200_000 + "("
    started = time.monotonic()
    assert session.completions(line) == ("", [])
    assert session.completions("(" + "b" * 200_000)[0] == "b" * 200_000
    assert time.monotonic() - started < 30  # the pattern took minutes; a scan, milliseconds


def test_starting_a_session_and_its_shell_imports_no_model_library(workspace: Path) -> None:
    code = (
        "import sys\n"
        "from sexp_tasks.repl.session import Session\n"
        "from sexp_tasks.repl import shell\n"
        "s = Session()\n"
        "s.submit('(+ 1 2)'); s.completions('(ma')\n"
        "print(sorted(m for m in ('litellm', 'tiktoken') if m in sys.modules))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=workspace, env=env, capture_output=True, text=True,
        timeout=scaled(60),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"


# :load is confined as (load) is (issue 19: 24) ---------------------------------------------------


def test_load_command_is_confined_to_the_workspace_as_load_is(session: Session, workspace: Path) -> None:
    outside = workspace.parent / "outside.sexp"
    outside.write_text("(define stolen 1)\n", encoding="utf-8")
    (workspace / "link.sexp").symlink_to(outside)
    for path in ("../outside.sexp", str(outside), "link.sexp"):
        expected = message_of(failed(session, f'(load "{path}")'))
        assert expected == f"error: load: '{path}' is outside the workspace ({workspace.resolve()})"
        assert failed(session, f":load {path}") == expected
    assert "stolen" in failed(session, "stolen")  # unbound: nothing ran


def test_load_command_refuses_files_that_hold_secrets(session: Session, workspace: Path) -> None:
    (workspace / ".env").write_text("OPENAI_API_KEY=sk-test-0123456789abcdef\n", encoding="utf-8")
    assert failed(session, ":load .env") == message_of(failed(session, '(load ".env")'))
    assert "holds secrets" in failed(session, ":load .env")


def message_of(error: str) -> str:
    """`error: message` of a rendered error, without its position, source line and caret."""
    return "error: " + error.partition(" error: ")[2].splitlines()[0]


def test_load_command_refuses_a_file_larger_than_a_program_may_be(session: Session, workspace: Path) -> None:
    with open(workspace / "big.sexp", "wb") as file:
        file.truncate(8 * 1024 * 1024 + 1)
    assert failed(session, ":load big.sexp") == "error: load: 'big.sexp' is larger than 8388608 bytes"
