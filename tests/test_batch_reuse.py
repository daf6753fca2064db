"""`sexp batch --reuse BATCH_ID` (the cookbook's evaluation of a template change): a new batch whose
row i is a new run answering the model requests BATCH_ID's row i also made from its record, so
only the changed calls are sent."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from conftest import Cli, jsonl, results, write
from llm_server import LLMServer, Scripted

import sexp_tasks

TEMPLATES = (
    '(defatom outline (params (topic str)) (instructions "Outline {{topic}}"))\n'
    '(defatom title (params (text str)) (instructions "TITLE_PROMPT {{text}}"))\n'
)
PROGRAM = (
    TEMPLATES
    + "(define (long value row) (if (> (length value) 3) 1 0))\n"
    + "(task-content (title :text (task-content (outline :topic topic))))\n"
)
BATCH = re.compile(r"\Abatch: ([0-9a-f]{12})\n")


def answer(body: dict[str, Any]) -> Scripted:
    prompt = str(body["messages"][-1]["content"])
    return Scripted("<output>Better title</output>" if "Name it" in prompt else "<output>hi</output>")


def environment(server: LLMServer) -> dict[str, str]:
    server.answer = answer
    return {
        "SEXP_API_BASE": server.base_url,
        "SEXP_MODEL": "openai/gpt-4o-mini",
        "OPENAI_API_KEY": "sk-fake-reuse",
    }


def test_a_new_batch_reusing_another_sends_only_the_changed_calls(
    cli: Cli, workspace: Path, server: LLMServer
) -> None:
    env = environment(server)
    write(workspace / "p.sexp", PROGRAM.replace("TITLE_PROMPT", "Title"))
    jsonl(workspace / "in.jsonl", [{"topic": "cats"}, {"topic": "dogs"}])
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl", "--score", "long", env=env)
    assert status == 0, err
    first = BATCH.match(err)
    assert first and err.splitlines()[-1] == "score: long mean 0 min 0 max 0 n 2"
    assert len(server.requests) == 4

    write(workspace / "p.sexp", PROGRAM.replace("TITLE_PROMPT", "Name it"))  # the title prompt changes
    args = ("batch", "p.sexp", "--data", "in.jsonl", "--score", "long", "--reuse", first.group(1))
    status, _, err = cli(*args, env=env)
    assert status == 0, err
    second = BATCH.match(err)
    assert second and second.group(1) != first.group(1)
    assert len(server.requests) == 6  # the two titles; the outlines were reused
    assert re.search(r" 2/2 ok, \d+ tokens, \$[\d.]+, [\d.]+ s, 2 reused\n", err), err
    assert err.splitlines()[-1] == "score: long mean 1 min 1 max 1 n 2"
    assert [row["value"] for row in results(workspace / "p.results.jsonl")] == ["Better title"] * 2


def test_python_reuse_and_the_summary(workspace: Path, server: LLMServer, monkeypatch: Any) -> None:
    for name, value in environment(server).items():
        monkeypatch.setenv(name, value)
    write(workspace / "p.sexp", PROGRAM.replace("TITLE_PROMPT", "Title"))
    rows = [{"topic": "cats"}]
    first = sexp_tasks.batch("p.sexp", rows, quiet=True)
    assert first.summary.reused is None and len(server.requests) == 2
    again = sexp_tasks.batch("p.sexp", rows, reuse=first.summary.batch_id, quiet=True)
    assert again.summary.reused == 2 and len(server.requests) == 2  # nothing changed: nothing sent
    assert again[0]["run_id"] != first[0]["run_id"]


def test_reuse_with_resume_or_of_an_unknown_batch_is_a_usage_error(cli: Cli, workspace: Path) -> None:
    write(workspace / "p.sexp", "(+ 1 2)\n")
    jsonl(workspace / "in.jsonl", [{"x": 1}])
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl", "--reuse", "0123456789ab")
    assert status == 2 and "unknown batch '0123456789ab'" in err
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl")
    assert status == 0
    ident = BATCH.match(err).group(1)  # type: ignore[union-attr]
    status, _, err = cli("batch", "p.sexp", "--data", "in.jsonl", "--reuse", "0123456789ab")
    assert (status, err) == (2, "error: unknown batch '0123456789ab' in .sexp/store.db\n")
    status, _, err = cli("batch", "p.sexp", "--resume", ident, "--reuse", ident)
    assert (status, err) == (2, "error: --reuse starts a new batch: it does not go with --resume\n")
