"""The run store's schema (runs/schema.py): numbered migrations under PRAGMA user_version. A store
written before the schema had migrations (user_version 1, with or without the batch tables a
batch made on first use) opens, upgrades and keeps what it holds; a newer one is refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from conftest import run_cli

from sexp_tasks.errors import StoreError
from sexp_tasks.runs import batches, schema
from sexp_tasks.runs.store import Store

# The schema text runs/store.py created, as user_version 1, before migrations (kept verbatim).
VERSION_1 = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    program TEXT NOT NULL,          -- the file run, or <eval>
    program_hash TEXT NOT NULL,
    inputs TEXT NOT NULL,           -- JSON of --set bindings
    status TEXT NOT NULL,           -- running | completed | failed | interrupted
    started_at REAL NOT NULL,
    ended_at REAL
);
CREATE TABLE IF NOT EXISTS steps (
    run_id TEXT NOT NULL REFERENCES runs(id),
    key TEXT NOT NULL,              -- call site + occurrence (+ pmap element path): stable across re-runs
    seq INTEGER NOT NULL,           -- order of starting, for traces
    parent TEXT,                    -- the enclosing step's key (a subtask's or tool call's parent)
    kind TEXT NOT NULL,             -- task | script | tool | subtask
    name TEXT NOT NULL,
    fingerprint TEXT NOT NULL,      -- of the request: a changed request is not answered from the store
    status TEXT NOT NULL,           -- started | COMPLETE | CONTINUATION | FAILED
    result TEXT,                    -- JSON of the result
    prompt_tokens INTEGER DEFAULT 0,
    completion_tokens INTEGER DEFAULT 0,
    cost_usd REAL DEFAULT 0,
    success_score REAL,
    started_at REAL NOT NULL,
    ended_at REAL,
    PRIMARY KEY (run_id, key)
);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    digest TEXT NOT NULL,
    summary TEXT NOT NULL,
    headings TEXT NOT NULL,
    identifiers TEXT NOT NULL,
    last_commit TEXT,
    indexed_at REAL NOT NULL
);
PRAGMA user_version = 1;
"""

# The batch tables runs/batches.py made on a batch's first use, before migrations (verbatim).
BATCH_TABLES = (
    """CREATE TABLE IF NOT EXISTS batches (
        id TEXT PRIMARY KEY,
        program TEXT NOT NULL,          -- the program file, as given
        program_hash TEXT NOT NULL,
        data TEXT NOT NULL,             -- the input file, or <python> for rows given from Python
        options TEXT NOT NULL,          -- JSON: total, out, data_digest, concurrency, executor
        status TEXT NOT NULL,           -- running | completed | failed | interrupted
        started_at REAL NOT NULL,
        ended_at REAL
    )""",
    """CREATE TABLE IF NOT EXISTS batch_rows (
        batch_id TEXT NOT NULL REFERENCES batches(id),
        "index" INTEGER NOT NULL,       -- 0-based, in input order
        run_id TEXT NOT NULL,
        status TEXT NOT NULL,           -- running | ok | error
        value TEXT,                     -- JSON of the final value
        error TEXT,
        tokens INTEGER DEFAULT 0,
        cost_usd REAL DEFAULT 0,
        seconds REAL DEFAULT 0,
        PRIMARY KEY (batch_id, "index")
    )""",
    "CREATE INDEX IF NOT EXISTS batch_rows_run ON batch_rows (run_id)",
)


def old_store(path: Path, with_batches: bool) -> Path:
    """A store as today's main wrote it: version 1, one completed run with a step (and a batch
    with one row naming it, when with_batches)."""
    db = sqlite3.connect(path)
    db.executescript(VERSION_1)
    db.execute(
        "INSERT INTO runs VALUES ('r1', 'main.sexp', 'h', '{\"x\": 1}', 'completed', 1.0, 2.0)",
    )
    db.execute(
        "INSERT INTO steps (run_id, key, seq, kind, name, fingerprint, status, result, cost_usd, started_at)"
        " VALUES ('r1', 'main.sexp:1:1#1', 1, 'task', 'greet', 'f', 'COMPLETE', '{}', 0.25, 1.0)"
    )
    if with_batches:
        for statement in BATCH_TABLES:
            db.execute(statement)
        db.execute(
            "INSERT INTO batches VALUES"
            " ('b1', 'main.sexp', 'h', 'in.jsonl', '{\"total\": 1}', 'completed', 1, 2)"
        )
        db.execute(
            "INSERT INTO batch_rows (batch_id, \"index\", run_id, status) VALUES ('b1', 0, 'r1', 'ok')"
        )
    db.commit()
    db.close()
    return path


def user_version(path: Path) -> int:
    db = sqlite3.connect(path)
    try:
        return int(db.execute("PRAGMA user_version").fetchone()[0])
    finally:
        db.close()


def test_a_new_store_has_every_migration(tmp_path: Path) -> None:
    store = Store(tmp_path / "store.db")
    store.close()
    assert schema.LATEST == len(schema.MIGRATIONS) >= 2
    assert user_version(tmp_path / "store.db") == schema.LATEST


@pytest.mark.parametrize("with_batches", [False, True])
def test_a_version_1_store_opens_upgrades_and_keeps_its_runs(tmp_path: Path, with_batches: bool) -> None:
    path = old_store(tmp_path / "store.db", with_batches)
    store = Store(path, create=False)
    try:
        run = store.run("r1")
        assert run is not None and run["status"] == "completed" and run["inputs"] == '{"x": 1}'
        assert store.run_cost("r1") == 0.25
        assert [step["name"] for step in store.steps("r1")] == ["greet"]
        if with_batches:  # the batch and its row are kept
            assert batches.batch_summary(store, "b1") is not None
            assert batches.batches_of_runs(store, ["r1"]) == {"r1": ("b1", 0)}
        else:  # the batch tables are there, empty, and a batch can be recorded
            assert batches.batches_of_runs(store, ["r1"]) == {}
            batches.begin_batch(store, "b2", "main.sexp", "h", "in.jsonl", {"total": 0}).close()
            assert batches.batch(store, "b2") is not None
    finally:
        store.close()
    assert user_version(path) == schema.LATEST


def test_the_sexp_command_reads_a_version_1_store(workspace: Path) -> None:
    (workspace / ".sexp").mkdir()
    old_store(workspace / ".sexp" / "store.db", with_batches=False)
    status, out, err = run_cli("runs", cwd=workspace)
    assert status == 0, err
    assert "r1" in out and "completed" in out


def test_a_store_from_a_newer_sexp_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {schema.LATEST + 1}")
    db.close()
    with pytest.raises(StoreError, match=r"written by a newer sexp \(schema"):
        Store(path, create=False)


def test_a_migration_appended_to_the_list_upgrades_an_existing_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.db"
    Store(path).close()
    extra = ("CREATE TABLE IF NOT EXISTS extra (key TEXT PRIMARY KEY)",)
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS, extra))
    monkeypatch.setattr(schema, "LATEST", len(schema.MIGRATIONS))
    store = Store(path, create=False)
    try:
        assert store.query("SELECT name FROM sqlite_master WHERE name = 'extra'")
    finally:
        store.close()
    assert user_version(path) == schema.LATEST
