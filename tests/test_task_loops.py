"""Loops over tasks (SPEC §2.7, §9 Loops) where golden files cannot reach: tasks answered by mock
models through litellm, results built in Python, `sexp run` and `sexp check`, and properties."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import scaled, spawn_sexp_pty
from hypothesis import given, settings
from hypothesis import strategies as st

from sexp_tasks.config import Settings
from sexp_tasks.errors import SexpError, UserError
from sexp_tasks.lang.interpreter import Interpreter
from sexp_tasks.lang.printer import to_repr
from sexp_tasks.lang.values import Primitive
from sexp_tasks.results import FAILED, ScriptResult, TaskError, TaskResult
from sexp_tasks.runtime import Runtime
from sexp_tasks.tasks.forms.loop_support import evaluation_succeeded
from sexp_tasks.tasks.forms.task_loops import (
    DIRECTOR_EVALUATOR,
    ITERATIVE,
    LOOP_CONFIG,
    default_decision,
    loop_progress,
)

Cli = Callable[..., tuple[int, str, str]]  # the `cli` fixture of conftest.py


def mock_runtime(workspace: Path, replies: list[Any]) -> Runtime:
    """A runtime whose tasks default to a mock model answering `replies` in order."""
    path = workspace / "replies.json"
    path.write_text(json.dumps(replies), encoding="utf-8")
    settings = Settings(workspace=str(workspace), model="mock/test", mock_responses=str(path))
    return Runtime(settings, out=io.StringIO(), err=io.StringIO())


@pytest.fixture
def prompts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The user message of every model call, in order (the calls still go through litellm)."""
    from sexp_tasks.handler import llm

    seen: list[str] = []
    complete = llm.complete

    def spy(request: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(next(m["content"] for m in request.messages if m["role"] == "user"))
        return complete(request, *args, **kwargs)

    monkeypatch.setattr(llm, "complete", spy)
    return seen


WRITER = '(defatom write (params input) (instructions "Write about {{input}}"))'
JUDGE = '(defatom judge (params draft) (instructions "Judge {{draft}}") (output_format (type "json")))'


# Tasks on mock models ---------------------------------------------------------------------------


def test_task_phases_and_the_default_controller(workspace: Path, prompts: list[str]) -> None:
    runtime = mock_runtime(
        workspace,
        [
            "<output>draft one</output>",
            '<output>{"success": false, "feedback": "too short"}</output>',
            "<output>draft two</output>",
            '<output>{"success": true}</output>',
            "<output>never asked</output>",
        ],
    )
    result = runtime.run_source(
        f"""{WRITER} {JUDGE}
        (director-evaluator-loop
          (max-iterations 3)
          (initial-director-input "owls")
          (director write)
          (evaluator judge))"""
    )
    assert isinstance(result, TaskResult) and result.content == "draft two"
    assert len(prompts) == 4  # stopped once the evaluation said success
    assert prompts[0] == "Write about owls"
    assert prompts[1] == "Judge draft one"  # the evaluator task got only `out`, as its one input
    # The default controller's next input: {"input" <previous input> "feedback" <evaluator content>}
    second = json.loads(prompts[2].removeprefix("Write about "))
    assert second == {"input": "owls", "feedback": '{"success": false, "feedback": "too short"}'}
    assert runtime.err.getvalue() == ""


def test_a_verdict_in_the_notes_stops_the_loop(workspace: Path, prompts: list[str]) -> None:
    runtime = mock_runtime(
        workspace,
        [
            "<output>v1</output>",
            "<output>not yet</output><notes><success>false</success></notes>",
            "<output>v2</output>",
            "<output>fine</output><notes><success>true</success></notes>",
        ],
    )
    result = runtime.run_source(
        f"""{WRITER}
        (defatom review (params draft) (instructions "Review {{{{draft}}}}"))
        (director-evaluator-loop
          (max-iterations 5)
          (initial-director-input "owls")
          (director write)
          (evaluator review))"""
    )
    assert to_repr(result) == '#<TaskResult COMPLETE "v2">'
    assert len(prompts) == 4
    assert json.loads(prompts[2].removeprefix("Write about ")) == {"input": "owls", "feedback": "not yet"}


def test_iterative_loop_with_task_executor(workspace: Path, prompts: list[str]) -> None:
    runtime = mock_runtime(workspace, ["<output>attempt 1</output>", "<output>attempt 2</output>"])
    result = runtime.run_source(
        f"""{WRITER}
        (iterative-loop
          (max-iterations 2)
          (initial-input "owls")
          (test-command "true")
          (executor write)
          (validator (lambda (cmd i) (= i 2)))
          (controller (lambda (out ok input i)
                        (if ok (list 'stop (task-content out)) (list 'continue (task-content out))))))"""
    )
    assert result == "attempt 2"
    assert prompts == ["Write about owls", "Write about attempt 1"]


REFINE_DIRECTOR = (
    '(defatom draft (params input feedback) (instructions "Write {{input}}. Feedback: [{{feedback}}]"))'
)
GRADER = '(defatom grade (params attempt) (instructions "Grade {{attempt}}") (output_format (type "json")))'


def test_refine_with_task_director_and_task_evaluator(workspace: Path, prompts: list[str]) -> None:
    runtime = mock_runtime(
        workspace,
        [
            "<output>v1</output>",
            '<output>{"score": 0.4, "feedback": "add detail"}</output>',
            "<output>v2</output>",
            '<output>{"score": 0.9, "feedback": "better"}</output>',
            "<output>v3</output>",
            '<output>{"score": 0.7, "feedback": "worse"}</output>',
        ],
    )
    result = runtime.run_source(
        f'{REFINE_DIRECTOR} {GRADER} (refine :director draft :evaluator grade :input "a poem")'
    )
    assert result == {
        "success": False,
        "best": "v2",
        "score": 0.9,
        "attempts": [
            {"attempt": "v1", "score": 0.4, "feedback": "add detail"},
            {"attempt": "v2", "score": 0.9, "feedback": "better"},
            {"attempt": "v3", "score": 0.7, "feedback": "worse"},
        ],
    }
    assert prompts == [
        "Write a poem. Feedback: []",  # no feedback before the first attempt
        "Grade v1",
        "Write a poem. Feedback: [add detail]",
        "Grade v2",
        "Write a poem. Feedback: [better]",
        "Grade v3",
    ]


def test_refine_stops_at_the_threshold_with_a_one_input_task(workspace: Path, prompts: list[str]) -> None:
    runtime = mock_runtime(
        workspace,
        [
            "<output>v1</output>",
            '<output>{"score": 0.6}</output>',
            "<output>v2</output>",
            "<output>ignored</output>",
        ],
    )
    result = runtime.run_source(
        f"""{WRITER}
        (defatom check (params text) (instructions "Check {{{{text}}}}") (output_format (type "json")))
        (refine :director write :evaluator check :input "owls" :threshold 0.5 :max-iterations 4)"""
    )
    assert result["success"] is True and result["best"] == "v1" and result["score"] == 0.6
    # a director without a feedback input gets only `input`; an evaluator without `attempt` gets it first
    assert prompts == ["Write about owls", "Check v1"]


def test_refine_evaluator_verdict_in_notes(workspace: Path) -> None:
    runtime = mock_runtime(
        workspace,
        [
            "<output>v1</output>",
            "<output>needs a title</output><notes><success>false</success></notes>",
            "<output>v2</output>",
            "<output>good</output><notes><success>true</success><feedback>ship it</feedback></notes>",
        ],
    )
    result = runtime.run_source(
        f"""{REFINE_DIRECTOR}
        (defatom critic (params attempt) (instructions "Critique {{{{attempt}}}}"))
        (refine :director draft :evaluator critic :input "x")"""
    )
    assert result["success"] is True and result["best"] == "v2" and result["score"] == 1
    assert [a["feedback"] for a in result["attempts"]] == ["needs a title", "ship it"]


TOPIC_WRITER = (
    '(defatom topic-writer (params topic feedback) (instructions "Write about {{topic}} [{{feedback}}]"))'
)


def test_refine_ends_with_a_task_director_that_cannot_be_called(workspace: Path, prompts: list[str]) -> None:
    """SPEC §10.1: refine-attempt passes only :feedback to a director lacking `input`; the FAILED
    result is refine's value, named by phase and iteration, not an empty best attempt."""
    runtime = mock_runtime(workspace, ["<output>never asked</output>"])
    result = runtime.run_source(
        f'{TOPIC_WRITER} (refine :director topic-writer :evaluator (lambda (a) 0.5) :input "owls")'
    )
    assert isinstance(result, TaskResult) and result.status == FAILED, to_repr(result)
    assert result.error is not None and result.error.reason == "input_validation_failure"
    assert result.error.message == (
        "refine: director failed in iteration 1: task 'topic-writer': missing required input 'topic'"
    )
    assert result.notes["loop"] == {"form": "refine", "phase": "director", "iteration": 1}
    assert prompts == []  # no model call was made


def test_refine_ends_with_a_failed_task_evaluation(workspace: Path, prompts: list[str]) -> None:
    runtime = mock_runtime(
        workspace,
        [
            "<output>v1</output>",
            '<output>{"score": 0.2, "feedback": "more"}</output>',
            "<output>v2</output>",
            "<output>not json at all</output>",
        ],
    )
    result = runtime.run_source(
        f'{REFINE_DIRECTOR} {GRADER} (refine :director draft :evaluator grade :input "x")'
    )
    assert isinstance(result, TaskResult) and result.status == FAILED
    assert result.error is not None and result.error.reason == "output_format_failure"
    assert result.error.message.startswith("refine: evaluator failed in iteration 2: ")
    assert len(prompts) == 4


def test_a_failed_task_director_ends_director_evaluator_loop(workspace: Path, prompts: list[str]) -> None:
    runtime = mock_runtime(workspace, ["<output>v1</output>", '<output>{"success": false}</output>'])
    result = runtime.run_source(
        f"""{JUDGE}
        (defatom count-up (params (n int)) (instructions "Count from {{{{n}}}}"))
        (director-evaluator-loop
          (max-iterations 3)
          (initial-director-input 1)
          (director count-up)
          (evaluator judge))"""
    )
    assert isinstance(result, TaskResult) and result.status == FAILED
    assert result.error is not None and result.error.message == (
        "director-evaluator-loop: director failed in iteration 2: task 'count-up': input 'n' must be integer,"
        " got dict"
    )
    assert prompts == ["Count from 1", "Judge v1"]  # the second director call failed before any request


def test_sexp_run_reports_refine_failing_with_its_phase(cli: Cli, workspace: Path) -> None:
    (workspace / "prog.sexp").write_text(
        f'{TOPIC_WRITER}\n(refine :director topic-writer :evaluator (lambda (a) 1) :input "owls")\n'
    )
    code, out, err = cli("run", "prog.sexp", "-q", "--model", "mock/x")
    assert (code, out) == (1, ""), err
    assert (
        "error: TASK_FAILURE input_validation_failure: refine: director failed in iteration 1:"
        " task 'topic-writer': missing required input 'topic'"
    ) in err


def test_a_plain_answer_is_noted_every_call_but_warned_once_per_template(workspace: Path) -> None:
    """SPEC §10.1: six plain answers in a three-step loop give one stderr warning per template."""
    runtime = mock_runtime(workspace, ["a plain answer"] * 6)
    result = runtime.run_source(
        f"""{WRITER}
        (defatom review (params draft) (instructions "Review {{{{draft}}}}"))
        (define seen '())
        (director-evaluator-loop
          (max-iterations 3)
          (initial-director-input "owls")
          (director (lambda (x i) (let ((r (write x))) (set! seen (cons r seen)) r)))
          (evaluator (lambda (out plan i) (let ((r (review out))) (set! seen (cons r seen)) false))))
        seen"""
    )
    assert len(result) == 6
    assert all(any("no <output> section" in w for w in r.notes["warnings"]) for r in result)
    warned = [line for line in runtime.err.getvalue().splitlines() if "no <output> section" in line]
    assert [line.split(":")[1].strip() for line in warned] == ["write", "review"], warned


# Results built in Python ---------------------------------------------------------------------


def script(
    exit_code: int | None, stdout: str = "", stderr: str = "", status: str = "COMPLETE"
) -> ScriptResult:
    return ScriptResult(content=stdout, status=status, stdout=stdout, stderr=stderr, exit_code=exit_code)


@pytest.mark.parametrize(
    ("value", "succeeded"),
    [
        (script(0), True),
        (script(1, "1 failed"), False),
        (script(None, status=FAILED), False),
        (TaskResult("x", notes={"success": True}), True),
        (TaskResult("x", notes={"success": False}, parsed_content={"success": True}), True),
        (TaskResult("x", parsed_content={"success": "true"}), True),
        (TaskResult("x", parsed_content={"success": "false"}), False),
        (TaskResult("x"), False),
        (TaskResult("", status=FAILED, error=TaskError("TASK_FAILURE", "no")), False),
        (True, True),
        ("text", True),
        ({"success": False}, True),  # any true value that is not a TaskResult
        (0, False),
        (None, False),
        ([], False),
    ],
)
def test_what_counts_as_a_successful_evaluation(value: Any, succeeded: bool) -> None:
    assert evaluation_succeeded(value) is succeeded


def test_the_default_controller_continues_with_input_and_feedback() -> None:
    assert default_decision(script(0, "ok"), "in", "out") == ("stop", "out")
    assert default_decision(script(2, "2 failed"), "in", "out") == (
        "continue",
        {"input": "in", "feedback": "2 failed"},
    )
    assert default_decision(TaskResult("meh"), "in", "out") == (
        "continue",
        {"input": "in", "feedback": "meh"},
    )
    assert default_decision(False, {"a": 1}, "out") == ("continue", {"input": {"a": 1}, "feedback": False})


def scripted_tests(runtime: Runtime, results: list[ScriptResult]) -> None:
    """Bind `run-tests`: a procedure returning the given script results in turn."""
    pending = list(results)
    runtime.define("run-tests", Primitive("run-tests", lambda *args: pending.pop(0), 0, None, "test double"))


def test_a_script_evaluator_drives_the_default_controller(runtime: Runtime) -> None:
    scripted_tests(runtime, [script(1, "1 failed"), script(1, "still failing"), script(0, "3 passed")])
    result = runtime.run_source(
        """(director-evaluator-loop
             (max-iterations 5)
             (initial-director-input "fix it")
             (director (lambda (input i) (print input) i))
             (evaluator run-tests))"""
    )
    assert result == 3
    assert runtime.out.getvalue().splitlines() == [
        "fix it",
        '{"input" "fix it" "feedback" "1 failed"}',
        '{"input" {"input" "fix it" "feedback" "1 failed"} "feedback" "still failing"}',
    ]


def test_refine_with_a_script_evaluator(runtime: Runtime) -> None:
    scripted_tests(runtime, [script(1, "F.", "AssertionError"), script(0, "..")])
    result = runtime.run_source(
        """(refine :director (lambda (input feedback) (if (null? feedback) "v1" "v2"))
                   :evaluator run-tests)"""
    )
    assert result == {
        "success": True,
        "best": "v2",
        "score": 1,
        "attempts": [
            {"attempt": "v1", "score": 0, "feedback": "F.\nAssertionError"},
            {"attempt": "v2", "score": 1, "feedback": ".."},
        ],
    }


# The command line ---------------------------------------------------------------------------------

PROGRAM = """
(defatom write (params input) (instructions "Write about {{input}}") (model "mock/demo"))
(define result
  (refine :director write
          :evaluator (lambda (attempt) (string-contains? attempt "2"))
          :input "owls"))
(print "attempts:" (length (get result "attempts")))
(get result "best")
"""


@pytest.mark.slow
def test_sexp_run_runs_refine_on_a_mock_model(cli: Cli, workspace: Path) -> None:
    (workspace / "replies.json").write_text(json.dumps(["<output>v1</output>", "<output>v2</output>"]))
    (workspace / "prog.sexp").write_text(PROGRAM)
    code, out, err = cli("run", "prog.sexp", "--mock-responses", "replies.json")
    assert (code, out) == (0, 'attempts: 2\n"v2"\n'), err


def test_sexp_run_reports_a_phase_error_with_its_position(cli: Cli, workspace: Path) -> None:
    (workspace / "prog.sexp").write_text(
        '(director-evaluator-loop\n  (max-iterations 2)\n  (initial-director-input "x")\n'
        '  (director (lambda (x i) x))\n  (evaluator (lambda (out plan i) (error "judge down"))))\n'
    )
    code, out, err = cli("run", "prog.sexp", "-q")
    assert (code, out) == (1, "")
    assert (
        "prog.sexp:5:35: error: director-evaluator-loop: evaluator failed in iteration 1: judge down" in err
    )


def test_sexp_run_refuses_a_malformed_loop(cli: Cli, workspace: Path) -> None:
    (workspace / "prog.sexp").write_text('(print "start")\n(iterative-loop (max-iterations 1) (bogus 2))\n')
    code, out, err = cli("run", "prog.sexp", "-q")
    assert (code, out) == (1, "")
    assert "prog.sexp:2:36: error: iterative-loop: unknown clause (bogus ...)" in err


def test_sexp_check_accepts_the_loop_forms(cli: Cli, workspace: Path) -> None:
    (workspace / "prog.sexp").write_text(
        """(director-evaluator-loop
             (max-iterations 3) (initial-director-input "x")
             (director (lambda (x i) x)) (executor (lambda (p i) p))
             (evaluator (lambda (out plan i) true)) (controller (lambda (fb p o i) (list 'stop o))))
           (iterative-loop
             (max-iterations 3) (initial-input 0) (test-command "true")
             (executor (lambda (x i) x)) (validator (lambda (c i) true))
             (controller (lambda (o v x i) (list 'stop o))))
           (refine :director (lambda (x fb) x) :evaluator (lambda (a) true))"""
    )
    code, out, err = cli("check", "prog.sexp")
    assert code == 0, out + err


def test_sexp_check_still_reports_calls_inside_clauses(cli: Cli, workspace: Path) -> None:
    (workspace / "prog.sexp").write_text(
        """(director-evaluator-loop
             (max-iterations (no-such-procedure)) (initial-director-input "x")
             (director (lambda (x i) (car x i))) (evaluator (lambda (out plan i) true)))"""
    )
    code, out, err = cli("check", "prog.sexp")
    assert code == 1
    assert "unknown procedure 'no-such-procedure'" in out + err
    assert "car: expected 1 argument, got 2" in out + err


def test_each_loop_form_is_registered_under_its_shape_s_name_with_every_clause(runtime: Runtime) -> None:
    shapes = {form: runtime.compiler.forms[form.name] for form in (DIRECTOR_EVALUATOR, ITERATIVE)}
    assert {shape.name: form.name for shape, form in shapes.items()} == {
        "director-evaluator-loop": "director-evaluator-loop",
        "iterative-loop": "iterative-loop",
    }
    assert DIRECTOR_EVALUATOR.clauses == (
        "max-iterations",
        "initial-director-input",
        "director",
        "executor",
        "evaluator",
        "controller",
    )
    assert set(ITERATIVE.clauses) == {
        "max-iterations",
        "initial-input",
        "test-command",
        "executor",
        "validator",
        "controller",
    }


def test_without_a_task_system_a_loop_s_progress_is_shown_nowhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a runtime's task system says where progress goes (and whether it is quiet): without
    one, nothing is drawn, not even on a terminal's stderr."""
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with loop_progress(Interpreter().compiler, "iterative-loop", 3) as bar:
        bar.advance(3)
    assert bar.enabled is False
    assert terminal.getvalue() == ""


# Properties ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    """One runtime for every example of a property (a fresh one per example costs more than the loop)."""
    workspace = tmp_path_factory.mktemp("loops")
    return Runtime(Settings(workspace=str(workspace)), out=io.StringIO(), err=io.StringIO())


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 8), first_success=st.integers(1, 12))
def test_the_loop_runs_until_the_first_success_or_n(shared: Runtime, n: int, first_success: int) -> None:
    program = f"""
    (define calls '())
    (define value
      (director-evaluator-loop
        (max-iterations {n})
        (initial-director-input 0)
        (director (lambda (input i) (set! calls (cons i calls)) (* i 10)))
        (evaluator (lambda (out plan i) (>= i {first_success})))))
    (list (reverse calls) value)
    """
    calls, value = shared.run_source(program)
    runs = min(n, first_success)
    assert calls == list(range(1, runs + 1))
    assert value == (runs * 10 if runs else None)
    assert LOOP_CONFIG not in shared.globals.values


@settings(max_examples=40, deadline=None)
@given(
    scores=st.lists(st.integers(0, 10), min_size=1, max_size=6),
    n=st.integers(0, 8),
    threshold=st.integers(1, 10),
)
def test_refine_keeps_the_best_of_the_attempts_it_made(
    shared: Runtime, scores: list[int], n: int, threshold: int
) -> None:
    table = " ".join(map(str, scores))
    program = f"""
    (refine :director (lambda (input feedback) (if (null? feedback) 0 (+ feedback 1)))
            :evaluator (lambda (k) (dict "score" (nth (list {table}) (mod k {len(scores)})) "feedback" k))
            :max-iterations {n}
            :threshold {threshold})
    """
    result = shared.run_source(program)
    made = [scores[k % len(scores)] for k in range(n)]
    first_pass = next((k for k, s in enumerate(made) if s >= threshold), None)
    tried = made if first_pass is None else made[: first_pass + 1]
    assert [a["score"] for a in result["attempts"]] == tried
    assert result["success"] is (first_pass is not None)
    if tried:
        assert result["score"] == max(tried) and result["best"] == tried.index(max(tried))
    else:
        assert result["best"] is None and result["score"] is None


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(1, 5),
    failing=st.integers(1, 5),
    phase=st.sampled_from(["director", "executor", "evaluator"]),
)
def test_a_phase_error_names_phase_and_iteration_and_unbinds_the_config(
    shared: Runtime, n: int, failing: int, phase: str
) -> None:
    fail = f'(when (= i {failing}) (error "down"))'
    phases = {
        "director": f"(lambda (x i) {fail if phase == 'director' else ''} i)",
        "executor": f"(lambda (p i) {fail if phase == 'executor' else ''} p)",
        "evaluator": f"(lambda (o p i) {fail if phase == 'evaluator' else ''} false)",
    }
    program = f"""(director-evaluator-loop (max-iterations {n}) (initial-director-input 0)
      (director {phases["director"]}) (executor {phases["executor"]}) (evaluator {phases["evaluator"]}))"""
    if failing > n:
        assert shared.run_source(program) == n
    else:
        with pytest.raises(UserError) as caught:
            shared.run_source(program)
        assert caught.value.message == f"director-evaluator-loop: {phase} failed in iteration {failing}: down"
    assert LOOP_CONFIG not in shared.globals.values


def test_a_caught_phase_error_is_the_dict_try_gives(runtime: Runtime) -> None:
    value = runtime.run_source(
        """(try (iterative-loop (max-iterations 2) (initial-input 0) (test-command "t")
                  (executor (lambda (x i) (+ x "a"))) (validator (lambda (c i) true))
                  (controller (lambda (o v x i) (list 'continue o))))
                (catch e e))"""
    )
    assert value["type"] == "TYPE_ERROR"
    assert value["message"].startswith("iterative-loop: executor failed in iteration 1: +")
    assert (value["line"], value["column"]) == (2, 43)  # the (+ x "a") that failed


def test_errors_are_sexp_errors_with_spans(runtime: Runtime) -> None:
    with pytest.raises(SexpError) as caught:
        runtime.run_source("\n(iterative-loop (max-iterations 1))")
    assert caught.value.span is not None and (caught.value.span.line, caught.value.span.column) == (2, 1)


@pytest.mark.parametrize(
    ("clauses", "line", "message"),
    [
        ("(max-iterations -1)\n(director car)", 2, "max-iterations must be a non-negative integer"),
        ("(max-iterations 1)\n(director 5)", 3, "director must be a procedure or a task"),
        (
            "(max-iterations 1)\n(director car)",
            3,
            "director failed in iteration 1: car: expected 1 argument, got 2",
        ),
        (
            "(max-iterations 1)\n(director list)\n(controller list)",
            4,
            "controller returned ((1 1) (1 1) (1 1) 1) in iteration 1",
        ),
    ],
)
def test_errors_point_at_the_clause_they_concern(
    runtime: Runtime, clauses: str, line: int, message: str
) -> None:
    program = (
        f"(director-evaluator-loop\n{clauses}\n(initial-director-input 1)\n(evaluator (lambda (o p i) o)))"
    )
    with pytest.raises(SexpError) as caught:
        runtime.run_source(program)
    assert message in caught.value.message
    assert caught.value.span is not None and (caught.value.span.line, caught.value.span.column) == (line, 1)


LOOP_PROGRAM = """
(define (slow x) (loop 200000 x))
(director-evaluator-loop (max-iterations 4) (initial-director-input 0)
  (director (lambda (x i) (slow i)))
  (evaluator (lambda (out plan i) (= i 4))))
"""


def test_loops_show_progress_on_a_terminal_and_nothing_when_piped(workspace: Path, cli: Cli) -> None:
    import pexpect

    (workspace / "prog.sexp").write_text(LOOP_PROGRAM)
    child = spawn_sexp_pty("run", "prog.sexp", cwd=workspace)
    child.expect(r"director-evaluator-loop \[[#-]+\] \d/4", timeout=scaled(60))
    child.expect(pexpect.EOF, timeout=scaled(60))
    child.close()
    assert child.exitstatus == 0 and child.before.endswith("4\r\n")
    code, out, err = cli("run", "prog.sexp")
    assert (code, out, err) == (0, "4\n", "")


class Terminal(io.StringIO):
    """A captured stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_a_loops_progress_goes_to_the_runtimes_error_stream(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    terminal = Terminal()
    runtime = Runtime(Settings(workspace=str(workspace)), err=terminal)
    assert runtime.run_source(LOOP_PROGRAM) == 4
    assert "director-evaluator-loop [" in terminal.getvalue()
    assert capsys.readouterr().err == ""


# *loop-config* is dynamically bound: a binding belongs to the loop's thread and the pmap elements it
# starts, so loops running at once never see each other's settings.

AT_ONCE = """
(pmap (lambda (n)
        (iterative-loop
          (max-iterations n)
          (initial-input n)
          (test-command "t")
          (executor (lambda (x i)
                      (system:run_script (command "sleep 0.3"))  ; the other loops bind theirs meanwhile
                      (get-field *loop-config* "max-iterations")))
          (validator (lambda (cmd i) true))
          (controller (lambda (out ok x i)
                        (list 'stop (list out (get-field *loop-config* "initial-input")))))))
      (list 1 2 3 4)
      :concurrency 4)
"""


def test_loops_running_at_once_under_pmap_each_see_their_own_config(runtime: Runtime) -> None:
    assert runtime.run_source(AT_ONCE) == [[1, 1], [2, 2], [3, 3], [4, 4]]
    assert LOOP_CONFIG not in runtime.globals.values


def test_set_of_loop_config_changes_the_binding_for_the_rest_of_the_loop_only(runtime: Runtime) -> None:
    program = """
    (define (settings) (get-field *loop-config* "max-iterations"))
    (director-evaluator-loop
      (max-iterations 3)
      (initial-director-input 0)
      (director (lambda (x i)
                  (when (= i 1) (set! *loop-config* (list (list 'max-iterations 99))))
                  (settings)))
      (evaluator (lambda (out plan i) (= i 2))))
    """
    assert runtime.run_source(program) == 99
    with pytest.raises(SexpError) as caught:
        runtime.run_source("*loop-config*")
    assert "unbound symbol '*loop-config*'" in caught.value.message
    with pytest.raises(SexpError) as caught:
        runtime.run_source("(set! *loop-config* 1)")
    assert "'*loop-config*' is not bound" in caught.value.message


def test_a_global_loop_config_is_shadowed_inside_a_loop_and_seen_again_after(runtime: Runtime) -> None:
    program = """
    (define *loop-config* "mine")
    (define inside
      (director-evaluator-loop
        (max-iterations 1)
        (initial-director-input "x")
        (director (lambda (x i) (get-field *loop-config* "initial-director-input")))
        (evaluator (lambda (out plan i) true))))
    (list inside *loop-config*)
    """
    assert runtime.run_source(program) == ["x", "mine"]
