"""Group commit for the run store (runs/store.py): the writes of many threads committed together.

Writes are committed in groups (group commit): a thread that writes while another is committing
queues its statements; when the commit ends, the first queued thread commits everything queued
meanwhile in one transaction, each writer's statements in a savepoint of their own, so one that
fails fails alone. Every writer still returns only once its statements are committed, so what a
caller does next (send a model call, start the next row) comes after its write is in the store,
kill -9 or not; 64 rows writing at once pay for a few transactions instead of one each.

Apart from the store because this is the threads' part of it — a queue, the thread committing it
and the events its writers wait on — with no SQL: the store hands it the function that runs one
group in one transaction (and sqlite3 stays the store's alone).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ..errors import StoreError

WAIT_LEADER = 0.5  # seconds a queued writer waits before looking whether its committer is still there

Statements = list[tuple[str, list[tuple[Any, ...]]]]


class Write:
    """One writer's statements waiting to be committed, and what became of them."""

    __slots__ = ("statements", "thread", "wake", "done", "error")

    def __init__(self, statements: Statements) -> None:
        self.statements = statements
        self.thread = threading.current_thread()
        self.wake = threading.Event()  # set by a committer: the write is in, or its thread commits now
        self.done = False
        self.error: StoreError | None = None


class GroupCommit:
    """One store's queue of writes and the thread committing it, if any.

    lock is the store's connection lock, held while a group runs; run_group commits a group in
    one transaction, setting the error of each write that failed."""

    def __init__(self, lock: threading.Lock, run_group: Callable[[list[Write]], None]) -> None:
        self.lock = lock
        self.run_group = run_group
        self.queue: list[Write] = []  # writes waiting for the commit in progress to end
        self.queue_lock = threading.Lock()
        self.leader: threading.Thread | None = None  # the thread committing the queue, if any

    def commit(self, write: Write) -> None:
        """Commit write, in a group with the writes queued meanwhile (see the module's docstring):
        this thread commits the queue when no other is committing (or the one that was has died),
        or when the one committing hands the queue on to it; else it waits to be told its write
        is in. A waiter also looks again every WAIT_LEADER seconds, so that a committer stopped
        half-way (Ctrl-C lands anywhere) leaves no writer waiting for ever."""
        me = threading.current_thread()
        with self.queue_lock:
            self.queue.append(write)
        while True:
            with self.queue_lock:
                if write.done:
                    break
                if self.leader is None or not self.leader.is_alive():
                    self.leader = me
                leading = self.leader is me
            if leading:
                self._commit_queued()
                break
            write.wake.wait(WAIT_LEADER)
            write.wake.clear()
        if write.error is not None:
            raise write.error

    def _commit_queued(self) -> None:
        """Commit what is queued now (this thread's write among it) in one transaction, tell each
        writer, and hand the queue on to the first that queued meanwhile. When this thread is
        interrupted half-way, the transaction is rolled back and the others' writes are queued
        again for the next committer; this thread's write is not (its caller sees the interrupt)."""
        me = threading.current_thread()
        with self.queue_lock:
            group, self.queue = self.queue, []
        committed = False
        try:
            with self.lock:
                self.run_group(group)
            committed = True
        finally:
            with self.queue_lock:
                if committed:
                    for write in group:
                        write.done = True
                else:
                    others = [write for write in group if write.thread is not me]
                    for write in others:
                        write.error = None
                    self.queue[:0] = others
                following = self.queue[0] if self.queue else None
                self.leader = following.thread if following is not None else None
            if committed:
                for write in group:
                    if write.thread is not me:
                        write.wake.set()
            if following is not None:
                following.wake.set()  # not done: its thread commits the queue now
