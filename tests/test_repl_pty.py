"""The REPL in a pseudo-terminal (SPEC §8): prompt_toolkit's shell around the session, typed into."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pexpect
import pytest
from conftest import Cli, scaled, spawn_sexp_pty
from llm_server import LLMServer, Scripted

from sexp_tasks.process.launcher import descendants

PROMPT = "sexp>"
# Output starts on a fresh line, or right after the shell turns bracketed paste off, or where the
# live line of a streamed answer was erased (a carriage return).
START_OF_OUTPUT = r"(?:\n|\x1b\[\?2004l|\r)"


def spawn(workspace: Path, **extra_env: str) -> pexpect.spawn:
    """`python -m sexp_tasks` (the REPL) in a pty, HOME and XDG dirs already pointed at the test's."""
    env = dict(TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", **extra_env)
    child = spawn_sexp_pty(cwd=workspace, env=env, timeout=30, dimensions=(40, 120))
    child.expect(PROMPT)
    return child


@pytest.fixture
def repl(workspace: Path) -> Iterator[pexpect.spawn]:
    child = spawn(workspace)
    yield child
    if child.isalive():
        child.terminate(force=True)


def enter(child: pexpect.spawn, text: str) -> None:
    child.send(text + "\r")


def answer(child: pexpect.spawn, text: str) -> None:
    """Expect text alone on an output line, then the next prompt."""
    child.expect(START_OF_OUTPUT + re.escape(text) + r"\r\n")
    child.expect(PROMPT)


def ends(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    child.close()
    return int(child.exitstatus)


def test_expressions_definitions_and_errors(repl: pexpect.spawn) -> None:
    enter(repl, "(define (square x) (* x x))")
    answer(repl, "square")
    enter(repl, "(square 12)")
    answer(repl, "144")
    enter(repl, "nil")  # nil is not echoed: the next thing is the prompt
    repl.expect(PROMPT)
    enter(repl, "(+ 1 (car 1 2))")
    repl.expect(
        START_OF_OUTPUT
        + r"<repl>:1:6: error: car: expected 1 argument, got 2\r\n  \(\+ 1 \(car 1 2\)\)\r\n       \^"
    )
    repl.expect(PROMPT)
    enter(repl, "(square 3)")  # the session went on, definitions kept
    answer(repl, "9")
    enter(repl, ":quit")
    assert ends(repl) == 0


def test_multi_line_input_continues_until_the_lists_close(repl: pexpect.spawn) -> None:
    enter(repl, '(list "(" 1')
    repl.expect(r"\.\.\.")
    enter(repl, "(+ 1")
    repl.expect(r"\.\.\.")
    enter(repl, "1))")
    answer(repl, '("(" 1 2)')


def test_ctrl_c_clears_the_input(repl: pexpect.spawn) -> None:
    repl.send("(+ 100")
    repl.sendcontrol("c")
    repl.expect(PROMPT)
    enter(repl, "(+ 5 5)")
    answer(repl, "10")
    repl.send("(+ 1\r2")  # a continuation line too
    repl.sendcontrol("c")
    repl.expect(PROMPT)
    enter(repl, "(+ 6 6)")
    answer(repl, "12")


def test_ctrl_c_interrupts_an_evaluation(repl: pexpect.spawn) -> None:
    enter(repl, "(define (spin n) (spin (+ n 1)))")
    answer(repl, "spin")
    enter(repl, "(progn (print (* 1111 7)) (spin 0))")
    repl.expect("7777")  # the evaluation is under way (the shell has handed the terminal back)
    repl.sendcontrol("c")
    repl.expect("interrupted")
    repl.expect(PROMPT)
    enter(repl, "(+ 2 2)")
    answer(repl, "4")


def sleeping(pid: int) -> list[int]:
    """The `sleep` processes below pid."""
    found = []
    for child in descendants(pid):
        try:
            if Path(f"/proc/{child}/cmdline").read_bytes().startswith(b"sleep\0"):
                found.append(child)
        except OSError:
            pass
    return found


def poll(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + scaled(seconds)
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_ctrl_c_cancels_a_waiting_script_at_once_and_the_session_goes_on(repl: pexpect.spawn) -> None:
    enter(repl, "(define kept 7)")
    answer(repl, "7")
    enter(repl, '(system:run_script (command (list "sleep" "12")))')
    poll(lambda: bool(sleeping(repl.pid)))  # the script is running: the evaluation waits on it
    repl.sendcontrol("c")
    repl.expect("interrupted", timeout=scaled(3))
    repl.expect(PROMPT)
    enter(repl, "(+ 1 2)")
    answer(repl, "3")
    enter(repl, "kept")
    answer(repl, "7")
    poll(lambda: not sleeping(repl.pid), seconds=3)  # its process group was killed


def test_ctrl_c_abandons_a_waiting_model_call_at_once_and_the_session_goes_on(workspace: Path) -> None:
    server = LLMServer().start()
    server.script(Scripted(content="<output>late</output>", delay=20))
    child = spawn(
        workspace,
        SEXP_API_BASE=server.base_url,
        SEXP_MODEL="openai/test-model",
        OPENAI_API_KEY="sk-test-not-a-real-key",
    )
    try:
        enter(child, '(defatom ask (instructions "Say hi"))')
        answer(child, "ask")
        enter(child, "(ask)")
        poll(lambda: bool(server.requests), seconds=30)  # the call is waiting for its answer
        child.sendcontrol("c")
        child.expect("interrupted", timeout=scaled(3))
        child.expect(PROMPT)
        enter(child, "(+ 1 2)")
        answer(child, "3")
        enter(child, ":quit")
        assert ends(child) == 0
    finally:
        if child.isalive():
            child.terminate(force=True)
        server.stop()


def test_tab_completes_names(repl: pexpect.spawn) -> None:
    enter(repl, "(define my-unique-name 5)")
    answer(repl, "5")
    repl.send("(+ my-uni\t")
    repl.expect("que-name")  # the completion, drawn (waiting for it before typing on)
    enter(repl, " 1)")
    answer(repl, "6")
    repl.send("(regex-fi\t")
    repl.expect("nd-all")
    enter(repl, ' "a." "abacad")')
    answer(repl, '("ab" "ac" "ad")')


def test_tab_after_a_keyword_colon_offers_the_keyword_arguments_of_the_call(repl: pexpect.spawn) -> None:
    repl.send("(refine :\t")
    repl.expect(":max-iterations")  # the menu of refine's keys, drawn
    repl.send("\t")  # picks the first, :director
    repl.expect("director")
    enter(repl, ' "x" :evaluator 1)')
    repl.expect("refine: :director must be a procedure or a task")
    repl.expect(PROMPT)


def test_ctrl_d_on_an_empty_line_exits_0(repl: pexpect.spawn) -> None:
    enter(repl, "(+ 1 2)")
    answer(repl, "3")
    repl.sendcontrol("d")
    assert ends(repl) == 0


def test_commands(repl: pexpect.spawn) -> None:
    enter(repl, ":help")
    repl.expect(":quit")
    repl.expect(PROMPT)
    enter(repl, ":nope")
    repl.expect("error: unknown command ':nope'")
    repl.expect(PROMPT)
    enter(repl, ":env")
    answer(repl, "(nothing defined yet)")


def test_history_persists_across_sessions(workspace: Path) -> None:
    first = spawn(workspace)
    enter(first, "(list 1\r2)")
    answer(first, "(1 2)")
    enter(first, "(+ 40 2)")
    answer(first, "42")
    first.sendcontrol("d")
    assert ends(first) == 0
    state = Path(os.environ["XDG_STATE_HOME"]) / "sexp" / "history"
    lines = state.read_text(encoding="utf-8").splitlines()
    assert "+(+ 40 2)" in lines and lines.index("+(list 1") + 1 == lines.index("+  2)")
    second = spawn(workspace)
    second.send("\x1b[A")  # Up: the previous session's last input
    enter(second, "")
    answer(second, "42")
    enter(second, ":quit")
    assert ends(second) == 0


def test_without_a_terminal_lines_are_read_from_stdin(cli: Cli) -> None:
    program = '(define (f x)\n  (* x 2))\n(f 21)\n(print "hi")\nnil\n(car 1 2)\n:env\n(+ 1\n'
    status, out, err = cli(stdin=program)
    assert status == 0
    assert out == "f\n42\nhi\nf  #<procedure f>\n"
    assert err.splitlines() == [
        "<repl>:1:1: error: car: expected 1 argument, got 2",
        "  (car 1 2)",
        "  ^",
        "<repl>:1:1: error: unclosed '(' opened at 1:1; expected ')' before end of input",
        "  (+ 1",
        "  ^",
    ]
    assert cli(stdin="(+ 1 2)\n:quit\n(+ 3 4)\n") == (0, "3\n", "")


def test_ctrl_c_cancels_the_scripts_a_pmap_waits_on(repl: pexpect.spawn) -> None:
    enter(repl, '(define (nap s) (system:run_script (command (list "sleep" s))))')
    answer(repl, "nap")
    enter(repl, '(pmap nap (list "12" "13" "14") :concurrency 3)')
    poll(lambda: len(sleeping(repl.pid)) == 3)  # every element waits on its script
    repl.sendcontrol("c")
    repl.expect("interrupted", timeout=scaled(3))
    repl.expect(PROMPT)
    poll(lambda: not sleeping(repl.pid), seconds=3)  # each element's process group was killed
    enter(repl, "(+ 1 2)")
    answer(repl, "3")
