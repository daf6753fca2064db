"""Reading a batch (SPEC §11.5): `sexp trace BATCH_ID` summarises it (rows by status, errors by
type and reason, tokens and cost per template, the slowest rows), `sexp runs --batch BATCH_ID
[--status ok|error]` lists its rows."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

from conftest import Cli, jsonl, results, write
from llm_server import LLMServer, Scripted

from sexp_tasks.handler.cost import format_cost
from sexp_tasks.runs.batch_reading import error_kind

GREET = '(defatom greet (params (name string)) (instructions "Greet {{name}}"))\n'
PROGRAM = GREET + '(if fail (error "boom") (greet name))\n'
ROWS = [
    {"name": "a", "fail": False},
    {"name": "b", "fail": True},  # a program error
    {"name": "bad", "fail": False},  # the model answers nothing: INVALID_OUTPUT
    {"name": "c", "fail": True},  # the same program error again: one group of two rows
    {"name": "d", "fail": False},
]


def answer(body: dict[str, Any]) -> Scripted:
    usage = {"prompt_tokens": 1000, "completion_tokens": 1000}
    text = "   " if "Greet bad" in str(body["messages"][-1]["content"]) else "<output>hi</output>"
    return Scripted(text, usage=usage)


def failing_batch(cli: Cli, workspace: Path, server: LLMServer) -> tuple[str, list[dict[str, Any]]]:
    """Run the batch of ROWS against server; its id and its OUT lines."""
    server.answer = answer
    write(workspace / "p.sexp", PROGRAM)
    jsonl(workspace / "in.jsonl", ROWS)
    env = {
        "SEXP_API_BASE": server.base_url,
        "SEXP_MODEL": "openai/gpt-4o-mini",  # priced by litellm: the rows cost something
        "OPENAI_API_KEY": "sk-fake-reading",
    }
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl", "--concurrency", "2", env=env)
    found = re.match(r"\Abatch: ([0-9a-f]{12})\n", err)
    assert status == 1 and found, err
    return found.group(1), results(workspace / "p.results.jsonl")


def test_trace_of_a_batch_prints_its_summary(cli: Cli, workspace: Path, server: LLMServer) -> None:
    ident, rows = failing_batch(cli, workspace, server)
    assert [row["status"] for row in rows] == ["ok", "error", "error", "error", "ok"]
    status, text, err = cli("trace", ident, "--json")
    assert (status, err) == (0, "")
    summary = json.loads(text)
    assert summary["id"] == ident and summary["status"] in {"completed", "failed"}
    assert summary["rows"] == {"ok": 2, "error": 3, "total": 5}
    groups = [
        (group["type"], group["reason"], group["rows"], group["example_row"]) for group in summary["errors"]
    ]
    assert groups[0] == ("error", "boom", 2, 1)
    assert len(groups) == 2 and groups[1][0] == "INVALID_OUTPUT" and groups[1][2:] == (1, 2)
    assert summary["errors"][1]["example"] == rows[2]["error"]
    [greet] = summary["templates"]
    assert greet["name"] == "greet" and greet["calls"] == 3
    assert greet["tokens"] == sum(row["tokens"] for row in rows) > 0
    assert abs(greet["cost_usd"] - sum(row["cost_usd"] for row in rows)) < 1e-9 and greet["cost_usd"] > 0
    by_time = sorted(rows, key=lambda row: (-row["seconds"], row["index"]))
    assert [row["index"] for row in summary["slowest"]] == [row["index"] for row in by_time]
    assert [row["run_id"] for row in summary["slowest"]] == [row["run_id"] for row in by_time]

    status, text, err = cli("trace", ident)
    assert (status, err) == (0, "")
    lines = text.splitlines()
    assert lines[0].startswith(f"batch {ident}  ") and "p.sexp < in.jsonl" in lines[0]
    assert lines[1] == "rows: 2 ok, 3 error (of 5)"
    assert lines[2] == "errors:" and re.fullmatch(r" +2  error boom  \(e\.g\. row 1\)", lines[3])
    assert re.fullmatch(r" +1  INVALID_OUTPUT.*  \(e\.g\. row 2\)", lines[4]), lines[4]
    tokens = sum(row["tokens"] for row in rows)
    assert lines[5:7] == [
        "templates:",
        f"  greet  3 calls  {tokens} tokens  {format_cost(greet['cost_usd'])}",
    ]
    assert lines[7] == "slowest rows:" and len(lines) == 8 + 5
    assert [line.split()[1] for line in lines[8:]] == [str(row["index"]) for row in by_time]


def test_runs_batch_lists_its_rows_and_status_picks_some(
    cli: Cli, workspace: Path, server: LLMServer
) -> None:
    ident, rows = failing_batch(cli, workspace, server)
    status, text, err = cli("runs", "--batch", ident, "--status", "error")
    assert (status, err) == (0, "")
    lines = text.splitlines()
    assert [line.split()[:4] for line in lines] == [
        [row["run_id"], "row", str(row["index"]), "error"] for row in rows if row["status"] == "error"
    ]
    assert all(
        line.endswith(row["error"]) for line, row in zip(lines, [r for r in rows if r["status"] == "error"])
    )
    status, text, _ = cli("runs", "--batch", ident)
    assert status == 0 and [line.split()[0] for line in text.splitlines()] == [row["run_id"] for row in rows]
    status, text, _ = cli("runs", "--batch", ident, "--status", "ok", "--json")
    listed = json.loads(text)
    assert status == 0 and [row["index"] for row in listed] == [0, 4]
    assert all(row["status"] == "ok" and row["error"] is None for row in listed)


def test_an_unknown_id_and_bad_options_are_clear_errors(cli: Cli, workspace: Path) -> None:
    write(workspace / "p.sexp", "(+ 1 2)\n")
    assert cli("run", "p.sexp")[0] == 0  # the store exists
    status, out, err = cli("trace", "0123456789ab")
    assert (status, out) == (1, "") and "unknown run '0123456789ab'" in err
    status, out, err = cli("runs", "--batch", "0123456789ab")
    assert (status, out, err) == (1, "", "error: unknown batch '0123456789ab'\n")
    assert cli("runs", "--batch", "x", "--status", "fine") == (
        2,
        "",
        "error: --status takes ok or error, not 'fine'\n",
    )
    assert cli("runs", "--status", "ok") == (2, "", "error: --status needs --batch\n")
    assert cli("runs", "--batch", "x", "--prune") == (
        2,
        "",
        "error: --batch lists rows: it does not go with --prune\n",
    )


def test_error_kind_groups_by_type_and_reason() -> None:
    assert error_kind("p.sexp:2:1: error: INVALID_OUTPUT empty: no answer") == ("INVALID_OUTPUT", "empty")
    assert error_kind("p.sexp:2:1: error: RESOURCE_EXHAUSTION cost: over budget") == (
        "RESOURCE_EXHAUSTION",
        "cost",
    )
    assert error_kind("error: TIMEOUT: too slow") == ("TIMEOUT", "")
    assert error_kind("p.sexp:2:10: error: boom 2") == ("error", "boom 2")
    assert error_kind(None) == ("error", "")


def test_rows_never_ended_or_never_reached_are_counted(cli: Cli, workspace: Path, server: LLMServer) -> None:
    # As a batch killed mid-way leaves it: row 3 began and never ended, row 4 was never reached.
    ident, _ = failing_batch(cli, workspace, server)
    db = sqlite3.connect(workspace / ".sexp" / "store.db")
    try:
        db.execute(
            "UPDATE batch_rows SET status = 'running', error = NULL WHERE batch_id = ? AND \"index\" = 3",
            (ident,),
        )
        db.execute('DELETE FROM batch_rows WHERE batch_id = ? AND "index" = 4', (ident,))
        db.commit()
    finally:
        db.close()
    summary = json.loads(cli("trace", ident, "--json")[1])
    assert summary["rows"] == {"ok": 1, "error": 2, "running": 1, "not run": 1, "total": 5}
    assert [group["rows"] for group in summary["errors"]] == [1, 1]
    assert cli("trace", ident)[1].splitlines()[1] == "rows: 1 ok, 2 error, 1 running, 1 not run (of 5)"
    status, text, _ = cli("runs", "--batch", ident)
    assert status == 0 and [line.split()[2] for line in text.splitlines()] == ["0", "1", "2", "3"]
