"""A stream whose connection broke midway was paid for as far as it went (review of issue 21): its
text is kept in the FAILED result, and its tokens and cost are counted in the result's notes and
the run's spending, as a stream stopped at a limit is (they were counted as nothing)."""

from __future__ import annotations

import pytest
from llm_server import LLMServer, Scripted
from test_stream_budgets import CHEAP, PIECES, WHOLE, server, streamed

from sexp_tasks.handler import TaskPrompt
from sexp_tasks.handler.cost import CostBudget
from sexp_tasks.handler.tokens import model_counter
from sexp_tasks.results import FAILED

__all__ = ["server"]  # the fixture, used by name


def test_a_broken_stream_s_partial_answer_is_counted_and_paid(server: LLMServer) -> None:
    server.script(Scripted(content=WHOLE, pieces=PIECES, drop_after=21))  # the role and 20 pieces
    budget = CostBudget(1.0)
    result, heard = streamed(server, TaskPrompt("long", "Go on.", models=(CHEAP,)), budget)
    assert result.status == FAILED
    received = "".join(heard.pieces)
    assert received and received in WHOLE and result.content == received
    usage = result.notes["usage"]
    assert usage["completion_tokens"] == model_counter(CHEAP)(received)  # type: ignore[misc]
    assert usage["prompt_tokens"] > 0 and result.notes["cost_usd"] > 0
    assert budget.spent == pytest.approx(result.notes["cost_usd"])
