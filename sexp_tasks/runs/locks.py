"""Run locks (SPEC §6, §11.1): a live process recording a run holds an exclusive POSIX record lock
(fcntl F_SETLK) on one byte of its store's lock file, `<store>.runlocks` (`.sexp/store.db.runlocks`),
the byte at 1 + a 56-bit hash of the run's id. The OS drops a process's record locks when it dies,
even by kill -9, which is how a run whose row says `running` is known to be interrupted: nothing is
ever left behind, and the one lock file stays for the store's next runs.

A process holding any run also holds byte 0 shared, so whether any live process records in the
store (before `sexp runs --prune` compacts it) is one test of byte 0.

Record locks belong to a process, not to a file descriptor: closing any descriptor of the file would
drop all of the process's locks on it, and a process locking a byte it holds already succeeds. So a
process opens each lock file once and keeps it open (a registry by device and inode, behind one
guard), and counts which runs it holds on which byte: a second hold of a run it holds is refused as
another process's would be, and two runs whose hashes share a byte do not let go of each other.
Between two processes such runs would exclude each other (the second waits, then is refused): with
56 bits, one chance in about 7·10^16 for a pair of ids. A forked child owns none of its parent's
locks (the kernel gives it none): it starts with an empty registry and never lets go of its parent's.

An older sexp held a file per run in `<store>.locks/` (flock); `sexp runs --prune` sweeps what is
left of that directory (sweep).
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import threading
import time
import weakref
from pathlib import Path

from ..errors import StoreError

PATIENCE_SECONDS = 0.2  # how long taking a lock waits out another process (looking at it, or a holder)
ANY = 0  # the byte a process holding any run holds shared
_BUSY = (errno.EACCES, errno.EAGAIN)  # what F_SETLK says when another process holds the byte


class _LockFile:
    """A lock file this process keeps open, and the runs it holds in it: byte offset -> run ids."""

    __slots__ = ("fd", "held", "orphaned")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.held: dict[int, set[str]] = {}
        self.orphaned = False  # in a forked child: the parent's, not to be let go of


class _Registry:
    """The lock files open in this process, by (st_dev, st_ino), used under guard. A lock dropped
    unclosed may be finalized by the garbage collector in the middle of a section holding the guard
    (in that thread, the guard being reentrant): it is let go of as the section ends."""

    def __init__(self) -> None:
        self.guard = threading.RLock()
        self.files: dict[tuple[int, int], _LockFile] = {}
        self.busy = False  # a section holds the guard
        self.later: list[tuple[_LockFile, str, int]] = []

    def __enter__(self) -> _Registry:
        self.guard.acquire()
        self.busy = True
        return self

    def __exit__(self, *_: object) -> None:
        try:
            while self.later:
                _release(*self.later.pop())
        finally:
            self.busy = False
            self.guard.release()


_registry = _Registry()


def _forget_in_child() -> None:
    """After a fork, in the child: the parent's locks are not its own (the kernel gave it none)."""
    global _registry
    for file in _registry.files.values():
        file.orphaned = True
        try:
            os.close(file.fd)  # drops the child's record locks on it (none), not the parent's
        except OSError:
            pass
    _registry = _Registry()


os.register_at_fork(after_in_child=_forget_in_child)


class RunLock:
    """A held run lock; close() lets go of it (also done if it is dropped unclosed, or at the
    process's exit)."""

    def __init__(self, file: _LockFile, name: str, offset: int) -> None:
        self.name = name
        self._release = weakref.finalize(self, _let_go, file, name, offset)

    def close(self) -> None:
        self._release()


def _let_go(file: _LockFile, name: str, offset: int) -> None:
    """Let go of name's lock, now or (when this thread is in a section already) as it ends."""
    registry = _registry
    with registry.guard:
        if registry.busy:
            registry.later.append((file, name, offset))
        else:
            _release(file, name, offset)


def _release(file: _LockFile, name: str, offset: int) -> None:
    """Drop name from its byte's holders; the byte once no run of this process is on it, and byte
    0 with the process's last run in the file."""
    holders = file.held.get(offset)
    if file.orphaned or holders is None or name not in holders:
        return
    holders.discard(name)
    if holders:
        return  # another run of this process shares the byte
    del file.held[offset]
    _unlock(file.fd, offset)
    if not file.held:
        _unlock(file.fd, ANY)


def valid_name(name: str) -> bool:
    return bool(name) and "/" not in name and "\0" not in name and name not in (".", "..")


def offset_of(name: str) -> int:
    """The byte of name's lock: 1 + a 56-bit hash of it (byte 0 is ANY's)."""
    return 1 + int.from_bytes(hashlib.blake2b(name.encode(), digest_size=7).digest(), "big")


def hold(path: Path, name: str) -> RunLock:
    """An exclusive lock on name in the lock file path; StoreError when another live process holds
    it (or this one does) after PATIENCE_SECONDS of trying."""
    if not valid_name(name):
        raise StoreError(f"cannot lock run {name!r}: not a run id")
    deadline = time.monotonic() + PATIENCE_SECONDS
    while True:
        held = try_hold(path, name)
        if held is not None:
            return held
        if time.monotonic() >= deadline:
            raise StoreError(f"run {name} is in use by another sexp process")
        time.sleep(0.01)


def try_hold(path: Path, name: str) -> RunLock | None:
    """name's lock if no process (this one included) holds it now (no waiting), else None."""
    if not valid_name(name):
        return None
    offset = offset_of(name)
    with _registry as registry:
        try:
            file = _file(registry, path, create=True)
            assert file is not None
            holders = file.held.get(offset)
            if holders is not None:  # this process holds the byte: no other process can
                if name in holders:
                    return None
                holders.add(name)  # another run whose hash is name's
            elif not _take(file, name, offset):
                return None
        except OSError as err:
            raise StoreError(f"cannot lock run {name}: {err.strerror or err}") from None
    return RunLock(file, name, offset)


def _take(file: _LockFile, name: str, offset: int) -> bool:
    """Lock name's byte for this process (and byte 0 shared, with its first run in file); whether
    the kernel gave both."""
    first = not file.held
    if first and not _try(file.fd, fcntl.LOCK_SH, ANY):
        return False  # another process is testing byte 0 (any_held) this instant
    taken = False
    try:
        taken = _try(file.fd, fcntl.LOCK_EX, offset)
    finally:
        if first and not taken:
            _unlock(file.fd, ANY)
    if taken:
        file.held[offset] = {name}
    return taken


def is_held(path: Path, name: str) -> bool:
    """Whether a live process (this one included) holds name's lock."""
    if not valid_name(name):
        return False
    offset = offset_of(name)
    with _registry as registry:
        try:
            file = _file(registry, path, create=False)
            if file is None:
                return False  # no lock file: no run was ever held in this store
            holders = file.held.get(offset)
            if holders is not None:  # this process holds the byte: no other process can
                return name in holders
            return _looks_held(file.fd, fcntl.LOCK_SH, offset)
        except OSError:
            return False


def any_held(path: Path) -> bool:
    """Whether any live process (this one included) holds a lock in the lock file path."""
    with _registry as registry:
        try:
            file = _file(registry, path, create=False)
            if file is None:
                return False
            return bool(file.held) or _looks_held(file.fd, fcntl.LOCK_EX, ANY)
        except OSError:
            return False


def _looks_held(fd: int, kind: int, offset: int) -> bool:
    """Whether another process holds offset against a lock of kind (tried, then let go at once)."""
    if _try(fd, kind, offset):
        _unlock(fd, offset)
        return False
    return True


def _file(registry: _Registry, path: Path, create: bool) -> _LockFile | None:
    """The lock file at path, opened once in this process (None when it does not exist and create
    is false)."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        if not create:
            return None
    else:
        file = registry.files.get((found.st_dev, found.st_ino))
        if file is not None:
            return file
    fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | (os.O_CREAT if create else 0), 0o666)
    opened = os.fstat(fd)
    key = (opened.st_dev, opened.st_ino)
    # Never closed, not even here when the file was open already (renamed meanwhile): closing it
    # would drop every lock this process holds in it.
    return registry.files.setdefault(key, _LockFile(fd))


def _try(fd: int, kind: int, offset: int) -> bool:
    """Lock one byte at offset (kind: fcntl.LOCK_SH or LOCK_EX) without waiting; whether the kernel
    gave it (OSError when it refused for another reason than another process's lock)."""
    try:
        fcntl.lockf(fd, kind | fcntl.LOCK_NB, 1, offset)
    except OSError as err:
        if err.errno in _BUSY:
            return False
        raise
    return True


def _unlock(fd: int, offset: int) -> None:
    fcntl.lockf(fd, fcntl.LOCK_UN, 1, offset)


def sweep(locks: Path) -> int:
    """Delete an older sexp's lock directory, `<store>.locks` (a file per run, flocked): the files
    no live process holds, then the directory once empty; how many files went. A file a live older
    process holds stays. Deleting is safe: that sexp deleted a file only while holding its flock,
    and counted a lock as held only once the name still led to the file it had locked."""
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
            if _flock(handle.fileno()) and _is_named_file(handle.fileno(), path):
                try:
                    path.unlink()
                    swept += 1
                except OSError:
                    pass
    try:
        os.rmdir(locks)
    except OSError:
        pass  # a live older process's lock is left in it
    return swept


def _flock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _is_named_file(fd: int, path: Path) -> bool:
    """Whether path still names the file fd has open (no one deleted it meanwhile)."""
    try:
        named = os.stat(path)
    except OSError:
        return False
    mine = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (mine.st_dev, mine.st_ino)
