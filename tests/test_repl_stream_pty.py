"""The REPL prints a task call's answer as it arrives (SPEC §11.3, issue 21 point 1), and Ctrl-C
during the stream cancels the call within half a second, the session and its definitions kept.
In a real pseudo-terminal, against the local SSE server."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from conftest import scaled, spawn_sexp_pty
from llm_server import LLMServer, Scripted
from test_stream_display import screen

PROMPT = "sexp>"
GREET = '(defatom greet (params (name string)) (instructions "Greet {{name}}"))'


def spawn(workspace: Path, server: LLMServer, transport: str, *args: str) -> pexpect.spawn:
    env = {
        "SEXP_LLM_TRANSPORT": transport,
        "TERM": "xterm",
        "PROMPT_TOOLKIT_NO_CPR": "1",
        "SEXP_API_BASE": server.base_url,
        "SEXP_MODEL": "openai/test-model",
        "OPENAI_API_KEY": "sk-fake-repl-stream",
    }
    child = spawn_sexp_pty(*args, cwd=workspace, env=env, timeout=60, dimensions=(40, 120))
    child.expect(PROMPT)
    return child


@pytest.fixture(params=["sync", "async"])
def repl(request: pytest.FixtureRequest, workspace: Path, server: LLMServer) -> Iterator[pexpect.spawn]:
    """The REPL, its model calls over each transport (handler/llm.py: a stream read in the
    evaluating thread, or awaited on the shared loop)."""
    child = spawn(workspace, server, request.param)
    yield child
    if child.isalive():
        child.terminate(force=True)


def enter(child: pexpect.spawn, text: str) -> None:
    child.send(text + "\r")


def test_the_answer_is_printed_as_it_arrives(repl: pexpect.spawn, server: LLMServer) -> None:
    enter(repl, GREET)
    repl.expect(PROMPT)
    pieces = ["<output>", "Hello", " there", ",", " world", "</output>"]
    server.script(Scripted(pieces=pieces, chunk_delay=scaled(0.3)))
    enter(repl, '(task-content (greet "you"))')
    repl.expect("greet: <output>Hello there")  # live, before the call has ended
    assert '"Hello there, world"' not in repl.before
    repl.expect('"Hello there, world"')
    repl.expect(PROMPT)
    assert server.requests[-1].body["stream"] is True


def test_ctrl_c_mid_stream_returns_to_the_prompt_at_once_definitions_kept(
    repl: pexpect.spawn, server: LLMServer
) -> None:
    enter(repl, "(define kept 41)")
    repl.expect(PROMPT)
    enter(repl, GREET)
    repl.expect(PROMPT)
    # a long answer, a piece every tenth of a second (not scaled: what is measured is the REPL's pace)
    server.script(Scripted(pieces=["<output>", *["word "] * 400, "</output>"], chunk_delay=0.1))
    enter(repl, '(greet "you")')
    repl.expect("greet: <output>word word")  # streaming now
    repl.sendcontrol("c")
    start = time.monotonic()
    repl.expect("interrupted", timeout=scaled(3))
    repl.expect(PROMPT, timeout=scaled(3))
    took = time.monotonic() - start
    assert took < scaled(0.5), f"Ctrl-C took {took:.3f} s to give the prompt back"
    print(f"\nCtrl-C mid-stream: the prompt back after {took * 1000:.0f} ms")
    server.script("<output>again</output>")
    enter(repl, "(+ kept 1)")
    repl.expect("42")
    repl.expect(PROMPT)
    enter(repl, '(task-content (greet "me"))')
    repl.expect('"again"')
    repl.expect(PROMPT)
    after = repl.before
    assert "word" not in "".join(screen(after))  # the interrupted call draws nothing more
    enter(repl, ":quit")
    repl.expect(pexpect.EOF)


def test_no_stream_shows_the_value_alone(workspace: Path, server: LLMServer) -> None:
    child = spawn(workspace, server, "sync", "--no-stream")
    try:
        enter(child, GREET)
        child.expect(PROMPT)
        server.script(Scripted(content="<output>Hello</output>", chunk_delay=scaled(0.1)))
        enter(child, '(task-content (greet "you"))')
        child.expect('"Hello"')
        assert "greet:" not in child.before
        child.expect(PROMPT)
        assert "stream" not in server.requests[-1].body
    finally:
        child.terminate(force=True)
