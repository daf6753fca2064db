"""The Handler against the fakellm package's server, through litellm as openai/ and anthropic/."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import scaled

from sexp_tasks.handler import Handler, HandlerConfig, HandlerServices, TaskPrompt
from sexp_tasks.results import COMPLETE, FAILED

FAKELLM = Path(sys.executable).parent / "fakellm"
RULES = """\
version: 1
defaults:
  fallback: deterministic_echo
rules:
  - name: after_tool
    when:
      tool_result_contains: "fake file text"
    respond:
      content: >-
        <output>the file says: fake file text</output><notes><data_usage>read data.txt</data_usage></notes>
  - name: use_tool
    when:
      tools_include: read_file
    respond:
      tool_calls:
        - name: read_file
          arguments: {path: data.txt}
  - name: overloaded
    when:
      messages_contain: "overload"
    respond:
      status: 429
      error: "Rate limit exceeded (mock)"
  - name: hello
    when:
      messages_contain: "hello"
    respond:
      content: "<output>Hi from fakellm</output><notes><data_usage>none</data_usage></notes>"
"""

pytestmark = pytest.mark.skipif(not FAKELLM.exists(), reason="fakellm is not installed")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def fakellm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`fakellm serve` on a free port; yields its base URL; stopped (and reaped) afterwards."""
    directory = tmp_path_factory.mktemp("fakellm")
    (directory / "fakellm.yaml").write_text(RULES)
    port = free_port()
    process = subprocess.Popen(
        [str(FAKELLM), "serve", "--port", str(port), "--config", "fakellm.yaml"],
        cwd=directory,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + scaled(20)
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    error = process.stderr.read().decode() if process.stderr else ""
                    pytest.fail(f"fakellm did not start: {error}")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()
    assert process.poll() is not None  # no orphan


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-fakellm-openai")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-canary-fakellm-anthropic")


@pytest.mark.parametrize(
    ("model", "suffix"), [("openai/gpt-4o-mini", "/v1"), ("anthropic/claude-sonnet-4-5", "")]
)
def test_plain_answer(fakellm: str, model: str, suffix: str) -> None:
    config = HandlerConfig(api_base=fakellm + suffix, num_retries=0, timeout=scaled(10))
    prompt = TaskPrompt(template="t", instructions="Say hello", models=(model,))
    result = Handler(config, HandlerServices()).run(prompt)
    assert result.status == COMPLETE, result.error
    assert result.content == "Hi from fakellm" and result.notes["dataUsage"] == "none"
    assert result.notes["usage"]["prompt_tokens"] > 0


@pytest.mark.parametrize(
    ("model", "suffix"), [("openai/gpt-4o-mini", "/v1"), ("anthropic/claude-sonnet-4-5", "")]
)
def test_tool_loop(fakellm: str, model: str, suffix: str, workspace: Path) -> None:
    (workspace / "data.txt").write_text("fake file text")
    config = HandlerConfig(
        api_base=fakellm + suffix,
        num_retries=0,
        timeout=scaled(10),
        tools=("read_file",),
        workspace=workspace,
    )
    prompt = TaskPrompt(template="t", instructions=f"Read data.txt ({model})", models=(model,))
    result = Handler(config, HandlerServices()).run(prompt)
    assert result.status == COMPLETE, result.error
    assert result.content == "the file says: fake file text" and result.notes["resources"]["turns"] == 2


def test_rate_limit(fakellm: str) -> None:
    config = HandlerConfig(api_base=fakellm + "/v1", num_retries=0, timeout=scaled(10))
    prompt = TaskPrompt(template="t", instructions="overload now", models=("openai/gpt-4o-mini",))
    result = Handler(config, HandlerServices()).run(prompt)
    assert result.status == FAILED and result.error is not None and result.error.reason == "rate_limit"
    assert "sk-canary" not in str(result.to_json())
    assert os.environ["OPENAI_API_KEY"] not in result.error.message
