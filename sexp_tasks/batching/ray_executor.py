"""`sexp batch --executor ray` (SPEC §10.5): rows run on Ray, on a cluster or a local Ray.

The driver's side: starting Ray and the batch's actors (ray_actors.py: what runs in Ray's
processes), sending rows and collecting outcomes. With ray_actors.py the one module that imports
ray (pyproject.toml's import contracts), itself imported only when a batch asks for Ray
(cli/startup.py). What runs where:

- The driver (the `sexp batch` process) keeps the output file and the run store, whose SQLite
  file never leaves its machine. Workers on that machine record their rows' runs in the file
  itself (as several `sexp run` processes share it: no round trip per step); workers on other
  machines through a `StoreProxy`, whose calls a `StoreKeeper` actor pinned to the driver's node
  answers (started only when the cluster has other nodes). Partial rows resume on Ray as they do
  on threads.
- Rows run in `workers` row-worker actors (one process each, one CPU each), every one running up
  to ceil(concurrency / workers) rows at once on threads of its own: a row spends its time waiting
  for a model, so a process per row in flight would only cost memory. Rows travel in chunks: each
  worker has one `exchange` call in flight, which carries the rows it is to start and returns the
  rows that ended meanwhile (an actor call per row cost more CPU, across the driver, the worker
  and Ray, than the row's own work). The program text and its templates go to each worker once,
  through the object store; each row carries its inputs.
- What a row prints is labelled and sent back with the exchange (row_output.py), and written to
  the driver's stderr, as rows on threads write theirs.
- With --max-cost, every row's calls reserve from one `BudgetKeeper` actor on the driver's node
  (shared_budget.py), as rows on threads share the driver's budget.
- A worker process that dies (killed, out of memory) fails only the rows it was running: each is
  run again once, resuming what its run recorded, on a new worker; a row whose worker dies a
  second time ends as an "error" row.

A local Ray (no --ray-address, no RAY_ADDRESS) is started for the batch, quietly (no dashboard, no
Ray log forwarding, no raylet notices), with the driver's sys.path, and shut down by close(); a Ray
this process already started (`ray.init()` before `sexp_tasks.batch(...)`) is used as it is. Its
processes start without the driver's credentials, which a row's script could read in their
/proc/<pid>/environ: each row worker is handed them, sets them after its start and closes itself
to other processes (redact.py); so are those of a local Ray start_local_ray started without them
(bench/batch.py's). A cluster's workers have their own keys.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ray
from ray._private import worker as ray_worker
from ray.exceptions import RayActorError, RayError, WorkerCrashedError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from ..errors import BatchError, StoreError
from ..handler.cost import CostBudget
from ..redact import is_credential_name
from .cluster_address import probe
from .ray_actors import RowRunner, RowWorker, StoreKeeper, error_outcome, one_line
from .row_runner import run_row
from .rows import RowJob, RowOutcome
from .shared_budget import BudgetKeeper
from .shipping import pack

RETRIES = 1  # how many times a row whose worker died is run again
WAIT_SLICE_SECONDS = 0.2  # how long the driver waits for an outcome before it looks at signals
DIRECT_STORE = True  # workers on the driver's machine open the store file (tests turn it off)
# The credentials start_local_ray kept out of the local Ray it started in this process (None: it
# started none, or kept them): an executor using that Ray hands them to its row workers.
_kept_out: dict[str, str] | None = None


@dataclasses.dataclass
class _Flight:
    job: RowJob
    attempt: int
    started: float


@dataclasses.dataclass
class _Slot:
    """A row worker as the driver sees it: the actor (None once it died: a new one is started
    when rows are sent), its rows in flight by index, its exchange in flight, rows to run again."""

    actor: Any = None
    rows: dict[int, _Flight] = dataclasses.field(default_factory=dict)
    call: Any = None
    again: list[_Flight] = dataclasses.field(default_factory=list)


class RayExecutor:
    """Runs a batch's rows on Ray: `address` (--ray-address, else RAY_ADDRESS) names a cluster;
    neither starts a local Ray with `workers` CPUs (default: this machine's) for the batch.
    `workers` row-worker processes are started (on a cluster, default: its CPUs)."""

    def __init__(
        self,
        address: str | None,
        store_path: str | Path,
        workers: int | None = None,
        runner: RowRunner = run_row,
        budget: CostBudget | None = None,
    ) -> None:
        if workers is not None and workers < 1:
            raise BatchError(f"the number of Ray workers must be at least 1, not {workers}")
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        self.store_path = str(Path(store_path).resolve())
        self.workers = workers
        self.runner = runner
        self._owned = False  # whether this executor started Ray (and so shuts it down)
        self._keeper: Any = None
        self._slots: list[_Slot] = []  # the row workers
        self._worker_class: Any = None
        self._threads = 1  # rows each worker runs at once
        self._node: str | None = None  # the driver's Ray node
        self._programs: dict[int, Any] = {}  # id(ProgramBundle) -> (bundle, its ref)
        self._credentials: dict[str, str] | None = None  # what the workers of a local Ray are handed
        self.budget = budget  # the batch's: its limit and what was spent seed the BudgetKeeper
        self._budget: tuple[Any, float] | None = None  # (the BudgetKeeper, the limit) rows reserve from
        if not ray.is_initialized():  # connect now: a cluster that cannot be reached is no batch
            self._init_ray()
        elif _kept_out is not None:  # start_local_ray's, started without the keys: hand them over
            self._credentials = credentials()

    # Starting ---------------------------------------------------------------------------
    def _start(self, concurrency: int) -> None:
        self._node = ray.get_runtime_context().get_node_id()
        if len([node for node in ray.nodes() if node.get("Alive")]) > 1 or not DIRECT_STORE:
            self._keeper = (
                ray.remote(StoreKeeper)
                .options(
                    num_cpus=0,
                    max_concurrency=16,
                    scheduling_strategy=NodeAffinitySchedulingStrategy(self._node, soft=False),
                )
                .remote(self.store_path)
            )
            try:  # a store that cannot be opened is the keeper's constructor failing: say so now
                ray.get(self._keeper.ping.remote())
            except RayActorError as err:
                message = f"cannot open the run store '{self.store_path}' for Ray rows: {one_line(err)}"
                raise StoreError(message)
        if self.budget is not None and self.budget.limit is not None:
            pinned = NodeAffinitySchedulingStrategy(self._node, soft=False)
            actor = ray.remote(BudgetKeeper)
            keeper = actor.options(num_cpus=0, max_concurrency=64, scheduling_strategy=pinned)
            self._budget = (keeper.remote(self.budget.limit, self.budget.spent), self.budget.limit)
        workers = self.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        workers = max(1, min(workers, concurrency))
        # A worker runs its rows on threads of its own; its actor calls are one exchange at a time
        self._worker_class = ray.remote(RowWorker).options(num_cpus=1, max_concurrency=2, max_restarts=0)
        self._threads = math.ceil(concurrency / workers)
        self._slots = [_Slot(self._new_worker()) for _ in range(workers)]

    def _new_worker(self) -> Any:
        node = self._node if DIRECT_STORE else None
        return self._worker_class.remote(
            self._keeper, self.store_path, self.runner, node, self._credentials, self._budget, self._threads
        )

    def _init_ray(self) -> None:
        address = self.address or "local"
        try:
            if address == "local":
                self._credentials = credentials()
                start_local_ray(max(self.workers or 1, os.cpu_count() or 1))
            else:
                probe(address)
                logging.getLogger("ray").setLevel(logging.ERROR)  # its notices are not the batch's
                ray.init(address=address, configure_logging=False, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as err:
            raise BatchError(f"cannot connect to the Ray cluster at {address}: {one_line(err)}") from None
        self._owned = True
        # The raylets' notices (a worker died: 600 characters, on stdout): a row's error says it
        ray_worker.print_to_stdstream = lambda data, ignore_prefix: None

    def _program_ref(self, job: RowJob) -> list[Any]:
        """[the object-store ref of the job's ProgramBundle with its templates], put there once."""
        known = self._programs.get(id(job.program))
        if known is None or known[0] is not job.program:
            packed = pack(job.program, job.settings)
            known = self._programs[id(job.program)] = (job.program, ray.put(packed))
        return [known[1]]

    # Running ----------------------------------------------------------------------------
    def run(self, jobs: Iterator[RowJob], concurrency: int) -> Iterator[RowOutcome]:
        """Each job's outcome, in completion order, with at most `concurrency` rows in flight
        (each worker at most its share); the next jobs are taken only once the outcomes at hand
        have been handed on (so a budget the caller checks between outcomes sees every finished
        row). Rows travel to a worker and back in chunks: one exchange per worker in flight, which
        carries the rows it is to start and returns once some of its rows ended."""
        self._start(concurrency)
        slots = self._slots
        share = math.ceil(concurrency / len(slots))
        source = iter(jobs)
        room = [concurrency]  # rows that may still be started
        while True:
            for slot in slots:
                if slot.call is None:
                    self._send(slot, self._take(slot, source, share, room))
            calls = {slot.call: slot for slot in slots if slot.call is not None}
            if not calls:
                return
            ready = _first_ready(list(calls))
            slot = calls[ready]
            slot.call = None
            for outcome in self._collect(slot, ready):
                room[0] += 1
                yield outcome

    def _take(self, slot: _Slot, source: Iterator[RowJob], share: int, room: list[int]) -> list[_Flight]:
        """The rows to start on slot's worker now: its rows to run again, then new jobs while it and
        the batch have room."""
        chunk, slot.again = slot.again, []
        while room[0] > 0 and len(slot.rows) + len(chunk) < share:
            job = next(source, None)
            if job is None:
                break
            room[0] -= 1
            chunk.append(_Flight(job, 0, time.monotonic()))
        return chunk

    def _send(self, slot: _Slot, chunk: list[_Flight]) -> None:
        """An exchange with slot's worker (started when it has none) starting chunk's rows; none
        when the worker has no rows to run or wait for."""
        if not chunk and not slot.rows:
            return
        if slot.actor is None:
            slot.actor = self._new_worker()
        programs: dict[int, list[_Flight]] = {}  # in practice one, the batch's
        for flight in chunk:
            programs.setdefault(id(flight.job.program), []).append(flight)
        first, *others = list(programs.values()) or [[]]
        slot.again = [flight for group in others for flight in group]  # an exchange carries one program
        for flight in first:
            slot.rows[flight.job.index] = flight
        program = self._program_ref(first[0].job) if first else []
        slot.call = slot.actor.exchange.remote([_light(flight.job) for flight in first], program)

    def _collect(self, slot: _Slot, ready: Any) -> list[RowOutcome]:
        """The rows that ended in slot's exchange `ready` (the lines they printed written to this
        process's stderr); when its worker died, every row it was running is run again once (on
        a new worker, resuming its recorded run) or ends as an error."""
        try:
            ended, printed = ray.get(ready)
        except (RayActorError, WorkerCrashedError) as err:
            slot.actor = None  # a new worker is started when rows are sent
            lost, slot.rows = list(slot.rows.values()), {}
            failed = []
            for flight in lost:
                if flight.attempt < RETRIES:  # resumed (started afresh if its run never began)
                    again = dataclasses.replace(flight.job, resuming=True)
                    slot.again.append(_Flight(again, flight.attempt + 1, flight.started))
                else:
                    cause = f"died ({one_line(err)}) and again after {RETRIES} retry"
                    failed.append(
                        error_outcome(flight.job, f"the Ray worker running this row {cause}", flight.started)
                    )
            return failed
        except RayError as err:  # a bug: the worker's rows fail, and it is let go
            slot.actor, lost, slot.rows = None, list(slot.rows.values()), {}
            return [error_outcome(f.job, f"the row failed on Ray: {one_line(err)}", f.started) for f in lost]
        if printed:
            sys.stderr.write("".join(printed))
            sys.stderr.flush()
        for outcome in ended:
            slot.rows.pop(outcome.index, None)
        return ended

    def close(self) -> None:
        """Stop the batch's workers and keeper; shut down the local Ray this executor started."""
        # Actors end when their last handle goes (ray.kill may wait on one that is starting).
        self._slots, self._keeper, self._programs, self._budget = [], None, {}, None
        if self._owned and ray.is_initialized():
            global _kept_out
            ray.shutdown()
            self._owned, _kept_out = False, None


def start_local_ray(cpus: int, keep_credentials: bool = False) -> None:
    """A local Ray of `cpus` CPUs for this process, started quietly: no dashboard, no log
    forwarding (Ray's worker logs are not the batch's: rows' print output comes with their
    exchanges), the driver's logging left as it is and
    ray's own notices (token authentication...) kept off stderr; its workers import what this
    process imports (its sys.path, so a checkout run without installing works too). Its processes
    start without this process's credentials unless keep_credentials (a stand-in for a cluster
    whose machines have the keys)."""
    global _kept_out
    logging.getLogger("ray").setLevel(logging.ERROR)
    away = {} if keep_credentials else credentials()
    _kept_out = away or None
    for name in away:  # unset while Ray starts its processes, which copy this environment
        del os.environ[name]
    try:
        ray.init(
            address="local",
            num_cpus=cpus,
            include_dashboard=False,
            configure_logging=False,
            log_to_driver=False,
            runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(entry for entry in sys.path if entry)}},
        )
    finally:
        os.environ.update(away)


def _light(job: RowJob) -> RowJob:
    """job without its program (sent once, by ref)."""
    return dataclasses.replace(job, program=None)  # type: ignore[arg-type]


def credentials() -> dict[str, str]:
    """The credentials in this process's environment (provider keys, tokens: redact.py's names)."""
    return {name: value for name, value in os.environ.items() if is_credential_name(name) and value}


def _first_ready(refs: list[Any]) -> Any:
    """The first of refs to be ready; waits in short slices, so that Ctrl-C (which Python sees only
    between them) stops the batch."""
    while True:
        ready, _ = ray.wait(refs, num_returns=1, timeout=WAIT_SLICE_SECONDS)
        if ready:
            return ready[0]
