"""Keeping the run store small (SPEC §11.1): a run's lock (a byte of the store's one lock file) goes
with it, nothing else is left beside the store, and
`sexp runs --prune [--older-than DAYS]` deletes finished runs with their steps."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import ROOT, Cli, store_rows, wait_for, write
from llm_server import LLMServer

from sexp_tasks.errors import StoreError
from sexp_tasks.runs import locks
from sexp_tasks.runs.store import Store

GREET = '(defatom greet (params (who str)) (instructions "Say hi to {{who}}"))\n'
DAY = 86400.0


def any_held(workspace: Path) -> bool:
    """Whether a live process holds a run's lock in the workspace's store."""
    return locks.any_held(workspace / ".sexp" / "store.db.runlocks")


def stray_files(workspace: Path) -> list[str]:
    """What is in .sexp besides the store (with its WAL files) and its one lock file, which stays."""
    kept = {"store.db", "store.db-wal", "store.db-shm", "store.db.runlocks"}
    return sorted(p.name for p in (workspace / ".sexp").iterdir() if p.name not in kept)


def runs_by_status(workspace: Path) -> dict[str, str]:
    return {run_id: status for run_id, status in store_rows(workspace, "SELECT id, status FROM runs")}


def shown_statuses(cli: Cli) -> dict[str, str]:
    """Each run's status as `sexp runs` shows it (a killed run is `interrupted`)."""
    status, out, _ = cli("runs", "--json", "--limit", "1000")
    assert status == 0
    return {run["id"]: run["status"] for run in json.loads(out)}


def new_run(cli: Cli, workspace: Path, program: str, name: str = "run.sexp") -> str:
    """Run program as a recorded run (mock models); its id."""
    write(workspace / name, program)
    before = set(runs_by_status(workspace)) if (workspace / ".sexp" / "store.db").is_file() else set()
    cli("run", "--model", "mock/x", name)
    (made,) = set(runs_by_status(workspace)) - before
    return made


class Held:
    """A `sexp run` process kept waiting at the local server's first request (so it holds its run)."""

    def __init__(self, workspace: Path, server: LLMServer) -> None:
        self.gate = threading.Event()
        server.on_request = lambda count: self.gate.wait(120)
        write(workspace / "held.sexp", GREET + '(greet "held")\n')
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "SEXP_API_BASE": server.base_url,
            "SEXP_MODEL": "openai/test-model",
            "OPENAI_API_KEY": "sk-test-upkeep-0123456789",
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "sexp_tasks", "run", "held.sexp"],
            cwd=workspace,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_for(lambda: server.requests or self.process.poll() is not None, 60, "no request came")
        assert self.process.poll() is None, self.process.communicate()
        (self.run_id,) = [r for r, s in runs_by_status(workspace).items() if s == "running"]

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.communicate(timeout=30)
        self.gate.set()


# Run locks ----------------------------------------------------------------------------------


def test_finished_runs_leave_no_lock_held(cli: Cli, workspace: Path) -> None:
    write(workspace / "ok.sexp", "(+ 1 2)\n")
    write(workspace / "bad.sexp", '(error "boom")\n')
    assert cli("run", "ok.sexp")[0] == 0
    assert cli("run", "bad.sexp")[0] == 1
    assert cli("run", "ok.sexp")[0] == 0
    assert len(runs_by_status(workspace)) == 3
    assert not any_held(workspace) and stray_files(workspace) == []


def test_a_batch_leaves_no_lock_held(cli: Cli, workspace: Path) -> None:
    write(workspace / "p.sexp", "(* x 2)\n")
    write(workspace / "in.jsonl", "".join(json.dumps({"x": i}) + "\n" for i in range(40)))
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl", "--concurrency", "4")
    assert status == 0, err
    assert len(runs_by_status(workspace)) == 40
    assert not any_held(workspace) and stray_files(workspace) == []


def test_a_lock_goes_with_its_holder_and_cannot_be_taken_twice(workspace: Path) -> None:
    store = Store(workspace / ".sexp" / "store.db")
    held = store.hold_run("abc")
    assert any_held(workspace) and store.run_is_held("abc")
    with pytest.raises(StoreError, match="run abc is in use by another sexp process"):
        Store(workspace / ".sexp" / "store.db").hold_run("abc")
    held.close()
    assert not any_held(workspace) and not store.run_is_held("abc")
    store.hold_run("abc").close()  # free again
    store.close()


def test_a_killed_runs_lock_goes_with_it_and_a_live_one_stays(
    cli: Cli, workspace: Path, server: LLMServer
) -> None:
    held = Held(workspace, server)
    try:
        write(workspace / "ok.sexp", "(+ 1 2)\n")
        assert cli("run", "ok.sexp")[0] == 0
        store = Store(workspace / ".sexp" / "store.db")
        assert store.run_is_held(held.run_id)  # the live run keeps its lock
        assert shown_statuses(cli)[held.run_id] == "running"
    finally:
        held.kill()
    assert not store.run_is_held(held.run_id) and not any_held(workspace)  # the OS let go at kill -9
    store.close()
    assert shown_statuses(cli)[held.run_id] == "interrupted"
    assert cli("run", "ok.sexp")[0] == 0
    assert stray_files(workspace) == []


def test_a_run_that_cannot_be_recorded_leaves_no_lock(cli: Cli, workspace: Path) -> None:
    write(workspace / "ok.sexp", "(+ 1 2)\n")
    assert cli("run", "ok.sexp")[0] == 0
    (run_id,) = runs_by_status(workspace)
    status, _, err = cli("run", "--resume", run_id, "ok.sexp", "--set", "x=1")  # refused: other inputs
    assert status == 1 and "other --set inputs" in err
    assert not any_held(workspace)


# Pruning ------------------------------------------------------------------------------------


def test_prune_deletes_finished_runs_and_their_steps_and_keeps_the_others(
    cli: Cli, workspace: Path, server: LLMServer
) -> None:
    completed = new_run(cli, workspace, GREET + '(greet "a")\n')
    failed = new_run(cli, workspace, GREET + '(greet "b")\n(error "boom")\n')
    interrupted = new_run(cli, workspace, GREET + '(greet "c")\n')
    query_db = sqlite3.connect(workspace / ".sexp" / "store.db")
    query_db.execute("UPDATE runs SET status = 'interrupted' WHERE id = ?", (interrupted,))
    query_db.commit()
    query_db.close()
    older = workspace / ".sexp" / "store.db.locks"  # an older sexp's lock files, one per run
    older.mkdir()
    (older / "left-by-a-dead-process").write_bytes(b"")
    held = Held(workspace, server)
    try:
        status, out, err = cli("runs", "--prune")
        assert not older.exists()
        assert (status, out, err) == (0, "pruned 2 runs\n", "")
        assert set(runs_by_status(workspace)) == {interrupted, held.run_id}
        assert store_rows(workspace, "SELECT DISTINCT run_id FROM steps ORDER BY run_id") == sorted(
            [(interrupted,), (held.run_id,)]
        )
        assert shown_statuses(cli)[held.run_id] == "running"
    finally:
        held.kill()
    # A killed run is interrupted, not finished: it is kept (it can be resumed).
    assert cli("runs", "--prune") == (0, "pruned 0 runs\n", "")
    assert set(runs_by_status(workspace)) == {interrupted, held.run_id}
    assert not any_held(workspace) and stray_files(workspace) == []
    assert store_rows(workspace, "PRAGMA integrity_check") == [("ok",)]
    assert cli("trace", completed)[0] == 1 and cli("trace", failed)[0] == 1


def test_older_than_prunes_by_the_time_a_run_ended(cli: Cli, workspace: Path) -> None:
    old = new_run(cli, workspace, GREET + '(greet "old")\n')
    recent = new_run(cli, workspace, GREET + '(greet "recent")\n')
    db = sqlite3.connect(workspace / ".sexp" / "store.db")
    now = time.time()
    # Started long ago but ended yesterday: not older than 3 days.
    dated = "UPDATE runs SET started_at = ?, ended_at = ? WHERE id = ?"
    db.execute(dated, (now - 30 * DAY, now - DAY, recent))
    db.execute(dated, (now - 9 * DAY, now - 8 * DAY, old))
    db.commit()
    db.close()
    assert cli("runs", "--prune", "--older-than", "10") == (0, "pruned 0 runs\n", "")
    assert cli("runs", "--prune", "--older-than", "3") == (0, "pruned 1 run\n", "")
    assert set(runs_by_status(workspace)) == {recent}
    assert cli("runs", "--prune", "--older-than", "0.5") == (0, "pruned 1 run\n", "")
    assert runs_by_status(workspace) == {}
    assert store_rows(workspace, "SELECT COUNT(*) FROM steps") == [(0,)]
    assert store_rows(workspace, "PRAGMA integrity_check") == [("ok",)]


def test_prune_deletes_finished_batches_whole_and_keeps_unfinished_ones(cli: Cli, workspace: Path) -> None:
    write(workspace / "p.sexp", GREET + "(task-content (greet who))\n")
    write(workspace / "in.jsonl", "".join(json.dumps({"who": w}) + "\n" for w in "abc"))
    assert cli("batch", "p.sexp", "--data", "in.jsonl", "--model", "mock/x")[0] == 0
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl", "--model", "mock/x")
    assert status == 0
    batches = store_rows(workspace, "SELECT id FROM batches ORDER BY started_at")
    finished, unfinished = [row[0] for row in batches]
    db = sqlite3.connect(workspace / ".sexp" / "store.db")
    db.execute("UPDATE batches SET status = 'interrupted' WHERE id = ?", (unfinished,))
    db.commit()
    db.close()
    rows = store_rows(workspace, "SELECT run_id FROM batch_rows WHERE batch_id = ?", unfinished)
    kept = {r[0] for r in rows}
    standalone = new_run(cli, workspace, GREET + '(greet "z")\n')
    status, out, err = cli("runs", "--prune")
    assert (status, out, err) == (0, "pruned 4 runs, 1 batch\n", "")
    assert set(runs_by_status(workspace)) == kept
    assert store_rows(workspace, "SELECT id FROM batches") == [(unfinished,)]
    assert store_rows(workspace, "SELECT COUNT(*) FROM batch_rows WHERE batch_id = ?", finished) == [(0,)]
    assert standalone not in runs_by_status(workspace)
    assert store_rows(workspace, "PRAGMA integrity_check") == [("ok",)]
    status, _, err = cli("batch", "p.sexp", "--resume", unfinished, "--model", "mock/x")
    assert status == 0, err  # the kept batch still resumes


def test_prune_json_and_usage(cli: Cli, workspace: Path) -> None:
    assert cli("runs", "--prune") == (0, "pruned 0 runs\n", "")
    assert not (workspace / ".sexp").exists()  # pruning nothing creates no store
    new_run(cli, workspace, "(+ 1 2)\n")
    assert cli("runs", "--prune", "--json") == (0, '{"runs": 1, "batches": 0}\n', "")
    status, _, err = cli("runs", "--older-than", "3")
    assert status == 2 and "--older-than needs --prune" in err
    status, _, err = cli("runs", "--prune", "--older-than", "-1")
    assert status == 2 and "--older-than" in err and "Traceback" not in err
    status, _, err = cli("runs", "--prune", "--older-than", "nan")
    assert status == 2 and "--older-than" in err


def test_ctrl_c_during_a_model_call_leaves_no_lock_held(cli: Cli, workspace: Path, server: LLMServer) -> None:
    held = Held(workspace, server)  # its model call waits at the server: the evaluation is stuck
    try:
        held.process.send_signal(signal.SIGINT)
        _, err = held.process.communicate(timeout=60)
    finally:
        held.gate.set()
        if held.process.poll() is None:
            held.kill()
    assert held.process.returncode == 130, err
    assert runs_by_status(workspace) == {held.run_id: "interrupted"}
    assert not any_held(workspace)
