"""Fallback chains (SPEC §11.4): a template's several <model>s, defatom's `(model "a" "b")`, a
call's `model` list, `--model a,b` and `Session(model=[...])` name a chain; after the first model
fails with a provider error (after its retries) the next is asked with the same conversation,
which stays with it. The notes say which model answered (`model`) and which failed
(`fallbacks`); `sexp trace` shows each; the budget reserves each attempt; a budget's refusal and an
answer that fails its format do not fall back; a resumed run and a cassette's replay answer as
recorded, asking no model that failed again.

Against the local server (tests/llm_server.py): both models point at it (api_base), told apart by
the "model" of the body it received. Priced names, so that costs are not zero.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli
from llm_server import LLMServer, Scripted

import sexp_tasks
from sexp_tasks.errors import FormError, TemplateError
from sexp_tasks.syntax.reader import read
from sexp_tasks.tasks.forms.defatom import defatom_template
from sexp_tasks.tasks.template import load_templates

FIRST, SECOND = "openai/gpt-4o-mini", "openai/gpt-4o"
GOOD = "<output>fine</output>"
PROGRAM = f'(defatom ask (instructions "Say something.") (model "{FIRST}" "{SECOND}"))\n(ask)\n'
# a conversation of two turns: a tool call, then the answer
LOOKING = PROGRAM.replace("(model", '(tools "list_files") (model')


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[LLMServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-fallbacks")
    monkeypatch.setenv("SEXP_RETRY_BASE_DELAY", "0.01")
    llm = LLMServer().start()
    yield llm
    llm.stop()


def asked(server: LLMServer) -> list[str]:
    """The model each request the server received asked, in order."""
    return [request.body["model"] for request in server.requests]


def ask(server: LLMServer, program: str = PROGRAM, **settings: Any) -> Any:
    return sexp_tasks.run(program, api_base=server.base_url, **settings)


def run_id(err: str) -> str:
    return re.search(r"run: ([0-9a-f]{12})", err).group(1)  # type: ignore[union-attr]


def test_after_the_first_model_fails_its_retries_the_next_answers(server: LLMServer) -> None:
    server.script(Scripted(status=500), Scripted(status=500), GOOD)
    result = ask(server, max_retries=1)
    assert result.status == "COMPLETE" and result.content == "fine"
    assert asked(server) == ["gpt-4o-mini", "gpt-4o-mini", "gpt-4o"]  # its retry, then the next
    assert result.notes["model"] == SECOND
    [fallback] = result.notes["fallbacks"]
    assert (fallback["turn"], fallback["model"], fallback["reason"]) == (1, FIRST, "provider_error")
    assert fallback["retries"] == 1 and "HTTP 500" in fallback["error"]
    assert [(r["model"], r["reason"]) for r in result.notes["retries"]] == [(FIRST, "provider_error")]
    assert result.notes["cost_usd"] > 0  # the answer, paid at the second model's price


@pytest.mark.parametrize(
    "failing",
    [Scripted(status=429), Scripted(status=401), Scripted(status=404), Scripted(drop=True)],
    ids=["rate-limit", "authentication", "model-not-found", "connection"],
)
def test_each_provider_error_falls_back(server: LLMServer, failing: Scripted) -> None:
    server.script(failing, GOOD)
    result = ask(server, max_retries=0)
    assert result.status == "COMPLETE" and asked(server) == ["gpt-4o-mini", "gpt-4o"]


def test_a_rejected_request_does_not_fall_back(server: LLMServer) -> None:
    server.script(Scripted(status=400), GOOD)
    result = ask(server, max_retries=0)
    assert result.status == "FAILED" and result.error["reason"] == "bad_request"
    assert asked(server) == ["gpt-4o-mini"] and "fallbacks" not in result.notes


def test_when_every_model_fails_the_error_names_each(server: LLMServer) -> None:
    server.script(Scripted(status=500))
    result = ask(server, max_retries=0)
    assert result.status == "FAILED" and asked(server) == ["gpt-4o-mini", "gpt-4o"]
    message = result.error["message"]
    assert message.startswith(f"every model failed: {FIRST}: provider error (HTTP 500)")
    assert f"; {SECOND}: provider error (HTTP 500)" in message
    assert result.error["details"]["fallbacks"][0]["model"] == FIRST
    assert [note["model"] for note in result.notes["fallbacks"]] == [FIRST]


def test_a_budget_refusal_does_not_fall_back(server: LLMServer) -> None:
    server.script(GOOD)
    result = ask(server, max_cost_usd=1e-9)
    assert result.status == "FAILED" and result.error["resource"] == "cost"
    assert asked(server) == [] and "fallbacks" not in result.notes


def test_the_next_model_reserves_its_own_cost_and_may_be_refused(server: LLMServer) -> None:
    # the first model's call fits the budget; the second's (gpt-4o, ~16x the price) does not
    server.script(Scripted(status=500), GOOD)
    result = ask(server, PROGRAM, max_retries=0, max_cost_usd=0.002, generation={"max_tokens": 1000})
    assert asked(server) == ["gpt-4o-mini"]  # the second was refused before it was sent
    assert result.status == "FAILED" and result.error["resource"] == "cost"
    assert result.error["message"].startswith(f"{FIRST}: provider error (HTTP 500)")
    assert f"; then {SECOND}: " in result.error["message"]


def test_an_answer_that_fails_its_format_does_not_fall_back(server: LLMServer) -> None:
    program = (
        f'(defatom ask (instructions "JSON please.") (model "{FIRST}" "{SECOND}")'
        ' (output_format (type "json") (native "never")))\n(ask)\n'
    )
    server.script("<output>not json</output>")
    result = ask(server, program)
    assert result.status == "FAILED" and result.error["reason"] == "output_format_failure"
    assert asked(server) == ["gpt-4o-mini"]


def test_the_conversation_stays_with_the_model_that_answered(server: LLMServer, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("hello")
    program = LOOKING
    listing = Scripted(content=None, tool_calls=[{"name": "list_files", "arguments": {}}])
    server.script(Scripted(status=503), listing, GOOD)
    result = ask(server, program, max_retries=0, workspace=str(workspace))
    assert result.status == "COMPLETE" and asked(server) == ["gpt-4o-mini", "gpt-4o", "gpt-4o"]
    assert result.notes["model"] == SECOND and len(result.notes["fallbacks"]) == 1


def test_the_trace_shows_each_attempt(cli: Cli, workspace: Path, server: LLMServer) -> None:
    server.script(Scripted(status=502), GOOD)
    (workspace / "p.sexp").write_text(PROGRAM)
    env = {"SEXP_API_BASE": server.base_url, "SEXP_RETRY_BASE_DELAY": "0.01"}
    status, _, err = cli("run", "p.sexp", "--max-retries", "0", env=env, run_lines=True)
    assert status == 0, err
    status, out, _ = cli("trace", run_id(err))
    lines = [line.strip("│├└─ ") for line in out.splitlines()]
    assert any(
        line.startswith(f"fallback (turn 1): {FIRST} failed: provider_error: provider error (HTTP 502)")
        for line in lines
    ), out
    status, out, _ = cli("trace", run_id(err), "--full")
    assert f'"model": "{SECOND}"' in out or f"model: {SECOND}" in out, out
    status, out, _ = cli("trace", run_id(err), "--json")
    [step] = json.loads(out)["steps"]
    assert [note["model"] for note in step["fallbacks"]] == [FIRST]


def test_a_resumed_run_asks_no_model_that_failed_again(cli: Cli, workspace: Path, server: LLMServer) -> None:
    (workspace / "notes.txt").write_text("hello")
    program = LOOKING
    (workspace / "p.sexp").write_text(program)
    listing = Scripted(content=None, tool_calls=[{"name": "list_files", "arguments": {}}])
    server.script(Scripted(status=500), listing, Scripted(status=400))  # turn 2 is refused: FAILED
    env = {"SEXP_API_BASE": server.base_url}
    status, _, err = cli("run", "p.sexp", "--max-retries", "0", env=env, run_lines=True)
    assert status == 1 and asked(server) == ["gpt-4o-mini", "gpt-4o", "gpt-4o"], err
    server.requests.clear()
    server.script(GOOD)
    status, out, err = cli("run", "p.sexp", "--resume", run_id(err), "--max-retries", "0", env=env)
    assert status == 0, err
    assert asked(server) == ["gpt-4o"]  # turn 1 from the journal; turn 2 asks the model that answered it


def test_a_completed_run_resumes_with_no_request(cli: Cli, workspace: Path, server: LLMServer) -> None:
    (workspace / "p.sexp").write_text(PROGRAM)
    server.script(Scripted(status=500), GOOD)
    env = {"SEXP_API_BASE": server.base_url}
    status, out, err = cli("run", "p.sexp", "--max-retries", "0", env=env, run_lines=True)
    assert status == 0 and len(server.requests) == 2, err
    server.requests.clear()
    status, again, err = cli("run", "p.sexp", "--resume", run_id(err), env=env)
    assert status == 0 and again == out and server.requests == []


def test_a_cassette_replays_the_fallback_as_recorded(cli: Cli, workspace: Path, server: LLMServer) -> None:
    (workspace / "p.sexp").write_text(PROGRAM)
    server.script(Scripted(status=500), GOOD)
    env = {"SEXP_API_BASE": server.base_url}
    status, out, err = cli("run", "p.sexp", "--max-retries", "0", "--record", "c.jsonl", env=env)
    assert status == 0, err
    entries = [json.loads(line) for line in (workspace / "c.jsonl").read_text().splitlines()]
    assert [(e["model"], "error" in e) for e in entries] == [(FIRST, True), (SECOND, False)]
    server.requests.clear()
    status, replayed, err = cli("run", "p.sexp", "--replay", "c.jsonl", "--json", env=env)
    assert status == 0 and server.requests == [], err
    result = json.loads(replayed)
    assert result["notes"]["model"] == SECOND and result["notes"]["fallbacks"][0]["model"] == FIRST


def test_defatom_and_templates_name_chains() -> None:
    [form] = read('(defatom t (instructions "x") (model "a/one" "b/two,c/three"))', "<test>")
    assert defatom_template(form).models == ("a/one", "b/two", "c/three")  # type: ignore[arg-type]
    for bad in ["(model)", "(model 1)", '(model "a,,b")']:
        [form] = read(f'(defatom t (instructions "x") {bad})', "<test>")
        with pytest.raises(FormError, match=r"\(model"):
            defatom_template(form)  # type: ignore[arg-type]
    xml = (
        '<task name="t" type="atomic"><description>d</description><instructions>x</instructions>'
        "<model>openai/gpt-4o-mini</model><model>anthropic/claude-3-5-haiku-latest</model></task>"
    )
    [template] = load_templates(xml, "t.xml")
    assert template.models == ("openai/gpt-4o-mini", "anthropic/claude-3-5-haiku-latest")
    assert "model: openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest" in template.describe()
    with pytest.raises(TemplateError, match="empty model name"):
        load_templates(xml.replace("<model>openai/gpt-4o-mini</model>", "<model> </model>"), "t.xml")


def test_a_template_with_two_models_falls_back(server: LLMServer, workspace: Path) -> None:
    (workspace / "tasks").mkdir()
    (workspace / "tasks" / "t.xml").write_text(
        '<task name="greet" type="atomic"><description>d</description><instructions>Hi.</instructions>'
        f"<model>{FIRST}</model><model>{SECOND}</model></task>"
    )
    server.script(Scripted(status=500), GOOD)
    result = ask(server, "(greet)", max_retries=0)
    assert result.status == "COMPLETE" and asked(server) == ["gpt-4o-mini", "gpt-4o"]


def test_the_api_and_a_call_take_a_list_and_beat_the_template(server: LLMServer) -> None:
    program = '(defatom ask (instructions "Say something.") (model "openai/template-model"))\n(ask)\n'
    server.script(Scripted(status=500), GOOD)
    session = sexp_tasks.Session(model=[FIRST, SECOND], api_base=server.base_url, max_retries=0)
    assert session.settings.model_override == f"{FIRST},{SECOND}"
    assert session.eval(program).notes["model"] == SECOND
    assert asked(server) == ["gpt-4o-mini", "gpt-4o"]
    server.requests.clear()
    server.script(Scripted(status=500), GOOD)
    call = program.replace("(ask)", f'(ask :model (list "{FIRST}" "{SECOND}"))')
    assert ask(server, call, max_retries=0).notes["model"] == SECOND
    assert asked(server) == ["gpt-4o-mini", "gpt-4o"]
    failed = ask(server, '(defatom ask (instructions "x"))\n(ask :model 3)', model=FIRST)
    assert (
        failed.status == "FAILED" and "model must be a string or a list of strings" in failed.error["message"]
    )


def test_the_model_flag_and_setting_take_a_comma_list(cli: Cli, workspace: Path) -> None:
    status, out, _ = cli("config", "--json", "--model", f"{FIRST}, {SECOND}")
    assert json.loads(out)["model"] == {"value": f"{FIRST},{SECOND}", "source": "flag"}
    (workspace / "sexp.toml").write_text(f'model = ["{FIRST}", "{SECOND}"]\n')
    status, out, _ = cli("config")
    assert f'model = "{FIRST},{SECOND}"  (sexp.toml)' in out
    status, _, err = cli("eval", "1", "--model", "a,,b")
    assert status != 0 and "empty model name" in err
    with pytest.raises(sexp_tasks.SexpError, match="no model named"):
        sexp_tasks.Session(model=[])


def test_a_mock_reply_may_script_a_provider_error(workspace: Path) -> None:
    replies = workspace / "replies.json"
    replies.write_text(json.dumps([{"error": "authentication"}, "<output>second</output>"]))
    program = '(defatom ask (instructions "x") (model "mock/first" "mock/second"))\n(ask)\n'
    result = sexp_tasks.run(program, mock_responses=str(replies))
    assert result.content == "second" and result.notes["model"] == "mock/second"
    assert result.notes["fallbacks"][0]["reason"] == "authentication"
    replies.write_text(json.dumps([{"error": "no-such-reason"}]))
    with pytest.raises(sexp_tasks.SexpError, match='"error" is one of rate_limit'):
        sexp_tasks.run(program, mock_responses=str(replies))
