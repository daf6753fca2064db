"""Run locks (runs/locks.py): a byte each of the store's one lock file, `<store>.runlocks`, held by a
POSIX record lock; byte 0 held shared by every process holding a run. Other processes are real
ones here: a holder is a child Python, told on its stdin when to let go."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, run_python, scaled

from sexp_tasks.errors import StoreError
from sexp_tasks.runs import locks
from sexp_tasks.runs.store import Store

BYTE = 4242  # where a test puts colliding runs (offset_of patched, here and in a child)

HOLDER = """
import sys
from pathlib import Path
from sexp_tasks.runs import locks
if sys.argv[3]:
    locks.offset_of = lambda name: int(sys.argv[3])
held = locks.hold(Path(sys.argv[1]), sys.argv[2])
print("held", flush=True)
sys.stdin.readline()
held.close()
print("let go", flush=True)
sys.stdin.readline()
"""


class Holder:
    """A child process holding name's lock in path until told to let go (or killed)."""

    def __init__(self, path: Path, name: str, offset: int | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(path), name, "" if offset is None else str(offset)],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.said() == "held"

    def said(self) -> str:
        assert self.process.stdout is not None
        return self.process.stdout.readline().strip()

    def let_go(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        assert self.said() == "let go"

    def end(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate(timeout=scaled(30))


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    """Where the store is (the test's own directory holds others: the isolated HOME...)."""
    made = tmp_path / "store"
    made.mkdir()
    return made


@pytest.fixture
def path(directory: Path) -> Path:
    return directory / "store.db.runlocks"


@pytest.fixture
def holders() -> Iterator[list[Holder]]:
    started: list[Holder] = []
    yield started
    for holder in started:
        holder.end()


def seen(path: Path, question: str, offset: int | None = None) -> bool:
    """What another process answers: question is `is_held(path, 'name')` or `any_held(path)`."""
    code = "from pathlib import Path; from sexp_tasks.runs import locks; "
    if offset is not None:
        code += f"locks.offset_of = lambda name: {offset}; "
    code += f"path = Path({str(path)!r}); print(locks.{question})"
    return {"True": True, "False": False}[run_python(code).strip()]


def test_a_run_another_process_holds_is_refused_until_it_lets_go(path: Path, holders: list[Holder]) -> None:
    holders.append(holder := Holder(path, "run-a"))
    assert locks.is_held(path, "run-a") and not locks.is_held(path, "run-b")
    assert locks.try_hold(path, "run-a") is None
    with pytest.raises(StoreError, match="run run-a is in use by another sexp process"):
        locks.hold(path, "run-a")
    locks.hold(path, "run-b").close()  # another run of the same file is free
    holder.let_go()
    assert not locks.is_held(path, "run-a")
    locks.hold(path, "run-a").close()


def test_kill_9_of_a_holder_lets_go_and_leaves_nothing_but_the_lock_file(
    path: Path, holders: list[Holder]
) -> None:
    holders.append(holder := Holder(path, "run-a"))
    assert locks.is_held(path, "run-a") and locks.any_held(path)
    holder.process.send_signal(signal.SIGKILL)
    holder.process.wait(timeout=scaled(30))
    assert not locks.is_held(path, "run-a") and not locks.any_held(path)
    locks.hold(path, "run-a").close()
    assert [p.name for p in path.parent.iterdir()] == [path.name]


def test_a_process_cannot_hold_its_own_run_twice(path: Path) -> None:
    held = locks.hold(path, "run-a")
    assert locks.try_hold(path, "run-a") is None
    with pytest.raises(StoreError, match="run run-a is in use by another sexp process"):
        locks.hold(path, "run-a")
    assert locks.is_held(path, "run-a")  # the refusals let go of nothing
    assert seen(path, "is_held(path, 'run-a')")
    held.close()
    held.close()  # closing twice lets go once
    assert not locks.is_held(path, "run-a") and not seen(path, "is_held(path, 'run-a')")
    locks.hold(path, "run-a").close()


def test_threads_racing_for_one_run_get_it_once(path: Path) -> None:
    start = threading.Barrier(16)
    won: list[locks.RunLock] = []

    def race() -> None:
        start.wait()
        held = locks.try_hold(path, "run-a")
        if held is not None:
            won.append(held)

    threads = [threading.Thread(target=race) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1
    won[0].close()
    assert not locks.is_held(path, "run-a")


def test_runs_sharing_a_byte_in_one_process_do_not_let_go_of_each_other(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(locks, "offset_of", lambda name: BYTE)
    first = locks.hold(path, "run-a")
    second = locks.hold(path, "run-b")  # the same byte: this process has it already
    assert locks.is_held(path, "run-a") and locks.is_held(path, "run-b")
    assert not locks.is_held(path, "run-c")  # the byte is this process's, the run is not held
    assert locks.try_hold(path, "run-b") is None
    first.close()
    assert not locks.is_held(path, "run-a") and locks.is_held(path, "run-b")
    assert seen(path, "is_held(path, 'run-b')", BYTE) and seen(path, "any_held(path)")
    second.close()
    assert not seen(path, "is_held(path, 'run-b')", BYTE) and not seen(path, "any_held(path)")


def test_runs_sharing_a_byte_in_two_processes_exclude_each_other(
    path: Path, holders: list[Holder], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(locks, "offset_of", lambda name: BYTE)
    holders.append(holder := Holder(path, "run-a", BYTE))
    assert locks.try_hold(path, "run-b") is None  # the rare collision: b waits for a
    holder.let_go()
    locks.hold(path, "run-b").close()


def test_any_held_is_byte_0_as_another_process_sees_it(path: Path, holders: list[Holder]) -> None:
    assert not locks.any_held(path) and not path.exists()  # looking makes no lock file
    held = locks.hold(path, "run-a")
    other = locks.hold(path, "run-b")
    assert locks.any_held(path) and seen(path, "any_held(path)")
    held.close()
    assert seen(path, "any_held(path)")  # run-b is still held
    other.close()
    assert not locks.any_held(path) and not seen(path, "any_held(path)")
    holders.append(holder := Holder(path, "run-c"))
    assert locks.any_held(path)
    holder.let_go()
    assert not locks.any_held(path)


def test_a_forked_child_neither_owns_nor_lets_go_of_its_parents_locks(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(locks, "offset_of", lambda name: BYTE)  # run-b shares run-a's byte
    held = locks.hold(path, "run-a")
    pid = os.fork()
    if pid == 0:  # the child: exits 0 when the byte is its parent's, not its own
        try:
            refused = locks.try_hold(path, "run-a") is None and locks.try_hold(path, "run-b") is None
            held.close()  # not the child's to let go of
            still = locks.is_held(path, "run-a") and locks.any_held(path)
            os._exit(0 if refused and still else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert seen(path, "is_held(path, 'run-a')", BYTE) and seen(path, "any_held(path)")
    held.close()
    assert not seen(path, "any_held(path)")


def test_a_dropped_lock_is_let_go_of(path: Path) -> None:
    locks.hold(path, "run-a")  # dropped at once, unclosed
    gc.collect()
    assert not locks.is_held(path, "run-a") and not seen(path, "is_held(path, 'run-a')")
    assert not seen(path, "any_held(path)")


def test_a_lock_dropped_while_another_is_being_taken_is_let_go_of_after(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lock the garbage collector finalizes in the middle of taking another (in that thread) is
    let go of once the taking is done, so byte 0 stays held for the run taken."""
    dropped = [locks.hold(path, "run-a")]
    kernel_try = locks._try

    def dropping(fd: int, kind: int, offset: int) -> bool:
        dropped.clear()  # run-a's last reference: finalized here, inside the section
        return kernel_try(fd, kind, offset)

    monkeypatch.setattr(locks, "_try", dropping)
    taken = locks.hold(path, "run-b")
    monkeypatch.setattr(locks, "_try", kernel_try)
    assert not locks.is_held(path, "run-a") and not seen(path, "is_held(path, 'run-a')")
    assert seen(path, "is_held(path, 'run-b')") and seen(path, "any_held(path)")
    taken.close()
    assert not seen(path, "any_held(path)")


def test_names_that_are_not_run_ids_are_refused(path: Path) -> None:
    for name in ["", ".", "..", "a/b", "a\0b"]:
        with pytest.raises(StoreError, match="not a run id"):
            locks.hold(path, name)
        assert locks.try_hold(path, name) is None and not locks.is_held(path, name)


def test_an_older_sexps_lock_directory_is_swept_but_a_live_holders_file_kept(
    directory: Path, holders: list[Holder]
) -> None:
    store = Store(directory / "store.db")
    old = directory / "store.db.locks"
    old.mkdir()
    (old / "dead").write_bytes(b"")  # left by an older process that died
    code = "import fcntl, sys; f = open(sys.argv[1], 'ab'); fcntl.flock(f, fcntl.LOCK_EX); "
    code += "print('held', flush=True); sys.stdin.readline()"
    live = subprocess.Popen(
        [sys.executable, "-c", code, str(old / "live")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert live.stdout is not None and live.stdout.readline().strip() == "held"
        assert store.sweep_locks() == 1
        assert [p.name for p in old.iterdir()] == ["live"]
    finally:
        live.communicate("\n", timeout=scaled(30))
    assert store.sweep_locks() == 1 and not old.exists()
    assert store.sweep_locks() == 0
    store.close()


def test_the_store_locks_runs_in_its_one_runlocks_file(directory: Path) -> None:
    store = Store(directory / "store.db")
    assert not store.run_is_held("run-a") and not store.any_run_held()
    assert not (directory / "store.db.runlocks").exists()  # looking makes no lock file
    held = [store.hold_run(f"run-{n}") for n in range(50)]
    assert store.run_is_held("run-7") and store.any_run_held()
    assert store.try_hold_run("run-7") is None and seen(directory / "store.db.runlocks", "any_held(path)")
    for lock in held:
        lock.close()
    assert not store.run_is_held("run-7") and not store.any_run_held()
    store.close()
    assert sorted(p.name for p in directory.iterdir()) == ["store.db", "store.db.runlocks"]


def test_a_byte_is_tested_by_a_record_lock_not_by_flock(path: Path) -> None:
    """The holder's byte conflicts with a record lock any program takes (fcntl.lockf)."""
    held = locks.hold(path, "run-a")
    code = "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR)\n"
    code += "try:\n    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, int(sys.argv[2]))\n"
    code += "except OSError:\n    print('busy')\nelse:\n    print('free')"
    offset = str(locks.offset_of("run-a"))
    ask = [sys.executable, "-c", code, str(path), offset]
    assert subprocess.run(ask, capture_output=True, text=True, check=True).stdout.strip() == "busy"
    held.close()
    assert subprocess.run(ask, capture_output=True, text=True, check=True).stdout.strip() == "free"
