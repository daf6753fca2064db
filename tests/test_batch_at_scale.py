"""A batch of a thousand rows (issue 23 point 5; bench/batch_scale.py runs 100,000): every row in
OUT once and in order, the store whole (`pragma integrity_check`), nothing left beside it, and
`sexp trace BATCH_ID` reading it through indexes (so it stays fast however large the store grows)."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

from conftest import Cli, results, write
from llm_server import LLMServer, Scripted

from sexp_tasks.runs import batches, locks
from sexp_tasks.runs.store import Store

ROWS = 1000
PROGRAM = '(defatom echo (params x) (instructions "Echo {{x}}"))\n(task-content (echo x))\n'


def big_batch(cli: Cli, workspace: Path, server: LLMServer) -> str:
    server.answer = lambda body: Scripted(
        "<output>hi</output>", usage={"prompt_tokens": 3, "completion_tokens": 2}
    )
    write(workspace / "p.sexp", PROGRAM)
    with (workspace / "in.jsonl").open("w") as file:
        for index in range(ROWS):
            file.write(json.dumps({"x": index}) + "\n")
    env = {
        "SEXP_API_BASE": server.base_url,
        "SEXP_MODEL": "openai/test-model",
        "OPENAI_API_KEY": "sk-fake-scale",
    }
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl", "--concurrency", "32", env=env, timeout=300)
    found = re.match(r"\Abatch: ([0-9a-f]{12})\n", err)
    assert status == 0 and found, err
    return found.group(1)


def test_a_thousand_row_batch_leaves_a_whole_store_and_nothing_else(
    cli: Cli, workspace: Path, server: LLMServer
) -> None:
    before = set(workspace.iterdir())
    ident = big_batch(cli, workspace, server)
    rows = results(workspace / "p.results.jsonl")
    assert [row["index"] for row in rows] == list(range(ROWS))  # each row once, in input order
    assert all(row["status"] == "ok" and row["value"] == "hi" for row in rows)
    assert len(server.requests) == ROWS  # one call a row: none paid twice
    database = sqlite3.connect(workspace / ".sexp" / "store.db")
    try:
        assert database.execute("pragma integrity_check").fetchone() == ("ok",)
        assert database.execute("SELECT COUNT(*) FROM batch_rows").fetchone() == (ROWS,)
    finally:
        database.close()
    made = sorted(str(path.relative_to(workspace)) for path in set(workspace.iterdir()) - before)
    assert made == [".sexp", "in.jsonl", "p.results.jsonl", "p.sexp"]
    left = sorted(path.name for path in (workspace / ".sexp").iterdir())
    # No -wal, -shm or temporary file; the store's one lock file (runs/locks.py) stays, no run held.
    assert left == ["store.db", "store.db.runlocks"], left
    assert not locks.any_held(workspace / ".sexp" / "store.db.runlocks")
    status, text, err = cli("trace", ident, "--json")
    assert (status, err) == (0, "")
    summary = json.loads(text)
    assert summary["rows"] == {"ok": ROWS, "total": ROWS}
    assert summary["templates"][0]["name"] == "echo" and summary["templates"][0]["calls"] == ROWS


def test_reading_a_batch_never_scans_the_whole_store(workspace: Path) -> None:
    """The queries behind `sexp trace BATCH_ID` and `sexp runs --batch` find a batch's rows and
    their steps by index: their cost grows with the batch, not with every run the store holds."""
    store = Store(workspace / "runs.db", create=True)
    held = batches.begin_batch(store, "b", "p.sexp", "digest", "in.jsonl", {"total": 1})
    seen: list[tuple[str, tuple[object, ...]]] = []
    query = store.query

    def recording(sql: str, parameters: tuple[object, ...] = ()) -> list[dict[str, object]]:
        seen.append((sql, tuple(parameters)))
        return query(sql, parameters)

    try:
        store.query = recording  # type: ignore[method-assign]
        batches.stored_row(store, "b", 0)
        batches.batch_rows(store, "b")
        batches.batch_rows(store, "b", "ok")
        batches.template_spending(store, "b")
        batches.batch_summary(store, "b")
        batches.batch_spent(store, "b")
        assert len(seen) >= 7
        for sql, parameters in seen:
            plan = [str(row["detail"]) for row in query(f"EXPLAIN QUERY PLAN {sql}", parameters)]
            full_scans = [step for step in plan if step.startswith("SCAN") and "USING" not in step]
            assert not full_scans, (sql, plan)
    finally:
        held.close()
        store.close()
