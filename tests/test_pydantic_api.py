"""Pydantic model classes as JSON Schemas in the Python API (issue 21): `Session.call(...,
output_type=Model)` answers with a Model instance, its schema sent, checked and repaired as a
template's own; a `Session.tool` parameter annotated with a Model is offered with its schema and
receives an instance.

In-process sessions against the local server (tests/llm_server.py), which records request bodies.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_python
from llm_server import LLMServer, Scripted
from pydantic import BaseModel, field_validator

import sexp_tasks

PERSON = """<task name="person" type="atomic">
  <description>Extract a person</description>
  <instructions>Who is in {{text}}?</instructions>
  <inputs><input name="text" type="string">the text</input></inputs>
  %s
</task>
"""
SUPPORTED = "openai/gpt-4o-mini"  # litellm's model map: supports_response_schema
UNSUPPORTED = "openai/gpt-3.5-turbo"  # listed without it


class Address(BaseModel):
    """Where a person lives."""

    city: str


class Person(BaseModel):
    """A person."""

    name: str
    age: int
    address: Address | None = None

    @field_validator("age")
    @classmethod
    def plausible(cls, age: int) -> int:
        """An age a person can have (a rule no JSON Schema states)."""
        if age > 150:
            raise ValueError("no one is that old")
        return age


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for variable in ("SEXP_MODEL", "SEXP_API_BASE", "SEXP_TEMPLATES", "SEXP_MOCK_RESPONSES"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-pydantic")
    return tmp_path


def session(project: Path, server: LLMServer, output: str = "", model: str = SUPPORTED) -> sexp_tasks.Session:
    (project / "tasks").mkdir(exist_ok=True)
    (project / "tasks" / "person.xml").write_text(PERSON % output)
    (project / "tasks" / "support.xml").write_text(SUPPORT)
    return sexp_tasks.Session(model=model, api_base=server.base_url, workspace=str(project), quiet=True)


def test_output_type_gives_a_model_instance_and_sends_its_schema(project: Path, server: LLMServer) -> None:
    server.script('{"name": "Ada", "age": 36, "address": {"city": "London"}}')
    result = session(project, server).call("person", text="Ada", output_type=Person)
    assert result.status == "COMPLETE", result.error
    assert result.parsed == Person(name="Ada", age=36, address=Address(city="London"))
    sent = server.requests[0].body["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["schema"] == Person.model_json_schema()


def test_without_response_schema_support_the_prompt_carries_the_schema(
    project: Path, server: LLMServer
) -> None:
    server.script('{"name": "Ada", "age": 36}')
    result = session(project, server, model=UNSUPPORTED).call("person", text="Ada", output_type=Person)
    assert isinstance(result.parsed, Person) and result.parsed.age == 36
    body = server.requests[0].body
    assert "response_format" not in body
    system = body["messages"][0]["content"]
    assert '"$defs"' in system and '"city"' in system  # the schema, $defs and all, is in the prompt


def test_a_schema_violation_is_repaired_when_the_template_allows_retries(
    project: Path, server: LLMServer
) -> None:
    server.script('{"name": "Ada"}', '{"name": "Ada", "age": 36}')
    output = '<output_format type="json" schema="object" retries="1"/>'
    result = session(project, server, output).call("person", text="Ada", output_type=Person)
    assert result.status == "COMPLETE" and result.parsed == Person(name="Ada", age=36)
    assert result.notes["repairs"] == 1 and len(server.requests) == 2
    assert "age" in json.dumps(server.requests[1].body["messages"][-1])


def test_a_violation_without_retries_is_a_failed_result_naming_it(project: Path, server: LLMServer) -> None:
    server.script('{"name": "Ada"}')
    result = session(project, server).call("person", text="Ada", output_type=Person)
    assert result.status == "FAILED" and result.parsed != Person
    assert result.error["reason"] == "output_format_failure" and "age" in result.error["message"]
    assert len(server.requests) == 1


def test_a_model_s_own_validator_failing_is_a_failed_result(project: Path, server: LLMServer) -> None:
    server.script('{"name": "Ada", "age": 400}')
    result = session(project, server).call("person", text="Ada", output_type=Person)
    assert result.status == "FAILED" and not isinstance(result.parsed, Person)
    assert result.error["violations"] == ["age: Value error, no one is that old"]


def test_the_template_itself_is_unchanged_for_later_calls(project: Path, server: LLMServer) -> None:
    server.script('{"name": "Ada", "age": 36}', "plain text")
    work = session(project, server)
    assert isinstance(work.call("person", text="Ada", output_type=Person).parsed, Person)
    plain = work.call("person", text="Ada")
    assert plain.status == "COMPLETE" and plain.content == "plain text"
    assert "response_format" not in server.requests[1].body


def test_output_type_is_for_a_task_and_a_model_class(project: Path, server: LLMServer) -> None:
    work = session(project, server)
    work.eval("(define (twice x) (* 2 x))")
    with pytest.raises(sexp_tasks.SexpError, match="not a task"):
        work.call("twice", 2, output_type=Person)
    with pytest.raises(sexp_tasks.SexpError, match="pydantic model class"):
        work.call("person", text="Ada", output_type=dict)
    assert server.requests == []


# tools ----------------------------------------------------------------------------------------
SUPPORT = """<task name="support" type="atomic">
  <description>Answer a support question</description>
  <instructions>Answer: {{question}}</instructions>
  <inputs><input name="question" type="string">the question</input></inputs>
  <tools><tool>register</tool></tools>
</task>
"""


def tool_call(arguments: dict[str, Any]) -> Scripted:
    return Scripted(content=None, tool_calls=[{"name": "register", "arguments": arguments}])


def test_a_tool_s_model_parameter_gets_its_schema_and_an_instance(project: Path, server: LLMServer) -> None:
    received: list[Any] = []
    work = session(project, server)

    @work.tool
    def register(person: Person, note: str = "") -> str:
        """Register a person.

        Args:
            person: who to register
        """
        received.append(person)
        return f"registered {person.name}"

    server.script(tool_call({"person": {"name": "Ada", "age": 36, "address": {"city": "London"}}}), "done")
    result = work.call("support", question="register Ada")
    assert result.status == "COMPLETE"
    assert received == [Person(name="Ada", age=36, address=Address(city="London"))]
    [offered] = server.requests[0].body["tools"]
    parameters = offered["function"]["parameters"]
    assert parameters["required"] == ["person"] and "Address" in parameters["$defs"]
    # pydantic's schema of the parameters: the model by reference, its schema among the $defs
    assert parameters["properties"]["person"] == {"$ref": "#/$defs/Person", "description": "who to register"}
    assert parameters["$defs"]["Person"]["properties"]["name"] == {"title": "Name", "type": "string"}
    answers = [m["content"] for m in server.requests[1].body["messages"] if m["role"] == "tool"]
    assert answers == ["registered Ada"]


def test_a_bad_model_argument_is_reported_to_the_model(project: Path, server: LLMServer) -> None:
    received: list[Any] = []
    work = session(project, server)

    @work.tool
    def register(person: Person) -> str:
        """Register a person."""
        received.append(person)
        return "registered"

    server.script(
        tool_call({"person": {"name": "Ada"}}),  # the schema's violation
        tool_call({"person": {"name": "Ada", "age": 400}}),  # the model's own validator's
        "done",
    )
    assert work.call("support", question="register Ada").status == "COMPLETE"
    assert received == []
    first = [m["content"] for m in server.requests[1].body["messages"] if m["role"] == "tool"]
    second = [m["content"] for m in server.requests[2].body["messages"] if m["role"] == "tool"]
    assert first[0].startswith("error: register: invalid arguments") and "age" in first[0]
    assert second[-1] == (
        "error: register: invalid arguments: person.age: Value error, no one is that old, got 400"
    )


def test_importing_the_package_and_a_plain_program_leave_pydantic_out() -> None:
    out = run_python(
        "import sys, sexp_tasks\n"
        "assert sexp_tasks.Session(quiet=True).eval('(+ 1 2)') == 3\n"
        "print('pydantic' in sys.modules)\n"
    )
    assert out.strip() == "False"


class Size(enum.Enum):
    """A parcel's size."""

    SMALL = "small"
    LARGE = "large"


@dataclasses.dataclass
class Parcel:
    """A parcel to ship."""

    weight: float
    size: Size


def test_types_beyond_the_plain_ones_get_pydantic_s_schema_and_value(
    project: Path, server: LLMServer
) -> None:
    """A dataclass, an Enum, a datetime: a SettingsError before pydantic gave their schemas."""
    received: list[Any] = []
    work = session(project, server)

    @work.tool
    def register(parcel: Parcel, when: datetime.date, sizes: list[Size] | None = None) -> str:
        """Register a parcel."""
        received.append((parcel, when, sizes))
        return "ok"

    server.script(
        tool_call({"parcel": {"weight": 1.5, "size": "small"}, "when": "2026-11-27", "sizes": ["large"]}),
        tool_call({"parcel": {"weight": 1.5, "size": "huge"}, "when": "2026-11-27"}),
        "done",
    )
    assert work.call("support", question="ship it").status == "COMPLETE"
    assert received == [(Parcel(1.5, Size.SMALL), datetime.date(2026, 11, 27), [Size.LARGE])]
    properties = server.requests[0].body["tools"][0]["function"]["parameters"]["properties"]
    assert properties["when"] == {"format": "date", "type": "string"}
    answers = [m["content"] for m in server.requests[2].body["messages"] if m["role"] == "tool"]
    assert answers[-1] == (
        "error: register: invalid arguments: parcel.size: Input should be 'small' or 'large', got \"huge\""
    )
