"""How a batch ended, and the line `sexp batch` prints for it last."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..handler.cost import format_cost
from ..runs.batch_scores import ScoreAggregate


@dataclass(frozen=True)
class BatchSummary:
    """How a batch ended: its id, rows ok of all rows, tokens, cost (all of its rows), seconds
    (this invocation's), the OUT file, how many task calls the budget refused, and scores: a
    scored batch's aggregate per metric (name, mean, min, max, n over all of its ok rows with a
    score, sorted by name; empty when the batch is not scored), as its `score:` lines show them."""

    batch_id: str
    ok: int
    total: int
    tokens: int
    cost_usd: float
    seconds: float
    out: Path
    refused: int = 0
    scores: tuple[ScoreAggregate, ...] = ()
    reused: int | None = None  # with --reuse: the model turns its rows took from the reused batch's

    def line(self) -> str:
        """`batch: <id> <ok>/<total> ok, <tokens> tokens, $<cost>, <seconds> s`, then `, <k> reused`
        with --reuse, and `, <n> calls refused by the budget` when it refused some (their rows may
        still be ok)."""
        calls = "call" if self.refused == 1 else "calls"
        refused = f", {self.refused} {calls} refused by the budget" if self.refused else ""
        if self.reused is not None:
            refused = f", {self.reused} reused{refused}"
        return (
            f"batch: {self.batch_id} {self.ok}/{self.total} ok, {self.tokens} tokens, "
            f"{format_cost(self.cost_usd)}, {self.seconds:.1f} s{refused}"
        )
