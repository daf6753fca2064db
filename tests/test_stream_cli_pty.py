"""`sexp run` and `sexp eval` show each task call's answer live on a terminal (SPEC §11.3, issue 21
point 1): on stderr, under the progress line, labelled by task, erased when the call ends (the
value goes to stdout, once). Piped, -q, --no-stream or sexp.toml `stream = false`: nothing is
shown and the request is not streamed. Against the local SSE server, in a real pseudo-terminal."""

from __future__ import annotations

import time
from pathlib import Path

import pexpect
import pytest
from conftest import Cli, scaled, spawn_sexp_pty, write
from llm_server import LLMServer, Scripted
from test_stream_display import screen

GREET = '(defatom greet (params (name string)) (instructions "Greet {{name}}"))\n'
PIECES = ["<output>", "Hello", " there", ",", " world", "!", "</output>"]
VALUE = '"Hello there, world!"'


def env(server: LLMServer) -> dict[str, str]:
    return {
        "SEXP_API_BASE": server.base_url,
        "SEXP_MODEL": "openai/test-model",
        "OPENAI_API_KEY": "sk-fake-display",
        "TERM": "xterm",
    }


def slow_reply(chunk_delay: float = 0.3) -> Scripted:
    return Scripted(pieces=PIECES, content="".join(PIECES), chunk_delay=scaled(chunk_delay))


def streamed(server: LLMServer) -> list[bool]:
    """For each request the server got, whether it asked for a stream."""
    return [bool(request.body.get("stream")) for request in server.requests]


def spawn(workspace: Path, server: LLMServer, *args: str) -> pexpect.spawn:
    return spawn_sexp_pty(*args, cwd=workspace, env=env(server), timeout=60, dimensions=(24, 80))


def finish(child: pexpect.spawn) -> str:
    """What the child wrote until it ended; it ended well."""
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    return str(child.before)


@pytest.mark.parametrize("command", ["run", "eval"])
def test_the_answer_is_shown_live_labelled_then_erased_and_the_value_printed_once(
    workspace: Path, server: LLMServer, command: str
) -> None:
    write(workspace / "p.sexp", GREET + '(task-content (greet "you"))\n')
    server.script(slow_reply())
    args = ["run", "p.sexp"] if command == "run" else ["eval", (workspace / "p.sexp").read_text()]
    child = spawn(workspace, server, *args)
    child.expect("greet: <output>Hello there")  # on the screen while the call still streams
    seen = child.before + child.after
    assert server.requests and VALUE not in seen  # the call has not ended: no value yet
    child.expect(r"greet: <output>Hello there, world!")
    output = seen + child.before + child.after + finish(child)
    assert output.count(VALUE) == 1  # the value, on stdout, once
    assert VALUE in screen(output)
    assert not [line for line in screen(output) if "greet:" in line]  # the live lines were erased
    assert streamed(server) == [True]


def test_piped_nothing_streams_and_the_request_is_not_streamed(
    cli: Cli, workspace: Path, server: LLMServer
) -> None:
    write(workspace / "p.sexp", GREET + '(task-content (greet "you"))\n')
    server.script(slow_reply(0.01))
    status, out, err = cli("run", "p.sexp", env=env(server))
    assert (status, out) == (0, VALUE + "\n")
    assert "greet:" not in err and "Hello" not in err
    assert streamed(server) == [False] and "stream" not in server.requests[0].body


@pytest.mark.parametrize("how", ["-q", "--no-stream", "sexp.toml"])
def test_quiet_no_stream_or_stream_false_show_nothing_on_a_terminal(
    workspace: Path, server: LLMServer, how: str
) -> None:
    write(workspace / "p.sexp", GREET + '(task-content (greet "you"))\n')
    if how == "sexp.toml":
        write(workspace / "sexp.toml", "stream = false\n")
    server.script(slow_reply(0.05))
    flags = [how] if how.startswith("-") else []
    output = finish(spawn(workspace, server, "run", *flags, "p.sexp"))
    assert (VALUE in output) == (how != "-q")  # -q prints no value (--json would)
    assert "greet:" not in output and "Hello" not in output.replace(VALUE, "")
    assert streamed(server) == [False]


def test_concurrent_calls_under_pmap_each_take_a_line_never_mixed(
    workspace: Path, server: LLMServer
) -> None:
    names = ["aa", "bb", "cc"]
    quoted = " ".join(f'"{name}"' for name in names)
    program = f"(length (pmap (lambda (n) (task-content (greet n))) (list {quoted})))\n"
    write(workspace / "p.sexp", GREET + program)
    server.script(*[Scripted(pieces=[f"{name} "] * 8, chunk_delay=scaled(0.15)) for name in names])
    child = spawn(workspace, server, "run", "p.sexp")
    output = ""
    together = 0  # the most answer lines seen on the screen at once
    deadline = time.monotonic() + scaled(60)
    while time.monotonic() < deadline:
        try:
            output += child.read_nonblocking(4096, timeout=scaled(0.2))
        except pexpect.TIMEOUT:
            continue
        except pexpect.EOF:
            break
        shown = screen(output)
        answers = [line for line in shown if line.startswith("greet[")]  # "greet[i]:" alone: no text yet
        for line in answers:
            label, _, text = line.partition(":")
            assert label in ("greet[0]", "greet[1]", "greet[2]"), line  # each call labelled by its element
            words = set(text.lstrip(" …").split())
            assert len({word[0] for word in words if word}) <= 1, line  # one call's text per line
        if answers:
            assert shown[shown.index(answers[0]) - 1].startswith("pmap ["), shown  # under the bar
        together = max(together, len(answers))
    child.close()
    assert child.exitstatus == 0, output
    assert together == 3
    assert "3" in screen(output) and not any(line.startswith("greet") for line in screen(output))
    assert streamed(server) == [True, True, True]


def test_a_batch_shows_its_bar_alone_its_rows_unstreamed(workspace: Path, server: LLMServer) -> None:
    write(workspace / "p.sexp", GREET + "(task-content (greet name))\n")
    write(workspace / "in.jsonl", '{"name": "a"}\n{"name": "b"}\n')
    server.script(slow_reply(0.05))
    output = finish(spawn(workspace, server, "batch", "p.sexp", "--data", "in.jsonl"))
    assert "batch [" in output and "greet:" not in output  # its rows run quietly
    assert streamed(server) == [False, False]
