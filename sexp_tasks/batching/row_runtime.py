"""The Runtime a batch's rows run in on a worker thread: made once per thread, reused row after row.

Making a Runtime (the language's globals, primitives and prelude; the task system) was the
largest part of a row's own work after its model call, and nothing of it depends on the row:
only on the batch's settings, templates and exporter of spans. Before each row the thread's
Runtime is put back as it was when made: the globals bound then (an earlier row's define,
defatom and inputs are forgotten, a redefined name is bound again), a fresh copy of the batch's
templates, and a task system that has forgotten the earlier rows' tasks, history, warnings and
mock replies. A library procedure a row compiled on first use is compiled again in the clean
Runtime and kept, as if it had been compiled before any row (not once a row). A row whose
settings differ from the Runtime's gets a new one.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from ..config import Settings
from ..lang.forms import defines_procedure
from ..runtime import Runtime
from .row_runner import BatchShare


class RowRuntimes:
    """One Runtime per worker thread of a batch (ThreadExecutor's), each reused for its rows."""

    def __init__(self, share: BatchShare) -> None:
        self._share = share
        self._local = threading.local()

    def fresh(self, settings: Settings, plain: dict[str, Any], shares_budget: bool) -> Runtime:
        """This thread's Runtime for a row with settings (plain: as the RowJob carries them), as a
        new one would be. shares_budget: the row spends from the batch's budget, so the settings'
        max_cost_usd (what is left of it when the row starts) is no reason to make another."""
        key = {k: v for k, v in plain.items() if not (shares_budget and k == "max_cost_usd")}
        held = getattr(self._local, "held", None)
        if held is None or held[0] != key:
            runtime = Runtime(
                settings,
                sys.stderr,
                sys.stderr,
                load_templates=False,
                library=self._share.library,
                telemetry=self._share.telemetry,
            )
            self._local.held = (key, runtime, runtime.globals.saved())
            return runtime
        _, runtime, saved = held
        pending = runtime.globals.pending
        kept = saved[1].items()
        compiled = [name for name, form in kept if name not in pending and defines_procedure(form)]
        runtime.globals.restore(saved)
        runtime.tasks.start_afresh(self._share.library.copy(runtime.warn))
        if compiled:  # the library procedures the last row compiled (task-content...): compiled
            # again now, as a fresh Runtime would, and kept, so that each is compiled once a thread
            try:
                for name in compiled:
                    runtime.library.resolve(name)
            except Exception:  # a definition that fails fails in the row that uses it, as before
                runtime.globals.restore(saved)
                return runtime
            self._local.held = (key, runtime, runtime.globals.saved())
        return runtime

