"""Recorded runs: `sexp run` journals every task step in the SQLite store (SPEC §6)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest
from conftest import Cli, run_cli

GREET = '(defatom greet (params (who str)) (instructions "Say hi to {{who}}") (model "mock/x"))\n'


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def cli(sexp_in_process: Cli) -> Cli:
    """The commands of this file run in the test process: they are about what a run records
    (raw_run runs the real command, for the lines it writes)."""
    return sexp_in_process


def raw_run(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real `sexp run` with stderr untouched (the cli fixture takes the run line out)."""
    status, out, err = run_cli("run", *args, cwd=workspace, run_lines=True)
    return subprocess.CompletedProcess(["sexp", "run", *args], status, out, err)


def rows(workspace: Path, sql: str, store: str = ".sexp/store.db") -> list[sqlite3.Row]:
    db = sqlite3.connect(workspace / store)
    db.row_factory = sqlite3.Row
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def test_a_run_prints_its_id_and_records_itself(workspace: Path) -> None:
    write(workspace / "p.sexp", "(+ 1 2)\n")
    done = raw_run(workspace, "p.sexp")
    assert done.returncode == 0 and done.stdout == "3\n"
    assert done.stderr.startswith("run: ")
    run_id = done.stderr.split()[1]
    [run] = rows(workspace, "SELECT * FROM runs")
    assert (run["id"], run["program"], run["status"]) == (run_id, "p.sexp", "completed")
    assert len(run["program_hash"]) == 64 and run["ended_at"] >= run["started_at"]


def test_quiet_runs_are_recorded_without_the_run_line(workspace: Path) -> None:
    write(workspace / "p.sexp", "(+ 1 2)\n")
    done = raw_run(workspace, "-q", "p.sexp")
    assert done.stderr == ""
    assert len(rows(workspace, "SELECT * FROM runs")) == 1


@pytest.mark.slow
def test_every_task_call_is_a_step_keyed_by_call_site_and_occurrence(cli: Cli, workspace: Path) -> None:
    write(workspace / "p.sexp", GREET + '(define (hello) (greet "bob"))\n(hello)\n(task-content (hello))\n')
    assert cli("run", "p.sexp") == (0, '"mock response 2 for greet"\n', "")
    steps = rows(workspace, "SELECT * FROM steps WHERE kind = 'task' ORDER BY seq")
    assert [s["key"] for s in steps] == ["p.sexp:2:17#1", "p.sexp:2:17#2"]
    assert {(s["kind"], s["name"], s["status"]) for s in steps} == {("task", "greet", "COMPLETE")}
    result = json.loads(steps[1]["result"])
    assert result["content"] == "mock response 2 for greet"
    assert steps[0]["prompt_tokens"] > 0 and steps[0]["completion_tokens"] > 0
    assert steps[0]["fingerprint"] == steps[1]["fingerprint"]  # same request twice


@pytest.mark.slow
def test_a_changed_input_changes_the_request_fingerprint(cli: Cli, workspace: Path) -> None:
    write(workspace / "p.sexp", GREET + '(greet "bob")\n(greet "ann")\n')
    cli("run", "p.sexp")
    first, second = rows(workspace, "SELECT fingerprint FROM steps WHERE kind = 'task' ORDER BY seq")
    assert first[0] != second[0]


def test_a_lone_surrogate_in_a_task_input_is_fingerprinted(cli: Cli, workspace: Path) -> None:
    # json-parse makes the lone surrogate (the reader refuses one spelled in a string)
    write(workspace / "p.sexp", GREET + '(task-content (greet (json-parse "\\"\\\\ud83d\\"")))\n')
    assert cli("run", "p.sexp") == (0, '"mock response 1 for greet"\n', "")
    [step] = rows(workspace, "SELECT * FROM steps WHERE kind = 'task'")
    assert step["status"] == "COMPLETE" and len(step["fingerprint"]) == 32


def test_a_lone_surrogate_in_an_answer_is_replaced_before_it_is_kept(cli: Cli, workspace: Path) -> None:
    write(workspace / "replies.json", json.dumps(["<output>half \ud83d a pair</output>"]))
    write(workspace / "p.sexp", GREET + '(greet "bob")\n')
    code, out, err = cli("run", "p.sexp", "--json", "--mock-responses", "replies.json")
    assert (code, err) == (0, "") and json.loads(out)["content"] == "half \ufffd a pair"
    [run] = rows(workspace, "SELECT id FROM runs")
    code, out, err = cli("trace", run["id"], "--json")
    assert (code, err) == (0, "") and "half \ufffd a pair" in json.loads(out)["steps"][0]["preview"]


def test_a_failed_final_value_and_a_raised_error_mark_the_run_failed(cli: Cli, workspace: Path) -> None:
    write(workspace / "bad.sexp", GREET + "(greet)\n")
    assert cli("run", "bad.sexp")[0] == 1
    write(workspace / "boom.sexp", '(error "boom")\n')
    assert cli("run", "boom.sexp")[0] == 1
    statuses = [r["status"] for r in rows(workspace, "SELECT status FROM runs ORDER BY started_at")]
    assert statuses == ["failed", "failed"]


def test_a_program_that_does_not_read_or_compile_is_not_a_run(cli: Cli, workspace: Path) -> None:
    write(workspace / "syntax.sexp", "(+ 1\n")
    write(workspace / "form.sexp", "(if)\n")
    assert cli("run", "syntax.sexp")[0] == 2
    assert cli("run", "form.sexp")[0] == 1
    assert not (workspace / ".sexp").exists()


@pytest.mark.slow
def test_store_flag_puts_the_store_elsewhere(cli: Cli, workspace: Path) -> None:
    write(workspace / "p.sexp", GREET + '(greet "x")\n')
    assert cli("run", "--store", "runs/my.db", "p.sexp")[0] == 0
    assert len(rows(workspace, "SELECT * FROM steps WHERE kind = 'task'", store="runs/my.db")) == 1
    assert not (workspace / ".sexp").exists()


def test_a_corrupt_store_is_a_clear_error_not_a_traceback(cli: Cli, workspace: Path) -> None:
    (workspace / ".sexp").mkdir()
    write(workspace / ".sexp" / "store.db", "this is not a database, just text " * 100)
    write(workspace / "p.sexp", "(+ 1 2)\n")
    status, out, err = cli("run", "p.sexp")
    assert status == 1 and out == ""
    assert "corrupt or not a sexp store" in err and "Traceback" not in err


def test_eval_records_nothing(cli: Cli, workspace: Path) -> None:
    assert cli("eval", "(+ 1 2)") == (0, "3\n", "")
    assert not (workspace / ".sexp").exists()


@pytest.mark.slow
def test_recorded_success_scores_raise_a_template_in_matching(cli: Cli, workspace: Path) -> None:
    tasks = workspace / "tasks"
    tasks.mkdir()
    for name in ("summarize_text", "summarize_code"):
        write(
            tasks / f"{name}.xml",
            f'<task name="{name}" type="atomic"><description>summarize things</description>'
            "<instructions>Summarize.</instructions></task>",
        )
    _, before, _ = cli("tasks", "match", "summarize")
    assert [line.split()[1] for line in before.splitlines()] == ["summarize_code", "summarize_text"]
    reply = "<output>ok</output><notes><successScore>1.0</successScore></notes>"
    write(workspace / "replies.json", json.dumps([reply]))
    write(workspace / "p.sexp", "(summarize_text)\n")
    assert cli("run", "--model", "mock/m", "--mock-responses", "replies.json", "p.sexp")[0] == 0
    scores = rows(workspace, "SELECT success_score FROM steps WHERE kind = 'task'")
    assert [r["success_score"] for r in scores] == [1.0]
    _, after, _ = cli("tasks", "match", "summarize")
    assert [line.split()[1] for line in after.splitlines()] == ["summarize_text", "summarize_code"]
    _, partial, _ = cli("tasks", "match", "summarize stuff")  # a partial match has room to rise
    assert [line.split()[:2] for line in partial.splitlines()] == [
        ["0.81", "summarize_text"],
        ["0.75", "summarize_code"],
    ]
    assert cli("eval", '(get (car (match-tasks "summarize")) "name")') == (0, '"summarize_text"\n', "")


def test_matching_without_a_store_creates_none(cli: Cli, workspace: Path) -> None:
    assert cli("tasks", "match", "anything")[0] == 0
    assert not (workspace / ".sexp").exists()


@pytest.mark.slow
def test_a_locked_store_is_a_clear_error(cli: Cli, workspace: Path) -> None:
    write(workspace / "p.sexp", "(+ 1 2)\n")
    assert cli("run", "p.sexp")[0] == 0  # the store exists
    holder = sqlite3.connect(workspace / ".sexp" / "store.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        status, out, err = cli("run", "p.sexp")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert status == 1 and out == ""
    assert "is locked by another process" in err and "Traceback" not in err
    assert [r["status"] for r in rows(workspace, "SELECT status FROM runs")] == ["completed"]
