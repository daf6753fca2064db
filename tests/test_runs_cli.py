"""`sexp runs` and `sexp trace RUN_ID` (SPEC §6, §7, §9), and the trace rendering behind them."""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, scaled, spawn_sexp

from sexp_tasks.runs.store import Store
from sexp_tasks.runs.traces import (
    format_cost,
    format_duration,
    format_trace,
    result_preview,
    step_tree,
    trace_json,
)

GREET = '(defatom greet (params (who str)) (instructions "Say hi to {{who}}"))\n'
RUN_LINE = re.compile(
    r"^(?P<id>[0-9a-f]{12})  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d  (?P<status>\w+) +(?P<steps>\d+) steps?"
    r" +(?P<tokens>\d+) tokens +\$(?P<cost>\d+\.\d+)  +(?P<time>\S+)  (?P<program>.+)$"
)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def make_run(cli: Cli, workspace: Path, program: str, *flags: str, name: str = "p.sexp") -> str:
    """Run program with mock models; the new run's id (the newest in `sexp runs --json`)."""
    write(workspace / name, program)
    cli("run", "--model", "mock/x", *flags, name)
    store = [flags[i + 1] for i, f in enumerate(flags) if f == "--store"]
    _, out, _ = cli("runs", "--json", *(["--store", store[0]] if store else []))
    return str(json.loads(out)[0]["id"])


def test_no_store_yet_lists_nothing_and_knows_no_run(cli: Cli, workspace: Path) -> None:
    assert cli("runs") == (0, "", "")
    assert cli("runs", "--json") == (0, "[]\n", "")
    assert cli("trace", "abc123") == (1, "", "error: unknown run 'abc123'\n")
    assert cli("trace", "abc123", "--json") == (1, "", "error: unknown run 'abc123'\n")
    assert not (workspace / ".sexp").exists()  # looking creates no store


@pytest.mark.slow
def test_runs_lists_one_run_a_line_id_first_newest_first(cli: Cli, workspace: Path) -> None:
    first = make_run(cli, workspace, GREET + '(greet "a")\n(greet "b")\n')
    write(workspace / "plain.sexp", "(+ 1 2)\n")
    cli("run", "plain.sexp")
    write(workspace / "boom.sexp", GREET + '(greet "c")\n(error "boom")\n')
    cli("run", "--model", "mock/x", "boom.sexp")
    status, out, err = cli("runs")
    assert status == 0 and err == ""
    lines = [RUN_LINE.match(line) for line in out.splitlines()]
    assert all(lines), out
    parsed = [m.groupdict() for m in lines if m]
    assert [(p["program"], p["status"], p["steps"]) for p in parsed] == [
        ("boom.sexp", "failed", "1"),
        ("plain.sexp", "completed", "0"),
        ("p.sexp", "completed", "2"),
    ]
    assert parsed[2]["id"] == first and int(parsed[2]["tokens"]) > 0
    assert parsed[1]["tokens"] == "0" and parsed[1]["time"].endswith("s")
    assert cli("runs", "--limit", "1")[1].splitlines() == out.splitlines()[:1]


@pytest.mark.slow
def test_runs_json(cli: Cli, workspace: Path) -> None:
    run_id = make_run(cli, workspace, GREET + '(greet "a")\n')
    [run] = json.loads(cli("runs", "--json")[1])
    assert run["id"] == run_id and run["program"] == "p.sexp" and run["status"] == "completed"
    assert run["steps"] == 1 and run["tokens"] > 0 and run["cost_usd"] == 0.0
    assert run["ended_at"] >= run["started_at"] and run["duration_s"] >= 0


@pytest.mark.slow
def test_trace_shows_the_tree_of_steps(cli: Cli, workspace: Path) -> None:
    run_id = make_run(cli, workspace, GREET + '(define (hi) (greet "bob"))\n(hi)\n(hi)\n')
    status, out, err = cli("trace", run_id)
    assert status == 0 and err == ""
    header, *steps = out.splitlines()
    assert header.startswith(f"run {run_id}  ") and "completed" in header and "2 steps" in header
    assert header.endswith("p.sexp")
    assert len(steps) == 2 and steps[0].startswith("├─ ") and steps[1].startswith("└─ ")
    for n, line in enumerate(steps, start=1):
        assert "task greet  COMPLETE  " in line
        assert re.search(r"  \d+ tokens \(\d+ in, \d+ out\)  \$0\.00  [0-9.hm]+s?  ", line), line
        assert f"p.sexp:2:14#{n}" in line
        assert line.endswith(f'"mock response {n} for greet"')


@pytest.mark.slow
def test_trace_json_nests_steps_and_carries_no_whole_results(cli: Cli, workspace: Path) -> None:
    long_reply = "word " * 400
    write(workspace / "replies.json", json.dumps([long_reply]))
    run_id = make_run(cli, workspace, GREET + '(greet "a")\n', "--mock-responses", "replies.json")
    status, out, _ = cli("trace", run_id, "--json")
    assert status == 0
    data = json.loads(out)
    assert data["run"]["id"] == run_id and data["run"]["steps"] == 1
    [step] = data["steps"]
    assert step["kind"] == "task" and step["name"] == "greet" and step["status"] == "COMPLETE"
    assert step["children"] == [] and step["tokens"] == step["prompt_tokens"] + step["completion_tokens"]
    assert step["key"] == "p.sexp:2:1#1" and step["duration_s"] >= 0
    assert len(step["preview"]) <= 62 and step["preview"].endswith('…"')
    # the whole text only as the model's raw answer (SPEC §10.3), not as a stored result besides
    assert "result" not in step and out.count(long_reply.strip()) == 1 and step["answer"] == long_reply


@pytest.mark.slow
def test_a_failed_step_shows_its_error(cli: Cli, workspace: Path) -> None:
    write(workspace / "replies.json", json.dumps(["   "]))  # an empty answer is INVALID_OUTPUT
    run_id = make_run(cli, workspace, GREET + '(greet "a")\n', "--mock-responses", "replies.json")
    header, line = cli("trace", run_id)[1].splitlines()
    assert "failed" in header
    assert "task greet  FAILED  " in line and "INVALID_OUTPUT" in line


def test_calls_refused_before_any_step_leave_a_run_without_steps(cli: Cli, workspace: Path) -> None:
    run_id = make_run(cli, workspace, GREET + "(greet (list 1 2))\n")  # input validation fails first
    header, line = cli("trace", run_id)[1].splitlines()
    assert "failed" in header and "0 steps" in header
    assert line == "(no steps: the run called no task)"


@pytest.mark.slow
def test_store_flag_for_runs_and_trace(cli: Cli, workspace: Path) -> None:
    run_id = make_run(cli, workspace, GREET + '(greet "a")\n', "--store", "elsewhere/s.db")
    assert not (workspace / ".sexp").exists()
    assert cli("runs")[1] == ""
    assert cli("runs", "--store", "elsewhere/s.db")[1].startswith(run_id)
    assert cli("trace", run_id)[0] == 1
    assert cli("trace", run_id, "--store", "elsewhere/s.db")[0] == 0


def test_unknown_run_with_a_store(cli: Cli, workspace: Path) -> None:
    make_run(cli, workspace, "(+ 1 2)\n")
    assert cli("trace", "0123456789ab") == (1, "", "error: unknown run '0123456789ab'\n")


def test_a_corrupt_store_is_a_clear_error(cli: Cli, workspace: Path) -> None:
    (workspace / ".sexp").mkdir()
    write(workspace / ".sexp" / "store.db", "not a database " * 200)
    for args in (("runs",), ("trace", "x")):
        status, out, err = cli(*args)
        assert status == 1 and out == ""
        assert "corrupt or not a sexp store" in err and "Traceback" not in err


def statuses(cli: Cli) -> list[str]:
    return [run["status"] for run in json.loads(cli("runs", "--json")[1])]


def test_a_run_killed_with_kill_9_shows_interrupted_once_no_process_holds_it(
    cli: Cli, workspace: Path
) -> None:
    # the script outlasts the test (it ends with the killed run: PDEATHSIG)
    write(workspace / "p.sexp", '(system:run_script (command "sleep 300"))\n')
    process = spawn_sexp("run", "p.sexp", cwd=workspace, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + scaled(60)
        while statuses(cli) != ["running"]:  # a live run is shown running
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=scaled(30))
    finally:
        process.kill()
    assert statuses(cli) == ["interrupted"]
    [line] = cli("runs")[1].splitlines()
    match = RUN_LINE.match(line)
    assert match and match["status"] == "interrupted"
    header = cli("trace", match["id"])[1].splitlines()[0]
    assert "interrupted" in header and "running" not in header
    assert json.loads(cli("trace", match["id"], "--json")[1])["run"]["status"] == "interrupted"


def test_garbage_in_the_store_is_shown_marked_never_a_crash(cli: Cli, workspace: Path) -> None:
    run_id = make_run(cli, workspace, GREET + '(greet "a")\n(greet "b")\n(greet "c")\n')
    db = sqlite3.connect(workspace / ".sexp" / "store.db")
    db.execute("UPDATE runs SET started_at = 'garbage', ended_at = x'ff'")
    tasks = db.execute("SELECT key FROM steps WHERE kind = 'task' ORDER BY seq")
    first, second, third = [key for (key,) in tasks]
    bad = {"result": "{not json", "cost_usd": "lots", "prompt_tokens": "many", "started_at": "then"}
    db.execute(
        "UPDATE steps SET result = ?, cost_usd = ?, prompt_tokens = ?, started_at = ? WHERE key = ?",
        (*bad.values(), first),
    )
    odd = json.dumps({"content": 5, "error": {"type": [1], "reason": {"r": 2}, "message": None}})
    db.execute("UPDATE steps SET result = ?, seq = 'second' WHERE key = ?", (odd, second))
    db.execute("UPDATE steps SET result = '[1, 2]', completion_tokens = -3.5 WHERE key = ?", (third,))
    db.commit()
    db.close()
    for args in (("runs",), ("runs", "--json"), ("trace", run_id), ("trace", run_id, "--json")):
        status, out, err = cli(*args)
        assert (status, err) == (0, ""), err
        assert run_id in out
    line = cli("runs")[1]
    assert line.startswith(f"{run_id}  ?  completed") and "p.sexp" in line
    [run] = json.loads(cli("runs", "--json")[1])
    assert run["started_at"] is None and run["ended_at"] is None and run["duration_s"] is None
    assert run["invalid"] == ["started_at", "ended_at"]
    header, *steps = cli("trace", run_id)[1].splitlines()
    assert header.startswith(f"run {run_id}  ?  completed") and len(steps) == 3
    by_key = {next(k for k in (first, second, third) if k in line): line for line in steps}
    assert "(unreadable result)" in by_key[first] and "? tokens (? in" in by_key[first]
    assert "  $?  " in by_key[first]
    assert "TASK_FAILURE" not in by_key[second] and "task greet  COMPLETE" in by_key[second]
    data = json.loads(cli("trace", run_id, "--json")[1])
    step_data = {step["key"]: step for step in data["steps"]}
    assert step_data[first]["invalid"] == ["prompt_tokens", "cost_usd", "started_at", "result"]
    assert step_data[first]["preview"] == "(unreadable result)" and step_data[first]["cost_usd"] is None
    assert step_data[second]["invalid"] == ["seq"] and step_data[second]["seq"] is None
    assert step_data[third]["invalid"] == ["completion_tokens"]


def test_resume_runs_again_a_step_whose_stored_result_is_garbage(cli: Cli, workspace: Path) -> None:
    run_id = make_run(cli, workspace, GREET + '(list (greet "a") (greet "b"))\n')
    db = sqlite3.connect(workspace / ".sexp" / "store.db")
    [(first,)] = db.execute("SELECT key FROM steps WHERE kind = 'task' ORDER BY seq LIMIT 1")
    db.execute("UPDATE steps SET result = '{not json' WHERE key = ?", (first,))
    db.commit()
    db.close()
    status, out, err = cli("run", "--model", "mock/x", "p.sexp", "--resume", run_id)
    assert (status, err) == (0, ""), err
    assert out.startswith("(#<TaskResult COMPLETE") and out.count("COMPLETE") == 2


def test_usage_errors(cli: Cli) -> None:
    assert cli("trace")[0] == 2
    assert cli("runs", "--limit", "many")[0] == 2


# Rendering, on rows made by hand -------------------------------------------------------------
def step(key: str, seq: int, parent: str | None = None, **extra: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "key": key,
        "seq": seq,
        "parent": parent,
        "kind": "task",
        "name": key.split("#")[0],
        "status": "COMPLETE",
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "cost_usd": 0.001,
        "started_at": 100.0 + seq,
        "ended_at": 100.5 + seq,
        "result": json.dumps({"content": f"answer {seq}", "error": None}),
    }
    row.update(extra)
    return row


RUN = {"id": "0123456789ab", "program": "p.sexp", "status": "completed"}
RUN.update(started_at=100.0, ended_at=110.0)


def test_steps_nest_under_their_parents_in_order() -> None:
    rows = [
        step("outer#1", 1),
        step("tool#1", 2, parent="outer#1", kind="tool"),
        step("sub#1", 3, parent="outer#1", kind="subtask"),
        step("deep#1", 4, parent="sub#1", kind="tool"),
        step("next#1", 5),
    ]
    lines = format_trace(RUN, list(reversed(rows))).splitlines()
    assert lines[0].startswith("run 0123456789ab") and "5 steps" in lines[0] and "75 tokens" in lines[0]
    assert " $0.005 " in lines[0] and "10.0s" in lines[0]
    assert [line.split("  COMPLETE")[0] for line in lines[1:]] == [
        "├─ task outer",
        "│  ├─ tool tool",
        "│  └─ subtask sub",
        "│     └─ tool deep",
        "└─ task next",
    ]
    assert lines[1].endswith('"answer 1"')
    data = trace_json(RUN, rows)
    assert [s["key"] for s in data["steps"]] == ["outer#1", "next#1"]
    assert [c["key"] for c in data["steps"][0]["children"]] == ["tool#1", "sub#1"]
    assert data["steps"][0]["children"][1]["children"][0]["key"] == "deep#1"
    ascii_lines = format_trace(RUN, rows, unicode=False).splitlines()
    assert [line.split("  COMPLETE")[0] for line in ascii_lines[1:3]] == ["|- task outer", "|  |- tool tool"]


def test_orphans_and_cycles_still_show_every_step_once() -> None:
    rows = [
        step("a#1", 1, parent="b#1"),
        step("b#1", 2, parent="a#1"),
        step("self#1", 3, parent="self#1"),
        step("orphan#1", 4, parent="gone#1"),
    ]
    forest = step_tree(rows)
    seen: list[str] = []
    stack = list(forest)
    while stack:
        node = stack.pop()
        seen.append(node.row["key"])
        stack.extend(node.children)
    assert sorted(seen) == ["a#1", "b#1", "orphan#1", "self#1"]


@pytest.mark.slow
def test_a_deep_chain_of_steps_renders_without_recursion() -> None:
    rows = [step("s0#1", 0)] + [step(f"s{i}#1", i, parent=f"s{i - 1}#1") for i in range(1, 5000)]
    assert len(format_trace(RUN, rows).splitlines()) == 5001
    assert len(json.dumps(trace_json(RUN, rows[:50]))) > 0


def test_unfinished_steps_and_runs() -> None:
    running = dict(RUN, status="running", ended_at=None)
    rows = [step("a#1", 1, status="started", ended_at=None, result=None)]
    lines = format_trace(running, rows).splitlines()
    assert "running" in lines[0] and "  -  " in lines[0]
    assert "task a  started  15 tokens" in lines[1] and "  -  " in lines[1]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(None, "-"), (0.4123, "0.41s"), (12.34, "12.3s"), (184, "3m04s"), (3725, "1h02m")],
)
def test_durations(seconds: float | None, text: str) -> None:
    assert format_duration(seconds) == text


@pytest.mark.parametrize(
    ("usd", "text"),
    [
        (None, "$0.00"),
        (0.0, "$0.00"),
        (6.5e-05, "$0.000065"),  # spent, then its budget: they were both `$0.0001`
        (5e-05, "$0.00005"),
        (0.005, "$0.005"),
        (0.0123456, "$0.01235"),
        (0.99999, "$1.00"),
        (1.23456, "$1.235"),
        (1234.5, "$1234.50"),
    ],
)
def test_costs_keep_four_significant_digits(usd: float | None, text: str) -> None:
    assert format_cost(usd) == text


def test_result_previews() -> None:
    assert result_preview(None) == ""
    assert result_preview("not json") == "(unreadable result)"
    assert result_preview(json.dumps({"content": "line one\nline two"})) == '"line one line two"'
    failed = {"content": "", "error": {"type": "TASK_FAILURE", "reason": "timeout", "message": "too slow"}}
    assert result_preview(json.dumps(failed)) == "TASK_FAILURE timeout: too slow"
    assert len(result_preview(json.dumps({"content": "x" * 5000}))) == 62


def test_trace_reads_what_a_store_holds(workspace: Path) -> None:
    store = Store(workspace / "s.db")
    store.begin_run("r1", "p.sexp", "hash", {})
    store.step_started("r1", "p.sexp:1:1#1", 1, None, "task", "t", "fp")
    store.step_started("r1", "p.sexp:1:9#1", 2, "p.sexp:1:1#1", "tool", "read_file", "fp2")
    store.end_run("r1", "completed")
    run, rows = store.run("r1"), store.steps("r1")
    store.close()
    assert run is not None
    lines = format_trace(run, rows).splitlines()
    assert lines[1].startswith("└─ task t  started") and lines[2].startswith("   └─ tool read_file  started")
