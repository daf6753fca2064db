"""Running one row of a batch: a Runtime of its own, recording into the batch's store, with the
row in the global `row` and its inputs bound as globals (but those row_names.py keeps out);
never raises for the user's errors (they become status "error").

What costs the same for every row is done once per process: the prelude is read once (see
lang/prelude.py) and the templates once per batch (`library_for`);
each row gets a copy it may add to (defatom) without another row seeing it.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from ..config import Settings
from ..diagnostics import failed_result_line, format_failure
from ..handler.cost import CostBudget
from ..handler.model_request import ModelAnswer
from ..handler.replay import Cassette
from ..lang.deepstack import deep_recursion
from ..lang.printer import to_json
from ..redact import scrub
from ..results import TaskError
from ..runs.store import Store
from ..runtime import Runtime
from ..tasks.library import TaskLibrary
from ..tasks.runner import TaskSystem
from .row_names import ROW
from .rows import ProgramBundle, RowJob, RowOutcome

_LIBRARIES: dict[tuple[Any, ...], TaskLibrary] = {}
_CASSETTES: dict[tuple[str, str, str], Cassette] = {}
_LIBRARIES_LOCK = threading.Lock()
_PLAIN = {f.name for f in fields(Settings)} - {"warnings", "sources"}


def plain_settings(settings: Settings, **changes: Any) -> dict[str, Any]:
    """settings as the plain data a RowJob carries (Settings(**it) makes them again)."""
    data = {key: value for key, value in asdict(settings).items() if key in _PLAIN}
    data.update(changes)
    return data


def library_for(
    batch_id: str, settings: Settings, program: Path, warn: Callable[[str], None] | None = None
) -> TaskLibrary:
    """The templates program sees (stdlib, its tasks/, ./tasks, the template directories), read
    once per batch and process (a later batch reads them again, edited or not); a template error
    is raised (the batch reports it before any row runs), and warnings of loading them (a
    template overriding another) go to warn, once."""
    key = (batch_id, str(program.resolve()), settings.templates, settings.template_flags, str(Path.cwd()))
    with _LIBRARIES_LOCK:
        found = _LIBRARIES.get(key)
        if found is None:
            system = TaskSystem(settings, warn or (lambda message: None))
            system.load_templates(program=program)
            found = system.library
            found.templates  # noqa: B018  (reads the stdlib's lazy templates now, once)
            if len(_LIBRARIES) >= 8:
                _LIBRARIES.clear()
            _LIBRARIES[key] = found
        return found


def cassette_for(batch_id: str, settings: Settings) -> Cassette | None:
    """The batch's one cassette (--record or --replay), made once per batch and process: a
    recording one is emptied once, then every row appends to it; None without either."""
    mode, path = ("record", settings.record) if settings.record else ("replay", settings.replay)
    if not path:
        return None
    key = (batch_id, mode, str(Path(path).resolve()))
    with _LIBRARIES_LOCK:
        found = _CASSETTES.get(key)
        if found is None:
            if len(_CASSETTES) >= 8:
                _CASSETTES.clear()
            found = _CASSETTES[key] = Cassette(path, mode)
        return found


class RowBudget(CostBudget):
    """A row's view of the batch's one budget: reservations and spending go to the shared
    budget; what the row's own calls made is counted here too."""

    def __init__(self, shared: CostBudget) -> None:
        super().__init__(shared.limit)
        self.shared = shared

    @property
    def spent(self) -> float:
        return self.shared.spent

    @property
    def largest_output(self) -> int:
        return self.shared.largest_output

    def seed(self, spent: float) -> None:
        """Nothing: the batch's budget was seeded once with what all its rows had spent."""

    def refusal(self) -> TaskError | None:
        return self.shared.refusal()

    def reserve(self, estimate: float, bound: float | None = None) -> TaskError | None:
        return self.shared.reserve(estimate, bound)

    def settle(self, reserved: float, reply: ModelAnswer | None) -> None:
        self.shared.settle(reserved, reply)
        if reply is not None:
            super().spend(reply)

    def spend(self, reply: ModelAnswer) -> None:
        self.shared.spend(reply)
        super().spend(reply)


class RowRuntime(Runtime):
    """A Runtime recording one row's run into the batch's open store, under the run id the
    batch chose; it announces nothing (the batch's own lines say what happens)."""

    def __init__(self, settings: Settings, store: Store, job: RowJob, budget: CostBudget | None) -> None:
        super().__init__(settings, out=sys.stderr, err=sys.stderr, load_templates=False)
        self._store = store
        self._row_run_id = job.run_id
        self.tasks.library = library_for(job.batch_id, settings, Path(job.program.path)).copy(self.warn)
        if budget is not None:
            self.tasks.budget = RowBudget(budget)
        self.tasks.cassette = cassette_for(job.batch_id, settings)

    def _open_store(self, create: bool) -> Store:
        return self._store

    def start_run(self, program: str, text: str, inputs: dict[str, Any], run_id: str | None = None) -> str:
        return super().start_run(program, text, inputs, run_id or self._row_run_id)

    def _announce(self, run_id: str) -> None:
        pass

    def _resume_hint(self, run_id: str, program: str | None) -> None:
        pass


def run_row(job: RowJob, store: Store, budget: CostBudget | None = None) -> RowOutcome:
    """Run (or resume) job's row as its own recorded run in store; how it ended.

    budget: the batch's shared budget (None: the row's own, from its settings' max_cost_usd).
    A row whose recorded run never began (the batch was killed just before) starts it afresh."""
    began = time.monotonic()
    status, value, error = "error", None, None
    runtime: RowRuntime | None = None
    try:
        settings = Settings(**job.settings)
        runtime = RowRuntime(settings, store, job, budget)
        for name, given in job.inputs.items():
            if name not in job.unbound:
                runtime.define(name, given)
        runtime.define(ROW, job.inputs if job.row is None else job.row)
        resume = job.run_id if job.resuming and store.run(job.run_id) is not None else None
        path = Path(job.program.path)
        with deep_recursion():  # as deep as on the command line, in a thread or a Ray worker alike
            result = runtime.run_recorded(path, job.program.text, dict(job.inputs), resume, job.force)
        failure = failed_result_line(result)
        if failure is None:
            status, value = "ok", json.loads(to_json(result))  # to_json refuses NaN and infinity
        else:  # at the form whose value it is: the program's last (docs/batch.md's file:line:col)
            error = " ".join(_at(failure, job.program).split())
    except Exception as exc:  # the row's error (or a bug): the row failed, the batch goes on
        error = scrub(format_failure(exc).splitlines()[0])
    finally:
        if runtime is not None:
            runtime.release_run_lock()  # now, rather than when runtime is collected
    tokens, cost = run_totals(store, job.run_id)
    seconds = round(time.monotonic() - began, 3)
    return RowOutcome(job.index, status, value, error, job.run_id, tokens, cost, seconds)


def _at(failure: str, program: ProgramBundle) -> str:
    """failure (`error: ...`) positioned at program's last top-level form, when known."""
    if program.last_form is None:
        return failure
    line, column = program.last_form
    return f"{program.path}:{line}:{column}: {failure}"


def run_totals(store: Store, run_id: str) -> tuple[int, float]:
    """The tokens and cost of a run's steps (as `sexp runs` counts them), resumed steps included."""
    rows = store.query(
        """SELECT COALESCE(SUM(prompt_tokens + completion_tokens), 0) AS tokens,
                  COALESCE(SUM(cost_usd), 0) AS cost FROM steps WHERE run_id = ?""",
        (run_id,),
    )
    return int(rows[0]["tokens"]), float(rows[0]["cost"])
