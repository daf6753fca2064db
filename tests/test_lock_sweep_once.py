"""A process sweeps a store's stale lock files once, as it takes its first lock there (runs/locks.py):
a batch takes a lock per row, and sweeping each time tried the lock of every row in flight. A file
left later is swept by the next process, or by `sexp runs --prune` (Store.sweep_locks)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import ROOT

from sexp_tasks.runs import locks


def test_stale_locks_are_swept_by_a_process_once_then_by_the_next(tmp_path: Path) -> None:
    directory = tmp_path / "store.db.locks"
    directory.mkdir()
    (directory / "dead-before").write_bytes(b"")  # left by a process that died: nobody holds it
    first = locks.hold(directory, "run-1")
    assert sorted(p.name for p in directory.iterdir()) == ["run-1"]  # swept as the first lock was taken
    (directory / "dead-since").write_bytes(b"")
    second = locks.hold(directory, "run-2")
    # not swept again:
    assert sorted(p.name for p in directory.iterdir()) == ["dead-since", "run-1", "run-2"]
    code = "from sexp_tasks.runs import locks; from pathlib import Path; import sys; "
    code += "locks.hold(Path(sys.argv[1]), 'run-3')"
    subprocess.run([sys.executable, "-c", code, str(directory)], cwd=ROOT, check=True)
    assert sorted(p.name for p in directory.iterdir()) == ["run-1", "run-2"]  # the next process swept it
    (directory / "dead-again").write_bytes(b"")
    assert locks.sweep(directory) == 1  # as `sexp runs --prune` does
    first.close()
    second.close()
    assert list(directory.iterdir()) == []
