"""Retries, timeouts and extras as SPEC §11.1 says, at each of their doors (issue 22 point 5):
`max_retries` from sexp.toml is obeyed and `--max-retries` beats it; `--request-timeout` bounds a
request; `<limits timeout>` holds per call (each call its own time, not the run's); a generation's
`extra` is in the trace (`sexp trace --full` and `--json`) as it was sent. tests/test_retries.py
and tests/test_generation_extra.py hold the rest.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Cli, scaled
from llm_server import LLMServer, Scripted

import sexp_tasks

GOOD = "<output>fine</output>"
PROGRAM = '(defatom ask (instructions "Say something.") (model "openai/test-model"))\n(ask)\n'


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[LLMServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-retry-settings")
    monkeypatch.setenv("SEXP_RETRY_BASE_DELAY", "0.01")
    llm = LLMServer().start()
    yield llm
    llm.stop()


def run_id(err: str) -> str:
    return re.search(r"run: ([0-9a-f]{12})", err).group(1)  # type: ignore[union-attr]


def test_sexp_toml_max_retries_is_obeyed_and_the_flag_beats_it(
    cli: Cli, workspace: Path, server: LLMServer
) -> None:
    (workspace / "sexp.toml").write_text("max_retries = 1\n")
    (workspace / "p.sexp").write_text(PROGRAM)
    env = {"SEXP_API_BASE": server.base_url}
    server.script(Scripted(status=503))
    status, _, err = cli("run", "p.sexp", env=env)
    assert status == 1 and len(server.requests) == 2 and "after 1 retries" in err, err
    server.requests.clear()
    status, _, err = cli("run", "p.sexp", "--max-retries", "0", env=env)
    assert status == 1 and len(server.requests) == 1, err


def test_the_request_timeout_flag_bounds_a_request(cli: Cli, workspace: Path, server: LLMServer) -> None:
    (workspace / "p.sexp").write_text(PROGRAM)
    server.script(Scripted(content=GOOD, delay=scaled(30.0)))  # far past the bound below
    started = time.monotonic()
    env = {"SEXP_API_BASE": server.base_url}
    status, _, err = cli("run", "p.sexp", "--request-timeout", "0.5", "--max-retries", "0", env=env)
    assert status == 1 and "TASK_FAILURE timeout" in err, err
    # cut off at 0.5 s, not answered after 30: the bound leaves room for start-up on a busy machine
    assert time.monotonic() - started < scaled(20) and len(server.requests) == 1


def test_a_template_time_limit_holds_per_call(server: LLMServer, workspace: Path) -> None:
    (workspace / "tasks").mkdir()
    (workspace / "tasks" / "slow.xml").write_text(
        '<task name="slow" type="atomic"><description>Slow</description>'
        '<instructions>Take your time.</instructions><limits timeout="3"/></task>'
    )
    server.script(GOOD, Scripted(content=GOOD, delay=1.8), Scripted(content=GOOD, delay=1.8))
    # a first call without a limit imports litellm (seconds on a busy machine) before the timed ones
    program = PROGRAM + '(list (slow :model "openai/test-model") (slow :model "openai/test-model"))'
    first, second = sexp_tasks.run(program, api_base=server.base_url)
    assert (first.status, second.status) == ("COMPLETE", "COMPLETE"), first.error  # 3.6 s, under 3 s each


def test_extra_is_in_the_trace_as_sent(cli: Cli, workspace: Path, server: LLMServer) -> None:
    (workspace / "p.sexp").write_text(PROGRAM)
    (workspace / "sexp.toml").write_text("[generation]\nextra = { top_k = 40, logprobs = true }\n")
    server.script(GOOD)
    status, _, err = cli("run", "p.sexp", env={"SEXP_API_BASE": server.base_url}, run_lines=True)
    assert status == 0, err
    assert server.requests[0].body["top_k"] == 40 and server.requests[0].body["logprobs"] is True
    status, out, _ = cli("trace", run_id(err), "--json")
    [step] = json.loads(out)["steps"]
    assert step["request"]["generation"]["extra"] == {"top_k": 40, "logprobs": True}
    status, out, _ = cli("trace", run_id(err), "--full")
    assert "top_k" in out and "40" in out, out
