"""Records written by an older sexp still read (issue 20: "old stores and cassettes still read").

tests/fixtures/main_9e304f8 holds a run store and a cassette that sexp wrote at commit 9e304f8,
before the request path was rebuilt (its README says what each file holds and how it was made).
Each test copies the folder to its own directory and runs the `sexp` of the checkout under test
there, as a real process, against the local OpenAI-compatible server that counts every request:
what the old store says is listed and traced, its failed run resumes sending only what had not
been answered, its completed run is reused, and the old cassette answers every call. (The
README's own old cassette, examples/release_review.cassette.jsonl, is replayed by
tests/test_examples.py.)
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import sqlite3
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import CliResult, run_cli
from llm_server import LLMServer

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "main_9e304f8"


def _made_with() -> ModuleType:
    """The fixture's make_fixtures.py, for the replies the server gave when the fixtures were made."""
    spec = importlib.util.spec_from_file_location("main_9e304f8_make_fixtures", FIXTURE / "make_fixtures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MADE = _made_with()
RECORD: dict[str, Any] = json.loads((FIXTURE / "fixture.json").read_text(encoding="utf-8"))
RUNS = RECORD["runs"]
RUN1 = RUNS["completed"]["run_id"]  # completed: 5 requests
RUN2 = RUNS["failed"]["run_id"]  # failed at read-notes' second turn: 4 requests, the last one refused
OUTPUT = RUNS["completed"]["stdout"]
PROGRAM = "review.sexp"
STORE = ("--store", "store.sqlite")
TOOL_TASK = "Read the file notes.txt with the read_file tool"


@pytest.fixture
def program(workspace: Path) -> Path:
    """A copy of the fixture folder (the program, its tasks/, notes.txt, the store, the cassette),
    notes.txt given the mtime the recorded read_file step saw (git keeps no mtimes)."""
    ignore = shutil.ignore_patterns("make_fixtures.py", "README.md", "fixture.json", "__pycache__")
    copy = Path(shutil.copytree(FIXTURE, workspace / "old", ignore=ignore))
    mtime = RECORD["notes_mtime_ns"]
    os.utime(copy / "notes.txt", ns=(mtime, mtime))
    return copy


def sexp(program: Path, server: LLMServer, *args: str, run_lines: bool = False) -> CliResult:
    """`sexp ARGS` in the copy, the local server as api_base, with a fake key."""
    env = {"SEXP_API_BASE": server.base_url, "OPENAI_API_KEY": MADE.FAKE_KEY}
    return run_cli(*args, cwd=program, env=env, run_lines=run_lines, timeout=120)


def user_text(body: dict[str, Any]) -> str:
    """The request's first user message (the task's instructions)."""
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def tool_steps(program: Path, run_id: str) -> list[tuple[Any, ...]]:
    """The run's tool steps as the store holds them (sequence number, when it started)."""
    db = sqlite3.connect(program / "store.sqlite")
    try:
        return db.execute(
            "SELECT seq, started_at FROM steps WHERE run_id = ? AND kind = 'tool' ORDER BY seq", (run_id,)
        ).fetchall()
    finally:
        db.close()


@pytest.mark.slow
def test_the_old_store_lists_and_traces_its_runs(program: Path, server: LLMServer) -> None:
    status, out, err = sexp(program, server, "runs", *STORE)
    assert (status, err) == (0, "")
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert " completed " in lines[RUN1] and lines[RUN1].endswith(PROGRAM)
    assert " failed " in lines[RUN2] and lines[RUN2].endswith(PROGRAM)

    status, out, err = sexp(program, server, "trace", RUN1, *STORE)
    assert (status, err) == (0, "")
    assert out.startswith(f"run {RUN1}  ")
    for task, answer in [
        ("summarize", "Every run is recorded in a store and can be resumed."),
        ("extract-facts", '{\\"facts\\": [\\"every run is recorded in a store\\"'),
        ("read-notes", "buy milk"),
        ("write-verdict", "Ship it, and buy milk."),
    ]:
        line = next(line for line in out.splitlines() if f"task {task}  " in line)
        assert "COMPLETE" in line and answer in line, line
    assert re.search(r"tool read_file  COMPLETE .*\"remember the milk\"", out)

    status, out, err = sexp(program, server, "trace", RUN2, "--full", *STORE)
    assert (status, err) == (0, "")
    assert re.search(r"task read-notes  FAILED .*TASK_FAILURE bad_request", out)
    assert "task write-verdict" not in out  # the run stopped at read-notes
    for shown in [
        'generation: temperature=0.2, max_tokens=200, seed=7, stop=["END"]',  # the text task's settings
        'response_format: {"type": "json_schema", "json_schema": {"name": "extract-facts"',
        "sexp-tasks records every run in a store and can resume it.",  # summarize's request
        '{"facts": ["every run is recorded in a store", "a run can be resumed"]}',  # extract-facts' answer
        "request (turn 1 of 2)",
        '-> read_file({"path": "notes.txt"})',  # turn 1's answer
        "request (turn 2 of 2)",
        "remember the milk",  # the tool's answer, in turn 2's request
        "the second turn is refused",  # turn 2's error
    ]:
        assert shown in out, shown
    assert server.requests == []


@pytest.mark.slow
def test_resuming_the_old_failed_run_sends_only_the_failed_turn_and_what_follows(
    program: Path, server: LLMServer
) -> None:
    tools_before = tool_steps(program, RUN2)
    assert len(tools_before) == 1
    server.script(MADE.NOTES, MADE.VERDICT)
    status, out, err = sexp(program, server, "run", PROGRAM, "--resume", RUN2, *STORE)
    assert (status, out, err) == (0, OUTPUT, "")

    # read-notes' second turn, then write-verdict: not summarize, extract-facts, nor read-notes' first turn
    sent = [request.body for request in server.requests]
    assert len(sent) == 2, [user_text(body) for body in sent]
    failed_turn = RUNS["failed"]["requests"][3]  # as the old code sent it, and the server refused it
    assert TOOL_TASK in user_text(sent[0]) and sent[0]["messages"][-1]["role"] == "tool"
    assert sent[0]["messages"] == failed_turn["messages"] and sent[0]["tools"] == failed_turn["tools"]
    verdict = RUNS["completed"]["requests"][4]
    assert user_text(sent[1]).startswith("Write a one-line verdict") and "buy milk" in user_text(sent[1])
    assert sent[1]["messages"] == verdict["messages"] and "tools" not in sent[1]
    assert tool_steps(program, RUN2) == tools_before  # the recorded read_file step was not run again

    # the store, upgraded or not, still shows both old runs, the resumed one completed now
    db = sqlite3.connect(program / "store.sqlite")
    try:
        assert db.execute("PRAGMA user_version").fetchone()[0] >= 1
    finally:
        db.close()
    status, out, err = sexp(program, server, "runs", *STORE)
    assert (status, err) == (0, "")
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert " completed " in lines[RUN1] and " completed " in lines[RUN2]
    status, out, err = sexp(program, server, "trace", RUN1, *STORE)
    assert (status, err) == (0, "") and "task write-verdict  COMPLETE" in out
    assert len(server.requests) == 2


@pytest.mark.slow
def test_resuming_the_old_completed_run_sends_nothing(program: Path, server: LLMServer) -> None:
    status, out, err = sexp(program, server, "run", PROGRAM, "--resume", RUN1, *STORE)
    assert (status, out, err) == (0, OUTPUT, "")
    assert server.requests == []


@pytest.mark.slow
def test_the_old_cassette_answers_every_call_without_a_request(program: Path, server: LLMServer) -> None:
    status, out, err = sexp(program, server, "run", PROGRAM, "--replay", "cassette.jsonl")
    assert (status, out, err) == (0, OUTPUT, "")
    assert out == RUNS["recorded"]["stdout"]
    assert server.requests == []


@pytest.mark.slow
def test_reusing_the_old_completed_run_sends_only_what_an_edit_changed(
    program: Path, server: LLMServer
) -> None:
    # unedited: every turn is answered from run 1's record (SPEC §11.2)
    status, out, err = sexp(program, server, "run", PROGRAM, "--reuse", RUN1, *STORE, run_lines=True)
    assert (status, out) == (0, OUTPUT), err
    assert server.requests == []
    summary = re.search(r"^run: [0-9a-f]{12} \d+ model calls, .*$", err, re.M)
    if summary is not None:  # none paid: whether the line shows at all is the builder's choice
        assert summary.group(0).endswith(", 5 reused"), err
    reusing = re.search(r"^run: ([0-9a-f]{12})$", err, re.M)
    assert reusing is not None and reusing.group(1) != RUN1  # a new run, run 1 untouched
    status, trace, _ = sexp(program, server, "trace", reusing.group(1), "--full", *STORE)
    assert status == 0 and "reused" in trace

    # summarize's template edited: summarize is sent, and the tasks its value reaches (extract-facts,
    # then write-verdict through the facts); read-notes, which does not take it, is not
    template = program / "tasks" / "summarize.xml"
    template.write_text(
        template.read_text(encoding="utf-8").replace("in one sentence", "in one short sentence"),
        encoding="utf-8",
    )
    server.script(
        MADE.answer("Runs are kept.", "the text"),
        json.dumps({"facts": ["runs are kept"]}),
        MADE.answer("Ship it again.", "the facts and the notes"),
    )
    status, out, err = sexp(program, server, "run", PROGRAM, "--reuse", RUN1, *STORE, run_lines=True)
    assert (status, out) == (0, 'Ship it again.\n{"facts" 1 "verdict" "Ship it again."}\n'), err
    sent = [request.body for request in server.requests]
    assert len(sent) == 3, [user_text(body) for body in sent]
    assert user_text(sent[0]).startswith("Summarize this text in one short sentence:")
    assert user_text(sent[1]) == "List the facts this summary states:\nRuns are kept."
    assert user_text(sent[2]).startswith("Write a one-line verdict") and "runs are kept" in user_text(sent[2])
    assert all("tools" not in body for body in sent)  # read-notes' two turns came from run 1
    assert re.search(r"^run: [0-9a-f]{12} .*, 2 reused$", err, re.M), err
