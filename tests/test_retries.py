"""Retries and timeouts (SPEC §11.1): a rate limit or a transient provider error is sent again with
exponential backoff, at most `max_retries` times (default 4); `request_timeout` bounds each
request and a template's `<limits timeout="S">` the whole call; each retry is in the task's notes
and in `sexp trace` (and its --json). A connection the provider drops is called a connection error.

Against the local server (tests/llm_server.py), which counts the requests it receives. The first
wait is made tiny with SEXP_RETRY_BASE_DELAY, so nothing here sleeps long.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli
from llm_server import LLMServer, Scripted

import sexp_tasks

GOOD = "<output>fine</output>"
PROGRAM = '(defatom ask (instructions "Say something.") (model "openai/test-model"))\n(ask)\n'
TIMED = """<task name="slow" type="atomic">
  <description>Slow</description>
  <instructions>Take your time.</instructions>
  <limits timeout="%s"/>
</task>
"""


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[LLMServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-retries")
    monkeypatch.setenv("SEXP_RETRY_BASE_DELAY", "0.05")
    llm = LLMServer().start()
    yield llm
    llm.stop()


def ask(server: LLMServer, **settings: Any) -> Any:
    return sexp_tasks.run(PROGRAM, api_base=server.base_url, **settings)


def arrivals(server: LLMServer) -> list[float]:
    """The times the server received each request at (filled in as they come)."""
    times: list[float] = []
    server.on_request = lambda count: times.append(time.monotonic())
    return times


def test_a_rate_limit_is_retried_with_exponential_backoff_up_to_max_retries(server: LLMServer) -> None:
    server.script(Scripted(status=429))
    times = arrivals(server)
    result = ask(server, max_retries=2)
    assert len(server.requests) == 3  # the request, then 2 retries
    assert result.status == "FAILED" and result.error["reason"] == "rate_limit"
    assert "after 2 retries" in result.error["message"] and result.error["details"]["retries"] == 2
    retries = result.notes["retries"]
    assert [(r["turn"], r["retry"], r["reason"], r["delay_s"]) for r in retries] == [
        (1, 1, "rate_limit", 0.05),
        (1, 2, "rate_limit", 0.1),
    ]
    gaps = [later - earlier for earlier, later in zip(times, times[1:])]
    assert gaps[0] >= 0.05 and gaps[1] >= 0.1  # each wait twice the one before


def test_by_default_a_request_is_sent_again_at_most_4_times(server: LLMServer) -> None:
    server.script(Scripted(status=429))
    result = ask(server)
    assert len(server.requests) == 5 and len(result.notes["retries"]) == 4


def test_transient_errors_then_an_answer_complete_the_task(server: LLMServer) -> None:
    server.script(Scripted(status=429), Scripted(status=503), GOOD)
    result = ask(server)
    assert result.status == "COMPLETE" and result.content == "fine"
    assert len(server.requests) == 3
    assert [r["reason"] for r in result.notes["retries"]] == ["rate_limit", "provider_error"]


@pytest.mark.parametrize("status", [400, 401, 404])
def test_a_request_the_provider_refuses_is_not_sent_again(server: LLMServer, status: int) -> None:
    server.script(Scripted(status=status), GOOD)
    result = ask(server)
    assert result.status == "FAILED" and len(server.requests) == 1
    assert "retries" not in result.notes


def test_max_retries_0_sends_once(server: LLMServer) -> None:
    server.script(Scripted(status=500), GOOD)
    result = ask(server, max_retries=0)
    assert result.status == "FAILED" and len(server.requests) == 1


def test_request_timeout_bounds_each_request_and_a_timeout_is_retried(server: LLMServer) -> None:
    server.script(Scripted(content=GOOD, delay=5.0))
    started = time.monotonic()
    result = ask(server, request_timeout=0.5, max_retries=1)
    assert result.status == "FAILED" and result.error["reason"] == "timeout"
    assert len(server.requests) == 2 and time.monotonic() - started < 4.5
    assert [r["reason"] for r in result.notes["retries"]] == ["timeout"]


def test_a_template_timeout_ends_the_call(server: LLMServer, workspace: Path) -> None:
    (workspace / "tasks").mkdir()
    (workspace / "tasks" / "slow.xml").write_text(TIMED % "1")
    server.script(Scripted(content=GOOD, delay=6.0))
    started = time.monotonic()
    result = sexp_tasks.run('(slow :model "openai/test-model")', api_base=server.base_url)
    assert time.monotonic() - started < 5
    assert result.status == "FAILED" and result.error["type"] == "TASK_FAILURE"
    assert result.error["reason"] == "timeout"
    assert 'time limit (<limits timeout="1">)' in result.error["message"]
    assert len(server.requests) == 1  # no retry once the time is up


def test_a_template_timeout_stops_retries_that_would_pass_it(
    server: LLMServer, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEXP_RETRY_BASE_DELAY", "2")
    (workspace / "tasks").mkdir()
    (workspace / "tasks" / "slow.xml").write_text(TIMED % "1")
    server.script(Scripted(status=429))
    started = time.monotonic()
    result = sexp_tasks.run('(slow :model "openai/test-model")', api_base=server.base_url)
    assert time.monotonic() - started < 1.5 and len(server.requests) == 1
    assert result.status == "FAILED" and result.error["reason"] == "rate_limit"


def test_a_dropped_connection_is_called_a_connection_error(server: LLMServer) -> None:
    server.script(Scripted(drop=True))
    result = ask(server, max_retries=1)
    assert result.error["reason"] == "connection" and len(server.requests) == 2
    assert result.error["message"].startswith("connection error")
    assert "HTTP 500" not in result.error["message"]


def test_each_retry_is_in_the_trace(cli: Cli, workspace: Path, server: LLMServer) -> None:
    server.script(Scripted(status=429), Scripted(status=502), GOOD)
    (workspace / "p.sexp").write_text(PROGRAM)
    env = {"SEXP_API_BASE": server.base_url, "SEXP_RETRY_BASE_DELAY": "0.01"}
    status, _, err = cli("run", "p.sexp", env=env, run_lines=True)
    assert status == 0, err
    run_id = re.search(r"run: ([0-9a-f]{12})", err).group(1)  # type: ignore[union-attr]
    status, out, _ = cli("trace", run_id)
    assert status == 0
    lines = [line.strip("│├└─ ") for line in out.splitlines()]
    assert any(line.startswith("retry 1 (turn 1) after 0.01s: rate_limit: ") for line in lines), out
    assert any(line.startswith("retry 2 (turn 1) after 0.02s: provider_error: ") for line in lines), out
    status, out, _ = cli("trace", run_id, "--json")
    retries = json.loads(out)["steps"][0]["retries"]
    assert [(r["retry"], r["reason"]) for r in retries] == [(1, "rate_limit"), (2, "provider_error")]


def test_max_retries_and_request_timeout_are_settings(cli: Cli, workspace: Path) -> None:
    (workspace / "sexp.toml").write_text("max_retries = 2\nrequest_timeout = 30\n")
    status, out, _ = cli("config", "--json")
    shown = json.loads(out)
    assert shown["max_retries"] == {"value": 2, "source": "sexp.toml"}
    assert shown["request_timeout"] == {"value": 30, "source": "sexp.toml"}
    status, out, _ = cli("config", "--json", "--max-retries", "0", "--request-timeout", "2.5")
    shown = json.loads(out)
    assert shown["max_retries"]["value"] == 0 and shown["request_timeout"]["value"] == 2.5
    assert (
        cli("eval", "1", "--max-retries", "-1")[2].strip()
        == "error: --max-retries must be 0 or more (got -1)"
    )
    bad = cli("eval", "1", "--request-timeout", "0")[2].strip()
    assert bad == "error: --request-timeout must be a positive number of seconds (got 0.0)"
    with pytest.raises(sexp_tasks.SexpError, match="max_retries must be 0 or more"):
        sexp_tasks.Session(max_retries=-2)
