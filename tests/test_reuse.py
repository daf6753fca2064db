"""`sexp run FILE --reuse RUN_ID` and `Session.run_file(reuse=)` (SPEC §11.2): a new recorded run
whose model turns that ask what a completed turn of RUN_ID asked take that turn's answer, so an
edited program pays only for the requests the edit changed.

Checked against the local server (tests/llm_server.py), which counts the requests it gets and
answers each from its request, so a changed request changes every request downstream of it.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from conftest import Cli, store_rows, write
from llm_server import LLMServer

import sexp_tasks
from sexp_tasks.errors import SettingsError

TEMPLATE = """<task name="{name}" type="atomic">
  <description>{name}</description>
  <instructions>{instructions} {{{{x}}}}</instructions>
  <inputs><input name="x" type="string">the input</input></inputs>
</task>
"""

# Four task calls in a row, each taking the answer before it.
CHAIN = """(define a (task-content (one :x "seed")))
(define b (task-content (two :x a)))
(define c (task-content (three :x b)))
(task-content (four :x c))
"""

SUMMARY = re.compile(r"^run: ([0-9a-f]{12}) (\d+) model calls, \d+ tokens, \$[0-9.]+, [0-9.]+ s(.*)$", re.M)


def answer(body: dict) -> str:
    """The server's answer: a digest of the last message, so each request has its own answer."""
    digest = hashlib.sha256(body["messages"][-1]["content"].encode()).hexdigest()[:10]
    return f"<output>{digest}</output>"


@pytest.fixture
def server(server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> LLMServer:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-reuse")
    monkeypatch.setenv("SEXP_API_BASE", server.base_url)
    monkeypatch.setenv("SEXP_MODEL", "openai/test-model")
    server.answer = answer
    return server


@pytest.fixture
def chain(workspace: Path) -> Path:
    for name, text in [("one", "Begin with"), ("two", "Go on from"), ("three", "Refine"), ("four", "End")]:
        write(workspace / "tasks" / f"{name}.xml", TEMPLATE.format(name=name, instructions=text))
    return write(workspace / "p.sexp", CHAIN)


def run(sexp: Cli, *args: str) -> tuple[str, int, str, str]:
    """`sexp run p.sexp ARGS`: (run id, model calls, the summary line's tail, stdout)."""
    status, out, err = sexp("run", "p.sexp", *args, run_lines=True)
    assert status == 0, err
    found = SUMMARY.search(err)
    assert found, err
    return found.group(1), int(found.group(2)), found.group(3), out


def sent(server: LLMServer) -> list[str]:
    """The last message of each request the server got, in order."""
    return [request.body["messages"][-1]["content"] for request in server.requests]


def test_an_unedited_program_sends_nothing(server: LLMServer, chain: Path, sexp_in_process: Cli) -> None:
    first, calls, tail, out = run(sexp_in_process)
    assert (calls, tail, len(server.requests)) == (4, "", 4)
    second, calls, tail, again = run(sexp_in_process, "--reuse", first)
    assert second != first and again == out
    assert (calls, tail, len(server.requests)) == (4, ", 4 reused", 4)


def test_an_edited_template_sends_exactly_the_calls_downstream_of_it(
    server: LLMServer, chain: Path, workspace: Path, sexp_in_process: Cli
) -> None:
    first, _, _, out = run(sexp_in_process)
    template = workspace / "tasks" / "three.xml"
    template.write_text(template.read_text().replace("Refine", "Polish"))
    _, calls, tail, edited = run(sexp_in_process, "--reuse", first)
    assert (calls, tail) == (4, ", 2 reused")
    new = sent(server)[4:]
    assert len(new) == 2 and new[0].startswith("Polish") and new[1].startswith("End")
    assert edited != out  # the answer the edit changed reached the last call


def test_an_edit_at_the_end_sends_one_call_and_at_the_start_all(
    server: LLMServer, chain: Path, workspace: Path, sexp_in_process: Cli
) -> None:
    first, *_ = run(sexp_in_process)
    (workspace / "p.sexp").write_text(CHAIN.replace("(four :x c)", '(four :x (string-append c "!"))'))
    assert run(sexp_in_process, "--reuse", first)[2] == ", 3 reused"
    assert len(server.requests) == 5
    (workspace / "p.sexp").write_text(CHAIN.replace('"seed"', '"sprout"'))
    assert run(sexp_in_process, "--reuse", first)[2] == ", 0 reused"  # --reuse given: the count shows
    assert len(server.requests) == 9


def test_the_trace_marks_reused_and_paid_turns(
    server: LLMServer, chain: Path, workspace: Path, sexp_in_process: Cli
) -> None:
    first, *_ = run(sexp_in_process)
    template = workspace / "tasks" / "four.xml"
    template.write_text(template.read_text().replace("End", "Finish"))
    second, *_ = run(sexp_in_process, "--reuse", first)
    _, text, _ = sexp_in_process("trace", second)
    lines = text.splitlines()[1:]
    assert [line.endswith("  [reused]") for line in lines] == [True, True, True, False]
    assert lines[3].endswith("  [paid]")  # in a run that reused turns, a paid task says so too
    _, plain, _ = sexp_in_process("trace", first)
    assert "[paid]" not in plain and "[reused]" not in plain  # a run that paid for all needs no mark
    _, full, _ = sexp_in_process("trace", second, "--full")
    assert full.count("answer: reused") == 3 and full.count("answer:\n") == 1
    _, data, _ = sexp_in_process("trace", second, "--json")
    steps = json.loads(data)["steps"]
    assert [step["turns"] for step in steps] == [[{"source": "reused"}]] * 3 + [[{"source": "paid"}]]
    replies = [json.loads(row[0])["notes"]["reply"] for row in turn_results(workspace, second)]
    assert [reply["source"] for reply in replies] == ["reused", "reused", "reused", "paid"]


def turn_results(workspace: Path, run_id: str) -> list[tuple[str]]:
    return store_rows(
        workspace, "SELECT result FROM steps WHERE run_id = ? AND kind = 'turn' ORDER BY seq", run_id
    )


def test_a_request_asked_again_takes_the_answers_in_recorded_order(
    server: LLMServer, workspace: Path, sexp_in_process: Cli
) -> None:
    write(workspace / "tasks" / "one.xml", TEMPLATE.format(name="one", instructions="Say"))
    write(workspace / "p.sexp", '(list (task-content (one :x "a")) (task-content (one :x "a")))\n')
    answers = iter(["<output>first</output>", "<output>second</output>"])
    server.answer = lambda body: next(answers)
    first, _, _, out = run(sexp_in_process)
    assert out.strip() == '("first" "second")'
    write(
        workspace / "p.sexp",
        '(list (task-content (one :x "a")) (task-content (one :x "a")) (task-content (one :x "a")))\n',
    )
    _, calls, tail, again = run(sexp_in_process, "--reuse", first)
    assert again.strip() == '("first" "second" "second")'  # past the recorded ones: the last again
    assert (calls, tail, len(server.requests)) == (3, ", 3 reused", 2)


def test_a_run_of_another_program_answers_the_requests_it_made(
    server: LLMServer, chain: Path, workspace: Path, sexp_in_process: Cli
) -> None:
    first, *_ = run(sexp_in_process)
    write(workspace / "q.sexp", '(task-content (one :x "seed"))\n(task-content (one :x "other"))\n')
    status, _, err = sexp_in_process("run", "q.sexp", "--reuse", first, run_lines=True)
    assert status == 0, err
    assert SUMMARY.search(err).group(3) == ", 1 reused"
    assert sent(server)[4:] == ["Begin with other"]


def test_reuse_with_resume_is_a_usage_error(server: LLMServer, chain: Path, sexp_in_process: Cli) -> None:
    first, *_ = run(sexp_in_process)
    status, _, err = sexp_in_process("run", "p.sexp", "--reuse", first, "--resume", first)
    assert status == 2
    assert (
        err.startswith("usage: sexp run")
        and "error: argument --resume: not allowed with argument --reuse" in err
    )


def test_an_unknown_run_is_an_error_and_records_nothing(
    server: LLMServer, chain: Path, workspace: Path, sexp_in_process: Cli
) -> None:
    run(sexp_in_process)
    status, _, err = sexp_in_process("run", "p.sexp", "--reuse", "0123456789ab")
    assert (status, err) == (1, "error: unknown run '0123456789ab' in .sexp/store.db\n")
    assert store_rows(workspace, "SELECT COUNT(*) FROM runs") == [(1,)]
    assert len(server.requests) == 4


def test_a_run_recorded_before_requests_were_kept_is_reused_by_its_turn_keys(
    server: LLMServer, chain: Path, workspace: Path, sexp_in_process: Cli
) -> None:
    """A turn step that keeps no request (an older store) is found by its fingerprint column,
    the key today's main journaled turns under."""
    first, *_ = run(sexp_in_process)
    rows = turn_results(workspace, first)
    assert all("request" in json.loads(row[0])["notes"] for row in rows)
    import sqlite3

    db = sqlite3.connect(workspace / ".sexp" / "store.db")
    with db:
        db.execute("UPDATE steps SET result = json_remove(result, '$.notes.request') WHERE kind = 'turn'")
    db.close()
    assert run(sexp_in_process, "--reuse", first)[2] == ", 4 reused"
    assert len(server.requests) == 4


def test_session_run_file_reuses_a_run(server: LLMServer, chain: Path, workspace: Path) -> None:
    session = sexp_tasks.Session()
    out = session.run_file(chain, recorded=True)
    first = session.run_id
    assert session.run_file(chain, reuse=first) == out
    assert session.run_id != first and len(server.requests) == 4
    session.eval('(task-content (one :x "seed"))')  # after the run: nothing is reused any more
    assert len(server.requests) == 5
    with pytest.raises(SettingsError, match="not both"):
        session.run_file(chain, reuse=first, resume=first)
    with pytest.raises(sexp_tasks.SexpError, match="unknown run 'nope'"):
        session.run_file(chain, reuse="nope")


def test_a_recorded_cassette_holds_the_reused_turns_too(
    server: LLMServer, chain: Path, workspace: Path, sexp_in_process: Cli
) -> None:
    first, _, _, out = run(sexp_in_process)
    template = workspace / "tasks" / "four.xml"
    template.write_text(template.read_text().replace("End", "Finish"))
    _, _, _, edited = run(sexp_in_process, "--reuse", first, "--record", "c.jsonl")
    assert len((workspace / "c.jsonl").read_text().splitlines()) == 4
    replay, _, _, replayed = run(sexp_in_process, "--replay", "c.jsonl")
    assert replayed == edited and len(server.requests) == 5
    _, text, _ = sexp_in_process("trace", replay)
    assert all(line.endswith("  [replayed]") for line in text.splitlines()[1:]), text


def test_a_reused_turn_costs_nothing_and_takes_nothing_from_the_budget(
    server: LLMServer, chain: Path, sexp_in_process: Cli
) -> None:
    priced = ("--model", "openai/gpt-4o-mini")  # litellm knows its price: each call reserves some
    first, _, _, out = run(sexp_in_process, *priced)
    _, refused, _ = sexp_in_process("run", "p.sexp", *priced, "--max-cost", "0.0000001")
    assert (refused, len(server.requests)) == ('""\n', 4)  # each call refused by the budget: none sent
    _, calls, tail, again = run(sexp_in_process, *priced, "--max-cost", "0.0000001", "--reuse", first)
    assert (again, calls, tail, len(server.requests)) == (out, 4, ", 4 reused", 4)
