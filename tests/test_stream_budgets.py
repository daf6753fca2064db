"""Budgets stop a stream that runs over (issue 21 point 1): a streamed answer whose output passes
its max_tokens (a server that ignores it), or whose cost so far would take the run over its
max_cost, is stopped — its connection closed — and the call is FAILED RESOURCE_EXHAUSTION with
the text it gave; what it gave is counted in the run's spending.

Against the local server (tests/llm_server.py), which ignores max_tokens and streams its pieces
with a delay between two, so a stopped stream is seen to stop before its end.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pexpect
import pytest
from conftest import scaled, spawn_sexp_pty, wait_for
from llm_server import LLMServer, Recorded, Scripted

import sexp_tasks
from sexp_tasks import TaskResult
from sexp_tasks.handler import Handler, HandlerConfig, HandlerServices, TaskPrompt, tokens
from sexp_tasks.handler.cost import CostBudget
from sexp_tasks.handler.llm import estimate_cost
from sexp_tasks.results import COMPLETE, FAILED

CHEAP = "openai/gpt-4o-mini"  # priced by litellm: costs are counted
PRICEY = "openai/gpt-4"  # $60 per million output tokens: a small budget runs out midway
PIECES = [f" word{i}" for i in range(40)]
WHOLE = "".join(PIECES)
EVENTS = 1 + len(PIECES) + 3  # the role, the pieces, the finish reason, the usage, [DONE]


@pytest.fixture
def server(server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> LLMServer:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-stream-budgets")
    return server


class Heard:
    """A text stream keeping every piece of text it was given (all requests' streams are one)."""

    def __init__(self) -> None:
        self.pieces: list[str] = []

    def write(self, text: str) -> None:
        self.pieces.append(text)

    def close(self) -> None:
        pass


def slow_reply(chunk_delay: float = 0.02) -> Scripted:
    """The 40 pieces, a delay between two: a stream not stopped takes a while."""
    return Scripted(content=WHOLE, pieces=PIECES, chunk_delay=scaled(chunk_delay))


def streamed(
    server: LLMServer, prompt: TaskPrompt, budget: CostBudget | None = None, **config: Any
) -> tuple[TaskResult, Heard]:
    """The result of prompt, streamed, under budget, and what its hook heard."""
    heard = Heard()
    services = HandlerServices(open_stream=lambda label: heard, budget=budget or CostBudget())
    options = {"api_base": server.base_url, "num_retries": 0, "timeout": scaled(20.0), **config}
    return Handler(HandlerConfig(**options), services).run(prompt), heard


def stopped_early(request: Recorded) -> None:
    """Wait until the server saw the client leave its stream before the stream's end."""
    wait_for(lambda: request.client_left, scaled(10), "the client did not close the stream")
    assert request.events_sent < EVENTS


def test_a_stream_past_max_tokens_is_stopped_with_its_text_kept(server: LLMServer) -> None:
    server.script(slow_reply())
    budget = CostBudget()
    result, heard = streamed(
        server, TaskPrompt("long", "Go on.", models=(CHEAP,)), budget, generation={"max_tokens": 5}
    )
    assert result.status == FAILED
    assert (result.error.type, result.error.resource) == ("RESOURCE_EXHAUSTION", "output")
    assert "passed max_tokens (5 tokens)" in result.error.message
    assert result.error.message.endswith("its stream was stopped")
    assert result.content and WHOLE.startswith(result.content) and len(result.content) < len(WHOLE)
    assert "".join(heard.pieces) == result.content  # the pieces heard are the text kept
    request = server.requests[-1]
    assert request.body["max_tokens"] == 5 and request.body["stream"] is True
    stopped_early(request)
    # what it gave is counted: in the result's notes and in the run's spending
    counted = result.error.metrics["output_tokens"]
    assert 5 < counted < 20
    assert result.notes["usage"]["completion_tokens"] == counted
    assert result.notes["usage"]["prompt_tokens"] > 0 and result.notes["cost_usd"] > 0
    assert budget.made.calls == 1 and budget.made.cost_usd == pytest.approx(result.notes["cost_usd"])
    assert budget.made.tokens == sum(result.notes["usage"].values())


def test_tool_call_arguments_count_as_output(server: LLMServer, workspace: Path) -> None:
    arguments = {"path": " ".join(f"part{i}" for i in range(60))}
    server.script(Scripted(content=None, tool_calls=[{"name": "read_file", "arguments": arguments}]))
    prompt = TaskPrompt("reader", "Read.", models=(CHEAP,))
    result, _ = streamed(
        server, prompt, generation={"max_tokens": 5}, tools=("read_file",), workspace=workspace
    )
    assert (result.status, result.error.resource) == (FAILED, "output")
    assert result.notes["usage"]["completion_tokens"] > 5
    assert len(server.requests) == 1  # the tool did not run: no second turn


def budget_for(prompt: TaskPrompt, output_tokens: int) -> float:
    """A budget that holds prompt's first request and output_tokens of its answer."""
    messages = Handler(HandlerConfig(), HandlerServices()).request(prompt).messages
    return estimate_cost(prompt.models[0], tokens.count_messages(messages), output_tokens)


def test_a_stream_whose_cost_would_pass_max_cost_is_stopped_midway(server: LLMServer) -> None:
    server.script(slow_reply())
    prompt = TaskPrompt("long", "Go on.", models=(PRICEY,))
    limit = budget_for(prompt, 20)
    budget = CostBudget(limit)
    result, heard = streamed(server, prompt, budget)
    assert result.status == FAILED
    assert (result.error.type, result.error.resource) == ("RESOURCE_EXHAUSTION", "cost")
    message = result.error.message
    assert message.startswith("the run has spent $0.00 of its $")
    assert "this call's answer, at $" in message and message.endswith("would pass it: its stream was stopped")
    assert result.content and WHOLE.startswith(result.content) and len(result.content) < len(WHOLE)
    assert "".join(heard.pieces) == result.content
    stopped_early(server.requests[-1])
    # the budget settles with what the partial answer cost: past the limit by its last piece at most
    cost = result.notes["cost_usd"]
    assert budget.spent == pytest.approx(cost) and limit < cost < estimate_cost(PRICEY, 0, 0) + 2 * limit
    assert result.error.metrics["cost_usd"] == pytest.approx(cost, rel=1e-3)
    assert budget.refusal() is not None  # spent: the run's next call is refused before it is sent


def test_other_calls_reservations_count_against_a_stream(server: LLMServer) -> None:
    """What a stream may spend is what is left beside what the other calls in flight hold: here
    the budget would stop it past 60 output tokens, max_tokens past 40 (and its slack), but
    another call holds 20 tokens' worth, so the budget stops it first."""
    server.script(slow_reply())
    prompt = TaskPrompt("long", "Go on.", models=(PRICEY,))
    limit = budget_for(prompt, 61)
    budget = CostBudget(limit)
    held = estimate_cost(PRICEY, 0, 20)
    assert budget.reserve(held) is None  # another call in flight; its reservation leaves room for this one
    result, _ = streamed(server, prompt, budget, generation={"max_tokens": 40})
    assert (result.status, result.error.resource) == (FAILED, "cost")
    assert "and holds $0.0012 for calls in flight" in result.error.message
    assert result.error.metrics["reserved_usd"] == pytest.approx(held)
    assert 40 < result.notes["usage"]["completion_tokens"] <= 44


def test_a_stream_under_both_limits_completes_unchanged(server: LLMServer) -> None:
    pieces = ["<output>", *PIECES[:10], "</output>"]
    server.script(Scripted(content="".join(pieces), pieces=pieces, chunk_delay=scaled(0.01)))
    budget = CostBudget(1.0)
    prompt = TaskPrompt("short", "Go on.", models=(CHEAP,))
    result, heard = streamed(server, prompt, budget, generation={"max_tokens": 100})
    assert (result.status, result.content) == (COMPLETE, "".join(PIECES[:10]))
    assert heard.pieces == pieces
    request = server.requests[-1]
    # The client may return on [DONE] before the server's thread counts that event as sent.
    every_event = len(pieces) + 4
    wait_for(lambda: request.events_sent == every_event, scaled(10), "the stream did not end")
    assert not request.client_left
    assert budget.spent == pytest.approx(result.notes["cost_usd"])  # the usage the server sent
    assert result.notes["usage"] == {"prompt_tokens": 10, "completion_tokens": 5}


def test_an_unstreamed_call_is_not_stopped(server: LLMServer) -> None:
    """The answer and usage of an unstreamed call arrive whole: counted after, never stopped."""
    server.script(Scripted(content=WHOLE))
    services = HandlerServices(budget=CostBudget(1.0))
    config = HandlerConfig(api_base=server.base_url, num_retries=0, generation={"max_tokens": 5})
    result = Handler(config, services).run(TaskPrompt("long", "Go on.", models=(CHEAP,)))
    assert (result.status, result.content) == (COMPLETE, WHOLE)


def test_the_models_output_limit_holds_when_no_max_tokens_is_set() -> None:
    from sexp_tasks.handler.stream_reading import StreamLimits, StreamStopped, StreamWatch

    limits = StreamLimits(16, "the model's output limit", lambda n: 0.0, lambda cost: None)
    watch = StreamWatch(limits)
    with pytest.raises(StreamStopped) as stopped:
        for i in range(100):
            watch.take(f" word{i}", "")
    error = stopped.value.error
    assert (error.resource, error.metrics["max_tokens"]) == ("output", 16)
    assert "passed the model's output limit (16 tokens)" in error.message
    # counted roughly (no model counter): stopped once surely over, past (16 + 4) * 1.25
    assert 25 < stopped.value.output_tokens <= 25 + 3  # and the last piece


def test_a_watch_counts_text_split_in_pieces_as_the_whole_text() -> None:
    """Pieces counted apart count high; before a stop the whole output is counted again."""
    from sexp_tasks.handler.stream_reading import StreamLimits, StreamWatch

    text = "Tokenization splits words " * 4
    letters = list(text)  # one character a piece: far more pieces than tokens
    limit = tokens.count_output(text)
    watch = StreamWatch(StreamLimits(limit, "max_tokens", lambda n: 0.0, lambda cost: None))
    for letter in letters:
        watch.take(letter, "")  # never stopped: the whole is within max_tokens
    assert watch.tokens <= limit + 4


def test_session_stream_yields_the_pieces_then_the_failed_result(
    workspace: Path, server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEXP_API_BASE", server.base_url)
    session = sexp_tasks.Session(model=CHEAP, generation={"max_tokens": 5}, quiet=True)
    session.eval('(defatom long (instructions "Go on."))')
    server.script(slow_reply())
    *pieces, result = session.stream("long")
    assert isinstance(result, TaskResult) and result.status == FAILED
    assert result.error is not None and result.error["resource"] == "output"
    assert pieces and all(isinstance(piece, str) for piece in pieces)
    assert "".join(pieces) == result.content and len(result.content) < len(WHOLE)
    stopped_early(server.requests[-1])


def test_sexp_run_with_max_cost_shows_the_failed_line(workspace: Path, server: LLMServer) -> None:
    """On a terminal `sexp run` streams its answers: a stream past --max-cost is stopped."""
    prompt = TaskPrompt("long", "Go on.", models=(PRICEY,))
    limit = budget_for(prompt, 20) * 1.5  # the CLI's prompt differs a little from the Handler's
    (workspace / "long.sexp").write_text('(defatom long (instructions "Go on."))\n(long)\n', encoding="utf-8")
    server.script(slow_reply(0.05))
    env = {"SEXP_API_BASE": server.base_url, "OPENAI_API_KEY": "sk-fake-stream-budgets"}
    child = spawn_sexp_pty(
        "run", "long.sexp", "--model", PRICEY, "--max-cost", f"{limit:.6f}", cwd=workspace, env=env
    )
    child.expect(pexpect.EOF, timeout=scaled(60))
    output = child.before
    assert server.requests[-1].body["stream"] is True
    assert "#<TaskResult FAILED" in output
    assert "error: RESOURCE_EXHAUSTION cost: the run has spent $0.00 of its $" in output
    assert "its stream was stopped" in output
    # the run's summary counts what the stopped stream gave: its tokens and its cost
    summary = re.search(r"run: \w+ 1 model calls, (\d+) tokens, \$([\d.]+)", output)
    assert summary is not None and int(summary[1]) > 0 and float(summary[2]) >= limit
    stopped_early(server.requests[-1])


def test_the_async_transport_stops_a_stream_too(server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEXP_LLM_TRANSPORT", "async")
    server.script(slow_reply())
    prompt = TaskPrompt("long", "Go on.", models=(CHEAP,))
    result, heard = streamed(server, prompt, generation={"max_tokens": 5})
    assert (result.status, result.error.resource) == (FAILED, "output")
    assert "".join(heard.pieces) == result.content and len(result.content) < len(WHOLE)
    stopped_early(server.requests[-1])
