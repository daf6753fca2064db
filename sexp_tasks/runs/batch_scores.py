"""A batch's scores (`sexp batch --score SCORER`, SPEC §11.5): what a row's score may be, the
metrics it counts under, and the aggregate of every ok row's, as the batch's last lines and
`sexp trace BATCH_ID` show it.

A score is a finite number (its metric is the scorer's name) or a non-empty dict of them (each
key a metric). Anything else is the row's `score_error`, a one-line message; such a row, like an
error row, counts in no metric.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .store import Store

DECIMALS = 4  # the score lines show up to this many decimals (trailing zeros dropped)


@dataclass(frozen=True)
class ScoreAggregate:
    """One metric over a batch's scored rows: its name, mean, min, max and how many rows had it."""

    name: str
    mean: float
    min: float
    max: float
    n: int

    def line(self) -> str:
        """`score: <name> mean <m> min <a> max <b> n <k>`, numbers as format_score gives them."""
        return (
            f"score: {self.name} mean {format_score(self.mean)} min {format_score(self.min)}"
            f" max {format_score(self.max)} n {self.n}"
        )

    def as_json(self) -> dict[str, Any]:
        """name, mean, min, max, n (the numbers unrounded)."""
        return {"name": self.name, "mean": self.mean, "min": self.min, "max": self.max, "n": self.n}


def format_score(number: float) -> str:
    """number with at most DECIMALS decimals, trailing zeros dropped: 0.83333 -> `0.8333`,
    1.0 -> `1`, 12.5 -> `12.5` (a magnitude under 0.00005 shows as `0`)."""
    text = f"{number:.{DECIMALS}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def checked_score(value: Any, scorer: str) -> tuple[Any, str | None]:
    """(the score, None) when value is a score: a finite number or a non-empty dict of them with
    string keys (ints stay ints); else (None, the row's one-line score_error)."""
    if _is_number(value):
        if not math.isfinite(value):
            return None, f"scorer '{scorer}' returned {value}, not a finite number"
        return value, None
    if isinstance(value, dict):
        if not value:
            return None, f"scorer '{scorer}' returned an empty dict: give at least one metric"
        for key, inner in value.items():
            if not isinstance(key, str):
                return None, f"scorer '{scorer}' returned a dict whose key {_shown(key)} is not a string"
            whose = f"scorer '{scorer}' returned a dict whose '{key}' is"
            if not _is_number(inner):
                return None, f"{whose} {_shown(inner)}, not a number"
            if not math.isfinite(inner):
                return None, f"{whose} {inner}, not a finite number"
        return dict(value), None
    return None, f"scorer '{scorer}' returned {_shown(value)}, not a number or a dict of numbers"


def metrics(score: Any, name: str | None) -> dict[str, float]:
    """The metrics a stored score counts under: a number under name, a dict's own keys."""
    if isinstance(score, dict):
        return {key: value for key, value in score.items() if _is_number(value)}
    if _is_number(score) and name:
        return {name: score}
    return {}


def aggregate(scored: Iterable[tuple[Any, str | None]]) -> list[ScoreAggregate]:
    """The aggregate of each metric over (score, the name of a plain number) pairs, sorted by name."""
    values: dict[str, list[float]] = {}
    for score, name in scored:
        for metric, number in metrics(score, name).items():
            values.setdefault(metric, []).append(number)
    return [
        ScoreAggregate(metric, math.fsum(numbers) / len(numbers), min(numbers), max(numbers), len(numbers))
        for metric, numbers in sorted(values.items())
    ]


def batch_scores(store: Store, batch_id: str) -> list[ScoreAggregate]:
    """The aggregates over every ok row of the batch that has a score, by metric name."""
    rows = store.query(
        """SELECT score, score_name FROM batch_rows
           WHERE batch_id = ? AND status = 'ok' AND score IS NOT NULL""",
        (batch_id,),
    )
    return aggregate((json.loads(row["score"]), row["score_name"]) for row in rows)


def score_errors(store: Store, batch_id: str) -> dict[str, Any]:
    """How many ok rows the scorer failed on, and the first of them: {"rows", "example_row",
    "example"} (rows 0 and no example when none)."""
    rows = store.query(
        """SELECT "index", score_error FROM batch_rows
           WHERE batch_id = ? AND status = 'ok' AND score_error IS NOT NULL ORDER BY "index" """,
        (batch_id,),
    )
    if not rows:
        return {"rows": 0, "example_row": None, "example": None}
    return {"rows": len(rows), "example_row": rows[0]["index"], "example": rows[0]["score_error"]}


def score_errors_line(failed: dict[str, Any]) -> str:
    """`score errors: <k> row(s) (e.g. row <i>: <message>)`, of what score_errors gives."""
    rows = f"{failed['rows']} row{'' if failed['rows'] == 1 else 's'}"
    return f"score errors: {rows} (e.g. row {failed['example_row']}: {failed['example']})"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _shown(value: Any) -> str:
    """value in a message: short, on one line, with what it is."""
    if value is None:
        return "nil"
    kind = {str: "a string", bool: "a boolean", list: "a list", dict: "a dict", type(None): "nil"}.get(
        type(value), type(value).__name__
    )
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except ValueError:  # a list that holds itself
        text = "..."
    text = " ".join(text.split())
    if len(text) > 60:
        text = text[:57] + "..."
    return text if value is None else f"{text} ({kind})"
