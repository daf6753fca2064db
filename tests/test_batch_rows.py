"""`sexp batch` rows (SPEC §11.1): the global `row`, columns that would shadow a built-in or the
program's own definitions, `--retry-failed`, positioned row errors, the input check's bounds,
and forced resumes after an edit.

Batches run as real `sexp batch` processes against mock models, or the local server in
tests/llm_server.py where requests are counted.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from conftest import Cli, jsonl, results, store_rows, write
from llm_server import LLMServer, Scripted

import sexp_tasks

SUMMARY = re.compile(r"^batch: ([0-9a-f]{12}) (\d+)/(\d+) ok, (\d+) tokens, (\$[0-9.]+), ([0-9.]+) s", re.M)
GREET = '(defatom greet (params (name string)) (instructions "Greet {{name}}"))\n'


def batch_id(err: str) -> str:
    found = SUMMARY.search(err)
    assert found, err
    return found.group(1)


def warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("warning: ")]


def server_env(server: LLMServer) -> dict[str, str]:
    return {
        "SEXP_API_BASE": server.base_url,
        "SEXP_MODEL": "openai/test-model",
        "OPENAI_API_KEY": "sk-fake-batch-rows",
    }


# Columns and built-ins ---------------------------------------------------------------------------


def test_columns_named_as_built_ins_are_not_bound_and_row_holds_every_column(
    cli: Cli, workspace: Path
) -> None:
    # format and length are primitives, get and dict are used by the library (refine), if is a
    # special form: binding any of them as a global would break the program or the library.
    write(
        workspace / "p.sexp",
        '(list (format "{}:{}" text (get row "format")) (length (list 1 2)) (get row "length")'
        ' (get row "if") (dict "a" 1) (keys row))\n',
    )
    rows = [{"text": f"t{i}", "format": "pdf", "length": 7, "get": "x", "dict": 1, "if": i} for i in range(3)]
    jsonl(workspace / "in.jsonl", rows)
    status, out, err = cli("batch", "p.sexp", "--data", "in.jsonl")
    assert (status, out) == (0, ""), err
    got = results(workspace / "p.results.jsonl")
    assert [row["value"] for row in got] == [
        [f"t{i}:pdf", 2, 7, i, {"a": 1}, ["text", "format", "length", "get", "dict", "if"]] for i in range(3)
    ]
    assert warnings(err) == [
        f"warning: column '{key}' is not bound (a built-in has that name); use (get row \"{key}\")"
        for key in ("format", "length", "get", "dict", "if")
    ]
    assert err.index("warning: ") < err.index(f"batch: {batch_id(err)} 3/3 ok")


def test_a_column_the_program_defines_is_not_bound(cli: Cli, workspace: Path) -> None:
    # Before the fix the column bound `label`, and the program's define replaced it only when it
    # ran: read before that, the global was the column's.
    write(
        workspace / "p.sexp",
        '(define seen (try label (catch e "unbound")))\n(define (label x) (str "L" x))\n'
        '(list seen (label (get row "label")) other)\n',
    )
    jsonl(workspace / "in.jsonl", [{"label": "a", "other": 1}, {"label": "b", "other": 2}])
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl")
    assert status == 0, err
    assert [row["value"] for row in results(workspace / "p.results.jsonl")] == [
        ["unbound", "La", 1],
        ["unbound", "Lb", 2],
    ]
    assert warnings(err) == [
        "warning: column 'label' is not bound (a built-in has that name); use (get row \"label\")"
    ]


def test_a_set_value_named_as_a_built_in_is_not_bound(cli: Cli, workspace: Path) -> None:
    write(workspace / "p.sexp", '(list (format "{}" x) greeting)\n')
    jsonl(workspace / "in.jsonl", [{"x": 1}])
    status, _, err = cli(
        "batch",
        "p.sexp",
        "--data",
        "in.jsonl",
        "--set-str",
        "format=pdf",
        "--set",
        "greeting=2",
        "--set",
        "if=3",
    )
    assert status == 0, err
    assert results(workspace / "p.results.jsonl")[0]["value"] == ["1", 2]
    assert warnings(err) == [
        "warning: --set 'if' is not bound (a built-in has that name)",  # --set's, then --set-str's
        "warning: --set 'format' is not bound (a built-in has that name)",
    ]


def test_a_column_named_row_is_in_row_only(cli: Cli, workspace: Path) -> None:
    write(workspace / "p.sexp", '(list (get row "row") (get row "x"))\n')
    jsonl(workspace / "in.jsonl", [{"row": 5, "x": 1}])
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl")
    assert status == 0, err
    assert results(workspace / "p.results.jsonl")[0]["value"] == [5, 1]
    assert warnings(err) == [
        "warning: column 'row' is not bound (a built-in has that name); use (get row \"row\")"
    ]


def test_the_python_entry_point_binds_rows_the_same_way(workspace: Path) -> None:
    write(workspace / "p.sexp", '(format "{}/{}" (get row "format") n)\n')
    rows = sexp_tasks.batch("p.sexp", [{"format": "pdf", "n": 1}], quiet=True)
    assert [row["value"] for row in rows] == ["pdf/1"]


# Retrying failed rows ----------------------------------------------------------------------------


def bad_answer_batch(cli: Cli, workspace: Path, server: LLMServer, good: set[str]) -> str:
    """A batch of rows a, b, c whose model answers b with nothing (INVALID_OUTPUT); its id."""
    server.answer = lambda body: (
        "<output>hi</output>" if str(body["messages"][-1]["content"])[-1] in good else "  "
    )
    write(workspace / "p.sexp", GREET + "(greet name)\n")
    jsonl(workspace / "in.jsonl", [{"name": n} for n in "abc"])
    status, _, err = cli(
        "batch", "p.sexp", "--data", "in.jsonl", "--concurrency", "1", env=server_env(server)
    )
    assert status == 1, err
    assert [row["status"] for row in results(workspace / "p.results.jsonl")] == ["ok", "error", "ok"]
    assert len(server.requests) == 3
    return batch_id(err)


def test_retry_failed_runs_the_error_rows_again_as_fresh_runs(
    cli: Cli, workspace: Path, server: LLMServer
) -> None:
    ident = bad_answer_batch(cli, workspace, server, {"a", "c"})
    before = results(workspace / "p.results.jsonl")
    server.answer = lambda body: "<output>hi</output>"  # the model would answer well now
    status, _, err = cli("batch", "p.sexp", "--resume", ident, env=server_env(server))
    assert status == 1 and len(server.requests) == 3  # a plain resume replays b's recorded answer
    assert results(workspace / "p.results.jsonl")[1]["status"] == "error"
    status, _, err = cli("batch", "p.sexp", "--resume", ident, "--retry-failed", env=server_env(server))
    assert status == 0, err
    after = results(workspace / "p.results.jsonl")
    assert [row["status"] for row in after] == ["ok", "ok", "ok"] and len(server.requests) == 4
    assert str(server.requests[-1].body["messages"][-1]["content"]).endswith("b")
    assert after[0] == before[0] and after[2] == before[2]  # ok rows are kept as they were
    assert after[1]["run_id"] != before[1]["run_id"]  # a fresh run
    assert SUMMARY.search(err).groups()[1:3] == ("3", "3")  # type: ignore[union-attr]
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl", "--retry-failed")
    assert status == 2 and err == "error: --retry-failed needs --resume BATCH_ID\n"


def test_retry_failed_from_python(
    workspace: Path, server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in server_env(server).items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(workspace)
    server.answer = lambda body: (
        "<output>hi</output>" if str(body["messages"][-1]["content"]).endswith("a") else ""
    )
    write(workspace / "p.sexp", GREET + "(greet name)\n")
    given = [{"name": "a"}, {"name": "b"}]
    rows = sexp_tasks.batch("p.sexp", given, quiet=True)
    assert [row["status"] for row in rows] == ["ok", "error"]
    ident = sqlite3.connect(workspace / ".sexp" / "store.db").execute("SELECT id FROM batches").fetchone()[0]
    server.answer = lambda body: "<output>hi</output>"
    rows = sexp_tasks.batch("p.sexp", given, resume=ident, retry_failed=True, quiet=True)
    assert [row["status"] for row in rows] == ["ok", "ok"] and len(server.requests) == 3


# Row errors -------------------------------------------------------------------------------------


def test_a_row_whose_value_is_a_failed_result_has_a_positioned_error(cli: Cli, workspace: Path) -> None:
    # docs/batch.md: `error` is `file:line:col: error: message`; the value that failed is the
    # program's last form's.
    write(workspace / "p.sexp", GREET + "(define x 1)\n  (greet name)\n")
    write(workspace / "replies.json", json.dumps(["   "]))  # an empty answer is INVALID_OUTPUT
    jsonl(workspace / "in.jsonl", [{"name": "a"}])
    args = ("--model", "mock/m", "--mock-responses", "replies.json")
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl", *args)
    [row] = results(workspace / "p.results.jsonl")
    assert status == 1 and row["status"] == "error", err
    assert row["error"].startswith("p.sexp:3:3: error: INVALID_OUTPUT"), row["error"]


# The input check's bounds ------------------------------------------------------------------------


def test_a_lone_surrogate_in_a_row_becomes_the_replacement_character(cli: Cli, workspace: Path) -> None:
    write(workspace / "p.sexp", '(list text (get d "\\ufffd"))\n')
    lines = '{"text": "a\\ud800b", "d": {"\\udfff": "\\udc00"}}\n{"text": "fine", "d": {"\\udfff": 1}}\n'
    write(workspace / "in.jsonl", lines)
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl")
    assert status == 0, err
    rows = results(workspace / "p.results.jsonl")
    assert [row["value"] for row in rows] == [["a\ufffdb", "\ufffd"], ["fine", 1]]
    assert store_rows(workspace, "SELECT COUNT(*) FROM runs")[0][0] == 2


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"x": 1e999}', "not JSON: the number 1e999 is too large (a number must be finite)"),
        ('{"x": -1E400}', "not JSON: the number -1E400 is too large (a number must be finite)"),
        ('{"x": ' + "[" * 100_000 + "]" * 100_000 + "}", "the value is nested deeper than 500 levels"),
        ('{"x": ' + '{"a": ' * 600 + "1" + "}" * 600 + "}", "the value is nested deeper than 500 levels"),
    ],
)
def test_values_no_row_could_use_are_refused_by_the_input_check(
    cli: Cli, workspace: Path, line: str, message: str
) -> None:
    write(workspace / "p.sexp", "x\n")
    write(workspace / "in.jsonl", '{"x": 1}\n' + line + "\n")
    status, out, err = cli("batch", "p.sexp", "--data", "in.jsonl")
    assert (status, out, err) == (2, "", f"in.jsonl:2: error: {message}\n")
    assert not (workspace / ".sexp").exists()


def test_deep_but_allowed_values_and_brackets_in_strings_pass(cli: Cli, workspace: Path) -> None:
    write(workspace / "p.sexp", "(length s)\n")
    deep = '{"x": ' + "[" * 499 + "]" * 499 + ', "s": "' + "[" * 1000 + '"}'
    write(workspace / "in.jsonl", deep + "\n")
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl")
    assert status == 0, err
    assert results(workspace / "p.results.jsonl")[0]["value"] == 1000


def test_a_line_longer_than_the_limit_is_refused_without_reading_it_whole(cli: Cli, workspace: Path) -> None:
    write(workspace / "p.sexp", "x\n")
    with (workspace / "in.jsonl").open("wb") as data:
        data.write(b'{"x": 1}\n')
        data.write(b"\0" * (17 * 1024 * 1024))  # no newline, as /dev/zero
    status, out, err = cli("batch", "p.sexp", "--data", "in.jsonl")
    assert (status, out) == (2, "")
    assert err == "in.jsonl:2: error: the line is longer than 16 MiB, the longest a line may be\n"


# Forced resumes after an edit --------------------------------------------------------------------


def test_a_forced_resume_reruns_every_row_whose_program_or_input_changed(
    cli: Cli, workspace: Path, server: LLMServer
) -> None:
    server.answer = lambda body: (
        "<output>hi " + str(body["messages"][-1]["content"]).split()[-1] + "</output>"
    )
    write(workspace / "p.sexp", GREET + '(str "v1 " (task-content (greet name)))\n')
    jsonl(workspace / "in.jsonl", [{"name": n} for n in "abcde"])
    env = server_env(server)
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl", "--concurrency", "1", env=env)
    assert status == 0 and len(server.requests) == 5, err
    ident = batch_id(err)
    write(workspace / "p.sexp", GREET + '(str "v2 " (task-content (greet name)))\n')
    jsonl(workspace / "in.jsonl", [{"name": n} for n in "abXd"])  # one row changed, one fewer
    status, _, err = cli("batch", "p.sexp", "--resume", ident, "--force", env=env)
    assert status == 0, err
    assert [row["value"] for row in results(workspace / "p.results.jsonl")] == [
        "v2 hi a",
        "v2 hi b",
        "v2 hi X",
        "v2 hi d",
    ]
    assert SUMMARY.search(err).groups()[1:3] == ("4", "4")  # type: ignore[union-attr]
    assert len(server.requests) == 6  # only the changed row's call: the others' are in the store
    _, listing, _ = cli("runs")
    [line] = [line for line in listing.splitlines() if line.startswith(f"batch {ident}")]
    assert "4/4 ok" in line and "completed" in line
    status, _, err = cli("batch", "p.sexp", "--resume", ident, env=env)  # the edit is the batch's now
    assert status == 0 and len(server.requests) == 6, err


# The budget in the summary -----------------------------------------------------------------------


def test_the_summary_counts_the_calls_the_budget_refused(
    cli: Cli, workspace: Path, server: LLMServer
) -> None:
    # Each call costs 0.00075 (gpt-4o-mini's prices); the rows' values are task contents, so a
    # refused call leaves its row ok: only the summary can say that calls were refused.
    server.script(Scripted("<output>hi</output>", usage={"prompt_tokens": 1000, "completion_tokens": 1000}))
    write(
        workspace / "p.sexp", GREET + "(map (lambda (i) (task-content (greet (str name i)))) (list 1 2 3))\n"
    )
    jsonl(workspace / "in.jsonl", [{"name": f"n{i}"} for i in range(4)])
    env = {**server_env(server), "SEXP_MODEL": "openai/gpt-4o-mini"}
    args = ("batch", "p.sexp", "--data", "in.jsonl", "--concurrency", "1", "--max-cost", "0.002")
    status, _, err = cli(*args, env=env)
    sent = len(server.requests)
    assert 1 <= sent < 12, err
    assert status == 0 and SUMMARY.search(err).groups()[1:3] == ("4", "4"), err  # type: ignore[union-attr]
    assert err.splitlines()[-1].endswith(f" s, {12 - sent} calls refused by the budget"), err
