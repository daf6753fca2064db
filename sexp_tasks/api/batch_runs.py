"""`sexp_tasks.batch(...)`: `sexp batch` from Python (SPEC §10.5)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Unpack

from ..batching.driver import BatchOptions, run_batch
from ..batching.input_lines import write_rows
from .embed import api_settings
from .settings_type import BatchSettings, settings_doc

__all__ = ["batch"]


def batch(
    path: str | Path,
    data: str | Path | Iterable[dict[str, Any]] | None,
    *,
    out: str | Path | None = None,
    concurrency: int | None = None,
    executor: str = "threads",
    ray_address: str | None = None,
    resume: str | None = None,
    force: bool = False,
    retry_failed: bool = False,
    **settings: Unpack[BatchSettings],
) -> list[dict[str, Any]]:
    """Run the program at path once per row of data, as `sexp batch` does; the rows (OUT's
    lines, as dicts: index, status, value, error, run_id, tokens, cost_usd, seconds), in input
    order.

    data: a .jsonl file's path, or an iterable of dicts with string keys (its rows; None with
    resume: the batch's recorded file). out: the results file (default `<stem>.results.jsonl` in
    the working directory). retry_failed: with resume, run the rows whose result is an error again
    as fresh runs (their model calls sent again) rather than resuming them. settings: the
    keyword settings listed below (typed by `sexp_tasks.Settings`; `concurrency` is batch's
    own). A batch that cannot start raises a SexpError (BatchError for its input, options or
    resume); a failing row does not raise: its status is "error"."""
    return run_rows(
        path,
        data,
        None,
        out=out,
        concurrency=concurrency,
        executor=executor,
        ray_address=ray_address,
        resume=resume,
        force=force,
        retry_failed=retry_failed,
        **settings,
    )


def run_rows(
    path: str | Path,
    data: str | Path | Iterable[dict[str, Any]] | None,
    on_row: Callable[[dict[str, Any]], None] | None,
    *,
    out: str | Path | None = None,
    concurrency: int | None = None,
    executor: str = "threads",
    ray_address: str | None = None,
    resume: str | None = None,
    force: bool = False,
    retry_failed: bool = False,
    **settings: Any,
) -> list[dict[str, Any]]:
    """batch(...), on_row called with each row as it ends (in the calling thread; abatch's)."""
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
        options = BatchOptions(
            program=Path(path),
            data=source,
            out=Path(out) if out is not None else None,
            concurrency=concurrency,
            executor=executor,
            ray_address=ray_address,
            resume=resume,
            force=force,
            retry_failed=retry_failed,
            data_label=label,
            on_row=on_row,
        )
        summary = run_batch(options, resolved)
    finally:
        if spooled is not None:
            os.unlink(spooled)
    with summary.out.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


# help(sexp_tasks.batch) lists the settings it takes (concurrency is its own keyword, above).
batch.__doc__ = (batch.__doc__ or "").rstrip() + settings_doc()
