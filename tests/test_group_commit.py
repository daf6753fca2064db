"""The store's group commit (runs/group_commit.py): writes from many threads go in together,
each writer returns only once its write is committed, and a write that fails fails alone."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from conftest import scaled, wait_for

from sexp_tasks.errors import StoreError
from sexp_tasks.runs.store import Store

INSERT = (
    "INSERT INTO runs (id, program, program_hash, inputs, status, started_at)"
    " VALUES (?, 'p', 'h', '{}', 'running', 0)"
)
Writes = list[tuple[str, object]]


def _ids(path: Path) -> set[str]:
    with sqlite3.connect(path) as other:  # another connection: what is committed
        return {row[0] for row in other.execute("SELECT id FROM runs")}


def _queued_behind_a_commit(store: Store, writes: Writes) -> dict[str, BaseException | None]:
    """Run each (name, write) in a thread of its own while the store's connection is held, so
    that they queue up and are committed in one group; what each raised."""
    raised: dict[str, BaseException | None] = {}

    def writer(name: str, write: object) -> None:
        try:
            write()  # type: ignore[operator]
            raised[name] = None
        except BaseException as err:  # noqa: BLE001  (the test looks at it)
            raised[name] = err

    threads = [threading.Thread(target=writer, args=item) for item in writes]
    with store._lock:  # the first writer commits alone, once this is let go; the others queue behind it
        for thread in threads:
            thread.start()
        wait_for(lambda: len(store._commits.queue) >= len(writes) - 1, scaled(10), "the writers to queue")
    for thread in threads:
        thread.join(scaled(10))
    return raised


def test_many_threads_writes_are_all_committed_in_fewer_transactions(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    groups: list[int] = []
    run_group = store._commits.run_group

    def counted(group: list) -> None:  # type: ignore[type-arg]
        groups.append(len(group))
        run_group(group)

    store._commits.run_group = counted

    def writer(worker: int) -> None:
        for step in range(25):
            store.write(INSERT, (f"w{worker}-{step}",))
            assert f"w{worker}-{step}" in _ids(tmp_path / "runs.db")  # committed on return

    threads = [threading.Thread(target=writer, args=(worker,)) for worker in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(scaled(60))
    assert len(_ids(tmp_path / "runs.db")) == 32 * 25
    assert sum(groups) == 32 * 25
    assert len(groups) < 32 * 25  # some went in together
    store.close()


def test_a_failing_write_fails_alone_in_its_group(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    store.write(INSERT, ("taken",))
    writes: Writes = [(f"ok{i}", lambda i=i: store.write(INSERT, (f"ok{i}",))) for i in range(6)]
    writes.insert(3, ("duplicate", lambda: store.write(INSERT, ("taken",))))
    together = [(INSERT, [("both-a",)]), (INSERT, [("taken",)])]  # the second fails: neither goes in
    writes.insert(5, ("together", lambda: store.write_together(together)))
    raised = _queued_behind_a_commit(store, writes)
    assert isinstance(raised["duplicate"], StoreError)
    assert isinstance(raised["together"], StoreError)
    assert all(raised[f"ok{i}"] is None for i in range(6))
    assert _ids(tmp_path / "runs.db") == {"taken", *(f"ok{i}" for i in range(6))}
    store.close()


def test_a_group_that_cannot_commit_fails_every_writer_in_it(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    writes: Writes = [(f"w{i}", lambda i=i: store.write(INSERT, (f"w{i}",))) for i in range(4)]
    blocker = sqlite3.connect(tmp_path / "runs.db", timeout=0)
    blocker.execute("BEGIN IMMEDIATE")  # another process holds the write lock past the busy timeout
    store._db.execute("PRAGMA busy_timeout = 50")
    raised = _queued_behind_a_commit(store, writes)
    blocker.rollback()
    assert all(isinstance(raised[f"w{i}"], StoreError) for i in range(4))
    assert "locked" in str(raised["w0"])
    store.write(INSERT, ("after",))  # the queue is not left stuck
    assert _ids(tmp_path / "runs.db") == {"after"}
    store.close()


def test_a_writer_interrupted_while_committing_leaves_the_others_writes_to_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "runs.db")
    run_group = store._commits.run_group
    interrupted = threading.Event()

    def interrupt_the_first(group: list) -> None:  # type: ignore[type-arg]
        if not interrupted.is_set() and any(write.statements[0][1][0][0] == "first" for write in group):
            interrupted.set()
            raise KeyboardInterrupt  # Ctrl-C landing in the committer, before its transaction
        run_group(group)

    store._commits.run_group = interrupt_the_first
    writes: Writes = [("zero", lambda: store.write(INSERT, ("zero",)))]
    writes += [("first", lambda: store.write(INSERT, ("first",)))]
    writes += [(f"w{i}", lambda i=i: store.write(INSERT, (f"w{i}",))) for i in range(5)]
    raised: dict[str, BaseException | None] = {}

    def writer(name: str, write: object) -> None:
        try:
            write()  # type: ignore[operator]
            raised[name] = None
        except BaseException as err:  # noqa: BLE001
            raised[name] = err

    threads = [threading.Thread(target=writer, args=item) for item in writes]
    with store._lock:  # zero commits alone once this is let go; first leads the group after it
        threads[0].start()
        commits = store._commits
        wait_for(lambda: commits.leader is not None and not commits.queue, scaled(10), "zero to commit")
        threads[1].start()
        wait_for(lambda: len(store._commits.queue) == 1, scaled(10), "first to queue")
        for thread in threads[2:]:
            thread.start()
        wait_for(lambda: len(store._commits.queue) == 6, scaled(10), "the others to queue behind first")
    for thread in threads:
        thread.join(scaled(10))
    assert isinstance(raised["first"], KeyboardInterrupt)
    assert all(raised[f"w{i}"] is None for i in range(5))
    assert _ids(tmp_path / "runs.db") == {"zero", *(f"w{i}" for i in range(5))}
    store.close()
