"""The Python API's settings rank as the command-line flags of the same names (SPEC §11.1):
`Session(model=)` (and `run`, `run_file`, `batch`'s) beats a template's `<model>` as `--model`
does, `templates=` adds directories as `--templates` does, and `generation=` adds to sexp.toml's
`[generation]` key by key. Checked on the requests the local server (tests/llm_server.py) received.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Cli
from llm_server import LLMServer

import sexp_tasks

TEMPLATE = """<task name="%s" type="atomic">
  <description>Greet</description>
  <model>openai/template-model</model>
  <instructions>Say hi.</instructions>
</task>
"""


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[LLMServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-rank")
    llm = LLMServer().start()
    llm.script("<output>hi</output>")
    yield llm
    llm.stop()


@pytest.fixture
def greet(workspace: Path) -> Path:
    (workspace / "tasks").mkdir()
    (workspace / "tasks" / "greet.xml").write_text(TEMPLATE % "greet")
    program = workspace / "p.sexp"
    program.write_text("(greet)\n")
    return program


def models(server: LLMServer) -> list[str]:
    return [request.body["model"] for request in server.requests]


def test_session_model_beats_a_templates_model_as_the_flag_does(
    server: LLMServer, greet: Path, cli: Cli
) -> None:
    status, _, err = cli(
        "run", "p.sexp", "--model", "openai/flag-model", env={"SEXP_API_BASE": server.base_url}
    )
    assert status == 0, err
    session = sexp_tasks.Session(model="openai/api-model", api_base=server.base_url)
    assert session.eval("(greet)").status == "COMPLETE"
    sexp_tasks.run("(greet)", model="openai/run-model", api_base=server.base_url)
    sexp_tasks.run_file(greet, model="openai/file-model", api_base=server.base_url)
    rows = sexp_tasks.batch(greet, [{"n": 1}], model="openai/batch-model", api_base=server.base_url)
    assert rows[0]["status"] == "ok", rows
    assert models(server) == ["flag-model", "api-model", "run-model", "file-model", "batch-model"]


def test_without_model_the_template_wins_over_sexp_toml(
    server: LLMServer, greet: Path, workspace: Path
) -> None:
    (workspace / "sexp.toml").write_text('model = "openai/toml-model"\n')
    sexp_tasks.run("(greet)", api_base=server.base_url)
    assert models(server) == ["template-model"]


def test_a_call_site_model_still_beats_the_sessions(server: LLMServer, greet: Path) -> None:
    sexp_tasks.run('(greet :model "openai/call-model")', model="openai/api-model", api_base=server.base_url)
    assert models(server) == ["call-model"]


def test_session_templates_add_to_sexp_toml_as_the_flag_does(server: LLMServer, workspace: Path) -> None:
    for name in ("alpha", "beta"):
        (workspace / name).mkdir()
        (workspace / name / f"{name}.xml").write_text(TEMPLATE % name)
    (workspace / "sexp.toml").write_text('templates = ["alpha"]\n')
    value = sexp_tasks.run("(list (alpha) (beta))", templates="beta", api_base=server.base_url)
    assert [result.status for result in value] == ["COMPLETE", "COMPLETE"]


def test_session_generation_adds_to_sexp_toml_key_by_key(
    server: LLMServer, greet: Path, workspace: Path
) -> None:
    (workspace / "sexp.toml").write_text("[generation]\nmax_tokens = 77\ntemperature = 0.9\n")
    sexp_tasks.run("(greet)", generation={"temperature": 0.1}, api_base=server.base_url)
    body = server.requests[0].body
    assert (body["max_tokens"], body["temperature"]) == (77, 0.1)
