"""Each model a fallback chain asks is an attempt of its own (SPEC §11.4): one OpenTelemetry
`chat` span per model asked, the failed one with status ERROR, under the task call's span; and a
resumed run keeps the notes (usage, cost, fallbacks, retries) its journaled turns had, and shows
them in `sexp trace`, without asking any model again.

Against the local server (tests/llm_server.py): both models of the chain point at it, told apart
by the "model" of the body it received.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, killed_at_request
from llm_server import LLMServer, Scripted

FIRST, SECOND = "openai/gpt-4o-mini", "openai/gpt-4o"
GOOD = "<output>fine</output>"
CHAIN = f'(defatom ask (instructions "Say something.") (model "{FIRST}" "{SECOND}"))\n(ask)\n'
# a conversation of two turns: a tool call, then the answer
LOOKING = CHAIN.replace("(model", '(tools "list_files") (model')
LISTING = Scripted(content=None, tool_calls=[{"name": "list_files", "arguments": {}}])
NOTED = ("model", "usage", "cost_usd", "fallbacks", "retries")


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[LLMServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-attempts")
    monkeypatch.setenv("SEXP_RETRY_BASE_DELAY", "0.01")
    llm = LLMServer().start()
    yield llm
    llm.stop()


def run_id(err: str) -> str:
    found = re.search(r"run: ([0-9a-f]{12})", err)
    assert found, err
    return found.group(1)


def asked(server: LLMServer) -> list[str]:
    """The model each request the server received asked, in order."""
    return [request.body["model"] for request in server.requests]


def noted(notes: dict[str, Any]) -> dict[str, Any]:
    """What a call's notes say it used and which models failed (not its latency, which varies)."""
    return {key: notes.get(key) for key in NOTED}


def trace_lines(cli: Cli, rid: str) -> list[str]:
    """The retry and fallback lines of `sexp trace rid`."""
    status, out, err = cli("trace", rid)
    assert status == 0, err
    lines = [line.strip("│├└─ ") for line in out.splitlines()]
    return [line for line in lines if line.startswith(("retry", "fallback"))]


def test_a_resumed_run_keeps_the_notes_of_a_turn_that_fell_back(
    cli: Cli, workspace: Path, server: LLMServer
) -> None:
    """Killed after the first turn (which fell back after a retry) was journaled and before its
    task ended: the resumed task takes the turn from the journal, with every note it had."""
    (workspace / "notes.txt").write_text("hello")
    (workspace / "p.sexp").write_text(LOOKING)
    env = {"SEXP_API_BASE": server.base_url}
    server.script(Scripted(status=500), Scripted(status=500), LISTING, GOOD)
    status, out, err = cli("run", "p.sexp", "--max-retries", "1", "--json", env=env, run_lines=True)
    assert status == 0, err
    whole = json.loads(out)["notes"]
    assert [note["model"] for note in whole["fallbacks"]] == [FIRST] and whole["cost_usd"] > 0
    whole_lines = trace_lines(cli, run_id(err))
    assert len(whole_lines) == 2, whole_lines  # the retry, the fallback

    server.requests.clear()
    server.script(Scripted(status=500), Scripted(status=500), LISTING, GOOD)
    # killed at the second turn's request: the first is journaled, the task not ended
    rid = killed_at_request(server, 4, "run", "--max-retries", "1", "p.sexp", cwd=workspace, env=env)
    server.requests.clear()
    server.script(GOOD)
    status, out, err = cli("run", "p.sexp", "--resume", rid, "--max-retries", "1", "--json", env=env)
    assert status == 0, err
    assert asked(server) == ["gpt-4o"]  # the second turn only: the first is not paid for again
    assert noted(json.loads(out)["notes"]) == noted(whole)
    assert trace_lines(cli, rid) == whole_lines


def test_a_cassette_replays_the_fallback_with_its_retries(
    cli: Cli, workspace: Path, server: LLMServer
) -> None:
    (workspace / "p.sexp").write_text(CHAIN)
    server.script(Scripted(status=500), Scripted(status=500), Scripted(status=503), GOOD)
    env = {"SEXP_API_BASE": server.base_url}
    status, out, err = cli("run", "p.sexp", "--max-retries", "1", "--record", "c.jsonl", "--json", env=env)
    assert status == 0, err
    recorded = json.loads(out)["notes"]
    assert len(recorded["retries"]) == 2 and recorded["fallbacks"][0]["retries"] == 1
    server.requests.clear()
    status, replayed, err = cli("run", "p.sexp", "--replay", "c.jsonl", "--json", env=env)
    assert status == 0 and server.requests == [], err
    assert noted(json.loads(replayed)["notes"]) == noted(recorded)
