"""Resuming recorded runs (SPEC §6): completed steps come from the store, never from the model again.

Programs run as real `sexp run` processes against a local OpenAI-compatible server that counts
every request; the crash test kills them with SIGKILL at many points.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli, scaled, spawn_sexp, store_rows, wait_for
from llm_server import LLMServer, Scripted

CANARY = "sk-canary-resume-9f8e7d6c5b4a"

STEPS = """
(defatom step (params (n int)) (instructions "Step {{n}}"))
(define answers (map (lambda (n) (task-content (step n))) (range 1 21)))
(string-join answers ",")
"""


@pytest.fixture
def server(server: LLMServer) -> LLMServer:
    # Each answer depends only on the request, so an interrupted and resumed run can be compared.
    server.answer = lambda body: (
        "<output>a" + body.get("messages", [{"content": "?"}])[-1]["content"].split()[-1] + "</output>"
    )
    return server


def environment(server: LLMServer) -> dict[str, str]:
    return {
        "SEXP_API_BASE": server.base_url,
        "SEXP_MODEL": "openai/test-model",
        "OPENAI_API_KEY": CANARY,
    }


def start(workspace: Path, server: LLMServer, *args: str) -> subprocess.Popen[str]:
    return spawn_sexp(
        "run", *args, cwd=workspace, env=environment(server), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def run(workspace: Path, server: LLMServer, *args: str) -> tuple[int, str, str]:
    process = start(workspace, server, *args)
    out, err = process.communicate(timeout=scaled(120))
    return process.returncode, out, err


def run_id(stderr: str) -> str:
    found = re.search(r"^run: ([0-9a-f]{12})$", stderr, re.M)
    assert found, stderr
    return found.group(1)


def killed_at_request(workspace: Path, server: LLMServer, count: int) -> str:
    """`sexp run p.sexp`, killed with SIGKILL while the server's request `count` waits for its
    answer; what it wrote on stderr."""
    process = start(workspace, server, "p.sexp")

    def kill(seen: int) -> None:
        if seen == count:
            process.send_signal(signal.SIGKILL)
            time.sleep(0.2)

    server.on_request = kill
    _, err = process.communicate(timeout=scaled(120))
    assert process.returncode == -signal.SIGKILL
    server.on_request = None
    return err


def completed_steps(workspace: Path, rid: str, kind: str = "task") -> int:
    """How many of the run's steps of kind (task; turn: a model call inside a task) completed."""
    query = "SELECT COUNT(*) FROM steps WHERE run_id = ? AND status = 'COMPLETE' AND kind = ?"
    return int(store_rows(workspace, query, rid, kind)[0][0])


READ_NOTES = Scripted(content=None, tool_calls=[{"name": "read_file", "arguments": {"path": "notes.txt"}}])


def write_reader(workspace: Path, server: LLMServer) -> None:
    """A program whose one task reads notes.txt with a tool; the server answers only from its script."""
    (workspace / "notes.txt").write_text("remember the milk\n")
    (workspace / "p.sexp").write_text(
        '(defatom reader (instructions "Read notes.txt") (tools read_file))\n(task-content (reader))\n'
    )
    server.answer = None


EXPECTED = ",".join(f"a{n}" for n in range(1, 21))


@pytest.mark.slow
def test_resuming_a_finished_run_sends_nothing_and_gives_the_same_value(
    workspace: Path, server: LLMServer
) -> None:
    (workspace / "p.sexp").write_text(STEPS)
    status, out, err = run(workspace, server, "p.sexp")
    assert (status, out) == (0, f'"{EXPECTED}"\n')
    assert len(server.requests) == 20
    status, again, err2 = run(workspace, server, "--resume", run_id(err), "p.sexp")
    assert (status, again) == (0, out)
    assert len(server.requests) == 20  # every step answered from the store
    assert run_id(err2) == run_id(err)


@pytest.mark.slow
def test_kill_9_at_any_point_then_resume_resends_no_completed_call(
    workspace: Path, server: LLMServer
) -> None:
    """Killed while step 1, 2, 7, 13, then 20 waits for its answer, each time in the run resumed
    after the kill before (one process a kill point, not two): every resume sends exactly the
    steps the store does not hold as completed, and the last one finishes the run."""
    (workspace / "p.sexp").write_text(STEPS)
    server.script(Scripted(delay=0.05))
    rid, done = None, 0
    for kill_at in (1, 2, 7, 13, 20):
        before = len(server.requests)
        process = start(workspace, server, *(("--resume", rid) if rid else ()), "p.sexp")

        def kill(count: int, process: subprocess.Popen[str] = process, step: str = f"Step {kill_at}") -> None:
            if server.requests[count - 1].body["messages"][-1]["content"] == step:
                process.send_signal(signal.SIGKILL)  # while this step waits for its answer
                time.sleep(0.2)

        server.on_request = kill
        _, err = process.communicate(timeout=scaled(120))
        assert process.returncode == -signal.SIGKILL, err
        rid = rid or run_id(err)
        sent = [r.body["messages"][-1]["content"] for r in server.requests[before:]]
        assert sent == [f"Step {n}" for n in range(done + 1, kill_at + 1)]  # none of the completed ones
        done = completed_steps(workspace, rid)
        assert done == kill_at - 1
    server.on_request = None
    before = len(server.requests)
    status, out, _ = run(workspace, server, "--resume", str(rid), "p.sexp")
    assert (status, out) == (0, f'"{EXPECTED}"\n')
    assert [r.body["messages"][-1]["content"] for r in server.requests[before:]] == ["Step 20"]


@pytest.mark.slow
def test_kill_9_at_random_moments(workspace: Path, server: LLMServer) -> None:
    (workspace / "p.sexp").write_text(STEPS)
    server.script(Scripted(delay=0.02))
    rid = None
    for pause in (0.05, 0.13, 0.31):
        args = ("--resume", rid, "p.sexp") if rid else ("p.sexp",)
        seen = len(server.requests)
        process = start(workspace, server, *args)

        # start-up (imports) takes a varying while; then kill at a moment into the calls
        def started(seen: int = seen, process: subprocess.Popen[str] = process) -> bool:
            return len(server.requests) > seen or process.poll() is not None

        wait_for(started, 60, "no request")
        time.sleep(pause)
        process.send_signal(signal.SIGKILL)
        _, err = process.communicate(timeout=scaled(60))
        rid = rid or run_id(err)
    assert rid is not None
    # model calls, not tasks: a kill between a call's answer and its task's end leaves the call
    # journaled, and the resumed run takes it from the store
    done = completed_steps(workspace, rid, "turn")
    before = len(server.requests)
    status, out, _ = run(workspace, server, "--resume", rid, "p.sexp")
    assert (status, out) == (0, f'"{EXPECTED}"\n')
    assert len(server.requests) - before == 20 - done
    # a request the kill cut off mid-send arrives without a body: it was never a model call
    contents = [r.body["messages"][-1]["content"] for r in server.requests if "messages" in r.body]
    assert len(set(contents)) == 20  # every step answered; repeats only of calls never completed
    assert len(contents) - 20 <= 3  # at most one uncompleted call per kill was sent again


@pytest.mark.slow
def test_ctrl_c_exits_130_and_leaves_a_resumable_run(workspace: Path, server: LLMServer) -> None:
    (workspace / "p.sexp").write_text(STEPS)
    server.script(Scripted(delay=0.05))
    process = start(workspace, server, "p.sexp")

    def interrupt(count: int) -> None:
        if count == 5:
            process.send_signal(signal.SIGINT)
            time.sleep(0.2)

    server.on_request = interrupt
    _, err = process.communicate(timeout=scaled(120))
    assert process.returncode == 130
    rid = run_id(err)
    assert f"resume with: sexp run --resume {rid} p.sexp" in err and "Traceback" not in err
    assert store_rows(workspace, "SELECT status FROM runs WHERE id = ?", rid)[0][0] == "interrupted"
    server.on_request = None
    status, out, _ = run(workspace, server, "--resume", rid, "p.sexp")
    assert (status, out) == (0, f'"{EXPECTED}"\n')


@pytest.mark.slow
def test_an_edited_program_is_refused_unless_forced(workspace: Path, server: LLMServer) -> None:
    program = workspace / "p.sexp"
    program.write_text(STEPS)
    _, _, err = run(workspace, server, "p.sexp")
    rid = run_id(err)
    program.write_text(STEPS.replace("(range 1 21)", "(range 1 22)"))
    status, out, err = run(workspace, server, "--resume", rid, "p.sexp")
    assert status == 1 and out == ""
    assert "the program has changed since run" in err and "--force" in err and "Traceback" not in err
    assert len(server.requests) == 20
    status, out, _ = run(workspace, server, "--resume", rid, "--force", "p.sexp")
    assert status == 0 and out == f'"{EXPECTED},a21"\n'
    assert len(server.requests) == 21  # only the new step was sent


def test_unknown_runs_and_missing_stores_are_clear_errors(workspace: Path, server: LLMServer) -> None:
    (workspace / "p.sexp").write_text("(+ 1 2)\n")
    status, _, err = run(workspace, server, "--resume", "abc", "p.sexp")
    assert status == 1 and "no run store at" in err
    run(workspace, server, "p.sexp")
    status, _, err = run(workspace, server, "--resume", "abc", "p.sexp")
    assert status == 1 and "unknown run 'abc'" in err and "Traceback" not in err


@pytest.mark.slow
def test_a_second_process_cannot_resume_a_run_in_use(workspace: Path, server: LLMServer) -> None:
    (workspace / "p.sexp").write_text(STEPS)
    held = threading.Event()  # the first run's calls wait until the second process has tried

    def hold(count: int) -> None:
        held.wait(scaled(60))

    server.on_request = hold
    first = start(workspace, server, "p.sexp")
    wait_for(lambda: server.requests or first.poll() is not None, 60, "no request")
    rid = completed_run_id(workspace)
    status, _, err = run(workspace, server, "--resume", rid, "p.sexp")
    assert status == 1 and f"run {rid} is in use by another sexp process" in err
    first.kill()
    first.communicate(timeout=scaled(30))
    server.on_request = None
    held.set()
    status, out, _ = run(workspace, server, "--resume", rid, "p.sexp")  # free once its holder is gone
    assert status == 0


def completed_run_id(workspace: Path) -> str:
    return str(store_rows(workspace, "SELECT id FROM runs ORDER BY started_at DESC")[0][0])


@pytest.mark.slow
def test_failed_steps_run_again_on_resume(workspace: Path, server: LLMServer) -> None:
    (workspace / "p.sexp").write_text(
        '(defatom ask (params (q str)) (instructions "Ask {{q}}"))\n(get-field (ask "x") "status")\n'
    )
    server.answer = None
    server.script(Scripted(status=400, error={"message": "bad", "type": "invalid_request_error"}))
    status, out, err = run(workspace, server, "p.sexp")
    assert out == '"FAILED"\n'
    sent = len(server.requests)
    server.script("<output>ok</output>")
    status, out, _ = run(workspace, server, "--resume", run_id(err), "p.sexp")
    assert out == '"COMPLETE"\n' and len(server.requests) == sent + 1


def test_scripts_are_steps_too(workspace: Path, server: LLMServer) -> None:
    (workspace / "p.sexp").write_text(
        '(get-field (system:run_script (command "sh") (args (list "-c" "echo x >> ran.txt; echo hi")))'
        ' "stdout")\n'
    )
    _, out, err = run(workspace, server, "p.sexp")
    assert out == '"hi\\n"\n'
    _, again, _ = run(workspace, server, "--resume", run_id(err), "p.sexp")
    assert again == out
    assert (workspace / "ran.txt").read_text() == "x\n"  # the script did not run a second time


@pytest.mark.slow
def test_tool_calls_are_steps_under_their_task_and_no_key_is_stored(
    workspace: Path, server: LLMServer
) -> None:
    write_reader(workspace, server)
    server.script(
        READ_NOTES,
        "<output>milk</output>",
    )
    status, out, _ = run(workspace, server, "p.sexp")
    assert (status, out) == (0, '"milk"\n')
    steps = store_rows(workspace, "SELECT key, parent, kind, name, result FROM steps ORDER BY seq")
    kinds = [(s[2], s[3]) for s in steps]
    assert kinds == [
        ("task", "reader"),
        ("turn", "openai/test-model"),
        ("tool", "read_file"),
        ("turn", "openai/test-model"),
    ]
    assert all(s[1] == steps[0][0] for s in steps[1:])  # turns and tools sit under their task
    assert "remember the milk" in steps[2][4]
    for path in (workspace / ".sexp").rglob("*"):
        if path.is_file():
            assert CANARY.encode() not in path.read_bytes()


@pytest.mark.slow
def test_step_keys_do_not_depend_on_how_the_path_is_typed(workspace: Path, server: LLMServer) -> None:
    (workspace / "sub").mkdir()
    (workspace / "p.sexp").write_text(STEPS)
    _, out, err = run(workspace, server, "p.sexp")
    status, again, _ = run(workspace, server, "--resume", run_id(err), str(workspace / "p.sexp"))
    assert (status, again) == (0, out) and len(server.requests) == 20


@pytest.mark.slow
def test_resume_binds_the_recorded_inputs_and_refuses_other_ones(workspace: Path, server: LLMServer) -> None:
    (workspace / "p.sexp").write_text(
        '(defatom hi (params (who str)) (instructions "Hi {{who}}"))\n(task-content (hi who))\n'
    )
    _, out, err = run(workspace, server, "--set", "who=bob", "p.sexp")
    rid = run_id(err)
    assert out == '"abob"\n'
    status, again, _ = run(workspace, server, "--resume", rid, "p.sexp")
    assert (status, again, len(server.requests)) == (0, out, 1)
    status, _, err = run(workspace, server, "--resume", rid, "--set", "who=ann", "p.sexp")
    assert status == 1 and "recorded with other --set inputs" in err and len(server.requests) == 1
    status, forced, _ = run(workspace, server, "--resume", rid, "--force", "--set", "who=ann", "p.sexp")
    assert (status, forced, len(server.requests)) == (0, '"aann"\n', 2)
    status, again, _ = run(
        workspace, server, "--resume", rid, "p.sexp"
    )  # the forced inputs are the run's now
    assert (status, again, len(server.requests)) == (0, '"aann"\n', 2)


@pytest.mark.slow
def test_a_changed_file_makes_its_step_run_again(workspace: Path, server: LLMServer) -> None:
    (workspace / "doc.txt").write_text("one\n")
    (workspace / "p.sexp").write_text(
        '(defatom summ (instructions "Summarise doc")) (task-content (summ :files (list "doc.txt")))\n'
    )
    _, _, err = run(workspace, server, "p.sexp")
    rid = run_id(err)
    run(workspace, server, "--resume", rid, "p.sexp")
    assert len(server.requests) == 1
    (workspace / "doc.txt").write_text("two, longer\n")
    run(workspace, server, "--resume", rid, "p.sexp")
    assert len(server.requests) == 2 and "two, longer" in server.requests[1].body["messages"][-1]["content"]


@pytest.mark.slow
def test_tasks_called_by_map_are_keyed_by_the_map_call(workspace: Path, server: LLMServer) -> None:
    (workspace / "p.sexp").write_text(
        '(defatom step (params (n int)) (instructions "Step {{n}}"))\n(map step (list 1 2))\n'
    )
    run(workspace, server, "p.sexp")
    keys = [row[0] for row in store_rows(workspace, "SELECT key FROM steps WHERE kind = 'task' ORDER BY seq")]
    assert keys == ["p.sexp:2:1#1", "p.sexp:2:1#2"]


def test_a_step_that_raises_is_recorded_failed(workspace: Path, server: LLMServer) -> None:
    (workspace / "empty.jsonl").write_text("")
    (workspace / "p.sexp").write_text(
        '(defatom t1 (params x) (instructions "T {{x}}"))\n(try (t1 "a") (catch e (get e "type")))\n'
    )
    status, out, err = run(workspace, server, "--replay", "empty.jsonl", "p.sexp")
    assert (status, out) == (0, '"HANDLER_ERROR"\n')
    [(step_status, result)] = store_rows(workspace, "SELECT status, result FROM steps WHERE kind = 'task'")
    assert step_status == "FAILED" and "HANDLER_ERROR" in result


def test_ctrl_c_while_a_script_blocks_still_leaves_an_interrupted_run(
    workspace: Path, server: LLMServer
) -> None:
    (workspace / "p.sexp").write_text(
        '(system:run_script (command (list "sh" "-c" "touch started && exec sleep 30")))\n'
    )
    process = start(workspace, server, "p.sexp")
    wait_for(lambda: (workspace / "started").exists() or process.poll() is not None, 60, "no script")
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=scaled(60))
    assert process.returncode == 130
    rid = run_id(err)
    assert f"resume with: sexp run --resume {rid} p.sexp" in err
    assert store_rows(workspace, "SELECT status FROM runs")[0][0] == "interrupted"


@pytest.mark.slow
def test_a_task_killed_mid_conversation_resends_none_of_its_completed_turns(
    workspace: Path, server: LLMServer
) -> None:
    write_reader(workspace, server)
    server.script(
        READ_NOTES,
        Scripted(content="<output>milk</output>", delay=0.05),
    )
    err = killed_at_request(workspace, server, 2)  # the second turn is in flight: the first is complete
    status, out, _ = run(workspace, server, "--resume", run_id(err), "p.sexp")
    assert (status, out) == (0, '"milk"\n')
    assert len(server.requests) == 3  # turn 1 once; turn 2 (never answered) twice
    assert "tools" in server.requests[2].body and server.requests[2].body["messages"][-1]["role"] == "tool"


LISTER = """#!/bin/sh
echo run >> listings.log
if [ -e fail-once ]; then rm fail-once; exit 1; fi
echo b.txt
"""
LISTED = (
    '<task name="listed" type="atomic"><description>d</description><instructions>Read it.</instructions>'
    '<file_paths source="command"><command>sh lister.sh</command></file_paths></task>'
)


def listing_runs(workspace: Path) -> int:
    return len((workspace / "listings.log").read_text().splitlines())


@pytest.mark.slow
def test_a_file_paths_command_is_a_step_a_resumed_run_does_not_run_again(
    workspace: Path, server: LLMServer
) -> None:
    (workspace / "b.txt").write_text("beta\n")
    (workspace / "lister.sh").write_text(LISTER)
    (workspace / "tasks").mkdir()
    (workspace / "tasks" / "listed.xml").write_text(LISTED)
    (workspace / "p.sexp").write_text("(task-content (listed))\n")
    status, out, err = run(workspace, server, "p.sexp")
    assert status == 0 and listing_runs(workspace) == 1
    assert '<file path="b.txt">' in server.requests[0].body["messages"][-1]["content"]
    rid = run_id(err)
    kinds = store_rows(workspace, "SELECT kind, name, status FROM steps WHERE run_id = ? ORDER BY seq", rid)
    assert ("script", "sh lister.sh", "COMPLETE") in kinds
    status, again, _ = run(workspace, server, "--resume", rid, "p.sexp")
    assert (status, again) == (0, out)
    assert listing_runs(workspace) == 1 and len(server.requests) == 1  # nothing ran again


@pytest.mark.slow
def test_a_failed_file_paths_command_runs_again_on_resume(workspace: Path, server: LLMServer) -> None:
    (workspace / "b.txt").write_text("beta\n")
    (workspace / "lister.sh").write_text(LISTER)
    (workspace / "fail-once").write_text("")
    (workspace / "tasks").mkdir()
    (workspace / "tasks" / "listed.xml").write_text(LISTED)
    (workspace / "p.sexp").write_text("(task-content (listed))\n")
    status, _, err = run(workspace, server, "p.sexp")
    assert status == 0 and "file_paths command 'sh lister.sh' failed (exit code 1)" in err
    assert '<file path="b.txt">' not in server.requests[0].body["messages"][-1]["content"]
    status, _, err2 = run(workspace, server, "--resume", run_id(err), "p.sexp")
    assert status == 0 and listing_runs(workspace) == 2 and "failed" not in err2
    # the listing now names b.txt, so the task's request changed and it ran again with the file
    assert (
        len(server.requests) == 2
        and '<file path="b.txt">' in server.requests[1].body["messages"][-1]["content"]
    )


def preorder(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The steps of `sexp trace --json`, each before its children, as the tree lists them."""
    return [s for step in steps for s in (step, *preorder(step["children"]))]


def test_after_resume_steps_have_distinct_sequence_numbers_in_the_order_they_ran(
    workspace: Path, server: LLMServer
) -> None:
    write_reader(workspace, server)
    (workspace / "p.sexp").write_text(
        '(defatom reader (instructions "Read notes.txt") (tools read_file))\n'
        '(defatom step (params (n int)) (instructions "Step {{n}}"))\n'
        "(task-content (reader))\n(task-content (step 1))\n(task-content (step 2))\n"
    )
    server.script(READ_NOTES, "<output>milk</output>", Scripted(content="<output>one</output>", delay=0.05))
    err = killed_at_request(workspace, server, 3)  # (step 1) is in flight, the reader complete
    server.script("<output>one</output>", "<output>two</output>")
    rid = run_id(err)
    status, out, _ = run(workspace, server, "--resume", rid, "p.sexp")
    assert (status, out) == (0, '"two"\n')
    every = [seq for (seq,) in store_rows(workspace, "SELECT seq FROM steps WHERE run_id = ?", rid)]
    assert len(every) == len(set(every))  # turns included
    _, traced, _ = run_cli("trace", rid, "--json", cwd=workspace, env=environment(server))
    steps = preorder(json.loads(traced)["steps"])
    assert [(s["kind"], s["name"]) for s in steps] == [
        ("task", "reader"),
        ("tool", "read_file"),
        ("task", "step"),
        ("task", "step"),
    ]
    seqs = [s["seq"] for s in steps]
    assert seqs == sorted(set(seqs)), seqs
    assert [s["key"].split(":")[1] for s in steps if s["kind"] == "task"] == ["3", "4", "5"]


@pytest.mark.slow
def test_a_resumed_run_does_not_pay_for_a_repair_turn_twice(workspace: Path, server: LLMServer) -> None:
    """SPEC §10.2: each repair is a journaled turn; killed while the second repair is in flight,
    the resumed task re-sends only that one."""
    (workspace / "p.sexp").write_text(
        '(defatom person (instructions "Who?")\n'
        '  (output_format (type "json") (schema "object") (native "never") (retries 2)))\n'
        "(task-json (person))\n"
    )
    server.answer = None
    server.script(
        "<output>nope</output>", "<output>[]</output>", Scripted('<output>{"a": 1}</output>', delay=0.05)
    )
    err = killed_at_request(workspace, server, 3)
    status, out, err2 = run(workspace, server, "--resume", run_id(err), "p.sexp")
    assert (status, out) == (0, '{"a" 1}\n'), err2
    assert len(server.requests) == 4  # the first answer and the first repair once; the second twice
    assert server.requests[3].body["messages"] == server.requests[2].body["messages"]
    assert "must be a JSON object, not an array" in server.requests[3].body["messages"][-1]["content"]


@pytest.mark.slow
def test_a_refused_response_format_stays_refused_on_resume(workspace: Path, server: LLMServer) -> None:
    """A turn that fell back to prompt-only (the provider refused response_format), taken from
    the store on resume, keeps the conversation prompt-only: the repair is not sent with it again."""
    (workspace / "p.sexp").write_text(
        '(defatom person (instructions "Who?")\n'
        '  (output_format (type "json") (json_schema "{\\"type\\": \\"object\\"}")\n'
        '                 (native "always") (retries 1)))\n'
        "(task-json (person))\n"
    )
    server.answer = None
    server.refuse_response_format = True
    server.script("[]", Scripted('{"a": 1}', delay=0.05))  # the refused call takes no scripted reply
    err = killed_at_request(workspace, server, 3)  # 1 refused, 2 answered prompt-only, 3 the repair
    status, out, err2 = run(workspace, server, "--resume", run_id(err), "p.sexp")
    assert (status, out) == (0, '{"a" 1}\n'), err2
    assert ["response_format" in r.body for r in server.requests] == [True, False, False, False]
    assert "does not take response_format" in err2
