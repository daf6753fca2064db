"""`model` ranks the same from every front door (SPEC §11.1): a call's own `(model ...)` beats
everything; `--model` (run's, eval's, `tasks render`'s), the API's `model=` and the REPL's `:model`
beat a template's `<model>`; SEXP_MODEL and sexp.toml's `model` lose to it. Checked on the model
of the requests the local server (tests/llm_server.py) received, or that `tasks render` shows.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from conftest import Cli, write
from llm_server import LLMServer

import sexp_tasks
from sexp_tasks.config import Settings
from sexp_tasks.repl.replies import Printed
from sexp_tasks.repl.session import Session as ReplSession

TEMPLATE = """<task name="greet" type="atomic">
  <description>Greet</description>
  <model>openai/from-template</model>
  <instructions>Say hi.</instructions>
</task>
"""


@pytest.fixture
def llm(server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> LLMServer:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-model-rank")
    server.script("<output>hi</output>")
    return server


@pytest.fixture
def greet(workspace: Path) -> Path:
    """A program that calls the template greet (whose <model> is openai/from-template)."""
    write(workspace / "tasks" / "greet.xml", TEMPLATE)
    return write(workspace / "p.sexp", "(task-content (greet))\n")


def models(server: LLMServer) -> list[str]:
    return [request.body["model"] for request in server.requests]


def test_the_api_model_beats_a_templates_model(llm: LLMServer, greet: Path) -> None:
    session = sexp_tasks.Session(model="openai/from-api", api_base=llm.base_url)
    assert session.eval("(task-content (greet))") == "hi"
    sexp_tasks.run_file(greet, model="openai/from-run-file", api_base=llm.base_url)
    assert models(llm) == ["from-api", "from-run-file"]
    assert (session.settings.model, session.settings.model_override) == (None, "openai/from-api")


def test_the_model_flag_beats_a_templates_model(llm: LLMServer, greet: Path, sexp_in_process: Cli) -> None:
    environment = {"SEXP_API_BASE": llm.base_url}
    status, out, err = sexp_in_process("run", "p.sexp", "--model", "openai/from-flag", env=environment)
    assert (status, out) == (0, '"hi"\n'), err
    status, _, err = sexp_in_process("eval", "(greet)", "--model", "openai/from-eval", env=environment)
    assert status == 0, err
    assert models(llm) == ["from-flag", "from-eval"]


def test_sexp_model_and_sexp_toml_lose_to_a_templates_model(
    llm: LLMServer, greet: Path, workspace: Path, sexp_in_process: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(workspace / "sexp.toml", 'model = "openai/from-toml"\n')
    assert sexp_in_process("run", "p.sexp", env={"SEXP_API_BASE": llm.base_url})[0] == 0
    sexp_tasks.run("(greet)", api_base=llm.base_url)
    monkeypatch.setenv("SEXP_MODEL", "openai/from-environment")
    assert sexp_in_process("run", "p.sexp", env={"SEXP_API_BASE": llm.base_url})[0] == 0
    sexp_tasks.run("(greet)", api_base=llm.base_url)
    assert models(llm) == ["from-template"] * 4


def test_a_call_sites_model_beats_every_door(
    llm: LLMServer, greet: Path, workspace: Path, sexp_in_process: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(workspace / "sexp.toml", 'model = "openai/from-toml"\n')
    monkeypatch.setenv("SEXP_MODEL", "openai/from-environment")
    call = '(task-content (greet :model "openai/from-call"))'
    flags = ("--model", "openai/from-flag")
    assert sexp_in_process("eval", call, *flags, env={"SEXP_API_BASE": llm.base_url})[0] == 0
    assert sexp_tasks.run(call, model="openai/from-api", api_base=llm.base_url) == "hi"
    repl = ReplSession(Settings(api_base=llm.base_url), out=io.StringIO(), err=io.StringIO())
    try:
        repl.submit(":model openai/from-repl")
        assert repl.submit(call) == Printed('"hi"')
    finally:
        repl.close()
    assert models(llm) == ["from-call"] * 3


def test_the_repls_model_command_ranks_as_the_flag(llm: LLMServer, greet: Path) -> None:
    repl = ReplSession(Settings(api_base=llm.base_url), out=io.StringIO(), err=io.StringIO())
    try:
        assert repl.submit("(task-content (greet))") == Printed('"hi"')
        assert repl.submit(":model openai/from-repl") == Printed("model: openai/from-repl")
        assert repl.submit("(task-content (greet))") == Printed('"hi"')
        # one settings object in force: the session's is its runtime's and its task system's
        assert repl.settings is repl.runtime.settings is repl.runtime.tasks.settings
        assert repl.settings.sources["model_override"] == "flag"
    finally:
        repl.close()
    assert models(llm) == ["from-template", "from-repl"]


def test_tasks_render_takes_the_model_flag_as_run_does(greet: Path, sexp_in_process: Cli) -> None:
    status, out, err = sexp_in_process("tasks", "render", "greet", "--json")
    assert status == 0, err
    assert json.loads(out)["model"] == "openai/from-template"
    status, out, err = sexp_in_process("tasks", "render", "greet", "--json", "--model", "openai/from-flag")
    assert status == 0, err
    assert json.loads(out)["model"] == "openai/from-flag"
