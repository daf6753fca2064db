"""`sexp batch` (SPEC §10.5): one recorded run per input line, results in input order, resume.

Batches run as real `sexp batch` processes; rows call mock models where nothing is counted, and
the local server in tests/llm_server.py where requests, concurrency or spending are counted.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import sqlite3
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    ROOT,
    Cli,
    jsonl,
    results,
    run_cli,
    run_python,
    scaled,
    spawn_sexp,
    store_rows,
    wait_for,
    write,
)
from llm_server import LLMServer, Scripted

import sexp_tasks
from sexp_tasks.batching.driver import BatchOptions, run_batch
from sexp_tasks.config import load_settings
from sexp_tasks.errors import BatchError, SexpError

BATCH_LINE = re.compile(r"\Abatch: ([0-9a-f]{12})\n")
SUMMARY = re.compile(r"^batch: ([0-9a-f]{12}) (\d+)/(\d+) ok, (\d+) tokens, (\$[0-9.]+), ([0-9.]+) s$", re.M)
GREET = '(defatom greet (params (name string)) (instructions "Greet {{name}}"))\n'
TWO_STEPS = """
(defatom first (params (x int)) (instructions "First {{x}}"))
(defatom second (params (x int)) (instructions "Second {{x}}"))
(list (task-content (first x)) (task-content (second x)))
"""


def store_batch_id(workspace: Path) -> str | None:
    """The id of the batch the store holds, once it holds one."""
    try:
        found = store_rows(workspace, "SELECT id FROM batches")
    except sqlite3.Error:  # not made yet
        return None
    return str(found[0][0]) if found else None


def batch_id(err: str) -> str:
    found = BATCH_LINE.match(err)
    assert found, err
    return found.group(1)


def server_env(server: LLMServer) -> dict[str, str]:
    return {
        "SEXP_API_BASE": server.base_url,
        "SEXP_MODEL": "openai/test-model",
        "OPENAI_API_KEY": "sk-fake-batch",
    }


def content(body: dict[str, Any]) -> str:
    """The last message of a request: the instructions a row's task call sent."""
    return str(body["messages"][-1]["content"])


# Order, concurrency, isolation -------------------------------------------------------------------


def test_rows_finishing_out_of_order_are_written_in_input_order_and_concurrency_is_bounded(
    cli: Cli, workspace: Path, server: LLMServer
) -> None:
    in_flight, most = [0], [0]
    lock = threading.Lock()

    def answer(body: dict[str, Any]) -> str:
        name = content(body).split()[-1]
        with lock:
            in_flight[0] += 1
            most[0] = max(most[0], in_flight[0])
        time.sleep(0.1 + 0.05 * (8 - int(name[1:])))  # the first rows answer last
        with lock:
            in_flight[0] -= 1
        return f"<output>hello {name}</output>"

    server.answer = answer
    write(workspace / "p.sexp", GREET + "(task-content (greet name))\n")
    jsonl(workspace / "in.jsonl", [{"name": f"n{i}"} for i in range(8)])
    status, out, err = cli(
        "batch", "p.sexp", "--data", "in.jsonl", "--concurrency", "3", env=server_env(server)
    )
    assert (status, out) == (0, ""), err
    rows = results(workspace / "p.results.jsonl")  # the default OUT: FILE's stem, in the working directory
    assert [row["index"] for row in rows] == list(range(8))
    assert [row["value"] for row in rows] == [f"hello n{i}" for i in range(8)]
    assert all(
        list(row) == ["index", "status", "value", "error", "run_id", "tokens", "cost_usd", "seconds"]
        for row in rows
    )
    assert {row["status"] for row in rows} == {"ok"} and all(row["tokens"] == 15 for row in rows)
    assert len({row["run_id"] for row in rows}) == 8
    assert most[0] == 3 and len(server.requests) == 8
    found = SUMMARY.search(err)
    assert found and found.group(1) == batch_id(err) and found.groups()[1:4] == ("8", "8", "120")


def test_rows_are_isolated_and_a_failing_row_stops_no_other(cli: Cli, workspace: Path) -> None:
    write(workspace / "p.sexp", '(if mk (define leaked 1) nil)\n(if fail (error "boom" x) leaked)\n')
    rows = [{"mk": True, "fail": False, "x": 0}, {"mk": False, "fail": False, "x": 1}]
    rows += [{"mk": True, "fail": True, "x": 2}, {"mk": True, "fail": False, "x": 3}]
    jsonl(workspace / "in.jsonl", rows)
    status, out, err = cli(
        "batch", "p.sexp", "--data", "in.jsonl", "--out", "o/out.jsonl", "--concurrency", "1"
    )
    assert (status, out) == (1, "")
    got = results(workspace / "o" / "out.jsonl")
    assert [row["status"] for row in got] == ["ok", "error", "error", "ok"]
    assert got[0]["value"] == 1 and got[3]["value"] == 1 and got[1]["value"] is None
    assert got[1]["error"].startswith("p.sexp:2:") and "unbound symbol 'leaked'" in got[1]["error"]
    assert got[2]["error"] == "p.sexp:2:10: error: boom 2"
    assert SUMMARY.search(err).groups()[1:5] == ("2", "4", "0", "$0.00")  # type: ignore[union-attr]


def test_a_failed_task_result_makes_the_row_an_error(cli: Cli, workspace: Path) -> None:
    write(workspace / "p.sexp", GREET + "(greet name)\n")
    write(workspace / "replies.json", json.dumps({"greet": ["<output>hi</output>", "   "]}))
    jsonl(workspace / "in.jsonl", [{"name": "a"}])
    write(workspace / "sexp.toml", 'model = "mock/m"\n')
    status, _, _ = cli("batch", "p.sexp", "--data", "in.jsonl", "--mock-responses", "replies.json")
    assert status == 0
    assert results(workspace / "p.results.jsonl")[0]["value"]["content"] == "hi"
    write(workspace / "replies.json", json.dumps(["   "]))  # an empty answer is INVALID_OUTPUT
    status, _, _ = cli("batch", "p.sexp", "--data", "in.jsonl", "--mock-responses", "replies.json")
    [row] = results(workspace / "p.results.jsonl")
    assert status == 1 and row["status"] == "error" and row["error"].startswith("p.sexp:2:1: error: ")


def test_rows_see_the_program_s_templates_and_set_values(cli: Cli, workspace: Path) -> None:
    write(
        workspace / "prog" / "tasks" / "shout.xml",
        '<task name="shout" type="atomic"><description>Shout</description>'
        "<instructions>Shout {{word}}</instructions>"
        '<inputs><input name="word" type="string">the word</input></inputs></task>',
    )
    write(workspace / "prog" / "p.sexp", "(list greeting (task-content (shout :word word)))\n")
    write(workspace / "replies.json", json.dumps({"shout": ["<output>HEY</output>"]}))
    jsonl(workspace / "in.jsonl", [{"word": "hey"}, {"word": "ho", "greeting": "own"}])
    args = ("--model", "mock/m", "--mock-responses", "replies.json", "--set-str", "greeting=shared", "-q")
    assert cli("batch", "prog/p.sexp", "--data", "in.jsonl", *args) == (0, "", "")
    rows = results(workspace / "p.results.jsonl")
    assert [row["value"] for row in rows] == [["shared", "HEY"], ["own", "HEY"]]


def test_a_template_that_does_not_load_stops_the_batch_before_any_row(cli: Cli, workspace: Path) -> None:
    write(workspace / "prog" / "tasks" / "broken.xml", "<task name=")
    write(workspace / "prog" / "p.sexp", "1\n")
    jsonl(workspace / "in.jsonl", [{"x": 1}])
    status, out, err = cli("batch", "prog/p.sexp", "--data", "in.jsonl")
    assert (status, out) == (2, "") and "broken.xml" in err and "error" in err
    assert not (workspace / ".sexp").exists() and not (workspace / "p.results.jsonl").exists()


def test_an_empty_input_is_a_batch_of_no_rows(cli: Cli, workspace: Path) -> None:
    write(workspace / "p.sexp", "x\n")
    write(workspace / "in.jsonl", "\n")
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl")
    assert status == 0 and SUMMARY.search(err).groups()[1:3] == ("0", "0")  # type: ignore[union-attr]
    assert (workspace / "p.results.jsonl").read_text() == ""


def test_the_progress_bar_is_drawn_on_a_terminal_only(workspace: Path) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    write(workspace / "p.sexp", "(* 2 n)\n")
    jsonl(workspace / "in.jsonl", [{"n": i} for i in range(3)])
    options = BatchOptions(Path("p.sexp"), Path("in.jsonl"))
    for stream in (Terminal(), io.StringIO()):
        summary = run_batch(options, load_settings(workspace, {}), err=stream)
        assert (summary.ok, summary.total) == (3, 3)
        shown = stream.getvalue()
        assert shown.startswith(f"batch: {summary.batch_id}\n") and shown.endswith(summary.line() + "\n")
        assert ("batch [" in shown) == isinstance(stream, Terminal)


def test_rows_record_to_one_cassette_and_replay_from_it(cli: Cli, workspace: Path, server: LLMServer) -> None:
    server.answer = lambda body: "<output>re " + content(body) + "</output>"
    write(workspace / "p.sexp", GREET + "(task-content (greet name))\n")
    jsonl(workspace / "in.jsonl", [{"name": f"n{i}"} for i in range(4)])
    args = ("batch", "p.sexp", "--data", "in.jsonl", "--concurrency", "2")
    assert cli(*args, "--record", "calls.jsonl", "-q", env=server_env(server)) == (0, "", "")
    recorded = [row["value"] for row in results(workspace / "p.results.jsonl")]
    assert recorded == [f"re Greet n{i}" for i in range(4)] and len(server.requests) == 4
    assert len((workspace / "calls.jsonl").read_text().splitlines()) == 4  # every row's call, none lost
    status, _, err = cli(*args, "--replay", "calls.jsonl", "--out", "again.jsonl", env=server_env(server))
    assert status == 0, err
    assert [row["value"] for row in results(workspace / "again.jsonl")] == recorded
    assert len(server.requests) == 4  # answered from the cassette
    write(workspace / "bad.jsonl", "not a reply\n")
    status, _, err = cli(*args, "--replay", "bad.jsonl")  # found before any row runs
    assert (status, err) == (2, "error: replay: cassette 'bad.jsonl' line 1 is not a recorded reply\n")


# Bad input ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line, message",
    [
        ("{not json", "not JSON: "),
        ("[1, 2]", "expected a JSON object (its keys bind globals), got an array"),
        ('{"two words": 1}', "key 'two words' is not a name a program can use"),
        ('{"x": NaN}', "not JSON: NaN is not JSON"),
    ],
)
def test_a_malformed_line_is_named_and_nothing_runs(
    cli: Cli, workspace: Path, line: str, message: str
) -> None:
    write(workspace / "p.sexp", "(print x)\n")
    write(workspace / "in.jsonl", '{"x": 1}\n\n' + line + '\n{"x": 2}\n')
    status, out, err = cli("batch", "p.sexp", "--data", "in.jsonl")
    assert (status, out) == (2, "")
    assert err.startswith(f"in.jsonl:3: error: {message}") and err.count("\n") == 1, err
    assert not (workspace / "p.results.jsonl").exists() and not (workspace / ".sexp").exists()


def test_usage_errors(cli: Cli, workspace: Path) -> None:
    write(workspace / "p.sexp", "x\n")
    jsonl(workspace / "in.jsonl", [{"x": 1}])
    assert cli("batch", "p.sexp") == (2, "", "error: no input: give --data IN.jsonl\n")
    assert cli("batch", "nope.sexp", "--data", "in.jsonl")[2].startswith("error: cannot read 'nope.sexp'")
    assert cli("batch", "p.sexp", "--data", "none.jsonl")[2].startswith("error: cannot read 'none.jsonl'")
    assert cli("batch", "p.sexp", "--data", "in.jsonl", "--concurrency", "0") == (
        2,
        "",
        "error: the concurrency must be a positive integer, not 0\n",
    )
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl", "--out", "p.sexp/out.jsonl")
    assert status == 2 and err.startswith("error: cannot write 'p.sexp/out.jsonl': ")
    assert cli("runs") == (0, "", "")  # no batch was recorded
    write(workspace / "bad.sexp", "(+ 1\n")
    status, _, err = cli("batch", "bad.sexp", "--data", "in.jsonl")
    assert status == 2 and err.startswith("bad.sexp:1:1: error: ")


def test_the_ray_executor_without_ray_is_a_usage_error(cli: Cli, workspace: Path) -> None:
    write(workspace / "noray" / "ray" / "__init__.py", 'raise ImportError("No module named ray")\n')
    write(workspace / "p.sexp", "x\n")
    jsonl(workspace / "in.jsonl", [{"x": 1}])
    env = {"PYTHONPATH": os.pathsep.join([str(ROOT), str(workspace / "noray")])}
    status, out, err = cli("batch", "p.sexp", "--data", "in.jsonl", "--executor", "ray", env=env)
    assert (status, out) == (2, "")
    assert err == "error: the Ray executor needs Ray, which is not installed: pip install 'sexp-tasks[ray]'\n"


# The store: runs, trace, resume ---------------------------------------------------------------------


def mock_batch(cli: Cli, workspace: Path, *extra: str) -> tuple[int, str]:
    """A batch of three rows calling a mock model; its exit status and stderr."""
    write(workspace / "p.sexp", GREET + "(task-content (greet name))\n")
    write(workspace / "replies.json", json.dumps(["<output>hi</output>"]))
    jsonl(workspace / "in.jsonl", [{"name": n} for n in ("a", "b", "c")])
    args = ("batch", "p.sexp", "--data", "in.jsonl", "--model", "mock/m", "--mock-responses", "replies.json")
    status, _, err = cli(*args, *extra)
    return status, err


def test_runs_lists_the_batch_with_its_rows_and_trace_shows_a_row(cli: Cli, workspace: Path) -> None:
    status, err = mock_batch(cli, workspace)
    assert status == 0
    ident = batch_id(err)
    rows = results(workspace / "p.results.jsonl")
    _, listing, _ = cli("runs", "--rows")  # the runs, a batch's rows under its line
    lines = listing.splitlines()
    assert lines[0].startswith(f"batch {ident}  ") and "completed" in lines[0] and "3/3 ok" in lines[0]
    assert [line.split()[0] for line in lines[1:]] == [row["run_id"] for row in rows]
    assert all(line.startswith("  ") and line.endswith(f"(row {i})") for i, line in enumerate(lines[1:]))
    summaries = json.loads(cli("runs", "--rows", "--json")[1])
    assert {(s["id"], s["batch"], s["batch_index"]) for s in summaries} == {
        (row["run_id"], ident, row["index"]) for row in rows
    }
    status, trace, _ = cli("trace", rows[1]["run_id"])
    assert status == 0 and "greet" in trace and "COMPLETE" in trace


def test_resuming_a_completed_batch_runs_nothing(cli: Cli, workspace: Path) -> None:
    status, err = mock_batch(cli, workspace)
    ident = batch_id(err)
    before = (workspace / "p.results.jsonl").read_text()
    runs = store_rows(workspace, "SELECT COUNT(*) FROM runs")[0][0]
    steps = store_rows(workspace, "SELECT COUNT(*), MAX(started_at) FROM steps")[0]
    status, _, err = cli(
        "batch", "p.sexp", "--resume", ident, "--model", "mock/m", "--mock-responses", "replies.json"
    )
    assert status == 0 and batch_id(err) == ident and SUMMARY.search(err).group(2) == "3"  # type: ignore[union-attr]
    assert (workspace / "p.results.jsonl").read_text() == before
    assert store_rows(workspace, "SELECT COUNT(*) FROM runs")[0][0] == runs
    assert store_rows(workspace, "SELECT COUNT(*), MAX(started_at) FROM steps")[0] == steps


def test_resume_refuses_an_unknown_batch_and_an_edited_program(cli: Cli, workspace: Path) -> None:
    status, err = mock_batch(cli, workspace)
    ident = batch_id(err)
    status, _, err = cli("batch", "p.sexp", "--resume", "0123456789ab")
    assert status == 2 and err == "error: unknown batch '0123456789ab' in .sexp/store.db\n"
    write(workspace / "p.sexp", GREET + '(string-append "!" (task-content (greet name)))\n')
    status, _, err = cli("batch", "p.sexp", "--resume", ident)
    assert status == 2 and err.startswith(f"error: the program has changed since batch {ident} was recorded;")
    jsonl(workspace / "in.jsonl", [{"name": "z"}])
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl", "--resume", ident)
    assert status == 2 and "the program has changed" in err


def test_max_cost_is_one_budget_for_the_whole_batch(cli: Cli, workspace: Path, server: LLMServer) -> None:
    # Each call costs 0.00075 (gpt-4o-mini's prices): a row's own budget of 0.002 would pay every row.
    # The row's value is the task's result: a refused call makes it FAILED, the row an error.
    server.script(Scripted("<output>hi</output>", usage={"prompt_tokens": 1000, "completion_tokens": 1000}))
    write(workspace / "p.sexp", GREET + "(greet name)\n")
    jsonl(workspace / "in.jsonl", [{"name": f"n{i}"} for i in range(5)])
    env = {**server_env(server), "SEXP_MODEL": "openai/gpt-4o-mini"}
    args = ("batch", "p.sexp", "--data", "in.jsonl", "--concurrency", "1", "--max-cost", "0.002")
    status, _, err = cli(*args, env=env)
    rows = results(workspace / "p.results.jsonl")
    paid = [row for row in rows if row["status"] == "ok"]
    refused = [row for row in rows if row["status"] == "error"]
    assert status == 1 and 1 <= len(paid) < 5 and len(server.requests) == len(paid)
    assert all("RESOURCE_EXHAUSTION" in row["error"] and "budget" in row["error"] for row in refused)
    assert rows[: len(paid)] == paid  # in order: the budget ran out, then every row was refused
    assert sum(row["cost_usd"] for row in rows) <= 0.002 + 0.00075


@pytest.mark.slow
def test_kill_9_mid_batch_then_resume_pays_no_completed_call_again(
    workspace: Path, server: LLMServer
) -> None:
    gate = threading.Event()

    def answer(body: dict[str, Any]) -> str:
        text = content(body)
        if text == "Second 3":
            gate.wait(scaled(60))  # row 3 stays mid-way (its first call done) until the batch is killed
        return "<output>" + text.replace(" ", "-") + "</output>"

    server.answer = answer
    write(workspace / "p.sexp", TWO_STEPS)
    jsonl(workspace / "in.jsonl", [{"x": i} for i in range(6)])
    command = ["batch", "p.sexp", "--data", "in.jsonl", "--concurrency", "2"]
    env = server_env(server)
    process = spawn_sexp(
        *command, cwd=workspace, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=False
    )
    try:

        def ready() -> bool:  # every other row done, row 3's second call waiting at the server
            if "Second 3" not in [content(r.body) for r in list(server.requests)]:
                return False
            try:
                return store_rows(workspace, "SELECT COUNT(*) FROM batch_rows WHERE status = 'ok'")[0][0] == 5
            except sqlite3.OperationalError:  # the tables are being made
                return False

        wait_for(ready, 60, "the batch never reached row 3's second call with the other rows done")
        process.send_signal(signal.SIGKILL)
        process.wait(scaled(30))
    finally:
        gate.set()
        if process.poll() is None:
            process.kill()
    sent_before = [content(r.body) for r in server.requests]
    assert len(sent_before) == 12 and sent_before.count("First 3") == 1
    ident = batch_id(process.stderr.read().decode() if process.stderr else "")
    written = (workspace / "p.results.jsonl").read_text().splitlines()
    assert [json.loads(line)["index"] for line in written] == [0, 1, 2]  # a readable prefix
    [(mid_run,)] = store_rows(workspace, 'SELECT run_id FROM batch_rows WHERE "index" = 3')

    resuming = ("batch", "p.sexp", "--resume", ident)
    status, _, resumed_err = run_cli(*resuming, cwd=workspace, env=env, run_lines=True)
    assert status == 0, resumed_err
    assert [content(r.body) for r in server.requests[12:]] == ["Second 3"]  # nothing completed is sent again
    rows = results(workspace / "p.results.jsonl")
    assert [row["index"] for row in rows] == list(range(6))
    assert [row["value"] for row in rows] == [[f"First-{i}", f"Second-{i}"] for i in range(6)]
    assert rows[3]["run_id"] == mid_run and rows[3]["tokens"] == 30
    assert SUMMARY.search(resumed_err).groups()[1:3] == ("6", "6")  # type: ignore[union-attr]


@pytest.mark.slow
def test_ctrl_c_stops_the_batch_marks_it_interrupted_and_says_how_to_resume(
    workspace: Path, server: LLMServer
) -> None:
    gate = threading.Event()

    def answer(body: dict[str, Any]) -> str:
        if content(body) == "First 1":
            gate.wait(scaled(60))  # row 1 waits at the server until the batch is interrupted
        return "<output>" + content(body).replace(" ", "-") + "</output>"

    server.answer = answer
    write(workspace / "p.sexp", TWO_STEPS)
    jsonl(workspace / "in.jsonl", [{"x": i} for i in range(3)])
    env = server_env(server)
    command = ("batch", "p.sexp", "--data", "in.jsonl", "--concurrency", "2")
    process = spawn_sexp(*command, cwd=workspace, env=env, stderr=subprocess.PIPE)
    try:
        wait_for(
            lambda: "First 1" in [content(r.body) for r in list(server.requests)], 60, "row 1 never called"
        )
        ident = wait_for(lambda: store_batch_id(workspace), 30, "the batch was never recorded")
        out = workspace / "p.results.jsonl"
        written = wait_for(
            lambda: out.is_file() and out.read_bytes(), 60, "row 0 was never written"
        )  # then row 1 holds OUT
        # while it runs, the batch cannot be resumed by another process
        again = run_cli("batch", "p.sexp", "--resume", ident, cwd=workspace, env=env, run_lines=True)
        assert (again[0], again[2]) == (
            2,
            f"error: batch {ident} is in use by another sexp process\n",
        )
        assert out.read_bytes() == written
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=scaled(30))
    finally:
        gate.set()
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130 and batch_id(err) == ident
    assert f"resume with: sexp batch p.sexp --resume {ident}\n" in err and err.endswith("interrupted\n")
    listing = run_cli("runs", cwd=workspace, env=env)[1]
    assert listing.startswith(f"batch {ident}  ") and "interrupted" in listing.splitlines()[0]
    status, _, resumed_err = run_cli("batch", "p.sexp", "--resume", ident, cwd=workspace, env=env)
    assert status == 0, resumed_err
    assert [row["value"][0] for row in results(workspace / "p.results.jsonl")] == [
        "First-0",
        "First-1",
        "First-2",
    ]


# The Python entry point ----------------------------------------------------------------------------


def test_the_python_entry_point(workspace: Path) -> None:
    write(workspace / "p.sexp", GREET + "(list n (task-content (greet name)))\n")
    write(workspace / "replies.json", json.dumps(["<output>hi</output>"]))
    options: dict[str, Any] = {"model": "mock/m", "mock_responses": "replies.json", "quiet": True}
    rows = sexp_tasks.batch("p.sexp", ({"name": "a", "n": i} for i in range(3)), concurrency=2, **options)
    assert [(row["index"], row["status"], row["value"]) for row in rows] == [
        (i, "ok", [i, "hi"]) for i in range(3)
    ]
    jsonl(workspace / "in.jsonl", [{"name": "b", "n": 7}])
    again = sexp_tasks.batch(
        "p.sexp", "in.jsonl", out="o.jsonl", **options
    )  # a second call: still the function
    assert [row["value"] for row in again] == [[7, "hi"]] and (workspace / "o.jsonl").is_file()
    with pytest.raises(BatchError) as raised:
        sexp_tasks.batch("p.sexp", [{"name": "a"}, ["not", "a", "dict"]], **options)
    assert isinstance(raised.value, SexpError) and raised.value.type == "BATCH_ERROR"
    assert str(raised.value) == "row 1: expected a dict with string keys, got list"
    with pytest.raises(BatchError, match="unknown batch 'nope'"):
        sexp_tasks.batch("p.sexp", None, resume="nope", **options)


def test_sexp_tasks_batch_stays_the_function_once_the_package_s_modules_load() -> None:
    out = run_python(
        "import sexp_tasks.batching.driver, sexp_tasks\n"
        "print(callable(sexp_tasks.batch), callable(sexp_tasks.batch))"
    )
    assert out == "True True\n"
