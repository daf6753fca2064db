"""Ctrl-C of `sexp run --otel` during a plain model call (no pmap): the evaluating thread is
blocked in the model's HTTP read and does not stop within the interrupt grace, yet the run's
span (status interrupted) and its open task and chat spans are exported (SPEC §11.4)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import scaled, wait_for, write
from llm_server import LLMServer, Scripted

pytest.importorskip(
    "opentelemetry.sdk", reason="the otel extra is not installed (pip install 'sexp-tasks[otel]')"
)
pytest.importorskip("opentelemetry.proto", reason="opentelemetry-proto decodes what the receiver gets")

from otlp_receiver import OtlpReceiver  # noqa: E402
from test_otel import interrupted_at_the_model_call  # noqa: E402

KEY = "sk-fake-otel-interrupt-0123456789"
ERROR = 2  # the protobuf Status code of an error

TEMPLATE = """<task name="slowt" type="atomic">
  <description>Answer slowly</description>
  <instructions>Say something</instructions>
</task>
"""


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as running:
        yield running


def test_ctrl_c_during_a_plain_model_call_sends_the_open_spans(
    workspace: Path, receiver: OtlpReceiver, server: LLMServer
) -> None:
    write(workspace / "tasks" / "slowt.xml", TEMPLATE)
    write(workspace / "p.sexp", "(define x (slowt))\n")
    server.script(Scripted(delay=scaled(30)))  # far longer than the interrupt grace
    err = interrupted_at_the_model_call(workspace, server, receiver, KEY)
    run = wait_for(lambda: receiver.named("sexp.run"), 5, "the run's span")[0]
    assert run.status_code == ERROR and run.attributes["error.type"] == "interrupted"
    task = receiver.named("invoke_agent slowt")
    chat = receiver.named("chat openai/test-model")
    assert len(task) == 1 and len(chat) == 1
    assert receiver.parent(task[0]) == run and receiver.parent(chat[0]) == task[0]
    for span in (task[0], chat[0]):
        assert span.status_code == ERROR and span.attributes["error.type"] == "interrupted"
    assert KEY not in repr(receiver.named("sexp.run")) + err
