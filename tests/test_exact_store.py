"""The store keeps what a step returned exactly; keys are scrubbed where text is shown (SPEC §4,
§6, §10.1): traces, listings, logs and errors. Only the exact value of a credential the
environment holds is masked before it is written (it is never in an answer; a tool or a script
might have read it)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from conftest import Cli, write

from sexp_tasks.runs.store import Store

SHAPED = "sk-proj-notakey0123456789"  # key-shaped text of the workspace, no credential
PROVIDER_KEY = "sk-test-fake-provider-key-42"  # the (fake) provider key of the environment
ECHO = '(defatom echo (params (x str)) (instructions "Say {{x}}"))\n'


def store_bytes(workspace: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (workspace / ".sexp").rglob("*") if p.is_file())


def only_run(workspace: Path) -> str:
    db = sqlite3.connect(workspace / ".sexp" / "store.db")
    try:
        ((run_id,),) = db.execute("SELECT id FROM runs").fetchall()
    finally:
        db.close()
    return str(run_id)


def answered(workspace: Path, *answers: str) -> None:
    write(workspace / "replies.json", json.dumps([f"<output>{answer}</output>" for answer in answers]))


def test_a_resumed_step_returns_exactly_the_text_the_first_run_saw(cli: Cli, workspace: Path) -> None:
    text = f"the token is {SHAPED} — naïve"
    answered(workspace, text)
    write(workspace / "p.sexp", ECHO + '(task-content (echo "a"))\n')
    status, first, _ = cli("run", "--model", "mock/m", "--mock-responses", "replies.json", "p.sexp")
    assert status == 0 and SHAPED in first
    run_id = only_run(workspace)
    steps = Store(workspace / ".sexp" / "store.db").steps(run_id)
    assert json.loads(steps[0]["result"])["content"] == text
    # No mock responses now: the answer can only come from the store.
    status, again, err = cli("run", "--model", "mock/m", "--resume", run_id, "p.sexp")
    assert (status, again) == (0, first), err


def test_resume_binds_the_recorded_inputs_exactly(cli: Cli, workspace: Path) -> None:
    write(workspace / "p.sexp", "token\n")
    status, first, _ = cli("run", "--set-str", f"token={SHAPED}", "p.sexp")
    assert (status, first) == (0, f'"{SHAPED}"\n')
    status, again, err = cli("run", "--resume", only_run(workspace), "p.sexp")
    assert (status, again) == (0, first), err


def test_traces_and_listings_show_key_shaped_text_scrubbed(cli: Cli, workspace: Path) -> None:
    answered(workspace, f"use {SHAPED}")
    write(workspace / f"{SHAPED}.sexp", ECHO + f'(echo "{SHAPED}")\n')
    assert cli("run", "--model", "mock/m", "--mock-responses", "replies.json", f"{SHAPED}.sexp")[0] == 0
    assert SHAPED.encode() in store_bytes(workspace)  # kept as it was
    run_id = only_run(workspace)
    shown = [
        cli("runs"),
        cli("runs", "--json"),
        cli("trace", run_id),
        cli("trace", run_id, "--full"),
        cli("trace", run_id, "--json"),
    ]
    for status, out, err in shown:
        assert status == 0 and SHAPED not in out + err, out
    assert "use sk-***" in shown[2][1] and "Say sk-***" in shown[3][1]
    full = json.loads(shown[4][1])
    assert full["steps"][0]["answer"] == "<output>use sk-***</output>"


def test_the_exact_value_of_a_provider_key_is_all_the_store_masks(cli: Cli, workspace: Path) -> None:
    write(workspace / "notes.txt", f"key={PROVIDER_KEY}\nother={SHAPED}\n")
    write(
        workspace / "p.sexp",
        '(get-field (system:run_script (command "cat") (args (list "notes.txt"))) "stdout")\n',
    )
    status, out, err = cli("run", "p.sexp", env={"OPENAI_API_KEY": PROVIDER_KEY})
    assert status == 0 and out == json.dumps(f"key={PROVIDER_KEY}\nother={SHAPED}\n") + "\n"
    data = store_bytes(workspace)
    assert PROVIDER_KEY.encode() not in data
    assert b"key=***" in data and SHAPED.encode() in data


def results_lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def test_a_resumed_batch_leaves_its_ok_rows_out_lines_byte_identical(cli: Cli, workspace: Path) -> None:
    program = (
        '(if (= x 2) (error "row two fails")'
        f' (dict "text" (string-append "{SHAPED} é ✓ " (number->string x)) "ratio" (/ x 3.0)))\n'
    )
    write(workspace / "p.sexp", program)
    write(workspace / "in.jsonl", "".join(json.dumps({"x": i}) + "\n" for i in range(4)))
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl")
    assert status == 1, err
    out = workspace / "p.results.jsonl"
    first = results_lines(out)
    rows: list[dict[str, Any]] = [json.loads(line) for line in first]
    assert [row["status"] for row in rows] == ["ok", "ok", "error", "ok"]
    assert rows[0]["value"]["text"] == f"{SHAPED} é ✓ 0"
    batch_id = err.split()[1]
    status, _, err = cli("batch", "p.sexp", "--resume", batch_id)
    assert status == 1, err
    again = results_lines(out)
    for index in (0, 1, 3):
        assert again[index] == first[index]
