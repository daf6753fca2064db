"""`sexp_tasks.batch(...)`: `sexp batch` from Python (SPEC §10.5)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Unpack

from ..batching.batch_summary import BatchSummary
from ..batching.driver import BatchOptions, run_batch
from ..batching.input_lines import write_rows
from .embed import api_settings
from .settings_type import BatchSettings, settings_doc

__all__ = ["BatchKeywords", "BatchRows", "batch"]


class BatchRows(list[dict[str, Any]]):
    """What `batch` returns: its rows (OUT's lines as dicts) in input order, a list; and summary,
    the batch's BatchSummary (batch_id, ok, total, tokens, cost_usd, seconds, out, refused, and
    scores: one ScoreAggregate per metric, with name, mean, min, max and n)."""

    def __init__(self, rows: Iterable[dict[str, Any]], summary: BatchSummary) -> None:
        super().__init__(rows)
        self.summary = summary


class BatchKeywords(BatchSettings, total=False):
    """The keywords `batch` and `abatch` take: the settings (BatchSettings) and the batch's own
    options below, whose defaults are BatchOptions' (batching/driver.py)."""

    out: str | Path | None  # default: <stem>.results.jsonl in the working directory
    concurrency: int | None  # default: the `concurrency` setting
    executor: str  # "threads" (the default), "processes" or "ray"
    ray_address: str | None
    resume: str | None
    force: bool
    retry_failed: bool
    reuse: str | None
    # a procedure of the program, or a Python callable (value, row) -> a number or a dict of them
    score: str | Callable[[Any, dict[str, Any]], Any] | None


# batch's own keywords (the rest are settings), named once: in BatchKeywords
_OWN = tuple(key for key in BatchKeywords.__annotations__ if key not in BatchSettings.__annotations__)


def batch(
    path: str | Path,
    data: str | Path | Iterable[dict[str, Any]] | None,
    **keywords: Unpack[BatchKeywords],
) -> BatchRows:
    """Run the program at path once per row of data, as `sexp batch` does; the rows (OUT's
    lines, as dicts: index, status, value, error, run_id, tokens, cost_usd, seconds), in input
    order, in a list whose `summary` is the batch's BatchSummary.

    data: a .jsonl file's path, or an iterable of dicts with string keys (its rows; None with
    resume: the batch's recorded file). Keywords (typed by `BatchKeywords`): out, the results
    file (default `<stem>.results.jsonl` in the working directory); concurrency, how many rows
    run at once (default: the `concurrency` setting); executor, "threads" (the default),
    "processes" or "ray", and ray_address; resume, a batch id to resume; force (False); and
    retry_failed (False): with resume, run the rows whose result is an error again as fresh runs
    (their model calls sent again) rather than resuming them; reuse, a batch id: a new batch
    whose row i answers the model requests that batch's row i also made from its record (`--reuse`);
    score, a scorer for each ok row: the
    name of a procedure the program defines (run where the row runs, called with its value and
    row) or a Python callable (value, row) -> a number or a dict of numbers (run in this process
    as each row ends, value as the row's "value"); each row then has "score" and "score_error",
    and the returned list's `summary.scores` holds the aggregates; then the settings listed below
    (typed by `sexp_tasks.Settings`). A batch that cannot start raises a SexpError (BatchError
    for its input, options or resume); a failing row does not raise: its status is "error"."""
    return run_rows(path, data, None, **keywords)


def run_rows(
    path: str | Path,
    data: str | Path | Iterable[dict[str, Any]] | None,
    on_row: Callable[[dict[str, Any]], None] | None,
    **keywords: Unpack[BatchKeywords],
) -> BatchRows:
    """batch(...), on_row called with each row as it ends (in the calling thread; abatch's)."""
    settings: dict[str, Any] = dict(keywords)
    own = {key: settings.pop(key) for key in _OWN if key in settings}
    out = own.pop("out", None)
    resolved = api_settings(settings)
    spooled: str | None = None
    if data is None or isinstance(data, (str, Path)):
        source, label = (Path(data) if data is not None else None), None
    else:  # rows from Python: written to a file first, so that they are checked before any runs
        handle, spooled = tempfile.mkstemp(prefix="sexp-batch-", suffix=".jsonl")
        os.close(handle)
        write_rows(data, Path(spooled))
        source, label = Path(spooled), "<python>"
    try:
        out_file = Path(out) if out is not None else None
        options = BatchOptions(Path(path), source, out_file, data_label=label, on_row=on_row, **own)
        summary = run_batch(options, resolved)
    finally:
        if spooled is not None:
            os.unlink(spooled)
    with summary.out.open(encoding="utf-8") as lines:
        return BatchRows((json.loads(line) for line in lines), summary)


# help(sexp_tasks.batch) lists the settings it takes (concurrency is its own keyword, above).
batch.__doc__ = (batch.__doc__ or "").rstrip() + settings_doc()
