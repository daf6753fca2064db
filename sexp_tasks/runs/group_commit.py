"""Group commit for the run store (runs/store.py): the writes of many threads committed together.

Writes are committed in groups (group commit): a thread that writes while another is committing
queues its statements; when the commit ends, the first queued thread commits everything queued
meanwhile in one transaction, each writer's statements in a savepoint of their own, so one that
fails fails alone. Every writer still returns only once its statements are committed, so what a
caller does next (send a model call, start the next row) comes after its write is in the store,
kill -9 or not; 64 rows writing at once pay for a few transactions instead of one each.

A write may also be deferred (`defer`): queued without waiting, for a record whose loss in a
crash is harmless because nothing has happened yet that it would account for (a run or a task
step starting: the steps that act — a model turn, a script — write their start and wait for it
before acting). It goes in with the next commit of any thread (FIFO: before that thread's own
later writes), or within DEFER_SECONDS by a flusher thread, so that a run's start is seen from
other processes soon even when nothing else is written. A writer waiting for its commit costs a
thread switch or two; a row's three start records deferred save that much three times. A
deferred write that fails has its error raised by its thread's next commit (or flush).

Apart from the store because this is the threads' part of it — a queue, the thread committing it
and the events its writers wait on — with no SQL: the store hands it the function that runs one
group in one transaction (and sqlite3 stays the store's alone).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ..errors import StoreError
from ..lang.deepstack import start_thread

WAIT_LEADER = 0.5  # seconds a queued writer waits before looking whether its committer is still there
DEFER_SECONDS = 0.05  # how long a deferred write waits at most for another commit to take it in
FLUSHER_IDLE_SECONDS = 1.0  # the flusher thread ends after this long with nothing deferred

Statements = list[tuple[str, list[tuple[Any, ...]]]]


class Write:
    """One writer's statements waiting to be committed, and what became of them."""

    __slots__ = ("statements", "thread", "wake", "done", "error", "deferred")

    def __init__(self, statements: Statements, deferred: bool = False) -> None:
        self.statements = statements
        self.thread = threading.current_thread()
        self.wake = threading.Event()  # set by a committer: the write is in, or its thread commits now
        self.done = False
        self.error: StoreError | None = None
        self.deferred = deferred  # queued without its thread waiting (GroupCommit.defer)


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
        self.committing: list[Write] = []  # the group the leader is committing now
        self.failed: dict[threading.Thread, StoreError] = {}  # a thread's failed deferred write's error
        self._flusher: threading.Thread | None = None
        self._due = threading.Event()  # set when a deferred write is queued
        self._closing = threading.Event()

    def defer(self, write: Write) -> None:
        """Queue write, deferred (see the module's docstring), and return at once."""
        write.deferred = True
        with self.queue_lock:
            self.queue.append(write)
            # set under the lock: an idle flusher looks at it under the lock before it ends
            self._due.set()
            if self._flusher is None or not self._flusher.is_alive():
                # through start_thread: an interrupt raised in this thread while it starts the
                # flusher would land in the flusher instead (lang/deepstack.py)
                flusher = threading.Thread(target=self._flush_soon, name="sexp-flusher", daemon=True)
                self._flusher = start_thread(flusher)

    def pending(self, thread: threading.Thread | None = None) -> bool:
        """Whether deferred writes (thread's; anyone's for None) are queued or being committed.
        Looked up, not counted: an interrupt landing half-way through defer or a commit cannot
        leave a count wrong."""
        with self.queue_lock:
            return any(
                write.deferred and not write.done and (thread is None or write.thread is thread)
                for write in (*self.committing, *self.queue)
            )

    def flush(self, everyone: bool = False) -> None:
        """Commit the deferred writes queued now, when this thread wrote some (everyone's: when
        any thread did); raise this thread's deferred write's error, if one failed. What another
        thread deferred needs no flush to be read here: nothing of it was waited for."""
        if self.pending(None if everyone else threading.current_thread()):
            self.commit(Write([]))
        else:
            self._raise_failed()

    def close(self) -> None:
        """Commit what is deferred and let the flusher end."""
        try:
            self.flush(everyone=True)
        finally:
            self._closing.set()
            self._due.set()

    def _flush_soon(self) -> None:
        """The flusher: DEFER_SECONDS after a deferred write is queued, commit it, unless another
        commit took it in meanwhile."""
        while not self._closing.is_set():
            if not self._due.wait(FLUSHER_IDLE_SECONDS):
                with self.queue_lock:
                    if not self._due.is_set():  # idle: a store left open keeps no thread
                        self._flusher = None
                        return
                continue
            self._due.clear()
            self._closing.wait(DEFER_SECONDS)  # other writers' commits take deferred writes in meanwhile
            if not self._closing.is_set() and self.pending():
                try:
                    self.commit(Write([]))
                except StoreError:
                    pass  # the deferred writes have their errors: their threads raise them

    def _raise_failed(self) -> None:
        if self.failed:
            with self.queue_lock:
                error = self.failed.pop(threading.current_thread(), None)
            if error is not None:
                raise error

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
        self._raise_failed()

    def _commit_queued(self) -> None:
        """Commit what is queued now (this thread's write among it) in one transaction, tell each
        writer, and hand the queue on to the first that queued meanwhile. When this thread is
        interrupted half-way, the transaction is rolled back and the others' writes are queued
        again for the next committer; this thread's write is not (its caller sees the interrupt)."""
        me = threading.current_thread()
        group: list[Write] = []
        committed = False
        try:
            with self.queue_lock:
                group, self.queue = self.queue, []
                self.committing = group
            with self.lock:
                self.run_group(group)
            committed = True
        finally:
            with self.queue_lock:
                if committed:
                    for write in group:
                        write.done = True
                        if write.deferred and write.error is not None:
                            self.failed.setdefault(write.thread, write.error)
                else:  # a deferred write of this thread's is queued again: its caller saw no error
                    others = [write for write in group if write.thread is not me or write.deferred]
                    for write in others:
                        write.error = None
                    self.queue[:0] = others
                self.committing = []
                # The queue is handed on to a waiting writer (a deferred one's thread is not waiting)
                following = next((write for write in self.queue if not write.deferred), None)
                self.leader = following.thread if following is not None else None
            if committed:
                for write in group:
                    if write.thread is not me and not write.deferred:
                        write.wake.set()
            if following is not None:
                following.wake.set()  # not done: its thread commits the queue now
