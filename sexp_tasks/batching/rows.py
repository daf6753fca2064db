"""What crosses from the batch's driver to whatever runs a row (a thread here, a Ray worker on
another machine): plain, picklable data, no open file and no Runtime."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..results import round_cost


@dataclass(frozen=True)
class ProgramBundle:
    """The program every row runs.

    templates: template files by relative path -> text, for a worker that does not have them
    (the Ray executor fills it; on threads it is empty and rows read the template directories)."""

    path: str  # the program's path as given (error positions, step keys)
    text: str
    templates: dict[str, str]
    last_form: tuple[int, int] | None = None  # where the last top-level form begins: line, column


@dataclass(frozen=True)
class RowJob:
    """One input line to run, as its own recorded run: the line in the global `row`, and its
    inputs bound as globals but for those in unbound (batching/row_names.py)."""

    batch_id: str
    index: int  # 0-based, in input order
    inputs: dict[str, Any]  # the line's JSON object with the --set values (the run's recorded inputs)
    program: ProgramBundle
    settings: dict[str, Any]  # the row's Settings fields as plain data (config.Settings(**settings))
    run_id: str  # the row's run: a new id, or the recorded one when resuming
    resuming: bool  # resume run_id's recorded steps
    force: bool = False  # resume even if the program changed since run_id was recorded
    row: dict[str, Any] | None = None  # the line as read (the global `row`); None: inputs
    unbound: frozenset[str] = frozenset()  # inputs not bound as globals (they would hide a built-in)
    # the batch's span as W3C trace context (tracing.Tracer.carrier): the row's run is its child
    trace_parent: dict[str, str] = field(default_factory=dict)
    score: str | None = None  # the program's procedure scoring an ok row (batching/scoring.py)
    reuse: str | None = None  # a new run's recorded run whose answers it takes (`--reuse`)


@dataclass(frozen=True)
class RowOutcome:
    """How a row ended: one OUT line (`as_json`) and its batch_rows record."""

    index: int
    status: str  # "ok" | "error"
    value: Any  # the final value as `sexp run --json` prints it (None on error)
    error: str | None  # one line: `file:line:col: error: message`; None when ok
    run_id: str
    tokens: int
    cost_usd: float
    seconds: float
    score: Any = None  # the job's scorer's score (a number or a dict of them), when it had one
    score_error: str | None = None  # the scorer's error on an ok row, one line

    def as_json(self) -> dict[str, Any]:
        """The OUT line's object, its keys in SPEC §10.5's order (a scored batch's driver adds
        score and score_error after them)."""
        return {
            "index": self.index,
            "status": self.status,
            "value": self.value,
            "error": self.error,
            "run_id": self.run_id,
            "tokens": self.tokens,
            "cost_usd": round_cost(self.cost_usd),
            "seconds": self.seconds,
        }
