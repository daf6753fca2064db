"""A batch's worker thread runs its rows in one Runtime, reused (batching/row_runtime.py): no row
sees what an earlier row defined, redefined or was given, as if each had a Runtime of its own."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from conftest import write

import sexp_tasks
from sexp_tasks.batching import thread_executor
from sexp_tasks.runtime import Runtime

# Every row looks, before defining them, at what an earlier row would have left: a global, a
# redefined primitive, a template (defatom), an input column only row 0 has; then defines them.
PROGRAM = """
(define seen-global (try leaked (catch e "unbound")))
(define seen-length (length (list 1 2)))
(define seen-task (try (task-content (shout "a")) (catch e "no task")))
(define seen-column (try only-first (catch e "unbound")))
(define leaked x)
(define (length items) 99)
(defatom shout (params (s string)) (instructions "Shout {{s}}"))
(list x seen-global seen-length seen-task seen-column (length (list 1)) (task-content (shout "b")))
"""


def test_reused_runtimes_keep_rows_apart(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Runtime] = []
    original = Runtime.__init__

    def counting(self: Runtime, *args: object, **kwargs: object) -> None:
        if threading.current_thread().name.startswith("sexp-batch-"):  # a row's, not the driver's
            made.append(self)
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Runtime, "__init__", counting)
    write(workspace / "p.sexp", PROGRAM)
    rows = [{"x": 0, "only-first": "here"}, *({"x": i} for i in range(1, 5))]
    got = sexp_tasks.batch(workspace / "p.sexp", rows, concurrency=1, model="mock/m", quiet=True)
    assert [row["status"] for row in got] == ["ok"] * 5, got
    # mock replies are counted per session: each row's count starts again, as in a Runtime of its own
    assert [row["value"] for row in got] == [
        [0, "unbound", 2, "no task", "here", 99, "mock response 1 for shout"],
        *([i, "unbound", 2, "no task", "unbound", 99, "mock response 1 for shout"] for i in range(1, 5)),
    ]
    assert len(made) == 1  # one thread, one Runtime for its five rows


def test_each_worker_thread_has_its_own_runtime(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    threads_of: dict[int, set[int]] = {}
    fresh = thread_executor.RowRuntimes.fresh

    def noting(self: object, *args: object) -> Runtime:
        runtime = fresh(self, *args)  # type: ignore[arg-type]
        threads_of.setdefault(id(runtime), set()).add(threading.get_ident())
        return runtime

    monkeypatch.setattr(thread_executor.RowRuntimes, "fresh", noting)
    write(workspace / "p.sexp", PROGRAM)
    rows = [{"x": i} for i in range(12)]
    got = sexp_tasks.batch(workspace / "p.sexp", rows, concurrency=3, model="mock/m", quiet=True)
    assert [row["value"][:3] for row in got] == [[i, "unbound", 2] for i in range(12)]
    assert all(len(threads) == 1 for threads in threads_of.values())  # never shared by two threads
    assert 1 <= len(threads_of) <= 3
