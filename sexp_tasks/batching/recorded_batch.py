"""What a batch takes from the store's record of an earlier batch: the batch `--resume` names (its
input and OUT, when not given again; refused before any row runs when its program or input changed,
unless forced) and the one `--reuse` names (which the store must hold: its row i's run is the run
the new batch's row i reuses).

Apart from the driver (driver.py), which runs the batch, because these read the earlier batch's
record alone, not the batch being run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import BatchError
from ..runs import batches
from ..runs.store import Store


def recorded_batch(
    store: Store | None, resume: str | None, reuse: str | None, where: str
) -> dict[str, Any] | None:
    """The record of the batch resume names (None for a new batch); a BatchError when the store
    (the open store of a resumed or reusing batch, at where) holds no batch resume or reuse names."""
    recorded: dict[str, Any] | None = None
    if store is not None and resume is not None:
        recorded = batches.batch(store, resume)
        if recorded is None:
            raise BatchError(f"unknown batch '{resume}' in {where}")
    if store is not None and reuse is not None and batches.batch(store, reuse) is None:
        raise BatchError(f"unknown batch '{reuse}' in {where}")
    return recorded


def recorded_input(data: Path | None, recorded: dict[str, Any] | None) -> Path:
    """The batch's input: data, else the recorded batch's (not rows it was given from Python)."""
    if data is not None:
        return data
    if recorded is None:
        raise BatchError("no input: give --data IN.jsonl")
    if recorded["data"].startswith("<"):
        raise BatchError(f"batch {recorded['id']}'s rows were given from Python: give them again")
    return Path(recorded["data"])


def recorded_out(recorded: dict[str, Any] | None) -> Path | None:
    """The OUT the recorded batch wrote, if it names one."""
    out = (recorded or {}).get("options", {}).get("out")
    return Path(out) if out else None


def check_resumable(recorded: dict[str, Any] | None, force: bool, program_digest: str, digest: str) -> None:
    """A BatchError when the recorded batch's program or input (their digests now: program_digest,
    digest) changed since it was recorded, unless forced."""
    if recorded is None or force:
        return
    if recorded["program_hash"] != program_digest:
        raise BatchError(
            f"the program has changed since batch {recorded['id']} was recorded; resume anyway with"
            " --force (rows whose requests changed will run again)"
        )
    if recorded["options"].get("data_digest") not in (None, digest):
        raise BatchError(
            f"the input has changed since batch {recorded['id']} was recorded; resume anyway with --force"
        )


def reused_run(store: Store, reuse: str | None, index: int) -> str | None:
    """The run row index reuses: that of the --reuse batch's row index, when it has one."""
    if reuse is None:
        return None
    found = batches.stored_row(store, reuse, index)
    return None if found is None else str(found["run_id"])
