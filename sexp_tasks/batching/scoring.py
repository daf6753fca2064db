"""Scoring a batch's rows (`sexp batch --score SCORER`, `sexp_tasks.batch(..., score=...)`; SPEC
§11.5): after each ok row, the scorer is called with the row's value and the row as read; what it
returns (a number, or a dict of numbers) is the row's `score`.

Where a scorer runs:
- a procedure of the program (the command's SCORER, or `score="name"` from Python) runs where the
  row runs, in the row's Runtime and inside its recorded run, right after the program's last form
  (row_runner.py): a scorer that calls a model is journaled, paid and resumed as the row's own
  calls are, and it works on Ray as on threads;
- a Python callable (`score=fn`) runs in the driver, on the row's value as OUT holds it (JSON data)
  and the row as read, as each row ends: nothing of it is pickled for Ray.

A scorer that raises or returns something else than a score gives its row a `score_error` (one
line) and no score; the row stays ok and the batch goes on (runs/batch_scores.py says what a
score may be).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..diagnostics import failed_result_line, format_failure
from ..errors import BatchError, SexpError
from ..lang.calls import apply_procedure
from ..lang.printer import to_json_value
from ..lang.values import Procedure, Value
from ..redact import scrub
from ..runs.batch_scores import checked_score
from ..runtime import Runtime
from .row_names import ROW, RowNames

# A Python scorer: (the row's value as OUT holds it, the row as read) -> a number or a dict of them.
ScoreFunction = Callable[[Any, dict[str, Any]], Any]
LAMBDA_METRIC = "score"  # the metric of a plain number a nameless Python callable (a lambda) returns


@dataclass(frozen=True)
class Scorer:
    """What a batch scores its ok rows with: name, the metric a plain number counts under (the
    procedure's or the function's name); procedure, the program's procedure of that name (run
    where each row runs), or function, a Python callable (run in the driver)."""

    name: str
    procedure: str | None = None
    function: ScoreFunction | None = None


def scorer_of(given: str | ScoreFunction | None, names: RowNames) -> Scorer | None:
    """The batch's scorer: None for none; a name must be a procedure the program defines (or a
    built-in), else a BatchError before any row runs; a callable is scored in the driver."""
    if given is None:
        return None
    if callable(given):
        name = getattr(given, "__name__", "") or LAMBDA_METRIC
        return Scorer(LAMBDA_METRIC if name == "<lambda>" else name, function=given)
    if not isinstance(given, str) or not given:
        raise BatchError(f"the scorer must be a procedure's name or a Python callable, not {given!r}")
    if given == ROW or (given not in names.defined and given not in names.built_ins):
        raise BatchError(f"unknown scorer '{given}': the program defines no procedure of that name")
    return Scorer(given, procedure=given)


class RowScore:
    """The score of one row, taken inside its run once its program has run (Runtime.run_recorded's
    `then`): only an ok row's value is scored."""

    def __init__(self, runtime: Runtime, name: str, row: Value) -> None:
        self.runtime, self.name, self.row = runtime, name, row
        self._scored: tuple[Any, str | None] = (None, None)

    def __call__(self, value: Value) -> None:
        if failed_result_line(value) is None:
            self._scored = score_in_runtime(self.runtime, self.name, value, self.row)

    def result(self) -> tuple[Any, str | None]:
        """(score, score_error): (None, None) for a row not scored."""
        return self._scored


def score_in_runtime(runtime: Runtime, name: str, value: Value, row: Value) -> tuple[Any, str | None]:
    """(score, None) or (None, score_error): the procedure name of runtime called with the row's
    value and row (a row's Runtime, inside its run)."""
    try:
        globals_ = runtime.globals
        found = globals_.values[name] if name in globals_.values else globals_.missing(name, None, None)
        if not isinstance(found, Procedure):
            return None, f"scorer '{name}' is not a procedure"
        return checked_score(to_json_value(apply_procedure(found, [value, row], 0)), name)
    except Exception as exc:  # the scorer's error is the row's score_error, never the batch's
        return None, failed(name, exc)


def score_in_driver(scorer: Scorer, value: Any, row: dict[str, Any]) -> tuple[Any, str | None]:
    """(score, None) or (None, score_error): scorer's Python function called with the row's OUT
    value and the row as read."""
    assert scorer.function is not None
    try:
        return checked_score(scorer.function(value, row), scorer.name)
    except Exception as exc:  # as above
        return None, failed(scorer.name, exc)


def failed(name: str, exc: Exception) -> str:
    """The one-line score_error of a scorer that raised exc."""
    if isinstance(exc, SexpError):  # the program's error, where it happened
        text = format_failure(exc).splitlines()[0]
    else:  # a Python scorer's own exception: not sexp's internal error
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return scrub(" ".join(f"scorer '{name}' failed: {text}".split()))
