"""Run locks (SPEC §6, §11.1): a live process recording a run holds an exclusive flock on a file
named for the run in the store's `.locks` directory. The OS drops the lock when the process dies,
even by kill -9, which is how a run whose row says `running` is known to be interrupted.

A lock file lives only while its run does: its holder deletes it as it lets go, and a file left by
a process that died (nobody holds its lock) is swept by the next process that takes a lock (a
process sweeps a store's locks once, as it takes its first: a batch takes one per row, and
sweeping each time tried every lock of the rows in flight), or by `sexp runs --prune`. Deleting
is safe because a file is only ever deleted by a process holding its exclusive lock, and a process
that locked a file checks that the name still leads to that file (a sweep may have deleted it in
between) before it counts the lock as held.
"""

from __future__ import annotations

import fcntl
import os
import time
import weakref
from pathlib import Path
from typing import IO

from ..errors import StoreError

PATIENCE_SECONDS = 0.2  # how long taking a lock waits out a process only looking at it (or sweeping)
LOOK_TRIES = 3  # how often a look at a lock tries again (a sweep holds a stale one for an instant)


class RunLock:
    """A held run lock; close() lets go of it and deletes its file (also done if it is dropped
    unclosed, or at the process's exit)."""

    def __init__(self, path: Path, handle: IO[bytes]) -> None:
        self.path = path
        self._release = weakref.finalize(self, _let_go, path, handle, os.getpid())

    def close(self) -> None:
        self._release()


def _let_go(path: Path, handle: IO[bytes], owner: int) -> None:
    """Delete the lock's file while still holding it, then drop the lock (the owner process only:
    a forked child must not delete its parent's lock)."""
    if os.getpid() == owner:
        try:
            path.unlink()
        except OSError:
            pass
    handle.close()


_swept: set[tuple[int, str]] = set()  # (process, locks directory) swept already: see hold


def valid_name(name: str) -> bool:
    return bool(name) and "/" not in name and "\0" not in name and name not in (".", "..")


def hold(locks: Path, name: str) -> RunLock:
    """An exclusive lock on name; StoreError when another live process holds it. Stale lock files
    of dead processes are swept first, the first time this process takes a lock in locks."""
    if not valid_name(name):
        raise StoreError(f"cannot lock run {name!r}: not a run id")
    key = (os.getpid(), str(locks))
    if key not in _swept:
        sweep(locks)
        _swept.add(key)
    deadline = time.monotonic() + PATIENCE_SECONDS
    while True:
        held = try_hold(locks, name)
        if held is not None:
            return held
        if time.monotonic() >= deadline:
            raise StoreError(f"run {name} is in use by another sexp process")
        time.sleep(0.01)


def try_hold(locks: Path, name: str) -> RunLock | None:
    """name's lock if no other process holds it now (no waiting, no sweeping), else None."""
    if not valid_name(name):
        return None
    try:
        locks.mkdir(exist_ok=True)
    except OSError as err:
        raise StoreError(f"cannot lock run {name}: {err.strerror or err}") from None
    path = locks / name
    while True:
        handle = _open(path, name)
        if not _try_lock(handle, fcntl.LOCK_EX):
            handle.close()
            return None
        if _is_named_file(handle, path):
            return RunLock(path, handle)
        handle.close()  # swept between opening and locking: open the name anew


def is_held(locks: Path, name: str) -> bool:
    """Whether a live process (this one included) holds name's lock."""
    if not valid_name(name):
        return False
    try:
        handle = open(locks / name, "rb")  # noqa: SIM115  (closed below)
    except OSError:
        return False  # no file: its run ended (or never began)
    with handle:
        for attempt in range(LOOK_TRIES):
            if _try_lock(handle, fcntl.LOCK_SH):
                fcntl.flock(handle, fcntl.LOCK_UN)
                return False
            if attempt + 1 < LOOK_TRIES:
                time.sleep(0.005)
        return True


def sweep(locks: Path) -> int:
    """Delete the lock files no live process holds (left by a process that died); how many."""
    try:
        names = os.listdir(locks)
    except OSError:
        return 0
    swept = 0
    for name in names:
        path = locks / name
        try:
            handle = open(path, "rb")  # noqa: SIM115  (closed below)
        except OSError:
            continue  # gone already, or not a file we can read
        with handle:
            if _try_lock(handle, fcntl.LOCK_EX) and _is_named_file(handle, path):
                try:
                    path.unlink()
                    swept += 1
                except OSError:
                    pass
    return swept


def any_held(locks: Path) -> bool:
    """Whether any live process holds a lock in locks."""
    try:
        names = os.listdir(locks)
    except OSError:
        return False
    return any(is_held(locks, name) for name in names)


def _open(path: Path, name: str) -> IO[bytes]:
    try:
        return open(path, "ab")  # noqa: SIM115  (held open on purpose)
    except OSError as err:
        raise StoreError(f"cannot lock run {name}: {err.strerror or err}") from None


def _try_lock(handle: IO[bytes], kind: int) -> bool:
    try:
        fcntl.flock(handle, kind | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _is_named_file(handle: IO[bytes], path: Path) -> bool:
    """Whether path still names the file handle has open (no one deleted it meanwhile)."""
    try:
        named = os.stat(path)
    except OSError:
        return False
    mine = os.fstat(handle.fileno())
    return (named.st_dev, named.st_ino) == (mine.st_dev, mine.st_ino)
