"""A Python tool's schema and argument check are pydantic's (issue 21, point 4): one model of the
function's parameters (sexp_tasks/handler/pydantic_models.py) gives the schema offered and checks
what the model sends back, built when a request first offers the tool — registering one imports
no pydantic. What changed from the hand-written schemas, and what stayed (a plain tool's schema,
so its recorded requests keep their fingerprints)."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import warnings
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

import pytest
from conftest import run_python
from llm_server import LLMServer, Scripted
from pydantic import BaseModel, Field
from typing_extensions import TypedDict as PydanticTypedDict

import sexp_tasks
from sexp_tasks.handler.python_tools import python_tool
from sexp_tasks.handler.tool_schema import FunctionArguments

SUPPORT = """<task name="support" type="atomic">
  <description>Answer a support question</description>
  <instructions>Answer: {{question}}</instructions>
  <inputs><input name="question" type="string">the question</input></inputs>
  <tools><tool>lookup</tool></tools>
</task>
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for variable in ("SEXP_MODEL", "SEXP_API_BASE", "SEXP_TEMPLATES", "SEXP_MOCK_RESPONSES"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-adapter")
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "support.xml").write_text(SUPPORT)
    return tmp_path


def session(project: Path, server: LLMServer) -> sexp_tasks.Session:
    return sexp_tasks.Session(
        model="openai/test-model", api_base=server.base_url, workspace=str(project), quiet=True
    )


def parameters(fn: Any) -> dict[str, Any]:
    schema: dict[str, Any] = FunctionArguments(fn, "fn").schema["function"]["parameters"]
    return schema


def tool_answer(fn: Any, arguments: dict[str, Any]) -> str:
    return python_tool(fn, "fn", lambda name: False).run(arguments)


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


def test_registering_a_tool_imports_no_pydantic_until_a_request_offers_it() -> None:
    """A dataclass parameter: before, registering asked pydantic for its schema at once."""
    out = run_python(
        "import dataclasses, sys, sexp_tasks\n"
        "@dataclasses.dataclass\n"
        "class Parcel:\n"
        "    weight: float\n"
        "session = sexp_tasks.Session(quiet=True)\n"
        "@session.tool\n"
        "def ship(parcel: Parcel, note: str = '') -> str:\n"
        "    return 'ok'\n"
        "assert session.eval('(+ 1 2)') == 3\n"
        "print('pydantic' in sys.modules)\n"
    )
    assert out.strip() == "False"


def test_a_plain_tool_is_offered_exactly_as_before() -> None:
    """The schema of docs/python-api.md's lookup_order, as the hand-written code gave it (no
    titles, no additionalProperties): a cassette recorded with it still replays."""

    def lookup_order(order_id: str, ids: list[int], scores: dict[str, float]) -> dict[str, Any]:
        """Look up an order by its id.

        Args:
            order_id: The order's id, like "A-1042".
        """
        return {}

    assert FunctionArguments(lookup_order, "lookup_order").schema == {
        "type": "function",
        "function": {
            "name": "lookup_order",
            "description": "Look up an order by its id.",
            "parameters": {
                "type": "object",
                "properties": {
                    "order_id": {"type": "string", "description": 'The order\'s id, like "A-1042".'},
                    "ids": {"type": "array", "items": {"type": "integer"}},
                    "scores": {"type": "object", "additionalProperties": {"type": "number"}},
                },
                "required": ["order_id", "ids", "scores"],
            },
        },
    }


def test_field_constraints_are_in_the_schema_and_checked() -> None:
    """Annotated[X, Field(...)]: the hand-written code dropped the constraints; a docstring entry
    or a plain string in Annotated still describes the parameter."""

    def fn(
        count: Annotated[int, Field(ge=1, le=10, description="How many.")],
        code: Annotated[str, Field(pattern="^[A-Z]+$")],
        noted: Annotated[str, "A note."] = "",
    ) -> str:
        """Args:
        code: An upper-case code.
        """
        return f"{count} {code}"

    assert parameters(fn)["properties"] == {
        "count": {"type": "integer", "minimum": 1, "maximum": 10, "description": "How many."},
        "code": {"type": "string", "pattern": "^[A-Z]+$", "description": "An upper-case code."},
        "noted": {"type": "string", "default": "", "description": "A note."},
    }
    assert tool_answer(fn, {"count": 3, "code": "AB"}) == "3 AB"
    assert tool_answer(fn, {"count": 11, "code": "ab"}) == (
        "error: fn: invalid arguments: count: Input should be less than or equal to 10, got 11; "
        "code: String should match pattern '^[A-Z]+$', got \"ab\""
    )


class Item(BaseModel):
    sku: str


class Window(PydanticTypedDict):
    start: datetime.date
    end: datetime.date


def test_an_enum_a_date_a_typed_dict_and_a_model_in_a_list() -> None:
    got: list[Any] = []

    def fn(color: Color, when: Window, items: list[Item]) -> str:
        got.append((color, when, items))
        return "ok"

    schema = parameters(fn)
    assert schema["properties"]["color"] == {"$ref": "#/$defs/Color"}
    assert schema["$defs"]["Color"] == {"enum": ["red", "blue"], "title": "Color", "type": "string"}
    assert schema["$defs"]["Window"]["properties"]["start"] == {
        "format": "date",
        "title": "Start",
        "type": "string",
    }
    assert schema["properties"]["items"] == {"type": "array", "items": {"$ref": "#/$defs/Item"}}
    window = {"start": "2026-11-01", "end": "2026-11-27"}
    assert tool_answer(fn, {"color": "blue", "when": window, "items": [{"sku": "A"}]}) == "ok"
    assert got == [
        (
            Color.BLUE,
            {"start": datetime.date(2026, 11, 1), "end": datetime.date(2026, 11, 27)},
            [Item(sku="A")],
        )
    ]


def test_arguments_are_converted_as_the_hints_ask() -> None:
    """pydantic's lax mode: a number sent as text is the number; a tuple, a set, a frozenset."""
    got: list[Any] = []

    def fn(n: int, pair: tuple[int, str], tags: frozenset[str], flag: bool = False) -> str:
        got.append((n, pair, tags, flag))
        return "ok"

    assert tool_answer(fn, {"n": "3", "pair": [1, "a"], "tags": ["x", "x"]}) == "ok"
    assert got == [(3, (1, "a"), frozenset({"x"}), False)]
    assert tool_answer(fn, {"n": 1, "pair": [1, "a", 2], "tags": []}).startswith(
        "error: fn: invalid arguments: pair: Tuple should have at most 2 items after validation, not 3"
    )


def test_only_the_arguments_given_reach_the_function_and_its_defaults_apply() -> None:
    """A default with no JSON form is left out of the schema (no warning) and still applies."""
    marker = object()
    got: list[Any] = []

    def fn(a: str, b: Any = marker, c: int | None = None, **more: Any) -> str:
        got.append((a, b, c, more))
        return "ok"

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        schema = parameters(fn)
    assert schema["properties"] == {
        "a": {"type": "string"},
        "b": {},
        "c": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
    }
    assert tool_answer(fn, {"a": "x", "c": None, "extra": [1]}) == "ok"
    assert got == [("x", marker, None, {"extra": [1]})]


def test_parameter_names_pydantic_models_keep_for_themselves() -> None:
    def fn(json: str, model_config: int = 0, schema: bool = False, _private: str = "") -> str:
        return f"{json} {model_config} {schema} {_private}"

    assert set(parameters(fn)["properties"]) == {"json", "model_config", "schema", "_private"}
    assert tool_answer(fn, {"json": "j", "model_config": 2, "schema": True, "_private": "p"}) == "j 2 True p"


def test_the_schema_is_built_once() -> None:
    arguments = FunctionArguments(lambda x: x, "fn")
    assert arguments.schema is arguments.schema


class Order:
    """A type with no JSON form."""


class Movie(TypedDict):  # typing's TypedDict: pydantic wants typing_extensions' before Python 3.12
    title: str


@pytest.mark.parametrize(
    ("hint", "reason"),
    [
        (Order, "the type Order has no JSON form (use str, int, float, bool, list, dict, Literal,"),
        (list[Order], "has no JSON form (use str, int"),
        (Movie, "the type Movie has no JSON form (Please use `typing_extensions.TypedDict`"),
    ],
)
def test_a_type_with_no_json_form_is_an_error_when_first_offered_before_anything_is_sent(
    project: Path, server: LLMServer, hint: Any, reason: str
) -> None:
    work = session(project, server)

    def lookup(order: Any) -> str:
        return "found"

    lookup.__annotations__["order"] = hint
    work.tool(lookup)  # registered: its schema is not built yet
    with pytest.raises(sexp_tasks.SexpError, match="tool lookup: parameter 'order': ") as raised:
        work.call("support", question="?")
    assert raised.value.type == "CONFIGURATION_ERROR"
    assert reason in raised.value.message
    assert server.requests == []


def test_an_enum_member_in_a_literal_is_refused_when_registered() -> None:
    """pydantic offers its value but refuses that value back: still refused at once, as before."""

    def fn(color: list[Literal[Color.RED]]) -> str:
        return "red"

    with pytest.raises(sexp_tasks.SexpError, match="the Literal value <Color.RED: 'red'> has no JSON form"):
        sexp_tasks.Session(quiet=True).tool(fn)


@dataclasses.dataclass
class Parcel:
    """A parcel to ship."""

    weight: float
    size: Color = Color.RED


def test_the_tool_loop_offers_pydantic_s_schema_and_reports_its_violations(
    project: Path, server: LLMServer
) -> None:
    work = session(project, server)
    got: list[Any] = []

    @work.tool
    def lookup(parcel: Parcel, count: Annotated[int, Field(ge=1)] = 1) -> str:
        """Look a parcel up.

        Args:
            parcel: the parcel
        """
        got.append((parcel, count))
        return "found"

    call = {"name": "lookup", "arguments": {"parcel": {"weight": "2.5"}, "count": 0}}
    fixed = {"name": "lookup", "arguments": {"parcel": {"weight": 2.5, "size": "blue"}}}
    server.script(
        Scripted(content=None, tool_calls=[call]),
        Scripted(content=None, tool_calls=[fixed]),
        "<output>ok</output>",
    )
    assert work.call("support", question="?").status == "COMPLETE"
    assert got == [(Parcel(2.5, Color.BLUE), 1)]
    offered = server.requests[0].body["tools"][0]["function"]["parameters"]
    assert offered["properties"] == {
        "parcel": {"$ref": "#/$defs/Parcel", "description": "the parcel"},
        "count": {"type": "integer", "minimum": 1, "default": 1},
    }
    assert offered["required"] == ["parcel"] and set(offered["$defs"]) == {"Parcel", "Color"}
    answers = [m["content"] for m in server.requests[1].body["messages"] if m["role"] == "tool"]
    assert answers == [
        "error: lookup: invalid arguments: count: Input should be greater than or equal to 1, got 0"
    ]
