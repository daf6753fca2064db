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
from ..handler.replay import Cassette
from ..lang.deepstack import deep_recursion
from ..lang.printer import to_json
from ..redact import scrub
from ..runs.recording import CassetteSlot, Run
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


def run_row(job: RowJob, store: Store, budget: CostBudget | None = None) -> RowOutcome:
    """Run (or resume) job's row as its own recorded run in store, under the run id the batch
    chose, announcing nothing (the batch's own lines say what happens); how it ended.

    budget: the batch's shared budget (None: the row's own, from its settings' max_cost_usd).
    A row whose recorded run never began (the batch was killed just before) starts it afresh."""
    began = time.monotonic()
    status, value, error = "error", None, None
    run: Run | None = None
    try:
        settings = Settings(**job.settings)
        library = library_for(job.batch_id, settings, Path(job.program.path))
        runtime = Runtime(settings, sys.stderr, sys.stderr, load_templates=False, library=library)
        for name, given in job.inputs.items():
            if name not in job.unbound:
                runtime.define(name, given)
        runtime.define(ROW, job.inputs if job.row is None else job.row)
        cassette = cassette_for(job.batch_id, settings)
        run = Run(
            budget if budget is not None else CostBudget(settings.max_cost_usd),
            CassetteSlot(lambda: cassette),
            lambda create: store,
            str(settings.store),
            run_id=job.run_id,
            shares_budget=budget is not None,
        )
        resume = job.run_id if job.resuming and store.run(job.run_id) is not None else None
        path = Path(job.program.path)
        with deep_recursion():  # as deep as on the command line, in a thread or a Ray worker alike
            result = runtime.run_recorded(path, job.program.text, dict(job.inputs), resume, job.force, run)
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
    return RowOutcome(job.index, status, value, error, job.run_id, tokens, cost, seconds)


def _at(failure: str, program: ProgramBundle) -> str:
    """failure (`error: ...`) positioned at program's last top-level form, when known."""
    if program.last_form is None:
        return failure
    line, column = program.last_form
    return f"{program.path}:{line}:{column}: {failure}"
