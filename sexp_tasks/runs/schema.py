"""The run store's whole schema: ordered, numbered migrations under SQLite's `PRAGMA user_version`.

Migration n brings a store from version n-1 to n; a store is at the version of the last
migration it has had. Opening a store applies the ones it lacks, each in one transaction with its
version, so a store written by any earlier sexp opens and upgrades, and one written by a newer
sexp (a version past the last migration here) is refused. Adding a table is one more entry
appended to MIGRATIONS; an entry, once released, is never edited.

Every CREATE is idempotent (IF NOT EXISTS): stores written before batches had a schema
version of their own hold the batch tables already, made on a batch's first use. An ALTER TABLE
... ADD COLUMN needs no such guard: a store below its migration's version never had the column.
"""

from __future__ import annotations

# 1: runs, their journaled steps and the file index (SPEC §6, §5).
RUNS_STEPS_FILES = (
    """CREATE TABLE IF NOT EXISTS runs (
        id TEXT PRIMARY KEY,
        program TEXT NOT NULL,          -- the file run, or <eval>
        program_hash TEXT NOT NULL,
        inputs TEXT NOT NULL,           -- JSON of --set bindings
        status TEXT NOT NULL,           -- running | completed | failed | interrupted
        started_at REAL NOT NULL,
        ended_at REAL
    )""",
    """CREATE TABLE IF NOT EXISTS steps (
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
    )""",
    """CREATE TABLE IF NOT EXISTS files (
        path TEXT PRIMARY KEY,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        digest TEXT NOT NULL,
        summary TEXT NOT NULL,
        headings TEXT NOT NULL,
        identifiers TEXT NOT NULL,
        last_commit TEXT,
        indexed_at REAL NOT NULL
    )""",
)

# 2: batches (SPEC §10.5), one row per input line, each naming its own recorded run.
BATCHES = (
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

# 3: the answer cache (`--cache`, `cache = true`; SPEC §11.2): completed paid answers by the
# fingerprint of their request (handler/model_request.py), for any later run.
ANSWERS = (
    """CREATE TABLE IF NOT EXISTS answers (
        fingerprint TEXT PRIMARY KEY,   -- ModelRequest.fingerprint() of the request answered
        model TEXT NOT NULL,            -- the model asked
        answer TEXT NOT NULL,           -- JSON of ModelAnswer.as_record()
        created_at REAL NOT NULL
    )""",
)

# 4: a batch's scores (`sexp batch --score`, SPEC §11.5) and how it was run again: each row's
# score as OUT gives it, the metric a plain number counts under, the scorer's error; how many
# times a row's run was resumed, and run afresh after an error (--retry-failed); how many times
# the batch was resumed. Old rows read as unscored, never resumed.
BATCH_SCORES = (
    "ALTER TABLE batch_rows ADD COLUMN score TEXT",  # JSON: a number or a dict of numbers
    "ALTER TABLE batch_rows ADD COLUMN score_name TEXT",  # the metric of a plain number (the scorer's name)
    "ALTER TABLE batch_rows ADD COLUMN score_error TEXT",
    "ALTER TABLE batch_rows ADD COLUMN resumed INTEGER DEFAULT 0",
    "ALTER TABLE batch_rows ADD COLUMN retried INTEGER DEFAULT 0",
    "ALTER TABLE batches ADD COLUMN resumes INTEGER DEFAULT 0",
)

# Migration n is MIGRATIONS[n - 1]: the statements bringing a store from version n-1 to n.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    RUNS_STEPS_FILES,
    BATCHES,
    ANSWERS,
    BATCH_SCORES,
)

LATEST = len(MIGRATIONS)  # the version of a store every migration has been applied to


def pending(version: int) -> list[tuple[int, tuple[str, ...]]]:
    """The migrations a store at version lacks, in order, each with the version it brings it to."""
    return [(number, MIGRATIONS[number - 1]) for number in range(version + 1, LATEST + 1)]
