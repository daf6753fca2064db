"""A batch in `sexp runs` is one line with its counts (unless --rows), and `sexp trace BATCH_ID`
says how it was run again: resumed, rows resumed, rows retried after an error (issue 23, point 1)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import Cli, jsonl, results, write

from sexp_tasks.runs import batches
from sexp_tasks.runs.store import Store

# Row "x" fails while flag.txt says "fail": a --retry-failed resume after fixing it passes.
PROGRAM = '(if (and (= name "x") (= (read-file "flag.txt") "fail")) (error "flaky") name)\n'
BATCH_ID = re.compile(r"\Abatch: ([0-9a-f]{12})\n")


def batch(cli: Cli, workspace: Path, names: list[str], *extra: str) -> tuple[int, str]:
    write(workspace / "p.sexp", PROGRAM)
    write(workspace / "flag.txt", "fail")
    jsonl(workspace / "in.jsonl", [{"name": name} for name in names])
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl", *extra)
    found = BATCH_ID.match(err)
    assert found, err
    return status, found.group(1)


def test_a_batch_is_one_line_with_its_counts_among_the_runs(cli: Cli, workspace: Path) -> None:
    write(workspace / "alone.sexp", "(+ 1 2)\n")
    assert cli("run", "alone.sexp")[0] == 0
    status, ident = batch(cli, workspace, ["a", "x", "b", "x"])
    assert status == 1
    status, listing, err = cli("runs")
    assert (status, err) == (0, "")
    first, second = listing.splitlines()  # the batch (newest), then the run of its own; no row
    assert re.match(rf"batch {ident}  \S+ \S+  failed +2/4 ok  2 error +0 tokens +\$0\.00 .* p\.sexp$", first)
    assert second.endswith("alone.sexp") and not second.startswith("batch")
    [entry, run] = json.loads(cli("runs", "--json")[1])
    assert entry["kind"] == "batch" and entry["id"] == ident
    assert (entry["ok"], entry["error"], entry["running"], entry["total"]) == (2, 2, 0, 4)
    assert entry["status"] == "failed" and entry["cost_usd"] == 0.0 and "kind" not in run

    rows = results(workspace / "p.results.jsonl")
    listing = cli("runs", "--rows")[1].splitlines()
    assert listing[0].startswith(f"batch {ident}  ")
    assert [line.split()[0] for line in listing[1:5]] == [row["run_id"] for row in rows]


def test_limit_counts_a_batch_as_one_line(cli: Cli, workspace: Path) -> None:
    write(workspace / "alone.sexp", "(+ 1 2)\n")
    assert cli("run", "alone.sexp")[0] == 0
    batch(cli, workspace, ["a", "b", "c"])
    lines = cli("runs", "--limit", "2")[1].splitlines()
    assert len(lines) == 2 and lines[0].startswith("batch ") and lines[1].endswith("alone.sexp")
    assert len(cli("runs", "--limit", "1")[1].splitlines()) == 1


def test_rows_still_running_are_counted(cli: Cli, workspace: Path) -> None:
    """A batch killed with rows in flight: they are `running` in its line, and it is interrupted."""
    store = Store(workspace / ".sexp" / "store.db")
    held = batches.begin_batch(store, "0123456789ab", "p.sexp", "h", "in.jsonl", {"total": 3})
    batches.row_started(store, "0123456789ab", 0, "aaaaaaaaaaaa")
    batches.row_ended(store, "0123456789ab", {**_row(0, "aaaaaaaaaaaa"), "status": "ok"})
    batches.row_started(store, "0123456789ab", 1, "bbbbbbbbbbbb")
    held.close()  # the process is gone: the batch reads as interrupted
    store.close()
    [line] = cli("runs")[1].splitlines()
    assert re.match(r"batch 0123456789ab  \S+ \S+  interrupted  1/3 ok  0 error  1 running ", line), line


def test_rows_with_batch_or_prune_is_a_usage_error(cli: Cli, workspace: Path) -> None:
    message = "error: --rows lists runs: it does not go with --batch or --prune\n"
    assert cli("runs", "--rows", "--batch", "0123456789ab") == (2, "", message)
    assert cli("runs", "--rows", "--prune") == (2, "", message)


def test_trace_counts_resumes_retried_and_resumed_rows(cli: Cli, workspace: Path) -> None:
    status, ident = batch(cli, workspace, ["a", "x", "b", "x"])
    report = json.loads(cli("trace", ident, "--json")[1])
    assert (report["resumes"], report["resumed_rows"], report["retried_rows"]) == (0, 0, 0)
    assert "resumed" not in cli("trace", ident)[1]

    status, _, err = cli("batch", "p.sexp", "--resume", ident)  # the errors resume, and fail again
    assert status == 1, err
    report = json.loads(cli("trace", ident, "--json")[1])
    assert (report["resumes"], report["resumed_rows"], report["retried_rows"]) == (1, 2, 0)

    write(workspace / "flag.txt", "fine")
    status, _, err = cli("batch", "p.sexp", "--resume", ident, "--retry-failed")
    assert status == 0, err
    report = json.loads(cli("trace", ident, "--json")[1])
    assert (report["resumes"], report["resumed_rows"], report["retried_rows"]) == (2, 2, 2)
    assert report["rows"] == {"ok": 4, "total": 4}
    lines = cli("trace", ident)[1].splitlines()
    assert lines[2] == "resumed 2 times: 2 rows resumed, 2 rows retried after an error"


def _row(index: int, run_id: str) -> dict[str, object]:
    return {
        "index": index,
        "status": "ok",
        "value": None,
        "error": None,
        "run_id": run_id,
        "tokens": 0,
        "cost_usd": 0.0,
        "seconds": 0.1,
    }
