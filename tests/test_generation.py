"""Generation settings (SPEC §10.2): a template's <generation>, defatom's (generation ...), a
call's reserved `generation` dict and sexp.toml's [generation]; per key call > template >
sexp.toml; each set key reaches the provider under its OpenAI name, unset keys do not; a bad key
or value is refused before any request; the notes carry `generation`.

Real `sexp` processes against the local server (tests/llm_server.py), which records request bodies.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Cli
from llm_server import LLMServer

KEYS = ("temperature", "top_p", "max_tokens", "seed", "stop", "presence_penalty", "frequency_penalty")
TEMPLATE = """<task name="echo" type="atomic">
  <description>Echo</description>
  <instructions>Say {{text}}</instructions>
  <inputs><input name="text" type="string">the text</input></inputs>
  %s
</task>
"""
ALL = """<generation>
    <temperature>0.3</temperature><top_p>0.9</top_p><max_tokens>50</max_tokens><seed>7</seed>
    <stop>END</stop><stop>STOP</stop><presence_penalty>0.5</presence_penalty>
    <frequency_penalty>0.25</frequency_penalty>
  </generation>"""


def env(server: LLMServer) -> dict[str, str]:
    return {
        "SEXP_API_BASE": server.base_url,
        "SEXP_MODEL": "openai/test-model",
        "OPENAI_API_KEY": "sk-fake-gen",
    }


def project(workspace: Path, generation: str = "", toml: str = "") -> Path:
    (workspace / "tasks").mkdir(exist_ok=True)
    (workspace / "tasks" / "echo.xml").write_text(TEMPLATE % generation)
    if toml:
        (workspace / "sexp.toml").write_text(toml)
    return workspace


def run(cli: Cli, workspace: Path, server: LLMServer, program: str) -> tuple[int, str, str]:
    server.script("<output>hi</output>")
    (workspace / "p.sexp").write_text(program)
    return cli("run", "p.sexp", env=env(server))


def test_each_template_setting_reaches_the_provider_under_its_name(
    cli: Cli, workspace: Path, server: LLMServer
) -> None:
    project(workspace, ALL)
    code, out, err = run(cli, workspace, server, '(task-content (echo :text "a"))\n')
    assert code == 0, err
    body = server.requests[0].body
    assert {key: body[key] for key in KEYS} == {
        "temperature": 0.3,
        "top_p": 0.9,
        "max_tokens": 50,
        "seed": 7,
        "stop": ["END", "STOP"],
        "presence_penalty": 0.5,
        "frequency_penalty": 0.25,
    }


def test_unset_keys_are_not_sent(cli: Cli, workspace: Path, server: LLMServer) -> None:
    project(workspace, "<generation><temperature>0</temperature></generation>")
    code, _, err = run(cli, workspace, server, '(task-content (echo :text "a"))\n')
    assert code == 0, err
    body = server.requests[0].body
    assert body["temperature"] == 0
    assert not set(body) & (set(KEYS) - {"temperature"}), body


def test_no_settings_send_none(cli: Cli, workspace: Path, server: LLMServer) -> None:
    project(workspace)
    code, _, err = run(cli, workspace, server, '(task-content (echo :text "a"))\n')
    assert code == 0, err
    assert not set(server.requests[0].body) & set(KEYS)


def test_call_beats_template_beats_sexp_toml(cli: Cli, workspace: Path, server: LLMServer) -> None:
    project(
        workspace,
        "<generation><temperature>0.5</temperature><top_p>0.8</top_p></generation>",
        "[generation]\ntemperature = 0.9\ntop_p = 0.1\nseed = 3\nmax_tokens = 40\n",
    )
    program = (
        '(get (get-field (echo :text "a" :generation {"temperature" 0.1 "max_tokens" 20}) "notes")'
        ' "generation")\n'
    )
    code, out, err = run(cli, workspace, server, program)
    assert code == 0, err
    body = server.requests[0].body
    assert (body["temperature"], body["top_p"], body["seed"], body["max_tokens"]) == (0.1, 0.8, 3, 20)
    assert out == '{"temperature" 0.1 "top_p" 0.8 "max_tokens" 20 "seed" 3}\n'  # the settings in force


def test_notes_carry_generation(cli: Cli, workspace: Path, server: LLMServer) -> None:
    project(workspace, "<generation><seed>11</seed><stop>X</stop></generation>")
    code, out, err = run(cli, workspace, server, '(get (get-field (echo :text "a") "notes") "generation")\n')
    assert code == 0, err
    assert "seed" in out and "11" in out and "X" in out, out


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ('{"temprature" 0}', "temprature"),
        ('{"temperature" "hot"}', "temperature"),
        ('{"stop" 3}', "stop"),
        ('{"max_tokens" 0}', "max_tokens"),
    ],
)
def test_a_bad_call_setting_is_refused_before_any_request(
    cli: Cli, workspace: Path, server: LLMServer, given: str, named: str
) -> None:
    project(workspace)
    program = f'(task-error (echo :text "a" :generation {given}))\n'
    code, out, err = run(cli, workspace, server, program)
    assert server.requests == []
    assert named in out + err and "reasoning_effort" in out + err  # names the key and the known keys
    assert "input_validation_failure" in out + err


def test_a_bad_template_setting_is_a_validation_error(cli: Cli, workspace: Path, server: LLMServer) -> None:
    project(workspace, "<generation><temperature>hot</temperature></generation>")
    code, out, err = run(cli, workspace, server, '(echo :text "a")\n')
    assert code != 0 and server.requests == []
    assert "VALIDATION_ERROR" in err or "temperature" in err, err


def test_a_bad_sexp_toml_setting_is_refused(cli: Cli, workspace: Path, server: LLMServer) -> None:
    project(workspace, toml="[generation]\ntemp = 1\n")
    code, out, err = run(cli, workspace, server, '(echo :text "a")\n')
    assert code != 0 and server.requests == []
    assert "temp" in err and "frequency_penalty" in err, err


def test_defatom_generation_clause(cli: Cli, workspace: Path, server: LLMServer) -> None:
    program = (
        '(defatom shout (params text) (instructions "Shout {{text}}")'
        ' (generation (temperature 0.2) (max_tokens 300) (stop "A" "B") (reasoning_effort "low")))\n'
        '(task-content (shout :text "a"))\n'
    )
    code, _, err = run(cli, workspace, server, program)
    assert code == 0, err
    body = server.requests[0].body
    assert (body["temperature"], body["max_tokens"], body["stop"]) == (0.2, 300, ["A", "B"])


def test_defatom_bad_generation_key(cli: Cli, workspace: Path, server: LLMServer) -> None:
    program = '(defatom shout (params text) (instructions "x") (generation (heat 1)))\n'
    code, _, err = run(cli, workspace, server, program)
    assert code != 0 and server.requests == []
    assert "heat" in err and "temperature" in err, err


def test_render_and_config_show_the_settings(cli: Cli, workspace: Path, server: LLMServer) -> None:
    project(workspace, "<generation><seed>5</seed></generation>", "[generation]\ntop_p = 0.5\n")
    code, out, err = cli("tasks", "render", "echo", "--set-str", "text=a", "--json", env=env(server))
    assert code == 0, err
    assert json.loads(out)["generation"] == {"seed": 5, "top_p": 0.5}
    code, out, err = cli("config", env=env(server))
    assert code == 0 and "generation" in out and "top_p" in out, err


def test_a_setting_the_provider_does_not_take_is_named_to_be_dropped() -> None:
    from sexp_tasks.handler import llm

    assert llm.unsupported_settings("anthropic/claude-3-haiku-20240307", ["seed", "temperature"]) == ["seed"]
    assert llm.unsupported_settings("openai/test-model", ["seed", "temperature"]) == []
    assert llm.unsupported_settings("mock/x", ["seed"]) == []
    assert llm.unsupported_settings("nosuchprovider/x", ["seed"]) == []


def test_max_tokens_is_a_positive_integer_wherever_it_is_set() -> None:
    from sexp_tasks.generation import GenerationError, check_generation, from_texts

    for settings in ({"max_tokens": 0}, {"max_tokens": -5}):
        with pytest.raises(GenerationError, match="max_tokens must be a positive integer, got -?[05]"):
            check_generation(settings)
    with pytest.raises(GenerationError, match="max_tokens must be a positive integer"):
        from_texts([("max_tokens", "0")], "<generation>")
    assert check_generation({"max_tokens": 1, "seed": -3}) == {"max_tokens": 1, "seed": -3}


def test_an_empty_reasoning_effort_is_refused_not_sent() -> None:
    from sexp_tasks.generation import GenerationError, check_generation, from_texts

    empty = "reasoning_effort must be a non-empty string, got an empty string"
    with pytest.raises(GenerationError, match=empty):
        check_generation({"reasoning_effort": " "})
    with pytest.raises(GenerationError, match="reasoning_effort must be a non-empty string"):
        from_texts([("reasoning_effort", "")], "<generation>")
    assert check_generation({"reasoning_effort": "low"}) == {"reasoning_effort": "low"}
