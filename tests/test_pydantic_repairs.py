"""A pydantic model class's own validators are repaired by `retries` (issue 21, point 4): an
answer a validator rejects is sent back with its complaint, as a schema violation is, and the
repaired answer is the model's instance. Against the local server, which records request bodies."""

from __future__ import annotations

import json
from pathlib import Path

from llm_server import LLMServer
from pydantic import BaseModel, field_validator
from test_pydantic_api import Person, project, session

__all__ = ["project"]  # the fixture, used by name


def test_a_validator_s_complaint_is_sent_back_and_repaired(project: Path, server: LLMServer) -> None:
    server.script('{"name": "Ada", "age": 400}', '{"name": "Ada", "age": 36}')
    output = '<output_format type="json" schema="object" retries="1"/>'
    result = session(project, server, output).call("person", text="Ada", output_type=Person)
    assert result.status == "COMPLETE", result.error
    assert result.parsed == Person(name="Ada", age=36) and result.notes["repairs"] == 1
    assert len(server.requests) == 2
    repair = json.dumps(server.requests[1].body["messages"][-1])
    assert "no one is that old" in repair  # the validator's own words reach the model


def test_when_the_retries_run_out_the_validator_s_violation_is_the_failure(
    project: Path, server: LLMServer
) -> None:
    server.script('{"name": "Ada", "age": 400}', '{"name": "Ada", "age": 500}')
    output = '<output_format type="json" schema="object" retries="1"/>'
    result = session(project, server, output).call("person", text="Ada", output_type=Person)
    assert result.status == "FAILED" and result.error["reason"] == "output_format_failure"
    assert result.error["violations"] == ["age: Value error, no one is that old"]
    assert len(server.requests) == 2


class Strict(BaseModel):
    """A model whose validator raises for any value: only the language's own calls are unchanged."""

    word: str

    @field_validator("word")
    @classmethod
    def never(cls, word: str) -> str:
        raise ValueError("never right")


def test_the_template_called_without_output_type_is_not_validated(project: Path, server: LLMServer) -> None:
    server.script('{"word": "x"}', '{"name": "Ada", "age": 400}')
    work = session(project, server, '<output_format type="json" schema="object" retries="1"/>')
    assert work.call("person", text="Ada", output_type=Strict).status == "FAILED"
    plain = work.call("person", text="Ada")  # the same template, no model class: accepted as JSON
    assert plain.status == "COMPLETE" and plain.parsed == {"name": "Ada", "age": 400}
