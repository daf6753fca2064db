"""The model call of a conversation (handler/model_call.py): answers ready without a request,
paid answers kept, the journaled turn's one key and what it keeps, and the keys earlier versions
wrote (a store's turns, a cassette's answers), still read."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, scaled, store_rows
from llm_server import LLMServer, Scripted

from sexp_tasks.handler import Cassette, Handler, HandlerConfig, HandlerServices, OutputSpec, TaskPrompt
from sexp_tasks.handler.cost import CostBudget
from sexp_tasks.handler.model_request import ModelAnswer, ModelRequest
from sexp_tasks.results import COMPLETE

READ_NOTES = Scripted(content=None, tool_calls=[{"name": "read_file", "arguments": {"path": "notes.txt"}}])
SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}}


@pytest.fixture
def server(server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> LLMServer:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-model-call")
    return server


def run(server: LLMServer, services: HandlerServices, prompt: TaskPrompt | None = None, **config: Any) -> Any:
    prompt = prompt or TaskPrompt("greet", "Say hello.", models=("openai/test-model",))
    options = {"api_base": server.base_url, "num_retries": 0, "timeout": scaled(10.0), **config}
    return Handler(HandlerConfig(**options), services).run(prompt)


def test_a_ready_answer_is_used_without_a_request_and_counted_at_no_cost(server: LLMServer) -> None:
    asked: list[ModelRequest] = []
    kept: list[Any] = []

    def ready(request: ModelRequest) -> ModelAnswer:
        asked.append(request)
        return ModelAnswer("<output>from before</output>", prompt_tokens=7, source="reused")

    budget = CostBudget(0.0000001)  # no room for a paid call: a ready answer reserves nothing
    services = HandlerServices(budget=budget, ready_answer=ready, keep_answer=lambda *pair: kept.append(pair))
    result = run(server, services)
    assert (result.status, result.content) == (COMPLETE, "from before")
    assert server.requests == [] and kept == []
    assert budget.made.calls == 1 and budget.made.cost_usd == 0.0 and result.notes["cost_usd"] == 0.0
    assert asked[0].model == "openai/test-model" and asked[0].messages[-1]["content"] == "Say hello."


def test_a_paid_answer_is_kept_with_its_request_and_the_model_that_answered(server: LLMServer) -> None:
    kept: list[tuple[ModelRequest, ModelAnswer]] = []
    services = HandlerServices(ready_answer=lambda request: None, keep_answer=lambda *pair: kept.append(pair))
    server.script("<output>paid</output>")
    assert run(server, services).content == "paid"
    [(request, answer)] = kept
    assert list(request.messages) == server.requests[0].body["messages"]
    assert (answer.source, answer.text, answer.model) == ("paid", "<output>paid</output>", "test-model")


def test_a_refused_response_format_is_replayed_as_it_was_sent(server: LLMServer, workspace: Path) -> None:
    """The cassette keeps the request as sent: recorded after the provider refused response_format,
    the replay goes on without it too, and the answer's notes say so, as the recorded run's did."""
    server.refuse_response_format = True
    server.answer = None
    server.script('{"a": 1}')
    output = OutputSpec("json", json_schema=SCHEMA, native="always")
    prompt = TaskPrompt("person", "Who?", output=output, models=("openai/refusing-model",))
    path = workspace / "refused.jsonl"
    recorded = run(server, HandlerServices(cassette=Cassette(path, "record")), prompt)
    assert recorded.status == COMPLETE and len(server.requests) == 2
    replayed = run(server, HandlerServices(cassette=Cassette(path, "replay")), prompt)
    assert replayed.parsed_content == {"a": 1} and len(server.requests) == 2
    assert replayed.notes["warnings"] == recorded.notes["warnings"] != []
    [entry] = [json.loads(line) for line in path.read_text().splitlines()]
    assert entry["reply"]["source"] == "paid" and entry["reply"]["model"] == "refusing-model"


def test_a_cassette_of_an_earlier_version_still_replays(server: LLMServer, workspace: Path) -> None:
    request = ModelRequest.build("openai/test-model", [{"role": "user", "content": "hi"}])
    old = {"key": request.legacy_cassette_key(), "model": "openai/test-model", "reply": {"content": "old"}}
    path = workspace / "old.jsonl"
    path.write_text(json.dumps(old) + "\n")
    answer, sent = Cassette(path, "replay").replay(request)
    assert (answer.text, answer.source, sent) == ("old", "replayed", request)


def reader(workspace: Path) -> None:
    (workspace / "notes.txt").write_text("remember the milk\n")
    (workspace / "p.sexp").write_text(
        '(defatom reader (instructions "Read notes.txt") (tools read_file))\n(get-field (reader) "status")\n'
    )


def turns(workspace: Path) -> list[tuple[str, dict[str, Any]]]:
    rows = store_rows(workspace, "SELECT fingerprint, result FROM steps WHERE kind = 'turn' ORDER BY seq")
    return [(key, json.loads(result)["notes"]) for key, result in rows]


def test_a_turn_is_journaled_under_its_request_fingerprint_with_its_source(
    sexp_in_process: Cli, workspace: Path, server: LLMServer
) -> None:
    reader(workspace)
    server.answer = None
    server.script(READ_NOTES, "<output>milk</output>")
    env = {"SEXP_API_BASE": server.base_url, "SEXP_MODEL": "openai/test-model"}
    status, out, err = sexp_in_process("run", "p.sexp", env=env)
    assert (status, out) == (0, '"COMPLETE"\n'), err
    for (key, notes), sent in zip(turns(workspace), server.requests, strict=True):
        request = ModelRequest.from_record(notes["request"])
        assert key == request.fingerprint()
        assert [m["role"] for m in request.messages] == [m["role"] for m in sent.body["messages"]]
        assert (notes["reply"]["source"], notes["reply"]["model"]) == ("paid", "test-model")


def test_a_turn_an_earlier_version_journaled_is_not_paid_for_again_on_resume(
    sexp_in_process: Cli, workspace: Path, server: LLMServer
) -> None:
    """A store today's main wrote keys a turn by legacy_turn_key and keeps no model or source in
    its reply: a resumed run still takes the turn from the store."""
    reader(workspace)
    server.answer = None
    server.script(READ_NOTES, Scripted(status=400, error={"message": "bad", "type": "invalid_request_error"}))
    env = {"SEXP_API_BASE": server.base_url, "SEXP_MODEL": "openai/test-model"}
    status, out, err = sexp_in_process("run", "p.sexp", env=env, run_lines=True)
    assert (status, out) == (0, '"FAILED"\n'), err
    run_id = re.search(r"^run: ([0-9a-f]{12})$", err, re.M).group(1)  # type: ignore[union-attr]
    db = sqlite3.connect(workspace / ".sexp" / "store.db")
    with db:
        for key, result in db.execute("SELECT key, result FROM steps WHERE kind = 'turn'").fetchall():
            record = json.loads(result)
            legacy = ModelRequest.from_record(record["notes"]["request"]).legacy_turn_key()
            for field in ("model", "source"):
                record["notes"].get("reply", {}).pop(field, None)
            db.execute(
                "UPDATE steps SET fingerprint = ?, result = ? WHERE key = ?",
                (legacy, json.dumps(record), key),
            )
    db.close()
    server.script("<output>milk</output>")
    status, out, err = sexp_in_process("run", "--resume", run_id, "p.sexp", env=env)
    assert (status, out) == (0, '"COMPLETE"\n'), err
    assert len(server.requests) == 3  # the tool call's turn once; the failed turn again
    assert server.requests[2].body["messages"][-1]["role"] == "tool"
