"""Scoring a batch (SPEC §11.5): `sexp batch --score SCORER` and `sexp_tasks.batch(..., score=...)`
give each ok row a `score` (or a `score_error`), end with one `score:` line per metric, and keep
the scores in the store for `sexp trace BATCH_ID`."""

from __future__ import annotations

import asyncio
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, jsonl, results, store_rows, write

import sexp_tasks
from sexp_tasks.runs import batches, schema
from sexp_tasks.runs.batch_reading import batch_report
from sexp_tasks.runs.batch_scores import checked_score, format_score
from sexp_tasks.runs.store import Store

SCORERS = """\
(define (exact value row) (if (= value (get row "want")) 1 0))
(define (both value row) {"exact" (exact value row) "chars" (length value)})
(define (raising value row) (error "cannot judge"))
(define (wordy value row) "good")
(define (half-dict value row) {"ok" 1 "why" "fine"})
(define (not-a-number value row) (let ((big (* 1e308 10))) (- big big)))
(define (empty value row) {})
(define acc 3)
"""
PROGRAM = SCORERS + '(if (= name "boom") (error "boom") name)\n'
ROWS = [
    {"name": "a", "want": "a"},
    {"name": "bb", "want": "x"},
    {"name": "boom", "want": "boom"},  # an error row: no score, not counted
    {"name": "ccc", "want": "ccc"},
]
BATCH_ID = re.compile(r"\Abatch: ([0-9a-f]{12})\n")


def scored_batch(
    cli: Cli, workspace: Path, scorer: str, *extra: str
) -> tuple[int, str, list[dict[str, Any]]]:
    write(workspace / "p.sexp", PROGRAM)
    jsonl(workspace / "in.jsonl", ROWS)
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl", "--score", scorer, *extra)
    out = workspace / "p.results.jsonl"
    return status, err, results(out) if out.exists() else []


def ident(err: str) -> str:
    found = BATCH_ID.match(err)
    assert found, err
    return found.group(1)


def test_a_procedure_scores_every_ok_row_and_the_batch_ends_with_its_line(cli: Cli, workspace: Path) -> None:
    status, err, rows = scored_batch(cli, workspace, "exact")
    assert status == 1  # the error row
    assert [(row["status"], row["score"], row["score_error"]) for row in rows] == [
        ("ok", 1, None),
        ("ok", 0, None),
        ("error", None, None),
        ("ok", 1, None),
    ]
    assert list(rows[0]) == [
        "index",
        "status",
        "value",
        "error",
        "run_id",
        "tokens",
        "cost_usd",
        "seconds",
        "score",
        "score_error",
    ]
    lines = err.splitlines()
    assert lines[-2].startswith(f"batch: {ident(err)} 3/4 ok")
    assert lines[-1] == "score: exact mean 0.6667 min 0 max 1 n 3"


def test_a_dict_of_numbers_is_one_line_per_metric_sorted_by_name(cli: Cli, workspace: Path) -> None:
    status, err, rows = scored_batch(cli, workspace, "both")
    assert status == 1
    assert rows[1]["score"] == {"exact": 0, "chars": 2}
    assert err.splitlines()[-2:] == [
        "score: chars mean 2 min 1 max 3 n 3",
        "score: exact mean 0.6667 min 0 max 1 n 3",
    ]


def test_without_score_the_results_have_no_score_keys(cli: Cli, workspace: Path) -> None:
    write(workspace / "p.sexp", PROGRAM)
    jsonl(workspace / "in.jsonl", ROWS[:1])
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl")
    assert status == 0 and "score" not in err
    [row] = results(workspace / "p.results.jsonl")
    assert "score" not in row and "score_error" not in row


@pytest.mark.parametrize(
    ("scorer", "message"),
    [
        ("raising", r"scorer 'raising' failed: p\.sexp:3:\d+: error: cannot judge"),
        ("wordy", r"scorer 'wordy' returned \"good\" \(a string\), not a number or a dict of numbers"),
        (
            "half-dict",
            r"scorer 'half-dict' returned a dict whose 'why' is \"fine\" \(a string\), not a number",
        ),
        ("not-a-number", r"scorer 'not-a-number' returned nan, not a finite number"),
        ("empty", r"scorer 'empty' returned an empty dict: give at least one metric"),
        ("acc", r"scorer 'acc' is not a procedure"),
    ],
)
def test_a_scorer_that_fails_gives_each_row_a_score_error_and_the_batch_goes_on(
    cli: Cli, workspace: Path, scorer: str, message: str
) -> None:
    status, err, rows = scored_batch(cli, workspace, scorer)
    assert status == 1  # only the error row makes it 1: a score error leaves the row ok
    assert [row["status"] for row in rows] == ["ok", "ok", "error", "ok"]
    for row in (rows[0], rows[1], rows[3]):
        assert row["score"] is None and re.fullmatch(message, row["score_error"]), row["score_error"]
        assert "\n" not in row["score_error"]
    assert rows[2]["score_error"] is None
    assert not any(line.startswith("score: ") for line in err.splitlines())  # no metric had a row
    assert err.splitlines()[-1].startswith("score errors: 3 rows (e.g. row 0: scorer ")
    stored = store_rows(workspace, 'SELECT score, score_error FROM batch_rows ORDER BY "index"')
    assert [tuple(row) for row in stored] == [(None, row["score_error"]) for row in rows]


def test_an_unknown_scorer_is_a_usage_error_before_any_row_runs(cli: Cli, workspace: Path) -> None:
    status, err, rows = scored_batch(cli, workspace, "nope")
    assert status == 2 and rows == []
    assert err == "error: unknown scorer 'nope': the program defines no procedure of that name\n"
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl", "--score", "row")
    assert status == 2 and "unknown scorer 'row'" in err
    assert not (workspace / ".sexp" / "store.db").exists() or not store_rows(
        workspace, "SELECT * FROM batches"
    )


def test_trace_shows_the_scores_after_the_fact(cli: Cli, workspace: Path) -> None:
    _, err, _ = scored_batch(cli, workspace, "both")
    batch_id = ident(err)
    status, text, _ = cli("trace", batch_id)
    assert status == 0
    assert "score: chars mean 2 min 1 max 3 n 3\nscore: exact mean 0.6667 min 0 max 1 n 3\n" in text
    report = json.loads(cli("trace", batch_id, "--json")[1])
    exact = {"name": "exact", "mean": 2 / 3, "min": 0, "max": 1, "n": 3}
    assert report["scores"] == [{"name": "chars", "mean": 2.0, "min": 1, "max": 3, "n": 3}, exact]
    assert report["score_errors"] == {"rows": 0, "example_row": None, "example": None}
    listed = json.loads(cli("runs", "--batch", batch_id, "--json")[1])
    assert listed[0]["score"] == {"exact": 1, "chars": 1} and listed[2]["score"] is None


def test_trace_shows_the_rows_a_scorer_failed_on(cli: Cli, workspace: Path) -> None:
    _, err, _ = scored_batch(cli, workspace, "wordy")
    text = cli("trace", ident(err))[1]
    assert "score errors: 3 rows (e.g. row 0: scorer 'wordy' returned \"good\"" in text
    report = json.loads(cli("trace", ident(err), "--json")[1])
    assert report["scores"] == [] and report["score_errors"]["rows"] == 3


def test_a_resumed_batch_aggregates_all_its_ok_rows_and_scores_with_its_scorer_again(
    cli: Cli, workspace: Path
) -> None:
    """Row 2 fails, then passes on a forced resume with its input edited: the skipped rows keep their
    stored scores, and the resume (no --score given) scores with the recorded scorer."""
    status, err, _ = scored_batch(cli, workspace, "exact")
    batch_id = ident(err)
    jsonl(workspace / "in.jsonl", [*ROWS[:2], {"name": "d", "want": "d"}, ROWS[3]])
    status, _, err = cli("batch", "p.sexp", "--resume", batch_id, "--force")
    assert status == 0, err
    rows = results(workspace / "p.results.jsonl")
    assert [row["score"] for row in rows] == [1, 0, 1, 1]
    assert err.splitlines()[-1] == "score: exact mean 0.75 min 0 max 1 n 4"
    report = json.loads(cli("trace", batch_id, "--json")[1])
    assert report["scores"] == [{"name": "exact", "mean": 0.75, "min": 0, "max": 1, "n": 4}]
    assert (report["resumes"], report["resumed_rows"], report["retried_rows"]) == (1, 1, 0)


def test_python_scores_with_a_procedure_or_a_callable(workspace: Path) -> None:
    write(workspace / "p.sexp", PROGRAM)
    rows = sexp_tasks.batch("p.sexp", ROWS, score="exact", quiet=True)
    assert [row.get("score") for row in rows] == [1, 0, None, 1]
    [metric] = rows.summary.scores
    assert (metric.name, metric.n, metric.min, metric.max) == ("exact", 3, 0, 1)
    assert math.isclose(metric.mean, 2 / 3)
    assert metric.line() == "score: exact mean 0.6667 min 0 max 1 n 3"

    seen: list[tuple[Any, dict[str, Any]]] = []

    def length_ratio(value: Any, row: dict[str, Any]) -> dict[str, float]:
        seen.append((value, row))
        return {"ratio": len(value) / len(row["want"]), "long": float(len(value) > 1)}

    rows = sexp_tasks.batch("p.sexp", ROWS, score=length_ratio, quiet=True)
    assert sorted(seen, key=lambda pair: pair[0]) == [("a", ROWS[0]), ("bb", ROWS[1]), ("ccc", ROWS[3])]
    assert rows[1]["score"] == {"ratio": 2.0, "long": 1.0} and rows[2]["score"] is None
    assert [metric.name for metric in rows.summary.scores] == ["long", "ratio"]

    rows = sexp_tasks.batch("p.sexp", ROWS, score=lambda value, row: len(value), quiet=True)
    assert [(m.name, m.mean) for m in rows.summary.scores] == [("score", 2.0)]


@pytest.mark.parametrize(
    ("scorer", "message"),
    [
        (lambda value, row: 1 / 0, "scorer 'score' failed: ZeroDivisionError: division by zero"),
        (lambda value, row: float("nan"), "scorer 'score' returned nan, not a finite number"),
        (
            lambda value, row: "7",
            "scorer 'score' returned \"7\" (a string), not a number or a dict of numbers",
        ),
        (lambda value, row: {"a": None}, "scorer 'score' returned a dict whose 'a' is nil, not a number"),
        (
            lambda value, row: True,
            "scorer 'score' returned true (a boolean), not a number or a dict of numbers",
        ),
    ],
)
def test_a_python_scorer_that_fails_gives_a_score_error(workspace: Path, scorer: Any, message: str) -> None:
    write(workspace / "p.sexp", PROGRAM)
    rows = sexp_tasks.batch("p.sexp", ROWS, score=scorer, quiet=True)
    assert [row["status"] for row in rows] == ["ok", "ok", "error", "ok"]
    assert [row["score_error"] for row in rows] == [message, message, None, message]
    assert rows.summary.scores == ()


def test_python_an_unknown_scorer_raises_before_any_row_runs(workspace: Path) -> None:
    write(workspace / "p.sexp", PROGRAM)
    with pytest.raises(sexp_tasks.SexpError, match="unknown scorer 'nope'") as caught:
        sexp_tasks.batch("p.sexp", ROWS, score="nope", quiet=True)
    assert caught.value.type == "BATCH_ERROR"
    assert not (workspace / "p.results.jsonl").exists()


def test_a_scorer_that_calls_a_model_is_part_of_the_rows_run(cli: Cli, workspace: Path) -> None:
    """An LLM judge: its call is a step of the row's run, counted in the row's tokens."""
    program = (
        '(defatom judge (params (text str)) (instructions "Rate {{text}} from 0 to 1"))\n'
        "(define (judged value row) (json-parse (task-content (judge :text value))))\n"
        "name\n"
    )
    write(workspace / "p.sexp", program)
    write(workspace / "replies.json", json.dumps(["<output>0.5</output>"]))
    jsonl(workspace / "in.jsonl", ROWS[:2])
    args = ("--model", "mock/judge", "--mock-responses", "replies.json")
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl", "--score", "judged", *args)
    assert status == 0, err
    rows = results(workspace / "p.results.jsonl")
    assert [row["score"] for row in rows] == [0.5, 0.5] and all(row["tokens"] > 0 for row in rows)
    assert err.splitlines()[-1] == "score: judged mean 0.5 min 0.5 max 0.5 n 2"
    trace = cli("trace", rows[0]["run_id"])[1]
    assert "judge" in trace


def test_an_older_store_is_migrated_and_its_batches_read_as_unscored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.db"
    with monkeypatch.context() as patched:  # a store as the last sexp wrote it: no score columns
        patched.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:3])
        patched.setattr(schema, "LATEST", 3)
        store = Store(path)
        batches.begin_batch(store, "b1", "p.sexp", "h", "in.jsonl", {"total": 1}).close()
        store.write(
            """INSERT INTO batch_rows (batch_id, "index", run_id, status, value, seconds)
               VALUES ('b1', 0, 'r1', 'ok', '"a"', 0.5)"""
        )
        store.close()
    store = Store(path, create=False)
    try:
        report = batch_report(store, "b1")
        assert report is not None and report["rows"] == {"ok": 1, "total": 1}
        assert report["scores"] == [] and (report["resumes"], report["retried_rows"]) == (0, 0)
        assert batches.stored_row(store, "b1", 0, scored=True) == {
            "index": 0,
            "status": "ok",
            "value": "a",
            "error": None,
            "run_id": "r1",
            "tokens": 0,
            "cost_usd": 0,
            "seconds": 0.5,
            "score": None,
            "score_error": None,
        }
    finally:
        store.close()


def test_score_formatting_and_checks() -> None:
    assert [format_score(x) for x in (2 / 3, 1.0, 12.5, -0.00001, 1234567, -2.25)] == [
        "0.6667",
        "1",
        "12.5",
        "0",
        "1234567",
        "-2.25",
    ]
    assert checked_score(3, "s") == (3, None)
    assert checked_score({"a": 1.5}, "s") == ({"a": 1.5}, None)
    assert checked_score(float("inf"), "s") == (None, "scorer 's' returned inf, not a finite number")
    assert checked_score({1: 2}, "s")[1] == "scorer 's' returned a dict whose key 1 (int) is not a string"
    assert checked_score([1], "s")[1] == "scorer 's' returned [1] (a list), not a number or a dict of numbers"


def test_a_resume_given_another_scorer_keeps_it_for_later_resumes(cli: Cli, workspace: Path) -> None:
    _, err, _ = scored_batch(cli, workspace, "exact")
    batch_id = ident(err)
    status, _, err = cli("batch", "p.sexp", "--resume", batch_id, "--score", "both")
    assert status == 1 and err.splitlines()[-1] == "score: exact mean 0.6667 min 0 max 1 n 3"  # kept rows
    status, _, err = cli("batch", "p.sexp", "--resume", batch_id)  # the error row again, scored by both
    assert status == 1
    assert [row["score"] for row in results(workspace / "p.results.jsonl")] == [1, 0, None, 1]
    recorded = store_rows(workspace, "SELECT options FROM batches WHERE id = ?", batch_id)[0][0]
    assert json.loads(recorded)["score"] == "both"


def test_abatch_yields_each_row_with_its_score(workspace: Path) -> None:
    write(workspace / "p.sexp", PROGRAM)

    async def collect() -> list[tuple[int, Any]]:
        found = sexp_tasks.abatch("p.sexp", ROWS, score="exact", quiet=True)
        return sorted([(row["index"], row["score"]) async for row in found])

    assert asyncio.run(collect()) == [(0, 1), (1, 0), (2, None), (3, 1)]
