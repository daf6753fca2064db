"""A batch on threads, its store written in groups (runs/store.py), killed with kill -9 at random
moments and resumed, 30 times (every third batch has 200 rows, the others 100, so that the test
fits in about a minute on a busy 2-core machine): no row is lost, none is written twice to OUT,
and no model call whose answer was recorded before the kill is paid again.

Each batch runs in a process forked from this one (which imported sexp and litellm once), so a
trial costs its rows, not a start-up; the kill lands a random 0-20 ms after a random request of
the batch arrives at the recording server, so it falls anywhere: mid-call, mid-commit, while OUT
is written. Requests are counted per row by the input each carries ("Echo <x>").
"""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import random
import re
import signal
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import scaled, wait_for
from llm_server import LLMServer, Scripted

from sexp_tasks.batching.driver import BatchOptions, run_batch
from sexp_tasks.config import Settings

FULL = 200  # the rows of every third trial's batch; the others have SHORT, so that 30 trials fit in ~60 s
SHORT = 100
TRIALS = int(os.environ.get("SEXP_KILL_TRIALS", "30"))
CONCURRENCY = 16
PROGRAM = '(defatom echo (params x) (instructions "Echo {{x}}"))\n(task-content (echo x))\n'
ECHO = re.compile(r"Echo (\d+)")


def _row_of(body: dict[str, Any]) -> int | None:
    """The row a request is for; None for one cut short by the kill (its body never all sent)."""
    found = ECHO.search(json.dumps(body.get("messages")))
    return int(found.group(1)) if found else None


def _rows_of(requests: list[Any]) -> list[int]:
    return [row for row in (_row_of(request.body) for request in requests) if row is not None]


def _batch(settings: Settings, options: BatchOptions, rows: int) -> None:
    """A forked child: run (or resume) the batch, exit 0 when its rows all completed."""
    try:
        summary = run_batch(options, settings, io.StringIO())
        os._exit(0 if summary.ok == rows else 3)
    except BaseException:  # noqa: BLE001  (the parent reads the exit status)
        os._exit(4)


def _recorded_answers(store: Path, batch_id: str) -> set[int]:
    """The rows whose model call's answer the store holds (a completed turn of the row's run)."""
    with sqlite3.connect(store) as db:
        found = db.execute(
            """SELECT DISTINCT b."index" FROM batch_rows b JOIN steps s ON s.run_id = b.run_id
               WHERE b.batch_id = ? AND s.kind = 'turn' AND s.status = 'COMPLETE'""",
            (batch_id,),
        ).fetchall()
    return {row[0] for row in found}


@pytest.fixture
def fork() -> Any:
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("needs fork")
    return multiprocessing.get_context("fork")


def test_kill_9_at_random_moments_then_resume_loses_and_repays_nothing(
    workspace: Path, server: LLMServer, fork: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-group-commit")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from sexp_tasks.handler.llm import _litellm

    _litellm()  # imported once here: every forked batch has it
    server.script(Scripted(delay=0.005))
    server.answer = lambda body: f"answer {_row_of(body)}"
    chance = random.Random(os.environ.get("SEXP_KILL_SEED", "23"))
    program = workspace / "echo.sexp"
    program.write_text(PROGRAM)
    killed_at_least_once = 0
    for trial in range(TRIALS):
        rows = FULL if trial % 3 == 0 else SHORT
        data = workspace / f"rows-{rows}.jsonl"
        data.write_text("".join(json.dumps({"x": i}) + "\n" for i in range(rows)))
        store = workspace / f"runs-{trial}.db"
        out = workspace / f"out-{trial}.jsonl"
        settings = Settings(
            workspace=str(workspace),
            store=str(store),
            model="openai/test-model",
            api_base=server.base_url,
            quiet=True,
        )
        server.requests.clear()
        kill_at = chance.randint(1, rows)
        extra = chance.uniform(0.0, 0.02)
        first = fork.Process(
            target=_batch, args=(settings, BatchOptions(program, data, out, CONCURRENCY), rows)
        )

        timers: list[threading.Timer] = []

        def kill(
            arrived: int,
            first: Any = first,
            kill_at: int = kill_at,
            extra: float = extra,
            timers: Any = timers,
        ) -> None:
            if arrived == kill_at:
                timers.append(threading.Timer(extra, lambda: os.kill(first.pid, signal.SIGKILL)))
                timers[-1].start()

        server.on_request = kill
        first.start()
        first.join(scaled(30))
        server.on_request = None
        assert first.exitcode in (0, -signal.SIGKILL), f"trial {trial}: the batch ended {first.exitcode}"
        before = _rows_of(server.requests)
        if first.exitcode == 0:  # the kill came after the batch's end: nothing to resume
            continue
        killed_at_least_once += 1
        with sqlite3.connect(store) as db:
            batch_id = db.execute("SELECT id FROM batches").fetchone()[0]
        answered = _recorded_answers(store, batch_id)
        assert answered <= set(before)
        for timer in timers:
            timer.join(scaled(5))  # it has fired: the process it killed is gone
        # A request the killed batch sent just before its end may still be unread by the server:
        # once its connections are all closed, no request of the first batch can arrive any more
        # (on a loaded machine one used to, after this count, and looked like a row sent twice)
        wait_for(lambda: server.connections == 0, 30, "the killed batch's connections closed")
        resumed = len(server.requests)
        second = fork.Process(
            target=_batch,
            args=(settings, BatchOptions(program, None, None, CONCURRENCY, resume=batch_id), rows),
        )
        second.start()
        second.join(scaled(30))
        assert second.exitcode == 0, f"trial {trial}: the resume ended {second.exitcode}"
        again = _rows_of(server.requests[resumed:])
        paid_twice = sorted(set(again) & answered)
        assert not paid_twice, f"trial {trial} (killed at request {kill_at}): rows {paid_twice} paid again"
        assert len(again) == len(set(again)), f"trial {trial}: a row was requested twice on resume"
        lines = [json.loads(line) for line in out.read_text().splitlines()]
        assert [line["index"] for line in lines] == list(range(rows)), f"trial {trial}: rows lost or doubled"
        assert all(line["status"] == "ok" and line["value"] == f"answer {line['index']}" for line in lines)
        with sqlite3.connect(store) as db:
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert killed_at_least_once >= TRIALS // 2  # most kills land inside the batch
