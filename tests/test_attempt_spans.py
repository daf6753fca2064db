"""One OpenTelemetry `chat` span per model a fallback chain asks (SPEC §11.4), sent over OTLP/HTTP
to the real receiver (tests/otlp_receiver.py) against the local OpenAI-compatible server: the
model that failed has a span of its own, status ERROR with its error and retries, the one that
answered one with its usage and cost, both under the task call's span; an unchained call still
has one span a turn, and a turn taken from a resumed run's journal has one too."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import killed_at_request, run_cli
from llm_server import LLMServer, Scripted

pytest.importorskip(
    "opentelemetry.sdk", reason="the otel extra is not installed (pip install 'sexp-tasks[otel]')"
)
pytest.importorskip("opentelemetry.proto", reason="opentelemetry-proto decodes what the receiver gets")

from otlp_receiver import OtlpReceiver, ReceivedSpan  # noqa: E402

import sexp_tasks  # noqa: E402

FIRST, SECOND = "openai/gpt-4o-mini", "openai/gpt-4o"
CHAIN = f'(defatom ask (instructions "Say something.") (model "{FIRST}" "{SECOND}"))\n(ask)\n'
ALONE = f'(defatom ask (instructions "Say something.") (model "{SECOND}"))\n(ask)\n'
GOOD = "<output>fine</output>"
ERROR = 2  # the protobuf Status code of an error


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch, workspace: Path) -> Iterator[OtlpReceiver]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-attempt-spans")
    monkeypatch.setenv("SEXP_RETRY_BASE_DELAY", "0.01")
    with OtlpReceiver() as running:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", running.endpoint)
        yield running


def run(server: LLMServer, program: str, **settings: object) -> dict[str, object]:
    """The program's task call's result (as a dict), its spans exported."""
    session = sexp_tasks.Session(api_base=server.base_url, **settings)  # type: ignore[arg-type]
    result = session.eval(program)
    session._runtime.close_telemetry()
    return result  # type: ignore[return-value]


def chats(receiver: OtlpReceiver) -> list[ReceivedSpan]:
    return receiver.named("chat")


def test_each_model_of_a_chain_has_its_own_chat_span(server: LLMServer, receiver: OtlpReceiver) -> None:
    server.script(Scripted(status=500), Scripted(status=500), GOOD)
    result = run(server, CHAIN, max_retries=1)
    assert result.status == "COMPLETE"  # type: ignore[attr-defined]
    failed, answered = sorted(
        chats(receiver), key=lambda span: span.attributes["gen_ai.request.model"] != FIRST
    )
    [task] = receiver.named("invoke_agent ask")
    assert receiver.parent(failed) == task and receiver.parent(answered) == task
    assert failed.name == f"chat {FIRST}" and answered.name == f"chat {SECOND}"
    assert failed.attributes["gen_ai.request.model"] == FIRST
    assert failed.status_code == ERROR and failed.attributes["error.type"] == "TASK_FAILURE"
    assert failed.attributes["sexp.error.reason"] == "provider_error" and "HTTP 500" in failed.status_message
    assert failed.attributes["sexp.retries"] == 1  # its one retry, then the next model
    assert "gen_ai.usage.input_tokens" not in failed.attributes
    assert answered.attributes["gen_ai.request.model"] == SECOND
    assert answered.attributes["gen_ai.response.model"] == "gpt-4o"
    assert answered.status_code != ERROR and "sexp.retries" not in answered.attributes
    usage = (
        answered.attributes["gen_ai.usage.input_tokens"],
        answered.attributes["gen_ai.usage.output_tokens"],
    )
    assert usage == (10, 5) and answered.attributes["sexp.cost_usd"] > 0
    assert task.status_code != ERROR and all(chat.attributes["sexp.turn"] == 1 for chat in (failed, answered))


def test_when_every_model_fails_each_has_an_error_span(server: LLMServer, receiver: OtlpReceiver) -> None:
    server.script(Scripted(status=500))
    result = run(server, CHAIN, max_retries=0)
    assert result.status == "FAILED"  # type: ignore[attr-defined]
    spans = chats(receiver)
    assert sorted(span.attributes["gen_ai.request.model"] for span in spans) == [SECOND, FIRST]
    assert all(
        span.status_code == ERROR and span.attributes["error.type"] == "TASK_FAILURE" for span in spans
    )
    [task] = receiver.named("invoke_agent ask")
    assert all(receiver.parent(span) == task for span in spans) and task.status_code == ERROR


def test_an_unchained_call_has_one_span_a_turn_with_its_retries(
    server: LLMServer, receiver: OtlpReceiver
) -> None:
    server.script(Scripted(status=500), GOOD)
    result = run(server, ALONE, max_retries=1)
    assert result.status == "COMPLETE"  # type: ignore[attr-defined]
    [chat] = chats(receiver)
    assert chat.attributes["gen_ai.request.model"] == SECOND and chat.status_code != ERROR
    assert chat.attributes["sexp.retries"] == 1 and chat.attributes["gen_ai.usage.output_tokens"] == 5


def test_a_turn_taken_from_a_resumed_run_s_journal_has_one_span(
    server: LLMServer, receiver: OtlpReceiver, workspace: Path
) -> None:
    """Killed while the second turn waits: resumed, the first turn (which fell back) comes from the
    journal, one span of the model that answered it, reused; the second turn is asked of it."""
    (workspace / "notes.txt").write_text("hello")
    (workspace / "p.sexp").write_text(CHAIN.replace("(model", '(tools "list_files") (model'))
    listing = Scripted(content=None, tool_calls=[{"name": "list_files", "arguments": {}}])
    server.script(Scripted(status=500), listing, GOOD)
    env = {"SEXP_API_BASE": server.base_url, "OTEL_EXPORTER_OTLP_ENDPOINT": ""}  # the killed run: none
    # killed at the second turn's request: the first is journaled, the task not ended
    rid = killed_at_request(server, 3, "run", "--max-retries", "0", "p.sexp", cwd=workspace, env=env)
    server.requests.clear()
    env = {**env, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}
    status, _, err = run_cli("run", "p.sexp", "--resume", rid, "--max-retries", "0", cwd=workspace, env=env)
    assert status == 0 and [request.body["model"] for request in server.requests] == ["gpt-4o"], err
    [task] = receiver.named("invoke_agent ask")
    spans = sorted(chats(receiver), key=lambda span: span.attributes["sexp.turn"])
    assert [(span.attributes["sexp.turn"], span.attributes["gen_ai.request.model"]) for span in spans] == [
        (1, SECOND),
        (2, SECOND),
    ]
    assert [span.attributes["sexp.source"] for span in spans] == ["reused", "paid"]
    assert all(receiver.parent(span) == task and span.status_code != ERROR for span in spans)
