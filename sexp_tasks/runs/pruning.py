"""`sexp runs --prune [--older-than DAYS]` (SPEC §11.1): deleting finished runs from the store.

A run is finished when its program ended: `completed` or `failed`. An `interrupted` run (Ctrl-C,
or a process that died) is kept, as is one still `running`: resuming it is what the record is
for. A batch's rows are runs too, but they go only with their batch, and only once the batch is
finished (`completed` or `failed`): an interrupted batch keeps every row it needs to resume.
`--older-than` counts from the time a run (or batch) ended.

Nothing a live process holds is deleted: pruning takes the lock of every run and batch it deletes,
for as long as it deletes them, and skips one another process holds. Deleting is done in chunks
(each its run's steps and rows, in one transaction), so a store of any size is pruned with a few
locks open at a time; the file is then compacted (VACUUM) unless another process is recording.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..errors import StoreError
from . import batches
from .locks import RunLock
from .store import Store

FINISHED = ("completed", "failed")
CHUNK = 200  # runs locked and deleted together
DAY_SECONDS = 86400.0


@dataclass
class Pruned:
    """What a prune deleted."""

    runs: int = 0
    batches: int = 0

    def line(self) -> str:
        """`pruned <n> runs`, and `, <m> batches` when it deleted any."""
        text = f"pruned {self.runs} run{'' if self.runs == 1 else 's'}"
        if self.batches:
            text += f", {self.batches} batch{'' if self.batches == 1 else 'es'}"
        return text


def prune(store: Store, older_than_days: float | None = None, now: float | None = None) -> Pruned:
    """Delete the finished runs (and finished batches) that ended more than older_than_days ago
    (any time, when None); what was deleted."""
    cutoff = None if older_than_days is None else (now or time.time()) - older_than_days * DAY_SECONDS
    store.sweep_locks()  # an older sexp's lock files, of its processes that died
    pruned = Pruned()
    kept_rows: set[str] = set()  # the runs of batches that stay
    for batch_id, finished in _batches(store, cutoff):
        if finished and _prune_batch(store, batch_id, cutoff, pruned):
            continue
        kept_rows |= _row_runs(store, batch_id)
    alone = [run_id for run_id in _finished_runs(store, cutoff) if run_id not in kept_rows]
    pruned.runs += _delete_runs(store, alone)
    if pruned.runs or pruned.batches:
        _compact(store)
    return pruned


def _batches(store: Store, cutoff: float | None) -> Iterator[tuple[str, bool]]:
    """Each batch's id, and whether it is finished (ended before cutoff, if any)."""
    for row in store.query("SELECT id FROM batches"):
        found = batches.batch(store, row["id"])  # its status as shown: a dead one is interrupted
        if found is None:
            continue
        ended = found["ended_at"]
        old = cutoff is None or (isinstance(ended, (int, float)) and ended < cutoff)
        yield found["id"], found["status"] in FINISHED and old


def _prune_batch(store: Store, batch_id: str, cutoff: float | None, pruned: Pruned) -> bool:
    """Delete a finished batch's runs, then the batch if none of its rows is left (the batch's lock
    held throughout); whether the batch went."""
    with _held(store, [batches.lock_name(batch_id)]) as held:
        if not held:
            return False  # another process has taken it up again
        runs = _row_runs(store, batch_id) & set(_finished_runs(store, cutoff))
        pruned.runs += _delete_runs(store, sorted(runs))
        if store.query("SELECT 1 FROM batch_rows WHERE batch_id = ? LIMIT 1", (batch_id,)):
            return False
        store.write("DELETE FROM batches WHERE id = ?", (batch_id,))
        pruned.batches += 1
        return True


def _row_runs(store: Store, batch_id: str) -> set[str]:
    rows = store.query("SELECT run_id FROM batch_rows WHERE batch_id = ?", (batch_id,))
    return {row["run_id"] for row in rows}


def _finished_runs(store: Store, cutoff: float | None) -> list[str]:
    marks = ", ".join("?" for _ in FINISHED)
    sql = f"SELECT id FROM runs WHERE status IN ({marks})"
    params: list[Any] = list(FINISHED)
    if cutoff is not None:
        sql += " AND ended_at < ?"
        params.append(cutoff)
    return [row["id"] for row in store.query(sql, params)]


def _delete_runs(store: Store, run_ids: list[str]) -> int:
    """Delete the runs no live process holds, with their steps and batch rows; how many."""
    deleted = 0
    for start in range(0, len(run_ids), CHUNK):
        with _held(store, run_ids[start : start + CHUNK]) as held:
            rows = [(run_id,) for run_id in held]
            statements = [
                ("DELETE FROM steps WHERE run_id = ?", rows),
                ("DELETE FROM runs WHERE id = ?", rows),
                ("DELETE FROM batch_rows WHERE run_id = ?", rows),
            ]
            store.write_together(statements)
            deleted += len(rows)
    return deleted


@contextmanager
def _held(store: Store, names: Iterable[str]) -> Iterator[list[str]]:
    """The names whose locks this process could take now (the others are in use), held while the
    block runs."""
    locks: list[RunLock] = []
    held: list[str] = []
    try:
        for name in names:
            lock = store.try_hold_run(name)
            if lock is not None:
                locks.append(lock)
                held.append(name)
        yield held
    finally:
        for lock in locks:
            lock.close()


def _compact(store: Store) -> None:
    """VACUUM, unless a live process is recording (it would wait on the store meanwhile)."""
    if store.any_run_held():
        return
    try:
        store.vacuum()
    except StoreError:
        pass  # busy after all: the space is reused by later runs instead
