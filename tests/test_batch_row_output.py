"""What a batch row prints reaches the batch's stderr labelled by row (`row 3: hello`), on threads
and on Ray (whose rows travel to their worker and back in chunks: batching/ray_executor.py).

The Ray tests share one local Ray (2 CPUs) started by this file, as tests/test_batch_ray.py does.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, scaled, sexp_env
from llm_server import LLMServer
from local_ray import ray_for_tests

from sexp_tasks.batching import row_output
from sexp_tasks.batching.rows import ProgramBundle, RowJob, RowOutcome

PRINTS = '(print "hello" x)\n(print "two\\nlines")\nx\n'


def labelled_lines(err: str) -> list[str]:
    """err's `row N: ...` lines, sorted (rows print in any order; each row's lines in its order)."""
    return sorted(line for line in err.splitlines() if line.startswith("row "))


EXPECTED = [f"row {i}: {text}" for i in range(3) for text in (f"hello {i + 1}", "lines", "two")]


def test_a_row_s_print_on_threads_reaches_stderr_labelled(cli: Cli, workspace: Path) -> None:
    (workspace / "p.sexp").write_text(PRINTS)
    (workspace / "in.jsonl").write_text("".join(json.dumps({"x": i + 1}) + "\n" for i in range(3)))
    status, out, err = cli("batch", "p.sexp", "--data", "in.jsonl")
    assert (status, out) == (0, ""), err
    assert labelled_lines(err) == EXPECTED
    assert [line for line in err.splitlines() if not line.startswith(("row ", "batch: "))] == []


def test_streams_are_put_back_and_other_threads_write_as_before() -> None:
    """Outside a row a write goes where it went; a row's unfinished last line is ended."""
    lines: list[str] = []
    before = sys.stdout, sys.stderr
    with row_output.routed(lines.append):
        with row_output.routed(lines.append):  # a second batch meanwhile shares the routing
            assert isinstance(sys.stderr, row_output.RowStreams)
        assert isinstance(sys.stderr, row_output.RowStreams)
        print("not a row's", file=sys.stderr)
        with row_output.labelled(7):
            sys.stdout.write("a ")
            print("b", file=sys.stderr)
            sys.stdout.write("no newline")
    assert (sys.stdout, sys.stderr) == before
    assert lines == ["row 7: a b\n", "row 7: no newline\n"]


ray = pytest.importorskip("ray", reason="the Ray extra is not installed (pip install 'sexp-tasks[ray]')")

from sexp_tasks.batching.ray_executor import RayExecutor  # noqa: E402


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """A local Ray for this file; its workers import this checkout (and these tests)."""
    with ray_for_tests():
        yield


def napping_runner(job: RowJob, store: Any, budget: Any, share: Any, runtime_for: Any = None) -> RowOutcome:
    """A row that waits a while (job.inputs["nap"] seconds), prints, and ends; a row "die" kills
    its worker the first time it runs."""
    if job.inputs.get("die") and not job.resuming:
        os.kill(os.getpid(), signal.SIGKILL)
    if job.inputs.get("boom"):
        raise SystemExit("boom")
    time.sleep(job.inputs.get("nap", 0.0))
    print("napped", job.inputs["x"])
    if job.inputs.get("unpicklable"):  # its exchange cannot return it
        return RowOutcome(job.index, "ok", threading.Lock(), None, job.run_id, 0, 0.0, 0.0)
    return RowOutcome(
        job.index, "ok", {"resumed": job.resuming, "pid": os.getpid()}, None, job.run_id, 0, 0.0, 0.0
    )


def jobs(tmp_path: Path, data: list[dict[str, Any]], taken: list[int]) -> Iterator[RowJob]:
    bundle = ProgramBundle(str(tmp_path / "p.sexp"), "x\n", {})
    settings = {"workspace": str(tmp_path), "store": str(tmp_path / "runs.db"), "quiet": True}
    for index, inputs in enumerate(data):
        taken.append(index)
        yield RowJob("b", index, inputs, bundle, dict(settings), f"r{index:011d}", False)


def test_rows_on_ray_travel_in_chunks_lazily_with_their_print_labelled(
    local_ray: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """40 rows at concurrency 8 on two workers: never more than 8 taken and not ended, each ends
    once, every row's print is on the driver's stderr, labelled."""
    (tmp_path / "p.sexp").write_text("x\n")
    taken: list[int] = []
    executor = RayExecutor(None, tmp_path / "runs.db", workers=2, runner=napping_runner)
    ended: list[RowOutcome] = []
    try:
        for outcome in executor.run(jobs(tmp_path, [{"x": i, "nap": 0.05} for i in range(40)], taken), 8):
            assert len(taken) - len(ended) <= 8
            ended.append(outcome)
    finally:
        executor.close()
    assert sorted(outcome.index for outcome in ended) == list(range(40))
    assert len({outcome.value["pid"] for outcome in ended}) == 2  # both workers ran rows
    err = capsys.readouterr().err
    assert labelled_lines(err) == sorted(f"row {i}: napped {i}" for i in range(40))


def test_a_dead_worker_s_unfinished_rows_run_again_and_no_other_row(local_ray: None, tmp_path: Path) -> None:
    """Row 0 kills its worker while the three other rows sent with it in a chunk wait: those four
    run again on a new worker (resuming); the rows of the other worker, and rows that had ended,
    are not run again."""
    (tmp_path / "p.sexp").write_text("x\n")
    data = [{"x": 0, "die": True, "nap": 0.0}] + [
        {"x": i, "nap": 1.0 if i < 8 else 0.1} for i in range(1, 20)
    ]
    executor = RayExecutor(None, tmp_path / "runs.db", workers=2, runner=napping_runner)
    try:
        ended = list(executor.run(jobs(tmp_path, data, []), 8))
    finally:
        executor.close()
    assert sorted(outcome.index for outcome in ended) == list(range(20))
    assert {outcome.status for outcome in ended} == {"ok"}
    resumed = sorted(outcome.index for outcome in ended if outcome.value["resumed"])
    assert resumed == [0, 1, 2, 3]  # the first worker's chunk (4 rows each): rows 0 to 3


def test_a_ray_row_s_print_and_model_call_on_a_ray_started_without_the_keys(
    server: LLMServer, tmp_path: Path
) -> None:
    """A process that started its local Ray with start_local_ray (keys kept out of its processes)
    runs a batch on it: the rows get the key from the batch (their model calls are answered, not
    refused for want of one), and what they print is on the driver's stderr, labelled."""
    (tmp_path / "p.sexp").write_text(
        '(defatom echo (params x) (instructions "Echo {{x}}"))\n'
        '(print "row says" x)\n(task-content (echo x))\n'
    )
    script = textwrap.dedent(f"""
        import os, sexp_tasks
        from sexp_tasks.batching.ray_executor import start_local_ray
        start_local_ray(1)
        rows = sexp_tasks.batch("p.sexp", [{{"x": "a"}}, {{"x": "b"}}], executor="ray",
                                model="openai/test-model", api_base={server.base_url!r}, quiet=True)
        print([row["value"] for row in rows])
        os._exit(0)
    """)
    env = sexp_env({"OPENAI_API_KEY": "sk-fake-ray-output", "RAY_AUTH_MODE": "disabled"})
    env.pop("RAY_ADDRESS", None)
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled(240),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(server.requests) == 2, done.stdout
    assert labelled_lines(done.stderr) == ["row 0: row says a", "row 1: row says b"]
    sent = [{name.lower(): value for name, value in request.headers.items()} for request in server.requests]
    assert {headers.get("authorization") for headers in sent} == {"Bearer sk-fake-ray-output"}


def test_a_row_that_breaks_its_runner_or_its_exchange_fails_alone(local_ray: None, tmp_path: Path) -> None:
    """A row whose runner raises (a bug: run_row reports a program's errors) is an error row and its
    worker goes on; a row whose outcome cannot travel back fails its exchange: its worker's rows
    fail, a new worker runs the next ones."""
    (tmp_path / "p.sexp").write_text("x\n")
    data = [{"x": 0}, {"x": 1, "boom": True}, {"x": 2}, {"x": 3, "unpicklable": True}, {"x": 4}]
    executor = RayExecutor(None, tmp_path / "runs.db", workers=1, runner=napping_runner)
    try:
        ended = {outcome.index: outcome for outcome in executor.run(jobs(tmp_path, data, []), 1)}
    finally:
        executor.close()
    assert [ended[i].status for i in range(5)] == ["ok", "error", "ok", "error", "ok"]
    assert "p.sexp: error: the row failed on Ray: boom" in str(ended[1].error)
    assert "the row failed on Ray: " in str(ended[3].error)
    assert ended[0].value["pid"] == ended[2].value["pid"] != ended[4].value["pid"]
