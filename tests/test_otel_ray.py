"""A batch on Ray exports one trace (SPEC §11.4): the driver's batch span, and under it each row's
run, exported by the Ray worker that ran it (the row carries the batch span's trace context).

One local Ray (2 CPUs) for the file, started with the OTLP receiver's endpoint and a fake key in
its environment, as a cluster's machines would have them (tests/test_batch_ray.py does the same)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import wait_for
from llm_server import LLMServer

ray = pytest.importorskip("ray", reason="the Ray extra is not installed (pip install 'sexp-tasks[ray]')")
pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
pytest.importorskip("opentelemetry.proto", reason="opentelemetry-proto decodes what the receiver gets")

from local_ray import ray_for_tests  # noqa: E402
from otlp_receiver import OtlpReceiver  # noqa: E402

import sexp_tasks  # noqa: E402

pytestmark = pytest.mark.slow
KEY = "sk-fake-otel-ray-tests"
TEMPLATE = """<task name="echo" type="atomic">
  <description>Echo a value</description>
  <instructions>Echo {{x}}</instructions>
  <inputs><input name="x" type="string">the value</input></inputs>
</task>
"""
VARIABLES = ("PYTHONPATH", "OPENAI_API_KEY", "RAY_AUTH_MODE", "OTEL_EXPORTER_OTLP_ENDPOINT")


@pytest.fixture(scope="module")
def receiver() -> Iterator[OtlpReceiver]:
    """The receiver, and a local Ray whose workers export to it; both stopped after the file."""
    with OtlpReceiver() as running:
        with ray_for_tests({"OPENAI_API_KEY": KEY, "OTEL_EXPORTER_OTLP_ENDPOINT": running.endpoint}):
            yield running


def test_a_batch_s_rows_on_ray_are_under_its_batch_span(
    receiver: OtlpReceiver, server: LLMServer, workspace: Path
) -> None:
    (workspace / "tasks").mkdir()
    (workspace / "tasks" / "echo.xml").write_text(TEMPLATE)
    (workspace / "prog.sexp").write_text("(task-content (echo x))\n")
    server.answer = lambda body: str(body["messages"][-1]["content"]).upper()
    rows = sexp_tasks.batch(
        Path("prog.sexp"),
        [{"x": f"v{i}"} for i in range(3)],
        executor="ray",
        model="openai/test-model",
        api_base=server.base_url,
        quiet=True,
    )
    assert [row["status"] for row in rows] == ["ok"] * 3
    batch = wait_for(lambda: receiver.named("sexp.batch"), 30, "the driver's batch span")[-1]

    def runs_under_the_batch() -> list[Any]:
        return [run for run in receiver.named("sexp.run") if run.parent_id == batch.span_id]

    wait_for(lambda: len(runs_under_the_batch()) == 3, 30, "the three rows' runs, from the workers")
    runs = runs_under_the_batch()
    assert {run.attributes["sexp.run_id"] for run in runs} == {row["run_id"] for row in rows}
    assert {run.trace_id for run in runs} == {batch.trace_id}
    chats = [chat for chat in receiver.named("chat") if chat.trace_id == batch.trace_id]
    assert len(chats) == 3
    assert KEY.encode() not in receiver.raw()
