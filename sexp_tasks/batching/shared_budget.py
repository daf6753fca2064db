"""A batch's one budget (--max-cost) shared by rows in other processes (Ray row workers).

`BudgetKeeper` holds the batch's CostBudget in one actor on the driver's node (ray_executor.py
makes it; threaded, so that a reservation waiting for others to settle does not hold up their
settling); each row worker reserves and settles through a `RemoteBudget`. So rows running at
once on Ray reserve from one budget as rows on threads do, instead of each starting from what
was left when it was sent. Ray itself is touched only by ray_executor.py and ray_actors.py: the
calls here go through the actor handle's methods and the `fetch` it gives (ray.get).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..handler.cost import CostBudget
from ..handler.model_request import ModelAnswer
from ..results import TaskError


class BudgetKeeper:
    """The batch's budget, seeded with what the batch had spent (a resumed batch's rows)."""

    def __init__(self, limit: float, spent: float) -> None:
        self.budget = CostBudget(limit, spent)

    def reserve(self, estimate: float, bound: float | None) -> TaskError | None:
        return self.budget.reserve(estimate, bound)

    def settle(self, reserved: float, reply: ModelAnswer | None) -> None:
        self.budget.settle(reserved, reply)

    def spend(self, reply: ModelAnswer) -> None:
        self.budget.spend(reply)

    def state(self) -> tuple[float, int, TaskError | None]:
        """What is spent, the largest output so far, and the refusal once the budget is spent."""
        return self.budget.spent, self.budget.largest_output, self.budget.refusal()


class RemoteBudget(CostBudget):
    """A row worker's view of the BudgetKeeper (`keeper`, an actor handle; `fetch` waits for what
    its calls return): reservations and spending go to it; what this process's calls made is
    counted here too (CostBudget.made)."""

    def __init__(self, keeper: Any, limit: float, fetch: Callable[[Any], Any]) -> None:
        super().__init__(limit)
        self._keeper = keeper
        self._fetch = fetch

    @property
    def spent(self) -> float:
        return float(self._fetch(self._keeper.state.remote())[0])

    @property
    def largest_output(self) -> int:
        return int(self._fetch(self._keeper.state.remote())[1])

    def seed(self, spent: float) -> None:
        """Nothing: the keeper was seeded with what the batch's rows had spent."""

    def refusal(self) -> TaskError | None:
        refused: TaskError | None = self._fetch(self._keeper.state.remote())[2]
        return refused

    def reserve(self, estimate: float, bound: float | None = None) -> TaskError | None:
        refused: TaskError | None = self._fetch(self._keeper.reserve.remote(estimate, bound))
        return refused

    def settle(self, reserved: float, reply: ModelAnswer | None) -> None:
        self._fetch(self._keeper.settle.remote(reserved, reply))
        if reply is not None:
            super().spend(reply)

    def spend(self, reply: ModelAnswer) -> None:
        self._fetch(self._keeper.spend.remote(reply))
        super().spend(reply)
