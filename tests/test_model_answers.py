"""Model answers the Handler must take or refuse cleanly (issue 19, SPEC §11.1): an <output> whose
<notes> trailer max_tokens cut off, a reply without choices, response_format's `strict`, a
<json_schema> checked whole before anything is sent, transient errors that are no refusal of
response_format, and template files in other encodings.

The Handler and real `sexp` processes against the local server (tests/llm_server.py)."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli
from llm_server import LLMServer, Scripted

from sexp_tasks.handler import Handler, HandlerConfig, HandlerServices, OutputSpec, TaskPrompt
from sexp_tasks.results import COMPLETE, FAILED, TaskResult


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[LLMServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-model-answers")
    llm = LLMServer().start()
    yield llm
    llm.stop()


def run(server: LLMServer, output: OutputSpec | None = None, **config: Any) -> TaskResult:
    options: dict[str, Any] = {"model": "openai/test-model", "num_retries": 0, "timeout": 10.0}
    options.update(api_base=server.base_url, **config)
    model = options.pop("model")
    prompt = TaskPrompt("classify", "Bug or feature?", output=output or OutputSpec(), models=(model,))
    return Handler(HandlerConfig(**options), HandlerServices()).run(prompt)


# <notes> cut off by max_tokens ----------------------------------------------------------------
@pytest.mark.parametrize(
    "answer", ["<output>bug</output>", "<output>bug</output>\n<notes><data_usage>the tit"]
)
def test_a_complete_output_whose_notes_were_cut_is_accepted(server: LLMServer, answer: str) -> None:
    server.script(Scripted(content=answer, finish_reason="length"))
    result = run(server, generation={"max_tokens": 5})
    assert server.requests[0].body["max_tokens"] == 5
    assert result.status == COMPLETE and result.error is None
    assert result.content == "bug"
    assert any("<notes>" in w and "max_tokens" in w for w in result.notes["warnings"])


def test_an_output_cut_inside_is_still_output_exhaustion(server: LLMServer) -> None:
    server.script(Scripted(content="<output>a long answ", finish_reason="length"))
    result = run(server, generation={"max_tokens": 5})
    assert result.status == FAILED and result.error is not None
    assert result.error.type == "RESOURCE_EXHAUSTION" and result.error.resource == "output"


def test_without_the_protocol_a_cut_answer_is_still_output_exhaustion(server: LLMServer) -> None:
    """With disable_reparsing the answer is not read for <output>: a cut answer is cut."""
    server.script(Scripted(content="<output>bug</output>", finish_reason="length"))
    result = run(server, OutputSpec(disable_reparsing=True), generation={"max_tokens": 5})
    assert result.status == FAILED and result.error is not None and result.error.resource == "output"


# a reply without choices ----------------------------------------------------------------------
@pytest.mark.parametrize("transport", ["sync", "async"])
def test_a_reply_with_no_choices_is_invalid_output(
    server: LLMServer, monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    monkeypatch.setenv("SEXP_LLM_TRANSPORT", transport)
    server.script(Scripted(no_choices=True))
    result = run(server)
    assert len(server.requests) == 1
    assert result.status == FAILED and result.error is not None
    assert result.error.type == "INVALID_OUTPUT" and result.error.message == "the model gave no answer"
    assert result.notes["usage"] == {"prompt_tokens": 10, "completion_tokens": 5}  # it was paid for


# a transient error is no refusal of response_format --------------------------------------------
PERSON = {
    "type": "object",
    "required": ["name"],
    "properties": {"name": {"type": "string"}},
    "additionalProperties": False,
}


@pytest.mark.parametrize("status", [500, 503])
def test_a_5xx_mentioning_json_schema_keeps_response_format(server: LLMServer, status: int) -> None:
    """Only a 400-class refusal turns response_format off; a transient 5xx that happens to say
    `json_schema` fails its call and changes nothing for the calls after it."""
    model = f"openai/transient-{status}"
    error = {"message": "upstream json_schema worker overloaded, try again", "type": "server_error"}
    server.script(Scripted(status=status, error=error))  # repeats (the client may retry it itself)
    output = OutputSpec("json", json_schema=PERSON, native="always")
    first = run(server, output, model=model)
    assert first.status == FAILED and first.error is not None and first.error.reason == "provider_error"
    server.script('{"name": "Ada"}')
    second = run(server, output, model=model)
    assert second.status == COMPLETE and second.parsed_content == {"name": "Ada"}
    assert all("response_format" in r.body for r in server.requests)
    assert not any("response_format" in w for w in first.notes["warnings"] + second.notes["warnings"])


# response_format's strict ---------------------------------------------------------------------
OPEN_PERSON = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "age": {}}}
NESTED_OPEN = {
    "type": "object",
    "required": ["who"],
    "additionalProperties": False,
    "properties": {"who": {"type": "object", "properties": {"name": {"type": "string"}}}},
}
NESTED_CLOSED = {
    "type": "object",
    "required": ["who", "tags"],
    "additionalProperties": False,
    "$defs": {
        "name": {
            "type": "object",
            "required": ["first"],
            "additionalProperties": False,
            "properties": {"first": {"type": "string"}},
        }
    },
    "properties": {
        "who": {"$ref": "#/$defs/name"},
        "tags": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/name"}]}},
    },
}


def sent_format(server: LLMServer, schema: dict[str, Any], strict: bool | None = None) -> dict[str, Any]:
    server.script(json.dumps({"name": "Ada", "who": {"first": "Ada"}, "tags": []}))
    output = OutputSpec("json", json_schema=schema, native="always", strict=strict)
    run(server, output)
    return dict(server.requests[-1].body["response_format"]["json_schema"])


@pytest.mark.parametrize(
    ("schema", "strict"), [(PERSON, True), (NESTED_CLOSED, True), (OPEN_PERSON, False), (NESTED_OPEN, False)]
)
def test_strict_is_sent_when_the_schema_can_be_strict(
    server: LLMServer, schema: dict[str, Any], strict: bool
) -> None:
    """OpenAI's rules: every object closes additionalProperties and requires all its properties."""
    sent = sent_format(server, schema)
    assert sent.get("strict") is (True if strict else None)
    assert sent["schema"] == schema


def test_the_template_forces_strict_either_way(server: LLMServer) -> None:
    assert sent_format(server, OPEN_PERSON, strict=True)["strict"] is True
    assert "strict" not in sent_format(server, PERSON, strict=False)


TEMPLATE = """<task name="classify" type="atomic">
  <description>d</description>
  <instructions>Bug or feature? {{text}}</instructions>
  <inputs><input name="text" type="string">t</input></inputs>
  <output_format type="json" native="always"%s>
    <json_schema>%s</json_schema>
  </output_format>
</task>
"""


def write_template(workspace: Path, attributes: str, schema: Any, name: str = "classify") -> Path:
    (workspace / "tasks").mkdir(exist_ok=True)
    path = workspace / "tasks" / f"{name}.xml"
    path.write_text(TEMPLATE % (attributes, json.dumps(schema)), encoding="utf-8")
    return path


def render(cli: Cli, server: LLMServer) -> dict[str, Any]:
    env = {"OPENAI_API_KEY": "sk-test-render", "SEXP_API_BASE": server.base_url}
    code, out, err = cli(
        "tasks",
        "render",
        "classify",
        "--set-str",
        "text=x",
        "--json",
        "--model",
        "openai/test-model",
        env=env,
    )
    assert code == 0, err
    return dict(json.loads(out)["response_format"]["json_schema"])


def test_render_shows_strict_and_the_template_attribute_forces_it(
    cli: Cli, workspace: Path, server: LLMServer
) -> None:
    write_template(workspace, "", PERSON)
    assert render(cli, server)["strict"] is True
    write_template(workspace, ' strict="false"', PERSON)
    assert "strict" not in render(cli, server)
    write_template(workspace, ' strict="true"', OPEN_PERSON)
    assert render(cli, server)["strict"] is True
    code, out, err = cli("tasks", "show", "classify")
    assert code == 0 and "native always, strict true" in out, err
    write_template(workspace, ' strict="maybe"', PERSON)
    code, out, err = cli("tasks", "validate", "tasks")
    assert code == 1 and "classify.xml:5" in err and "strict" in err, err
    assert server.requests == []


def test_defatom_takes_strict(cli: Cli, workspace: Path, server: LLMServer) -> None:
    schema = json.dumps(json.dumps(OPEN_PERSON))
    (workspace / "p.sexp").write_text(
        '(defatom who (instructions "Who?")\n'
        f'  (output_format (type "json") (json_schema {schema}) (native "always") (strict "true")))\n'
        "(task-json (who))\n"
    )
    server.script('{"name": "Ada"}')
    env = {"OPENAI_API_KEY": "sk-test-render", "SEXP_API_BASE": server.base_url}
    code, out, err = cli("run", "p.sexp", "--model", "openai/test-model", env=env)
    assert code == 0 and out == '{"name" "Ada"}\n', err
    assert server.requests[0].body["response_format"]["json_schema"]["strict"] is True
    (workspace / "p.sexp").write_text(
        '(defatom who (instructions "Who?")\n  (output_format (type "json") (strict "sometimes")))\n(who)\n'
    )
    code, _, err = cli("run", "p.sexp", "--model", "openai/test-model", env=env)
    assert code != 0 and "strict" in err and "p.sexp:2:3" in err, err
    assert len(server.requests) == 1


# a <json_schema> checked whole before anything is sent --------------------------------------------
TREE = {
    "$defs": {
        "node": {
            "type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
        }
    },
    "$ref": "#/$defs/node",
}


def deep_schema(levels: int) -> str:
    return '{"items": ' * levels + "{}" + "}" * levels


BAD_SCHEMAS = [
    pytest.param(
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}},
        "properties/a",
        "cannot be resolved",
        id="unresolvable",
    ),
    pytest.param({"$ref": "https://example.com/person.json"}, "(root)", "only point inside", id="remote"),
    pytest.param({"$ref": "#"}, "(root)", "loops back to itself", id="self"),
    pytest.param(
        {
            "$defs": {
                "a": {"$ref": "#/$defs/b"},
                "b": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/a"}]},
            },
            "$ref": "#/$defs/a",
        },
        "",
        "loops back to itself",
        id="cycle",
    ),
]


@pytest.mark.parametrize(("schema", "where", "problem"), BAD_SCHEMAS)
def test_a_bad_ref_is_a_validation_error_before_anything_is_sent(
    cli: Cli, workspace: Path, server: LLMServer, schema: Any, where: str, problem: str
) -> None:
    write_template(workspace, "", schema)
    (workspace / "p.sexp").write_text('(classify :text "x")\n')
    server.script('{"a": 1}')
    env = {"OPENAI_API_KEY": "sk-test-refs", "SEXP_API_BASE": server.base_url}
    code, _, err = cli("run", "p.sexp", "--model", "openai/test-model", env=env)
    assert code == 1 and server.requests == [], err
    assert "classify.xml:1" in err and "task 'classify'" in err, err
    assert f"{where}: $ref" in err and problem in err and "internal error" not in err, err
    code, out, err = cli("tasks", "validate", "tasks")
    assert code == 1 and "classify.xml:1" in err and problem in err, out + err


def test_a_recursive_schema_that_goes_into_the_value_is_fine(server: LLMServer) -> None:
    server.script('{"children": [{"children": []}, {"children": [{}]}]}', '{"children": [1]}')
    output = OutputSpec("json", json_schema=TREE, native="never")
    assert run(server, output).status == COMPLETE
    failed = run(server, output)
    assert failed.status == FAILED and failed.error is not None
    assert "children/0: 1 is not of type 'object'" in failed.error.message


def test_a_schema_nested_too_deep_is_refused_at_once(cli: Cli, workspace: Path, server: LLMServer) -> None:
    (workspace / "tasks").mkdir()
    (workspace / "tasks" / "classify.xml").write_text(TEMPLATE % ("", deep_schema(20_000)), encoding="utf-8")
    (workspace / "p.sexp").write_text('(classify :text "x")\n')
    env = {"OPENAI_API_KEY": "sk-test-refs", "SEXP_API_BASE": server.base_url}
    code, _, err = cli("run", "p.sexp", "--model", "openai/test-model", env=env, timeout=30)
    assert code == 1 and server.requests == [], err
    assert "classify.xml" in err and "nest" in err and "internal error" not in err, err
    (workspace / "tasks" / "classify.xml").write_text(TEMPLATE % ("", deep_schema(300)), encoding="utf-8")
    code, _, err = cli("run", "p.sexp", "--model", "openai/test-model", env=env, timeout=30)
    assert code == 1 and server.requests == [], err
    assert "task 'classify'" in err and "nests more than 128 deep" in err, err


# uniqueItems and pattern ------------------------------------------------------------------------
def test_unique_items_is_checked_in_linear_time(server: LLMServer) -> None:
    items = [{"id": i, "tags": [str(i), i % 7]} for i in range(20_000)]  # about 500 KB
    schema = {"type": "array", "uniqueItems": True}
    server.script(
        json.dumps(items), json.dumps([*items, {"tags": [str(5), 5], "id": 5}]), "[1, 1.0]", "[1, true]"
    )
    output = OutputSpec("json", json_schema=schema, native="never", disable_reparsing=True)
    started = time.monotonic()
    assert run(server, output).status == COMPLETE
    duplicate = run(server, output)
    assert time.monotonic() - started < 20  # jsonschema's pairwise comparison took minutes
    assert duplicate.status == FAILED and duplicate.error is not None
    assert "(root): has non-unique elements (items 5 and 20000 are equal)" in duplicate.error.message
    assert run(server, output).status == FAILED  # 1 and 1.0 are equal numbers
    assert run(server, output).status == COMPLETE  # 1 and true are not


def test_pattern_and_pattern_properties_still_check(server: LLMServer) -> None:
    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}},
        "patternProperties": {"^x-": {"type": "integer"}},
        "additionalProperties": False,
    }
    server.script('{"code": "ABC", "x-n": 1}', '{"code": "abcd", "x-n": "1", "other": 2}')
    output = OutputSpec("json", json_schema=schema, native="never", disable_reparsing=True)
    assert run(server, output).status == COMPLETE
    failed = run(server, output)
    assert failed.error is not None and failed.error.violations == [
        "(root): 'other' does not match any of the regexes: '^x-'",
        "code: 'abcd' does not match '^[A-Z]{3}$'",
        "x-n: '1' is not of type 'integer'",
    ]


def test_a_pathological_schema_pattern_gives_way_to_an_interrupt() -> None:
    """A schema pattern runs in the interruptible slices of the regex primitives: an interrupt
    (here SIGALRM raising KeyboardInterrupt, as Ctrl-C's SIGINT does) ends it within a slice,
    where Python's re would hold the thread until the match is over."""
    from sexp_tasks.handler.output import check_json

    schema = {"type": "string", "pattern": "^(a|aa)+$"}
    answer = json.dumps("a" * 40 + "b")

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    started = time.monotonic()
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        with pytest.raises(KeyboardInterrupt):
            check_json(answer, OutputSpec("json", json_schema=schema))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.monotonic() - started < 10


# template files in other encodings ----------------------------------------------------------------
ENCODED = """<?xml version="1.0" encoding="%s"?>
<task name="cafe" type="atomic">
  <description>Déjà vu</description>
  <instructions>Résumé of {{text}}, s'il vous plaît.</instructions>
  <inputs><input name="text" type="string">t</input></inputs>
</task>
"""


@pytest.mark.parametrize(
    ("declared", "codec"),
    [
        ("UTF-16", "utf-16"),
        ("UTF-16LE", "utf-16-le"),
        ("ISO-8859-1", "latin-1"),
        ("windows-1252", "cp1252"),
        ("UTF-8", "utf-8-sig"),
    ],
)
def test_a_template_is_decoded_as_it_declares(
    cli: Cli, workspace: Path, server: LLMServer, declared: str, codec: str
) -> None:
    (workspace / "tasks").mkdir()
    (workspace / "tasks" / "cafe.xml").write_bytes((ENCODED % declared).encode(codec))
    env = {"OPENAI_API_KEY": "sk-test-enc", "SEXP_API_BASE": server.base_url}
    code, out, err = cli("tasks", "validate", "tasks")
    assert code == 0 and "cafe.xml: ok (cafe)" in out, err
    code, out, err = cli(
        "tasks", "render", "cafe", "--set-str", "text=x", "--json", "--model", "openai/test-model", env=env
    )
    assert code == 0, err
    assert json.loads(out)["messages"][-1]["content"] == "Résumé of x, s'il vous plaît."
    (workspace / "p.sexp").write_text('(task-ok? (cafe :text "x"))\n', encoding="utf-8")
    code, out, err = cli("run", "p.sexp", "--model", "openai/test-model", env=env)
    assert (code, out) == (0, "true\n"), err
    assert server.requests[0].body["messages"][-1]["content"] == "Résumé of x, s'il vous plaît."


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ((ENCODED % "UTF-8").encode("latin-1"), "cafe.xml:3:1: error: not UTF-8 text (byte 0xe9)"),
        ((ENCODED % "no-such-encoding").encode("utf-8"), "unknown encoding 'no-such-encoding'"),
    ],
)
def test_a_template_that_cannot_be_decoded_is_an_error_naming_the_file(
    cli: Cli, workspace: Path, data: bytes, said: str
) -> None:
    (workspace / "tasks").mkdir()
    (workspace / "tasks" / "cafe.xml").write_bytes(data)
    for args in (("tasks", "validate", "tasks"), ("tasks", "list"), ("eval", "1")):
        code, out, err = cli(*args)
        assert code == 1 and "cafe.xml" in err and said in err and "internal error" not in err, (args, err)


def test_a_latin_1_template_travels_to_a_ray_worker(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch shipping of templates (Ray) reads them as declared and writes copies that read
    back the same."""
    from sexp_tasks.batching.row_runner import plain_settings
    from sexp_tasks.batching.rows import ProgramBundle
    from sexp_tasks.batching.shipping import pack, unpack
    from sexp_tasks.config import Settings
    from sexp_tasks.tasks.template import load_templates
    from sexp_tasks.xmltools import read_template

    (workspace / "tasks").mkdir()
    (workspace / "tasks" / "cafe.xml").write_bytes((ENCODED % "ISO-8859-1").encode("latin-1"))
    shipped = pack(ProgramBundle("p.sexp", "(cafe :text 1)\n", {}), plain_settings(Settings()))
    assert list(shipped.templates.values()) == [ENCODED % "ISO-8859-1"]
    monkeypatch.chdir(tmp_path)  # another machine
    _, changes = unpack(shipped)
    (directory,) = changes["template_flags"]
    copy = Path(directory) / "cafe.xml"
    (template,) = load_templates(read_template(copy), str(copy))
    assert template.description == "Déjà vu"
