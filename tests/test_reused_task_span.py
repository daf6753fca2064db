"""A task call a resumed run takes whole from its journal still has its `invoke_agent` span,
carrying its step and `sexp.reused` (it had neither: they were set only where the task ran)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import killed_at_request, run_cli
from llm_server import LLMServer

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
pytest.importorskip("opentelemetry.proto", reason="opentelemetry-proto decodes what the receiver gets")

from otlp_receiver import OtlpReceiver  # noqa: E402

PROGRAM = """(defatom first (instructions "Say one.") (model "openai/test-model"))
(defatom second (instructions "Say two.") (model "openai/test-model"))
(first)
(second)
"""


def test_a_task_taken_from_the_journal_has_a_span_with_its_step_marked_reused(
    server: LLMServer, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-reused-span")
    with OtlpReceiver() as receiver:
        resumed(server, workspace, receiver)
        [first] = receiver.named("invoke_agent first")
        [second] = receiver.named("invoke_agent second")
    assert first.attributes["sexp.reused"] is True
    assert first.attributes["sexp.step"] and first.attributes["sexp.step"] != second.attributes["sexp.step"]
    assert not second.attributes.get("sexp.reused")


def resumed(server: LLMServer, workspace: Path, receiver: OtlpReceiver) -> None:
    """The program run, killed when its second task asks, then resumed with spans exported."""
    server.answer = lambda body: "<output>said</output>"
    (workspace / "p.sexp").write_text(PROGRAM)
    env = {"SEXP_API_BASE": server.base_url, "OTEL_EXPORTER_OTLP_ENDPOINT": ""}  # the killed run: none
    # killed at the second task's request: the first task is journaled whole
    rid = killed_at_request(server, 2, "run", "p.sexp", cwd=workspace, env=env)
    server.requests.clear()
    env = {**env, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}
    status, _, err = run_cli("run", "p.sexp", "--resume", rid, cwd=workspace, env=env)
    assert status == 0 and len(server.requests) == 1, err  # only the second task is asked
