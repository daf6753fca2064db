"""What a streamed call may take before it is stopped, and the answer a stream gave as far as it
went (stopped at a limit, or broken): priced as received, so the budget pays for it."""

from __future__ import annotations

from ..lang.values import well_formed
from ..results import TaskError, round_cost
from . import llm
from .cost import CostBudget
from .model_info import known_output_limit
from .model_request import ModelAnswer, ModelRequest
from .stream_reading import StreamLimits, StreamStopped
from .tokens import count_output, model_counter


def stream_limits(
    request: ModelRequest, prompt_tokens: int, reserved: float, budget: CostBudget
) -> StreamLimits | None:
    """What a streamed call may take (stream_reading.py): its max_tokens, else the model's output
    limit when litellm knows it; and, under a budget, what the run has left beside the other
    calls' reservations. None when neither holds (nothing is watched)."""
    model = request.model
    max_tokens = request.generation.get("max_tokens")
    most = max_tokens if isinstance(max_tokens, int) else known_output_limit(model)
    if most is None and budget.limit is None:
        return None
    name = "max_tokens" if isinstance(max_tokens, int) else "the model's output limit"
    prompt_cost = llm.estimate_cost(model, prompt_tokens, 0)
    token_price = llm.estimate_cost(model, 0, 1000) / 1000

    def over_budget(cost: float) -> TaskError | None:
        return budget.overrun(reserved, cost)

    def cost(tokens: int) -> float:
        return prompt_cost + tokens * token_price

    watched = over_budget if budget.limit is not None else _fits
    return StreamLimits(most, name, cost, watched, model_counter(model))


def _fits(cost: float) -> None:
    """No budget: any cost fits."""
    return None


def broken_answer(text: str, model: str, prompt_tokens: int) -> ModelAnswer:
    """The answer a stream gave before its connection broke, priced as it was received: its text,
    its prompt (as counted before sending) and its output counted (the provider sent no usage)."""
    output_tokens = (model_counter(model) or count_output)(text)
    cost = llm.estimate_cost(model, prompt_tokens, output_tokens)
    return ModelAnswer(
        text=well_formed(text),
        finish_reason=None,
        prompt_tokens=prompt_tokens,
        completion_tokens=output_tokens,
        cost_usd=round_cost(cost),
        model=model,
    )


def stopped_answer(stop: StreamStopped, model: str, prompt_tokens: int) -> ModelAnswer:
    """The answer a stopped stream gave, as far as it went: its text, its prompt (as counted before
    sending) and the output tokens and cost counted as it arrived. No finish reason: it did not end."""
    return ModelAnswer(
        text=well_formed(stop.text),
        finish_reason=None,
        prompt_tokens=prompt_tokens,
        completion_tokens=stop.output_tokens,
        cost_usd=round_cost(stop.cost_usd),
        latency_ms=stop.latency_ms,
        model=model,
    )
