"""The run store (SPEC §6): one SQLite file holding runs, their journaled steps and the file index.

The only module that imports sqlite3, and only when a store is opened (a recorded or resumed run,
a command that reads the store): a program that records no run starts without it. Every write is
its own short transaction, committed as it happens, so a run killed at any point leaves every
completed step behind. WAL lets `sexp runs` read while a run writes. One connection is shared by
a run's threads (pmap, a batch's rows) behind a lock.

Writes from many threads are committed in groups (runs/group_commit.py), each writer returning
only once its write is in; but for the records of a start (a run's, a batch row's, and a task
step's start and end, whose turns hold what it did), which are deferred: committed with the next
write, before that write's thread's own, or within a fraction of a second. A run killed before
its first step that acts may leave no trace; one that has acted has left everything before it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import StoreError
from ..redact import credentials
from . import locks, schema
from .group_commit import GroupCommit, Statements, Write

if TYPE_CHECKING:
    import sqlite3


class Store:
    """An open run store."""

    def __init__(self, path: str | Path, create: bool = True) -> None:
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise StoreError(f"no run store at '{self.path}'")
        self._lock = threading.Lock()
        self._commits = GroupCommit(self._lock, self._run_group)
        # Imported when the first store opens (a start-up saving, cli/startup.py), as the module's
        # global: every other use of it is in a method of an open store.
        global sqlite3
        import sqlite3

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=5.0, isolation_level=None, check_same_thread=False)
            self._db.row_factory = sqlite3.Row
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._migrate()
        except sqlite3.Error as err:
            raise self._error(err) from None
        except OSError as err:
            raise StoreError(f"cannot open the run store '{self.path}': {err.strerror or err}") from None

    def _migrate(self) -> None:
        """Bring the store to schema.LATEST, one migration per transaction (with its version), so
        that a crash half-way leaves a store at some version the next open carries on from; a
        store written by a newer sexp is refused."""
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > schema.LATEST:
            raise StoreError(f"the run store '{self.path}' was written by a newer sexp (schema {version})")
        for number, statements in schema.pending(version):
            with self._transaction() as db:
                if db.execute("PRAGMA user_version").fetchone()[0] >= number:
                    continue  # another process applied it meanwhile
                for statement in statements:
                    db.execute(statement)
                db.execute(f"PRAGMA user_version = {number}")

    def close(self) -> None:
        """Commit the deferred writes, then close."""
        try:
            self._commits.close()
        finally:
            with self._lock:
                self._db.close()

    def hold_run(self, run_id: str) -> locks.RunLock:
        """An exclusive lock on run_id until it is closed or this process dies (the OS drops it
        even on kill -9): a byte of the store's one lock file, `<store>.runlocks` (runs/locks.py);
        StoreError when another process (or this one) holds it."""
        return locks.hold(self._locks(), run_id)

    def run_is_held(self, run_id: str) -> bool:
        """Whether a live process (this one included) holds run_id's lock."""
        return locks.is_held(self._locks(), run_id)

    def try_hold_run(self, run_id: str) -> locks.RunLock | None:
        """run_id's lock if no live process holds it now (no waiting), else None."""
        return locks.try_hold(self._locks(), run_id)

    def sweep_locks(self) -> int:
        """Delete what an older sexp left of its lock directory, `<store>.locks` (the files no live
        process holds, then the directory once empty); how many files."""
        return locks.sweep(self.path.parent / (self.path.name + ".locks"))

    def any_run_held(self) -> bool:
        """Whether a live process records a run (or batch) in this store now."""
        return locks.any_held(self._locks())

    def _locks(self) -> Path:
        return self.path.parent / (self.path.name + ".runlocks")

    def _as_shown(self, run: dict[str, Any]) -> dict[str, Any]:
        """The run row, `interrupted` when it says running but no live process holds it (kill -9)."""
        if run.get("status") == "running" and not self.run_is_held(str(run.get("id"))):
            run["status"] = "interrupted"
        return run

    # Plumbing -------------------------------------------------------------------------------
    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        # An interrupt may land anywhere (Ctrl-C reaches the evaluating thread asynchronously):
        # whatever happens, the connection is left with no transaction open.
        try:
            self._db.execute("BEGIN IMMEDIATE")
            yield self._db
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise

    def _error(self, err: sqlite3.Error) -> StoreError:
        text = str(err)
        if "locked" in text or "busy" in text:
            return StoreError(f"the run store '{self.path}' is locked by another process; try again")
        if isinstance(err, sqlite3.DatabaseError) and ("not a database" in text or "malformed" in text):
            return StoreError(f"the run store '{self.path}' is corrupt or not a sexp store ({text})")
        return StoreError(f"run store '{self.path}': {text}")

    def write(self, sql: str, params: tuple[Any, ...] | list[Any] = (), deferred: bool = False) -> None:
        """One statement, committed before this returns (deferred: see write_soon)."""
        write = Write([(sql, [tuple(params)])])
        (self._commits.defer if deferred else self._commits.commit)(write)

    def flush(self) -> None:
        """Commit every thread's deferred writes now: for a reader on another connection."""
        self._commits.flush(everyone=True)

    def write_soon(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> None:
        """One statement, deferred (runs/group_commit.py): committed with the next write or
        within DEFER_SECONDS, for a record whose loss in a crash is harmless (a start: a run's,
        a task step's, a batch row's). Reads and close() commit it first."""
        self.write(sql, params, deferred=True)

    def write_many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        """One statement over many rows, committed together before this returns."""
        self._commits.commit(Write([(sql, rows)]))

    def write_together(self, statements: Statements) -> None:
        """Statements, each over many rows, committed before this returns: all of them or none."""
        self._commits.commit(Write(statements))

    def _run_group(self, group: list[Write]) -> None:
        """Each write of group in one transaction; a write that fails is rolled back alone (its
        savepoint) and gets its error, unless the whole transaction fails: then every write does."""
        try:
            with self._transaction() as db:
                for write in group:
                    if len(write.statements) == 1 and len(write.statements[0][1]) == 1:
                        sql, rows = write.statements[0]  # one statement fails alone in SQLite
                        try:
                            db.execute(sql, rows[0])
                        except sqlite3.Error as err:
                            write.error = self._error(err)
                        continue
                    db.execute("SAVEPOINT write")
                    try:
                        for sql, rows in write.statements:
                            db.executemany(sql, rows)
                    except sqlite3.Error as err:
                        db.execute("ROLLBACK TO write")
                        write.error = self._error(err)
                    db.execute("RELEASE write")
        except sqlite3.Error as err:  # BEGIN or COMMIT: nothing of the group is in
            for write in group:
                write.error = self._error(err)

    def vacuum(self) -> None:
        """Give the space of deleted rows back to the file system (VACUUM, then a checkpoint that
        empties the write-ahead log VACUUM filled)."""
        with self._lock:
            try:
                self._db.execute("VACUUM")
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as err:
                raise self._error(err) from None

    def query(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> list[dict[str, Any]]:
        """Rows as dicts (the deferred writes committed first: a read sees this process's writes)."""
        self._commits.flush()
        with self._lock:
            try:
                return [dict(row) for row in self._db.execute(sql, params).fetchall()]
            except sqlite3.Error as err:
                raise self._error(err) from None

    # Runs -----------------------------------------------------------------------------------
    def begin_run(self, run_id: str, program: str, program_hash: str, inputs: dict[str, Any]) -> None:
        """The run's row, deferred: a run's start records nothing it did yet (its steps that act
        commit it before acting)."""
        self.write_soon(
            """INSERT INTO runs (id, program, program_hash, inputs, status, started_at)
               VALUES (?, ?, ?, ?, ?, ?)""",
            (run_id, program, program_hash, kept_json(inputs), "running", time.time()),
        )

    def reopen_run(
        self, run_id: str, program_hash: str | None = None, inputs: dict[str, Any] | None = None
    ) -> None:
        """Mark the run running again; a forced resume records the program and inputs it now has."""
        self.write(
            """UPDATE runs SET status = 'running', ended_at = NULL,
                   program_hash = COALESCE(?, program_hash), inputs = COALESCE(?, inputs)
               WHERE id = ?""",
            (program_hash, None if inputs is None else kept_json(inputs), run_id),
        )

    def end_run(self, run_id: str, status: str) -> None:
        self.write("UPDATE runs SET status = ?, ended_at = ? WHERE id = ?", (status, time.time(), run_id))

    def run_cost(self, run_id: str) -> float:
        """What the run's steps have cost so far."""
        rows = self.query("SELECT COALESCE(SUM(cost_usd), 0) AS cost FROM steps WHERE run_id = ?", (run_id,))
        return float(rows[0]["cost"])

    def run_totals(self, run_id: str) -> tuple[int, float]:
        """The tokens and cost of a run's steps (as `sexp runs` counts them), resumed steps included."""
        rows = self.query(
            """SELECT COALESCE(SUM(prompt_tokens + completion_tokens), 0) AS tokens,
                      COALESCE(SUM(cost_usd), 0) AS cost FROM steps WHERE run_id = ?""",
            (run_id,),
        )
        return int(rows[0]["tokens"]), float(rows[0]["cost"])

    def run(self, run_id: str) -> dict[str, Any] | None:
        """The run's row; a run whose process died is `interrupted`, not `running`."""
        rows = self.query("SELECT * FROM runs WHERE id = ?", (run_id,))
        return self._as_shown(rows[0]) if rows else None

    def recent_runs(self, limit: int = 20) -> list[dict[str, Any]]:
        """The newest runs first, with their step count, tokens and cost (status as `run` gives it)."""
        rows = self.query(
            """SELECT r.*, COUNT(s.key) - COUNT(CASE WHEN s.kind = 'turn' THEN 1 END) AS steps,
                      COALESCE(SUM(s.prompt_tokens + s.completion_tokens), 0) AS tokens,
                      COALESCE(SUM(s.cost_usd), 0) AS cost_usd
               FROM runs r LEFT JOIN steps s ON s.run_id = r.id
               GROUP BY r.id ORDER BY r.started_at DESC LIMIT ?""",
            (limit,),
        )
        return [self._as_shown(row) for row in rows]

    # Steps ----------------------------------------------------------------------------------
    def step_started(
        self,
        run_id: str,
        key: str,
        seq: int,
        parent: str | None,
        kind: str,
        name: str,
        fingerprint: str,
        deferred: bool = False,
    ) -> None:
        """The started row (a re-run replaces it), committed before this returns, so before the
        step acts (a model call, a script); deferred for a step that only holds others (a task,
        whose turns commit it before they call)."""
        self.write(
            """INSERT OR REPLACE INTO steps
               (run_id, key, seq, parent, kind, name, fingerprint, status, started_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, 'started', ?)""",
            (run_id, key, seq, parent, kind, name, fingerprint, time.time()),
            deferred=deferred,
        )

    def step_completed(
        self,
        run_id: str,
        key: str,
        status: str,
        result: dict[str, Any],
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        cost_usd: float = 0.0,
        success_score: float | None = None,
        deferred: bool = False,
    ) -> None:
        """The step's end, committed before this returns (deferred: see step_started)."""
        self.write(
            """UPDATE steps SET status = ?, result = ?, prompt_tokens = ?, completion_tokens = ?,
                                cost_usd = ?, success_score = ?, ended_at = ?
               WHERE run_id = ? AND key = ?""",
            (
                status,
                kept_json(result),  # exactly, but for a credential a tool may have read
                prompt_tokens,
                completion_tokens,
                cost_usd,
                success_score,
                time.time(),
                run_id,
                key,
            ),
            deferred=deferred,
        )

    def last_seq(self, run_id: str) -> int:
        """The highest sequence number the run's steps have (0 for none): a resumed run counts on."""
        rows = self.query("SELECT MAX(seq) AS seq FROM steps WHERE run_id = ?", (run_id,))
        last = rows[0]["seq"]
        return last if isinstance(last, int) else 0

    def step(self, run_id: str, key: str) -> dict[str, Any] | None:
        rows = self.query("SELECT * FROM steps WHERE run_id = ? AND key = ?", (run_id, key))
        return rows[0] if rows else None

    def steps(self, run_id: str, turns: bool = False) -> list[dict[str, Any]]:
        """The run's steps in order; the model turns inside tasks (kept for resuming) only if asked."""
        hidden = "" if turns else " AND kind != 'turn'"
        return self.query(f"SELECT * FROM steps WHERE run_id = ?{hidden} ORDER BY seq", (run_id,))

    def success_scores(self) -> dict[str, float]:
        """The mean recorded successScore of each template that has any (for matching)."""
        rows = self.query(
            """SELECT name, AVG(success_score) AS score FROM steps
               WHERE kind = 'task' AND success_score IS NOT NULL GROUP BY name"""
        )
        return {row["name"]: float(row["score"]) for row in rows}

    # The file index (SPEC §5) ----------------------------------------------------------------
    def indexed_files(self) -> list[dict[str, Any]]:
        """What the index knows of each file: path, size, mtime_ns, digest, last_commit, indexed_at."""
        return self.query("SELECT path, size, mtime_ns, digest, last_commit, indexed_at FROM files")

    def index_files(self, rows: list[tuple[Any, ...]]) -> None:
        """Add or replace index entries: (path, size, mtime_ns, digest, summary, headings,
        identifiers, last_commit, indexed_at) each, in one transaction."""
        self.write_many(
            """INSERT OR REPLACE INTO files
               (path, size, mtime_ns, digest, summary, headings, identifiers, last_commit, indexed_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            rows,
        )

    def set_last_commits(self, commits: list[tuple[str | None, str]]) -> None:
        """Record each (last commit, path) of files whose contents are unchanged."""
        self.write_many("UPDATE files SET last_commit = ? WHERE path = ?", commits)

    def unindex_files(self, paths: list[str]) -> None:
        """Drop the index entries of paths."""
        self.write_many("DELETE FROM files WHERE path = ?", [(path,) for path in paths])

    def indexed_count(self) -> int:
        """How many files the index holds."""
        return int(self.query("SELECT COUNT(*) AS n FROM files")[0]["n"])

    def indexed_documents(self) -> list[dict[str, Any]]:
        """Every index entry's path, summary, headings and identifiers (what ranking reads)."""
        return self.query("SELECT path, summary, headings, identifiers FROM files")


def kept_json(value: Any, ensure_ascii: bool = True) -> str:
    """value as the JSON text the store keeps: exactly, but for the value of any credential the
    environment holds (a tool or script may have read one), masked as `***`. Text that only looks
    like a key is kept as it is (a resumed step must see what the first run saw); it is scrubbed
    where it is shown (runs/traces.py)."""
    secrets = credentials()

    def masked(text: str) -> str:
        for secret in secrets:
            text = text.replace(secret, "***")
        return text

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return masked(item)
        if isinstance(item, dict):
            return {walk(key): walk(inner) for key, inner in item.items()}
        if isinstance(item, (list, tuple)):
            return [walk(inner) for inner in item]
        return item

    text = json.dumps(value, default=str, ensure_ascii=ensure_ascii)
    # A string holding a secret holds it as the JSON text shows it: when none shows, none is held
    # (walking every string of a row's steps to find none was a tenth of the row's store work)
    if not any(json.dumps(secret, ensure_ascii=ensure_ascii)[1:-1] in text for secret in secrets):
        return text
    return json.dumps(walk(value), default=lambda other: masked(str(other)), ensure_ascii=ensure_ascii)
