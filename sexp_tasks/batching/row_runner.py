"""Running one row of a batch: in a Runtime as a new one would be (on threads, its worker's,
reused: row_runtime.py), recording into the batch's store, with the row in the global `row` and
its inputs bound as globals (but those row_names.py keeps out); never raises for the user's
errors (they become status "error").

What costs the same for every row is done once per process: the prelude is read once (see
lang/prelude.py) and the templates once per batch (`BatchShare`);
each row gets a copy it may add to (defatom) without another row seeing it.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from ..config import Settings
from ..diagnostics import failed_result_line, format_failure
from ..handler.cost import CostBudget
from ..handler.tracing import NO_TRACER
from ..lang.deepstack import deep_recursion
from ..lang.printer import to_json
from ..redact import scrub
from ..runs.recording import CassetteSlot, Run
from ..runs.store import Store
from ..runs.telemetry import open_telemetry
from ..runtime import Runtime
from ..tasks.runner import TaskSystem
from .row_names import ROW
from .rows import ProgramBundle, RowJob, RowOutcome
from .scoring import RowScore

_PLAIN = {f.name for f in fields(Settings)} - {"warnings", "sources"}


def plain_settings(settings: Settings, **changes: Any) -> dict[str, Any]:
    """settings as the plain data a RowJob carries (Settings(**it) makes them again)."""
    data = {key: value for key, value in asdict(settings).items() if key in _PLAIN}
    data.update(changes)
    return data


class BatchShare:
    """What every row of one batch shares in one process, made once: the templates its program
    sees (stdlib, its tasks/, ./tasks, the template directories: a later batch reads them again,
    edited or not), and its cassette (--record: emptied once, then every row appends to it; or
    --replay's). The driver makes one for its rows on threads; a Ray row worker its own."""

    def __init__(self, settings: Settings, program: Path, warn: Callable[[str], None] | None = None) -> None:
        """A template that does not load, or a cassette that cannot be read, is raised now (the
        batch reports it before any row runs); warnings of loading the templates (one overriding
        another) go to warn, once."""
        system = TaskSystem(settings, warn or (lambda message: None))
        system.load_templates(program=program)
        self.library = system.library
        self.library.templates  # noqa: B018  (reads the stdlib's lazy templates now, once)
        cassette = CassetteSlot.of(settings.record, settings.replay)
        cassette.get()
        self.cassette = cassette
        # the exporter of every row's spans in this process, with the otel setting (SPEC §11.4)
        self.telemetry = open_telemetry(settings, warn or (lambda message: None))
        self.tracer = self.telemetry.tracer if self.telemetry is not None else NO_TRACER

    @classmethod
    def for_row(cls, job: RowJob) -> BatchShare | None:
        """The share of job's batch, made from the row's settings and program (a Ray row worker's);
        None when it cannot be made: run_row makes it again, and its error is the row's."""
        try:
            return cls(Settings(**job.settings), Path(job.program.path))
        except Exception:
            return None


def run_row(
    job: RowJob,
    store: Store,
    budget: CostBudget | None = None,
    share: BatchShare | None = None,
    runtime_for: Callable[[Settings, dict[str, Any], bool], Runtime] | None = None,
) -> RowOutcome:
    """Run (or resume) job's row as its own recorded run in store, under the run id the batch
    chose, announcing nothing (the batch's own lines say what happens); how it ended.

    budget: the batch's shared budget (None: the row's own, from its settings' max_cost_usd);
    share: the batch's templates and cassette in this process (None: made for this row alone);
    runtime_for: (settings, as the job carries them, whether the budget is shared) -> the Runtime
    to run the row in, as a new one would be (row_runtime.RowRuntimes.fresh); None: a new one.
    A row whose recorded run never began (the batch was killed just before) starts it afresh."""
    began = time.monotonic()
    status, value, error = "error", None, None
    run: Run | None = None
    scored: RowScore | None = None
    try:
        settings = Settings(**job.settings)
        path = Path(job.program.path)
        share = share or BatchShare(settings, path)
        if runtime_for is not None:
            runtime = runtime_for(settings, job.settings, budget is not None)
        else:
            runtime = Runtime(
                settings,
                sys.stderr,
                sys.stderr,
                load_templates=False,
                library=share.library,
                telemetry=share.telemetry,
            )
        for name, given in job.inputs.items():
            if name not in job.unbound:
                runtime.define(name, given)
        runtime.define(ROW, job.inputs if job.row is None else job.row)
        run = Run(
            budget if budget is not None else CostBudget(settings.max_cost_usd),
            share.cassette,
            lambda create: store,
            str(settings.store),
            run_id=job.run_id,
            shares_budget=budget is not None,
        )
        resume = job.run_id if job.resuming and store.run(job.run_id) is not None else None
        row = job.inputs if job.row is None else job.row
        scored = RowScore(runtime, job.score, row) if job.score else None
        # as deep as on the command line, in a thread or a Ray worker alike; under the batch's span
        with deep_recursion(), share.tracer.adopt(job.trace_parent):
            result = runtime.run_recorded(
                path, job.program.text, dict(job.inputs), resume, job.force, run, reuse=job.reuse, then=scored
            )
        failure = failed_result_line(result)
        if failure is None:
            status, value = "ok", json.loads(to_json(result))  # to_json refuses NaN and infinity
        else:  # at the form whose value it is: the program's last (docs/batch.md's file:line:col)
            error = " ".join(_at(failure, job.program).split())
    except Exception as exc:  # the row's error (or a bug): the row failed, the batch goes on
        error = scrub(format_failure(exc).splitlines()[0])
    finally:
        if run is not None:
            run.release()  # now, rather than when the run is collected
    tokens, cost = store.run_totals(job.run_id)
    seconds = round(time.monotonic() - began, 3)
    score, score_error = scored.result() if scored is not None and status == "ok" else (None, None)
    return RowOutcome(job.index, status, value, error, job.run_id, tokens, cost, seconds, score, score_error)


def _at(failure: str, program: ProgramBundle) -> str:
    """failure (`error: ...`) positioned at program's last top-level form, when known."""
    if program.last_form is None:
        return failure
    line, column = program.last_form
    return f"{program.path}:{line}:{column}: {failure}"
