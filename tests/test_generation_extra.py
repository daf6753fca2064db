"""Generation `extra` (SPEC §11.1): a dict of settings sent to the provider as they are (`top_k`,
`logprobs`, Anthropic's `thinking` ...), from sexp.toml, a template's `<extra>` (a JSON object),
defatom and a call, merged key by key. A setting the provider does not take warns once (ours, not
litellm's own log line too), and sexp.toml refuses a non-finite number (nan, inf) at its line.

Real `sexp` processes and the Python API against the local server (tests/llm_server.py), which
records each request's body.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Cli
from llm_server import LLMServer

import sexp_tasks

TEMPLATE = """<task name="echo" type="atomic">
  <description>Echo</description>
  <instructions>Say hi.</instructions>
  <generation>%s</generation>
</task>
"""


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[LLMServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-extra")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-extra")
    llm = LLMServer().start()
    llm.script("<output>hi</output>")
    yield llm
    llm.stop()


def env(server: LLMServer) -> dict[str, str]:
    return {"SEXP_API_BASE": server.base_url, "SEXP_MODEL": "openai/test-model"}


def template(workspace: Path, generation: str) -> None:
    (workspace / "tasks").mkdir(exist_ok=True)
    (workspace / "tasks" / "echo.xml").write_text(TEMPLATE % generation)


def test_extra_settings_reach_the_provider_unchanged_merged_key_by_key(
    cli: Cli, workspace: Path, server: LLMServer
) -> None:
    (workspace / "sexp.toml").write_text(
        '[generation]\ntemperature = 0.5\nextra = {top_k = 40, seed_mode = "x"}\n'
    )
    template(workspace, '<extra>{"logprobs": true, "top_logprobs": 2, "top_k": 20}</extra>')
    (workspace / "p.sexp").write_text('(echo :generation {"extra" {"top_k" 5 "custom" {"a" (list 1 2)}}})\n')
    status, _, err = cli("run", "p.sexp", env=env(server))
    assert status == 0, err
    body = server.requests[0].body
    assert body["temperature"] == 0.5 and body["top_k"] == 5 and body["seed_mode"] == "x"
    assert body["logprobs"] is True and body["top_logprobs"] == 2 and body["custom"] == {"a": [1, 2]}
    assert "extra" not in body and "allowed_openai_params" not in body


def test_defatom_and_the_python_api_take_extra(server: LLMServer) -> None:
    program = '(defatom hi (instructions "Hi.") (generation (extra {"top_k" 3})))\n(hi)\n'
    sexp_tasks.run(program, model="openai/test-model", api_base=server.base_url)
    sexp_tasks.run(
        program, model="openai/test-model", api_base=server.base_url, generation={"extra": {"min_p": 0.1}}
    )
    assert server.requests[0].body["top_k"] == 3
    assert (server.requests[1].body["top_k"], server.requests[1].body["min_p"]) == (3, 0.1)


def test_extra_is_sent_even_where_litellm_would_drop_it(server: LLMServer) -> None:
    thinking = {"type": "enabled", "budget_tokens": 1024}
    program = '(defatom hi (instructions "Hi."))\n(hi)\n'
    model = "anthropic/claude-3-5-haiku-latest"  # litellm drops `thinking` for it
    sexp_tasks.run(
        program, model=model, api_base=server.base_url, generation={"extra": {"thinking": thinking}}
    )
    assert server.requests[0].body["thinking"] == thinking


def test_a_bad_extra_is_refused_before_any_request(cli: Cli, workspace: Path, server: LLMServer) -> None:
    program = '(defatom hi (instructions "Hi."))\n(hi :generation {"extra" (list 1)})\n'
    (workspace / "p.sexp").write_text(program)
    status, out, err = cli("run", "p.sexp", "--json", env=env(server))
    assert "extra must be a dict" in out + err and server.requests == []
    template(workspace, "<extra>[1, 2]</extra>")
    (workspace / "p.sexp").write_text("(echo)\n")
    status, out, err = cli("run", "p.sexp", env=env(server))
    assert status != 0 and "extra must be a dict (in a template, a JSON object)" in err, err
    with pytest.raises(sexp_tasks.SexpError, match="extra may not set 'model'"):
        sexp_tasks.Session(generation={"extra": {"model": "x"}})


def test_a_setting_the_provider_does_not_take_warns_once(
    cli: Cli, workspace: Path, server: LLMServer
) -> None:
    (workspace / "p.sexp").write_text(
        '(defatom hi (instructions "Hi."))\n(hi :generation {"reasoning_effort" "low"})\n'
    )
    status, _, err = cli("run", "p.sexp", "--model", "openai/gpt-4o-mini", env=env(server))
    assert status == 0, err
    assert "reasoning_effort" not in server.requests[0].body
    said = [line for line in err.splitlines() if "reasoning_effort" in line]
    assert said == ["warning: hi: openai/gpt-4o-mini does not take reasoning_effort; not sent"], err
    assert "LiteLLM" not in err


@pytest.mark.parametrize(
    ("toml", "error"),
    [
        (
            'model = "m"\n[generation]\nmax_tokens = 5\ntemperature = nan\n',
            "error: sexp.toml:4: [generation] temperature must be a finite number (got nan)",
        ),
        (
            "generation = {top_p = inf}\n",
            "error: sexp.toml:1: [generation] top_p must be a finite number (got inf)",
        ),
        (
            "[generation]\nextra = {top_k = -inf}\n",
            "error: sexp.toml:2: [generation.extra] top_k must be a finite number (got -inf)",
        ),
    ],
)
def test_sexp_toml_refuses_non_finite_numbers_at_their_line(
    cli: Cli, workspace: Path, toml: str, error: str
) -> None:
    (workspace / "sexp.toml").write_text(toml)
    status, out, err = cli("eval", "(+ 1 2)")
    assert (status, out, err.strip()) == (2, "", error)


def test_the_api_refuses_a_non_finite_temperature() -> None:
    with pytest.raises(sexp_tasks.SexpError, match="temperature must be a finite number, got nan"):
        sexp_tasks.Session(generation={"temperature": float("nan")})
