"""`sexp batch --executor ray` (SPEC §10.5): rows as Ray work on a local Ray, the store on the driver.

One local Ray (2 CPUs) serves the whole file (starting one takes seconds); its workers import this
checkout and have a fake provider key in their environment, as a cluster's machines would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, run_cli, scaled, spawn_sexp, wait_for
from llm_server import LLMServer
from local_ray import ray_for_tests

ray = pytest.importorskip("ray", reason="the Ray extra is not installed (pip install 'sexp-tasks[ray]')")

import sexp_tasks  # noqa: E402
from sexp_tasks.batching import ray_executor  # noqa: E402
from sexp_tasks.batching.ray_executor import RayExecutor  # noqa: E402
from sexp_tasks.batching.row_runner import plain_settings  # noqa: E402
from sexp_tasks.batching.rows import ProgramBundle  # noqa: E402
from sexp_tasks.batching.shipping import pack, unpack  # noqa: E402
from sexp_tasks.config import Settings  # noqa: E402
from sexp_tasks.runs.store import Store  # noqa: E402

pytestmark = pytest.mark.slow
KEY = "sk-fake-ray-tests"
TEMPLATE = """<task name="echo" type="atomic">
  <description>Echo a value</description>
  <instructions>Echo {{x}}</instructions>
  <inputs><input name="x" type="string">the value</input></inputs>
</task>
"""


@pytest.fixture(scope="module")
def local_ray() -> Iterator[str]:
    """A local Ray for this file, its workers holding a fake provider key; its address."""
    with ray_for_tests({"OPENAI_API_KEY": KEY}) as address:
        yield address


@pytest.fixture
def server(server: LLMServer) -> LLMServer:
    """conftest's server, answering each call with its prompt upper-cased."""
    server.answer = lambda body: str(body["messages"][-1]["content"]).upper()
    return server


@pytest.fixture
def program(workspace: Path) -> Path:
    """prog.sexp with its template in tasks/, given by a relative path: the workers' directory
    is not the test's, so they run the program and template the driver ships."""
    (workspace / "tasks").mkdir()
    (workspace / "tasks" / "echo.xml").write_text(TEMPLATE)
    (workspace / "prog.sexp").write_text("(task-content (echo x))\n")
    return Path("prog.sexp")


@pytest.fixture(params=["file", "keeper"])
def store_access(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """How rows reach the store: the file itself (workers on the driver's machine, the default),
    or the StoreKeeper actor (as workers on a cluster's other machines do)."""
    monkeypatch.setattr(ray_executor, "DIRECT_STORE", request.param == "file")
    return str(request.param)


def settings(server: LLMServer) -> dict[str, Any]:
    return {"model": "openai/test-model", "api_base": server.base_url, "quiet": True}


def prompts(server: LLMServer) -> Counter[str]:
    """How many times each prompt was sent."""
    return Counter(str(request.body["messages"][-1]["content"]) for request in server.requests)


def ray_processes(kind: str) -> list[int]:
    """The pids of this Ray's actor processes of a kind (`RowWorker`, `StoreKeeper`): this
    process's descendants whose title Ray set to `ray::<kind>...`."""
    parents: dict[int, int] = {}
    titles: dict[int, str] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            titles[int(entry)] = Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        parents[int(entry)] = int(stat[stat.rindex(")") + 2 :].split()[1])
    found = []
    for pid, title in titles.items():
        ancestor, hops = parents.get(pid), 0
        while ancestor not in (None, 0, 1, os.getpid()) and hops < 16:
            ancestor, hops = parents.get(ancestor), hops + 1
        if ancestor == os.getpid() and title.startswith(f"ray::{kind}"):
            found.append(pid)
    return found


def test_forty_rows_run_on_a_local_ray_in_input_order(
    local_ray: str, store_access: str, server: LLMServer, program: Path, workspace: Path
) -> None:
    rows = sexp_tasks.batch(
        program, [{"x": f"v{i}"} for i in range(40)], executor="ray", concurrency=8, **settings(server)
    )
    assert [row["index"] for row in rows] == list(range(40))
    assert [row["value"] for row in rows] == [f"ECHO V{i}" for i in range(40)]
    assert {row["status"] for row in rows} == {"ok"}
    lines = [json.loads(line) for line in (workspace / "prog.results.jsonl").read_text().splitlines()]
    assert lines == rows
    assert sorted(prompts(server).values()) == [1] * 40


def test_the_driver_keeps_the_store_and_trace_shows_a_rows_run(
    local_ray: str, store_access: str, server: LLMServer, program: Path, workspace: Path, cli: Cli
) -> None:
    rows = sexp_tasks.batch(program, [{"x": "one"}, {"x": "two"}], executor="ray", **settings(server))
    status, out, err = cli("trace", rows[1]["run_id"])
    assert status == 0, err
    assert "echo" in out and "ECHO TWO" in out
    stored = Store(workspace / ".sexp" / "store.db", create=False).steps(rows[0]["run_id"])
    assert [(step["name"], step["status"]) for step in stored] == [("echo", "COMPLETE")]


def test_a_worker_that_dies_fails_only_its_row_after_one_retry(
    local_ray: str, store_access: str, server: LLMServer, program: Path
) -> None:
    """Row 3's worker is killed while the row waits for its model; the row runs again on a new
    worker, is killed again, and ends as an error; the rows after it run as usual."""
    release = threading.Event()

    def answer(body: dict[str, Any]) -> str:
        prompt = str(body["messages"][-1]["content"])
        if prompt == "Echo hang":
            release.wait(scaled(120))  # until the test ends: its worker is killed meanwhile
        return prompt.upper()

    server.answer = answer
    data = [{"x": "hang" if i == 3 else f"v{i}"} for i in range(10)]
    rows: list[dict[str, Any]] = []
    batch = threading.Thread(
        target=lambda: rows.extend(
            sexp_tasks.batch(program, data, executor="ray", concurrency=1, **settings(server))
        )
    )
    batch.start()
    try:
        # Each attempt starts a worker process (Ray, then litellm at its first row: seconds of CPU
        # at rest, minutes on a busy machine), hence the scaled waits.
        for attempt in (1, 2):  # the row is run again once, on a new worker; then it fails
            wait_for(lambda n=attempt: prompts(server)["Echo hang"] == n, 60, f"hanging call {attempt}")
            workers = wait_for(lambda: ray_processes("RowWorker"), 30, "the worker of the hanging call")
            for pid in workers:  # one worker: concurrency 1 (and any of an earlier test still ending)
                os.kill(pid, signal.SIGKILL)
        batch.join(scaled(60))
    finally:
        release.set()
    assert not batch.is_alive()
    assert [row["status"] for row in rows] == ["ok"] * 3 + ["error"] + ["ok"] * 6
    assert "prog.sexp: error: the Ray worker running this row died" in rows[3]["error"]
    assert [row["value"] for row in rows if row["index"] != 3] == [f"ECHO V{i}" for i in range(10) if i != 3]


def test_a_batch_killed_on_ray_resumes_without_paying_a_completed_call_twice(
    local_ray: str, server: LLMServer, workspace: Path
) -> None:
    """`sexp batch --executor ray --ray-address` killed with SIGKILL while one row waits for its
    second call; --resume finishes it: the first calls and every finished row are not sent again."""
    (workspace / "two.sexp").write_text('(defatom say (params x) (instructions "Say {{x}}"))\n'
                                        '(list (task-content (say x)) (task-content (say (+ x 100))))\n')
    (workspace / "in.jsonl").write_text("".join(json.dumps({"x": i}) + "\n" for i in range(6)))
    release = threading.Event()

    def answer(body: dict[str, Any]) -> str:
        prompt = str(body["messages"][-1]["content"])
        if prompt == "Say 104" and not release.is_set():
            release.wait(scaled(120))
        return prompt.upper()

    server.answer = answer
    environment = {"OPENAI_API_KEY": KEY, "SEXP_MODEL": "openai/test-model", "SEXP_API_BASE": server.base_url}
    ray_options = ("--executor", "ray", "--ray-address", local_ray)
    first = spawn_sexp("batch", "two.sexp", "--data", "in.jsonl", *ray_options,
                       cwd=workspace, env=environment, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: prompts(server)["Say 104"] == 1 and len(prompts(server)) == 12, 120,
                 "every call but the last row's second one answered")
        wait_for(lambda: len((workspace / "two.results.jsonl").read_text().splitlines()) == 4
                 if (workspace / "two.results.jsonl").exists() else False, 60, "four rows written")
    finally:
        first.kill()
        first.wait(scaled(30))
    assert first.stderr is not None
    batch_id = first.stderr.readline().split()[-1]
    # The killed driver's keeper and workers end with it; the resumed batch starts its own.
    wait_for(lambda: not ray_processes("StoreKeeper") and not ray_processes("RowWorker"), 60, "actors gone")
    release.set()
    status, _, err = run_cli("batch", "two.sexp", "--resume", batch_id, *ray_options, cwd=workspace,
                             env=environment, timeout=180)
    assert status == 0, err
    rows = [json.loads(line) for line in (workspace / "two.results.jsonl").read_text().splitlines()]
    assert [row["value"] for row in rows] == [[f"SAY {i}", f"SAY {i + 100}"] for i in range(6)]
    sent = prompts(server)
    assert sent.pop("Say 104") == 2  # the one call in flight at the kill, sent again
    assert set(sent.values()) == {1}


def test_ray_is_used_as_it_is_when_already_started(local_ray: str, tmp_path: Path) -> None:
    """An executor in a process that started Ray leaves that Ray running when it closes."""
    executor = RayExecutor(None, tmp_path / "runs.db")
    assert list(executor.run(iter([]), 4)) == []
    executor.close()
    assert ray.is_initialized()


def test_a_program_travels_with_its_templates(tmp_path: Path, workspace: Path) -> None:
    """pack reads every template file the program can load; unpack re-creates them where the
    worker does not have them, and leaves the settings alone where it does."""
    (workspace / "tasks").mkdir()
    (workspace / "tasks" / "echo.xml").write_text(TEMPLATE)
    (workspace / "prog.sexp").write_text("(echo x)\n")
    shipped = pack(ProgramBundle("prog.sexp", "(echo x)\n", {}), plain_settings(Settings()))
    assert shipped.templates == {str((workspace / "tasks" / "echo.xml").resolve()): TEMPLATE}
    assert unpack(shipped) == (shipped, {})  # the same machine: its files as they are
    os.chdir(tmp_path)  # another machine: not there
    bundle, changes = unpack(shipped)
    assert Path(bundle.path).read_text() == "(echo x)\n" and Path(bundle.path).name == "prog.sexp"
    (directory,) = changes["template_flags"]
    assert (Path(directory) / "echo.xml").read_text() == TEMPLATE and changes["templates"] == ()


def test_a_cluster_address_nothing_answers_at_is_a_usage_error(
    cli: Cli, program: Path, workspace: Path
) -> None:
    (workspace / "in.jsonl").write_text('{"x": "a"}\n')
    status, out, err = cli(
        "batch", str(program), "--data", "in.jsonl", "--executor", "ray", "--ray-address", "127.0.0.1:1"
    )
    refused = "error: cannot connect to the Ray cluster at 127.0.0.1:1: Connection refused\n"
    assert (status, err) == (2, refused)
    status, out, err = cli(  # RAY_ADDRESS when --ray-address is not given
        "batch", str(program), "--data", "in.jsonl", "--executor", "ray", env={"RAY_ADDRESS": "127.0.0.1:2"}
    )
    refused = "error: cannot connect to the Ray cluster at 127.0.0.1:2: Connection refused\n"
    assert (status, err) == (2, refused)


def test_ctrl_c_stops_a_batch_on_ray_and_says_how_to_resume(
    local_ray: str, server: LLMServer, program: Path, workspace: Path
) -> None:
    release = threading.Event()

    def answer(body: dict[str, Any]) -> str:
        release.wait(scaled(120))  # every row waits for its model until the test ends
        return "late"

    server.answer = answer
    (workspace / "in.jsonl").write_text('{"x": "a"}\n{"x": "b"}\n')
    environment = {"OPENAI_API_KEY": KEY, "SEXP_MODEL": "openai/test-model", "SEXP_API_BASE": server.base_url}
    batch = spawn_sexp("batch", str(program), "--data", "in.jsonl", "--executor", "ray", "--ray-address",
                       local_ray, cwd=workspace, env=environment, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: len(server.requests) == 2, 120, "both rows waiting for their model")
        batch.send_signal(signal.SIGINT)
        _, err = batch.communicate(timeout=scaled(60))
    finally:
        release.set()
        if batch.poll() is None:
            batch.kill()
    assert batch.returncode == 130, err
    batch_id = err.split()[1]
    hint = f"resume with: sexp batch prog.sexp --resume {batch_id}"
    assert err.startswith(f"batch: {batch_id}\n{hint}\nbatch: {batch_id} 0/2 ok, 0 tokens, $0.00, ")
    assert err.endswith(" s\ninterrupted\n"), err  # nothing from Ray itself
