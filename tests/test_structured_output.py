"""Structured output and repair retries (SPEC §10.2): `native` decides whether the JSON Schema
goes as the request's response_format (auto: litellm's model info); a provider refusing it falls
back to the prompt with one warning; `retries` sends an answer's violations back in the same
conversation, each repair a turn; `repairs` in the notes.

The Handler and real `sexp` processes against the local server (tests/llm_server.py), which
records request bodies.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli
from llm_server import LLMServer, Scripted

from sexp_tasks.handler import Handler, HandlerConfig, HandlerServices, TaskPrompt
from sexp_tasks.handler.contract import OutputSpec
from sexp_tasks.handler.output import read_answer
from sexp_tasks.handler.replay import MockScript
from sexp_tasks.handler.structured import schema_name
from sexp_tasks.results import COMPLETE, FAILED

SCHEMA = {
    "type": "object",
    "required": ["name", "age"],
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
}
GOOD = '{"name": "Ada", "age": 36}'
SUPPORTED = "openai/gpt-4o-mini"  # litellm's model map: supports_response_schema
UNSUPPORTED = "openai/gpt-3.5-turbo"  # listed without it


@pytest.fixture
def server(server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> LLMServer:
    """conftest's server, with this file's fake key in OPENAI_API_KEY."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-structured")
    return server


def run(
    server: LLMServer | None,
    model: str = SUPPORTED,
    native: str = "auto",
    retries: int = 0,
    max_turns: int = 10,
    schema: dict[str, Any] | None = SCHEMA,
    kind: str | None = None,
    template: str = "person",
    mock: MockScript | None = None,
) -> Any:
    config = HandlerConfig(api_base=server.base_url if server else None, max_turns=max_turns, num_retries=0)
    services = HandlerServices(mock=mock or MockScript())
    output = OutputSpec("json", kind, schema, native=native, retries=retries)
    prompt = TaskPrompt(template, "Who wrote the first program?", output=output, models=(model,))
    return Handler(config, services).run(prompt)


def expected_format(name: str = "person") -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": name, "schema": SCHEMA}}


def system_text(body: dict[str, Any]) -> str:
    return str(body["messages"][0]["content"])


# native ---------------------------------------------------------------------------------------
def test_always_sends_the_schema_as_response_format_and_asks_for_bare_json(server: LLMServer) -> None:
    server.script(GOOD)
    result = run(server, model="openai/test-model", native="always")
    body = server.requests[0].body
    assert body["response_format"] == expected_format()
    assert "<output>" not in system_text(body) and '"age"' in system_text(body)
    assert result.status == COMPLETE and result.parsed_content == {"name": "Ada", "age": 36}
    assert result.notes["warnings"] == []  # a bare JSON answer is what was asked for


def test_never_does_not_send_it(server: LLMServer) -> None:
    server.script(f"<output>{GOOD}</output>")
    result = run(server, native="never")
    body = server.requests[0].body
    assert "response_format" not in body and "<output>" in system_text(body)
    assert result.status == COMPLETE


def test_auto_asks_litellm_whether_the_model_takes_it(server: LLMServer) -> None:
    server.script(GOOD)
    assert run(server, model=SUPPORTED).status == COMPLETE
    assert server.requests[0].body["response_format"] == expected_format()
    server.script(f"<output>{GOOD}</output>")
    for model in (UNSUPPORTED, "openai/my-local-model"):  # one litellm lists without it; one unknown
        assert run(server, model=model).status == COMPLETE
        assert "response_format" not in server.requests[-1].body


def test_a_schema_kind_alone_sends_nothing(server: LLMServer) -> None:
    server.script('<output>{"a": 1}</output>')
    result = run(server, native="always", schema=None, kind="object")
    assert "response_format" not in server.requests[0].body and result.status == COMPLETE


def test_the_answer_is_validated_either_way(server: LLMServer) -> None:
    server.script('{"name": "Ada"}')
    result = run(server, native="always")
    assert result.status == FAILED and result.error.reason == "output_format_failure"
    assert "'age' is a required property" in result.error.message


def test_a_provider_refusing_response_format_falls_back_to_the_prompt(server: LLMServer) -> None:
    server.refuse_response_format = True
    server.script('{"name": "Ada", "age": "old"}', GOOD)
    result = run(server, model="openai/test-model", native="always", retries=1)
    assert [("response_format" in r.body) for r in server.requests] == [True, False, False]
    assert result.status == COMPLETE and result.notes["repairs"] == 1  # still validated and repaired
    warnings = [w for w in result.notes["warnings"] if "response_format" in w]
    assert warnings == [
        "openai/test-model does not take response_format; the JSON Schema is asked for in the prompt only"
    ]
    assert result.notes["resources"]["turns"] == 2  # the refused call is not a turn of its own


def test_after_a_refusal_the_bare_json_asked_for_is_read_without_a_warning(server: LLMServer) -> None:
    """The prompt asked for bare JSON (response_format was to go with it): the prompt-only answer
    is read as that, not warned about as an answer without <output>."""
    server.refuse_response_format = True
    server.script(GOOD)
    result = run(server, model="openai/bare-model", native="always")
    assert "<output>" not in system_text(server.requests[1].body)
    assert result.status == COMPLETE and result.parsed_content == {"name": "Ada", "age": 36}
    assert result.notes["warnings"] == [
        "openai/bare-model does not take response_format; the JSON Schema is asked for in the prompt only"
    ]


def test_a_refusal_costs_one_request_once_per_process(server: LLMServer) -> None:
    """The call carrying response_format goes without litellm's retries (they would repeat the
    refusal); once refused, later calls to that model and server go prompt-only at once."""
    server.refuse_response_format = True
    server.script(GOOD)
    config = HandlerConfig(api_base=server.base_url, num_retries=2)
    output = OutputSpec("json", json_schema=SCHEMA, native="always")
    prompt = TaskPrompt("person", "Who?", output=output, models=("openai/test-model",))
    first = Handler(config, HandlerServices()).run(prompt)
    second = Handler(config, HandlerServices()).run(prompt)
    assert (first.status, second.status) == (COMPLETE, COMPLETE)
    assert ["response_format" in r.body for r in server.requests] == [True, False, False]
    assert any("does not take response_format" in w for w in second.notes["warnings"])


def test_another_failure_of_a_native_call_keeps_litellm_retries(server: LLMServer) -> None:
    server.script(Scripted(status=500), Scripted(status=500), GOOD)
    config = HandlerConfig(api_base=server.base_url, num_retries=2)
    output = OutputSpec("json", json_schema=SCHEMA, native="always")
    prompt = TaskPrompt("person", "Who?", output=output, models=("openai/test-model",))
    result = Handler(config, HandlerServices()).run(prompt)
    assert result.status == COMPLETE and result.notes["warnings"] == []
    assert ["response_format" in r.body for r in server.requests] == [True, True, True]


def test_the_schema_name_is_one_openai_takes() -> None:
    assert schema_name("extract.person:v2") == "extract_person_v2"
    assert len(schema_name("x" * 100)) == 64


def test_read_answer_takes_bare_json_without_a_warning_and_wrapped_json_too() -> None:
    spec = OutputSpec("json", json_schema=SCHEMA)
    for text in (GOOD, f"<output>{GOOD}</output>", f"```json\n{GOOD}\n```"):
        reading = read_answer(text, spec, bare=True)
        assert (reading.parsed, reading.violations, reading.warnings) == (
            {"name": "Ada", "age": 36},
            None,
            [],
        )


def test_a_mock_model_takes_response_format_when_forced() -> None:
    mock = MockScript([GOOD])
    assert run(None, model="mock/m", native="always", mock=mock).status == COMPLETE
    assert (
        run(None, model="mock/gpt-4o-mini", mock=MockScript([f"<output>{GOOD}</output>"])).status == COMPLETE
    )


# repairs --------------------------------------------------------------------------------------
def test_each_repair_is_one_more_request_holding_the_violations(server: LLMServer) -> None:
    server.script("not json at all", '{"name": "Ada"}', GOOD)
    result = run(server, native="never", retries=3)
    assert result.status == COMPLETE and result.parsed_content == {"name": "Ada", "age": 36}
    assert result.notes["repairs"] == 2 and len(server.requests) == 3
    second, third = server.requests[1].body["messages"], server.requests[2].body["messages"]
    assert [m["role"] for m in second[-2:]] == ["assistant", "user"]
    assert second[-2]["content"] == "not json at all" and "the output is not JSON" in second[-1]["content"]
    assert third[: len(second)] == second  # the same conversation, continued
    assert "'age' is a required property" in third[-1]["content"]
    assert result.notes["resources"]["turns"] == 3


def test_failed_only_when_the_last_answer_still_fails(server: LLMServer) -> None:
    server.script("nope", "still nope")
    result = run(server, native="never", retries=1)
    assert result.status == FAILED and result.error.reason == "output_format_failure"
    assert result.content == "still nope" and result.notes["repairs"] == 1 and len(server.requests) == 2


def test_repairs_count_toward_max_turns(server: LLMServer) -> None:
    server.script("nope")
    result = run(server, native="never", retries=5, max_turns=2)
    assert result.status == FAILED and result.error.type == "RESOURCE_EXHAUSTION"
    assert result.error.resource == "turns" and len(server.requests) == 2
    assert result.notes["repairs"] == 1 and result.content == "nope"


def test_no_retries_no_repairs_key(server: LLMServer) -> None:
    server.script(f"<output>{GOOD}</output>")
    assert "repairs" not in run(server, native="never").notes
    server.script(f"<output>{GOOD}</output>")
    assert run(server, native="never", retries=2).notes["repairs"] == 0


def test_mock_models_are_repaired_too() -> None:
    mock = MockScript(["<output>nope</output>", f"<output>{GOOD}</output>"])
    result = run(None, model="mock/m", retries=1, mock=mock)
    assert result.status == COMPLETE and result.notes["repairs"] == 1


# templates, defatom, render -------------------------------------------------------------------
TEMPLATE = """<task name="person" type="atomic">
  <description>Extract a person</description>
  <instructions>Who is in {{text}}?</instructions>
  <inputs><input name="text" type="string">the text</input></inputs>
  <output_format type="json" %s>
    <json_schema>%s</json_schema>
  </output_format>
</task>
"""


def env(server: LLMServer, model: str = SUPPORTED) -> dict[str, str]:
    return {"SEXP_API_BASE": server.base_url, "SEXP_MODEL": model, "OPENAI_API_KEY": "sk-fake-structured"}


def template(workspace: Path, attributes: str) -> None:
    (workspace / "tasks").mkdir(exist_ok=True)
    (workspace / "tasks" / "person.xml").write_text(TEMPLATE % (attributes, json.dumps(SCHEMA)))


def test_a_template_run_repairs_and_notes_it(cli: Cli, workspace: Path, server: LLMServer) -> None:
    template(workspace, 'native="always" retries="2"')
    server.script('{"name": 1}', GOOD)
    (workspace / "p.sexp").write_text(
        '(define r (person :text "x"))\n(list (task-json r) (get (get-field r "notes") "repairs"))\n'
    )
    code, out, err = cli("run", "p.sexp", env=env(server, "openai/test-model"))
    assert code == 0, err
    assert out == '({"name" "Ada" "age" 36} 1)\n'
    assert all(r.body["response_format"]["json_schema"]["name"] == "person" for r in server.requests)


@pytest.mark.parametrize(
    ("attributes", "named"), [('retries="-1"', "retries"), ('native="sometimes"', "native")]
)
def test_a_bad_attribute_is_a_validation_error_with_its_line(
    cli: Cli, workspace: Path, server: LLMServer, attributes: str, named: str
) -> None:
    template(workspace, attributes)
    (workspace / "p.sexp").write_text('(person :text "x")\n')
    code, _, err = cli("run", "p.sexp", env=env(server))
    assert code != 0 and server.requests == []
    assert "schema" in err and named in err and "person.xml:5" in err, err


def test_a_json_schema_that_is_no_schema_is_a_validation_error_before_any_request(
    cli: Cli, workspace: Path, server: LLMServer
) -> None:
    """Checked when the task is first called (a start that calls no model imports no jsonschema)."""
    (workspace / "tasks").mkdir()
    (workspace / "tasks" / "person.xml").write_text(TEMPLATE % ("", '{"type": "bogus"}'))
    (workspace / "p.sexp").write_text('(person :text "x")\n')
    code, _, err = cli("run", "p.sexp", env=env(server))
    assert code != 0 and server.requests == []
    assert "person.xml:1" in err and "its json_schema is not a JSON Schema" in err and "'bogus'" in err, err
    assert "internal error" not in err, err
    (workspace / "d.sexp").write_text(
        '(defatom shout (instructions "x")\n'
        '  (output_format (type "json") (json_schema "{\\"minLength\\": -1}")))\n(shout)\n'
    )
    code, _, err = cli("run", "d.sexp", env=env(server))
    assert code != 0 and server.requests == []
    assert "d.sexp:1:1" in err and "task 'shout': its json_schema is not a JSON Schema" in err, err
    code, out, err = cli("eval", "(+ 1 2)", python_flags=("-X", "importtime"))
    assert (code, out) == (0, "3\n") and "| sexp_tasks" in err
    assert not any(line.rstrip().endswith("| jsonschema") for line in err.splitlines())


def test_render_shows_the_response_format(cli: Cli, workspace: Path, server: LLMServer) -> None:
    template(workspace, "")
    code, out, err = cli("tasks", "render", "person", "--set-str", "text=x", "--json", env=env(server))
    assert code == 0, err
    rendered = json.loads(out)
    assert rendered["response_format"] == expected_format()
    assert "<output>" not in rendered["messages"][0]["content"]
    code, out, err = cli("tasks", "render", "person", "--set-str", "text=x", env=env(server, UNSUPPORTED))
    assert code == 0 and "response_format: (none)" in out, err


def test_defatom_output_format_clauses(cli: Cli, workspace: Path, server: LLMServer) -> None:
    schema = json.dumps(json.dumps(SCHEMA))  # the JSON Schema as a string literal
    (workspace / "p.sexp").write_text(
        '(defatom person (params text) (instructions "Who is in {{text}}?")\n'
        f'  (output_format (type "json") (json_schema {schema}) (native "always") (retries 2)))\n'
        '(define r (person :text "x"))\n(list (task-json r) (get (get-field r "notes") "repairs"))\n'
    )
    server.script("[]", GOOD)
    code, out, err = cli("run", "p.sexp", env=env(server, "openai/test-model"))
    assert code == 0, err
    assert out == '({"name" "Ada" "age" 36} 1)\n'
    assert server.requests[0].body["response_format"] == expected_format()


@pytest.mark.parametrize(
    ("clause", "named"),
    [
        ('(native "sometimes")', "native"),
        ("(retries -1)", "retries"),
        ('(retries "two")', "retries"),
        ('(retries "²")', "retries"),
        ('(json_schema "{nope")', "json_schema"),
        ('(shape "x")', "shape"),
    ],
)
def test_defatom_bad_output_format_values_are_errors(
    cli: Cli, workspace: Path, server: LLMServer, clause: str, named: str
) -> None:
    (workspace / "p.sexp").write_text(
        f'(defatom person (instructions "x")\n  (output_format (type "json") {clause}))\n(person)\n'
    )
    code, _, err = cli("run", "p.sexp", env=env(server))
    assert code != 0 and server.requests == []
    assert named in err and "p.sexp:2:3" in err, err


def test_doc_and_show_name_the_settings(cli: Cli, workspace: Path) -> None:
    template(workspace, 'native="never" retries="2"')
    code, out, err = cli("doc", "person")
    assert code == 0 and "Output: json, a JSON Schema, native never, retries 2" in out, err
    code, out, err = cli("tasks", "show", "person")
    assert code == 0 and "output: json (JSON Schema), native never, retries 2" in out, err
