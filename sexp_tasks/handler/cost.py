"""What model calls cost: the run's budget (max_cost_usd) and how a cost is written.

The budget holds under concurrency (SPEC §10.1): before it is sent, a call reserves the most it
can cost (its prompt, and its output at max_tokens, else at the model's largest output); when it
ends, its reservation is replaced by what it really cost (released when it failed). A call whose
reservation does not fit beside those in flight waits for them to settle; a call alone is sent when
its likely cost (output at max_tokens, else at the largest output the run has seen) fits, as
before, and refused when it does not. So calls sent together never pass the budget, and the run
passes it by at most what one call alone costs beyond its likely cost: one call's worth. A streamed
call is watched as it arrives (stream_reading.py): it is stopped once its cost so far would pass
the budget beside what is spent and the other calls hold (`overrun`), and settles with that cost.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

from ..results import TaskError
from . import llm
from .model_info import output_limit
from .model_request import ModelAnswer

WAIT_STEP = 0.1  # seconds between checks while a call waits for reservations to settle (Ctrl-C gets in)


@dataclass(frozen=True)
class Spending:
    """The model calls this process made for a run (answered ones: mock, replayed and real), the
    tokens they used and what they cost: the `run:` summary of `sexp run`."""

    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0


class CostBudget:
    """The run's spending against its budget (None: no budget), shared by every Handler of the run."""

    def __init__(self, limit: float | None = None, spent: float = 0.0) -> None:
        self.limit = limit
        self._spent = spent
        self._reserved = 0.0
        self._in_flight = 0
        self._largest_output = 0  # the most output tokens a call of this run has given
        self._made = Spending()  # by this process (a resumed run's earlier spending is seeded)
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)  # a reservation was settled

    @property
    def spent(self) -> float:
        with self._lock:
            return self._spent

    @property
    def largest_output(self) -> int:
        with self._lock:
            return self._largest_output

    @property
    def made(self) -> Spending:
        """The calls this process has made for the run, their tokens and cost."""
        with self._lock:
            return self._made

    def seed(self, spent: float) -> None:
        """Start from what a resumed run had already spent."""
        with self._lock:
            self._spent = spent

    def refusal(self) -> TaskError | None:
        """The error refusing any further model call once the budget is spent, else None (what is
        reserved for calls in flight is no refusal: a call waits for them to settle)."""
        with self._lock:
            if self.limit is None or self._spent < self.limit:
                return None
            return self._refused(0.0)

    def reserve(self, estimate: float, bound: float | None = None) -> TaskError | None:
        """Hold bound (the most the call can cost; default estimate, its likely cost) against the
        budget for a call about to be sent (settle it when the call ends), waiting while calls in
        flight leave no room for it; the error refusing the call instead when the budget is spent
        or, alone, its likely cost would pass it. What it holds: reserved()."""
        most = estimate if bound is None else max(bound, estimate)
        with self._settled:
            while self._refused(most) is not None:  # no room beside the calls in flight
                if not self._in_flight or self._spent >= (self.limit or 0.0):
                    refused = self._refused(estimate)  # alone (or spent): its likely cost decides
                    if refused is not None:
                        return refused
                    break
                self._settled.wait(WAIT_STEP)  # a timeout, so that an interrupt reaches this thread
            self._reserved += most
            self._in_flight += 1
            return None

    def settle(self, reserved: float, answer: ModelAnswer | None) -> None:
        """Replace a call's reservation by what its answer cost (nothing when it got none), noting
        its output size."""
        with self._lock:
            self._in_flight -= 1
            self._reserved = self._reserved - reserved if self._in_flight else 0.0  # no rounding drift
            if answer is not None:
                self._count(answer)
            self._settled.notify_all()

    def spend(self, answer: ModelAnswer) -> None:
        """Count a call that reserved nothing (a replayed, reused or cached answer)."""
        with self._lock:
            self._count(answer)

    def _count(self, answer: ModelAnswer) -> None:
        self._spent += answer.cost_usd
        self._largest_output = max(self._largest_output, answer.completion_tokens)
        made = self._made
        tokens = made.tokens + answer.prompt_tokens + answer.completion_tokens
        self._made = Spending(made.calls + 1, tokens, made.cost_usd + answer.cost_usd)

    def overrun(self, reserved: float, cost: float) -> TaskError | None:
        """The error stopping a streamed call (handler/stream_reading.py) whose cost so far would
        take the run over its budget — what is spent, plus the other calls' reservations (all but
        this call's `reserved`), plus cost — else None."""
        with self._lock:
            spent, limit = self._spent, self.limit
            others = max(0.0, self._reserved - reserved) if self._in_flight > 1 else 0.0
        if limit is None or spent + others + cost <= limit:
            return None
        message = _spending(spent, others, limit)
        message += f"this call's answer, at {format_cost(cost)} so far, would pass it: its stream was stopped"
        metrics = {"spent_usd": spent, "reserved_usd": others, "cost_usd": cost, "max_cost_usd": limit}
        return TaskError("RESOURCE_EXHAUSTION", message, resource="cost", metrics=metrics)

    def _refused(self, estimate: float) -> TaskError | None:
        spent, reserved, limit = self._spent, self._reserved, self.limit
        if limit is None or (spent < limit and spent + reserved + estimate <= limit):
            return None
        message = _spending(spent, reserved, limit)
        if spent >= limit:
            message += "no more model calls"
        else:
            message += f"this call, estimated at {format_cost(estimate)}, would pass it"
        metrics = {
            "spent_usd": spent,
            "reserved_usd": reserved,
            "estimate_usd": estimate,
            "max_cost_usd": limit,
        }
        return TaskError("RESOURCE_EXHAUSTION", message, resource="cost", metrics=metrics)


def _spending(spent: float, reserved: float, limit: float) -> str:
    """The head of a budget's refusal: what the run has spent and holds, of its budget."""
    held = f" and holds {format_cost(reserved)} for calls in flight" if reserved else ""
    return f"the run has spent {format_cost(spent)}{held} of its {format_cost(limit)} budget; "


def format_cost(usd: float | None) -> str:
    """A cost in dollars to 4 significant digits, never fewer than cents: `$0.00`, `$0.000065`,
    `$0.005`, `$1.235`, `$1234.50` — so a spent amount is never shown equal to a budget it passed."""
    value = float(usd or 0.0)
    if value == 0.0 or not math.isfinite(value):
        return "$0.00" if value == 0.0 else f"${value}"
    decimals = max(2, 3 - math.floor(math.log10(abs(value))))
    whole, _, fraction = f"{value:.{decimals}f}".partition(".")
    return f"${whole}.{fraction.rstrip('0').ljust(2, '0')}"


def call_reservation(
    budget: CostBudget, model: str, prompt_tokens: int, max_tokens: int | None
) -> tuple[float, float]:
    """What a call reserves (SPEC §10.1): its likely cost (prompt, and output at max_tokens when
    set, else at the largest output of the run so far) and its bound (output at max_tokens, else
    at the model's largest output), so calls sent together pass the budget by one call at most.
    Nothing (0, 0) when the budget has no limit."""
    if budget.limit is None:
        return 0.0, 0.0
    estimate = llm.estimate_cost(model, prompt_tokens, max_tokens or budget.largest_output)
    most = max_tokens or max(budget.largest_output, output_limit(model))
    return estimate, llm.estimate_cost(model, prompt_tokens, most)
