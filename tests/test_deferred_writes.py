"""Deferred store writes (runs/group_commit.py's `defer`, Store.write_soon): a start record is
queued without its writer waiting, goes in with the next commit (before its thread's later
writes), or by the flusher soon after when nothing else is written; reads and close() commit it
first; its failure is raised by its thread's next write; and the queue is never handed to a
deferred writer's thread, which is not waiting to commit it."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import scaled, wait_for

from sexp_tasks.errors import StoreError
from sexp_tasks.runs import group_commit
from sexp_tasks.runs.group_commit import GroupCommit, Write
from sexp_tasks.runs.store import Store

INSERT = (
    "INSERT INTO runs (id, program, program_hash, inputs, status, started_at)"
    " VALUES (?, 'p', 'h', '{}', 'running', 0)"
)


def _ids(path: Path) -> set[str]:
    with sqlite3.connect(path) as other:  # another connection: what is committed
        return {row[0] for row in other.execute("SELECT id FROM runs")}


def test_a_deferred_write_returns_before_it_is_committed_and_goes_in_with_the_next(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    with store._lock:  # nothing can commit meanwhile: write_soon must not wait for it
        store.write_soon(INSERT, ("soon",))
        assert "soon" not in _ids(tmp_path / "runs.db")
    store.write(INSERT, ("now",))  # the next commit takes the deferred write in, before its own
    assert _ids(tmp_path / "runs.db") == {"soon", "now"}
    store.close()


def test_the_flusher_commits_a_deferred_write_when_nothing_else_is_written(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    store.write_soon(INSERT, ("alone",))
    wait_for(lambda: "alone" in _ids(tmp_path / "runs.db"), scaled(10), "the flusher to commit it")
    assert not store._commits.pending()
    store.close()


def test_a_read_sees_what_its_thread_deferred(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    old = group_commit.DEFER_SECONDS
    group_commit.DEFER_SECONDS = 60.0  # the flusher would come too late: the read must commit it
    try:
        store.write_soon(INSERT, ("mine",))
        assert [row["id"] for row in store.query("SELECT id FROM runs")] == ["mine"]
    finally:
        group_commit.DEFER_SECONDS = old
        store.close()


def test_close_commits_what_is_deferred(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    old = group_commit.DEFER_SECONDS
    group_commit.DEFER_SECONDS = 60.0
    try:
        store.write_soon(INSERT, ("last",))
        store.close()
    finally:
        group_commit.DEFER_SECONDS = old
    assert _ids(tmp_path / "runs.db") == {"last"}


def test_a_failed_deferred_write_is_raised_by_its_threads_next_write_and_fails_alone(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    store.write(INSERT, ("taken",))
    store.write_soon(INSERT, ("taken",))  # a duplicate id: fails when it is committed
    store.write_soon(INSERT, ("fine",))
    with pytest.raises(StoreError, match="UNIQUE"):
        store.write(INSERT, ("next",))
    assert _ids(tmp_path / "runs.db") == {"taken", "fine", "next"}  # only the duplicate is missing
    store.write(INSERT, ("after",))  # the error was raised once
    store.close()


def test_a_deferred_write_is_in_once_a_later_write_of_its_thread_is_despite_kill_9(tmp_path: Path) -> None:
    """The ordering a batch row's durability rests on: once a write has returned, the writes its
    thread deferred before it are committed too, even if the process dies at once."""
    script = f"""
import os, sys
sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})
from sexp_tasks.runs import group_commit
group_commit.DEFER_SECONDS = 600.0  # no flusher: only the next write can commit it
from sexp_tasks.runs.store import Store
store = Store({str(tmp_path / "runs.db")!r})
store.write_soon({INSERT!r}, ("started",))
store.write({INSERT!r}, ("acted",))
os.kill(os.getpid(), 9)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=scaled(60))
    assert done.returncode == -9, done.stderr
    assert _ids(tmp_path / "runs.db") == {"started", "acted"}


def test_the_queue_is_handed_to_a_waiting_writer_not_to_a_deferred_writers_thread() -> None:
    """While one thread commits, thread D defers a write and goes on (it never commits), and
    thread W queues a write and waits. The queue must go to W: D's thread is alive but not
    waiting, so W would otherwise wait on it for good (WAIT_LEADER is made long to show it)."""
    committed: list[list[str]] = []
    first_group = threading.Event()
    let_go = threading.Event()

    def run_group(group: list[Write]) -> None:
        if not committed:
            first_group.set()
            let_go.wait(scaled(30))
        committed.append([write.statements[0][0] for write in group if write.statements])

    commits = GroupCommit(threading.Lock(), run_group)
    old = group_commit.WAIT_LEADER, group_commit.DEFER_SECONDS
    group_commit.WAIT_LEADER = group_commit.DEFER_SECONDS = 600.0
    d_goes_on = threading.Event()
    try:
        # Each Write is made in its writer's thread, as the store makes them: it names its thread
        leader = threading.Thread(target=lambda: commits.commit(Write([("L", [()])])), daemon=True)
        leader.start()
        assert first_group.wait(scaled(10))

        def deferring() -> None:
            commits.defer(Write([("D", [()])]))
            d_goes_on.wait(scaled(60))  # alive, and not writing

        deferrer = threading.Thread(target=deferring, daemon=True)
        deferrer.start()
        wait_for(lambda: len(commits.queue) == 1, scaled(10), "the deferred write to queue")
        waiter = threading.Thread(target=lambda: commits.commit(Write([("W", [()])])), daemon=True)
        waiter.start()
        wait_for(lambda: len(commits.queue) == 2, scaled(10), "the waiting write to queue")
        let_go.set()
        waiter.join(scaled(30))
        assert not waiter.is_alive(), "the waiting writer was left waiting on the deferred writer's thread"
        assert committed == [["L"], ["D", "W"]]  # the deferred write first, in one group
    finally:
        group_commit.WAIT_LEADER, group_commit.DEFER_SECONDS = old
        let_go.set()
        d_goes_on.set()
        commits.close()


def test_an_interrupted_committer_queues_its_own_deferred_writes_again() -> None:
    """Ctrl-C lands in the committing thread: its own awaited write is dropped (its caller sees
    the interrupt), but what it deferred earlier was not refused to anyone: it is queued again."""
    committed: list[str] = []
    calls = [0]

    def run_group(group: list[Write]) -> None:
        calls[0] += 1
        if calls[0] == 1:
            raise KeyboardInterrupt
        committed.extend(write.statements[0][0] for write in group if write.statements)

    commits = GroupCommit(threading.Lock(), run_group)
    old = group_commit.DEFER_SECONDS
    group_commit.DEFER_SECONDS = 600.0
    try:
        commits.defer(Write([("started", [()])]))
        with pytest.raises(KeyboardInterrupt):
            commits.commit(Write([("interrupted", [()])]))
        assert [write.statements[0][0] for write in commits.queue] == ["started"]
        commits.commit(Write([("next", [()])]))
        assert committed == ["started", "next"]
        assert not commits.pending()
    finally:
        commits.close()
        group_commit.DEFER_SECONDS = old


def test_the_flusher_is_started_as_every_thread_an_interrupt_may_reach(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row's thread defers its start records, and Ctrl-C raises an interrupt in that thread: a
    thread it starts outside deepstack.start_thread can take the interrupt meant for it (CPython
    3.11), which left a batch running its row after Ctrl-C. So the flusher starts through it."""
    from sexp_tasks.lang import deepstack

    started: list[str] = []

    def recording(thread: threading.Thread) -> threading.Thread:
        assert not deepstack._starting.locked()  # nor is it started with the guard held already
        started.append(thread.name)
        return deepstack.start_thread(thread)

    monkeypatch.setattr(group_commit, "start_thread", recording)
    store = Store(tmp_path / "runs.db")
    store.write_soon(INSERT, ("row",))
    assert started == ["sexp-flusher"]
    wait_for(lambda: "row" in _ids(tmp_path / "runs.db"), scaled(10), "the flusher to commit it")
    store.close()


def test_a_write_deferred_as_the_idle_flusher_ends_is_still_committed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The idle flusher ends only after looking, under the queue's lock, whether a write is due:
    a write deferred at that moment either keeps it going or starts a new one (it was left
    queued, uncommitted, when the deferring thread marked it due only after letting go)."""
    monkeypatch.setattr(group_commit, "FLUSHER_IDLE_SECONDS", 0.2)
    monkeypatch.setattr(group_commit, "DEFER_SECONDS", 0.01)
    committed: list[str] = []
    def run_group(group: list[Write]) -> None:
        committed.extend(write.statements[0][0] for write in group if write.statements)

    commits = GroupCommit(threading.Lock(), run_group)
    commits.defer(Write([("first", [])]))
    wait_for(lambda: committed == ["first"], scaled(10), "the flusher to commit the first write")
    flusher = commits._flusher
    assert flusher is not None
    mark_due = commits._due.set

    def late_mark() -> None:  # slow to mark its write due: the flusher idles out meanwhile
        flusher.join(scaled(2))
        mark_due()

    monkeypatch.setattr(commits._due, "set", late_mark)
    deferring = threading.Thread(target=lambda: commits.defer(Write([("second", [])])))
    deferring.start()
    deferring.join()
    wait_for(lambda: committed == ["first", "second"], scaled(10), "the second write to be committed")
